//===- passes/analysis/StepSimulator.cpp - One training step, simulated -----===//

#include "passes/analysis/StepSimulator.h"

#include "ir/RankSimulation.h"

#include <algorithm>

using namespace llvm;

namespace collc {

namespace {

class TimingVisitor : public RankSimulationVisitor {
public:
  TimingVisitor(const Program &P, const SimOptions &Opts, bool FreeComm)
      : P(P), Opts(Opts), FreeComm(FreeComm), NumValues(P.numValues()) {
    Ready.assign(size_t(P.worldSize()) * NumValues, 0.0);
    Ranks.resize(P.worldSize());
  }

  bool local(int64_t R, OpId I) override {
    const Op &O = P.ops()[I];
    if (O.Kind != OpKind::Compute)
      return true; // `wait` costs nothing; consumers wait on data
    RankTime &T = Ranks[R];
    double &Free = T.stream(O.Stream);
    double Start = std::max({Free, T.Fence, inputsReady(R, O)});
    double End = Start + double(O.CostNs) / 1000.0;
    Free = End;
    for (ValueId V : O.Results)
      ready(R, V) = End;
    record(R, I, false, O.Stream, Start, End - Start);
    return true;
  }

  bool collective(GroupId G, ArrayRef<int32_t> Members, ArrayRef<OpId> Ops, uint64_t) override {
    double Start = 0;
    for (size_t K = 0; K != Members.size(); ++K)
      Start = std::max(Start, arrival(Members[K], P.ops()[Ops[K]]));
    const Op &O = P.ops()[Ops.front()];
    double Dur = cost(O, int64_t(Members.size()));
    for (size_t K = 0; K != Members.size(); ++K)
      finish(Members[K], Ops[K], Start, Dur);
    return true;
  }

  bool pointToPoint(int64_t S, OpId SendI, int64_t R, OpId RecvI) override {
    double Start = std::max(arrival(S, P.ops()[SendI]), arrival(R, P.ops()[RecvI]));
    double Dur = cost(P.ops()[SendI], 2);
    finish(S, SendI, Start, Dur);
    finish(R, RecvI, Start, Dur);
    return true;
  }

  SimResult result() const {
    SimResult Out;
    for (int64_t R = 0; R != int64_t(Ranks.size()); ++R) {
      double End = Ranks[R].end();
      if (End > Out.StepUs) {
        Out.StepUs = End;
        Out.SlowestRank = R;
      }
    }
    Out.CommBusyUs = Ranks.empty() ? 0 : Ranks[Out.SlowestRank].CommBusy;
    Out.Events = Events;
    return Out;
  }

private:
  struct RankTime {
    SmallVector<double, 4> Streams;
    double Comm = 0, Fence = 0, CommBusy = 0;
    double &stream(uint32_t S) {
      if (S >= Streams.size())
        Streams.resize(S + 1, 0.0);
      return Streams[S];
    }
    double end() const {
      double E = std::max(Comm, Fence);
      for (double S : Streams)
        E = std::max(E, S);
      return E;
    }
  };

  double &ready(int64_t R, ValueId V) { return Ready[size_t(R) * NumValues + V]; }
  double inputsReady(int64_t R, const Op &O) {
    double T = 0;
    for (ValueId V : O.Operands)
      T = std::max(T, ready(R, V));
    return T;
  }
  double arrival(int64_t R, const Op &O) { return std::max(Ranks[R].Comm, inputsReady(R, O)); }
  double cost(const Op &O, int64_t N) const {
    if (FreeComm)
      return 0;
    return collectiveTimeUs(O.Kind, reportedBytes(P, O, N), N, Opts.Link);
  }
  void finish(int64_t R, OpId I, double Start, double Dur) {
    const Op &O = P.ops()[I];
    RankTime &T = Ranks[R];
    double End = Start + Dur;
    T.Comm = End;
    T.CommBusy += Dur;
    for (ValueId V : O.Results)
      ready(R, V) = End;
    // Eager semantics: the compute streams wait for a blocking collective.
    if (!O.Async)
      T.Fence = std::max(T.Fence, End);
    record(R, I, true, 0, Start, Dur);
  }
  void record(int64_t R, OpId I, bool Comm, uint32_t Stream, double Start, double Dur) {
    if (Opts.RecordEvents)
      Events.push_back({R, I, Comm, Stream, Start, Dur});
  }

  const Program &P;
  const SimOptions &Opts;
  bool FreeComm;
  size_t NumValues;
  std::vector<double> Ready; // rank-major: ready time of each value on each rank
  std::vector<RankTime> Ranks;
  std::vector<SimEvent> Events;
};

Expected<SimResult> runOnce(const Program &P, const RankMasks &Masks, const SimOptions &Opts,
                            bool FreeComm) {
  TimingVisitor V(P, Opts, FreeComm);
  RankSimulation Sim(P, Masks);
  if (Sim.run(V) != RankSimulation::Outcome::Finished)
    return createStringError(inconvertibleErrorCode(),
                             "cannot simulate @%s: its ranks do not agree or deadlock (run "
                             "check-cross-rank for details)",
                             P.name().str().c_str());
  return V.result();
}

} // namespace

Expected<SimResult> simulateStep(const Program &P, const SimOptions &Opts) {
  if (double(P.worldSize()) * double(P.numValues()) > double(1 << 27))
    return createStringError(inconvertibleErrorCode(),
                             "@%s is too large to simulate (world %lld x %zu values)",
                             P.name().str().c_str(), (long long)P.worldSize(), P.numValues());
  RankMasks Masks(P);
  Expected<SimResult> Full = runOnce(P, Masks, Opts, false);
  if (!Full)
    return Full.takeError();
  SimOptions Quiet = Opts;
  Quiet.RecordEvents = false;
  Expected<SimResult> Free = runOnce(P, Masks, Quiet, true);
  if (!Free)
    return Free.takeError();
  Full->ComputeOnlyStepUs = Free->StepUs;
  Full->ExposedCommUs = std::max(0.0, Full->StepUs - Free->StepUs);
  return Full;
}

} // namespace collc
