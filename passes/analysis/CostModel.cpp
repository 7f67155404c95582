//===- passes/analysis/CostModel.cpp - Alpha-beta costs of collectives ------===//

#include "passes/analysis/CostModel.h"

#include <algorithm>

using namespace llvm;

namespace collc {

// Figures are what NCCL reaches in practice (nccl-tests busbw at large
// sizes, latency at small ones), not link peaks:
//  - H100/H200 HGX, NVLink 4 via NVSwitch: ~900 GB/s bidirectional per GPU;
//    all_reduce busbw ~360-480 GB/s; small-message latency ~10-20 us.
//  - InfiniBand NDR, one 400 Gb/s NIC per GPU: 50 GB/s peak, ~45 achieved.
//  - PCIe Gen5 x16 without NVLink: ~25 GB/s through host-staged rings.
//  - local: collc's in-process backend on a CI-class CPU core (memory-bound).
static const LinkClass Links[] = {
    {"h100-nvlink", 12.0, 370.0, "H100 SXM, NVLink 4 through NVSwitch (8 GPUs)", nullptr},
    {"h200-nvlink", 12.0, 390.0, "H200 SXM, NVLink 4 through NVSwitch (8 GPUs)", nullptr},
    {"ib-ndr", 25.0, 45.0, "InfiniBand NDR, one 400 Gb/s NIC per GPU", nullptr},
    {"pcie", 15.0, 22.0, "PCIe Gen5 x16 without NVLink", nullptr},
    {"local", 3.0, 6.0, "collc's local in-process backend on one CPU socket", nullptr},
};

ArrayRef<LinkClass> linkClasses() { return Links; }

const LinkClass &defaultLinkClass() { return Links[0]; }

const LinkClass &freeLinkClass() {
  static const LinkClass Free{"free", 0.0, 1e12, "no communication cost", nullptr};
  return Free;
}

Expected<LinkClass> findLinkClass(StringRef Name) {
  for (const LinkClass &L : Links)
    if (L.Name == Name)
      return L;
  std::string Known;
  for (const LinkClass &L : Links)
    Known += (Known.empty() ? "" : ", ") + L.Name.str();
  return createStringError(inconvertibleErrorCode(),
                           "unknown link class '%s'; known: %s, or a link file (a path ending "
                           "in .json, from collc bench --calibrate)",
                           Name.str().c_str(), Known.c_str());
}

ArrayRef<LinkRange> LinkClass::rangesFor(OpKind K) const {
  if (!Fit)
    return {};
  auto RangesOf = [&](OpKind Kind) -> ArrayRef<LinkRange> { return Fit->Ranges[unsigned(Kind)]; };
  ArrayRef<LinkRange> Rs = RangesOf(K);
  if (Rs.empty() && K == OpKind::Recv)
    Rs = RangesOf(OpKind::Send);
  if (Rs.empty() && K == OpKind::AllToAllV)
    Rs = RangesOf(OpKind::AllToAll);
  return Rs;
}

AlphaBeta LinkClass::at(OpKind K, double Bytes) const {
  ArrayRef<LinkRange> Rs = rangesFor(K);
  if (Rs.empty())
    return {AlphaUs, BusGBps};
  // Range I holds [MaxBytes of range I-1, its own MaxBytes); the first and
  // the last reach to either end.
  for (const LinkRange &R : Rs)
    if (Bytes < double(R.MaxBytes))
      return R.Fit;
  return Rs.back().Fit;
}

double busBandwidthFactor(OpKind K, int64_t N) {
  if (N <= 1)
    return 0.0;
  double Nd = double(N);
  switch (K) {
  case OpKind::AllReduce:
    return 2.0 * (Nd - 1) / Nd;
  case OpKind::AllGather:
  case OpKind::ReduceScatter:
  case OpKind::AllToAll:
  case OpKind::AllToAllV:
    return (Nd - 1) / Nd;
  case OpKind::Broadcast:
  case OpKind::Send:
  case OpKind::Recv:
    return 1.0;
  default:
    return 0.0;
  }
}

double collectiveTimeUs(OpKind K, double Bytes, int64_t N, const LinkClass &Link) {
  AlphaBeta C = Link.at(K, Bytes);
  if (K == OpKind::Barrier)
    return C.AlphaUs;
  if (N <= 1 && K != OpKind::Send && K != OpKind::Recv)
    return 0.5; // a local copy at most
  return C.AlphaUs + Bytes * busBandwidthFactor(K, N) / (C.BusGBps * 1e3);
}

std::vector<TimePiece> collectiveTimePieces(OpKind K, int64_t N, const LinkClass &Link) {
  // The pieces of collectiveTimeUs's formula, with its special cases.
  auto Piece = [&](double From, AlphaBeta C) -> TimePiece {
    if (K == OpKind::Barrier)
      return {From, C.AlphaUs, 0.0};
    if (N <= 1 && K != OpKind::Send && K != OpKind::Recv)
      return {From, 0.5, 0.0};
    return {From, C.AlphaUs, busBandwidthFactor(K, N) / (C.BusGBps * 1e3)};
  };
  ArrayRef<LinkRange> Rs = Link.rangesFor(K);
  if (Rs.empty())
    return {Piece(0.0, {Link.AlphaUs, Link.BusGBps})};
  std::vector<TimePiece> Out;
  for (size_t I = 0; I != Rs.size(); ++I)
    Out.push_back(Piece(I ? double(Rs[I - 1].MaxBytes) : 0.0, Rs[I].Fit));
  return Out;
}

double reportedBytes(OpKind K, double InBytes, double OutBytes) {
  switch (K) {
  case OpKind::AllGather:
  case OpKind::Recv:
    return OutBytes;
  default:
    // all_to_all_v with runtime split sizes: assume the sender fills its
    // input.
    return InBytes;
  }
}

} // namespace collc
