//===- runtime/process/ProcessMeeting.h - The processes of a run agree first -*- C++ -*-===//
//
// Under `collc run --backend mpi|gloo|nccl` the processes meet before the
// plan is made: MPI where the run goes through it, and the CPU world (group
// `collc.run/#digests`) they agree through in two steps, each an all-gather
// of the same four words per rank (a step number first, so that ranks out
// of step are named, never misread):
//  1. on how to make the plan: each rank's shrink factor (1 for a plan),
//     the largest taken, or the one given by hand;
//  2. on the plan: every rank's digest.
// A rank that stops before a step still takes part as the meeting ends,
// saying it cannot run, so that the others name it at once instead of
// waiting out their timeout; once a step fails on every rank, none takes
// another.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_PROCESS_PROCESSMEETING_H
#define COLLC_RUNTIME_PROCESS_PROCESSMEETING_H

#include "plan/Plan.h"
#include "runtime/exec/RuntimeError.h"
#include "runtime/launch/ProcessPlace.h"
#include "runtime/launch/RendezvousAddress.h"
#include "runtime/launch/WorldGather.h"

#include "llvm/Support/Error.h"

#include <array>
#include <chrono>
#include <memory>
#include <optional>
#include <vector>

namespace collc::rt {

class ProcessMeeting {
public:
  /// Starts MPI if \p Backend or \p Where needs it and joins the world.
  static llvm::Expected<std::unique_ptr<ProcessMeeting>> meet(llvm::StringRef Backend,
                                                              const ProcessPlace &Place,
                                                              const RendezvousAddress &Where,
                                                              std::chrono::milliseconds Timeout);
  ~ProcessMeeting();

  /// The factor every rank divides the program's dimensions by, and the
  /// rank that was given it by hand, if one was.
  struct Factor {
    int64_t Value;
    std::optional<int64_t> GivenOn;
  };
  /// Step 1, with this rank's factor (\p Mine; 1 for a plan; 0: this rank
  /// cannot run and says why itself) and whether it was given by hand
  /// (\p Given). The largest of all, which fits every rank's share of
  /// memory, or the one given by hand; an error naming a rank that sent 0,
  /// two given different factors, or one that needs more than was given.
  llvm::Expected<Factor> agreeOnFactor(int64_t Mine, bool Given);

  /// Step 2: every rank runs \p P, or an error naming who runs what (or a
  /// rank that cannot run). Then the world is left: the executor joins its
  /// own groups.
  llvm::Error agreeOnPlan(const plan::Plan &P);

private:
  enum class Step { Factor, Plan, Done };
  /// Every rank's \p Words at \p S (rank-major, 3 words each; the first 0
  /// where that rank cannot run), or an error naming a rank at another step
  /// or one that cannot run.
  llvm::Expected<std::vector<uint32_t>> gather(Step S, std::array<uint32_t, 3> Words);

  /// A failure every rank judges alike, blaming rank \p Blamed: the
  /// meeting ends.
  llvm::Error endWith(ErrorKind Kind, const llvm::Twine &Why, size_t Blamed);

  std::shared_ptr<void> Mpi; // released after the world
  std::unique_ptr<WorldGather> World;
  Step Next = Step::Factor;
};

} // namespace collc::rt

#endif
