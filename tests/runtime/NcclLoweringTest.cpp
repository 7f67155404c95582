// The NCCL lowering's invariant, on every example and every rank, without a
// GPU: a rank's calls name only communicators it belongs to; the NCCL calls
// of each communicator agree across its members, call by call (kind, count,
// type, op, root), and every send has its matching receive; no
// communicator is created inside a capture; the warm-up issues exactly the
// captured NCCL calls.
#include "compiler/Compile.h"
#include "runtime/nccl/NcclLowering.h"

#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <map>
#include <tuple>

using namespace collc;
using llvm::Expected;
using namespace collc::rt::nccl;

namespace {

plan::Plan compileExample(llvm::StringRef Name) {
  std::string Path = std::string(COLLC_EXAMPLES_DIR) + "/" + Name.str() + ".coll";
  auto Text = llvm::MemoryBuffer::getFile(Path);
  if (!Text) {
    ADD_FAILURE() << "cannot read " << Path;
    return {};
  }
  Expected<plan::Plan> P = compileProgramText((*Text)->getBuffer(), "", Path);
  if (!P) {
    ADD_FAILURE() << llvm::toString(P.takeError());
    return {};
  }
  return std::move(*P);
}

bool isNccl(CallKind K) { return K >= CallKind::AllReduce && K <= CallKind::Recv; }

/// What members of a communicator must agree on, per collective call.
using CollectiveKey = std::tuple<CallKind, uint64_t, ElemType, ReduceOp, int64_t>;

class NcclLoweringTest : public ::testing::TestWithParam<const char *> {};

TEST_P(NcclLoweringTest, RanksAgreeCallByCall) {
  plan::Plan P = compileExample(GetParam());
  ASSERT_GT(P.World, 0);
  // Communicator key -> the collective sequence of its first member seen.
  std::map<std::string, std::vector<CollectiveKey>> Sequences;
  std::map<std::string, int64_t> SizeOf;
  // (comm key, from, to) -> counts sent, and received, in order.
  std::map<std::tuple<std::string, int64_t, int64_t>, std::vector<uint64_t>> Sent, Received;
  for (int64_t R = 0; R != P.World; ++R) {
    Expected<NcclRankPlan> L = lowerForRank(P, R);
    ASSERT_TRUE(bool(L)) << llvm::toString(L.takeError());
    for (const CommDesc &C : L->Comms) {
      auto [It, New] = SizeOf.insert({C.Key, C.Size});
      EXPECT_EQ(It->second, C.Size) << C.Key;
      EXPECT_GE(C.Rank, 0);
      EXPECT_LT(C.Rank, C.Size) << C.Key << " on rank " << R;
    }
    for (const Call &C : L->Setup)
      EXPECT_FALSE(isNccl(C.Kind)) << "an NCCL collective in the setup of rank " << R;
    for (const Call &C : L->Capture)
      EXPECT_NE(C.Kind, CallKind::CommInit);
    for (const Call &C : L->Step)
      EXPECT_NE(C.Kind, CallKind::CommInit);

    // The warm-up issues the captured NCCL calls, in order.
    std::vector<const Call *> Captured, Warm;
    for (const Call &C : L->Capture)
      if (isNccl(C.Kind))
        Captured.push_back(&C);
    for (const Call &C : L->WarmUp)
      if (isNccl(C.Kind))
        Warm.push_back(&C);
    ASSERT_EQ(Captured.size(), Warm.size()) << "rank " << R;
    for (size_t I = 0; I != Warm.size(); ++I) {
      EXPECT_EQ(Captured[I]->Kind, Warm[I]->Kind);
      EXPECT_EQ(Captured[I]->Count, Warm[I]->Count);
    }

    // Capture and step calls in issue order: graphs are launched in order,
    // each with its captured calls, and eager calls run between them.
    std::vector<const Call *> Issued;
    for (const Call &S : L->Step) {
      if (S.Kind != CallKind::GraphLaunch) {
        Issued.push_back(&S);
        continue;
      }
      for (const Call &C : L->Capture)
        if (C.Graph == S.Graph)
          Issued.push_back(&C);
    }
    std::map<std::string, std::vector<CollectiveKey>> Mine;
    int Depth = 0;
    for (const Call *C : Issued) {
      Depth += C->Kind == CallKind::GroupStart;
      Depth -= C->Kind == CallKind::GroupEnd;
      EXPECT_GE(Depth, 0);
      EXPECT_LE(Depth, 1);
      if (!isNccl(C->Kind))
        continue;
      ASSERT_GE(C->Comm, 0);
      ASSERT_LT(size_t(C->Comm), L->Comms.size());
      const CommDesc &D = L->Comms[C->Comm];
      if (C->Kind == CallKind::Send || C->Kind == CallKind::Recv) {
        // Send/recv need a group or a matching order; here: same counts in
        // the same order per (sender, receiver) pair.
        EXPECT_GE(C->Peer, 0);
        EXPECT_LT(C->Peer, D.Size);
        bool IsSend = C->Kind == CallKind::Send;
        auto Key = IsSend ? std::make_tuple(D.Key, D.Rank, C->Peer)
                          : std::make_tuple(D.Key, C->Peer, D.Rank);
        (IsSend ? Sent : Received)[Key].push_back(C->Count);
        continue;
      }
      Mine[D.Key].push_back({C->Kind, C->Count, C->Elem, C->Op,
                             C->Kind == CallKind::Broadcast ? C->Peer : -1});
    }
    EXPECT_EQ(Depth, 0);
    for (auto &[Key, Seq] : Mine) {
      auto [It, New] = Sequences.insert({Key, Seq});
      if (!New) {
        EXPECT_EQ(It->second, Seq) << "rank " << R << " disagrees on communicator " << Key;
      }
    }
  }
  EXPECT_EQ(Sent, Received);
}

INSTANTIATE_TEST_SUITE_P(Examples, NcclLoweringTest,
                         ::testing::Values("gpt2_ddp", "llama2_7b_fsdp", "moe_alltoallv",
                                           "megatron_tp2_pp4"));

TEST(NcclLowering, RefusesARankOutsideTheWorld) {
  plan::Plan P = compileExample("gpt2_ddp");
  Expected<NcclRankPlan> L = lowerForRank(P, 8);
  ASSERT_FALSE(bool(L));
  EXPECT_NE(llvm::toString(L.takeError()).find("rank 8 is not in 0..7"), std::string::npos);
}

TEST(NcclLowering, EveryElementTypeAndOpHasANcclName) {
  for (ElemType T : {ElemType::F32, ElemType::F16, ElemType::BF16, ElemType::F64, ElemType::I8,
                     ElemType::U8, ElemType::I32, ElemType::U32, ElemType::I64, ElemType::U64,
                     ElemType::F8E4M3, ElemType::F8E5M2})
    EXPECT_TRUE(ncclTypeName(T).startswith("ncclFloat") || ncclTypeName(T).startswith("ncclInt") ||
                ncclTypeName(T).startswith("ncclUint") || ncclTypeName(T) == "ncclBfloat16")
        << elemTypeName(T).str();
  EXPECT_EQ(ncclOpName(ReduceOp::Avg), "ncclAvg");
}

// A runtime all_to_all_v whose input is a zero-copy view (the output of an
// all_reduce bucket): its sends point into the buffer and name no tensor,
// so the row size travels with the call.
TEST(NcclLowering, RuntimeAllToAllVOfAViewKnowsItsRows) {
  Expected<plan::Plan> P = compileProgramText(R"(program @viewa2av world(2) {
  group @ep = world
  %a = compute @a : f32[64, 8]
  %b = compute @b : f32[32, 8]
  %c = compute @route : i64[2]
  %ra = all_reduce sum %a in @ep
  %rb = all_reduce sum %b in @ep
  %v = all_to_all_v %ra in @ep splits %c : f32[64, 8]
  compute @use(%v, %rb)
}
)");
  ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
  Expected<NcclRankPlan> L = lowerForRank(*P, 0);
  ASSERT_TRUE(bool(L)) << llvm::toString(L.takeError());
  unsigned Sends = 0, Recvs = 0;
  std::vector<uint64_t> Rows = {3, 5};
  for (const Call &C : L->Step) {
    if (!C.CountAtRunTime)
      continue;
    const Ref &R = C.Kind == CallKind::Send ? C.SendBuf : C.RecvBuf;
    if (C.Kind == CallKind::Send) {
      ++Sends;
      EXPECT_EQ(R.Tensor, -1) << "the input is a view of an all_reduce bucket";
      EXPECT_GE(R.Buffer, 0);
    } else {
      ++Recvs;
      EXPECT_GE(R.Tensor, 0);
    }
    EXPECT_EQ(C.RowElems, 8u);
    RuntimeSlice S = runtimeSlice(C, Rows);
    EXPECT_EQ(S.Offset, C.Peer == 0 ? 0u : 3u * 8 * 4) << "peer " << C.Peer;
    EXPECT_EQ(S.Count, Rows[C.Peer] * 8) << "peer " << C.Peer;
  }
  EXPECT_EQ(Sends, 2u);
  EXPECT_EQ(Recvs, 2u);
}

} // namespace
