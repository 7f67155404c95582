//===- passes/analysis/CostModel.h - Alpha-beta costs of collectives -*- C++ -*-===//
//
// The time of one collective is alpha + bus bytes / bus bandwidth, where the
// bus bytes follow nccl-tests' bus-bandwidth factors: an all_reduce of S
// bytes over n ranks moves 2(n-1)/n * S on the busiest link, an all_gather
// or reduce_scatter (n-1)/n of the gathered size, broadcast and send/recv S.
// Each link class gives alpha and the achievable bus bandwidth.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_COMPILER_COST_COSTMODEL_H
#define COLLC_COMPILER_COST_COSTMODEL_H

#include "ir/Program.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace collc {

struct LinkClass {
  llvm::StringRef Name;
  /// Latency of one collective, microseconds.
  double AlphaUs;
  /// Achievable bus bandwidth, GB/s (1e9 bytes per second).
  double BusGBps;
  llvm::StringRef Description;
};

/// The built-in link classes: h100-nvlink, h200-nvlink, ib-ndr, pcie, local.
llvm::ArrayRef<LinkClass> linkClasses();
llvm::Expected<LinkClass> findLinkClass(llvm::StringRef Name);
/// The default for simulation and `bucket{policy=auto}`.
const LinkClass &defaultLinkClass();

/// nccl-tests' bus-bandwidth factor of \p K over \p N ranks, relative to the
/// size nccl-tests reports (the gathered size for all_gather, the input
/// size for reduce_scatter).
double busBandwidthFactor(OpKind K, int64_t N);

/// Microseconds for \p K moving \p Bytes (per rank, as nccl-tests counts
/// them) among \p N ranks on \p Link.
double collectiveTimeUs(OpKind K, double Bytes, int64_t N, const LinkClass &Link);

/// The size nccl-tests would report for \p K with \p InBytes of data in and
/// \p OutBytes out per rank: the gathered size for all_gather, what arrives
/// for recv, the input otherwise.
double reportedBytes(OpKind K, double InBytes, double OutBytes);

} // namespace collc

#endif
