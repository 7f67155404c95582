//===- plan/PlanDiff.cpp - What differs between two plans ------------===//
//
// Comms are matched across the plans by the first tensor they move (names
// are stable across compilations of one program), so a tensor that changes
// buckets reads as "moved" rather than as one comm removed and one added.
//
//===----------------------------------------------------------------------===//

#include "plan/PlanDiff.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

using namespace llvm;

namespace collc {

namespace {

std::string commName(const plan::Plan &P, uint32_t I) {
  const plan::Comm &C = P.Comms[I];
  std::string S = formatv("#{0} {1}", I, commKindName(C.Kind)).str();
  if (C.Bucket >= 0)
    S += formatv(" (bucket {0})", C.Bucket).str();
  return S;
}

/// The tensors a comm moves (its outputs for a recv), side by side.
std::vector<uint32_t> moved(const plan::Comm &C) {
  std::vector<uint32_t> Out;
  for (size_t K = 0; K != C.numSides(); ++K) {
    const plan::CommSide &S = C.side(K);
    const std::vector<uint32_t> &Ts = S.Inputs.empty() ? S.Outputs : S.Inputs;
    Out.insert(Out.end(), Ts.begin(), Ts.end());
  }
  return Out;
}

/// Launch position of each comm (a joint comm's first side's).
std::vector<size_t> launchOrder(const plan::Plan &P) {
  constexpr size_t Unset = ~size_t(0);
  std::vector<size_t> Pos(P.Comms.size(), Unset);
  size_t K = 0;
  for (const plan::Step &S : P.Steps)
    if (S.Kind == plan::StepKind::Launch && Pos[S.Index] == Unset)
      Pos[S.Index] = K++;
  return Pos;
}

/// One comparison, section by section, in the order the report reads.
class PlanDiff {
public:
  PlanDiff(const plan::Plan &A, const plan::Plan &B) : A(A), B(B) {}

  std::vector<std::string> run() {
    if (A.Digest == B.Digest)
      return {};
    Out.push_back(formatv("digest differs: {0} vs {1}", A.Digest, B.Digest));
    headers();
    groups();
    matchComms();
    tensorMoves();
    commChanges();
    orderChanges();
    totals();
    if (Out.size() == 1)
      Out.push_back("the plans differ in detail only (offsets, peers, compute ops or costs); "
                    "compare `collc dump --format json` of both");
    return std::move(Out);
  }

private:
  void headers() {
    if (A.Program != B.Program)
      Out.push_back(formatv("program: @{0} vs @{1}", A.Program, B.Program));
    if (A.World != B.World)
      Out.push_back(formatv("world size: {0} vs {1}", A.World, B.World));
    if (A.Alignment != B.Alignment)
      Out.push_back(formatv("alignment: {0} vs {1}", A.Alignment, B.Alignment));
  }

  void groups() {
    StringMap<const plan::Group *> GroupsB;
    for (const plan::Group &G : B.Groups)
      GroupsB[G.Name] = &G;
    for (const plan::Group &G : A.Groups) {
      auto It = GroupsB.find(G.Name);
      if (It == GroupsB.end())
        Out.push_back(formatv("group @{0} only in the first plan", G.Name));
      else if (It->second->Subgroups != G.Subgroups)
        Out.push_back(formatv("group @{0} has different members", G.Name));
    }
    for (const plan::Group &G : B.Groups)
      if (!llvm::any_of(A.Groups, [&](const plan::Group &X) { return X.Name == G.Name; }))
        Out.push_back(formatv("group @{0} only in the second plan", G.Name));
  }

  /// Which comm moves each tensor, by name; then comms matched by their
  /// first tensor.
  void matchComms() {
    for (uint32_t I = 0; I != A.Comms.size(); ++I)
      for (uint32_t T : moved(A.Comms[I]))
        WhereA[A.Tensors[T].Name] = I;
    for (uint32_t I = 0; I != B.Comms.size(); ++I)
      for (uint32_t T : moved(B.Comms[I]))
        WhereB[B.Tensors[T].Name] = I;
    Match.assign(A.Comms.size(), -1);
    for (uint32_t I = 0; I != A.Comms.size(); ++I) {
      std::vector<uint32_t> M = moved(A.Comms[I]);
      if (M.empty())
        continue;
      auto It = WhereB.find(A.Tensors[M.front()].Name);
      if (It == WhereB.end())
        continue;
      std::vector<uint32_t> MB = moved(B.Comms[It->second]);
      if (!MB.empty() && B.Tensors[MB.front()].Name == A.Tensors[M.front()].Name)
        Match[I] = It->second;
    }
  }

  /// Tensors that changed comm (bucket moves), or are communicated in one
  /// plan only.
  void tensorMoves() {
    unsigned Moves = 0;
    for (uint32_t I = 0; I != A.Comms.size(); ++I)
      for (uint32_t T : moved(A.Comms[I])) {
        StringRef Name = A.Tensors[T].Name;
        auto It = WhereB.find(Name);
        if (It == WhereB.end()) {
          Out.push_back(formatv("%{0} is communicated only in the first plan (by {1})", Name,
                                commName(A, I)));
          continue;
        }
        if (Match[I] == int64_t(It->second))
          continue;
        if (++Moves <= 50)
          Out.push_back(formatv("%{0} moved: {1} in the first plan, {2} in the second", Name,
                                commName(A, I), commName(B, It->second)));
      }
    if (Moves > 50)
      Out.push_back(formatv("... and {0} more tensors moved", Moves - 50));
    for (uint32_t I = 0; I != B.Comms.size(); ++I)
      for (uint32_t T : moved(B.Comms[I]))
        if (!WhereA.count(B.Tensors[T].Name))
          Out.push_back(formatv("%{0} is communicated only in the second plan (by {1})",
                                B.Tensors[T].Name, commName(B, I)));
  }

  /// Matched comms: kind, sizes, ranks, sides and how they complete.
  void commChanges() {
    for (uint32_t I = 0; I != A.Comms.size(); ++I) {
      if (Match[I] < 0)
        continue;
      const plan::Comm &CA = A.Comms[I], &CB = B.Comms[Match[I]];
      std::string Who = commName(A, I) + " / " + commName(B, Match[I]);
      if (CA.Kind != CB.Kind || CA.Reduce != CB.Reduce || CA.Elem != CB.Elem)
        Out.push_back(formatv("{0}: {1} {2} vs {3} {4}", Who, commKindName(CA.Kind),
                              elemTypeName(CA.Elem), commKindName(CB.Kind),
                              elemTypeName(CB.Elem)));
      if (CA.inputBytes(A.Tensors) != CB.inputBytes(B.Tensors))
        Out.push_back(formatv("{0}: {1} bytes vs {2} bytes", Who, CA.inputBytes(A.Tensors),
                              CB.inputBytes(B.Tensors)));
      if (!(CA.Ranks == CB.Ranks))
        Out.push_back(
            formatv("{0}: runs on ranks {1} vs {2}", Who, CA.Ranks.str(), CB.Ranks.str()));
      if (CA.numSides() != CB.numSides())
        Out.push_back(formatv("{0}: {1} side{2} vs {3}", Who, CA.numSides(),
                              CA.numSides() == 1 ? "" : "s", CB.numSides()));
      auto Either = [&](bool X, bool Y, const char *Yes, const char *No) {
        if (X != Y)
          Out.push_back(formatv("{0}: {1} vs {2}", Who, X ? Yes : No, Y ? Yes : No));
      };
      Either(CA.Async, CB.Async, "async", "blocking");
      Either(CA.Fenced, CB.Fenced, "fenced", "not fenced");
      Either(CA.Batch >= 0, CB.Batch >= 0, "in a p2p batch", "alone");
    }
  }

  /// Launch order of matched comms: the pairs that swapped.
  void orderChanges() {
    std::vector<size_t> PosA = launchOrder(A), PosB = launchOrder(B);
    std::vector<uint32_t> ByA;
    for (uint32_t I = 0; I != A.Comms.size(); ++I)
      if (Match[I] >= 0)
        ByA.push_back(I);
    llvm::sort(ByA, [&](uint32_t X, uint32_t Y) { return PosA[X] < PosA[Y]; });
    unsigned OrderChanges = 0;
    for (size_t K = 1; K < ByA.size(); ++K) {
      uint32_t X = ByA[K - 1], Y = ByA[K];
      if (PosB[Match[X]] > PosB[Match[Y]] && ++OrderChanges <= 20)
        Out.push_back(formatv("order changed: {0} launches before {1} in the first plan, after "
                              "it in the second",
                              commName(A, X), commName(A, Y)));
    }
    if (OrderChanges > 20)
      Out.push_back(formatv("... and {0} more order changes", OrderChanges - 20));
  }

  void totals() {
    uint64_t BytesA = 0, BytesB = 0;
    for (const plan::Buffer &X : A.Buffers)
      BytesA += X.Bytes;
    for (const plan::Buffer &X : B.Buffers)
      BytesB += X.Bytes;
    if (A.Buffers.size() != B.Buffers.size() || BytesA != BytesB)
      Out.push_back(formatv("buffers: {0} of {1} bytes in all vs {2} of {3} bytes",
                            A.Buffers.size(), BytesA, B.Buffers.size(), BytesB));
    if (A.Comms.size() != B.Comms.size())
      Out.push_back(formatv("comms: {0} vs {1}", A.Comms.size(), B.Comms.size()));
    if (A.Steps.size() != B.Steps.size())
      Out.push_back(formatv("steps: {0} vs {1}", A.Steps.size(), B.Steps.size()));
  }

  const plan::Plan &A, &B;
  std::vector<std::string> Out;
  StringMap<uint32_t> WhereA, WhereB; ///< tensor name -> the comm that moves it
  std::vector<int64_t> Match;         ///< A's comm -> B's, or -1
};

} // namespace

std::vector<std::string> diffPlans(const plan::Plan &A, const plan::Plan &B) {
  return PlanDiff(A, B).run();
}

} // namespace collc
