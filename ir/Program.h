//===- ir/Program.h - The collc IR -------------------------------*- C++ -*-===//
//
// A Program is one model's communication as seen by every rank: a world
// size, named groups of ranks, and a straight-line list of ops over named
// tensor values. Compute ops are opaque producers and consumers with a cost
// and a stream; collective ops move and reduce tensors within a group.
//
// One program describes all ranks. An op runs on rank r when its `when`
// predicate holds at r and r is a member of the op's group; otherwise it is
// skipped there, like torch.distributed on a rank outside the group, and
// its results are undefined on r.
//
// Ops live in program order in one vector; values are referenced by index.
// Names, expressions and strings live in the program's arena.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_IR_PROGRAM_H
#define COLLC_IR_PROGRAM_H

#include "ir/Ids.h"
#include "ir/OpKind.h"
#include "ir/RankExpr.h"
#include "ir/Types.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Allocator.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/SMLoc.h"
#include "llvm/Support/StringSaver.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace llvm {
class SourceMgr;
}

namespace collc {

/// A group's resolved membership: per world rank its subgroup and local
/// rank, and each subgroup's world ranks. World-sized, so a group has them
/// only once a reader asks a question its definition cannot answer cheaply.
struct GroupTables {
  std::vector<int32_t> SubgroupOf;             ///< per world rank; -1 outside every subgroup
  std::vector<int32_t> LocalRank;              ///< per world rank; -1 outside
  std::vector<std::vector<int32_t>> Subgroups; ///< world ranks in local-rank order

  /// What the tables of one group take at \p World ranks: three int32 per
  /// rank when the group covers the world (the bound every budget uses).
  static uint64_t bytesFor(int64_t World) { return uint64_t(World) * 3 * sizeof(int32_t); }
};

/// A set of ranks that communicate together. `world` is every rank; an
/// explicit `ranks [..]` list is one subgroup; `split(color, key)` puts the
/// ranks of equal non-negative color into one subgroup ordered by key (ties
/// by world rank), and ranks of negative color in none.
///
/// A group costs its definition until a reader asks about its ranks: the
/// world answers every per-rank question from the rank itself, and the
/// tables (GroupTables) of the others are built on first use, once, and
/// shared by the program's clones. So a program pays world-sized memory only
/// for the groups its ops use (see checkGroupTableBudget).
struct Group {
  enum Kind : uint8_t { World, Ranks, Split };
  Kind K = World;
  llvm::StringRef Name;
  llvm::SMLoc Loc;
  llvm::SmallVector<int64_t, 8> ExplicitRanks; // K == Ranks, as written
  const RankExpr *Color = nullptr;             // K == Split
  const RankExpr *Key = nullptr;               // K == Split
  int64_t WorldSize = 1;                       ///< the program's, set by addGroup

  /// The subgroup \p Rank is in; -1 outside every subgroup.
  int32_t subgroupOf(int64_t Rank) const {
    return K == World ? 0 : tables().SubgroupOf[Rank];
  }
  /// \p Rank's position in its subgroup; -1 outside.
  int32_t localRank(int64_t Rank) const {
    return K == World ? int32_t(Rank) : tables().LocalRank[Rank];
  }
  bool isMember(int64_t Rank) const { return subgroupOf(Rank) >= 0; }
  /// Size of \p Rank's subgroup (0 outside every subgroup).
  int64_t sizeOn(int64_t Rank) const {
    if (K == World)
      return WorldSize;
    int32_t S = subgroupOf(Rank);
    return S < 0 ? 0 : int64_t(tables().Subgroups[S].size());
  }
  size_t numSubgroups() const { return K == Split ? tables().Subgroups.size() : 1; }
  /// Every subgroup's world ranks in local-rank order (builds the tables).
  llvm::ArrayRef<std::vector<int32_t>> subgroups() const { return tables().Subgroups; }
  /// Per world rank, its subgroup or -1 (builds the tables).
  llvm::ArrayRef<int32_t> subgroupOfTable() const { return tables().SubgroupOf; }
  /// The size every subgroup has, or -1 when subgroups differ in size.
  int64_t uniformSize() const;
  /// Every world rank is in some subgroup.
  bool coversWorld() const;
  /// The members of \p Rank's subgroup (empty outside; builds the tables).
  llvm::ArrayRef<int32_t> membersOf(int64_t Rank) const {
    int32_t S = subgroupOf(Rank);
    if (S < 0)
      return {};
    return tables().Subgroups[S];
  }
  /// Whether the tables were built (tests of the lazy path).
  bool hasTables() const;

private:
  friend class Program;
  struct LazyTables;
  const GroupTables &tables() const;
  /// Built at most once; shared with the copies of this group in clones.
  std::shared_ptr<LazyTables> Lazy;
};

struct Value {
  llvm::StringRef Name; ///< without the '%'
  TensorType Type;
  OpId Def = InvalidId;
  /// The completion token of a `send async`: no data (its Type is u8[0]),
  /// only ever waited for.
  bool IsToken = false;
};

/// The type a token value carries: no elements, so no bytes.
inline TensorType tokenType() { return TensorType(ElemType::U8, {0}); }

/// An attribute attached by a pass or a user: `{bucket = 3, why = "..."}`.
struct Attribute {
  llvm::StringRef Key;
  bool IsString = false;
  int64_t Int = 0;
  llvm::StringRef Str;
};

struct Op {
  OpKind Kind = OpKind::Compute;
  bool Async = false;            ///< completes at a later `wait`
  /// An async launch that starts only once every compute issued before it
  /// on the rank has finished (`fenced`; the schedule's bounded prefetch).
  bool Fenced = false;
  bool HasCountsOperand = false; ///< all_to_all_v whose last operand holds split sizes
  /// The `p2p { ... }` block the op is issued in (send/recv only): its ops
  /// are posted together and complete together at the block's end, as
  /// ncclGroupStart/End or batch_isend_irecv. Contiguous in program order;
  /// InvalidId outside every block.
  uint32_t Batch = InvalidId;
  ReduceOp Reduce = ReduceOp::Sum;
  uint32_t Stream = 0; ///< compute stream
  GroupId Group = InvalidId;
  llvm::SMLoc Loc;
  const RankExpr *When = nullptr; ///< null: every rank
  const RankExpr *Peer = nullptr; ///< send/recv peer, broadcast root (group-local)
  double Scale = 1.0;             ///< premul_sum factor
  int64_t CostNs = 0;             ///< compute cost estimate
  llvm::StringRef Callee;         ///< compute name, without '@'
  llvm::SmallVector<ValueId, 1> Results;
  llvm::SmallVector<ValueId, 2> Operands;
  /// all_to_all_v static split sizes, group size x group size, row-major
  /// [sender][receiver], in rows of dimension 0.
  std::vector<int64_t> Splits;
  llvm::SmallVector<Attribute, 0> Attrs;

  /// Operands carrying tensor data (all but an all_to_all_v counts operand).
  llvm::ArrayRef<ValueId> dataOperands() const {
    return llvm::ArrayRef<ValueId>(Operands).drop_back(HasCountsOperand ? 1 : 0);
  }
  ValueId countsOperand() const { return HasCountsOperand ? Operands.back() : InvalidId; }
  const Attribute *getAttr(llvm::StringRef Key) const;
  /// `joint = N`: one of the rank-conditional ops that together are one
  /// collective (each member of the group issues exactly one of them), as
  /// check-cross-rank proved and recorded; passes keep such an op where it
  /// stands and never merge it; the lowering makes the set one plan comm.
  bool isJoint() const { return !Attrs.empty() && getAttr(JointAttr); }
  static constexpr llvm::StringLiteral JointAttr = "joint";
  void setAttr(llvm::StringRef Key, int64_t V);
  /// \p V must live as long as the op (use Program::save).
  void setAttr(llvm::StringRef Key, llvm::StringRef V);
};

class Program {
public:
  explicit Program(llvm::StringRef Name = "main", int64_t WorldSize = 1);
  Program(const Program &) = delete;
  Program &operator=(const Program &) = delete;

  /// A deep copy that owns everything it refers to: groups with their
  /// resolved membership, values, ops and attributes, with names, strings
  /// and rank expressions re-created in the copy's arena (shared
  /// subexpressions stay shared). Locations and the SourceMgr pointer are
  /// kept, so the copy's diagnostics still point into the same source
  /// (which must outlive the copy for them to render).
  std::unique_ptr<Program> clone() const;

  llvm::StringRef name() const { return Name; }
  void setName(llvm::StringRef N) { Name = save(N); }
  int64_t worldSize() const { return WorldSize; }

  /// The source the op locations point into, if the program was parsed.
  const llvm::SourceMgr *sourceMgr() const { return SrcMgr; }
  void setSourceMgr(const llvm::SourceMgr *SM) { SrcMgr = SM; }

  // Groups.
  /// Adds a group after checking its definition on every rank (its tables
  /// are built later, on first use). Fails on a duplicate name, a rank out
  /// of range, a repeated rank, or a color/key that cannot be evaluated on
  /// some rank.
  llvm::Expected<GroupId> addGroup(Group G);
  llvm::ArrayRef<Group> groups() const { return Groups; }
  const Group &group(GroupId Id) const { return Groups[Id]; }
  GroupId lookupGroup(llvm::StringRef Name) const;

  // Values.
  /// Fails on a duplicate name.
  llvm::Expected<ValueId> addValue(llvm::StringRef Name, TensorType Type);
  const Value &value(ValueId Id) const { return Values[Id]; }
  Value &value(ValueId Id) { return Values[Id]; }
  size_t numValues() const { return Values.size(); }
  ValueId lookupValue(llvm::StringRef Name) const;

  // Ops, in program order.
  std::vector<Op> &ops() { return Ops; }
  const std::vector<Op> &ops() const { return Ops; }
  /// Appends \p O and records it as the definer of its results.
  OpId addOp(Op O);
  /// Rewrites every value's defining op after ops were reordered, inserted
  /// or removed.
  void recomputeDefs();

  // Arena.
  llvm::StringRef save(llvm::StringRef S) { return Saver.save(S); }
  const RankExpr *makeExpr(RankExpr::Kind K, llvm::SMLoc Loc, int64_t Value = 0,
                           const RankExpr *L = nullptr, const RankExpr *R = nullptr);
  const RankExpr *makeConst(int64_t V, llvm::SMLoc Loc = {}) {
    return makeExpr(RankExpr::Const, Loc, V);
  }

  /// Reserve space for about \p N ops (parsers of large files).
  void reserve(size_t NumOps);

private:
  llvm::BumpPtrAllocator Arena;
  llvm::StringSaver Saver{Arena};
  llvm::StringRef Name;
  int64_t WorldSize;
  const llvm::SourceMgr *SrcMgr = nullptr;
  std::vector<Group> Groups;
  std::vector<Value> Values;
  std::vector<Op> Ops;
  llvm::StringMap<GroupId> GroupNames;
  llvm::StringMap<ValueId> ValueNames;
};

/// Per group, whether some op names it: the groups whose tables readers
/// of the program's ops may build.
std::vector<bool> groupsUsedByOps(const Program &P);

/// Largest size of the group tables (GroupTables) one program may build.
constexpr uint64_t MaxGroupTableBytes = uint64_t(1) << 30;

/// What a reader is about to build tables for: the groups ops use (every
/// check and pass), or every group (lowering, which lists them all).
enum class GroupsNeeded { UsedByOps, All };

/// A located refusal (the message names the world, the number of groups,
/// the bytes and the limit) when the tables of the groups \p Which would
/// take more than MaxGroupTableBytes; none when they fit. Readers call it
/// before they ask the groups anything, so a hostile program is refused
/// instead of exhausting memory.
struct GroupBudgetExcess {
  llvm::SMLoc Loc;
  std::string Msg;
};
std::optional<GroupBudgetExcess> checkGroupTableBudget(const Program &P, GroupsNeeded Which);

/// Whether \p O runs on \p Rank: its predicate holds and Rank is in its
/// group. Fails when the predicate cannot be evaluated there.
llvm::Expected<bool> runsOn(const Program &P, const Op &O, int64_t Rank);

} // namespace collc

#endif // COLLC_IR_PROGRAM_H
