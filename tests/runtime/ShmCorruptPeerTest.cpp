//===- tests/runtime/ShmCorruptPeerTest.cpp - A hostile peer in the segment -===//
//
// The shared segment is untrusted input: a team member writes what it
// likes into its slot, its channels and the team's header. Here member 1
// of a team of two plays such a peer, writing the segment directly (its
// post with an op no one knows, references outside every arena or past
// one, counts that overflow, counters far ahead, an oversized channel
// piece, a failure record of garbage), while member 0 runs a collective.
// Member 0 must fail with an error that names rank 1 and says what was
// wrong, and read or write nothing outside the segment and its own
// operands (the sanitizer builds run these).
//
//===----------------------------------------------------------------------===//

#include "tests/runtime/ShmTestTeams.h"

#include "runtime/shm/SharedArena.h"

#include "llvm/Support/FormatVariadic.h"

#include <cstring>
#include <numeric>

using namespace collc;
using namespace collc::rt;
using namespace collc::rt::shm;
using local::OpCode;

namespace {

constexpr std::chrono::milliseconds Short{2000};

/// Member 1's slot and ring, as the hostile member writes them.
struct Hostile {
  ShmTeam &Team;
  MemberSlot &slot(uint32_t R) const {
    return *reinterpret_cast<MemberSlot *>(Team.base() + Team.layout().slot(R));
  }
  TeamHeader &header() const { return *reinterpret_cast<TeamHeader *>(Team.base()); }
  /// Posts \p P for collective \p Seq and arrives there.
  void post(uint64_t Seq, const SharedPost &P) const {
    MemberSlot &S = slot(1);
    S.Posts[Seq & 1] = P;
    S.Arrived.store(Seq, std::memory_order_release);
    ring();
  }
  void ring() const { local::ring(header().Bell, local::BellScope::Shared); }
};

/// A post for an f32 all_reduce of \p Count from staging, as an honest
/// member 1 would write it.
SharedPost allReducePost(uint64_t Count) {
  SharedPost P;
  P.Code = uint8_t(OpCode::AllReduce);
  P.Elem = uint8_t(ElemType::F32);
  P.Op = uint8_t(ReduceOp::Sum);
  P.Flags = HasSource | PostFlags::Staged;
  P.Count = Count;
  return P;
}

/// Runs \p Honest on member 0 and \p Corrupt on member 1 of a fresh team,
/// and returns member 0's error.
ErrorParts againstHostile(const std::string &Name,
                          llvm::function_ref<llvm::Error(ShmTeam &)> Honest,
                          llvm::function_ref<void(const Hostile &)> Corrupt) {
  ErrorParts Got{ErrorKind::Backend, "(succeeded)", -1};
  test::onTeamOfThreads(2, Name, [&](int R, ShmTeam &T) {
    if (R == 1)
      return Corrupt(Hostile{T});
    llvm::Error E = Honest(T);
    if (E)
      Got = test::partsOf(std::move(E));
  });
  return Got;
}

/// An f32 sum of \p Count elements out of private memory on member 0.
llvm::Error allReduce(ShmTeam &T, uint64_t Count) {
  std::vector<float> In(Count, 1.0f), Out(Count);
  TeamOp Op;
  Op.Head = {OpCode::AllReduce, ElemType::F32, ReduceOp::Sum, 1.0, Count, -1};
  Op.Src = reinterpret_cast<const char *>(In.data());
  Op.Dst = reinterpret_cast<char *>(Out.data());
  local::WaitPolicy W;
  W.Timeout = Short;
  return T.collective(Op, W);
}

TEST(ShmCorruptPeer, AnOpNoOneKnowsIsNamed) {
  ErrorParts E = againstHostile(
      "corrupt.op", [](ShmTeam &T) { return allReduce(T, 1024); },
      [](const Hostile &H) {
        SharedPost P = allReducePost(1024);
        P.Code = 200;
        H.post(1, P);
      });
  EXPECT_EQ(E.Peer, 1) << E.Text;
  EXPECT_NE(E.Text.find("rank 1 posted op 200"), std::string::npos) << E.Text;
  EXPECT_NE(E.Text.find("a corrupt peer"), std::string::npos) << E.Text;
}

TEST(ShmCorruptPeer, AnotherCountIsAMismatchBothFinish) {
  ErrorParts E = againstHostile(
      "corrupt.count", [](ShmTeam &T) { return allReduce(T, 1024); },
      [](const Hostile &H) {
        H.post(1, allReducePost(1025));
        // Finishes the refused collective as an honest peer would.
        H.slot(1).Done.store(1, std::memory_order_release);
        H.ring();
      });
  EXPECT_EQ(E.Kind, ErrorKind::Mismatch) << E.Text;
  EXPECT_EQ(E.Peer, 1) << E.Text;
  EXPECT_NE(E.Text.find("rank 0 has 1024 elements, rank 1 has 1025"), std::string::npos)
      << E.Text;
}

TEST(ShmCorruptPeer, AReferenceToAnArenaNoOneMapsIsNamed) {
  ErrorParts E = againstHostile(
      "corrupt.arena", [](ShmTeam &T) { return allReduce(T, 1024); },
      [](const Hostile &H) {
        SharedPost P = allReducePost(1024);
        P.Flags = HasSource; // by reference
        P.Src = {0x1234567, 0, 4096};
        P.Dst = {0x1234567, 4096, 4096};
        H.post(1, P);
      });
  EXPECT_EQ(E.Peer, 1) << E.Text;
  EXPECT_NE(E.Text.find("which not every member of the team maps"), std::string::npos) << E.Text;
}

TEST(ShmCorruptPeer, AReferencePastTheArenaIsNamed) {
  // An arena this process maps (both members are this process).
  llvm::Expected<SharedSegment> Seg = SharedSegment::create(1 << 20, "test arena");
  ASSERT_TRUE(bool(Seg)) << llvm::toString(Seg.takeError());
  SharedArena Arena(0x5eed, std::move(*Seg), {int32_t(getpid())}, 0, 1 << 20);
  for (uint64_t Offset : {uint64_t(1 << 20) - 16, ~uint64_t(0) - 8}) {
    ErrorParts E = againstHostile(
        llvm::formatv("corrupt.past.{0}", Offset), [](ShmTeam &T) { return allReduce(T, 1024); },
        [&](const Hostile &H) {
          SharedPost P = allReducePost(1024);
          P.Flags = HasSource;
          P.Src = {Arena.id(), Offset, 4096};
          P.Dst = {Arena.id(), 0, 4096};
          H.post(1, P);
        });
    EXPECT_EQ(E.Peer, 1) << E.Text;
    EXPECT_NE(E.Text.find(llvm::formatv("posted its source at bytes [{0}, +4096) of shared "
                                        "arena 0x5eed, which holds 1048576 bytes",
                                        Offset)
                              .str()),
              std::string::npos)
        << E.Text;

  }
}

TEST(ShmCorruptPeer, AllToAllVCountsThatOverflowAreNamed) {
  ErrorParts E = againstHostile(
      "corrupt.counts",
      [](ShmTeam &T) {
        std::vector<uint64_t> Sends = {3, 5}, Recvs = {3, 7};
        std::vector<float> In(8), Out(10);
        TeamOp Op;
        Op.Head = {OpCode::AllToAllV, ElemType::F32, ReduceOp::Sum, 1.0, 0, -1};
        Op.Src = reinterpret_cast<const char *>(In.data());
        Op.Dst = reinterpret_cast<char *>(Out.data());
        Op.SendCounts = Sends;
        Op.RecvCounts = Recvs;
        local::WaitPolicy W;
        W.Timeout = Short;
        return T.collective(Op, W);
      },
      [](const Hostile &H) {
        SharedPost P;
        P.Code = uint8_t(OpCode::AllToAllV);
        P.Elem = uint8_t(ElemType::F32);
        P.Flags = HasSource | PostFlags::Staged;
        P.Count = 7;
        // Its sends: 7 to member 0 (as member 0 expects), then 2^64 - 1.
        uint64_t *C = reinterpret_cast<uint64_t *>(H.Team.base() + H.Team.layout().counts(1, 1));
        uint64_t Counts[4] = {7, ~uint64_t(0), 5, 0};
        std::memcpy(C, Counts, sizeof(Counts));
        H.post(1, P);
      });
  EXPECT_EQ(E.Peer, 1) << E.Text;
  EXPECT_NE(E.Text.find("rank 1's counts overflow"), std::string::npos) << E.Text;
}

TEST(ShmCorruptPeer, CountersFarAheadReadAsAMismatch) {
  ErrorParts E = againstHostile(
      "corrupt.counters", [](ShmTeam &T) { return allReduce(T, 1024); },
      [](const Hostile &H) {
        // Arrived and done at every collective there will ever be, with
        // nothing posted.
        H.slot(1).Boxes[1].Seq.store(~uint64_t(0));
        H.slot(1).Done.store(~uint64_t(0));
        H.slot(1).Arrived.store(~uint64_t(0));
        H.ring();
      });
  EXPECT_EQ(E.Kind, ErrorKind::Mismatch) << E.Text;
  EXPECT_EQ(E.Peer, 1) << E.Text;
}

TEST(ShmCorruptPeer, AMailboxOfATypeNoOneKnowsIsNamed) {
  ErrorParts E = againstHostile(
      "corrupt.mailbox", [](ShmTeam &T) { return allReduce(T, 2); },
      [](const Hostile &H) {
        Mailbox &B = H.slot(1).Boxes[1];
        B.Code = uint8_t(OpCode::AllReduce);
        B.Elem = 77;
        B.Count = 2;
        B.Seq.store(1, std::memory_order_release);
        H.ring();
      });
  EXPECT_EQ(E.Peer, 1) << E.Text;
  EXPECT_NE(E.Text.find("type 77"), std::string::npos) << E.Text;
}

TEST(ShmCorruptPeer, AnOversizedChannelPieceIsNamed) {
  ErrorParts E = againstHostile(
      "corrupt.channel",
      [](ShmTeam &T) {
        std::vector<char> Out(100);
        local::WaitPolicy W;
        W.Timeout = Short;
        return T.recv(1, Out.data(), Out.size(), ElemType::U8, W);
      },
      [](const Hostile &H) {
        auto &C =
            *reinterpret_cast<ChannelHead *>(H.Team.base() + H.Team.layout().channel(1, 0));
        C.MessageBytes = 100;
        C.PieceBytes = uint64_t(1) << 40;
        C.Elem = uint8_t(ElemType::U8);
        C.Posted.store(1, std::memory_order_release);
        H.ring();
      });
  EXPECT_EQ(E.Peer, 1) << E.Text;
  EXPECT_NE(E.Text.find("as 1099511627776 bytes of a 100-byte message; 100 of 100 were due"),
            std::string::npos)
      << E.Text;
}

TEST(ShmCorruptPeer, AFailureRecordOfGarbageIsBounded) {
  ErrorParts E = againstHostile(
      "corrupt.failure", [](ShmTeam &T) { return allReduce(T, 1024); },
      [](const Hostile &H) {
        TeamHeader &Hd = H.header();
        Hd.FailKind = 99;
        Hd.FailRank = 12345;
        std::memset(Hd.FailWhy, 'A', sizeof(Hd.FailWhy)); // no terminator
        Hd.FailState.store(2, std::memory_order_release);
        H.ring();
      });
  EXPECT_EQ(E.Kind, ErrorKind::Broken) << E.Text;
  EXPECT_EQ(E.Peer, -1) << "a rank no member has is not blamed";
  EXPECT_NE(E.Text.find(std::string(sizeof(TeamHeader::FailWhy), 'A')), std::string::npos);
  EXPECT_EQ(E.Text.find(std::string(sizeof(TeamHeader::FailWhy) + 1, 'A')), std::string::npos)
      << "the record is read no further than its size";
}

TEST(ShmCorruptPeer, ASilentMemberIsNamedAtTheTimeout) {
  ErrorParts E = againstHostile(
      "corrupt.silent", [](ShmTeam &T) { return allReduce(T, 1024); }, [](const Hostile &) {});
  EXPECT_EQ(E.Kind, ErrorKind::Timeout) << E.Text;
  EXPECT_EQ(E.Peer, 1) << E.Text;
  EXPECT_NE(E.Text.find("rank 1 of group 'corrupt.silent' did not arrive at all_reduce #1 "
                        "within 2000 ms"),
            std::string::npos)
      << E.Text;
}

} // namespace
