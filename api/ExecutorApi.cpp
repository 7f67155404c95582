//===- api/ExecutorApi.cpp - collc.h: executors ------------------------===//
//
// An executor of the local backend (runtime/local/LocalExecutor.h) or of a
// process backend from the runtime's table (runtime/process/: mpi, gloo,
// nccl), every one an rt::Executor reached the same way; what a backend
// needs alive (MPI) is api/BackendSessions.h's. Where a call needs memory
// of one kind (collcExecutorBind: the host's; collcExecutorBindDevice,
// collcExecutorSetStream: a device's) it asks the executor which it has.
// With asyncReplay a host executor's steps run on its own thread
// (api/StepQueue.h).
//
//===----------------------------------------------------------------------===//

#include "api/ApiEntry.h"
#include "api/BackendSessions.h"
#include "api/Handles.h"
#include "api/LiveHandles.h"
#include "api/StepQueue.h"

#include "runtime/exec/RuntimeError.h"
#include "runtime/exec/Timeout.h"
#include "runtime/local/LocalExecutor.h"
#include "runtime/process/ProcessBackends.h"

#include "llvm/ADT/ScopeExit.h"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <map>
#include <mutex>

using namespace llvm;
using namespace collc;
using namespace collc::api;

namespace {

/// The prefix of the groups of this process's next executor of rank
/// \p Rank of \p P: "collc.DIGEST.N", its N-th of that plan and rank. The
/// ranks of a run create the executors of a plan in one order, so each
/// derives the names its peers do, and two executors of one process (two
/// models, a plan made again) never share a group.
std::string nextCommPrefix(const plan::Plan &P, int64_t Rank) {
  static std::mutex Lock;
  static std::map<std::pair<std::string, int64_t>, unsigned> Made;
  std::lock_guard<std::mutex> G(Lock);
  return formatv("collc.{0}.{1}", P.Digest, Made[{P.Digest, Rank}]++).str();
}

/// The executor of \p Backend; \p Session gets what it needs alive.
Expected<std::unique_ptr<rt::Executor>> createOn(StringRef Backend, StringRef Rendezvous,
                                                 const plan::Plan &P, int64_t Rank,
                                                 rt::ExecutorOptions Opts,
                                                 std::shared_ptr<void> &Session) {
  if (Backend == "local") {
    // Local ranks are threads of this process: they meet by the rendezvous
    // name, as their creators chose it.
    Opts.CommPrefix = Rendezvous.empty() ? "collc" : Rendezvous.str();
    return rt::createLocalExecutor(P, Rank, std::move(Opts));
  }
  Opts.CommPrefix = nextCommPrefix(P, Rank);
  Expected<std::unique_ptr<rt::Executor>> X = [&]() -> Expected<std::unique_ptr<rt::Executor>> {
    // (A backend this build lacks is refused here.)
    Expected<rt::RendezvousAddress> Where = prepareProcessBackend(Backend, Rendezvous, Session);
    if (!Where)
      return Where.takeError();
    rt::ProcessPlace Place;
    Place.Rank = Rank;
    Place.World = P.World;
    Place.Source = "collcExecutorCreate";
    // What the backend refuses of a plan alone (nccl: comm streams that
    // would wait for each other), judged alike on every rank.
    if (Error E = rt::checkProcessPlan(Backend, P))
      return E;
    return rt::createProcessExecutor(Backend, P, Place, *Where, std::move(Opts));
  }();
  if (X)
    return X;
  // A backend that cannot run here says so against the option that chose it.
  return handleErrors(X.takeError(), [&](const rt::RuntimeError &R) -> Error {
    if (R.kind() != rt::ErrorKind::Unsupported)
      return rt::makeError(R.kind(), R.text(), R.peer());
    return rt::makeError(R.kind(), formatv("options->backend is \"{0}\": {1}", Backend, R.text()),
                         R.peer());
  });
}

Error checkExec(Args &A, collcExecutor_t Exec) { return A.executor(Exec, "exec").done(); }

/// Refuses \p Call on \p Exec unless its memory is of kind \p Needed.
Error checkMemory(collcExecutor_t Exec, rt::MemoryKind Needed, StringRef Call) {
  rt::MemoryKind Has = Exec->Exec->memory();
  if (Has == Needed)
    return Error::success();
  if (Has == rt::MemoryKind::Device)
    return makeApiError(collcInvalidUsage,
                        formatv("exec runs on the {0} backend, which binds device memory: "
                                "expected collcExecutorBindDevice, not {1}",
                                Exec->Backend, Call));
  return makeApiError(collcInvalidUsage,
                      formatv("exec runs on the {0} backend, which binds host memory "
                              "(collcExecutorBind): {1} needs an executor of a device backend "
                              "(nccl)",
                              Exec->Backend, Call));
}

/// Binding or capturing while queued steps use the executor is a race.
Error checkNoStepPending(collcExecutor_t Exec, StringRef Call) {
  if (!Exec->Steps || !Exec->Steps->pending())
    return Error::success();
  return makeApiError(collcInvalidUsage, formatv("exec has {0} step(s) queued or running: expected "
                                                 "collcExecutorSynchronize before {1}",
                                                 Exec->Steps->pending(), Call));
}

/// A call of \p Exec that changes, waits for or destroys it, made from the
/// compute callback of its own step, is refused.
Error checkNotInItsStep(collcExecutor_t Exec, StringRef Call) {
  if (Exec->StepThread.load() != std::this_thread::get_id())
    return Error::success();
  return makeApiError(collcInvalidUsage,
                      formatv("{0} from the compute callback of exec's own step: expected it "
                              "after the step (collcExecutorReplay returned, or "
                              "collcExecutorSynchronize with asyncReplay)",
                              Call));
}

/// One step of host executor \p X, \p Compute (or none) at each compute;
/// \p Q (asyncReplay) hears where the step is, for a timeout's text;
/// \p StepThread names the thread that runs it meanwhile.
Error replayStep(rt::Executor &X, collcComputeFn Compute, void *User, StepQueue *Q,
                 std::atomic<std::thread::id> &StepThread) {
  StepThread.store(std::this_thread::get_id());
  auto Clear = make_scope_exit([&] { StepThread.store(std::thread::id()); });
  Error E = X.replay([&](const plan::Compute &C, uint32_t Index) -> Error {
    if (Q)
      Q->at(formatv("in compute @{0} (#{1})", C.Name, Index).str());
    collcResult_t R = Compute ? Compute(C.Name.c_str(), Index, User) : collcSuccess;
    if (Q)
      Q->at(formatv("past compute @{0} (#{1}), in the collectives after it", C.Name, Index).str());
    if (R == collcSuccess)
      return Error::success();
    if (R <= collcSuccess || R >= collcNumResults)
      return makeApiError(collcInvalidArgument,
                          formatv("the compute callback of @{0} returned {1}: expected a "
                                  "collcResult_t",
                                  C.Name, int(R)));
    return makeApiError(
        R, formatv("the compute callback of @{0} returned {1}", C.Name, collcGetErrorString(R)));
  });
  return E;
}

} // namespace

extern "C" {

collcResult_t collcExecutorOptionsInitSized(collcExecutorOptions_t *Options, size_t Size) {
  return entry(__func__, [&] {
    return initVersioned(Options, Size, collcExecutorOptions_t COLLC_EXECUTOR_OPTIONS_INIT,
                         "options");
  });
}

// Version 1's symbol (collc.h's macro of this name calls the sized one).
collcResult_t(collcExecutorOptionsInit)(collcExecutorOptions_t *Options) {
  return entry(__func__, [&] {
    return initVersioned(Options, FirstVersionSize<collcExecutorOptions_t>,
                         collcExecutorOptions_t COLLC_EXECUTOR_OPTIONS_INIT, "options");
  });
}

collcResult_t collcExecutorCreate(collcPlan_t Plan, int64_t Rank,
                                  const collcExecutorOptions_t *Options, collcExecutor_t *Out) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.plan(Plan, "plan")
        .notNull(Out, "exec", "where to store the executor")
        .versioned(Options, "options", /*Optional=*/true);
    if (Error E = A.done())
      return E;
    if (Error E = A.inRange(Rank, "rank", 0, Plan->P->World - 1).done())
      return E;
    // The fields the caller's `size` covers, over the defaults (a caller
    // built against an older collc.h has fewer).
    collcExecutorOptions_t O =
        readVersioned(Options, collcExecutorOptions_t COLLC_EXECUTOR_OPTIONS_INIT);
    A.inRange(O.timeoutMs, "options->timeoutMs", 0, 86400000)
        .inRange(O.digestHandshake, "options->digestHandshake", 0, 1)
        .inRange(O.device, "options->device", -1, 1023)
        .inRange(O.asyncReplay, "options->asyncReplay", 0, 1);
    if (Error E = A.done())
      return E;
    rt::ExecutorOptions Opts;
    if (O.timeoutMs) {
      Opts.Timeout = std::chrono::milliseconds(O.timeoutMs);
    } else {
      // A malformed COLLC_TIMEOUT_MS is refused here, as `collc run` does.
      Expected<std::chrono::milliseconds> T = rt::timeoutFromEnvironment();
      if (!T)
        return makeApiError(collcInvalidArgument, toString(T.takeError()));
      Opts.Timeout = *T;
    }
    Opts.DigestHandshake = O.digestHandshake != 0;
    std::string Backend = O.backend ? O.backend : "local";
    auto H = std::make_unique<collcExecutor>();
    H->Plan = Plan->P;
    H->Backend = Backend;
    H->Rank = Rank;
    std::string Rendezvous = O.rendezvous ? O.rendezvous : "";
    // Refused before anything starts, as the table says where the
    // backend's memory is.
    bool OnDevice = rt::backendMemory(Backend) == rt::MemoryKind::Device;
    if (O.asyncReplay && OnDevice)
      return makeApiError(collcInvalidArgument,
                          formatv("options->asyncReplay is 1: the {0} backend's replay is "
                                  "asynchronous already (on the device): expected 0",
                                  Backend));
    if (O.device != -1 && !OnDevice)
      return makeApiError(collcInvalidArgument,
                          formatv("options->device is {0}: only a device backend (nccl) runs "
                                  "on a device: expected -1 on {1}",
                                  O.device, Backend));
    Opts.Device = int(O.device);
    Expected<std::unique_ptr<rt::Executor>> X =
        createOn(Backend, Rendezvous, *H->Plan, Rank, std::move(Opts), H->Session);
    if (!X)
      return X.takeError();
    H->Exec = std::move(*X);
    if (O.asyncReplay)
      H->Steps = std::make_unique<StepQueue>(Rank);
    *Out = adopt(std::move(H));
    return Error::success();
  });
}

collcResult_t collcExecutorRank(collcExecutor_t Exec, int64_t *Rank) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.notNull(Rank, "rank", "where to store the rank");
    if (Error E = checkExec(A, Exec))
      return E;
    *Rank = Exec->Rank;
    return Error::success();
  });
}

collcResult_t collcExecutorMemory(collcExecutor_t Exec, collcMemory_t *Memory) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.notNull(Memory, "memory", "where to store the memory kind");
    if (Error E = checkExec(A, Exec))
      return E;
    *Memory = Exec->Exec->memory() == rt::MemoryKind::Device ? collcMemoryDevice
                                                              : collcMemoryHost;
    return Error::success();
  });
}

collcResult_t collcExecutorBind(collcExecutor_t Exec, const char *Name, void *Data, size_t Bytes) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.notNull(Name, "name", "a tensor name").notNull(Data, "data", "host memory to bind");
    if (Error E = checkExec(A, Exec))
      return E;
    if (Error E = checkNotInItsStep(Exec, "collcExecutorBind"))
      return E;
    if (Error E = checkMemory(Exec, rt::MemoryKind::Host, "collcExecutorBind"))
      return E;
    if (Error E = checkNoStepPending(Exec, "collcExecutorBind"))
      return E;
    Exec->Captured = false;
    return Exec->Exec->bind(Name, Data, Bytes);
  });
}

collcResult_t collcExecutorBindDevice(collcExecutor_t Exec, const char *Name, void *DevicePtr,
                                      size_t Bytes) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.notNull(Name, "name", "a tensor name").notNull(DevicePtr, "devicePtr", "device memory");
    if (Error E = checkExec(A, Exec))
      return E;
    if (Error E = checkNotInItsStep(Exec, "collcExecutorBindDevice"))
      return E;
    if (Error E = checkMemory(Exec, rt::MemoryKind::Device, "collcExecutorBindDevice"))
      return E;
    Exec->Captured = false;
    return Exec->Exec->bind(Name, DevicePtr, Bytes);
  });
}

collcResult_t collcExecutorSetStream(collcExecutor_t Exec, void *CudaStream) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.notNull(CudaStream, "cudaStream",
              "the cudaStream_t the caller computes on (the default stream is ambiguous: "
              "pass cudaStreamLegacy or cudaStreamPerThread)");
    if (Error E = checkExec(A, Exec))
      return E;
    if (Error E = checkNotInItsStep(Exec, "collcExecutorSetStream"))
      return E;
    if (Error E = checkMemory(Exec, rt::MemoryKind::Device, "collcExecutorSetStream"))
      return E;
    if (Error E = Exec->Exec->setStream(CudaStream))
      return E;
    Exec->HasStream = true;
    return Error::success();
  });
}

collcResult_t collcExecutorTensor(collcExecutor_t Exec, const char *Name, void **Data,
                                  size_t *Bytes) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.notNull(Name, "name", "a tensor name")
        .notNull(Data, "data", "where to store the address")
        .notNull(Bytes, "bytes", "where to store the size");
    if (Error E = checkExec(A, Exec))
      return E;
    Expected<MutableArrayRef<char>> T = Exec->Exec->tensor(Name);
    if (!T)
      return T.takeError();
    *Data = T->data();
    *Bytes = T->size();
    return Error::success();
  });
}

collcResult_t collcExecutorUnbound(collcExecutor_t Exec, size_t *Count, const char **FirstName) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.notNull(Count, "count", "where to store the count");
    if (Error E = checkExec(A, Exec))
      return E;
    std::vector<std::string> Names = Exec->Exec->unboundTensors();
    *Count = Names.size();
    Exec->FirstUnbound = Names.empty() ? "" : Names.front();
    if (FirstName)
      *FirstName = Exec->FirstUnbound.c_str();
    return Error::success();
  });
}

collcResult_t collcExecutorCapture(collcExecutor_t Exec) {
  return entry(__func__, [&]() -> Error {
    Args A;
    if (Error E = checkExec(A, Exec))
      return E;
    if (Error E = checkNotInItsStep(Exec, "collcExecutorCapture"))
      return E;
    // A step on a device is ordered after the caller's work on its stream,
    // which the executor must know first.
    if (Exec->Exec->memory() == rt::MemoryKind::Device && !Exec->HasStream)
      return makeApiError(collcInvalidUsage,
                          formatv("exec runs on the {0} backend, whose steps run on the device, "
                                  "and has no stream: expected collcExecutorSetStream before "
                                  "collcExecutorCapture",
                                  Exec->Backend));
    if (Error E = checkNoStepPending(Exec, "collcExecutorCapture"))
      return E;
    Exec->Captured = false; // a capture that fails leaves nothing to replay
    if (Error E = Exec->Exec->capture())
      return E;
    Exec->Captured = true;
    return Error::success();
  });
}

collcResult_t collcExecutorReplay(collcExecutor_t Exec, collcComputeFn Compute, void *User) {
  return entry(__func__, [&]() -> Error {
    Args A;
    if (Error E = checkExec(A, Exec))
      return E;
    if (Error E = checkNotInItsStep(Exec, "collcExecutorReplay"))
      return E;
    if (!Exec->Captured)
      return makeApiError(collcInvalidUsage,
                          "exec is not captured since its last bind: expected "
                          "collcExecutorCapture before collcExecutorReplay");
    if (!Exec->Steps)
      return replayStep(*Exec->Exec, Compute, User, nullptr, Exec->StepThread);
    rt::Executor *X = Exec->Exec.get();
    StepQueue *Q = Exec->Steps.get();
    std::atomic<std::thread::id> *Thread = &Exec->StepThread;
    return Q->push(
        [X, Compute, User, Q, Thread] { return replayStep(*X, Compute, User, Q, *Thread); });
  });
}

collcResult_t collcExecutorSynchronize(collcExecutor_t Exec, int64_t TimeoutMs) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.inRange(TimeoutMs, "timeoutMs", 0, 86400000);
    if (Error E = checkExec(A, Exec))
      return E;
    if (Error E = checkNotInItsStep(Exec, "collcExecutorSynchronize"))
      return E;
    if (Exec->Steps)
      if (Error E = Exec->Steps->wait(std::chrono::milliseconds(TimeoutMs)))
        return E;
    // The steps on a device, or, once no step is in flight on the host, a
    // peer lost since.
    return Exec->Exec->synchronize(std::chrono::milliseconds(TimeoutMs));
  });
}

collcResult_t collcExecutorDestroy(collcExecutor_t Exec) {
  return entry(__func__, [&]() -> Error {
    if (!Exec)
      return Error::success();
    Args A;
    if (Error E = checkExec(A, Exec))
      return E;
    if (Error E = checkNotInItsStep(Exec, "collcExecutorDestroy"))
      return E;
    return destroy(Exec, "exec", A.releaseUse(Exec));
  });
}

collcResult_t collcFinalize(void) {
  return entry(__func__, [&]() -> Error { return endBackendSessions(); });
}

} // extern "C"
