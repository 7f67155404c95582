//===- tools/collc/bench/RawEngine.h - A backend's engine, called directly -*- C++ -*-===//
//
// What `collc bench --backend mpi|gloo` sets beside a plan replay: the
// engine under the backend, called the way a program that does not use
// collc would, on the same bytes: MPI_Allreduce on a communicator of its
// own; Gloo's ring allreduce on the replay's own Gloo context (the same TCP
// pairs: two contexts' connections differ in speed for a whole row, which
// the comparison would charge to collc; docs/runtime.md). The engine also
// carries the bench's own traffic (iteration counts, measured times) on
// connections of its own, so the figures never depend on the executor they
// measure.
//
// Each engine lives in its own file, built only when the backend is
// (tools/collc/CMakeLists.txt); ProcessBackends.h picks one by name.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOOLS_COLLC_BENCH_RAWENGINE_H
#define COLLC_TOOLS_COLLC_BENCH_RAWENGINE_H

#include "runtime/launch/ProcessPlace.h"
#include "runtime/launch/RendezvousAddress.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace collc::rt {
class Executor;
} // namespace collc::rt

namespace collc::tool {

class RawEngine {
public:
  virtual ~RawEngine();
  /// How the table names it, with where it runs ("MPI_Allreduce", "gloo
  /// ring allreduce on the replay's Gloo context").
  virtual llvm::StringRef name() const = 0;
  /// Where the replay's all_reduce takes another algorithm than this
  /// engine's, which sizes and which algorithm: those rows compare
  /// algorithms as well as the replay's cost.
  virtual std::string replayAlgorithm() const = 0;
  /// Where the engine can, the allReduce calls that follow run on the
  /// connections on which \p Replay runs comm #\p Comm (gloo: that comm's
  /// Gloo context, runtime/gloo/GlooCommContext.h, whose rules the caller
  /// keeps: calls between replays, in one order on every rank), until
  /// detach(), which comes before \p Replay goes. An engine that cannot
  /// (mpi) keeps its own, as name() says.
  virtual llvm::Error runBeside(const rt::Executor &Replay, uint32_t Comm);
  virtual void detach();
  /// f32 sum of \p Count elements of \p Src on every process into \p Dst
  /// (out of place), returning when this process's result is there.
  virtual llvm::Error allReduce(const float *Src, float *Dst, uint64_t Count) = 0;
  /// Another call of the engine's, timed beside the replay at some sizes,
  /// each on a line of its own under the table.
  struct OtherWay {
    /// What the line judges.
    enum class Question {
      /// The time the replay adds to this way, which is the replay's own
      /// algorithm called directly on the same connections (where
      /// replayAlgorithm() differs from the engine's): the 8 B row's target.
      ReplayCost,
      /// Which of the two is faster, where this is a path the replay could
      /// take and does not (the line is the measurement behind that choice).
      Faster,
    };
    /// How the line names it.
    std::string Name;
    Question Asks;
    /// The sizes (bytes) at which it is timed.
    std::vector<uint64_t> Sizes;
  };
  virtual std::vector<OtherWay> otherWays() const;
  /// Way \p Way of otherWays(), called as allReduce.
  virtual llvm::Error otherAllReduce(size_t Way, const float *Src, float *Dst, uint64_t Count);
  /// Every process's \p Mine (the same length on each), in rank order.
  virtual llvm::Expected<std::vector<uint32_t>> allGatherWords(llvm::ArrayRef<uint32_t> Mine) = 0;
};

using RawEngineFactory = llvm::Expected<std::unique_ptr<RawEngine>> (*)(
    const rt::ProcessPlace &Place, const rt::RendezvousAddress &Where,
    std::chrono::milliseconds Timeout);

/// The raw engine under process backend \p Backend for this process: what
/// `collc bench --backend` sets beside it.
llvm::Expected<std::unique_ptr<RawEngine>> createRawEngine(llvm::StringRef Backend,
                                                           const rt::ProcessPlace &Place,
                                                           const rt::RendezvousAddress &Where,
                                                           std::chrono::milliseconds Timeout);

#if COLLC_HAVE_MPI
/// MPI_Allreduce on a duplicate of MPI_COMM_WORLD; holds the process's
/// MpiSession (runtime/mpi/MpiSession.h) until destroyed, so it must
/// outlive every mpi executor of the process.
llvm::Expected<std::unique_ptr<RawEngine>> createRawMpiEngine(const rt::ProcessPlace &Place,
                                                              const rt::RendezvousAddress &Where,
                                                              std::chrono::milliseconds Timeout);
#endif
#if COLLC_HAVE_GLOO
/// gloo::allreduce with the ring algorithm on the Gloo context of the
/// replay it runs beside (runBeside: allReduce refuses to run without one);
/// the bench's own traffic on a context of its own, met through the gloo
/// backend's store at \p Where.
llvm::Expected<std::unique_ptr<RawEngine>> createRawGlooEngine(const rt::ProcessPlace &Place,
                                                               const rt::RendezvousAddress &Where,
                                                               std::chrono::milliseconds Timeout);
#endif

} // namespace collc::tool

#endif
