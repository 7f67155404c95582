//===- passes/analysis/CostModel.h - Alpha-beta costs of collectives -*- C++ -*-===//
//
// The time of one collective is alpha + bus bytes / bus bandwidth, where the
// bus bytes follow nccl-tests' bus-bandwidth factors: an all_reduce of S
// bytes over n ranks moves 2(n-1)/n * S on the busiest link, an all_gather
// or reduce_scatter (n-1)/n of the gathered size, broadcast and send/recv S.
// Each link class gives alpha and the achievable bus bandwidth; a calibrated
// link (a link file from `collc bench --calibrate`, LinkFile.h) gives them per
// op kind and size range, and the same formula uses them.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PASSES_ANALYSIS_COSTMODEL_H
#define COLLC_PASSES_ANALYSIS_COSTMODEL_H

#include "ir/Program.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace collc {

/// Latency and bus bandwidth: what the cost formula needs of a link.
struct AlphaBeta {
  double AlphaUs;
  double BusGBps;
};

/// One size range of a calibrated op kind: reported bytes (as nccl-tests
/// counts them) in [MinBytes, MaxBytes), with the fit and how well it fit.
struct LinkRange {
  uint64_t MinBytes = 0, MaxBytes = 0;
  AlphaBeta Fit = {0, 0};
  unsigned Points = 0;       ///< measurements the fit used
  double MedianRelError = 0; ///< of the fit on those measurements
};

/// A link fitted on a machine: ranges per op kind (ascending, disjoint).
struct LinkFit {
  std::string Name, Description, Backend;
  int64_t World = 0;
  /// Indexed by OpKind; empty for a kind not calibrated, which then costs
  /// as the link's overall alpha and bandwidth.
  std::vector<LinkRange> Ranges[NumOpKinds];
};

struct LinkClass {
  llvm::StringRef Name;
  /// Latency of one collective, microseconds.
  double AlphaUs;
  /// Achievable bus bandwidth, GB/s (1e9 bytes per second).
  double BusGBps;
  llvm::StringRef Description;
  /// Set for a calibrated link (Name and Description point into it); null
  /// for a built-in class.
  std::shared_ptr<const LinkFit> Fit;

  /// The alpha and bandwidth for \p K moving \p Bytes (reported bytes):
  /// the calibrated range holding Bytes (the nearest at either end), else
  /// the class's own. A recv costs as its send (the simulator costs the
  /// pair once) and all_to_all_v as all_to_all when they were not measured.
  AlphaBeta at(OpKind K, double Bytes) const;
  /// The calibrated ranges at() chooses among for \p K (after the recv and
  /// all_to_all_v fallbacks); empty when \p K costs as the class's own.
  llvm::ArrayRef<LinkRange> rangesFor(OpKind K) const;
};

/// The built-in link classes: h100-nvlink, h200-nvlink, ib-ndr, pcie, local.
llvm::ArrayRef<LinkClass> linkClasses();
llvm::Expected<LinkClass> findLinkClass(llvm::StringRef Name);
/// The default for simulation and `bucket{policy=auto}`.
const LinkClass &defaultLinkClass();
/// A link on which communication costs nothing: the compute timeline alone
/// (when each gradient is ready; the perfect-overlap bound's first run).
const LinkClass &freeLinkClass();

/// nccl-tests' bus-bandwidth factor of \p K over \p N ranks, relative to the
/// size nccl-tests reports (the gathered size for all_gather, the input
/// size for reduce_scatter).
double busBandwidthFactor(OpKind K, int64_t N);

/// Microseconds for \p K moving \p Bytes (per rank, as nccl-tests counts
/// them) among \p N ranks on \p Link.
double collectiveTimeUs(OpKind K, double Bytes, int64_t N, const LinkClass &Link);

/// One piece of collectiveTimeUs as a function of the bytes: from FromBytes
/// up to the next piece's, AlphaUs + Bytes * UsPerByte.
struct TimePiece {
  double FromBytes, AlphaUs, UsPerByte;
};
/// collectiveTimeUs(K, Bytes, N, Link) for every Bytes, as ascending pieces
/// (the first from 0): one for a built-in class, one per calibrated range of
/// a link file, so a bucket is priced at its own size's range.
std::vector<TimePiece> collectiveTimePieces(OpKind K, int64_t N, const LinkClass &Link);

/// The size nccl-tests would report for \p K with \p InBytes of data in and
/// \p OutBytes out per rank: the gathered size for all_gather, what arrives
/// for recv, the input otherwise.
double reportedBytes(OpKind K, double InBytes, double OutBytes);

} // namespace collc

#endif
