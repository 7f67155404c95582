//===- tests/runtime/GroupStoreTest.cpp - A gloo group's rendezvous, in one process -===//
//
// The rank claims and refusals of runtime/gloo/GroupStore.h on a directory
// store (ProbedStore.h), in one process: a claim is the first one's, a
// waiting rank learns a refusal at once and names a peer that ended after
// it claimed its rank (and only one it can see), waits take the group's timeout, and a store that
// cannot be written or that served an earlier run says so; a join that
// Gloo refuses at once is not said to have timed out. The
// same across processes, and on Redis: tests/lit/run/gloo.test (TWICE).
//
//===----------------------------------------------------------------------===//

#include "runtime/gloo/GroupStore.h"
#include "runtime/exec/Timeout.h"
#include "runtime/gloo/GlooDriver.h"
#include "runtime/gloo/GlooStore.h"
#include "runtime/gloo/ProbedStore.h"

#include "llvm/Support/FileSystem.h"

#include "gtest/gtest.h"

#include <gloo/common/error.h>

#include <fstream>
#include <optional>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace collc;
using namespace collc::rt;
using namespace collc::rt::gloo;
using namespace std::chrono;

namespace {

/// A directory store in a directory of its own, removed after.
struct DirectoryStore {
  llvm::SmallString<128> Dir;
  std::shared_ptr<ProbedStore> Store;
  DirectoryStore() {
    EXPECT_FALSE(llvm::sys::fs::createUniqueDirectory("collc-group-store", Dir));
    RendezvousAddress Where;
    Where.How = RendezvousAddress::Kind::File;
    Where.Directory = std::string(Dir);
    llvm::Expected<std::shared_ptr<ProbedStore>> S = openProbedStore(Where);
    if (!S)
      ADD_FAILURE() << llvm::toString(S.takeError());
    else
      Store = std::move(*S);
  }
  ~DirectoryStore() { llvm::sys::fs::remove_directories(Dir); }
};

std::string hostName() {
  char Host[256] = {};
  EXPECT_EQ(gethostname(Host, sizeof(Host) - 1), 0);
  return Host;
}

/// This machine's boot id without dashes, and this process's pid namespace.
std::string thisBoot() {
  std::ifstream In("/proc/sys/kernel/random/boot_id");
  std::string Id, Hex;
  std::getline(In, Id);
  for (char C : Id)
    if (C != '-')
      Hex += C;
  return Hex;
}
std::string thisPidNamespace() {
  struct stat Ns;
  EXPECT_EQ(stat("/proc/self/ns/pid", &Ns), 0);
  return std::to_string(Ns.st_ino);
}

/// A claim as GroupStore writes one (HOST:PID START NONCE BOOT PIDNS), of
/// process \p Pid, by default of this host, boot and pid namespace.
std::string claimOf(long Pid, const std::string &Boot = thisBoot(),
                    const std::string &PidNs = thisPidNamespace()) {
  return hostName() + ":" + std::to_string(Pid) + " 0 cd " + Boot + " " + PidNs;
}

/// What claimRank or wait threw, as "JoinRefused: ...", "StoreWriteFailed:
/// ...", "IoException: ..." or "none".
template <typename F> std::string thrown(F &&Do) {
  try {
    Do();
  } catch (const JoinRefused &X) {
    return std::string("JoinRefused: ") + X.what();
  } catch (const StoreWriteFailed &X) {
    return std::string("StoreWriteFailed: ") + X.what();
  } catch (const ::gloo::IoException &X) {
    return std::string("IoException: ") + X.what();
  }
  return "none";
}

TEST(GroupStore, AClaimIsTheFirstOnesAndTheOthersLearnWhatItHolds) {
  DirectoryStore D;
  ASSERT_TRUE(D.Store);
  ProbedStore::Claim First = D.Store->claim("k", "first");
  EXPECT_TRUE(First.Set);
  ProbedStore::Claim Second = D.Store->claim("k", "second");
  EXPECT_FALSE(Second.Set);
  EXPECT_EQ(Second.Holder, "first");
  EXPECT_EQ(D.Store->claimed("k"), std::optional<std::string>("first"));
  EXPECT_EQ(D.Store->claimed("other"), std::nullopt);
  // Nothing is left aside: the directory holds the claim alone.
  std::error_code EC;
  int Files = 0;
  for (llvm::sys::fs::directory_iterator I(D.Dir, EC), E; I != E && !EC; I.increment(EC))
    ++Files;
  EXPECT_EQ(Files, 1);
}

TEST(GroupStore, AWaitingRankLearnsARefusalAtOnce) {
  DirectoryStore D;
  ASSERT_TRUE(D.Store);
  // Without the refusal it would wait 60 s, and end in a timeout.
  GroupStore Holder(*D.Store, "g", seconds(60));
  ASSERT_EQ(thrown([&] { Holder.claimRank(0, 2); }), "none");
  // The same rank claimed again (here by this process itself), while the
  // holder waits for a peer that never comes.
  std::string Again;
  std::thread Second([&] {
    std::this_thread::sleep_for(milliseconds(200));
    GroupStore Other(*D.Store, "g", minutes(10));
    Again = thrown([&] { Other.claimRank(0, 2); });
  });
  auto Start = steady_clock::now();
  std::string Waited = thrown([&] { Holder.wait({"never"}); });
  Second.join();
  EXPECT_LT(steady_clock::now() - Start, seconds(50));
  EXPECT_EQ(Again.rfind("JoinRefused: this process (", 0), 0u) << Again;
  EXPECT_NE(Again.find(") already joined this group as rank 0"), std::string::npos) << Again;
  EXPECT_EQ(Waited, Again);
  // A rank that comes later is refused before it waits, whatever its rank.
  GroupStore Late(*D.Store, "g", minutes(10));
  EXPECT_EQ(thrown([&] { Late.claimRank(1, 2); }),
            "JoinRefused: the group was refused: " + Again.substr(strlen("JoinRefused: ")));
}

TEST(GroupStore, AWaitTakesTheGroupsTimeout) {
  DirectoryStore D;
  ASSERT_TRUE(D.Store);
  GroupStore G(*D.Store, "g", milliseconds(100));
  auto Start = steady_clock::now();
  std::string Waited = thrown([&] { G.wait({"never"}); });
  auto Took = steady_clock::now() - Start;
  EXPECT_EQ(Waited, "IoException: Wait timeout for key(s): never");
  EXPECT_GE(Took, milliseconds(100));
  // Not Gloo's default of 30 s (generous: a loaded host).
  EXPECT_LT(Took, seconds(20));
}

TEST(GroupStore, AJoinsWaitsShareOneDeadline) {
  // A join waits many times (a key per peer, then the pairs): each wait
  // took the whole timeout, and a join of 4 ranks lasted 5 timeouts.
  DirectoryStore D;
  ASSERT_TRUE(D.Store);
  GroupStore G(*D.Store, "g", milliseconds(300));
  EXPECT_EQ(thrown([&] { G.wait({"first"}); }), "IoException: Wait timeout for key(s): first");
  EXPECT_TRUE(G.pastDeadline());
  auto Start = steady_clock::now();
  EXPECT_EQ(thrown([&] { G.wait({"second"}); }), "IoException: Wait timeout for key(s): second");
  EXPECT_LT(steady_clock::now() - Start, milliseconds(250));
}

TEST(GroupStore, WhatTheStoreHoldsIsEscapedInMessages) {
  // Bytes that another process wrote into the store: a terminal's escape
  // sequences reached stderr as they were, and a NUL cut the message.
  using namespace std::string_literals;
  std::string Hostile = "\x1b]0;owned\x07\x1b[2J\0after"s;
  {
    DirectoryStore D;
    ASSERT_TRUE(D.Store);
    ASSERT_TRUE(D.Store->claim("g/collc.claim.1", Hostile).Set);
    GroupStore G(*D.Store, "g", minutes(10));
    std::string Refused = thrown([&] { G.claimRank(1, 2); });
    EXPECT_NE(Refused.find("(\"\\x1b]0;owned\\x07\\x1b[2J\\x00after\" at " +
                           D.Store->where("g/collc.claim.1") + ")"),
              std::string::npos)
        << Refused;
  }
  {
    DirectoryStore D;
    ASSERT_TRUE(D.Store);
    GroupStore G(*D.Store, "g", minutes(10));
    ASSERT_EQ(thrown([&] { G.claimRank(0, 2); }), "none");
    ASSERT_TRUE(D.Store->claim("g/collc.refused", Hostile).Set);
    EXPECT_EQ(thrown([&] { G.wait({"never"}); }),
              "JoinRefused: \\x1b]0;owned\\x07\\x1b[2J\\x00after");
  }
  {
    DirectoryStore D;
    ASSERT_TRUE(D.Store);
    ASSERT_TRUE(D.Store->claim("g/collc.size", "2" + Hostile).Set);
    GroupStore G(*D.Store, "g", minutes(10));
    std::string Refused = thrown([&] { G.claimRank(1, 2); });
    EXPECT_EQ(Refused.rfind("JoinRefused: the rendezvous directory holds a group size that "
                            "collc did not write (\"2\\x1b]0;owned\\x07\\x1b[2J\\x00after\" "
                            "at ",
                            0),
              0u)
        << Refused;
  }
}

TEST(GroupStore, ARankThatCannotTakePartIsBlamedAtOnce) {
  DirectoryStore D;
  ASSERT_TRUE(D.Store);
  GroupStore Waiting(*D.Store, "g", seconds(60));
  ASSERT_EQ(thrown([&] { Waiting.claimRank(0, 2); }), "none");
  GroupStore Failed(*D.Store, "g", seconds(60));
  Failed.postFailure(1, "rank 1 cannot take part: its reason");
  auto Start = steady_clock::now();
  try {
    Waiting.wait({"never"});
    ADD_FAILURE() << "the wait ended without the refusal";
  } catch (const PeerGone &X) {
    ADD_FAILURE() << "rank 1 said to be gone: " << X.what();
  } catch (const JoinRefused &X) {
    EXPECT_EQ(std::string(X.what()), "rank 1 cannot take part: its reason");
    EXPECT_EQ(X.Blamed, std::optional<size_t>(1));
  }
  EXPECT_LT(steady_clock::now() - Start, seconds(50));
}

TEST(GroupStore, AClaimByAProcessThatIsGoneIsAnEarlierRun) {
  DirectoryStore D;
  ASSERT_TRUE(D.Store);
  // Linux's pids stay below 2^22.
  ASSERT_TRUE(D.Store->claim("g/collc.claim.3", claimOf(99999999)).Set);
  GroupStore G(*D.Store, "g", minutes(10));
  EXPECT_EQ(thrown([&] { G.claimRank(3, 4); }),
            "JoinRefused: the rendezvous directory holds the keys of an earlier run (give each "
            "run a new or empty directory; rank 3 was claimed there by process " +
                hostName() + ":99999999, which is not running)");
}

/// A child process that has ended, not yet reaped (a zombie, as a rank
/// SIGKILLed under a launcher is until the launcher waits for it).
struct EndedChild {
  pid_t Pid = fork();
  EndedChild() {
    if (Pid == 0)
      _exit(0);
    // Until it is a zombie (its state in /proc/PID/stat is Z).
    for (int I = 0; I != 5000 && state() != 'Z'; ++I)
      std::this_thread::sleep_for(milliseconds(2));
  }
  ~EndedChild() { waitpid(Pid, nullptr, 0); }
  char state() const {
    std::ifstream Stat("/proc/" + std::to_string(Pid) + "/stat");
    std::string Text((std::istreambuf_iterator<char>(Stat)), {});
    size_t Paren = Text.rfind(')');
    return Paren == std::string::npos || Paren + 2 >= Text.size() ? '?' : Text[Paren + 2];
  }
};

/// Rank 0 of a group of \p Size in a directory store, with rank \p Ended
/// claimed by a process that has ended; rank 0 waits up to 60 s.
struct WaitingBesideAnEndedPeer {
  DirectoryStore D;
  std::optional<GroupStore> Waiting;
  EndedChild Ended;
  WaitingBesideAnEndedPeer(size_t Size, size_t EndedRank) {
    if (!D.Store)
      return;
    Waiting.emplace(*D.Store, "g", seconds(60));
    EXPECT_EQ(thrown([&] { Waiting->claimRank(0, Size); }), "none");
    EXPECT_EQ(Ended.state(), 'Z');
    EXPECT_TRUE(
        D.Store->claim("g/collc.claim." + std::to_string(EndedRank), claimOf(Ended.Pid)).Set);
  }
};

TEST(GroupStore, AWaitingRankNamesAPeerThatEndedAfterItClaimedItsRank) {
  // Rank 2 claims its rank and is killed before the group forms; rank 1
  // has not come yet. Without the look at the claims this waits 60 s.
  WaitingBesideAnEndedPeer W(3, 2);
  ASSERT_TRUE(W.Waiting);
  DirectoryStore &D = W.D;
  EndedChild &Killed = W.Ended;
  GroupStore &Waiting = *W.Waiting;
  std::string Expected = "JoinRefused: rank 2 (process " + hostName() + ":" +
                         std::to_string(Killed.Pid) +
                         ") is not running: it claimed its rank and ended before the group formed "
                         "(killed, or failed), or the rendezvous directory holds the keys of an "
                         "earlier run (give each run a new or empty directory)";
  auto Start = steady_clock::now();
  std::string Waited;
  try {
    Waiting.wait({"never"});
  } catch (const PeerGone &X) {
    EXPECT_EQ(X.Rank, 2u);
    Waited = std::string("JoinRefused: ") + X.what();
  }
  EXPECT_LT(steady_clock::now() - Start, seconds(50));
  EXPECT_EQ(Waited, Expected);
  // Posted as the group's refusal: a rank that comes now is refused at
  // once, with the same rank to blame.
  GroupStore Late(*D.Store, "g", minutes(10));
  try {
    Late.claimRank(1, 3);
    ADD_FAILURE() << "rank 1 joined a group whose rank 2 is gone";
  } catch (const PeerGone &X) {
    EXPECT_EQ(X.Rank, 2u);
    EXPECT_EQ(std::string(X.what()),
              "the group was refused: " + Expected.substr(strlen("JoinRefused: ")));
  }
}

TEST(GroupStore, ARankKnownFromTheParentGroupIsNamedThoughItNeverClaimedHere) {
  // A split's member killed after the parent's join and before it claimed
  // its rank in the child's: named at once (it was named only at the
  // child's deadline, past twice the timeout of the shm kill script).
  DirectoryStore D;
  ASSERT_TRUE(D.Store);
  EndedChild Killed;
  ASSERT_EQ(Killed.state(), 'Z');
  std::optional<ClaimHolder> Holder = ClaimHolder::parse(claimOf(Killed.Pid));
  ASSERT_TRUE(Holder);
  ASSERT_TRUE(Holder->seenFromHere());
  GroupStore Waiting(*D.Store, "child", seconds(60));
  Waiting.watchKnownPeers({{1, *Holder}});
  EXPECT_EQ(thrown([&] { Waiting.claimRank(0, 2); }), "none");
  auto Start = steady_clock::now();
  std::optional<size_t> Blamed;
  std::string Why;
  try {
    Waiting.wait({"never"});
  } catch (const PeerGone &X) {
    Blamed = X.Rank;
    Why = X.what();
  }
  EXPECT_LT(steady_clock::now() - Start, seconds(50));
  EXPECT_EQ(Blamed, std::optional<size_t>(1));
  EXPECT_EQ(Why, "rank 1 (process " + hostName() + ":" + std::to_string(Killed.Pid) +
                     ") is not running: it ended before it joined this group (killed, or "
                     "failed), after it joined the group this one was split from");
}

TEST(GroupStore, ARankKnownFromTheParentGroupThatRunsIsWaitedFor) {
  // This process is alive: its claim from the parent is no reason to fail.
  DirectoryStore D;
  ASSERT_TRUE(D.Store);
  GroupStore Waiting(*D.Store, "child", milliseconds(300));
  Waiting.watchKnownPeers({{1, ClaimHolder::thisProcess()}});
  EXPECT_EQ(thrown([&] { Waiting.claimRank(0, 2); }), "none");
  EXPECT_EQ(thrown([&] { Waiting.wait({"never"}); }).rfind("IoException: ", 0), 0u);
}

TEST(GroupStore, ALargeGroupsClaimsAreReadOverSeveralLooks) {
  // 16 claims not yet read a look: rank 90 of 100 (the others not come
  // yet) is found after a few looks, not missed.
  WaitingBesideAnEndedPeer W(100, 90);
  ASSERT_TRUE(W.Waiting);
  std::string Waited = thrown([&] { W.Waiting->wait({"never"}); });
  EXPECT_EQ(Waited.rfind("JoinRefused: rank 90 (process ", 0), 0u) << Waited;
}

TEST(GroupStore, APostedRefusalIsTheOneReportedThoughAPeerIsGone) {
  // A rank refused for a reason of its own posts it and exits: the reason
  // is what its peers report, not that it is gone.
  WaitingBesideAnEndedPeer W(3, 2);
  ASSERT_TRUE(W.Waiting);
  ASSERT_TRUE(
      W.D.Store->claim("g/collc.refused", "its ranks were started with different sizes").Set);
  EXPECT_EQ(thrown([&] { W.Waiting->wait({"never"}); }),
            "JoinRefused: its ranks were started with different sizes");
}

TEST(GroupStore, APeerWhosePidCannotBeSeenFromHereIsNotTakenForGone) {
  // The same host name, with a pid that is gone here, but: another pid
  // namespace (a container on the host's network), another boot (another
  // machine with the same host name: cloned VMs, `localhost`), or either
  // unknown. Its pid means nothing here: the wait ends at its timeout.
  EndedChild Other;
  std::string Boot = thisBoot(), Ns = thisPidNamespace();
  for (const std::string &Claim :
       {claimOf(Other.Pid, Boot, Ns + "1"), claimOf(Other.Pid, std::string(32, 'a'), Ns),
        claimOf(Other.Pid, "0", Ns), claimOf(Other.Pid, Boot, "0")}) {
    DirectoryStore D;
    ASSERT_TRUE(D.Store);
    GroupStore Waiting(*D.Store, "g", milliseconds(300));
    ASSERT_EQ(thrown([&] { Waiting.claimRank(0, 2); }), "none");
    ASSERT_TRUE(D.Store->claim("g/collc.claim.1", Claim).Set);
    EXPECT_EQ(thrown([&] { Waiting.wait({"never"}); }),
              "IoException: Wait timeout for key(s): never")
        << Claim;
  }
}

TEST(GroupStore, ARankStartedWithAnotherSizeIsRefused) {
  DirectoryStore D;
  ASSERT_TRUE(D.Store);
  GroupStore First(*D.Store, "g", minutes(10));
  ASSERT_EQ(thrown([&] { First.claimRank(0, 2); }), "none");
  GroupStore Second(*D.Store, "g", minutes(10));
  std::string Refused = thrown([&] { Second.claimRank(1, 3); });
  EXPECT_EQ(Refused.rfind("JoinRefused: its ranks were started with different sizes: 2 (the rank "
                          "that came first) and 3 (process ",
                          0),
            0u)
      << Refused;
  EXPECT_NE(Refused.find(", rank 1)"), std::string::npos) << Refused;
}

TEST(GroupStore, AClaimCollcDidNotWriteIsSaidToBeOne) {
  DirectoryStore D;
  ASSERT_TRUE(D.Store);
  ASSERT_TRUE(D.Store->claim("g/collc.claim.1", "garbage").Set);
  GroupStore G(*D.Store, "g", minutes(10));
  std::string Refused = thrown([&] { G.claimRank(1, 2); });
  EXPECT_EQ(Refused.rfind("JoinRefused: the rendezvous directory holds a claim of rank 1 that "
                          "collc did not write (\"garbage\" at " +
                              D.Store->where("g/collc.claim.1") + ")",
                          0),
            0u)
      << Refused;
}

TEST(GroupStore, AStoreThatCannotBeWrittenSaysSo) {
  DirectoryStore D;
  ASSERT_TRUE(D.Store);
  ASSERT_FALSE(llvm::sys::fs::remove_directories(D.Dir));
  GroupStore G(*D.Store, "g", minutes(10));
  std::string Claimed = thrown([&] { G.claimRank(0, 2); });
  EXPECT_EQ(Claimed.rfind("StoreWriteFailed: cannot create '", 0), 0u) << Claimed;
  EXPECT_NE(Claimed.find("No such file or directory"), std::string::npos) << Claimed;
}

} // namespace

namespace {

/// A rank's join that Gloo refuses at once is not said to have timed out:
/// here rank 1 (this test, through the group's store) posts one byte where
/// Gloo's transport writes its addresses, and rank 0's join fails when
/// Gloo parses it. It said "could not join ... within 20000 ms" after a
/// moment, as if a peer had not come. As rank 0 the join waits for that key
/// alone (Gloo reads other ranks' keys only for ranks below its own). The
/// rendezvous is the process's: ctest runs each test in a process of its
/// own.
TEST(GlooJoin, AnAddressGlooDidNotWriteIsSaidToBeOneNotATimeout) {
  DirectoryStore D;
  ASSERT_TRUE(D.Store);
  RendezvousAddress Where;
  Where.How = RendezvousAddress::Kind::File;
  Where.Directory = std::string(D.Dir);
  if (llvm::Error E = configureRendezvous(Where))
    FAIL() << llvm::toString(std::move(E));
  // The driver's store prefix for group "bad" (GlooDriver.cpp).
  GroupStore Peer(*D.Store, "collc_bad", seconds(600));
  ASSERT_EQ(thrown([&] { Peer.claimRank(1, 2); }), "none");
  Peer.set("1", std::vector<char>{'x'});
  DefaultTimeoutScope Limit(seconds(20)); // the join's
  auto Start = steady_clock::now();
  llvm::Expected<GlooDriver::Communicator> C = GlooDriver::join("bad", 2, 0);
  ASSERT_FALSE(bool(C));
  EXPECT_LT(steady_clock::now() - Start, seconds(15));
  ErrorKind Kind = ErrorKind::Timeout;
  std::string Text;
  llvm::handleAllErrors(C.takeError(), [&](const RuntimeError &R) {
    Kind = R.kind();
    Text = R.message();
  });
  EXPECT_EQ(Kind, ErrorKind::Backend) << Text;
  EXPECT_EQ(Text.find("within"), std::string::npos) << Text;
  EXPECT_NE(Text.find("rank 0 of 2 could not join gloo group 'bad': a peer's address in the "
                      "rendezvous is not one that Gloo wrote"),
            std::string::npos)
      << Text;
}

/// A join whose peer never came (killed before it claimed its rank, or
/// never started) names that rank at its timeout: the fault script's
/// survivors (tests/launch/shm_kill_runs.py) could name no one.
TEST(GlooJoin, ARankThatNeverCameIsNamedAtTheTimeout) {
  DirectoryStore D;
  ASSERT_TRUE(D.Store);
  RendezvousAddress Where;
  Where.How = RendezvousAddress::Kind::File;
  Where.Directory = std::string(D.Dir);
  if (llvm::Error E = configureRendezvous(Where))
    FAIL() << llvm::toString(std::move(E));
  DefaultTimeoutScope Limit(milliseconds(500)); // the join's
  llvm::Expected<GlooDriver::Communicator> C = GlooDriver::join("alone", 3, 0);
  ASSERT_FALSE(bool(C));
  ErrorKind Kind = ErrorKind::Backend;
  int64_t Peer = -2;
  std::string Text;
  llvm::handleAllErrors(C.takeError(), [&](const RuntimeError &R) {
    Kind = R.kind();
    Peer = R.peer();
    Text = R.message();
  });
  EXPECT_EQ(Kind, ErrorKind::Timeout) << Text;
  EXPECT_EQ(Peer, -1) << Text; // two absent: no one peer
  EXPECT_NE(Text.find("rank 0 of 3 could not join gloo group 'alone' within 500 ms (every rank "
                      "must join; ranks 1, 2 never came; gloo: "),
            std::string::npos)
      << Text;

  // One absent: named as the error's peer.
  GroupStore Peer1(*D.Store, "collc_pair", seconds(600));
  ASSERT_EQ(thrown([&] { Peer1.claimRank(1, 3); }), "none");
  llvm::Expected<GlooDriver::Communicator> C2 = GlooDriver::join("pair", 3, 0);
  ASSERT_FALSE(bool(C2));
  llvm::handleAllErrors(C2.takeError(), [&](const RuntimeError &R) {
    Peer = R.peer();
    Text = R.message();
  });
  EXPECT_EQ(Peer, 2) << Text;
  EXPECT_NE(Text.find("(every rank must join; rank 2 never came; gloo: "), std::string::npos)
      << Text;
}

} // namespace
