// Calibrated links: the link file reader names the field of every malformed
// or edited file, the writer's output reads back, the cost model takes its
// alpha and bandwidth from the range that holds the size, and the fit finds
// the regimes of synthetic measurements.
#include "TestUtil.h"

#include "passes/analysis/LinkFile.h"
#include "passes/analysis/LinkFitting.h"

#include "llvm/Support/raw_ostream.h"

using namespace collc;

namespace {

/// A valid file with \p Ops as its "ops" object.
std::string linkText(llvm::StringRef Ops, llvm::StringRef Top = "\"bus_gbps\": 4") {
  return (R"({"collc_link": 1, "name": "lab", "backend": "local", "world": 2, "alpha_us": 2, )" +
          Top + ", \"ops\": {" + Ops + "}}")
      .str();
}

const char *Range0 = R"({"min_bytes": 0, "max_bytes": 1024, "alpha_us": 1, "bus_gbps": 2})";
const char *Range1 = R"({"min_bytes": 1024, "max_bytes": 65536, "alpha_us": 5, "bus_gbps": 20})";

std::string errorOf(const std::string &Text) {
  llvm::Expected<LinkClass> L = parseLinkFile(Text, "lab.json");
  if (L)
    return "accepted";
  return llvm::toString(L.takeError());
}

TEST(LinkFile, ReadsRangesInOrder) {
  llvm::Expected<LinkClass> L = parseLinkFile(
      linkText(std::string("\"all_reduce\": [") + Range0 + ", " + Range1 + "]"), "lab.json");
  ASSERT_TRUE(bool(L)) << llvm::toString(L.takeError());
  EXPECT_EQ(L->Name, "lab");
  ASSERT_TRUE(L->Fit);
  const std::vector<LinkRange> &Rs = L->Fit->Ranges[unsigned(OpKind::AllReduce)];
  ASSERT_EQ(Rs.size(), 2u);
  EXPECT_EQ(Rs[1].MinBytes, 1024u);
  EXPECT_EQ(Rs[1].Fit.BusGBps, 20.0);
}

TEST(LinkFile, ErrorsNameTheField) {
  std::string R = std::string("\"all_reduce\": [") + Range0 + "]";
  EXPECT_EQ(errorOf(linkText(R, "\"bus_gbps\": -3")),
            "lab.json: bus_gbps: -3 is out of range: expected > 0 and <= 1e+06");
  // A figure that would make a simulated step infinite.
  EXPECT_EQ(
      errorOf(linkText(
          R"("all_reduce": [{"min_bytes": 0, "max_bytes": 8, "alpha_us": 1e308, "bus_gbps": 1}])")),
      "lab.json: ops.all_reduce[0].alpha_us: 1e+308 is out of range: expected >= 0 and <= "
      "1e+07");
  EXPECT_EQ(errorOf(linkText(R, "\"bus_gbpz\": 4")),
            "lab.json: (root): unknown field 'bus_gbpz'; expected collc_link, name, description, "
            "backend, world, alpha_us, bus_gbps, ops");
  EXPECT_EQ(errorOf(linkText(
                R"("all_reduce": [{"min_bytes": 0, "max_bytes": 8, "alpha_us": 1}])")),
            "lab.json: ops.all_reduce[0]: missing field 'bus_gbps'");
  EXPECT_EQ(
      errorOf(linkText(
          R"("all_reduce": [{"min_bytes": 0, "max_bytes": 8, "alpha_us": 1, "bus_gbps": -1}])")),
      "lab.json: ops.all_reduce[0].bus_gbps: -1 is out of range: expected > 0 and <= 1e+06");
  EXPECT_EQ(errorOf(linkText(
                R"("all_reduce": [{"min_bytes": 64, "max_bytes": 8, "alpha_us": 1, "bus_gbps": 1}])")),
            "lab.json: ops.all_reduce[0].max_bytes: 8 is out of range: expected >= 65");
  EXPECT_EQ(errorOf(linkText(std::string("\"all_reduse\": [") + Range0 + "]")),
            "lab.json: ops.all_reduse: unknown op kind 'all_reduse'; expected a communication "
            "op: " + allOpKindNames().str());
  EXPECT_EQ(errorOf(linkText(std::string("\"compute\": [") + Range0 + "]")).substr(0, 48),
            "lab.json: ops.compute: unknown op kind 'compute'");
  EXPECT_EQ(errorOf(linkText(std::string("\"all_reduce\": [") + Range1 + ", " + Range0 + "]")),
            "lab.json: ops.all_reduce[1]: range [0, 1024) overlaps ops.all_reduce[0], [1024, "
            "65536): expected ranges in ascending order, each from where the one before ends "
            "or later");
  EXPECT_EQ(errorOf(linkText("\"all_reduce\": []")),
            "lab.json: ops.all_reduce: expected a non-empty array of size ranges");
  EXPECT_EQ(errorOf(R"({"collc_link": 2})"),
            "lab.json: collc_link: version 2 is not supported: expected 1");
  EXPECT_EQ(errorOf(R"({"collc_link": 1, "name": "x"})"),
            "lab.json: (root): missing field 'backend'");
  EXPECT_EQ(errorOf("{").substr(0, 28), "lab.json: (file): not JSON: ");
  llvm::Expected<LinkClass> Missing = readLinkFile("/no/such/link.json");
  ASSERT_FALSE(bool(Missing));
  EXPECT_EQ(llvm::toString(Missing.takeError()).substr(0, 45),
            "cannot read link file '/no/such/link.json': N");
}

TEST(LinkFile, WriterReadsBack) {
  LinkFit Fit;
  Fit.Name = "fitted";
  Fit.Description = "a test";
  Fit.Backend = "local";
  Fit.World = 4;
  Fit.Ranges[unsigned(OpKind::Send)] = {{0, 4096, {0.5, 3.0}, 6, 0.02},
                                        {4096, 1 << 20, {2.5, 30.0}, 9, 0.05}};
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  writeLinkFile(Fit, {1.5, 12.0}, OS);
  llvm::Expected<LinkClass> L = parseLinkFile(OS.str(), "written");
  ASSERT_TRUE(bool(L)) << llvm::toString(L.takeError()) << "\n" << Text;
  EXPECT_EQ(L->Name, "fitted");
  EXPECT_EQ(L->AlphaUs, 1.5);
  EXPECT_EQ(L->Fit->World, 4);
  EXPECT_EQ(L->Fit->Ranges[unsigned(OpKind::Send)].size(), 2u);
  EXPECT_EQ(L->Fit->Ranges[unsigned(OpKind::Send)][1].Points, 9u);
}

TEST(LinkFile, CostModelUsesTheRangeOfTheSize) {
  LinkClass L = llvm::cantFail(parseLinkFile(
      linkText(std::string("\"send\": [") + Range0 + ", " + Range1 + "]"), "lab.json"));
  // send, 512 B: range 0 (1 us + 512 B at 2 GB/s); 4096 B: range 1.
  EXPECT_DOUBLE_EQ(collectiveTimeUs(OpKind::Send, 512, 2, L), 1.0 + 512 / 2e3);
  EXPECT_DOUBLE_EQ(collectiveTimeUs(OpKind::Send, 4096, 2, L), 5.0 + 4096 / 20e3);
  // Past the last range: the last; recv costs as send; an unlisted kind
  // (all_gather) as the file's overall alpha and bandwidth.
  EXPECT_DOUBLE_EQ(collectiveTimeUs(OpKind::Recv, 1 << 20, 2, L), 5.0 + (1 << 20) / 20e3);
  EXPECT_DOUBLE_EQ(collectiveTimeUs(OpKind::AllGather, 4000, 2, L), 2.0 + 0.5 * 4000 / 4e3);
}

TEST(LinkFile, TimePiecesAreTheCostModel) {
  // collectiveTimePieces is collectiveTimeUs as pieces (what auto prices a
  // bucket with): one per range, from the range before's end.
  LinkClass L = llvm::cantFail(parseLinkFile(
      linkText(std::string("\"all_reduce\": [") + Range0 + ", " + Range1 + "]"), "lab.json"));
  for (const LinkClass &Link : {L, *findLinkClass("ib-ndr")})
    for (OpKind K : {OpKind::AllReduce, OpKind::AllGather, OpKind::Send, OpKind::Barrier})
      for (int64_t N : {1, 2, 8}) {
        std::vector<TimePiece> Ps = collectiveTimePieces(K, N, Link);
        ASSERT_FALSE(Ps.empty());
        EXPECT_EQ(Ps.front().FromBytes, 0.0);
        for (double B : {0.0, 1.0, 512.0, 1023.0, 1024.0, 4096.0, 65535.0, 65536.0, 1e9}) {
          size_t I = Ps.size();
          while (Ps[I - 1].FromBytes > B)
            --I;
          const TimePiece &P = Ps[I - 1];
          double Want = collectiveTimeUs(K, B, N, Link);
          EXPECT_NEAR(P.AlphaUs + B * P.UsPerByte, Want, 1e-9 * Want)
              << Link.Name.str() << " " << opKindName(K).str() << " N=" << N << " B=" << B;
        }
      }
  std::vector<TimePiece> Two = collectiveTimePieces(OpKind::AllReduce, 2, L);
  ASSERT_EQ(Two.size(), 2u);
  EXPECT_EQ(Two[1].FromBytes, 1024.0);
  EXPECT_EQ(collectiveTimePieces(OpKind::AllGather, 2, L).size(), 1u); // not calibrated
}

TEST(LinkFitting, FindsTwoRegimes) {
  // 64 B .. 4 MiB: alpha 1 us and 2 GB/s below 64 KiB, 30 us and 20 GB/s above.
  std::vector<LinkSample> S;
  for (uint64_t B = 64; B <= (4u << 20); B *= 2) {
    AlphaBeta C = B < 65536 ? AlphaBeta{1, 2} : AlphaBeta{30, 20};
    S.push_back({B, C.AlphaUs + double(B) / (C.BusGBps * 1e3)});
  }
  std::vector<LinkRange> Rs = fitLinkRanges(OpKind::Send, 2, S);
  ASSERT_EQ(Rs.size(), 2u);
  EXPECT_EQ(Rs[0].MinBytes, 0u);
  EXPECT_EQ(Rs[1].MinBytes, 65536u);
  EXPECT_EQ(Rs[1].MaxBytes, (4u << 20) + 1);
  EXPECT_NEAR(Rs[0].Fit.AlphaUs, 1, 1e-6);
  EXPECT_NEAR(Rs[0].Fit.BusGBps, 2, 1e-6);
  EXPECT_NEAR(Rs[1].Fit.AlphaUs, 30, 1e-6);
  EXPECT_NEAR(Rs[1].Fit.BusGBps, 20, 1e-6);
  EXPECT_LT(Rs[1].MedianRelError, 1e-9);
}

TEST(LinkFitting, OneRegimeOneRange) {
  std::vector<LinkSample> S;
  for (uint64_t B = 64; B <= (1u << 20); B *= 2)
    S.push_back({B, 3.0 + 2 * 0.5 * double(B) / 10e3}); // all_reduce over 2: factor 1
  std::vector<LinkRange> Rs = fitLinkRanges(OpKind::AllReduce, 2, S);
  ASSERT_EQ(Rs.size(), 1u);
  EXPECT_NEAR(Rs[0].Fit.AlphaUs, 3, 1e-6);
  EXPECT_NEAR(Rs[0].Fit.BusGBps, 10, 1e-6);
}

} // namespace
