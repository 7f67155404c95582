//===- passes/analysis/StepSimulator.cpp - One training step, simulated -----===//

#include "passes/analysis/StepSimulator.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <map>
#include <tuple>

using namespace llvm;

namespace collc {

namespace {

/// One walk of every rank through the tasks, with rendezvous semantics for
/// communication. Ranks are advanced from a queue until they block; a
/// rendezvous that completes queues its members in rank order, so the
/// events come out in one deterministic order.
class Run {
public:
  Run(const SimModel &M, const SimOptions &Opts, bool FreeComm)
      : M(M), Opts(Opts), FreeComm(FreeComm) {
    Ready.assign(size_t(M.World) * M.NumValues, 0.0);
    Unmatched.assign(size_t(M.World) * M.NumValues, 0);
    Ranks.resize(M.World);
    uint32_t Total = 0;
    for (const SimGroup &G : M.Groups) {
      FlatBase.push_back(Total);
      Total += G.Subgroups.size();
    }
    Arrived.assign(Total, {});
  }

  /// False when ranks stall.
  bool run();
  SimResult result();

private:
  struct RankState {
    size_t PC = 0;
    bool Blocked = false, Done = false;
    /// Held before a task that reads a value of an unmatched posted recv.
    bool AwaitsMatch = false;
    SmallVector<double, 4> Streams;
    double Comm = 0, Fence = 0, Busy = 0;
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

  double &ready(int64_t R, uint32_t V) { return Ready[size_t(R) * M.NumValues + V]; }
  double inputsReady(int64_t R, const SimTask &T) {
    double Time = 0;
    for (uint32_t V : T.Inputs)
      Time = std::max(Time, ready(R, V));
    return Time;
  }
  double arrival(int64_t R, const SimTask &T) {
    double At =
        Opts.UnorderedComm ? inputsReady(R, T) : std::max(Ranks[R].Comm, inputsReady(R, T));
    if (T.Fenced)
      for (double S : Ranks[R].Streams)
        At = std::max(At, S);
    return At;
  }
  double cost(const SimTask &T, int64_t N) const {
    if (FreeComm)
      return 0;
    return collectiveTimeUs(T.Kind, reportedBytes(T.Kind, T.InBytes, T.OutBytes), N, Opts.Link);
  }
  void recordFinish(const SimTask &T, double End) {
    if (!Opts.RecordFinish)
      return;
    if (T.Source >= Finish.size())
      Finish.resize(T.Source + 1, 0.0);
    Finish[T.Source] = std::max(Finish[T.Source], End);
  }
  void compute(int64_t R, const SimTask &T);
  void finish(int64_t R, const SimTask &T, double Start, double Dur);
  void unblock(int64_t R) {
    Ranks[R].Blocked = false;
    Ranks[R].PC++;
    Queue.push_back(R);
  }
  bool advance(int64_t R);
  bool pointToPoint(int64_t R, const SimTask &T);
  bool collective(int64_t R, const SimTask &T);

  /// A send or recv posted and not yet matched.
  struct Posted {
    int64_t Rank;
    size_t PC;
    double Arrival;
    bool Blocking;
  };
  struct Channel {
    std::vector<Posted> Sends, Recvs;
    size_t SendHead = 0, RecvHead = 0;
  };

  const SimModel &M;
  const SimOptions &Opts;
  /// (group, sender, receiver): sends and recvs match on their group's
  /// communicator only (ir/RankSimulation.h).
  std::map<std::tuple<int32_t, int64_t, int64_t>, Channel> Channels;
  bool FreeComm;
  std::vector<double> Ready; // rank-major: ready time of each value on each rank
  /// Rank-major: the value comes from a posted send/recv not matched yet.
  std::vector<uint8_t> Unmatched;
  bool readsUnmatched(int64_t R, const SimTask &T) const {
    for (uint32_t V : T.Inputs)
      if (Unmatched[size_t(R) * M.NumValues + V])
        return true;
    return false;
  }
  std::vector<RankState> Ranks;
  std::vector<uint32_t> FlatBase;            // per group
  std::vector<std::vector<int32_t>> Arrived; // per flat subgroup
  std::vector<int64_t> Queue;
  size_t Head = 0;
  std::vector<SimEvent> Events;
  std::vector<double> Finish; // per task Source, when RecordFinish
};

void Run::compute(int64_t R, const SimTask &T) {
  RankState &S = Ranks[R];
  double &Free = S.stream(T.Stream);
  double Start = std::max({Free, S.Fence, inputsReady(R, T)});
  if (Opts.EarliestStart)
    Start = std::max(Start, Opts.EarliestStart(R, T, [&](uint32_t V) { return ready(R, V); }));
  double End = Start + double(T.CostNs) / 1000.0;
  Free = End;
  for (uint32_t V : T.Outputs)
    ready(R, V) = End;
  if (Opts.RecordEvents)
    Events.push_back({R, T.Source, false, T.Stream, Start, End - Start});
  recordFinish(T, End);
}

void Run::finish(int64_t R, const SimTask &T, double Start, double Dur) {
  RankState &S = Ranks[R];
  double End = Start + Dur;
  // A posted send/recv may match after this rank's comm stream moved on.
  S.Comm = std::max(S.Comm, End);
  S.Busy += Dur;
  for (uint32_t V : T.Outputs)
    ready(R, V) = End;
  // Eager semantics: the compute streams wait for a blocking collective.
  if (!T.Async)
    S.Fence = std::max(S.Fence, End);
  if (Opts.RecordEvents)
    Events.push_back({R, T.Source, true, 0, Start, Dur});
  recordFinish(T, End);
}

bool Run::pointToPoint(int64_t R, const SimTask &T) {
  int64_t Peer = T.Peers[R];
  if (Peer < 0 || Peer >= M.World)
    return false;
  // Posted, then matched in the order each side posts (ir/RankSimulation.h).
  bool IsSend = T.Kind == OpKind::Send;
  Channel &C =
      Channels[IsSend ? std::make_tuple(T.Group, R, Peer) : std::make_tuple(T.Group, Peer, R)];
  std::vector<Posted> &Mine = IsSend ? C.Sends : C.Recvs;
  std::vector<Posted> &Theirs = IsSend ? C.Recvs : C.Sends;
  size_t &TheirHead = IsSend ? C.RecvHead : C.SendHead;
  bool Blocking = !T.Async;
  if (TheirHead == Theirs.size()) {
    Mine.push_back({R, Ranks[R].PC, arrival(R, T), Blocking});
    // Its results have no time yet: whatever reads them waits for the match.
    for (uint32_t V : T.Outputs)
      Unmatched[size_t(R) * M.NumValues + V] = 1;
    return true;
  }
  Posted O = Theirs[TheirHead++];
  const SimTask &OT = M.Tasks[O.PC];
  double Start = std::max(arrival(R, T), O.Arrival);
  double Dur = cost(IsSend ? T : OT, 2); // the sender's bytes
  finish(R, T, Start, Dur);
  finish(Peer, OT, Start, Dur);
  for (uint32_t V : OT.Outputs)
    Unmatched[size_t(Peer) * M.NumValues + V] = 0;
  if (Blocking)
    unblock(R);
  if (O.Blocking)
    unblock(Peer);
  else if (Ranks[Peer].AwaitsMatch) {
    Ranks[Peer].AwaitsMatch = false;
    Queue.push_back(Peer);
  }
  return true;
}

bool Run::collective(int64_t R, const SimTask &T) {
  const SimGroup &G = M.Groups[T.Group];
  int32_t Sub = G.SubgroupOf[R];
  if (Sub < 0)
    return false;
  std::vector<int32_t> &Here = Arrived[FlatBase[T.Group] + Sub];
  Here.push_back(R);
  if (Here.size() != G.Subgroups[Sub].size())
    return true;
  // Members in rank order, so nothing depends on arrival order; the lowest
  // rank's task (they are all the same one in an agreeing program) sets
  // the cost.
  std::vector<int32_t> Members = std::move(Here);
  Here.clear();
  llvm::sort(Members);
  double Start = 0;
  for (int32_t X : Members)
    Start = std::max(Start, arrival(X, M.Tasks[Ranks[X].PC]));
  double Dur = cost(M.Tasks[Ranks[Members.front()].PC], int64_t(Members.size()));
  for (int32_t X : Members) {
    finish(X, M.Tasks[Ranks[X].PC], Start, Dur);
    unblock(X);
  }
  return true;
}

bool Run::advance(int64_t R) {
  RankState &S = Ranks[R];
  while (S.PC < M.Tasks.size()) {
    const SimTask &T = M.Tasks[S.PC];
    if (!T.runsOn(R)) {
      ++S.PC;
      continue;
    }
    // A posted recv's result is read no sooner than it is received (where
    // the program waits for it). Not for the overlap bound (UnorderedComm):
    // a reader that starts early only makes it more optimistic, as a lower
    // bound may be, and the bound must not depend on where a program wrote
    // a send among its computes.
    if (!Opts.UnorderedComm && readsUnmatched(R, T)) {
      S.AwaitsMatch = true;
      return true;
    }
    if (T.Kind == OpKind::Compute) {
      compute(R, T);
      ++S.PC;
      continue;
    }
    if (T.Kind == OpKind::Send || T.Kind == OpKind::Recv) {
      // An async (or p2p-block) send/recv is posted and the rank goes on;
      // its results are ready when it completes.
      if (T.Async) {
        if (!pointToPoint(R, T))
          return false;
        ++S.PC;
        continue;
      }
      S.Blocked = true;
      return pointToPoint(R, T);
    }
    S.Blocked = true;
    return collective(R, T);
  }
  S.Done = true;
  return true;
}

bool Run::run() {
  for (int64_t R = 0; R != M.World; ++R)
    Queue.push_back(R);
  while (Head != Queue.size()) {
    if (!advance(Queue[Head++]))
      return false;
    // Keep the queue from growing without bound on long runs.
    if (Head > 4096 && Head * 2 > Queue.size()) {
      Queue.erase(Queue.begin(), Queue.begin() + Head);
      Head = 0;
    }
  }
  return llvm::all_of(Ranks, [](const RankState &S) { return S.Done; });
}

SimResult Run::result() {
  SimResult Out;
  for (int64_t R = 0; R != M.World; ++R) {
    double End = Ranks[R].end();
    if (End > Out.StepUs) {
      Out.StepUs = End;
      Out.SlowestRank = R;
    }
  }
  Out.CommBusyUs = Ranks.empty() ? 0 : Ranks[Out.SlowestRank].Busy;
  Out.Events = std::move(Events);
  Out.FinishUs = std::move(Finish);
  return Out;
}

} // namespace

bool fitsStepSimulation(int64_t World, size_t NumValues) {
  return double(World) * double(NumValues) <= double(1 << 27);
}

std::optional<SimResult> simulateModel(const SimModel &M, const SimOptions &Opts) {
  Run Full(M, Opts, /*FreeComm=*/false);
  if (!Full.run())
    return std::nullopt;
  if (Opts.StepOnly)
    return Full.result();
  SimOptions Quiet = Opts;
  Quiet.RecordEvents = Quiet.RecordFinish = false;
  // Free communication walks the same rendezvous, so it cannot stall here.
  Run Free(M, Quiet, /*FreeComm=*/true);
  if (!Free.run())
    return std::nullopt;
  SimResult Out = Full.result();
  Out.ComputeOnlyStepUs = Free.result().StepUs;
  Out.ExposedCommUs = std::max(0.0, Out.StepUs - Out.ComputeOnlyStepUs);
  return Out;
}

} // namespace collc
