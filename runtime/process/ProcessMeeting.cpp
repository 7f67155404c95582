//===- runtime/process/ProcessMeeting.cpp - The processes of a run agree first ---===//

#include "runtime/process/ProcessMeeting.h"

#include "runtime/exec/DigestHandshake.h"
#include "runtime/exec/RuntimeError.h"
#include "runtime/process/CpuWorld.h"
#include "runtime/process/ProcessBackends.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace llvm;

namespace collc::rt {

Expected<std::unique_ptr<ProcessMeeting>> ProcessMeeting::meet(StringRef Backend,
                                                               const ProcessPlace &Place,
                                                               const RendezvousAddress &Where,
                                                               std::chrono::milliseconds Timeout) {
  auto Met = std::make_unique<ProcessMeeting>();
  // MPI lives as long as the run, executors and worlds included.
  Expected<std::shared_ptr<void>> Mpi = startSessionFor(Backend, Where);
  if (!Mpi)
    return Mpi.takeError();
  Met->Mpi = std::move(*Mpi);
  Expected<std::unique_ptr<WorldGather>> World =
      joinCpuWorld(Place, Where, "collc.run/#digests", Timeout);
  if (!World)
    return World.takeError();
  Met->World = std::move(*World);
  return Met;
}

ProcessMeeting::~ProcessMeeting() {
  // A step not taken yet is taken, saying this rank cannot run; the errors
  // that come of it were this rank's own, said already.
  if (World && Next != Step::Done)
    consumeError(gather(Next, {0, 0, 0}).takeError());
}

Error ProcessMeeting::endWith(ErrorKind Kind, const Twine &Why, size_t Blamed) {
  Next = Step::Done;
  return makeError(Kind, Why, int64_t(Blamed));
}

Expected<std::vector<uint32_t>> ProcessMeeting::gather(Step S, std::array<uint32_t, 3> Words) {
  // Whatever comes of it, this step is taken; a failure is every rank's,
  // and ends the meeting.
  Next = S == Step::Factor ? Step::Plan : Step::Done;
  Expected<std::vector<uint32_t>> All =
      World->allGatherWords({uint32_t(S), Words[0], Words[1], Words[2]});
  if (!All) {
    Next = Step::Done;
    return All.takeError();
  }
  std::vector<uint32_t> Out;
  for (size_t R = 0; R != All->size() / 4; ++R) {
    const uint32_t *Sent = All->data() + 4 * R;
    if (Sent[0] != uint32_t(S))
      return endWith(ErrorKind::Mismatch,
                     formatv("rank {0} is at step {1} of the run's meeting, this rank at step {2}",
                             R, Sent[0], uint32_t(S)),
                     R);
    if (Sent[1] == 0)
      return endWith(ErrorKind::InvalidArgument,
                     formatv("rank {0} cannot run (its own error says why)", R), R);
    Out.insert(Out.end(), Sent + 1, Sent + 4);
  }
  return Out;
}

Expected<ProcessMeeting::Factor> ProcessMeeting::agreeOnFactor(int64_t Mine, bool Given) {
  Expected<std::vector<uint32_t>> All = gather(Step::Factor, {uint32_t(Mine), uint32_t(Given), 0});
  if (!All)
    return All.takeError();
  size_t Ranks = All->size() / 3;
  auto FactorOf = [&](size_t R) { return (*All)[3 * R]; };
  auto GivenOn = [&](size_t R) { return (*All)[3 * R + 1] != 0; };
  uint32_t Most = 0;
  std::optional<size_t> First; // the first rank given a factor by hand
  for (size_t R = 0; R != Ranks; ++R) {
    Most = std::max(Most, FactorOf(R));
    if (GivenOn(R) && !First)
      First = R;
  }
  if (!First)
    return Factor{int64_t(Most), std::nullopt};
  // A factor given by hand is kept: every rank given one must have the
  // same, and it must be enough for every other rank's share. Every rank
  // judges the same words alike, so all fail together.
  uint32_t Kept = FactorOf(*First);
  for (size_t R = 0; R != Ranks; ++R) {
    if (GivenOn(R) && FactorOf(R) != Kept)
      return endWith(ErrorKind::Mismatch,
                     formatv("rank {0} was given --shrink {1} and rank {2} --shrink {3}: give "
                             "every process the same",
                             *First, Kept, R, FactorOf(R)),
                     R);
    if (!GivenOn(R) && FactorOf(R) > Kept)
      return endWith(ErrorKind::InvalidArgument,
                     formatv("rank {0} was given --shrink {1}, but rank {2} needs {3} to fit its "
                             "share of its host's memory: give every process the same --shrink",
                             *First, Kept, R, FactorOf(R)),
                     R);
  }
  return Factor{int64_t(Kept), int64_t(*First)};
}

Error ProcessMeeting::agreeOnPlan(const plan::Plan &P) {
  std::array<uint32_t, 2> Mine = digestWords(P);
  // First word 1: this rank can run.
  Expected<std::vector<uint32_t>> All = gather(Step::Plan, {1, Mine[0], Mine[1]});
  // Its connections are not needed again, whatever came of it.
  auto Leave = make_scope_exit([&] { World.reset(); });
  if (!All)
    return All.takeError();
  std::vector<uint32_t> Digests;
  for (size_t R = 0; R != All->size() / 3; ++R) {
    Digests.push_back((*All)[3 * R + 1]);
    Digests.push_back((*All)[3 * R + 2]);
  }
  return compareDigests(P, World->rank(), Digests); // before Leave
}

} // namespace collc::rt
