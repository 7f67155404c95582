//===- api/ExecutorApi.cpp - collc.h: executors ------------------------===//
//
// An executor of the local backend (runtime/local/LocalExecutor.h) or of a
// process backend from the runtime's table (runtime/process/); what a
// process backend needs alive (MPI) is api/BackendSessions.h's.
//
//===----------------------------------------------------------------------===//

#include "api/ApiEntry.h"
#include "api/BackendSessions.h"
#include "api/Handles.h"

#include "runtime/exec/RuntimeError.h"
#include "runtime/exec/Timeout.h"
#include "runtime/local/LocalExecutor.h"
#include "runtime/process/ProcessBackends.h"

using namespace llvm;
using namespace collc;
using namespace collc::api;

namespace {

/// The executor of \p Backend; \p Session gets what it needs alive.
Expected<std::unique_ptr<rt::Executor>> createOn(StringRef Backend, StringRef Rendezvous,
                                                 const plan::Plan &P, int64_t Rank,
                                                 rt::ExecutorOptions Opts,
                                                 std::shared_ptr<void> &Session) {
  if (Backend == "local") {
    Opts.CommPrefix = Rendezvous.empty() ? "collc" : Rendezvous.str();
    return rt::createLocalExecutor(P, Rank, std::move(Opts));
  }
  if (Backend == "nccl")
    return makeApiError(collcUnsupported,
                        "options->backend is \"nccl\": the C API does not drive the nccl "
                        "backend yet (runtime/nccl/NcclExecutor.h; it needs a GPU and a build "
                        "with CUDA and NCCL): expected local, " + rt::processBackendNames());
  if (!rt::isProcessBackend(Backend))
    return makeApiError(collcInvalidArgument,
                        formatv("options->backend is \"{0}\": expected local, {1}", Backend,
                                rt::processBackendNames()));
  if (Error E = rt::checkProcessBackendBuilt(Backend))
    return std::move(E);
  Expected<rt::RendezvousAddress> Where =
      rt::parseRendezvous(Rendezvous.empty() && Backend == "mpi" ? "mpi" : Rendezvous);
  if (!Where)
    return makeApiError(collcInvalidArgument, "options->rendezvous: " + toString(Where.takeError()));
  Expected<std::shared_ptr<void>> S = holdBackendSession(Backend);
  if (!S)
    return S.takeError();
  Session = std::move(*S);
  rt::ProcessPlace Place;
  Place.Rank = Rank;
  Place.World = P.World;
  Place.Source = "collcExecutorCreate";
  return rt::createProcessExecutor(Backend, P, Place, *Where, std::move(Opts));
}

Error checkExec(Args &A, collcExecutor_t Exec) {
  return A.notNull(Exec, "exec", "an executor from collcExecutorCreate").done();
}

} // namespace

extern "C" {

collcResult_t collcExecutorOptionsInit(collcExecutorOptions_t *Options) {
  return entry(__func__, [&]() -> Error {
    if (Error E = Args().notNull(Options, "options", "a collcExecutorOptions_t").done())
      return E;
    *Options = collcExecutorOptions_t COLLC_EXECUTOR_OPTIONS_INIT;
    return Error::success();
  });
}

collcResult_t collcExecutorCreate(collcPlan_t Plan, int64_t Rank,
                                  const collcExecutorOptions_t *Options, collcExecutor_t *Out) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.notNull(Plan, "plan", "a plan from collcCompile or collcPlanLoad")
        .notNull(Out, "exec", "where to store the executor")
        .versioned(Options, "options", sizeof(collcExecutorOptions_t), /*Optional=*/true);
    if (Plan)
      A.inRange(Rank, "rank", 0, Plan->P->World - 1);
    if (Options) {
      A.inRange(Options->timeoutMs, "options->timeoutMs", 0, 86400000);
      A.inRange(Options->digestHandshake, "options->digestHandshake", 0, 1);
    }
    if (Error E = A.done())
      return E;
    collcExecutorOptions_t O = COLLC_EXECUTOR_OPTIONS_INIT;
    if (Options)
      O = *Options;
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
    Expected<std::unique_ptr<rt::Executor>> X =
        createOn(Backend, O.rendezvous ? O.rendezvous : "", *H->Plan, Rank, std::move(Opts),
                 H->Session);
    if (!X)
      return X.takeError();
    H->Exec = std::move(*X);
    *Out = H.release();
    return Error::success();
  });
}

collcResult_t collcExecutorRank(collcExecutor_t Exec, int64_t *Rank) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.notNull(Rank, "rank", "where to store the rank");
    if (Error E = checkExec(A, Exec))
      return E;
    *Rank = Exec->Exec->rank();
    return Error::success();
  });
}

collcResult_t collcExecutorBind(collcExecutor_t Exec, const char *Name, void *Data, size_t Bytes) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.notNull(Name, "name", "a tensor name").notNull(Data, "data", "host memory to bind");
    if (Error E = checkExec(A, Exec))
      return E;
    Exec->Captured = false;
    return Exec->Exec->bind(Name, Data, Bytes);
  });
}

collcResult_t collcExecutorBindDevice(collcExecutor_t Exec, const char *Name, void *DevicePtr,
                                      size_t Bytes, void *CudaStream) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.notNull(Name, "name", "a tensor name").notNull(DevicePtr, "devicePtr", "device memory");
    if (Error E = checkExec(A, Exec))
      return E;
    // Only an nccl executor binds device memory, and collcExecutorCreate
    // does not make one yet.
    return makeApiError(collcUnsupported,
                        formatv("exec runs on the {0} backend, which binds host memory "
                                "(collcExecutorBind): device pointers need the nccl backend, "
                                "which the C API does not drive yet",
                                Exec->Backend));
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
    if (!Exec->Captured)
      return makeApiError(collcInvalidUsage,
                          "exec is not captured since its last bind: expected "
                          "collcExecutorCapture before collcExecutorReplay");
    return Exec->Exec->replay([&](const plan::Compute &C, uint32_t Index) -> Error {
      if (!Compute)
        return Error::success();
      collcResult_t R = Compute(C.Name.c_str(), Index, User);
      if (R == collcSuccess)
        return Error::success();
      if (R <= collcSuccess || R >= collcNumResults)
        return makeApiError(collcInvalidArgument,
                            formatv("the compute callback of @{0} returned {1}: expected a "
                                    "collcResult_t",
                                    C.Name, int(R)));
      return makeApiError(R, formatv("the compute callback of @{0} returned {1}", C.Name,
                                     collcGetErrorString(R)));
    });
  });
}

collcResult_t collcExecutorSynchronize(collcExecutor_t Exec, int64_t TimeoutMs) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.inRange(TimeoutMs, "timeoutMs", 0, 86400000);
    if (Error E = checkExec(A, Exec))
      return E;
    // CPU backends finish a step inside replay(): nothing is in flight, and
    // what is left to report is a peer lost since.
    return Exec->Exec->health();
  });
}

collcResult_t collcExecutorDestroy(collcExecutor_t Exec) {
  return entry(__func__, [&]() -> Error {
    delete Exec;
    return Error::success();
  });
}

collcResult_t collcFinalize(void) {
  return entry(__func__, [&]() -> Error { return endBackendSessions(); });
}

} // extern "C"
