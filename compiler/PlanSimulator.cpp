//===- compiler/PlanSimulator.cpp - One step of a plan, simulated ----------===//

#include "compiler/PlanSimulator.h"

#include "compiler/CommKind.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>

using namespace llvm;

namespace collc {

double commTimeUs(const plan::Plan &P, const plan::Comm &C, int64_t N, const LinkClass &Link) {
  double Bytes = C.Kind == plan::CommKind::AllGather || C.Kind == plan::CommKind::Recv
                     ? double(C.outputBytes(P.Tensors))
                     : double(C.inputBytes(P.Tensors));
  return collectiveTimeUs(opKindOf(C.Kind), Bytes, N, Link);
}

namespace {

class Run {
public:
  Run(const plan::Plan &P, const LinkClass &Link, bool Free, bool Record)
      : P(P), Link(Link), Free(Free), Record(Record) {
    Ready.assign(size_t(P.World) * P.Tensors.size(), 0.0);
    Ranks.resize(P.World);
    uint32_t Total = 0;
    for (const plan::Group &G : P.Groups) {
      FlatBase.push_back(Total);
      Total += G.Subgroups.size();
    }
    Arrived.assign(Total, {});
  }

  bool run();
  PlanSimResult result() const;

private:
  struct RankState {
    size_t PC = 0;
    bool Blocked = false, Done = false;
    SmallVector<double, 4> Streams;
    double Comm = 0, Fence = 0, Busy = 0;
    double &stream(uint32_t S) {
      if (S >= Streams.size())
        Streams.resize(S + 1, 0.0);
      return Streams[S];
    }
  };

  double &ready(int64_t R, uint32_t T) { return Ready[size_t(R) * P.Tensors.size() + T]; }
  double inputsReady(int64_t R, ArrayRef<uint32_t> In) {
    double T = 0;
    for (uint32_t X : In)
      T = std::max(T, ready(R, X));
    return T;
  }
  double arrival(int64_t R, const plan::Comm &C) {
    return std::max(Ranks[R].Comm, inputsReady(R, C.Inputs));
  }
  void finish(int64_t R, uint32_t CI, double Start, double Dur) {
    const plan::Comm &C = P.Comms[CI];
    RankState &S = Ranks[R];
    S.Comm = Start + Dur;
    S.Busy += Dur;
    for (uint32_t T : C.Outputs)
      ready(R, T) = Start + Dur;
    if (!C.Async)
      S.Fence = std::max(S.Fence, Start + Dur);
    if (Record)
      Events.push_back({R, true, CI, 0, Start, Dur});
  }
  void unblock(int64_t R) {
    Ranks[R].Blocked = false;
    Ranks[R].PC++;
    Queue.push_back(R);
  }
  bool advance(int64_t R);

  const plan::Plan &P;
  const LinkClass &Link;
  bool Free, Record;
  std::vector<double> Ready;
  std::vector<RankState> Ranks;
  std::vector<uint32_t> FlatBase;
  std::vector<std::vector<int32_t>> Arrived;
  std::vector<int64_t> Queue;
  std::vector<PlanSimEvent> Events;
};

bool Run::advance(int64_t R) {
  RankState &S = Ranks[R];
  while (S.PC < P.Steps.size()) {
    const plan::Step &St = P.Steps[S.PC];
    if (!P.ranksOf(St).contains(R)) {
      ++S.PC;
      continue;
    }
    if (St.Kind == plan::StepKind::Compute) {
      const plan::Compute &C = P.Computes[St.Index];
      double &Stream = S.stream(C.Stream);
      double Start = std::max({Stream, S.Fence, inputsReady(R, C.Inputs)});
      double End = Start + double(C.CostNs) / 1000.0;
      Stream = End;
      for (uint32_t T : C.Outputs)
        ready(R, T) = End;
      if (Record)
        Events.push_back({R, false, St.Index, C.Stream, Start, End - Start});
      ++S.PC;
      continue;
    }
    if (St.Kind == plan::StepKind::Wait) {
      ++S.PC; // completion already set the result times (and fences)
      continue;
    }
    const plan::Comm &C = P.Comms[St.Index];
    S.Blocked = true;
    if (C.Kind == plan::CommKind::Send || C.Kind == plan::CommKind::Recv) {
      int64_t Peer = C.Peers[R];
      if (Peer < 0 || Peer >= P.World)
        return false;
      RankState &O = Ranks[Peer];
      if (!O.Blocked || O.PC >= P.Steps.size())
        return true;
      const plan::Step &OS = P.Steps[O.PC];
      if (OS.Kind != plan::StepKind::Launch)
        return true;
      const plan::Comm &OC = P.Comms[OS.Index];
      bool Pairs = (C.Kind == plan::CommKind::Send) ? OC.Kind == plan::CommKind::Recv
                                                    : OC.Kind == plan::CommKind::Send;
      if (!Pairs || OC.Peers[Peer] != R)
        return true;
      double Start = std::max(arrival(R, C), arrival(Peer, OC));
      const plan::Comm &SendC = C.Kind == plan::CommKind::Send ? C : OC;
      double Dur = Free ? 0 : commTimeUs(P, SendC, 2, Link);
      finish(R, St.Index, Start, Dur);
      finish(Peer, OS.Index, Start, Dur);
      unblock(R);
      unblock(Peer);
      return true;
    }
    const plan::Group &G = P.Groups[C.Group];
    uint32_t Flat = FlatBase[C.Group] + G.SubgroupOf[R];
    Arrived[Flat].push_back(R);
    ArrayRef<int32_t> Members = G.Subgroups[G.SubgroupOf[R]];
    if (Arrived[Flat].size() != Members.size())
      return true;
    double Start = 0;
    for (int32_t M : Arrived[Flat])
      Start = std::max(Start, arrival(M, P.Comms[P.Steps[Ranks[M].PC].Index]));
    double Dur = Free ? 0 : commTimeUs(P, C, Members.size(), Link);
    std::vector<int32_t> Here = std::move(Arrived[Flat]);
    Arrived[Flat].clear();
    llvm::sort(Here);
    for (int32_t M : Here) {
      finish(M, P.Steps[Ranks[M].PC].Index, Start, Dur);
      unblock(M);
    }
    return true;
  }
  S.Done = true;
  return true;
}

bool Run::run() {
  for (int64_t R = 0; R != P.World; ++R)
    Queue.push_back(R);
  for (size_t Head = 0; Head != Queue.size(); ++Head)
    if (!advance(Queue[Head]))
      return false;
  for (const RankState &S : Ranks)
    if (!S.Done)
      return false;
  return true;
}

PlanSimResult Run::result() const {
  PlanSimResult Out;
  for (int64_t R = 0; R != P.World; ++R) {
    const RankState &S = Ranks[R];
    double End = std::max(S.Comm, S.Fence);
    for (double X : S.Streams)
      End = std::max(End, X);
    if (End > Out.StepUs) {
      Out.StepUs = End;
      Out.SlowestRank = R;
    }
  }
  Out.CommBusyUs = Ranks[Out.SlowestRank].Busy;
  Out.Events = Events;
  return Out;
}

} // namespace

Expected<PlanSimResult> simulatePlan(const plan::Plan &P, const LinkClass &Link,
                                     bool RecordEvents) {
  if (double(P.World) * double(P.Tensors.size()) > double(1 << 27))
    return createStringError(inconvertibleErrorCode(),
                             "plan @%s is too large to simulate (world %lld x %zu tensors)",
                             P.Program.c_str(), (long long)P.World, P.Tensors.size());
  Run Full(P, Link, false, RecordEvents);
  if (!Full.run())
    return createStringError(inconvertibleErrorCode(),
                             "plan @%s stalls: its ranks' steps do not match up (was it "
                             "compiled with check-cross-rank?)",
                             P.Program.c_str());
  PlanSimResult Out = Full.result();
  Run Zero(P, Link, true, false);
  if (!Zero.run())
    return createStringError(inconvertibleErrorCode(), "plan @%s stalls", P.Program.c_str());
  Out.ComputeOnlyStepUs = Zero.result().StepUs;
  Out.ExposedCommUs = std::max(0.0, Out.StepUs - Out.ComputeOnlyStepUs);
  return Out;
}

} // namespace collc
