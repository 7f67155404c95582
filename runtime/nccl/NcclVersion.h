//===- runtime/nccl/NcclVersion.h - What the loaded NCCL and GPU can run -*- C++ -*-===//
//
// collc links NCCL dynamically and lazily: the binary loads on any NCCL,
// and the functions it imports are resolved at their first call, where a
// missing one would end the process. So before any other NCCL call the
// backend asks the loaded library's version and refuses, naming what is
// missing, a version without the functions it calls: ncclCommSplit (2.18),
// ncclCommInitRankConfig and ncclCommFinalize (2.14). ncclAlltoAll (2.28)
// is looked up at run time instead (NcclDriver.h). fp8 needs NCCL 2.24 and
// an SM90 GPU; every path that issues a type (the driver's elements(), the
// executor's setup) asks checkNcclSupports.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_NCCLVERSION_H
#define COLLC_RUNTIME_NCCL_NCCLVERSION_H

#include "ir/Types.h"

#include "llvm/Support/Error.h"

#include <nccl.h>

namespace collc::rt::nccl {

/// The oldest NCCL the backend accepts (NCCL_VERSION_CODE form).
constexpr int kMinNcclVersion = 21800;

/// Refuses NCCL \p Code (NCCL_VERSION_CODE form) when it is older than
/// kMinNcclVersion, naming the functions it lacks.
llvm::Error checkNcclVersionCode(int Code);
/// checkNcclVersionCode of the library this process loaded.
llvm::Error checkNcclVersion();

/// Whether collectives of \p T (NCCL's \p Type, ncclNumTypes where this
/// build has none) run with the loaded NCCL on GPU \p Device (-1: the
/// current one): fp8 needs NCCL 2.24 and SM90.
llvm::Error checkNcclSupports(ElemType T, ncclDataType_t Type, int Device = -1);

} // namespace collc::rt::nccl

#endif
