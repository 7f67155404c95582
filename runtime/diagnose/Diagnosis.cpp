//===- runtime/diagnose/Diagnosis.cpp - The root cause of a hang or a death ==//

#include "runtime/diagnose/Diagnosis.h"

#include "runtime/diagnose/PlanCheck.h"
#include "runtime/diagnose/RankList.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <map>
#include <set>

using namespace llvm;

namespace collc::diag {

StringRef causeName(Cause C) {
  switch (C) {
  case Cause::DeadRank:
    return "dead_rank";
  case Cause::StalledRank:
    return "stalled_rank";
  case Cause::RankBehind:
    return "rank_behind";
  case Cause::RankAhead:
    return "rank_ahead";
  case Cause::DifferentPlans:
    return "different_plans";
  case Cause::SplitSizes:
    return "split_sizes";
  case Cause::GroupTimeout:
    return "group_timeout";
  case Cause::OwnFailure:
    return "own_failure";
  case Cause::OpMismatch:
    return "op_mismatch";
  case Cause::NoFault:
    return "no_fault";
  case Cause::Undecided:
    return "undecided";
  }
  llvm_unreachable("bad cause");
}

namespace {

/// Whether member M has issued an op at Op's place, as far as its record
/// tells.
enum class Arrival {
  Arrived,    ///< it issued the op
  Passed,     ///< it issued later ops of the channel; its record is too short to say more
  Skipped,    ///< it issued later ops of the channel and, its record reaching back, not this one
  NotArrived, ///< it has not issued it (its record reaches back far enough to say)
  Unknown,    ///< no dump, or a record too short to say
};

/// The first line of an error, at most a few hundred characters.
std::string brief(StringRef Message) {
  StringRef Line = Message.split('\n').first;
  return Line.size() > 300 ? (Line.take_front(297) + "...").str() : Line.str();
}

class Analysis {
public:
  Analysis(const RecordSet &S, const DiagnoseOptions &O) : S(S), O(O) {}

  Diagnosis run() {
    index();
    findWaits();
    // In order: the first rule that finds a cause gives it.
    bool Found = differentPlans() || skipped() || splitSizes() || mismatchedOps() ||
                 ownFailures() || waits();
    (void)Found;
    describeRanks();
    noteFindings();
    return std::move(D);
  }

private:
  // --- Indexing ----------------------------------------------------------------

  void index() {
    size_t W = S.Ranks.size();
    Blocking.assign(W, -1);
    ByChannel.resize(W);
    Waits.resize(W);
    Maybe.resize(W);
    for (size_t R = 0; R != W; ++R) {
      const RankRecord *Rec = S.at(int64_t(R));
      if (!Rec)
        continue;
      for (size_t I = 0; I != Rec->Ops.size(); ++I) {
        const OpRecord &Op = Rec->Ops[I];
        if (Op.Placed)
          ByChannel[R][Op.Channel].push_back(I);
        if (Blocking[R] < 0 && Op.State != rt::CommState::Completed)
          Blocking[R] = int(I);
      }
    }
  }

  const OpRecord *blockingOp(int64_t R) const {
    const RankRecord *Rec = S.at(R);
    return Rec && Blocking[R] >= 0 ? &Rec->Ops[Blocking[R]] : nullptr;
  }

  Arrival arrival(int64_t M, const OpRecord &Op) const {
    const RankRecord *R = S.at(M);
    if (!R || !Op.Placed)
      return Arrival::Unknown;
    bool Same = false, Earlier = false, Later = false;
    auto It = ByChannel[M].find(Op.Channel);
    if (It != ByChannel[M].end())
      for (size_t I : It->second) {
        uint64_t Seq = R->Ops[I].Seq;
        Same |= Seq == Op.Seq;
        Earlier |= Seq < Op.Seq;
        Later |= Seq > Op.Seq;
      }
    if (Same)
      return Arrival::Arrived;
    // Its record reaches back before the op: from the start, to an earlier
    // op of the channel, or to before the op was issued here.
    bool Covered = R->Complete || Earlier ||
                   (!R->Ops.empty() && R->Ops.front().IssuedNs && Op.IssuedNs &&
                    R->Ops.front().IssuedNs <= Op.IssuedNs);
    if (Later)
      return Covered ? Arrival::Skipped : Arrival::Passed;
    return Covered ? Arrival::NotArrived : Arrival::Unknown;
  }

  /// Each waiting rank's waits: who has not issued its op (definitely),
  /// and who may not have (no dump, or a record too short); and who
  /// skipped it.
  void findWaits() {
    for (int64_t R = 0; R != int64_t(S.Ranks.size()); ++R) {
      const OpRecord *Op = blockingOp(R);
      if (!Op)
        continue;
      for (int64_t M : Op->Members) {
        if (M == R || M >= int64_t(S.Ranks.size()))
          continue;
        switch (arrival(M, *Op)) {
        case Arrival::NotArrived:
          Waits[R].push_back(M);
          break;
        case Arrival::Unknown:
          Maybe[R].push_back(M);
          break;
        case Arrival::Skipped:
          SkippedBy[M].push_back(R);
          break;
        case Arrival::Arrived:
        case Arrival::Passed:
          break;
        }
      }
    }
  }

  // --- Where it shows --------------------------------------------------------------

  void showAt(const OpRecord &Op) {
    D.Label = Op.Label;
    D.Op = Op.Op;
    D.Group = Op.Group;
    D.Loc = Op.Loc;
    D.Replay = Op.Replay;
    D.Step = Op.Step;
    D.Comm = Op.Comm;
  }

  std::string at(const OpRecord &Op) const {
    std::string Where = Op.Label;
    if (!Op.Loc.empty())
      Where += " (" + locText(Op.Loc) + ")";
    return Where;
  }

  std::string locText(StringRef Loc) const {
    // A collc op's line is in its plan's program; a torch frame is "file:line".
    for (const std::optional<RankRecord> &R : S.Ranks)
      if (R && R->Format == RecordFormat::Collc && !R->Source.empty())
        return R->Source + ":" + Loc.str();
    return Loc.str();
  }

  /// The ranks that wait for \p Culprit (directly, or maybe), in rank order,
  /// and the op the first of them waits at.
  std::vector<int64_t> waitersFor(int64_t Culprit, const OpRecord **At) const {
    std::vector<int64_t> Out;
    *At = nullptr;
    for (int64_t R = 0; R != int64_t(S.Ranks.size()); ++R)
      if (is_contained(Waits[R], Culprit) || is_contained(Maybe[R], Culprit)) {
        Out.push_back(R);
        if (!*At)
          *At = blockingOp(R);
      }
    return Out;
  }

  // --- The rules -----------------------------------------------------------------

  /// 1. Ranks whose plan is not the one given; without one, two plans.
  bool differentPlans() {
    std::map<std::string, std::vector<int64_t>> ByIdentity;
    for (const std::optional<RankRecord> &R : S.Ranks)
      if (R && R->Format == RecordFormat::Collc)
        ByIdentity[R->Identity].push_back(R->Rank);
    if (O.Plan) {
      std::vector<int64_t> Other;
      for (auto &[Identity, Ranks] : ByIdentity)
        if (Identity != O.Plan->Digest)
          append_range(Other, Ranks);
      llvm::sort(Other);
      if (!Other.empty())
        return planCulprits(Other);
      return missingPlanCulprit();
    }
    if (ByIdentity.size() < 2)
      return false;
    D.Class = Cause::DifferentPlans;
    std::string Sides;
    for (auto &[Identity, Ranks] : ByIdentity) {
      Sides += formatv("{0}{1} run{2} plan {3}", Sides.empty() ? "" : "; ", rankList(Ranks),
                       Ranks.size() == 1 ? "s" : "", Identity)
                   .str();
      append_range(D.Candidates, Ranks);
    }
    llvm::sort(D.Candidates);
    D.Label = "the plan digest";
    D.RootCause = "The ranks run different plans (" + Sides +
                  "). Which plan was meant is not in the records: give it (--plan) to name "
                  "the ranks that run another.";
    return true;
  }

  bool planCulprits(const std::vector<int64_t> &Other) {
    D.Class = Cause::DifferentPlans;
    D.Culprits = Other;
    const RankRecord &First = *S.at(Other.front());
    D.Label = "the digest handshake, before the first step";
    std::string Where = "They were refused at the digest handshake, before the first step.";
    if (std::optional<std::string> Departs = firstDeparture(First, *O.Plan)) {
      Where = formatv("Rank {0} ran anyway (without the digest handshake): {1}.", First.Rank,
                      *Departs)
                  .str();
      // The op the others wait at shows where the plans part.
      const OpRecord *At = nullptr;
      waitersFor(First.Rank, &At);
      if (At)
        showAt(*At);
    }
    for (int64_t R : Other) {
      const RankRecord &Rec = *S.at(R);
      D.Evidence.push_back(formatv("rank {0} runs plan {1} (@{2}, from '{3}'); the plan given "
                                   "is {4}",
                                   R, Rec.Identity, Rec.Program, Rec.Source, O.Plan->Digest)
                               .str());
    }
    D.RootCause = formatv("{0} {1} another plan than the one given ({2} instead of {3}). {4}",
                          capitalized(rankList(Other)), Other.size() == 1 ? "runs" : "run",
                          First.Identity, O.Plan->Digest, Where)
                      .str();
    return true;
  }

  /// Every dump runs the plan given, but their handshakes name one rank
  /// whose dump is missing as the one whose digest differs.
  bool missingPlanCulprit() {
    std::set<int64_t> Named;
    for (const std::optional<RankRecord> &R : S.Ranks)
      if (R && R->Failure && R->Failure->Kind == rt::ErrorKind::Mismatch &&
          StringRef(R->Failure->Message).contains("plan digests differ"))
        Named.insert(R->Failure->Peer);
    if (Named.size() != 1 || *Named.begin() < 0 || S.at(*Named.begin()))
      return false;
    int64_t Culprit = *Named.begin();
    D.Class = Cause::DifferentPlans;
    D.Culprits = {Culprit};
    D.Label = "the digest handshake, before the first step";
    D.Evidence.push_back(formatv("every dumped rank runs the plan given ({0}) and its digest "
                                 "handshake named rank {1} as the one that differs; rank {1} "
                                 "left no dump",
                                 O.Plan->Digest, Culprit)
                             .str());
    D.RootCause = formatv("Rank {0} runs another plan than the one given: every other rank's "
                          "digest handshake named it, before the first step.",
                          Culprit)
                      .str();
    return true;
  }

  /// 2. A rank that went past an op without issuing it.
  bool skipped() {
    std::map<int64_t, std::string> Why;
    std::map<int64_t, const OpRecord *> WhereSkipped;
    std::optional<SkippedLaunch> PlanSkip;
    for (auto &[M, Waiters] : SkippedBy) {
      const OpRecord *Op = blockingOp(Waiters.front());
      WhereSkipped[M] = Op;
      Why[M] = formatv("{0} {1} at {2}; rank {3} issued later ops of {4} and, its record "
                       "reaching back before it, not this one",
                       capitalized(rankList(Waiters)), Waiters.size() == 1 ? "waits" : "wait",
                       at(*Op), M, Op->Group)
                   .str();
    }
    if (O.Plan)
      for (const std::optional<RankRecord> &R : S.Ranks) {
        if (!R || R->Identity != O.Plan->Digest)
          continue;
        std::vector<SkippedLaunch> Skips = skippedLaunches(*R, *O.Plan);
        if (Skips.empty())
          continue;
        if (!PlanSkip) // the lowest rank's: ranks come in order
          PlanSkip = Skips.front();
        std::string &W = Why[R->Rank];
        W += (W.empty() ? "" : "; ") +
             formatv("rank {0}'s record goes past {1} (the plan gives it that launch between "
                     "two of its events, which follow each other)",
                     R->Rank, Skips.front().Label)
                 .str();
      }
    if (Why.empty())
      return false;
    D.Class = Cause::RankAhead;
    for (auto &[Rank, Text] : Why) {
      D.Culprits.push_back(Rank);
      D.Evidence.push_back(Text);
    }
    int64_t First = D.Culprits.front();
    std::string Op;
    if (const OpRecord *At = WhereSkipped.count(First) ? WhereSkipped[First] : nullptr) {
      showAt(*At);
      Op = at(*At);
    } else {
      D.Label = PlanSkip->Label;
      D.Step = PlanSkip->Step;
      D.Replay = PlanSkip->Replay;
      D.Comm = PlanSkip->Comm;
      Op = PlanSkip->Label;
    }
    bool One = D.Culprits.size() == 1;
    D.RootCause = formatv("{0} skipped {1}: {2} on to later ops{3}.",
                          capitalized(rankList(D.Culprits)), Op, One ? "it went" : "they went",
                          WhereSkipped.count(First)
                              ? (One ? " while its peers wait there" : " while their peers wait there")
                              : (One ? ", though the plan gives it that launch"
                                     : ", though the plan gives them those launches"))
                      .str();
    return true;
  }

  /// 3. An all_to_all_v refused for the split sizes a rank sent.
  bool splitSizes() {
    std::set<int64_t> Named;
    const OpRecord *Where = nullptr;
    for (const std::optional<RankRecord> &R : S.Ranks) {
      if (!R)
        continue;
      for (const OpRecord &Op : R->Ops)
        if (Op.Op == "all_to_all_v" && Op.State == rt::CommState::Failed &&
            Op.Error == rt::ErrorKind::InvalidArgument) {
          Named.insert(Op.Blamed >= 0 ? Op.Blamed : R->Rank);
          if (!Where)
            Where = &Op;
        }
    }
    if (Named.empty())
      return false;
    showAt(*Where);
    if (Named.size() > 1) {
      D.Class = Cause::Undecided;
      D.Candidates.assign(Named.begin(), Named.end());
      D.RootCause = formatv("The split sizes of an all_to_all_v were refused at {0}, but the "
                            "members name different ranks for them ({1}): the records do not "
                            "say which one sent sizes that do not fit.",
                            at(*Where), rankList(D.Candidates))
                        .str();
      return true;
    }
    int64_t Culprit = *Named.begin();
    D.Class = Cause::SplitSizes;
    D.Culprits = {Culprit};
    std::string Said;
    if (const RankRecord *C = S.at(Culprit))
      for (const OpRecord &Op : C->Ops)
        if (Op.Channel == Where->Channel && Op.Seq == Where->Seq && !Op.Splits.empty())
          Said = formatv(" it said it sends [{0}] rows to the members, in group order;",
                         join(map_range(Op.Splits, [](int64_t X) { return std::to_string(X); }),
                              ", "))
                     .str();
    D.Evidence.push_back(formatv("the all_to_all_v at {0} failed for its split sizes on the "
                                 "ranks that dumped, each naming rank {1}",
                                 at(*Where), Culprit)
                             .str());
    D.RootCause = formatv("Rank {0}'s all_to_all_v split sizes were refused at {1}:{2} they "
                          "do not fit the plan's rows, so the members refused the exchange.",
                          Culprit, at(*Where), Said)
                      .str();
    return true;
  }

  /// 4. Members that issued different ops at one place of a channel.
  bool mismatchedOps() {
    for (int64_t R = 0; R != int64_t(S.Ranks.size()); ++R) {
      const OpRecord *Op = blockingOp(R);
      if (!Op)
        continue;
      std::map<std::string, std::vector<int64_t>> BySignature;
      for (int64_t M : Op->Members)
        if (const OpRecord *Theirs = opAt(M, *Op))
          BySignature[Theirs->Signature].push_back(M);
      if (BySignature.size() < 2)
        continue;
      showAt(*Op);
      std::vector<int64_t> Lone;
      size_t Largest = 0;
      for (auto &[Sig, Ranks] : BySignature) {
        Largest = std::max(Largest, Ranks.size());
        if (Ranks.size() == 1)
          Lone.push_back(Ranks.front());
      }
      std::string Sides;
      for (auto &[Sig, Ranks] : BySignature)
        Sides += formatv("{0}{1} issued {2}", Sides.empty() ? "" : "; ", rankList(Ranks), Sig)
                     .str();
      D.Evidence.push_back(Sides);
      // One against all the others (at least two): the one is the odd one.
      if (BySignature.size() == 2 && Lone.size() == 1 && Largest >= 2) {
        D.Class = Cause::OpMismatch;
        D.Culprits = Lone;
        D.RootCause = formatv("Rank {0} issued another op than every other member at {1} ({2}).",
                              Lone.front(), at(*Op), Sides)
                          .str();
      } else {
        D.Class = Cause::Undecided;
        for (auto &[Sig, Ranks] : BySignature)
          append_range(D.Candidates, Ranks);
        llvm::sort(D.Candidates);
        D.RootCause = formatv("The members disagree at {0} ({1}); no side stands alone against "
                              "the others, so the records do not say which is wrong.",
                              at(*Op), Sides)
                          .str();
      }
      return true;
    }
    return false;
  }

  /// Rank \p M's op at \p Op's place, if its record has it.
  const OpRecord *opAt(int64_t M, const OpRecord &Op) const {
    const RankRecord *R = S.at(M);
    if (!R || !Op.Placed)
      return nullptr;
    auto It = ByChannel[M].find(Op.Channel);
    if (It == ByChannel[M].end())
      return nullptr;
    for (size_t I : It->second)
      if (R->Ops[I].Seq == Op.Seq)
        return &R->Ops[I];
    return nullptr;
  }

  /// 5. Ranks that failed on their own: an invalid argument or an
  /// unsupported op, blaming no peer (the compute of a model, a refusal).
  bool ownFailures() {
    std::vector<int64_t> Own;
    for (const std::optional<RankRecord> &R : S.Ranks)
      if (R && R->Failure && R->Failure->Peer < 0 &&
          (R->Failure->Kind == rt::ErrorKind::InvalidArgument ||
           R->Failure->Kind == rt::ErrorKind::Unsupported))
        Own.push_back(R->Rank);
    if (Own.empty())
      return false;
    D.Class = Cause::OwnFailure;
    D.Culprits = Own;
    const RankRecord &First = *S.at(Own.front());
    const OpRecord *Failed = nullptr;
    for (const OpRecord &Op : First.Ops)
      if (Op.State == rt::CommState::Failed)
        Failed = &Op;
    std::string Where = First.Position.empty() ? "" : ", " + First.Position;
    if (Failed) {
      showAt(*Failed);
      Where = " at " + at(*Failed);
    } else {
      D.Label = First.Position.empty() ? "outside any op" : First.Position;
    }
    for (int64_t R : Own)
      D.Evidence.push_back(
          formatv("rank {0}: {1}", R, brief(S.at(R)->Failure->Message)).str());
    D.RootCause = formatv("{0} failed on {1} own{2}: {3}",
                          capitalized(rankList(Own)), Own.size() == 1 ? "its" : "their", Where,
                          brief(First.Failure->Message))
                      .str();
    return true;
  }

  /// 6. Following the waits to the rank they end at.
  bool waits() {
    std::vector<int64_t> Blocked;
    for (int64_t R = 0; R != int64_t(S.Ranks.size()); ++R)
      if (blockingOp(R))
        Blocked.push_back(R);
    if (Blocked.empty())
      return nothingWaits();
    std::set<int64_t> Behind, Eliminated, Stuck;
    std::set<int64_t> Unknowns;
    bool Cycle = false;
    for (int64_t R : Blocked)
      follow(R, Behind, Eliminated, Stuck, Unknowns, Cycle);
    std::set<int64_t> Culprits = Behind;
    Culprits.insert(Eliminated.begin(), Eliminated.end());
    if (Culprits.size() == 1)
      return culprit(*Culprits.begin(), Blocked);
    D.Class = Cause::Undecided;
    std::set<int64_t> All = Culprits;
    if (All.empty()) {
      All.insert(Unknowns.begin(), Unknowns.end());
      All.insert(Stuck.begin(), Stuck.end());
    }
    D.Candidates.assign(All.begin(), All.end());
    const OpRecord *First = blockingOp(Blocked.front());
    showAt(*First);
    if (Culprits.size() > 1)
      D.RootCause = formatv("The waits end at more than one rank ({0}): the records do not say "
                            "which stopped first.",
                            rankList(D.Candidates))
                        .str();
    else if (!Unknowns.empty())
      D.RootCause = formatv("The waiting ranks wait for {0}, whose dumps are missing or too "
                            "short to say whether {1} arrived; none is known to have arrived "
                            "and none stands out: the records cannot name one.",
                            rankList(std::vector<int64_t>(Unknowns.begin(), Unknowns.end())),
                            Unknowns.size() == 1 ? "it" : "each")
                        .str();
    else if (Cycle)
      D.RootCause = "The ranks wait for each other in different groups (each at an op the "
                    "other has not reached): their orders differ, and the records do not say "
                    "whose is wrong.";
    else
      D.RootCause = formatv("Every member arrived at {0} and it did not complete: no rank "
                            "stands out (the transport, or a rank stopped inside the op).",
                            at(*First))
                        .str();
    return true;
  }

  /// Follows the definite waits from \p R: where they end.
  void follow(int64_t R, std::set<int64_t> &Behind, std::set<int64_t> &Eliminated,
              std::set<int64_t> &Stuck, std::set<int64_t> &Unknowns, bool &Cycle) const {
    std::set<int64_t> Seen;
    std::vector<int64_t> Work{R};
    bool Ended = false;
    while (!Work.empty()) {
      int64_t X = Work.back();
      Work.pop_back();
      if (!Seen.insert(X).second)
        continue;
      if (!blockingOp(X)) {
        // Outside any op, having failed for a peer it lost: it did not stop
        // on its own, so the wait goes on to that peer.
        if (std::optional<int64_t> P = lostPeerOf(X)) {
          Work.push_back(*P);
          continue;
        }
        Behind.insert(X); // dumped (a definite wait's target), outside any op
        Ended = true;
        continue;
      }
      if (!Waits[X].empty()) {
        append_range(Work, Waits[X]);
        continue;
      }
      Ended = true;
      if (Maybe[X].size() == 1)
        Eliminated.insert(Maybe[X].front());
      else if (Maybe[X].empty())
        Stuck.insert(X);
      Unknowns.insert(Maybe[X].begin(), Maybe[X].end());
    }
    Cycle |= !Ended;
  }

  /// The one rank the waits end at: its class, where it shows, why.
  bool culprit(int64_t C, const std::vector<int64_t> &Blocked) {
    D.Culprits = {C};
    const OpRecord *At = nullptr;
    std::vector<int64_t> Waiters = waitersFor(C, &At);
    if (!At)
      At = blockingOp(Blocked.front());
    showAt(*At);
    std::string WaitText = Waiters.empty()
                               ? formatv("{0} {1} at {2}", capitalized(rankList(Blocked)),
                                         Blocked.size() == 1 ? "waits" : "wait", at(*At))
                                     .str()
                               : waitsAtEachOp(Waiters);
    std::string State;
    if (const RankRecord *R = S.at(C)) {
      D.Class = Cause::RankBehind;
      State = formatv("Rank {0} is behind: {1}", C,
                      R->Finished ? std::string("it finished its run")
                      : !R->Position.empty()
                          ? R->Position
                          : std::string("it is outside any op (its last one completed)"))
                  .str();
      D.Evidence.push_back(formatv("rank {0}'s dump has no op waiting{1}", C,
                                   R->Ops.empty() ? ""
                                                  : ": its last, " + at(R->Ops.back()) +
                                                        ", completed")
                               .str());
    } else {
      std::vector<std::string> Lost = lostBy(C);
      D.Class = Lost.empty() ? Cause::StalledRank : Cause::DeadRank;
      State = Lost.empty()
                  ? formatv("Rank {0} stopped answering: it left no dump and its peers waited "
                            "for it in vain (it was stopped, or hangs hard)",
                            C)
                        .str()
                  : formatv("Rank {0} died: it left no dump, and {1}", C, join(Lost, ", and "))
                        .str();
      for (std::string &L : Lost)
        D.Evidence.push_back(std::move(L));
    }
    for (int64_t W : Waiters)
      if (Waits[W].empty() && Maybe[W].size() == 1)
        D.Evidence.push_back(formatv("rank {0}: every other member of {1} is known to have "
                                     "issued {2}; rank {3} is the one it waits for",
                                     W, blockingOp(W)->Group, blockingOp(W)->Label, C)
                                 .str());
    confinedToGroup(C, Blocked);
    D.RootCause = State + ". " + WaitText + ".";
    if (D.Class == Cause::GroupTimeout)
      D.RootCause = GroupText + " " + D.RootCause;
    return true;
  }

  /// "Ranks 0 and 1 wait for it at OP; rank 2 waits for it at OP2": each
  /// waiter at the op it waits at, the ops in the order of their first
  /// waiter.
  std::string waitsAtEachOp(const std::vector<int64_t> &Waiters) const {
    std::vector<std::pair<const OpRecord *, std::vector<int64_t>>> ByOp;
    for (int64_t W : Waiters) {
      const OpRecord *Op = blockingOp(W);
      auto Same = find_if(ByOp, [&](const auto &P) { return P.first->Label == Op->Label; });
      if (Same == ByOp.end())
        ByOp.push_back({Op, {W}});
      else
        Same->second.push_back(W);
    }
    std::string Out;
    for (const auto &[Op, Ranks] : ByOp)
      Out += formatv("{0}{1} {2} for it at {3}", Out.empty() ? "" : "; ",
                     Out.empty() ? capitalized(rankList(Ranks)) : rankList(Ranks),
                     Ranks.size() == 1 ? "waits" : "wait", at(*Op))
                 .str();
    return Out;
  }

  /// The peer rank \p R failed for losing, if its failure names one.
  std::optional<int64_t> lostPeerOf(int64_t R) const {
    const RankRecord *Rec = S.at(R);
    if (!Rec || !Rec->Failure || Rec->Failure->Kind != rt::ErrorKind::PeerLost)
      return std::nullopt;
    int64_t P = Rec->Failure->Peer;
    if (P < 0 || P == R || P >= int64_t(S.Ranks.size()))
      return std::nullopt;
    return P;
  }

  /// What survivors said of \p C: the connections to it they lost, or its
  /// process they saw end (a peer on the same host, between operations:
  /// the gloo driver's health check says so in these words).
  std::vector<std::string> lostBy(int64_t C) const {
    std::vector<std::string> Out;
    for (const std::optional<RankRecord> &R : S.Ranks) {
      if (!R || lostPeerOf(R->Rank) != C)
        continue;
      bool Ended = StringRef(R->Failure->Message).contains("is no longer running");
      Out.push_back(formatv("rank {0} {1}", R->Rank,
                            Ended ? "saw its process end" : "lost its connection to it")
                        .str());
    }
    return Out;
  }

  /// The waits are all in one group and ranks outside it went on: a
  /// timeout confined to that group.
  void confinedToGroup(int64_t C, const std::vector<int64_t> &Blocked) {
    std::set<std::string> Channels;
    for (int64_t R : Blocked)
      Channels.insert(blockingOp(R)->Channel);
    if (Channels.size() != 1)
      return;
    const OpRecord &Op = *blockingOp(Blocked.front());
    if (Op.PointToPoint || !is_contained(Op.Members, C) ||
        Op.Members.size() >= S.Ranks.size())
      return;
    std::vector<int64_t> WentOn;
    for (int64_t R = 0; R != int64_t(S.Ranks.size()); ++R)
      if (S.at(R) && !blockingOp(R) && !is_contained(Op.Members, R))
        WentOn.push_back(R);
    if (WentOn.empty())
      return;
    D.Class = Cause::GroupTimeout;
    GroupText = formatv("A timeout confined to {0} (ranks {1}): {2} outside it went on.",
                        Op.Group, rankRange(Op.Members), rankList(WentOn))
                    .str();
    D.Evidence.push_back(formatv("{0}, outside {1}, wait{2} for nothing", rankList(WentOn),
                                 Op.Group, WentOn.size() == 1 ? "s" : "")
                             .str());
  }

  bool nothingWaits() {
    std::vector<int64_t> Failed;
    for (const std::optional<RankRecord> &R : S.Ranks)
      if (R && R->Failure)
        Failed.push_back(R->Rank);
    if (Failed.empty()) {
      D.Class = Cause::NoFault;
      D.RootCause = "No rank waits and none failed: every op of every dumped rank completed.";
      return true;
    }
    if (deadOutsideOps(Failed))
      return true;
    D.Class = Cause::Undecided;
    D.Candidates = Failed;
    D.RootCause = formatv("{0} failed, but no rank waits at an op: the records hold no wait "
                          "that leads to a culprit (see each rank's error).",
                          capitalized(rankList(Failed)))
                      .str();
    return true;
  }

  /// No rank waits, and every failed one (\p Failed) failed for losing
  /// the same peer, which left no dump: the survivors found it gone between
  /// their ops (its process ended), so it died.
  bool deadOutsideOps(const std::vector<int64_t> &Failed) {
    std::optional<int64_t> Dead;
    for (int64_t R : Failed) {
      std::optional<int64_t> P = lostPeerOf(R);
      if (!P || (Dead && *Dead != *P))
        return false;
      Dead = P;
    }
    if (!Dead || S.at(*Dead))
      return false;
    D.Class = Cause::DeadRank;
    D.Culprits = {*Dead};
    std::vector<std::string> Lost = lostBy(*Dead);
    const RankRecord &First = *S.at(Failed.front());
    D.Label = First.Position;
    D.RootCause = formatv("Rank {0} died: it left no dump, and {1}. No rank waits at an op: "
                          "{2} found it gone outside any op (rank {3}: {4}).",
                          *Dead, join(Lost, ", and "), rankList(Failed), First.Rank,
                          First.Position.empty() ? std::string("outside any op")
                                                 : First.Position)
                      .str();
    for (std::string &L : Lost)
      D.Evidence.push_back(std::move(L));
    return true;
  }

  // --- Each rank, and what the set lacks ------------------------------------

  void describeRanks() {
    for (int64_t R = 0; R != int64_t(S.Ranks.size()); ++R) {
      RankView V;
      V.Rank = R;
      const RankRecord *Rec = S.at(R);
      if (!Rec) {
        V.State = "no dump";
        D.Ranks.push_back(std::move(V));
        continue;
      }
      V.Dumped = true;
      V.File = Rec->File;
      V.WaitsFor = Waits[R];
      V.MaybeWaitsFor = Maybe[R];
      if (Rec->Failure)
        V.Error = brief(Rec->Failure->Message);
      if (const OpRecord *Op = blockingOp(R)) {
        V.State = formatv("{0} at {1}", Op->State == rt::CommState::Failed ? "failed" : "waits",
                          at(*Op))
                      .str();
        if (!V.WaitsFor.empty())
          V.State += " for " + rankList(V.WaitsFor);
        if (!V.MaybeWaitsFor.empty())
          V.State += (V.WaitsFor.empty() ? " for " : ", and maybe ") +
                     rankList(V.MaybeWaitsFor) + " (unknown)";
      } else if (Rec->Finished) {
        V.State = "finished its run";
      } else if (!Rec->Position.empty()) {
        V.State = Rec->Position;
      } else if (!Rec->Ops.empty()) {
        V.State = "outside any op; its last, " + at(Rec->Ops.back()) + ", completed";
      } else {
        V.State = "no op recorded";
      }
      D.Ranks.push_back(std::move(V));
    }
  }

  void noteFindings() {
    std::vector<int64_t> Missing;
    for (int64_t R = 0; R != int64_t(S.Ranks.size()); ++R)
      if (!S.at(R))
        Missing.push_back(R);
    if (!Missing.empty())
      D.Findings.push_back(formatv("no dump from {0}: {1} died, was stopped, or dumped "
                                   "elsewhere (a missing dump is itself a sign)",
                                   rankList(Missing), Missing.size() == 1 ? "it" : "each")
                               .str());
    for (const std::string &P : S.Problems)
      D.Findings.push_back(P);
    for (const std::optional<RankRecord> &R : S.Ranks)
      if (R && !R->Complete)
        D.Findings.push_back(formatv("rank {0}'s record lost its oldest events (its ring is "
                                     "full): what came before its first, {1}, is unknown",
                                     R->Rank, R->Ops.empty() ? "" : R->Ops.front().Label)
                                 .str());
  }

  const RecordSet &S;
  const DiagnoseOptions &O;
  Diagnosis D;
  std::vector<int> Blocking;
  /// Per rank: channel -> its ops there (indices into Ops).
  std::vector<std::map<std::string, std::vector<size_t>>> ByChannel;
  std::vector<std::vector<int64_t>> Waits, Maybe;
  /// Rank -> the waiting ranks whose op it went past without issuing.
  std::map<int64_t, std::vector<int64_t>> SkippedBy;
  std::string GroupText;
};

} // namespace

Diagnosis diagnose(const RecordSet &S, const DiagnoseOptions &O) { return Analysis(S, O).run(); }

} // namespace collc::diag
