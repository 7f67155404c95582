//===- runtime/nccl/IssueOrder.cpp - One rank's plan as its comm stream issues it ===//

#include "runtime/nccl/IssueOrder.h"

#include "runtime/exec/StepWalk.h"


namespace collc::rt::nccl {

namespace {

bool isPointToPoint(plan::CommKind K) {
  return K == plan::CommKind::Send || K == plan::CommKind::Recv;
}

class IssueOrderBuilder {
public:
  explicit IssueOrderBuilder(const plan::Plan &P) : P(P), OpenIn(P.Comms.size(), 0) {}

  std::vector<Issue> run(int64_t Rank) {
    for (size_t S : stepsOfRank(P, Rank)) {
      const plan::Step &St = P.Steps[S];
      switch (St.Kind) {
      case plan::StepKind::Launch:
        launch(St.Index);
        break;
      case plan::StepKind::Wait:
        // Its comm is issued before its wait records that it is done.
        if (PointToPoint && OpenIn[St.Index] != Serial)
          hold(St);
        else
          flush(Issue::AtWait, St.Index);
        Out.push_back(entry(Issue::Wait, St.Index));
        break;
      case plan::StepKind::Compute:
        if (PointToPoint)
          hold(St);
        else
          flush(Issue::AtLaunch, 0);
        Out.push_back(entry(Issue::Compute, St.Index));
        break;
      }
    }
    flush(Issue::AtEnd, 0);
    return std::move(Out);
  }

private:
  void launch(uint32_t K) {
    const plan::Comm &C = P.Comms[K];
    if (C.Kind == plan::CommKind::AllToAllV && C.Counts >= 0) {
      flush(Issue::BeforeCollective, K);
      Out.push_back(entry(Issue::Eager, K));
      return;
    }
    bool P2P = isPointToPoint(C.Kind);
    // Sends/recvs and collectives never share a group, nor do two
    // communicators (IssueOrder.h).
    if (!Open.Comms.empty() && P2P != PointToPoint)
      flush(Issue::BeforeCollective, K);
    else if (!Open.Comms.empty() && C.Group != OpenGroup)
      flush(Issue::AtCommChange, K);
    PointToPoint = P2P;
    OpenGroup = C.Group;
    Open.Comms.push_back(K);
    Open.LaunchedAfter.push_back(Out.size());
    OpenIn[K] = Serial;
  }

  /// An open group of sends and recvs stays open across step \p St.
  void hold(const plan::Step &St) {
    ++Open.HeldAcross;
    if (St.Kind == plan::StepKind::Compute && Open.FirstHeldCompute < 0)
      Open.FirstHeldCompute = int64_t(St.Index);
  }

  static Issue entry(Issue::Kind K, uint32_t Index) {
    Issue I;
    I.K = K;
    I.Index = Index;
    return I;
  }

  /// Issues the open group, if any; \p Cause and \p Until say why here
  /// (for a group held open).
  void flush(Issue::Cause Cause, uint32_t Until) {
    if (Open.Comms.empty())
      return;
    Open.K = Issue::Launch;
    if (Open.HeldAcross || Cause == Issue::AtCommChange) {
      Open.IssuedBy = Cause;
      Open.Until = Until;
    }
    Out.push_back(std::move(Open));
    Open = Issue();
    ++Serial;
    PointToPoint = false;
  }

  const plan::Plan &P;
  std::vector<Issue> Out;
  Issue Open;                ///< launched, not yet issued
  bool PointToPoint = false; ///< Open holds sends and recvs
  /// The plan group of Open's communicator (-1: the world's): a rank is in
  /// one subgroup of each group, so it names the communicator.
  int32_t OpenGroup = -1;
  /// Per comm, the Serial of the group it was launched into: it is in Open
  /// when that is the current one (a wait asks in constant time).
  std::vector<uint32_t> OpenIn;
  uint32_t Serial = 1;
};

} // namespace

std::vector<Issue> issueOrder(const plan::Plan &P, int64_t Rank) {
  return IssueOrderBuilder(P).run(Rank);
}

} // namespace collc::rt::nccl
