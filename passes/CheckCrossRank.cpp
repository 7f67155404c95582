//===- passes/CheckCrossRank.cpp - Every rank agrees -----------------------===//
//
// Requires: a verified program. Ensures nothing new; it only checks.
// Across ranks: specializes the program for every rank and runs all ranks'
// communication together with blocking (rendezvous) semantics:
//  - a collective completes when every member of its subgroup reaches its
//    next collective in that subgroup; those must agree on kind, reduce op,
//    element types, element counts and root, and must be one op: the plan
//    binds an op's tensors on every member that issues it, so two ops
//    (written with complementary `when`s) that would pair only by their
//    position are refused rather than lowered to a plan that cannot run
//    (passes reorder ops, which would re-pair them; issue 13);
//  - a send matches the peer's recv from this rank in the same group (in
//    the order each side posts them; a send in @g and a recv in the world
//    never meet, as on every backend's communicators); the two must move
//    the same number of elements of the same type. A blocking send/recv
//    waits for its match where it stands, an async one at its `wait`, a
//    `p2p { }` block's ops at the block's end;
//  - if ranks remain blocked, the wait-for graph is searched for a cycle
//    (printed rank by rank) or for a rank waiting on one that has finished.
// The first disagreement is reported with an error at one op and a note at
// the other, naming the ranks and the group.
//
// The run itself is ir/RankSimulation over the program's schedule
// (ir/ProgramSchedule.h); this pass only judges what it sees.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "ir/ProgramSchedule.h"

#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc {

namespace {

std::string ordinal(uint64_t N) {
  const char *Suffix = "th";
  if (N % 100 < 11 || N % 100 > 13) {
    if (N % 10 == 1)
      Suffix = "st";
    else if (N % 10 == 2)
      Suffix = "nd";
    else if (N % 10 == 3)
      Suffix = "rd";
  }
  return (Twine(N) + Suffix).str();
}

class CrossRankChecker : public RankSimulationVisitor {
public:
  CrossRankChecker(const Program &P, DiagnosticEngine &D)
      : P(P), Diags(D), Masks(P), Schedule(P, Masks), Sim(Schedule) {}
  bool run();

  bool collective(GroupId G, ArrayRef<int32_t> Members, ArrayRef<OpId> Ops, uint64_t Seq) override;
  bool pointToPoint(int64_t Sender, OpId Send, int64_t Receiver, OpId Recv) override;

private:
  bool reportStall();
  /// Reports a stalled send and recv that name each other's ranks but
  /// different groups; true when it found one.
  bool reportCrossGroupPair();
  std::string describe(OpId I) const;
  /// describe() with the results it defines: "%r = all_reduce sum %a : f32[16]".
  std::string describeDef(OpId I) const;
  std::string describeWait(int64_t R) const;
  std::string groupDesc(GroupId G, ArrayRef<int32_t> Members) const;
  /// The root of \p O on \p R as a local rank, or -1.
  int64_t rootOn(const Op &O, int64_t R) const;
  /// What differs between two collectives issued together, or "".
  std::string mismatch(const Op &A, int64_t RA, const Op &B, int64_t RB) const;

  const Program &P;
  DiagnosticEngine &Diags;
  RankMasks Masks;
  ProgramSchedule Schedule;
  RankSimulation Sim;
};

int64_t CrossRankChecker::rootOn(const Op &O, int64_t R) const {
  if (!O.Peer)
    return -1;
  Expected<int64_t> V = O.Peer->evaluate(R, P.worldSize());
  if (!V) {
    consumeError(V.takeError());
    return -1;
  }
  return *V;
}

std::string CrossRankChecker::describe(OpId I) const {
  const Op &O = P.ops()[I];
  std::string S = opKindName(O.Kind).str();
  if (hasReduceOp(O.Kind))
    S += " " + reduceOpName(O.Reduce).str();
  ArrayRef<ValueId> Data = O.dataOperands();
  if (O.Kind == OpKind::Recv)
    Data = O.Results;
  for (size_t K = 0; K != Data.size(); ++K)
    S += (K ? ", %" : " %") + P.value(Data[K]).Name.str() + " : " + P.value(Data[K]).Type.str();
  return S;
}

std::string CrossRankChecker::describeDef(OpId I) const {
  const Op &O = P.ops()[I];
  std::string S;
  if (O.Kind != OpKind::Recv)
    for (size_t K = 0; K != O.Results.size(); ++K)
      S += (K ? ", %" : "%") + P.value(O.Results[K]).Name.str() +
           (K + 1 == O.Results.size() ? " = " : "");
  return S + describe(I);
}

std::string CrossRankChecker::groupDesc(GroupId G, ArrayRef<int32_t> Members) const {
  const Group &Grp = P.group(G);
  std::string S = "@" + Grp.Name.str();
  if (Grp.numSubgroups() > 1 || int64_t(Members.size()) != P.worldSize()) {
    S += " (ranks ";
    for (size_t I = 0; I != Members.size() && I < 16; ++I)
      S += (I ? ", " : "") + std::to_string(Members[I]);
    if (Members.size() > 16)
      S += ", ...";
    S += ")";
  }
  return S;
}

std::string CrossRankChecker::mismatch(const Op &A, int64_t RA, const Op &B, int64_t RB) const {
  if (A.Kind != B.Kind)
    return "kind";
  if (hasReduceOp(A.Kind) && (A.Reduce != B.Reduce || (takesScale(A.Reduce) && A.Scale != B.Scale)))
    return "reduce op";
  ArrayRef<ValueId> DA = A.dataOperands(), DB = B.dataOperands();
  if (DA.size() != DB.size())
    return "number of tensors";
  for (size_t I = 0; I != DA.size(); ++I) {
    const TensorType &TA = P.value(DA[I]).Type, &TB = P.value(DB[I]).Type;
    if (TA.Elem != TB.Elem)
      return "element type";
    if (TA.numElements() != TB.numElements())
      return "element count";
  }
  if (A.Kind == OpKind::Broadcast && rootOn(A, RA) != rootOn(B, RB))
    return formatv("root ({0} on rank {1}, {2} on rank {3})", rootOn(A, RA), RA, rootOn(B, RB), RB)
        .str();
  if (A.Kind == OpKind::AllToAllV) {
    if (A.HasCountsOperand != B.HasCountsOperand || A.Splits != B.Splits)
      return "split sizes";
    for (size_t I = 0; I != A.Results.size(); ++I)
      if (P.value(A.Results[I]).Type.numElements() != P.value(B.Results[I]).Type.numElements())
        return "receive capacity";
  }
  return "";
}

bool CrossRankChecker::collective(GroupId G, ArrayRef<int32_t> Members, ArrayRef<OpId> Ops,
                                  uint64_t Seq) {
  // Compare everyone with the lowest rank.
  int64_t Ref = Members.front();
  const Op &RefOp = P.ops()[Ops.front()];
  bool RankDependent = RefOp.Peer && RefOp.Peer->dependsOnRank();
  for (size_t I = 1; I != Members.size(); ++I) {
    if (Ops[I] == Ops.front() && !RankDependent)
      continue;
    const Op &Other = P.ops()[Ops[I]];
    std::string What = mismatch(RefOp, Ref, Other, Members[I]);
    if (What.empty())
      continue;
    Diags.error(RefOp.Loc,
                formatv("ranks {0} and {1} of {2} disagree on the {3} of their {4} collective "
                        "in the group: rank {0} issues {5}",
                        Ref, Members[I], groupDesc(G, Members), What, ordinal(Seq),
                        describe(Ops.front())));
    Diags.note(Other.Loc, formatv("rank {0} issues {1} here", Members[I], describe(Ops[I])));
    return false;
  }
  // They agree; now they must be one op. Each member's own op would be
  // lowered to a comm whose tensors are bound on its ranks only, and the
  // passes keep pairings by op, not by position.
  for (size_t I = 1; I != Members.size(); ++I) {
    if (Ops[I] == Ops.front())
      continue;
    Diags.error(RefOp.Loc,
                formatv("ranks {0} and {1} of {2} issue different ops as their {3} collective "
                        "in the group, which a plan cannot pair: rank {0} issues {4}; write one "
                        "op that every member issues",
                        Ref, Members[I], groupDesc(G, Members), ordinal(Seq),
                        describeDef(Ops.front())));
    Diags.note(P.ops()[Ops[I]].Loc,
               formatv("rank {0} issues {1} here", Members[I], describeDef(Ops[I])));
    return false;
  }
  return true;
}

bool CrossRankChecker::pointToPoint(int64_t S, OpId SendI, int64_t R, OpId RecvI) {
  const Op &SendOp = P.ops()[SendI];
  const Op &RecvOp = P.ops()[RecvI];
  const TensorType &Sent = P.value(SendOp.Operands[0]).Type;
  const TensorType &Got = P.value(RecvOp.Results[0]).Type;
  if (Sent.Elem == Got.Elem && Sent.numElements() == Got.numElements())
    return true;
  Diags.error(SendOp.Loc, formatv("rank {0} sends {1} to rank {2}, but rank {2} receives {3}", S,
                                  Sent.str(), R, Got.str()));
  Diags.note(RecvOp.Loc, formatv("rank {0} receives from rank {1} here", R, S));
  return false;
}

std::string CrossRankChecker::describeWait(int64_t R) const {
  const RankSimulation::RankState &St = Sim.state(R);
  switch (St.W) {
  case RankSimulation::Wait::Send:
  case RankSimulation::Wait::Recv: {
    std::string What = St.W == RankSimulation::Wait::Send ? "send to" : "recv from";
    What += " rank " + std::to_string(St.Peer);
    if (St.Group != InvalidId)
      What += " in @" + P.group(St.Group).Name.str();
    if (St.At == St.PC && P.ops()[St.PC].Batch == InvalidId)
      return formatv("rank {0} waits in {1} ({2})", R, What, describe(St.At));
    // Posted earlier: awaited at a wait or at the end of a p2p block.
    const char *Where = P.ops()[St.PC].Kind == OpKind::Wait ? "at its wait" : "at the end of its p2p block";
    return formatv("rank {0} waits {1} for its {2} ({3})", R, Where, What, describe(St.At));
  }
  case RankSimulation::Wait::Collective:
    return formatv("rank {0} waits in {1} in {2}", R, describe(St.PC),
                   groupDesc(Sim.groupOfFlat(St.Flat), Sim.members(St.Flat)));
  default:
    return formatv("rank {0} has finished", R);
  }
}

bool CrossRankChecker::reportCrossGroupPair() {
  int64_t R = Sim.findCrossGroupPair();
  if (R < 0)
    return false;
  const RankSimulation::RankState &St = Sim.state(R);
  const RankSimulation::RankState &Q = Sim.state(St.Peer);
  auto In = [&](GroupId G) {
    return G == InvalidId ? std::string("the world") : "@" + P.group(G).Name.str();
  };
  const char *Kind = St.W == RankSimulation::Wait::Send ? "send to" : "recv from";
  const char *QKind = Q.W == RankSimulation::Wait::Send ? "send to" : "recv from";
  Diags.error(P.ops()[St.At].Loc,
              formatv("rank {0}'s {1} rank {2} in {3} cannot match rank {2}'s {4} rank {0} in "
                      "{5}: sends and recvs match only within one group (each group has its "
                      "own communicator); name the same group on both sides",
                      R, Kind, St.Peer, In(St.Group), QKind, In(Q.Group)));
  Diags.note(P.ops()[Q.At].Loc, formatv("rank {0} issues {1} rank {2} in {3} here ({4})",
                                        St.Peer, QKind, R, In(Q.Group), describe(Q.At)));
  return true;
}

bool CrossRankChecker::reportStall() {
  // The likeliest cause first: a send and a recv that would pair by their
  // ranks but name different groups.
  if (reportCrossGroupPair())
    return false;
  std::vector<int64_t> Cycle = Sim.findWaitCycle();
  if (!Cycle.empty()) {
    Diags.error(P.ops()[Sim.state(Cycle.front()).PC].Loc,
                formatv("deadlock: ranks wait for each other in a cycle {0}",
                        RankSimulation::cycleText(Cycle)));
    for (int64_t R : Cycle)
      Diags.note(P.ops()[Sim.state(R).PC].Loc, describeWait(R));
    return false;
  }
  // No cycle: someone waits for a rank that has finished, or for no one.
  for (int64_t R = 0; R != P.worldSize(); ++R) {
    const RankSimulation::RankState &St = Sim.state(R);
    if (St.W == RankSimulation::Wait::Done)
      continue;
    if ((St.W == RankSimulation::Wait::Send || St.W == RankSimulation::Wait::Recv) && St.Peer < 0) {
      Diags.error(P.ops()[St.At].Loc,
                  formatv("{0} on rank {1} has no valid peer (run verify first)",
                          opKindName(P.ops()[St.At].Kind), R));
      return false;
    }
    SmallVector<int64_t, 4> Next;
    Sim.waitsFor(R, Next);
    for (int64_t Q : Next) {
      if (Sim.state(Q).W != RankSimulation::Wait::Done)
        continue;
      const char *Missing = St.W == RankSimulation::Wait::Send   ? "a matching recv"
                            : St.W == RankSimulation::Wait::Recv ? "a matching send"
                                                                 : "this collective";
      Diags.error(P.ops()[St.PC].Loc,
                  formatv("{0}, but rank {1} finishes its program without issuing {2}",
                          describeWait(R), Q, Missing));
      return false;
    }
  }
  Diags.error({}, "internal error: the cross-rank simulation stalled without a cause");
  return false;
}

bool CrossRankChecker::run() {
  switch (Sim.run(*this)) {
  case RankSimulation::Outcome::Finished:
    return true;
  case RankSimulation::Outcome::Stopped:
    return false;
  case RankSimulation::Outcome::Stalled:
    return reportStall();
  }
  llvm_unreachable("bad outcome");
}

class CheckCrossRankPass : public Pass {
public:
  StringRef name() const override { return "check-cross-rank"; }
  Expected<bool> run(Program &P, PassContext &Ctx) override {
    unsigned Before = Ctx.Diags.numErrors();
    CrossRankChecker Checker(P, Ctx.Diags);
    if (!Checker.run() || Ctx.Diags.numErrors() != Before)
      return Ctx.Diags.takeError("check-cross-rank");
    return false;
  }
};

} // namespace

Expected<std::unique_ptr<Pass>> createCheckCrossRankPass(PassOptions &Opts) {
  if (Error E = Opts.finish())
    return E;
  return std::make_unique<CheckCrossRankPass>();
}

} // namespace collc
