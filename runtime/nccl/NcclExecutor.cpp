//===- runtime/nccl/NcclExecutor.cpp - A plan captured in CUDA graphs -----===//

#include "runtime/nccl/NcclExecutor.h"

#include "runtime/exec/DigestHandshake.h"
#include "runtime/exec/SplitSizes.h"
#include "runtime/exec/StepWalk.h"
#include "runtime/exec/TensorBindings.h"
#include "runtime/nccl/CallWalk.h"
#include "runtime/nccl/CudaError.h"
#include "runtime/nccl/NcclDriver.h"
#include "runtime/nccl/PackKernels.h"
#include "runtime/exec/Timeout.h"
#include "runtime/nccl/UniqueIdExchange.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>

using namespace llvm;

namespace collc::rt::nccl {

NcclExecutor::~NcclExecutor() = default;

namespace {

/// The GPU a thread captures for: one thread drives one GPU.
thread_local int CapturingDevice = -1;

/// How a stream call is issued. Events differ by where they are waited on:
/// collc's own graphs are separate from the model's work, so their waits
/// and records cross the graph's boundary (the external flags); a step
/// captured into the caller's graph (enqueueInto) is inside the model's own
/// capture, where the ready events are captured events (a plain wait joins
/// them) and the done events must be too, for the model's plain waits.
enum class Mode { Eager, OwnCapture, CallerCapture };

struct DeviceTiles {
  CopyTile *Tiles = nullptr;
  uint32_t Count = 0;
};

/// Wraps an error with where it happened, keeping its kind and peer.
Error inContext(Error E, const Twine &Where) {
  return handleErrors(std::move(E), [&](const RuntimeError &R) {
    return makeError(R.kind(), Where + ": " + R.text(), R.peer());
  });
}

class CapturedExecutor final : public NcclExecutor {
public:
  CapturedExecutor(const plan::Plan &P, int64_t Rank, NcclExecutorOptions Opts, Lowering L)
      : P(P), Rank(Rank), Opts(std::move(Opts)), L(std::move(L)) {
    startRecord(std::make_unique<FlightRecorder>(P, Rank, Name, this->Opts.Record));
    for (size_t S : stepsOfRank(P, Rank))
      if (P.Steps[S].Kind == plan::StepKind::Launch)
        Launches.push_back({uint32_t(S), P.Steps[S].Index});
  }

  ~CapturedExecutor() override {
    cudaSetDevice(Opts.Device);
    if (Stream) // bounded: past the timeout the communicators are aborted
      consumeError(waitForStream(Stream, memberships(), "shutdown"));
    destroyGraphs();
    for (auto &[Key, T] : Tiles)
      cudaFree(T.Tiles);
    for (auto &[B, Ptr] : Buffers)
      cudaFree(Ptr);
    for (void *Ptr : Owned)
      cudaFree(Ptr);
    if (HostCounts)
      cudaFreeHost(HostCounts);
    for (cudaEvent_t E : Ready)
      cudaEventDestroy(E);
    for (cudaEvent_t E : Done)
      if (E)
        cudaEventDestroy(E);
    if (Fork)
      cudaEventDestroy(Fork);
    if (Join)
      cudaEventDestroy(Join);
    Comms.clear(); // finalize or abort, then destroy
    if (Stream)
      cudaStreamDestroy(Stream);
    if (Model)
      cudaStreamDestroy(Model);
  }

  Error setup() {
    for (size_t C = 0; C != P.Computes.size(); ++C)
      ComputeByName[P.Computes[C].Name] = uint32_t(C);
    for (const Call &C : L.Setup)
      if (Error E = setupCall(C))
        return E;
    if (Error E = waitReady(rawComms(), Opts.Timeout, "ncclCommInitRankConfig of rank " +
                                                          Twine(Rank) + "'s communicators"))
      return E;
    for (size_t K = 0; K != L.PreMulSums.size(); ++K) {
      const PreMulSumDesc &D = L.PreMulSums[K];
      Expected<ncclRedOp_t> Op = Comms[D.Comm]->preMulSum(D.Elem, D.Scale);
      if (!Op)
        return Op.takeError();
      PreMulOps.push_back(*Op);
    }
    // Views: tensors the model writes straight into a plan buffer.
    for (size_t T = 0; T != P.Tensors.size(); ++T) {
      const Ref &R = L.Homes[T];
      auto B = Buffers.find(R.Buffer);
      if (R.Buffer < 0 || B == Buffers.end())
        continue;
      Bindings.setView(uint32_t(T), B->second + R.Offset);
    }
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
    if (Error E = checkCuda(cudaSetDevice(Opts.Device), "cudaSetDevice"))
      return E;
    for (const std::string &Name : Bindings.unbound()) {
      uint64_t Bytes = P.Tensors[*Bindings.indexOf(Name)].Type.bytes();
      void *Ptr = nullptr;
      if (Error E = checkCuda(cudaMalloc(&Ptr, std::max<uint64_t>(Bytes, 1)),
                              formatv("cudaMalloc of %{0} ({1} bytes)", Name, Bytes)))
        return E;
      Owned.push_back(Ptr);
      // Zero (the reference expects the unused capacity of an
      // all_to_all_v to stay so), on the model's stream: a non-blocking
      // stream would not wait for a cudaMemset on the legacy one.
      if (Error E = checkCuda(cudaMemsetAsync(Ptr, 0, Bytes, callerStream()),
                              formatv("cudaMemsetAsync of %{0}", Name)))
        return E;
      if (Error E = bind(Name, Ptr, Bytes))
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
    if (Error E = checkCuda(cudaMemcpyAsync(To.data(), Home->data(), To.size(), cudaMemcpyDeviceToHost,
                                            callerStream()),
                            formatv("cudaMemcpyAsync out of %{0}", P.Tensors[Tensor].Name)))
      return E;
    return waitForStream(callerStream(), memberships(),
                         formatv("rank {0}, copying %{1} to the host", Rank,
                                 P.Tensors[Tensor].Name)
                             .str());
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
    return failed(replaySteps(RunCompute), -1);
  }

  Error replaySteps(ComputeCallback RunCompute) {
    if (Error E = captureGraphs())
      return E;
    cudaStream_t S = callerStream();
    for (size_t Index : stepsOfRank(P, Rank)) {
      const plan::Step &St = P.Steps[Index];
      if (St.Kind != plan::StepKind::Compute)
        continue;
      record().atCompute(uint32_t(Index));
      if (Error E = RunCompute(P.Computes[St.Index], St.Index))
        return inContext(std::move(E), formatv("rank {0}, step {1} (compute @{2})", Rank, Index,
                                               P.Computes[St.Index].Name)
                                           .str());
      if (Error E = checkCuda(cudaEventRecord(Ready[St.Index], S),
                              formatv("cudaEventRecord(ready[@{0}])", P.Computes[St.Index].Name)))
        return E;
    }
    if (Error E = checkCuda(cudaEventRecord(Fork, S), "cudaEventRecord (fork)"))
      return E;
    if (Error E = checkCuda(cudaStreamWaitEvent(Stream, Fork, 0), "cudaStreamWaitEvent (fork)"))
      return E;
    if (Error E = replayGraphSteps())
      return E;
    if (Error E = checkCuda(cudaEventRecord(Join, Stream), "cudaEventRecord (join)"))
      return E;
    return checkCuda(cudaStreamWaitEvent(S, Join, 0), "cudaStreamWaitEvent (join)");
  }

  Error synchronize(std::optional<std::chrono::milliseconds> Within) override {
    Error E = waitForStep(Within);
    // A wait bounded by the caller that ran out leaves the executor as it
    // was: only the executor's own timeout is the rank's failure.
    return Within ? std::move(E) : failed(std::move(E), -1);
  }

  Expected<std::vector<uint32_t>> allGatherWords(ArrayRef<uint32_t> Mine) override {
    if (Opts.World)
      return Opts.World->allGatherWords(Mine);
    return NcclDriver::allGatherWords(Comms[0], Mine, Stream);
  }

  // --- what only nccl has -------------------------------------------------------

  const Lowering &lowering() const override { return L; }
  cudaStream_t commStream() const override { return Stream; }

  Expected<cudaEvent_t> readyEvent(StringRef Compute) const override {
    auto It = ComputeByName.find(Compute);
    if (It == ComputeByName.end())
      return makeError(ErrorKind::InvalidArgument,
                       formatv("plan @{0} has no compute @{1}", P.Program, Compute));
    return Ready[It->second];
  }

  Expected<cudaEvent_t> doneEvent(StringRef Tensor) const override {
    Expected<uint32_t> T = Bindings.indexOf(Tensor);
    if (!T)
      return T.takeError();
    if (int32_t K = MadeBy[*T]; K >= 0)
      return Done[K];
    return makeError(ErrorKind::InvalidArgument,
                     formatv("no comm of rank {0} produces %{1}", Rank, P.Tensors[*T].Name));
  }

  Error capture() override { return failed(captureGraphs(), std::nullopt); }

  Error captureGraphs() {
    if (Captured)
      return Error::success();
    if (Error E = checkThread())
      return E;
    if (Error E = checkNcclVersion())
      return E;
    for (auto &C : Comms)
      if (Error E = C->health())
        return makeError(ErrorKind::Broken, "refusing to capture: " + toString(std::move(E)));
    if (Error E = prepareBindings())
      return E;
    if (!WarmedUp) {
      CurrentPhase = "warm-up";
      if (Error E = issueCalls(callsOf(L.WarmUp),
                               [&](const Call &C) { return issue(C, Mode::Eager); }))
        return E;
      WarmedUp = Connected = true;
    }
    destroyGraphs();
    Graphs.assign(L.Graphs, nullptr);
    Execs.assign(L.Graphs, nullptr);
    CurrentPhase = "capture";
    bool Open = false;
    auto Record = [&](const Call &C) -> Error {
      switch (C.Kind) {
      case CallKind::BeginCapture:
        if (Error E = checkCuda(cudaStreamBeginCapture(Stream, cudaStreamCaptureModeThreadLocal),
                                "cudaStreamBeginCapture"))
          return E;
        Open = true;
        return Error::success();
      case CallKind::EndCapture:
        Open = false;
        return checkCuda(cudaStreamEndCapture(Stream, &Graphs[C.Graph]), "cudaStreamEndCapture");
      case CallKind::Instantiate:
        return checkCuda(cudaGraphInstantiate(&Execs[C.Graph], Graphs[C.Graph], 0),
                         formatv("cudaGraphInstantiate of graph {0}", C.Graph));
      default:
        return issue(C, Mode::OwnCapture);
      }
    };
    // A failure inside a group has ended the group; the capture is ended
    // here, so that the stream stays usable.
    if (Error E = issueCalls(callsOf(L.Capture), Record)) {
      if (Open) {
        cudaGraph_t Broken = nullptr;
        cudaStreamEndCapture(Stream, &Broken);
        if (Broken)
          cudaGraphDestroy(Broken);
        cudaGetLastError();
      }
      return E;
    }
    CapturingDevice = Opts.Device;
    Captured = true;
    return Error::success();
  }

  Error replayGraphs() override { return failed(replayGraphSteps(), -1); }

  Error replayGraphSteps() {
    if (Error E = captureGraphs())
      return E;
    ++Steps;
    recordIssue();
    CurrentPhase = "replay";
    return issueCalls(callsOf(L.Step), [&](const Call &C) { return issue(C, Mode::Eager); });
  }

  Error runEager() override {
    if (Error E = prepareEager(/*CallerCapturing=*/false))
      return E;
    ++Steps;
    recordIssue();
    CurrentPhase = "eager step";
    if (Error E = issueStepCalls(Mode::Eager))
      return E;
    Connected = true;
    return Error::success();
  }

  Error enqueueInto(cudaStream_t Caller) override {
    cudaStreamCaptureStatus Status = cudaStreamCaptureStatusNone;
    if (Error E = checkCuda(cudaStreamIsCapturing(Caller, &Status), "cudaStreamIsCapturing"))
      return E;
    bool Capturing = Status == cudaStreamCaptureStatusActive;
    if (Capturing && HasRuntimeAllToAllV)
      return makeError(ErrorKind::Unsupported,
                       formatv("plan @{0} has an all_to_all_v with split sizes known only at "
                               "run time; it reads them back to the host and cannot be part of "
                               "a captured graph",
                               P.Program));
    if (Error E = prepareEager(Capturing))
      return E;
    ++Steps;
    recordIssue();
    CurrentPhase = "step in the caller's stream";
    if (Error E = checkCuda(cudaEventRecord(Fork, Caller), "cudaEventRecord (fork)"))
      return E;
    if (Error E = checkCuda(cudaStreamWaitEvent(Stream, Fork, 0), "cudaStreamWaitEvent (fork)"))
      return E;
    if (Error E = issueStepCalls(Capturing ? Mode::CallerCapture : Mode::Eager))
      return E;
    if (Error E = checkCuda(cudaEventRecord(Join, Stream), "cudaEventRecord (join)"))
      return E;
    return checkCuda(cudaStreamWaitEvent(Caller, Join, 0), "cudaStreamWaitEvent (join)");
  }

  Error waitForStep(std::optional<std::chrono::milliseconds> Limit) {
    Error E = waitForStream(Stream, memberships(), formatv("rank {0}, step {1}", Rank, Steps).str(),
                            Limit);
    if (!E) {
      record().completedAllIssued();
      return E;
    }
    // Name the op: the first comm whose done event has not happened. The
    // record learns what the done events say: those before it completed,
    // it failed (with the kind of the wait's error).
    ErrorKind Kind = ErrorKind::Timeout;
    E = handleErrors(std::move(E), [&](std::unique_ptr<RuntimeError> R) -> Error {
      Kind = R->kind();
      return Error(std::move(R));
    });
    std::string Op = "an op before any done event";
    for (size_t K = 0; K != Done.size(); ++K)
      if (Done[K] && cudaEventQuery(Done[K]) == cudaSuccess)
        record().completed(uint32_t(K));
    for (size_t K = 0; K != Done.size(); ++K)
      if (Done[K] && cudaEventQuery(Done[K]) == cudaErrorNotReady) {
        record().failed(uint32_t(K), Kind, -1);
        const plan::Comm &C = P.Comms[K];
        Op = formatv("comm #{0} ({1} at {2}{3})", K, commKindName(C.Kind), P.Source,
                     C.Loc.empty() ? "" : ":" + C.Loc)
                 .str();
        break;
      }
    cudaGetLastError();
    return handleErrors(std::move(E), [&](const RuntimeError &RE) {
      return makeError(RE.kind(), formatv("{0} of plan @{1}: waiting for {2}: {3}", CurrentPhase,
                                          P.Program, Op, RE.text()),
                       RE.peer());
    });
  }

  Error health() const override {
    for (const auto &C : Comms)
      if (Error E = C->health())
        return E;
    return Error::success();
  }

  uint64_t steps() const override { return Steps; }

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

private:
  cudaStream_t callerStream() const { return Caller ? Caller : Model; }

  /// The host's record of one step: every comm of this rank issued, in
  /// plan order, as the step's calls are (the done events say the rest).
  void recordIssue() {
    FlightRecorder &R = record();
    R.beginReplay();
    for (auto [Step, Comm] : Launches)
      R.issued(Step, Comm);
  }

  std::vector<NcclMembership *> memberships() const {
    std::vector<NcclMembership *> Raw;
    for (const auto &C : Comms)
      Raw.push_back(C.get());
    return Raw;
  }

  // --- setup --------------------------------------------------------------------

  std::vector<ncclComm_t> rawComms() const {
    std::vector<ncclComm_t> Out;
    for (const auto &C : Comms)
      Out.push_back(C->comm());
    return Out;
  }

  Error setupCall(const Call &C) {
    switch (C.Kind) {
    case CallKind::SetDevice: {
      if (Error E = checkCuda(cudaSetDevice(Opts.Device), formatv("cudaSetDevice({0})",
                                                                  Opts.Device)))
        return E;
      return checkCuda(cudaDeviceGetAttribute(&SMs, cudaDevAttrMultiProcessorCount, Opts.Device),
                       "cudaDeviceGetAttribute");
    }
    case CallKind::CreateStream: {
      int Least = 0, Greatest = 0;
      if (Error E = checkCuda(cudaDeviceGetStreamPriorityRange(&Least, &Greatest),
                              "cudaDeviceGetStreamPriorityRange"))
        return E;
      if (Error E = checkCuda(cudaEventCreateWithFlags(&Fork, cudaEventDisableTiming),
                              "cudaEventCreateWithFlags"))
        return E;
      if (Error E = checkCuda(cudaEventCreateWithFlags(&Join, cudaEventDisableTiming),
                              "cudaEventCreateWithFlags"))
        return E;
      if (Error E =
              checkCuda(cudaStreamCreateWithPriority(&Stream, cudaStreamNonBlocking, Greatest),
                        "cudaStreamCreateWithPriority"))
        return E;
      // The model's work until the caller names its own stream (setStream).
      return checkCuda(cudaStreamCreateWithFlags(&Model, cudaStreamNonBlocking),
                       "cudaStreamCreateWithFlags (the model's stream)");
    }
    case CallKind::CommInit: {
      // Non-blocking: every init of this rank is started before any is
      // waited for (setup() waits for them all).
      const CommDesc &D = L.Comms[C.Comm];
      std::string Key = commKey(Opts.CommPrefix, D.Key);
      UniqueIdExchange &Ids = Opts.Ids ? *Opts.Ids : inProcessIds();
      Expected<ncclUniqueId> Id = Ids.idFor(Key, D.Rank == 0, D.Size);
      if (!Id)
        return Id.takeError();
      ncclConfig_t Config = NCCL_CONFIG_INITIALIZER;
      Config.blocking = 0;
      ncclComm_t Comm = nullptr;
      if (Error E = checkNccl(ncclCommInitRankConfig(&Comm, int(D.Size), *Id, int(D.Rank),
                                                     &Config),
                              formatv("ncclCommInitRankConfig of {0} (rank {1} of {2})", D.Label,
                                      D.Rank, D.Size)))
        return E;
      auto M = std::make_shared<NcclMembership>(Comm, int(D.Rank), int(D.Size), Opts.Device,
                                                D.Label);
      M->Timeout = Opts.Timeout;
      Comms.push_back(std::move(M));
      return Error::success();
    }
    case CallKind::CreatePreMulSum:
      return Error::success(); // once the communicators are ready
    case CallKind::Malloc: {
      char *Ptr = nullptr;
      if (Error E = checkCuda(cudaMalloc(reinterpret_cast<void **>(&Ptr), C.Bytes),
                              formatv("cudaMalloc of buffer {0} ({1} bytes)", C.Buffer, C.Bytes)))
        return E;
      Buffers[C.Buffer] = Ptr;
      // On the comm stream: it is non-blocking, so it would not wait for a
      // cudaMemset on the legacy stream.
      if (Error E = checkCuda(cudaMemsetAsync(Ptr, 0, C.Bytes, Stream),
                              formatv("cudaMemsetAsync of buffer {0}", C.Buffer)))
        return E;
      if (C.Buffer == int32_t(P.Buffers.size()) + 1) {
        HasRuntimeAllToAllV = true;
        return checkCuda(cudaMallocHost(reinterpret_cast<void **>(&HostCounts), C.Bytes),
                         "cudaMallocHost for split sizes");
      }
      return Error::success();
    }
    case CallKind::CreateEvents: {
      Ready.assign(P.Computes.size(), nullptr);
      for (cudaEvent_t &E : Ready)
        if (Error Err = checkCuda(cudaEventCreateWithFlags(&E, cudaEventDisableTiming),
                                  "cudaEventCreateWithFlags"))
          return Err;
      Done.assign(P.Comms.size(), nullptr);
      MadeBy.assign(P.Tensors.size(), -1);
      for (size_t K = 0; K != P.Comms.size(); ++K) {
        if (!P.Comms[K].Ranks.contains(Rank))
          continue;
        if (Error Err = checkCuda(cudaEventCreateWithFlags(&Done[K], cudaEventDisableTiming),
                                  "cudaEventCreateWithFlags"))
          return Err;
        for (uint32_t T : P.Comms[K].Outputs)
          if (MadeBy[T] < 0)
            MadeBy[T] = int32_t(K);
      }
      return Error::success();
    }
    default:
      return makeError(ErrorKind::InvalidArgument, "a setup list with a stream call");
    }
  }

  // --- resolving ------------------------------------------------------------------

  char *resolve(const Ref &R) const {
    if (R.Buffer >= 0) {
      auto It = Buffers.find(R.Buffer);
      return It == Buffers.end() ? nullptr : It->second + R.Offset;
    }
    if (R.Tensor >= 0)
      return Bindings.home(R.Tensor) ? Bindings.home(R.Tensor) + R.Offset : nullptr;
    return nullptr;
  }

  /// The tile tables of every pack and unpack, in device memory.
  Error uploadTiles() {
    for (auto &[Key, T] : Tiles)
      cudaFree(T.Tiles);
    Tiles.clear();
    for (const Call &C : L.Capture) {
      if (C.Kind != CallKind::Pack && C.Kind != CallKind::Unpack)
        continue;
      std::vector<CopyTile> List;
      for (const CopySegment &S : C.Copies)
        appendTiles(List, uint64_t(resolve(S.Dst)), uint64_t(resolve(S.Src)), S.Bytes);
      DeviceTiles D;
      D.Count = uint32_t(List.size());
      if (!List.empty()) {
        if (Error E = checkCuda(cudaMalloc(reinterpret_cast<void **>(&D.Tiles),
                                           List.size() * sizeof(CopyTile)),
                                "cudaMalloc of a tile table"))
          return E;
        if (Error E = checkCuda(cudaMemcpy(D.Tiles, List.data(), List.size() * sizeof(CopyTile),
                                           cudaMemcpyHostToDevice),
                                "cudaMemcpy of a tile table"))
          return E;
      }
      Tiles[{int(C.Kind), C.PlanComm}] = D;
    }
    TilesFresh = true;
    return Error::success();
  }

  void destroyGraphs() {
    for (cudaGraphExec_t E : Execs)
      if (E)
        cudaGraphExecDestroy(E);
    for (cudaGraph_t G : Graphs)
      if (G)
        cudaGraphDestroy(G);
    Execs.clear();
    Graphs.clear();
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
    if (Error E = Bindings.checkAllBound("run"))
      return E;
    if (Error E = checkCuda(cudaSetDevice(Opts.Device), "cudaSetDevice"))
      return E;
    if (Error E = handshake())
      return E;
    return uploadTiles();
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
    if (Error E = exchangeDigests(P, Rank, [&](ArrayRef<uint32_t> Words) {
          return NcclDriver::allGatherWords(Comms[0], Words, Stream);
        }))
      return E;
    DigestChecked = true;
    return Error::success();
  }

  /// The step's calls in issue order (stepCalls): the captured ones in
  /// mode \p M, the eager ones between graphs as they are.
  Error issueStepCalls(Mode M) {
    return issueCalls(stepCalls(L), [&](const Call &C) {
      return issue(C, C.Graph >= 0 ? M : Mode::Eager);
    });
  }

  // --- issuing --------------------------------------------------------------------

  ncclComm_t comm(const Call &C) const { return Comms[C.Comm]->comm(); }

  Error ncclDone(ncclResult_t R, const Call &C, const char *Name) {
    auto What = [&] {
      return formatv("{0} of comm #{1} ({2}) on {3}, {4}", Name, C.PlanComm,
                     commKindName(P.Comms[C.PlanComm].Kind), Comms[C.Comm]->name(),
                     CurrentPhase)
          .str();
    };
    if (R != ncclSuccess)
      if (Error E = checkNccl(R, What()))
        return E;
    Comms[C.Comm]->LastOp = What();
    ++Comms[C.Comm]->Issued;
    if (R == ncclInProgress)
      return waitReady({comm(C)}, Opts.Timeout, What());
    return Error::success();
  }

  Error issue(const Call &C, Mode M) {
    switch (C.Kind) {
    case CallKind::WaitReady:
      return checkCuda(cudaStreamWaitEvent(Stream, Ready[C.Compute],
                                           M == Mode::OwnCapture ? cudaEventWaitExternal : 0),
                       formatv("cudaStreamWaitEvent on ready[@{0}]", P.Computes[C.Compute].Name));
    case CallKind::RecordDone:
      return checkCuda(cudaEventRecordWithFlags(Done[C.PlanComm], Stream,
                                                M == Mode::OwnCapture ? cudaEventRecordExternal
                                                                      : cudaEventRecordDefault),
                       formatv("cudaEventRecordWithFlags on done[#{0}]", C.PlanComm));
    case CallKind::Pack:
    case CallKind::Unpack: {
      const DeviceTiles &T = Tiles[{int(C.Kind), C.PlanComm}];
      return checkCuda(launchCopyTiles(T.Tiles, T.Count, SMs, Stream),
                       formatv("{0} kernel of comm #{1}",
                               C.Kind == CallKind::Pack ? "pack" : "unpack", C.PlanComm));
    }
    case CallKind::GroupStart:
      return checkNccl(ncclGroupStart(), "ncclGroupStart");
    case CallKind::GroupEnd: {
      ncclResult_t R = ncclGroupEnd();
      if (Error E = checkNccl(R, "ncclGroupEnd (" + CurrentPhase + ")"))
        return E;
      if (R == ncclInProgress)
        return waitReady(rawComms(), Opts.Timeout, "ncclGroupEnd (" + CurrentPhase + ")");
      return Error::success();
    }
    case CallKind::AllReduce:
      return ncclDone(ncclAllReduce(resolve(C.SendBuf), resolve(C.RecvBuf), C.Count,
                                    ncclTypeOf(C.Elem), opOf(C), comm(C), Stream),
                      C, "ncclAllReduce");
    case CallKind::ReduceScatter:
      return ncclDone(ncclReduceScatter(resolve(C.SendBuf), resolve(C.RecvBuf), C.Count,
                                        ncclTypeOf(C.Elem), opOf(C), comm(C), Stream),
                      C, "ncclReduceScatter");
    case CallKind::AllGather:
      return ncclDone(ncclAllGather(resolve(C.SendBuf), resolve(C.RecvBuf), C.Count,
                                    ncclTypeOf(C.Elem), comm(C), Stream),
                      C, "ncclAllGather");
    case CallKind::Broadcast:
      return ncclDone(ncclBroadcast(resolve(C.SendBuf), resolve(C.RecvBuf), C.Count,
                                    ncclTypeOf(C.Elem), int(C.Peer), comm(C), Stream),
                      C, "ncclBroadcast");
    case CallKind::AllToAll:
      return allToAll(C);
    case CallKind::Send:
    case CallKind::Recv:
      return sendRecv(C);
    case CallKind::CountsToHost:
      return exchangeCounts(C);
    case CallKind::StreamSync:
      return waitForStream(Stream, memberships(), formatv("rank {0}, {1}", Rank, CurrentPhase).str());
    case CallKind::GraphLaunch:
      return checkCuda(cudaGraphLaunch(Execs[C.Graph], Stream),
                       formatv("cudaGraphLaunch of graph {0}, step {1}", C.Graph, Steps));
    default:
      return makeError(ErrorKind::InvalidArgument,
                       formatv("call kind {0} cannot be issued on the comm stream", int(C.Kind)));
    }
  }

  ncclRedOp_t opOf(const Call &C) const {
    return C.PreMulSum >= 0 ? PreMulOps[C.PreMulSum] : ncclOpOf(C.Op);
  }

  Error allToAll(const Call &C) {
    return ncclDone(ncclAllToAllAnyVersion(resolve(C.SendBuf), resolve(C.RecvBuf), C.Count,
                                           ncclTypeOf(C.Elem), int(L.Comms[C.Comm].Size),
                                           comm(C), Stream),
                    C, "ncclAlltoAll");
  }

  Error sendRecv(const Call &C) {
    bool IsSend = C.Kind == CallKind::Send;
    const Ref &R = IsSend ? C.SendBuf : C.RecvBuf;
    char *Ptr = resolve(R);
    uint64_t Count = C.Count;
    if (C.CountAtRunTime) {
      // Runtime all_to_all_v: rows from the counts exchanged just before.
      RuntimeSlice S = runtimeSlice(C, IsSend ? SendRows : RecvRows);
      Count = S.Count;
      Ptr += S.Offset;
      if (Count == 0)
        return Error::success(); // both sides know it is zero
    }
    if (IsSend)
      return ncclDone(ncclSend(Ptr, Count, ncclTypeOf(C.Elem), int(C.Peer), comm(C), Stream), C,
                      "ncclSend");
    return ncclDone(ncclRecv(Ptr, Count, ncclTypeOf(C.Elem), int(C.Peer), comm(C), Stream), C,
                    "ncclRecv");
  }

  /// Runtime all_to_all_v: every rank's split sizes to the host, checked
  /// against the input rows and the output capacity on every rank (so that
  /// they refuse together), then kept for the sends and receives.
  Error exchangeCounts(const Call &C) {
    const plan::Comm &PC = P.Comms[C.PlanComm];
    const plan::Tensor &CountsT = P.Tensors[C.Tensor];
    int64_t N = L.Comms[C.Comm].Size;
    unsigned Size = elemTypeBytes(CountsT.Type.Elem);
    char *Gathered = Buffers[int32_t(P.Buffers.size()) + 1];
    if (Error E = ncclDone(ncclAllGather(Bindings.home(C.Tensor), Gathered, uint64_t(N),
                                         ncclTypeOf(CountsT.Type.Elem), comm(C), Stream),
                           C, "ncclAllGather of split sizes"))
      return E;
    if (Error E = checkCuda(cudaMemcpyAsync(HostCounts, Gathered, uint64_t(N * N) * Size,
                                            cudaMemcpyDeviceToHost, Stream),
                            "cudaMemcpyAsync of split sizes"))
      return E;
    std::vector<NcclMembership *> Raw{Comms[C.Comm].get()};
    if (Error E = waitForStream(Stream, Raw,
                                formatv("rank {0}, split sizes of comm #{1}", Rank, C.PlanComm)))
      return E;
    int64_t InRows = P.Tensors[PC.Inputs[0]].Type.Shape[0];
    int64_t OutRows = P.Tensors[PC.Outputs[0]].Type.Shape[0];
    std::vector<int64_t> Matrix;
    for (uint64_t K = 0; K != uint64_t(N * N); ++K) {
      Expected<int64_t> V = readSplitSize(CountsT.Type.Elem, HostCounts, K);
      if (!V)
        return V.takeError();
      Matrix.push_back(*V);
    }
    // This rank's row, recorded before anyone can refuse it.
    int64_t Mine = L.Comms[C.Comm].Rank;
    if (Mine >= 0 && Mine < N)
      record().splitRow(C.PlanComm, ArrayRef<int64_t>(Matrix).slice(size_t(Mine * N), size_t(N)));
    Expected<SplitRows> Rows =
        checkSplitMatrix(C.PlanComm, Matrix, N, L.Comms[C.Comm].Rank, InRows, OutRows);
    if (!Rows)
      return Rows.takeError();
    SendRows = std::move(Rows->Send);
    RecvRows = std::move(Rows->Recv);
    return Error::success();
  }

  const plan::Plan &P;
  int64_t Rank;
  NcclExecutorOptions Opts;
  Lowering L;
  int SMs = 1;
  cudaStream_t Stream = nullptr;
  /// The model's stream of its own, and the caller's (setStream) once named.
  cudaStream_t Model = nullptr, Caller = nullptr;
  cudaEvent_t Fork = nullptr, Join = nullptr;
  std::vector<std::shared_ptr<NcclMembership>> Comms;
  std::vector<ncclRedOp_t> PreMulOps;
  std::map<int32_t, char *> Buffers;
  /// The tensors bound by bindOwnMemory().
  std::vector<void *> Owned;
  char *HostCounts = nullptr;
  bool HasRuntimeAllToAllV = false;
  std::vector<cudaEvent_t> Ready, Done;
  std::vector<int32_t> MadeBy; ///< tensor -> the first comm of this rank making it, or -1
  TensorBindings Bindings{P, Rank};
  StringMap<uint32_t> ComputeByName;
  std::map<std::pair<int, uint32_t>, DeviceTiles> Tiles;
  std::vector<cudaGraph_t> Graphs;
  std::vector<cudaGraphExec_t> Execs;
  std::vector<uint64_t> SendRows, RecvRows;
  std::string CurrentPhase = "setup";
  uint64_t Steps = 0;
  bool Captured = false, WarmedUp = false, DigestChecked = false;
  bool TilesFresh = false; ///< the tile tables hold the current bindings
  bool Connected = false;  ///< every peer was used once, outside a capture
  /// This rank's launches in plan order: (plan step, comm).
  std::vector<std::pair<uint32_t, uint32_t>> Launches;
};

} // namespace

Expected<std::unique_ptr<NcclExecutor>> NcclExecutor::create(const plan::Plan &P, int64_t Rank,
                                                             NcclExecutorOptions Opts) {
  if (Expected<std::chrono::milliseconds> T = timeoutFromEnvironment(); !T)
    return T.takeError();
  if (Error E = checkNcclVersion())
    return E;
  int Devices = 0;
  if (Error E = checkCuda(cudaGetDeviceCount(&Devices), "cudaGetDeviceCount"))
    return E;
  if (Opts.Device < 0 || Opts.Device >= Devices)
    return makeError(ErrorKind::InvalidArgument,
                     formatv("GPU {0} does not exist: this machine has {1}", Opts.Device,
                             Devices));
  Expected<Lowering> L = lowerForRank(P, Rank);
  if (!L)
    return L.takeError();
  auto X = std::make_unique<CapturedExecutor>(P, Rank, std::move(Opts), std::move(*L));
  if (Error E = X->setup())
    return E;
  return std::unique_ptr<NcclExecutor>(std::move(X));
}

} // namespace collc::rt::nccl
