//===- runtime/verify/PlanChecker.cpp - Expected results of a plan ---------===//

#include "runtime/verify/PlanChecker.h"

#include "runtime/exec/ElementTraits.h"
#include "runtime/exec/RuntimeError.h"
#include "runtime/exec/WrapArithmetic.h"
#include "runtime/verify/SyntheticData.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstring>
#include <algorithm>
#include <cassert>
#include <map>
#include <queue>
#include <set>
#include <type_traits>

using namespace llvm;

namespace collc::rt {

namespace {

template <typename S> S loadRaw(const char *P, uint64_t I) {
  S V;
  std::memcpy(&V, P + I * sizeof(S), sizeof(S));
  return V;
}

/// Accumulator of one element: value in the accumulation type.
template <typename A> struct Acc { A V; };

template <typename S, typename A, typename LoadF, typename StoreF>
void reduceOne(ReduceOp Op, double Scale, const char *const *Srcs, unsigned N, uint64_t I,
               char *Out, LoadF Load, StoreF Store) {
  auto Mul = mulWrap<A>;
  auto Add = addWrap<A>;
  A ScaleA = A(Scale);
  A R = Load(Srcs[0], I);
  if (Op == ReduceOp::PremulSum)
    R = Mul(R, ScaleA);
  for (unsigned K = 1; K < N; ++K) {
    A V = Load(Srcs[K], I);
    switch (Op) {
    case ReduceOp::Sum:
    case ReduceOp::Avg:
      R = Add(R, V);
      break;
    case ReduceOp::PremulSum:
      R = Add(R, Mul(V, ScaleA));
      break;
    case ReduceOp::Prod:
      R = Mul(R, V);
      break;
    case ReduceOp::Min:
      R = V < R ? V : R;
      break;
    case ReduceOp::Max:
      R = V > R ? V : R;
      break;
    }
  }
  if (Op == ReduceOp::Avg)
    R = averageOf(R, N);
  Store(Out, R);
}

std::string showElement(ElemType T, const char *P) {
  return visitElemType(T, [&](auto E) -> std::string {
    using Traits = decltype(E);
    // Unary plus: 8-bit integers print as numbers, not characters.
    return formatv("{0}", +Traits::load(loadRaw<typename Traits::Storage>(P, 0)));
  });
}

class Checker {
public:
  Checker(const plan::Plan &P, ActualTensor Actual, const CheckOptions &Opts)
      : P(P), Actual(Actual), Opts(Opts) {
    // Which comm outputs feed later comms: those are kept.
    for (const plan::Comm &C : P.Comms) {
      for (uint32_t T : C.Inputs)
        NeededAsInput.insert(T);
      if (C.Counts >= 0)
        NeededAsInput.insert(C.Counts);
    }
    for (const plan::Compute &C : P.Computes)
      for (uint32_t T : C.Outputs)
        FromCompute.insert(T);
  }

  Expected<CheckSummary> run();

private:
  /// Rank R's expected content of tensor T as an input.
  std::vector<char> input(int64_t R, uint32_t T) {
    auto It = Kept.find({R, T});
    if (It != Kept.end())
      return It->second;
    std::vector<char> Out(P.Tensors[T].Type.bytes());
    fillSynthetic(P, T, R, Out);
    return Out;
  }
  /// Compares rank R's tensor T with \p Want: bit for bit, or, for the
  /// result of \p Reduction, as ReductionBound.h accepts.
  void expect(int64_t R, uint32_t T, std::vector<char> Want,
              const ReductionSources *Reduction = nullptr);
  void checkCollective(const plan::Comm &C, llvm::ArrayRef<int32_t> Members);
  Error matchPointToPoint();

  /// One piece of the reference's work: a collective on one of its
  /// subgroups, or a recv on one rank.
  struct Task {
    uint32_t Comm;
    int32_t Subgroup; ///< of the comm's group; -1 for a recv
    int64_t Rank;     ///< the receiving rank of a recv; -1 for a collective
  };
  /// A tensor on a rank: what a task makes and what it reads.
  using Key = std::pair<int64_t, uint32_t>;
  std::vector<Task> tasksInStepOrder() const;
  llvm::ArrayRef<int32_t> membersOf(const Task &T) const {
    return P.Groups[P.Comms[T.Comm].Group].Subgroups[T.Subgroup];
  }
  /// What \p T makes that a later comm reads (the rest is not kept).
  void made(const Task &T, llvm::SmallVectorImpl<Key> &Out) const;
  /// What \p T reads, sorted and unique.
  void reads(const Task &T, llvm::SmallVectorImpl<Key> &Out) const;
  std::string describe(const Task &T) const;
  /// The send a recv task meets: (send comm, sending rank).
  std::pair<uint32_t, int64_t> sendOf(const Task &T) const {
    auto It = SendOf.find({T.Comm, T.Rank});
    assert(It != SendOf.end() && "matchPointToPoint pairs every recv");
    return It->second;
  }
  void evaluate(const Task &T);

  const plan::Plan &P;
  ActualTensor Actual;
  CheckOptions Opts;
  std::set<uint32_t> NeededAsInput, FromCompute;
  std::map<std::pair<int64_t, uint32_t>, std::vector<char>> Kept;
  std::vector<std::string> Mismatches;
  CheckSummary Summary;
  /// (recv comm, receiving rank) -> (send comm, sending rank)
  std::map<std::pair<uint32_t, int64_t>, std::pair<uint32_t, int64_t>> SendOf;
};

void Checker::expect(int64_t R, uint32_t T, std::vector<char> Want,
                     const ReductionSources *Reduction) {
  // Another process checks its own rank; the reference is still computed
  // for every rank, as later comms may read it.
  bool Compared = Opts.OnlyRank < 0 || Opts.OnlyRank == R;
  ArrayRef<char> Got = Compared ? Actual(R, T) : ArrayRef<char>();
  if (Compared) {
    ++Summary.TensorsChecked;
    Summary.BytesChecked += Want.size();
  }
  ElemType ET = P.Tensors[T].Type.Elem;
  unsigned Size = elemTypeBytes(ET);
  auto Differs = [&](uint64_t I, StringRef Bound) {
    Mismatches.push_back(formatv("rank {0}: %{1} differs at element {2}: got {3}, expected {4}{5}",
                                 R, P.Tensors[T].Name, I, showElement(ET, Got.data() + I * Size),
                                 showElement(ET, Want.data() + I * Size), Bound));
  };
  if (!Compared) {
  } else if (Got.size() != Want.size()) {
    Mismatches.push_back(formatv("rank {0}: %{1} has {2} bytes, expected {3}", R, P.Tensors[T].Name,
                                 Got.size(), Want.size()));
  } else if (Reduction) {
    if (Optional<UnacceptableElement> U = firstUnacceptable(*Reduction, Got, Want, Opts.Reductions))
      Differs(U->Index, formatv(" (allowed: {0})", describeBound(U->Verdict)).str());
  } else if (!Want.empty() && // a zero-byte tensor may have no address at all
             std::memcmp(Got.data(), Want.data(), Want.size()) != 0) {
    uint64_t I = 0;
    while (std::memcmp(Got.data() + I * Size, Want.data() + I * Size, Size) == 0)
      ++I;
    Differs(I, "");
  }
  if (NeededAsInput.count(T))
    Kept[{R, T}] = std::move(Want);
}

void Checker::checkCollective(const plan::Comm &C, ArrayRef<int32_t> Members) {
  unsigned N = Members.size();
  unsigned Size = elemTypeBytes(C.Elem);
  // all_to_all_v split sizes (rows), [from][to] in local ranks.
  std::vector<uint64_t> Rows;
  if (C.Kind == plan::CommKind::AllToAllV) {
    Rows.assign(size_t(N) * N, 0);
    for (unsigned From = 0; From != N; ++From)
      for (unsigned To = 0; To != N; ++To) {
        if (C.Counts < 0) {
          Rows[From * N + To] = uint64_t(C.Splits[From * N + To]);
          continue;
        }
        std::vector<char> Counts = input(Members[From], C.Counts);
        int64_t V = 0;
        unsigned CS = elemTypeBytes(P.Tensors[C.Counts].Type.Elem);
        std::memcpy(&V, Counts.data() + To * CS, CS); // little endian, non-negative
        Rows[From * N + To] = uint64_t(V);
      }
  }
  for (size_t K = 0; K != C.Outputs.size(); ++K) {
    uint32_t In = C.Inputs.empty() ? 0 : C.Inputs[K];
    uint32_t Out = C.Outputs[K];
    std::vector<std::vector<char>> Ins;
    SmallVector<const char *, 16> Srcs;
    if (!C.Inputs.empty()) {
      for (int32_t M : Members)
        Ins.push_back(input(M, In));
      for (auto &X : Ins)
        Srcs.push_back(X.data());
    }
    uint64_t OutBytes = P.Tensors[Out].Type.bytes();
    uint64_t OutElems = OutBytes / Size;
    switch (C.Kind) {
    case plan::CommKind::AllReduce: {
      std::vector<char> Want(OutBytes);
      for (uint64_t I = 0; I != OutElems; ++I)
        referenceReduce(C.Elem, C.Reduce, C.Scale, Srcs.data(), N, I, Want.data() + I * Size);
      ReductionSources Red{C.Elem, C.Reduce, C.Scale, Srcs.data(), N, 0};
      for (int32_t M : Members)
        expect(M, Out, Want, &Red);
      break;
    }
    case plan::CommKind::ReduceScatter:
      for (unsigned L = 0; L != N; ++L) {
        std::vector<char> Want(OutBytes);
        for (uint64_t I = 0; I != OutElems; ++I)
          referenceReduce(C.Elem, C.Reduce, C.Scale, Srcs.data(), N, L * OutElems + I,
                          Want.data() + I * Size);
        ReductionSources Red{C.Elem, C.Reduce, C.Scale, Srcs.data(), N, L * OutElems};
        expect(Members[L], Out, std::move(Want), &Red);
      }
      break;
    case plan::CommKind::AllGather: {
      std::vector<char> Want;
      for (auto &X : Ins)
        Want.insert(Want.end(), X.begin(), X.end());
      for (int32_t M : Members)
        expect(M, Out, Want);
      break;
    }
    case plan::CommKind::Broadcast: {
      // Peers hold the local root on every rank that runs the comm.
      int64_t Root = C.Peers[Members.front()];
      for (int32_t M : Members)
        expect(M, Out, Ins[Root]);
      break;
    }
    case plan::CommKind::AllToAll: {
      uint64_t Chunk = OutBytes / N;
      for (unsigned L = 0; L != N; ++L) {
        std::vector<char> Want(OutBytes);
        for (unsigned J = 0; J != N && Chunk; ++J)
          std::memcpy(Want.data() + J * Chunk, Ins[J].data() + L * Chunk, Chunk);
        expect(Members[L], Out, std::move(Want));
      }
      break;
    }
    case plan::CommKind::AllToAllV: {
      int64_t InRows = P.Tensors[In].Type.Shape[0];
      uint64_t RowBytes = P.Tensors[In].Type.bytes() / uint64_t(std::max<int64_t>(1, InRows));
      for (unsigned L = 0; L != N; ++L) {
        // Received rows in sender order; the rest of the capacity stays as
        // it was (zero: the outputs start zeroed).
        std::vector<char> Want(OutBytes, 0);
        uint64_t At = 0;
        for (unsigned J = 0; J != N; ++J) {
          uint64_t Skip = 0;
          for (unsigned Q = 0; Q != L; ++Q)
            Skip += Rows[J * N + Q];
          uint64_t Take = Rows[J * N + L];
          if (Take != 0 && RowBytes != 0)
            std::memcpy(Want.data() + At * RowBytes, Ins[J].data() + Skip * RowBytes,
                        Take * RowBytes);
          At += Take;
        }
        expect(Members[L], Out, std::move(Want));
      }
      break;
    }
    default:
      break;
    }
  }
}

Error Checker::matchPointToPoint() {
  // The k-th send from p to r meets the k-th recv on r from p.
  std::map<std::pair<int64_t, int64_t>, std::vector<uint32_t>> Sends, Recvs;
  for (const plan::Step &S : P.Steps) {
    if (S.Kind != plan::StepKind::Launch)
      continue;
    const plan::Comm &C = P.Comms[S.Index];
    if (C.Kind != plan::CommKind::Send && C.Kind != plan::CommKind::Recv)
      continue;
    for (int64_t R = 0; R != P.World; ++R) {
      if (!C.Ranks.contains(R))
        continue;
      if (C.Kind == plan::CommKind::Send)
        Sends[{R, C.Peers[R]}].push_back(S.Index);
      else
        Recvs[{C.Peers[R], R}].push_back(S.Index);
    }
  }
  for (auto &[Channel, RecvComms] : Recvs) {
    auto &SendComms = Sends[Channel];
    if (SendComms.size() != RecvComms.size())
      return makeError(ErrorKind::Mismatch,
                       formatv("rank {0} sends {1} times to rank {2}, which receives {3} times",
                               Channel.first, SendComms.size(), Channel.second, RecvComms.size()));
    for (size_t K = 0; K != RecvComms.size(); ++K)
      SendOf[{RecvComms[K], Channel.second}] = {SendComms[K], Channel.first};
  }
  return Error::success();
}

std::vector<Checker::Task> Checker::tasksInStepOrder() const {
  std::vector<Task> Tasks;
  for (const plan::Step &S : P.Steps) {
    if (S.Kind != plan::StepKind::Launch)
      continue;
    const plan::Comm &C = P.Comms[S.Index];
    if (C.Kind == plan::CommKind::Recv) {
      for (int64_t R = 0; R != P.World; ++R)
        if (C.Ranks.contains(R))
          Tasks.push_back({S.Index, -1, R});
      continue;
    }
    if (C.Group < 0 || C.Kind == plan::CommKind::Barrier || C.Kind == plan::CommKind::Send)
      continue;
    const plan::Group &G = P.Groups[C.Group];
    for (size_t K = 0; K != G.Subgroups.size(); ++K)
      if (C.Ranks.contains(G.Subgroups[K].front()))
        Tasks.push_back({S.Index, int32_t(K), -1});
  }
  return Tasks;
}

void Checker::made(const Task &T, SmallVectorImpl<Key> &Out) const {
  const plan::Comm &C = P.Comms[T.Comm];
  for (uint32_t O : C.Outputs) {
    if (!NeededAsInput.count(O))
      continue;
    if (T.Rank >= 0) {
      Out.push_back({T.Rank, O});
      continue;
    }
    for (int32_t M : membersOf(T))
      Out.push_back({M, O});
  }
}

void Checker::reads(const Task &T, SmallVectorImpl<Key> &Out) const {
  const plan::Comm &C = P.Comms[T.Comm];
  if (T.Rank >= 0) {
    auto [SendComm, Sender] = sendOf(T);
    Out.push_back({Sender, P.Comms[SendComm].Inputs[0]});
    return;
  }
  for (int32_t M : membersOf(T)) {
    for (uint32_t In : C.Inputs)
      Out.push_back({M, In});
    if (C.Counts >= 0)
      Out.push_back({M, uint32_t(C.Counts)});
  }
  llvm::sort(Out);
  Out.erase(std::unique(Out.begin(), Out.end()), Out.end());
}

std::string Checker::describe(const Task &T) const {
  const plan::Comm &C = P.Comms[T.Comm];
  if (T.Rank >= 0)
    return formatv("the recv of %{0} on rank {1}", P.Tensors[C.Outputs[0]].Name, T.Rank);
  return formatv("comm {0} ({1}) on the subgroup of rank {2}", T.Comm, plan::commKindName(C.Kind),
                 membersOf(T).front());
}

void Checker::evaluate(const Task &T) {
  const plan::Comm &C = P.Comms[T.Comm];
  if (T.Rank < 0)
    return checkCollective(C, membersOf(T));
  auto [SendComm, Sender] = sendOf(T);
  expect(T.Rank, C.Outputs[0], input(Sender, P.Comms[SendComm].Inputs[0]));
}

Expected<CheckSummary> Checker::run() {
  if (Error E = matchPointToPoint())
    return E;
  // A task reads values other tasks make: a recv what its sender sent, a
  // collective what its members received or gathered before. Ranks post
  // their ops in their own orders, so the steps' order need not be one in
  // which every value is made before it is read (rank 1 may post a recv
  // before the collective that makes what rank 0 sends). Tasks run in
  // dependency order instead: each when the last value it reads is made,
  // the earliest such in step order first (so plans whose step order works
  // run in it); a worklist, not recursion.
  std::vector<Task> Tasks = tasksInStepOrder();
  std::map<Key, uint32_t> MadeBy; // the first task that makes a kept value
  SmallVector<Key, 16> Keys;
  for (uint32_t I = 0; I != Tasks.size(); ++I) {
    Keys.clear();
    made(Tasks[I], Keys);
    for (const Key &K : Keys)
      MadeBy.emplace(K, I);
  }
  std::vector<uint32_t> Missing(Tasks.size(), 0);
  std::map<Key, std::vector<uint32_t>> Readers; // made values, each with the tasks waiting for it
  std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<uint32_t>> Ready;
  for (uint32_t I = 0; I != Tasks.size(); ++I) {
    Keys.clear();
    reads(Tasks[I], Keys);
    for (const Key &K : Keys) {
      if (MadeBy.count(K)) {
        Readers[K].push_back(I);
        ++Missing[I];
        continue;
      }
      // Not made by a comm: a compute's output is the synthetic pattern,
      // which any task may read; a recv of something nothing makes on its
      // sender has no reference.
      if (Tasks[I].Rank >= 0 && !FromCompute.count(K.second))
        return makeError(ErrorKind::Backend,
                         formatv("{0} receives %{1} from rank {2}, which no compute or comm "
                                 "makes on rank {2}",
                                 describe(Tasks[I]), P.Tensors[K.second].Name, K.first));
    }
    if (!Missing[I])
      Ready.push(I);
  }
  size_t Done = 0;
  while (!Ready.empty()) {
    uint32_t I = Ready.top();
    Ready.pop();
    evaluate(Tasks[I]);
    ++Done;
    Keys.clear();
    made(Tasks[I], Keys);
    for (const Key &K : Keys) {
      auto It = Readers.find(K);
      if (It == Readers.end())
        continue;
      for (uint32_t Reader : It->second)
        if (--Missing[Reader] == 0)
          Ready.push(Reader);
      Readers.erase(It); // made once: a second maker releases no one again
    }
  }
  if (Done != Tasks.size()) {
    // Tasks that wait on each other: a plan whose ranks would deadlock.
    for (uint32_t I = 0; I != Tasks.size(); ++I) {
      if (!Missing[I])
        continue;
      for (const auto &[K, Waiting] : Readers)
        if (llvm::is_contained(Waiting, I))
          return makeError(
              ErrorKind::Backend,
              formatv("{0} reads %{1} of rank {2}, which only comms that wait for it make "
                      "(the plan's values depend on each other in a cycle)",
                      describe(Tasks[I]), P.Tensors[K.second].Name, K.first));
    }
  }
  if (Mismatches.empty())
    return Summary;
  std::string Text = formatv("{0} tensor{1} differ from the reference:", Mismatches.size(),
                             Mismatches.size() == 1 ? "" : "s");
  for (size_t I = 0; I != Mismatches.size() && I < 10; ++I)
    Text += "\n  " + Mismatches[I];
  if (Mismatches.size() > 10)
    Text += formatv("\n  ... and {0} more", Mismatches.size() - 10).str();
  return makeError(ErrorKind::Mismatch, Text);
}

} // namespace

void referenceReduce(ElemType T, ReduceOp Op, double Scale, const char *const *Srcs, unsigned N,
                     uint64_t I, char *Out) {
  visitElemType(T, [&](auto E) {
    using Traits = decltype(E);
    using S = typename Traits::Storage;
    reduceOne<S, typename Traits::Acc>(
        Op, Scale, Srcs, N, I, Out,
        [](const char *P, uint64_t K) { return Traits::load(loadRaw<S>(P, K)); },
        [](char *O, typename Traits::Acc V) {
          S X = Traits::store(V);
          std::memcpy(O, &X, sizeof(S));
        });
  });
}

Expected<CheckSummary> checkPlanResults(const plan::Plan &P, ActualTensor Actual,
                                        const CheckOptions &Opts) {
  return Checker(P, Actual, Opts).run();
}

} // namespace collc::rt
