//===- runtime/nccl/NcclExecutor.cpp - A plan captured in CUDA graphs -----===//
//
// The executor is its parts, each in a file of its own: the setup
// (NcclResources.h), the calls on the comm stream (NcclCallIssuer.h), the
// capture (NcclGraphs.h), the waits (NcclStepWait.h) and how it breaks
// (NcclBreaker.h). This file holds the rt::Executor interface over them,
// the order of a step, and the one rule every path that issues work keeps:
// it asks first whether the executor is usable (checkUsable), and a wait
// that runs out of the executor's time breaks it (Breaker.breakOn).
//
//===----------------------------------------------------------------------===//

#include "runtime/nccl/NcclExecutor.h"

#include "runtime/exec/DigestHandshake.h"
#include "runtime/exec/StepWalk.h"
#include "runtime/exec/TensorBindings.h"
#include "runtime/nccl/NcclBreaker.h"
#include "runtime/nccl/CallWalk.h"
#include "runtime/nccl/CommStreamWait.h"
#include "runtime/nccl/CudaError.h"
#include "runtime/nccl/NcclCallIssuer.h"
#include "runtime/nccl/NcclDriver.h"
#include "runtime/nccl/NcclGraphs.h"
#include "runtime/nccl/NcclResources.h"
#include "runtime/nccl/NcclStepWait.h"
#include "runtime/nccl/NcclVersion.h"
#include "runtime/nccl/StreamOrderCheck.h"
#include "runtime/nccl/Watchdog.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc::rt::nccl {

NcclExecutor::~NcclExecutor() = default;

namespace {

/// The GPU a thread captures for: one thread drives one GPU.
thread_local int CapturingDevice = -1;

/// Wraps an error with where it happened, keeping its kind and peer.
Error inContext(Error E, const Twine &Where) {
  return handleErrors(std::move(E), [&](const RuntimeError &R) {
    return makeError(R.kind(), Where + ": " + R.text(), R.peer());
  });
}

class CapturedExecutor final : public NcclExecutor {
public:
  CapturedExecutor(const plan::Plan &P, int64_t Rank, NcclExecutorOptions Opts, NcclRankPlan L)
      : P(P), Rank(Rank), Opts(std::move(Opts)), L(std::move(L)) {
    Issuer.Abort = [this](const std::string &Why) { Breaker(Why); };
    Issuer.Dog = &Dog;
  }

  /// Bounded: past the timeout, or at an asynchronous error, the executor
  /// breaks (its graphs, then its communicators). A caller's graph from
  /// enqueueInto holds the communicators too: it is destroyed before this.
  ~CapturedExecutor() override {
    cudaSetDevice(Opts.Device);
    if (R.Stream && !Breaker.broken())
      consumeError(waitForStream(R.Stream, R.memberships(), "shutdown", std::nullopt, Breaker));
    // The graphs before any communicator is finalized or destroyed; the
    // members then go in reverse order (the tile tables, the resources).
    Graphs.destroy();
  }

  Error setup() {
    for (size_t C = 0; C != P.Computes.size(); ++C)
      ComputeByName[P.Computes[C].Name] = uint32_t(C);
    if (Error E = R.setup())
      return E;
    // Views: tensors the model writes straight into a plan buffer.
    for (size_t T = 0; T != P.Tensors.size(); ++T)
      if (const Ref &Home = L.Homes[T]; Home.Buffer >= 0)
        if (char *B = R.buffer(Home.Buffer))
          Bindings.setView(uint32_t(T), B + Home.Offset);
    return Error::success();
  }

  // --- the executor interface ---------------------------------------------------

  int64_t rank() const override { return Rank; }
  const plan::Plan &plan() const override { return P; }
  StringRef backend() const override { return Name; }
  MemoryKind memory() const override { return MemoryKind::Device; }

  Error bind(StringRef Name, void *Device, uint64_t Bytes) override {
    if (Error E = Bindings.bind(Name, Device, Bytes))
      return E;
    Captured = TilesFresh = false; // pointers are baked into graphs and tiles
    return Error::success();
  }

  Error bindOwnMemory() override {
    for (const std::string &Name : Bindings.unbound()) {
      uint64_t Bytes = P.Tensors[*Bindings.indexOf(Name)].Type.bytes();
      // Zeroed (the reference expects the unused capacity of an
      // all_to_all_v to stay so), on the model's stream.
      Expected<void *> Ptr = R.allocateOwned(Bytes, callerStream(), "%" + Name);
      if (!Ptr)
        return Ptr.takeError();
      if (Error E = bind(Name, *Ptr, Bytes))
        return E;
    }
    return Error::success();
  }

  Expected<MutableArrayRef<char>> tensor(StringRef Name) override {
    Expected<uint32_t> T = Bindings.indexOf(Name);
    if (!T)
      return T.takeError();
    Expected<char *> Home = Bindings.lookup(Name);
    if (!Home)
      return Home.takeError();
    return MutableArrayRef<char>(*Home, P.Tensors[*T].Type.bytes());
  }

  std::vector<std::string> unboundTensors() const override { return Bindings.unbound(); }
  std::vector<uint32_t> touchedTensors() const override { return Bindings.touched(); }

  /// On the caller's stream, from pageable memory: CUDA stages it, so
  /// \p From may be reused once this returns.
  Error copyIn(uint32_t Tensor, ArrayRef<char> From) override {
    Expected<MutableArrayRef<char>> Home = homeForCopy(Tensor, From.size(), "copying into");
    if (!Home)
      return Home.takeError();
    if (Error E = checkUsable("copy into %" + P.Tensors[Tensor].Name))
      return E;
    return checkCuda(cudaMemcpyAsync(Home->data(), From.data(), From.size(), cudaMemcpyHostToDevice,
                                     callerStream()),
                     formatv("cudaMemcpyAsync into %{0}", P.Tensors[Tensor].Name));
  }

  /// After the work on the caller's stream (the steps replayed so far are
  /// joined into it), bounded as every wait is.
  Error copyOut(uint32_t Tensor, MutableArrayRef<char> To) override {
    Expected<MutableArrayRef<char>> Home = homeForCopy(Tensor, To.size(), "copying out of");
    if (!Home)
      return Home.takeError();
    if (Error E = checkUsable("copy out of %" + P.Tensors[Tensor].Name))
      return E;
    if (Error E = checkCuda(cudaMemcpyAsync(To.data(), Home->data(), To.size(),
                                            cudaMemcpyDeviceToHost, callerStream()),
                            formatv("cudaMemcpyAsync out of %{0}", P.Tensors[Tensor].Name)))
      return E;
    return Breaker.breakOn(waitForStream(
        callerStream(), R.memberships(),
        formatv("rank {0}, copying %{1} to the host", Rank, P.Tensors[Tensor].Name).str(),
        std::nullopt, Breaker));
  }

  Error setStream(void *S) override {
    if (!S)
      return makeError(ErrorKind::InvalidArgument,
                       "a null stream: the default stream is ambiguous (pass cudaStreamLegacy "
                       "or cudaStreamPerThread)");
    Caller = static_cast<cudaStream_t>(S);
    return Error::success();
  }

  Error replay(ComputeCallback RunCompute) override {
    if (Error E = checkUsable("replay"))
      return E;
    if (Error E = capture())
      return E;
    cudaStream_t S = callerStream();
    for (size_t Index : stepsOfRank(P, Rank)) {
      const plan::Step &St = P.Steps[Index];
      if (St.Kind != plan::StepKind::Compute)
        continue;
      if (Error E = RunCompute(P.Computes[St.Index], St.Index))
        return inContext(std::move(E), formatv("rank {0}, step {1} (compute @{2})", Rank, Index,
                                               P.Computes[St.Index].Name)
                                           .str());
      if (Error E = checkCuda(cudaEventRecord(R.Ready[St.Index], S),
                              formatv("cudaEventRecord(ready[@{0}])", P.Computes[St.Index].Name)))
        return E;
    }
    return forkJoin(S, [&] { return replayGraphs(); });
  }

  /// Without \p Within, bounded by the executor's timeout, past which the
  /// executor breaks (Executor.h); with it, a timeout leaves it as it was.
  Error synchronize(std::optional<std::chrono::milliseconds> Within) override {
    if (Error E = refusal("synchronize"))
      return E;
    Error E = waitForSteps(R, Issuer.Phase, Steps, Within, Breaker);
    return Within ? std::move(E) : Breaker.breakOn(std::move(E));
  }

  Expected<std::vector<uint32_t>> allGatherWords(ArrayRef<uint32_t> Mine) override {
    if (Opts.World) // the run's CPU world: up whatever became of the GPU
      return Opts.World->allGatherWords(Mine);
    if (Error E = checkUsable("gather words over the world's communicator"))
      return E;
    Expected<std::vector<uint32_t>> Words =
        NcclDriver::allGatherWords(R.Comms[0], Mine, R.Stream, Breaker);
    if (!Words)
      return Breaker.breakOn(Words.takeError());
    return Words;
  }

  Error health() const override {
    if (Error E = refusal("run"))
      return E;
    return commsHealth(R);
  }

  std::vector<std::string> notes() const override {
    std::vector<std::string> Out;
    if (P.World == 1)
      Out.push_back("a world of one rank: every communicator has a single member, so no "
                    "inter-rank path (NVLink, PCIe, network) was exercised");
    for (const CommDesc &D : L.Comms)
      if (D.Size == 1 && P.World > 1)
        Out.push_back(formatv("communicator {0} has one member", D.Label).str());
    return Out;
  }

  // --- what only nccl has -------------------------------------------------------

  const NcclRankPlan &rankPlan() const override { return L; }
  cudaStream_t commStream() const override { return R.Stream; }

  Expected<cudaEvent_t> readyEvent(StringRef Compute) const override {
    auto It = ComputeByName.find(Compute);
    if (It == ComputeByName.end())
      return makeError(ErrorKind::InvalidArgument,
                       formatv("plan @{0} has no compute @{1}", P.Program, Compute));
    return R.Ready[It->second];
  }

  Expected<cudaEvent_t> doneEvent(StringRef Tensor) const override {
    Expected<uint32_t> T = Bindings.indexOf(Tensor);
    if (!T)
      return T.takeError();
    if (int32_t K = R.MadeBy[*T]; K >= 0)
      return R.Done[K];
    return makeError(ErrorKind::InvalidArgument,
                     formatv("no comm of rank {0} produces %{1}", Rank, P.Tensors[*T].Name));
  }

  Error capture() override {
    if (Error E = checkUsable("capture"))
      return E;
    if (Captured)
      return Error::success();
    if (Error E = checkThread())
      return E;
    if (Error E = checkNcclVersion())
      return E;
    if (Error E = prepareBindings())
      return E;
    if (!WarmedUp) {
      // After the caller's work so far (its copies into the tensors), as a
      // step is: the warm-up reads what the model wrote.
      Issuer.Phase = "warm-up";
      if (Error E = forkJoin(callerStream(), [&] {
            return issueCalls(callsOf(L.WarmUp),
                              [&](const Call &C) { return Issuer.issue(C, IssueMode::Eager); });
          }))
        return Breaker.breakOn(std::move(E));
      WarmedUp = Connected = true;
    }
    Issuer.Phase = "capture";
    if (Error E = Graphs.capture(
            L, [&](const Call &C) { return Issuer.issue(C, IssueMode::OwnCapture); }))
      return Breaker.breakOn(std::move(E));
    CapturingDevice = Opts.Device;
    Captured = true;
    return Error::success();
  }

  Error replayGraphs() override {
    if (Error E = checkUsable("replay the graphs"))
      return E;
    if (Error E = capture())
      return E;
    ++Steps;
    Issuer.Phase = "replay";
    return Breaker.breakOn(issueCalls(callsOf(L.Step), [&](const Call &C) {
      return C.Kind == CallKind::GraphLaunch ? Graphs.launch(C, Steps)
                                             : Issuer.issue(C, IssueMode::Eager);
    }));
  }

  Error runEager() override {
    if (Error E = checkUsable("run an eager step"))
      return E;
    if (Error E = prepareEager(/*CallerCapturing=*/false))
      return E;
    ++Steps;
    Issuer.Phase = "eager step";
    if (Error E = issueStepCalls(IssueMode::Eager))
      return Breaker.breakOn(std::move(E));
    Connected = true;
    return Error::success();
  }

  Error enqueueInto(cudaStream_t Caller) override {
    if (Error E = checkUsable("enqueue a step into the caller's stream"))
      return E;
    cudaStreamCaptureStatus Status = cudaStreamCaptureStatusNone;
    if (Error E = checkCuda(cudaStreamIsCapturing(Caller, &Status), "cudaStreamIsCapturing"))
      return E;
    bool Capturing = Status == cudaStreamCaptureStatusActive;
    if (Capturing && R.HasRuntimeAllToAllV)
      return makeError(ErrorKind::Unsupported,
                       formatv("plan @{0} has an all_to_all_v with split sizes known only at "
                               "run time; it reads them back to the host and cannot be part of "
                               "a captured graph",
                               P.Program));
    if (Error E = prepareEager(Capturing))
      return E;
    ++Steps;
    Issuer.Phase = "step in the caller's stream";
    return Breaker.breakOn(forkJoin(Caller, [&] {
      return issueStepCalls(Capturing ? IssueMode::CallerCapture : IssueMode::Eager);
    }));
  }

  uint64_t steps() const override { return Steps; }

private:
  cudaStream_t callerStream() const { return Caller ? Caller : R.Model; }

  // --- breaking (NcclBreaker.h) ---------------------------------------------------

  std::string where() const { return formatv("rank {0} of plan @{1}", Rank, P.Program).str(); }
  Error refusal(const Twine &Verb) const { return Breaker.refusal(Verb, where()); }
  /// Every path that issues work asks first: a broken executor refuses,
  /// naming why; a communicator found in error breaks it.
  Error checkUsable(const Twine &Verb) { return Breaker.usable(Verb, where()); }

  // --- preparing a step -----------------------------------------------------------

  /// \p Body on the comm stream, forked from \p S (after the work there)
  /// and joined back to it (before what \p S does next).
  Error forkJoin(cudaStream_t S, function_ref<Error()> Body) {
    if (Error E = checkCuda(cudaEventRecord(R.Fork, S), "cudaEventRecord (fork)"))
      return E;
    if (Error E = checkCuda(cudaStreamWaitEvent(R.Stream, R.Fork, 0), "cudaStreamWaitEvent (fork)"))
      return E;
    if (Error E = Body())
      return E;
    if (Error E = checkCuda(cudaEventRecord(R.Join, R.Stream), "cudaEventRecord (join)"))
      return E;
    return checkCuda(cudaStreamWaitEvent(S, R.Join, 0), "cudaStreamWaitEvent (join)");
  }

  /// Before a step issued as calls: the handshake and the tile tables,
  /// which cannot run inside a caller's capture (they copy synchronously),
  /// nor can the first connection of each peer.
  Error prepareEager(bool CallerCapturing) {
    if (Error E = checkThread())
      return E;
    if (TilesFresh && (DigestChecked || !Opts.DigestHandshake) && (Connected || !CallerCapturing))
      return Error::success();
    if (CallerCapturing)
      return makeError(ErrorKind::InvalidArgument,
                       formatv("rank {0}: run one step with runEager() or replay() before "
                               "capturing plan @{1} into the caller's stream (after every "
                               "bind): the digest handshake, the first connection to each peer "
                               "and the copy tables cannot be made inside a capture",
                               Rank, P.Program));
    return prepareBindings();
  }

  /// Before the first step after a bind, outside any capture: everything
  /// bound, the digest handshake (once), the copy tables of the bindings.
  Error prepareBindings() {
    if (Error E = Bindings.checkBindings("run"))
      return E;
    if (Error E = checkCuda(cudaSetDevice(Opts.Device), "cudaSetDevice"))
      return E;
    if (Error E = handshake())
      return Breaker.breakOn(std::move(E));
    if (Error E = Issuer.uploadTiles())
      return Breaker.breakOn(std::move(E));
    TilesFresh = true;
    return Error::success();
  }

  /// One GPU per capturing thread: NCCL's graph capture and our
  /// thread-local capture mode both assume it.
  Error checkThread() const {
    if (CapturingDevice < 0 || CapturingDevice == Opts.Device)
      return Error::success();
    return makeError(ErrorKind::InvalidArgument,
                     formatv("this thread already captures for GPU {0}; rank {1} is on GPU {2}: "
                             "collc drives one GPU per capturing thread (use a thread per GPU)",
                             CapturingDevice, Rank, Opts.Device));
  }

  /// Every rank's plan digest, once, before the first step.
  Error handshake() {
    if (!Opts.DigestHandshake || DigestChecked)
      return Error::success();
    // The world's first call: a blocking one that may wait for a peer's
    // first connection, so under the watchdog.
    if (Error E = exchangeDigests(P, Rank, [&](ArrayRef<uint32_t> Words) {
          auto What = [this] { return formatv("rank {0}'s digest handshake", Rank).str(); };
          return Dog.watch(What, Opts.Timeout, [&] {
            return NcclDriver::allGatherWords(R.Comms[0], Words, R.Stream, Breaker);
          });
        }))
      return E;
    DigestChecked = true;
    return Error::success();
  }

  /// The step's calls in issue order (stepCalls): the captured ones in
  /// mode \p M, the eager ones between graphs as they are.
  Error issueStepCalls(IssueMode M) {
    return issueCalls(stepCalls(L), [&](const Call &C) {
      return Issuer.issue(C, C.Graph >= 0 ? M : IssueMode::Eager);
    });
  }

  // Declared in the order they are made; destroyed in reverse: the graphs
  // before the tile tables, both before the resources (the communicators).
  const plan::Plan &P;
  int64_t Rank;
  NcclExecutorOptions Opts;
  NcclRankPlan L;
  NcclResources R{P, Rank, L, Opts};
  TensorBindings Bindings{P, Rank};
  NcclCallIssuer Issuer{R, Bindings};
  NcclGraphs Graphs{R.Stream};
  NcclBreaker Breaker{R, Graphs};
  /// Last made, first stopped: its thread breaks the executor, whose parts
  /// must outlive it.
  Watchdog Dog{[this](const std::string &Why) { Breaker(Why); }};
  /// The caller's stream once named (setStream); the model's own until then.
  cudaStream_t Caller = nullptr;
  StringMap<uint32_t> ComputeByName;
  uint64_t Steps = 0;
  bool Captured = false, WarmedUp = false, DigestChecked = false;
  bool TilesFresh = false; ///< the tile tables hold the current bindings
  bool Connected = false;  ///< every peer was used once, outside a capture
};

/// What is refused before anything is made.
Error checkBeforeSetup(const NcclExecutorOptions &Opts) {
  if (Expected<std::chrono::milliseconds> T = timeoutFromEnvironment(); !T)
    return T.takeError();
  if (Error E = checkNcclVersion())
    return E;
  int Devices = 0;
  if (Error E = checkCuda(cudaGetDeviceCount(&Devices), "cudaGetDeviceCount"))
    return E;
  if (Opts.Device < 0 || Opts.Device >= Devices)
    return makeError(ErrorKind::InvalidArgument,
                     formatv("GPU {0} does not exist: this machine has {1}", Opts.Device, Devices));
  return Error::success();
}

} // namespace

Expected<std::unique_ptr<NcclExecutor>> NcclExecutor::create(const plan::Plan &P, int64_t Rank,
                                                             NcclExecutorOptions Opts) {
  Expected<NcclRankPlan> L = lowerRunnableForRank(P, Rank);
  if (!L)
    return L.takeError();
  return create(P, Rank, std::move(*L), std::move(Opts));
}

Expected<std::unique_ptr<NcclExecutor>>
NcclExecutor::create(const plan::Plan &P, int64_t Rank, NcclRankPlan L, NcclExecutorOptions Opts) {
  if (Error E = checkBeforeSetup(Opts))
    return E;
  auto X = std::make_unique<CapturedExecutor>(P, Rank, std::move(Opts), std::move(L));
  if (Error E = X->setup())
    return E;
  return std::unique_ptr<NcclExecutor>(std::move(X));
}

} // namespace collc::rt::nccl
