//===- passes/Prefetch.h - FSDP-style bounded prefetch of gathers -*- C++ -*-===//
//
// Where the schedule launches parameter gathers. `order` puts an all_gather
// right after the op that makes its shard, which for FSDP is the start of
// the step: every layer gathered before the first forward compute, the
// whole model live at once. Bounded prefetch launches the gathers a unit
// (the compute that first needs them) needs no earlier than right after
// the unit `Depth` units before it, fenced: the launch waits for the
// computes before it (as FSDP's limit_all_gathers makes the CPU wait for an
// earlier unit's free event, and its unshard stream waits for the compute
// stream). Depth 2 is PyTorch FSDP's default: at most two units' gathers in
// flight (the unit computing and the next, prefetched; forward and
// backward_prefetch=BACKWARD_PRE alike). Depth 0 leaves gathers where they
// stand (unbounded).
//
// A gather never moves earlier, never past its first use, and never across
// a send, recv, barrier or wait (as in `order`, so no rank's point-to-point
// order changes). One rewrite of the one program: every rank moves the same
// ops to the same places.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PASSES_PREFETCH_H
#define COLLC_PASSES_PREFETCH_H

#include "ir/Program.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>

namespace collc {

/// PyTorch FSDP's default: limit_all_gathers keeps two units in flight.
constexpr unsigned FsdpDefaultPrefetch = 2;

/// The units of \p P: the computes that first use an all_gather result
/// (not yet async), in program order.
size_t countPrefetchUnits(const Program &P);

/// Moves each all_gather of \p P (not yet async) to right after the unit
/// \p Depth units before the one that first needs it, when that is later
/// than where it stands, marks it fenced and records why (`prefetch_why`,
/// ending with \p How). Returns how many moved. Depth 0 moves nothing.
int64_t boundPrefetch(Program &P, unsigned Depth, llvm::StringRef How = "");

/// Per-unit depths: the gathers unit K needs launch right after unit
/// K - \p DepthOfUnit[K] (0, or a depth beyond unit 0: where they stand).
/// \p DepthOfUnit has one entry per unit (countPrefetchUnits). The why of
/// unit K's gathers ends with \p HowOfUnit(K) when it is not empty; with
/// \p WhyUnmoved, gathers left where they stand say so too.
int64_t boundPrefetch(Program &P, llvm::ArrayRef<unsigned> DepthOfUnit,
                      llvm::function_ref<std::string(size_t Unit)> HowOfUnit,
                      bool WhyUnmoved = false);

} // namespace collc

#endif
