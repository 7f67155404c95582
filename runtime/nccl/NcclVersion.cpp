//===- runtime/nccl/NcclVersion.cpp - What the loaded NCCL and GPU can run -===//

#include "runtime/nccl/NcclVersion.h"

#include "runtime/nccl/CudaError.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc::rt::nccl {

namespace {

/// The functions collc calls that came last, with the release each came in.
struct Needed {
  int Code;
  const char *Functions;
};
constexpr Needed NeededFunctions[] = {
    {21400, "ncclCommInitRankConfig and ncclCommFinalize (2.14)"},
    {21800, "ncclCommSplit (2.18)"},
};

bool isFp8(ElemType T) { return T == ElemType::F8E4M3 || T == ElemType::F8E5M2; }

} // namespace

Error checkNcclVersionCode(int Code) {
  if (Code >= kMinNcclVersion)
    return Error::success();
  std::string Missing;
  for (const Needed &N : NeededFunctions)
    if (Code < N.Code)
      Missing += (Missing.empty() ? "" : ", ") + std::string(N.Functions);
  return makeError(ErrorKind::Unsupported,
                   formatv("NCCL {0} is loaded; collc's NCCL backend needs {1} or newer: it "
                           "calls {2}, which NCCL {0} lacks",
                           ncclVersionString(Code), ncclVersionString(kMinNcclVersion), Missing));
}

Error checkNcclVersion() {
  int Version = 0;
  if (Error E = checkNccl(ncclGetVersion(&Version), "ncclGetVersion"))
    return E;
  return checkNcclVersionCode(Version);
}

Error checkNcclSupports(ElemType T, ncclDataType_t Type, int Device) {
  if (Type == ncclNumTypes) {
    if (isFp8(T))
      return makeError(ErrorKind::Unsupported,
                       formatv("{0} needs NCCL 2.24 or newer; collc was built with {1}",
                               elemTypeName(T), ncclVersionString(NCCL_VERSION_CODE)));
    return makeError(ErrorKind::Unsupported,
                     formatv("element type #{0} has no NCCL type", unsigned(T)));
  }
  if (!isFp8(T))
    return Error::success();
  int Version = 0;
  if (Error E = checkNccl(ncclGetVersion(&Version), "ncclGetVersion"))
    return E;
  if (Version < 22400)
    return makeError(ErrorKind::Unsupported,
                     formatv("{0} needs NCCL 2.24 or newer; NCCL {1} is loaded", elemTypeName(T),
                             ncclVersionString(Version)));
  if (Device < 0)
    if (Error E = checkCuda(cudaGetDevice(&Device), "cudaGetDevice"))
      return E;
  int Major = 0;
  if (Error E = checkCuda(cudaDeviceGetAttribute(&Major, cudaDevAttrComputeCapabilityMajor, Device),
                          "cudaDeviceGetAttribute"))
    return E;
  if (Major < 9)
    return makeError(ErrorKind::Unsupported,
                     formatv("{0} collectives need an SM90 GPU or newer; GPU {1} is SM{2}x",
                             elemTypeName(T), Device, Major));
  return Error::success();
}

} // namespace collc::rt::nccl
