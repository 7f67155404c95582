//===- tests/runtime/ShmPeerLossTest.cpp - A team member's process goes -----===//
//
// A team of two processes: this test's and a child it forks, met through a
// socket pair (the test's own all-gather). The child joins the team and
// then stays out of the collective; the parent kills it (SIGKILL) or stops
// it (SIGSTOP) and runs an all_reduce with a long timeout: it must fail
// well before the timeout, blaming rank 1, saying its process exited or was
// stopped (PeerWatch.h), not merely that it did not arrive.
//
//===----------------------------------------------------------------------===//

#include "tests/runtime/ShmTestTeams.h"

#include "runtime/shm/PeerWatch.h"

#include "llvm/ADT/ScopeExit.h"

#include <csignal>
#include <cstring>

#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace collc;
using namespace collc::rt;
using namespace collc::rt::shm;

namespace {

/// The all-gather of two processes over one end of a socket pair: each
/// sends its words and reads the other's; rank 0's come first.
struct PairGather {
  int Fd;
  int Rank;
  llvm::Expected<std::vector<uint32_t>> operator()(llvm::ArrayRef<uint32_t> Mine) const {
    if (write(Fd, Mine.data(), Mine.size() * 4) != ssize_t(Mine.size() * 4))
      return makeError(ErrorKind::Backend, "pair gather: write");
    std::vector<uint32_t> Theirs(Mine.size());
    size_t Got = 0;
    while (Got < Theirs.size() * 4) {
      ssize_t R = read(Fd, reinterpret_cast<char *>(Theirs.data()) + Got, Theirs.size() * 4 - Got);
      if (R <= 0)
        return makeError(ErrorKind::PeerLost, "pair gather: the peer is gone", 1 - Rank);
      Got += size_t(R);
    }
    std::vector<uint32_t> All(Mine.begin(), Mine.end());
    All.insert(Rank == 0 ? All.end() : All.begin(), Theirs.begin(), Theirs.end());
    return All;
  }
};

llvm::Expected<std::shared_ptr<ShmTeam>> join(const PairGather &G) {
  auto Gather = [&](llvm::ArrayRef<uint32_t> W) { return G(W); };
  llvm::Expected<GroupHosts> H = meetHosts("pair", Gather);
  if (!H)
    return H.takeError();
  return formTeam(*H, "pair", Gather, std::chrono::steady_clock::now() + std::chrono::seconds(30));
}

/// Forks a member 1 that joins the team and waits to be killed; runs
/// \p Lose on its pid, then an all_reduce on member 0; returns its error
/// and how long the all_reduce took.
std::pair<ErrorParts, std::chrono::milliseconds> loseThePeer(void (*Lose)(pid_t)) {
  int Fds[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, Fds), 0);
  pid_t Child = fork();
  if (Child == 0) {
    close(Fds[0]);
    llvm::Expected<std::shared_ptr<ShmTeam>> T = join(PairGather{Fds[1], 1});
    char Done = T ? 'y' : 'n';
    if (!T)
      llvm::consumeError(T.takeError());
    (void)!write(Fds[1], &Done, 1);
    pause(); // until killed
    _exit(0);
  }
  close(Fds[1]);
  auto Reap = llvm::make_scope_exit([&] {
    kill(Child, SIGKILL);
    kill(Child, SIGCONT);
    waitpid(Child, nullptr, 0);
    close(Fds[0]);
  });
  llvm::Expected<std::shared_ptr<ShmTeam>> T = join(PairGather{Fds[0], 0});
  if (!T)
    return {test::partsOf(T.takeError()), {}};
  char Joined = 0;
  EXPECT_EQ(read(Fds[0], &Joined, 1), 1);
  EXPECT_EQ(Joined, 'y');
  Lose(Child);
  std::vector<float> In(4096, 1.0f), Out(4096);
  TeamOp Op;
  Op.Head = {local::OpCode::AllReduce, ElemType::F32, ReduceOp::Sum, 1.0, In.size(), -1};
  Op.Src = reinterpret_cast<const char *>(In.data());
  Op.Dst = reinterpret_cast<char *>(Out.data());
  local::WaitPolicy W;
  W.Timeout = std::chrono::seconds(60);
  auto Start = std::chrono::steady_clock::now();
  llvm::Error E = (*T)->collective(Op, W);
  auto Took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - Start);
  if (!E)
    return {ErrorParts{ErrorKind::Backend, "(succeeded)", -1}, Took};
  return {test::partsOf(std::move(E)), Took};
}

TEST(ShmPeerLoss, AKilledPeerIsNamedAtOnce) {
  auto [E, Took] = loseThePeer([](pid_t P) {
    kill(P, SIGKILL);
    waitpid(P, nullptr, 0);
  });
  EXPECT_EQ(E.Kind, ErrorKind::PeerLost) << E.Text;
  EXPECT_EQ(E.Peer, 1) << E.Text;
  EXPECT_NE(E.Text.find("rank 1 of group 'pair' is gone: its process (pid"), std::string::npos)
      << E.Text;
  EXPECT_NE(E.Text.find("has exited"), std::string::npos) << E.Text;
  EXPECT_LT(Took, std::chrono::seconds(10)) << "not the 60 s timeout";
}

TEST(ShmPeerLoss, AKilledPeerNotYetReapedIsNamed) {
  // A zombie: the process ended, its parent has not waited for it.
  auto [E, Took] = loseThePeer([](pid_t P) { kill(P, SIGKILL); });
  EXPECT_EQ(E.Kind, ErrorKind::PeerLost) << E.Text;
  EXPECT_EQ(E.Peer, 1) << E.Text;
  EXPECT_NE(E.Text.find("has exited"), std::string::npos) << E.Text;
  EXPECT_LT(Took, std::chrono::seconds(10));
}

TEST(ShmPeerLoss, AStoppedPeerIsNamedAfterItsGrace) {
  auto [E, Took] = loseThePeer([](pid_t P) { kill(P, SIGSTOP); });
  EXPECT_EQ(E.Kind, ErrorKind::PeerLost) << E.Text;
  EXPECT_EQ(E.Peer, 1) << E.Text;
  EXPECT_NE(E.Text.find("has been stopped by a signal"), std::string::npos) << E.Text;
  EXPECT_GE(Took, PeerWatch::StopGrace);
  EXPECT_LT(Took, std::chrono::seconds(10));
}

} // namespace
