//===- passes/analysis/StepSimulator.h - One training step, simulated -*- C++ -*-===//
//
// The one step simulator. It runs a small neutral model of a step, which a
// program (ProgramStepModel.h, for the passes) and a plan
// (plan/analysis/PlanStepModel.h, for plan files) are translated into, so both
// are timed by the same rules:
//
// Every rank walks the tasks in order, skipping those not on it. A compute
// runs on its compute stream when the stream is free, its inputs are ready
// and no blocking collective holds the rank. A collective runs on the
// rank's one comm stream and starts when every member of its subgroup has
// issued it and their inputs are ready; a send/recv pair starts when both
// sides have posted it (sends and recvs between two ranks match in the
// order each side posts them; an async or p2p-block one is posted without
// holding the rank). Communication costs the cost model's time for its kind, bytes
// and group size. A collective that is not async fences the rank's compute
// streams (eager semantics); an async one overlaps until its results are
// used. A fenced one also waits for every compute the rank issued before
// it (the comm stream waits on the compute streams: bounded prefetch).
//
// The step time is the latest finish over all ranks; exposed communication
// is the step time minus the step time with free communication.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PASSES_ANALYSIS_STEPSIMULATOR_H
#define COLLC_PASSES_ANALYSIS_STEPSIMULATOR_H

#include "passes/analysis/CostModel.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <functional>
#include <optional>
#include <vector>

namespace collc {

/// One thing ranks do in a step: a compute, a collective, a send or a recv.
struct SimTask {
  OpKind Kind = OpKind::Compute; ///< never wait: waits cost nothing here
  uint32_t Source = 0;           ///< the adapter's index, echoed in events
  llvm::BitVector Ranks;         ///< the ranks it runs on; empty: every rank
  /// The values it waits for and the values it makes.
  llvm::SmallVector<uint32_t, 2> Inputs, Outputs;
  // A compute:
  uint32_t Stream = 0;
  int64_t CostNs = 0;
  // Communication:
  int32_t Group = -1; ///< a collective's, into SimModel::Groups; a send's or recv's (-1: the world)
  bool Async = false; ///< also every send/recv of a p2p block
  /// Starts no earlier than every compute the rank issued before it ends.
  bool Fenced = false;
  double InBytes = 0, OutBytes = 0; ///< per rank, of data (not split sizes)
  std::vector<int32_t> Peers;       ///< send/recv: per world rank its peer, or -1
  /// Buffer bytes beyond its tensors (pack/unpack staging), for PeakMemory.h.
  uint64_t StagingBytes = 0;

  bool runsOn(int64_t Rank) const { return Ranks.empty() || Ranks.test(Rank); }
};

/// A group's membership, borrowed from the program or plan it describes.
struct SimGroup {
  llvm::ArrayRef<std::vector<int32_t>> Subgroups; ///< world ranks
  llvm::ArrayRef<int32_t> SubgroupOf;             ///< per world rank; -1 outside
};

struct SimModel {
  int64_t World = 1;
  size_t NumValues = 0;
  std::vector<uint64_t> ValueBytes; ///< per value, on one rank (PeakMemory.h)
  std::vector<SimGroup> Groups;
  std::vector<SimTask> Tasks; ///< in the order every rank issues them
};

struct SimEvent {
  int64_t Rank;
  uint32_t Source; ///< SimTask::Source
  bool IsComm;
  uint32_t Stream; ///< compute stream; 0 for comm
  double StartUs;
  double DurUs;
};

struct SimResult {
  double StepUs = 0;
  double ComputeOnlyStepUs = 0;
  double ExposedCommUs = 0;
  double CommBusyUs = 0; ///< on the slowest rank
  int64_t SlowestRank = 0;
  std::vector<SimEvent> Events; ///< when requested, in simulation order
  /// When requested: per task Source, when it finished on its latest rank
  /// (0 for sources that ran nowhere; may be shorter than the sources).
  std::vector<double> FinishUs;
};

struct SimOptions {
  LinkClass Link = defaultLinkClass();
  bool RecordEvents = false;
  bool RecordFinish = false;
  /// Only the step: no second run with free communication (ComputeOnlyStepUs
  /// and ExposedCommUs stay 0). For callers that compare steps.
  bool StepOnly = false;
  /// When set, a compute starts no earlier than it says, given the rank,
  /// the task and the ready time of any value on that rank. The
  /// perfect-overlap bound (OverlapBound.h) holds each user of
  /// communication back to when its inputs could arrive at best.
  std::function<double(int64_t Rank, const SimTask &T,
                       llvm::function_ref<double(uint32_t Value)> ReadyOf)>
      EarliestStart;
  /// A communication starts when its inputs are ready, whatever the rank's
  /// comm stream is doing: the bound's runs, which hold for any order of a
  /// plan's communication.
  bool UnorderedComm = false;
};

/// Whether a world of \p World ranks with \p NumValues values is small enough
/// to simulate (the ready times take world x values doubles).
bool fitsStepSimulation(int64_t World, size_t NumValues);

/// Simulates \p M (which must fit); none when its ranks stall: a collective
/// some member never issues, a send without its recv, a rank outside the
/// group of a collective it runs.
std::optional<SimResult> simulateModel(const SimModel &M, const SimOptions &Opts);

} // namespace collc

#endif
