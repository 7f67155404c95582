//===- plan/Plan.h - The compiled communication plan ----*- C++ -*-===//
//
// A plan is what the compiler hands the runtime: for one world size, the
// groups, the tensors, the buffers and where each tensor sits in them, the
// compute ops (for readiness and simulation), the communication ops, and
// the ordered steps every rank walks (each step says which ranks run it).
// It is a text file first (docs/plan.md): diffable, loadable, versioned,
// and sealed by a digest over everything ranks must agree on.
//
// This library depends only on ir/Types.h, ir/Collectives.def and LLVM
// Support, so the runtime can load plans without the passes.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PLAN_PLAN_H
#define COLLC_PLAN_PLAN_H

#include "ir/Types.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/Optional.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <string>
#include <vector>

namespace collc::plan {

/// The newest format this collc reads and writes. Version 2 added joint
/// comms (`side` lines) and steps that name their ranks; a plan that uses
/// neither is written as version 1, byte for byte as before
/// (requiredVersion).
constexpr int FormatVersion = 2;
constexpr int OldestFormatVersion = 1;
/// Limits of the format, shared by the reader, the validator and the
/// lowering (which refuses a program beyond them rather than write a plan
/// its own reader would refuse).
constexpr int64_t MaxWorld = MaxWorldSize;
constexpr int64_t MaxAlignment = int64_t(1) << 20;
constexpr int64_t MaxDimension = int64_t(1) << 48;

/// The ranks a step or op runs on: every rank, or a sorted list.
struct RankSet {
  bool All = true;
  std::vector<int32_t> Ranks;

  bool contains(int64_t R) const;
  /// Set algebra in a world of \p World ranks (where `all` is 0..World-1).
  bool isSubsetOf(const RankSet &O, int64_t World) const;
  bool intersects(const RankSet &O) const;
  static RankSet unite(const RankSet &A, const RankSet &B, int64_t World);
  /// How many ranks, in a world of \p World.
  int64_t size(int64_t World) const { return All ? World : int64_t(Ranks.size()); }
  /// "all", or ranges: "0-3,6".
  std::string str() const;
  static llvm::Expected<RankSet> parse(llvm::StringRef Text, int64_t World);
  bool operator==(const RankSet &O) const { return All == O.All && Ranks == O.Ranks; }
};

struct Group {
  std::string Name;
  std::vector<std::vector<int32_t>> Subgroups; ///< world ranks in local-rank order
  // Derived on load: per world rank, its subgroup and local rank (-1 outside).
  std::vector<int32_t> SubgroupOf, LocalRank;
  llvm::ArrayRef<int32_t> membersOf(int64_t Rank) const;
  bool operator==(const Group &) const = default;
};

struct Tensor {
  std::string Name; ///< without '%'
  TensorType Type;
  bool operator==(const Tensor &) const = default;
};

/// A tensor's name as a caller may give it (`g0`, or `%g0` as the IR spells
/// it), as the plan keeps it.
inline llvm::StringRef tensorName(llvm::StringRef Given) {
  Given.consume_front("%");
  return Given;
}

using collc::SlotMode; // ir/Types.h: the passes and the plan share it

struct Slot {
  uint32_t Tensor;
  uint64_t Offset; ///< within each segment of a segmented buffer
  uint64_t Bytes;  ///< the whole tensor
  SlotMode Mode;
  bool operator==(const Slot &) const = default;
};

struct Buffer {
  uint64_t Bytes = 0;
  int64_t Segments = 1; ///< per-rank segments (reduce_scatter, all_gather buckets)
  std::vector<Slot> Slots;
  bool operator==(const Buffer &) const = default;
};

/// The communication ops of ir/Collectives.def, with the IR's enumerator
/// names and spellings. It stays its own enum rather than an alias of the
/// IR's OpKind: the plan does not see ir/OpKind.h, a plan comm can
/// never be a compute or a wait, and the runtime's switches over it stay
/// exhaustive without cases that cannot happen. plan/analysis/CommKind.h maps
/// between the two, generated from the same table.
enum class CommKind : uint8_t {
#define COLLC_COMM(Enum, ...) Enum,
#include "ir/Collectives.def"
};
constexpr unsigned NumCommKinds = 0
#define COLLC_COMM(...) +1
#include "ir/Collectives.def"
    ;
/// The plan file's word, the IR's keyword: "all_reduce", "send", ...
llvm::StringRef commKindName(CommKind K);
llvm::Optional<CommKind> parseCommKind(llvm::StringRef Name);
/// Over a group that every member issues (not send/recv).
bool isCollective(CommKind K);
/// Takes a reduce op (all_reduce, reduce_scatter).
bool hasReduceOp(CommKind K);
/// Its Peers are roots (broadcast), not send/recv peers.
bool hasRoot(CommKind K);
/// Takes split sizes (all_to_all_v).
bool takesSplits(CommKind K);

/// What the ranks of one side of a comm issue it with: its tensors, its
/// buffers. An ordinary comm is one side (the Comm itself). A joint comm is
/// one collective that ranks issue through different tensors (the program
/// wrote it as rank-conditional ops, each rank issuing exactly one): its
/// first side is the Comm's own fields, the others are Comm::Joined.
struct CommSide {
  RankSet Ranks; ///< the ranks that issue the comm through this side
  std::vector<uint32_t> Inputs, Outputs; ///< tensors
  int32_t InBuffer = -1, OutBuffer = -1;
  int32_t Counts = -1; ///< all_to_all_v runtime split sizes (a tensor)
  // Not part of the digest:
  std::vector<std::string> Why; ///< decisions of the passes
  std::string Loc;              ///< line:col in Plan::Source

  uint64_t inputBytes(llvm::ArrayRef<Tensor> Tensors) const;
  uint64_t outputBytes(llvm::ArrayRef<Tensor> Tensors) const;
  bool operator==(const CommSide &) const = default;
};

/// One communication op: a collective, a send or a recv.
struct Comm : CommSide {
  CommKind Kind = CommKind::AllReduce;
  ReduceOp Reduce = ReduceOp::Sum;
  double Scale = 1.0; ///< premul_sum
  ElemType Elem = ElemType::F32;
  int32_t Group = -1; ///< -1: the world (send/recv without a group)
  /// Per world rank: the peer (world rank) of a send/recv, or the root
  /// (local rank) of a broadcast; -1 where the op does not run. Empty when
  /// the op has neither.
  std::vector<int32_t> Peers;
  std::vector<int64_t> Splits; ///< all_to_all_v static, group size squared, rows
  bool Async = false;
  /// Async, and launched only after every compute step before it on the
  /// rank has finished (bounded prefetch, passes/Schedule.cpp).
  bool Fenced = false;
  int32_t Bucket = -1;
  /// The p2p batch (an IR `p2p { }` block) a send/recv is issued in, or -1:
  /// its comms launch together (ncclGroupStart/End) and are waited for
  /// together at its end. Numbered 0, 1, ... in comm order.
  int32_t Batch = -1;
  /// A joint comm's sides after the first, in program order of their ops;
  /// empty for an ordinary comm. Sides have disjoint ranks.
  std::vector<CommSide> Joined;

  bool isJoint() const { return !Joined.empty(); }
  size_t numSides() const { return 1 + Joined.size(); }
  const CommSide &side(size_t K) const { return K ? Joined[K - 1] : *this; }
  /// The side rank \p R issues the comm through, or null where it does not
  /// issue it.
  const CommSide *sideOn(int64_t R) const;
  bool issuedOn(int64_t R) const { return sideOn(R) != nullptr; }
  bool operator==(const Comm &) const = default;
};

struct Compute {
  std::string Name; ///< without '@'
  uint32_t Stream = 0;
  int64_t CostNs = 0;
  RankSet Ranks;
  std::vector<uint32_t> Inputs, Outputs;
  std::string Loc; ///< line:col in Plan::Source; not part of the digest
  bool operator==(const Compute &) const = default;
};

enum class StepKind : uint8_t { Compute, Launch, Wait };
llvm::StringRef stepKindName(StepKind K);

/// Steps run in order on the ranks of the compute or comm they name, or on
/// the ranks they name themselves: a side of a joint comm is launched (and
/// waited for) by its own steps, and ranks may wait for one comm at
/// different points.
struct Step {
  static constexpr uint32_t AllRanks = ~0u;
  StepKind Kind;
  uint32_t Index;              ///< into Computes or Comms
  uint32_t Ranks = AllRanks;   ///< into Plan::StepRanks; AllRanks: its op's
  bool operator==(const Step &) const = default;
};

struct Plan {
  int Version = OldestFormatVersion; ///< the lowering sets requiredVersion
  std::string Program;
  int64_t World = 1;
  uint64_t Alignment = 256;
  std::vector<Group> Groups;
  std::vector<Tensor> Tensors;
  std::vector<Buffer> Buffers;
  std::vector<Compute> Computes;
  std::vector<Comm> Comms;
  std::vector<Step> Steps;
  /// The rank sets steps name (Step::Ranks), each a non-empty list.
  std::vector<RankSet> StepRanks;
  std::vector<std::string> Notes; ///< how it was compiled; not in the digest
  std::string Source;             ///< the program's file; not in the digest
  /// "xxh64:<hex>" (computeDigest): set by the lowering and by readPlan.
  std::string Digest;

  /// The ranks step \p S runs on.
  const RankSet &ranksOf(const Step &S) const {
    if (S.Ranks != Step::AllRanks)
      return StepRanks[S.Ranks];
    return S.Kind == StepKind::Compute ? Computes[S.Index].Ranks : Comms[S.Index].Ranks;
  }
  /// The side of its comm that launch or wait step \p S runs (a valid
  /// plan's steps each run within one side).
  const CommSide &sideOf(const Step &S) const;
  int64_t groupSize(const Comm &C, int64_t Rank) const;
  /// Fills the derived fields of groups (after building or reading).
  void finalize();
  /// Every field, explanations included: a plan written and read back
  /// equals the plan that was written.
  bool operator==(const Plan &) const = default;
};

/// The oldest format version that can say everything \p P says: 2 where it
/// has a joint comm or a step that names its ranks, else 1.
int requiredVersion(const Plan &P);

/// Writes the text form, digest and end marker included (computed fresh);
/// returns the digest.
std::string writePlan(const Plan &P, llvm::raw_ostream &OS);
std::string writePlan(const Plan &P);
/// The digest of what ranks must agree on: every line but notes, decisions
/// and locations.
std::string computeDigest(const Plan &P);
/// The same over plan text (up to, not including, its digest line).
std::string digestOfText(llvm::StringRef Text);

/// Reads a plan; rejects a wrong format version, a malformed or truncated
/// file, dangling references and a digest that does not match the content,
/// each with the line and what was expected; then validates it
/// (PlanValidator.h), so what it returns may be trusted.
llvm::Expected<Plan> readPlan(llvm::StringRef Text, llvm::StringRef Name = "<plan>");
llvm::Expected<Plan> readPlanFile(llvm::StringRef Path);

} // namespace collc::plan

#endif
