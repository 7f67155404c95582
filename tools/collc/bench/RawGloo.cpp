//===- tools/collc/bench/RawGloo.cpp - Gloo's ring allreduce, for collc bench ===//
//
// gloo::allreduce with the ring algorithm, as a program that calls Gloo
// itself would, on the Gloo context of the replay it is set beside
// (runtime/gloo/GlooCommContext.h): the same TCP pairs, so that the two
// sides of a row differ only by collc's replay, not by two sets of
// connections (whose speed differs for a whole row on a loaded host:
// docs/runtime.md). The bench's own traffic (allGatherWords) runs on a
// context of its own (a full mesh over the gloo backend's store and TCP
// device, under a prefix no collc group uses), never on the one measured.
// Gloo's exceptions stop here and become errors.
//
//===----------------------------------------------------------------------===//

#include "tools/collc/bench/RawEngine.h"

#include "runtime/exec/RuntimeError.h"
#include "runtime/gloo/GlooCommContext.h"
#include "runtime/gloo/GlooSmallAllReduce.h"
#include "runtime/gloo/GlooStore.h"
#include "runtime/gloo/ProbedStore.h"

#include "llvm/Support/FormatVariadic.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/types.h>

#include <exception>

using namespace llvm;

namespace collc::tool {

namespace {

Error glooFailure(StringRef What, const std::exception &E) {
  return rt::makeError(rt::ErrorKind::Backend, "raw " + What + ": " + E.what());
}

class RawGloo final : public RawEngine {
public:
  explicit RawGloo(std::shared_ptr<::gloo::rendezvous::Context> Context)
      : Context(std::move(Context)) {}

  StringRef name() const override { return "gloo ring allreduce on the replay's Gloo context"; }
  std::string replayAlgorithm() const override {
    return llvm::formatv("below {0} bytes, recursive doubling over the same Gloo pairs "
                         "(runtime/gloo/GlooSmallAllReduce.h); from there, Gloo's ring as here",
                         rt::gloo::smallAllReduceBytes(Context->size));
  }

  Error runBeside(const rt::Executor &Replay, uint32_t Comm) override {
    Expected<std::shared_ptr<::gloo::Context>> C = rt::gloo::commContext(Replay, Comm);
    if (!C)
      return C.takeError();
    Beside = std::move(*C);
    return Error::success();
  }
  void detach() override { Beside.reset(); }

  Error allReduce(const float *Src, float *Dst, uint64_t Count) override {
    if (!Beside)
      return rt::makeError(rt::ErrorKind::InvalidArgument,
                           "raw gloo::allreduce with no replay beside it: its Gloo context is "
                           "the replay's (runBeside first)");
    try {
      ::gloo::AllreduceOptions O(Beside);
      // Gloo reads the input through a non-const pointer; it never writes it.
      O.setInput(const_cast<float *>(Src), Count);
      O.setOutput(Dst, Count);
      O.setAlgorithm(::gloo::AllreduceOptions::Algorithm::RING);
      O.setReduceFunction(static_cast<void (*)(void *, const void *, const void *, size_t)>(
          &::gloo::sum<float>));
      ::gloo::allreduce(O);
    } catch (const std::exception &E) {
      return glooFailure("gloo::allreduce", E);
    }
    return Error::success();
  }

  std::vector<OtherWay> otherWays() const override {
    // Below the group's limit (always at 8 B) the replay takes doubling.
    return {{"its own algorithm called directly on the same connections",
             OtherWay::Question::ReplayCost,
             {8}}};
  }
  /// The gloo backend's small all_reduce, called as the driver does, on
  /// the replay's Gloo context and a slot of its own.
  Error otherAllReduce(size_t, const float *Src, float *Dst, uint64_t Count) override {
    if (!Beside)
      return rt::makeError(rt::ErrorKind::InvalidArgument,
                           "raw doubling with no replay beside it (runBeside first)");
    try {
      int Awaited = -1;
      rt::gloo::recursiveDoublingAllReduce(
          {*Beside, Beside->rank, Beside->size, Beside->getTimeout(), DoublingSlot},
          reinterpret_cast<const char *>(Src), reinterpret_cast<char *>(Dst), Count, 4,
          rt::gloo::wireReducer(ElemType::F32, ReduceOp::Sum), Scratch, Awaited);
    } catch (const std::exception &E) {
      return glooFailure("recursive doubling", E);
    }
    return Error::success();
  }

  Expected<std::vector<uint32_t>> allGatherWords(ArrayRef<uint32_t> Mine) override {
    std::vector<uint32_t> In(Mine.begin(), Mine.end());
    std::vector<uint32_t> All(In.size() * size_t(Context->size));
    try {
      ::gloo::AllgatherOptions O(Context);
      O.setInput(In.data(), In.size());
      O.setOutput(All.data(), All.size());
      ::gloo::allgather(O);
    } catch (const std::exception &E) {
      return glooFailure("gloo::allgather", E);
    }
    return All;
  }

private:
  /// Gloo's default tag for every operation, as the gloo backend does: the
  /// processes issue them in one order, and a new tag per call measured
  /// slower here (Gloo's pairs keep state per slot). On the replay's
  /// context the allreduce shares its slot with the replay's own from
  /// smallAllReduceBytes (below it the replay's doubling has a slot of its
  /// own); Gloo matches them in posting order, so no barrier is needed
  /// between the sides (GlooCommContext.h).
  std::shared_ptr<::gloo::rendezvous::Context> Context; ///< the bench's traffic
  std::shared_ptr<::gloo::Context> Beside;              ///< the measured allreduce
  /// Apart from the replay's own doubling and the gloo backend's other
  /// slots (GlooDriver.cpp: 0x60-0x62).
  static inline const uint64_t DoublingSlot = ::gloo::Slot::build(0x63, 0);
  std::vector<char> Scratch;
};

} // namespace

Expected<std::unique_ptr<RawEngine>> createRawGlooEngine(const rt::ProcessPlace &Place,
                                                         const rt::RendezvousAddress &Where,
                                                         std::chrono::milliseconds Timeout) {
  if (Error E = rt::gloo::configureRendezvous(Where))
    return E;
  Expected<std::shared_ptr<rt::gloo::ProbedStore>> Store = rt::gloo::processStore();
  if (!Store)
    return Store.takeError();
  // A server that stops answering fails the join after the timeout.
  (*Store)->setTimeout(Timeout);
  Expected<std::shared_ptr<::gloo::transport::Device>> Device = rt::gloo::processDevice();
  if (!Device)
    return Device.takeError();
  try {
    auto Context = std::make_shared<::gloo::rendezvous::Context>(int(Place.Rank), int(Place.World));
    Context->setTimeout(Timeout);
    ::gloo::rendezvous::PrefixStore Prefix("collc.bench.raw", **Store);
    Context->connectFullMesh(Prefix, *Device);
    return std::make_unique<RawGloo>(std::move(Context));
  } catch (const std::exception &E) {
    return rt::makeError(rt::ErrorKind::Backend,
                         "raw gloo context: " + (*Store)->explain(E.what()));
  }
}

} // namespace collc::tool
