//===- runtime/nccl/NcclMembership.cpp - One device's NCCL communicator ----===//

#include "runtime/nccl/NcclMembership.h"

#include "ir/PremulFactor.h"
#include "runtime/exec/PremulFactor.h"
#include "runtime/nccl/CudaError.h"

#include "llvm/Support/FormatVariadic.h"

#include <array>

using namespace llvm;

namespace collc::rt::nccl {

NcclMembership::NcclMembership(ncclComm_t Comm, int Rank, int Size, int Device, std::string Name)
    : Comm(Comm), Rank(Rank), Size(Size), Device(Device), Name(std::move(Name)) {}

NcclMembership::~NcclMembership() {
  if (!Comm || Aborted.load())
    return;
  for (auto &[Key, Op] : PreMulOps)
    ncclRedOpDestroy(Op, Comm);
  if (Scratch)
    cudaFree(Scratch);
  // Finish what was issued, within the timeout; abort otherwise, so that a
  // destructor never hangs on a dead peer.
  ncclResult_t R = ncclCommFinalize(Comm);
  if ((R == ncclSuccess || R == ncclInProgress) &&
      !errorToBool(waitReady({Comm}, Timeout, "ncclCommFinalize")))
    ncclCommDestroy(Comm);
  else
    ncclCommAbort(Comm);
}

Error NcclMembership::health() const {
  if (Aborted.load())
    return makeError(ErrorKind::Broken,
                     formatv("communicator {0} was aborted after {1}", Name, AbortReason));
  ncclResult_t State = ncclSuccess;
  if (Error E = checkNccl(ncclCommGetAsyncError(Comm, &State), Name + ": ncclCommGetAsyncError"))
    return E;
  if (State == ncclSuccess || State == ncclInProgress)
    return Error::success();
  return makeError(ErrorKind::Broken,
                   formatv("communicator {0} (rank {1} of {2}) failed after {3}: NCCL error {4} "
                           "({5})",
                           Name, Rank, Size, LastOp.empty() ? "no op" : LastOp, int(State),
                           ncclGetErrorString(State)));
}

void NcclMembership::abort(std::string Why) {
  if (Aborted.exchange(true))
    return;
  AbortReason = std::move(Why);
  ncclCommAbort(Comm);
}

Error NcclMembership::usable() const { return health(); }

Expected<void *> NcclMembership::barrierScratch(cudaStream_t S) {
  if (Scratch)
    return Scratch;
  if (Error E = checkCuda(cudaSetDevice(Device), Name + ": cudaSetDevice"))
    return E;
  if (Error E = checkCuda(cudaMalloc(&Scratch, 4), Name + ": cudaMalloc of the barrier scratch"))
    return E;
  // On the comm stream: a cudaMemset on the legacy stream would not be
  // ordered before the barrier on a non-blocking one.
  if (Error E = checkCuda(cudaMemsetAsync(Scratch, 0, 4, S),
                          Name + ": cudaMemsetAsync of the barrier scratch"))
    return E;
  return Scratch;
}

Expected<ncclRedOp_t> NcclMembership::preMulSum(ElemType T, ncclDataType_t Type, double Scale) {
  std::lock_guard<std::mutex> Lock(PreMulMutex);
  auto Key = std::make_pair(int(T), Scale);
  if (auto It = PreMulOps.find(Key); It != PreMulOps.end())
    return It->second;
  if (std::optional<std::string> Why = premulFactorProblem(T, Scale))
    return makeError(ErrorKind::InvalidArgument, Name + ": " + *Why);
  // Read from host memory at the call, as a value of the element type
  // (for every type: NCCL scales integers and fp8 too).
  std::array<unsigned char, 8> Scalar = premulFactorBytes(T, Scale);
  ncclRedOp_t Op;
  if (Error E = checkNccl(ncclRedOpCreatePreMulSum(&Op, Scalar.data(), Type,
                                                   ncclScalarHostImmediate, Comm),
                          Name + ": ncclRedOpCreatePreMulSum"))
    return E;
  PreMulOps[Key] = Op;
  return Op;
}

} // namespace collc::rt::nccl
