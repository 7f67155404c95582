//===- tests/runtime/ShmArenaTest.cpp - The arena for the executor's buffers -===//
//
// The arena each host's processes map for the executor's buffers
// (runtime/shm/TeamFormation.h's shareArena, ShmDriver::shareHostMemory),
// with ranks as threads of this process met through the local driver, on
// pseudo-hosts where a test needs more than one host.
//
//===----------------------------------------------------------------------===//

#include "tests/runtime/ShmTestTeams.h"

#include "runtime/shm/HostIdentity.h"
#include "runtime/shm/ShmDriver.h"

#include <cstdint>

using namespace collc;
using namespace collc::rt;
using namespace collc::rt::shm;

namespace {

using D = local::LocalDriver;
using ShmLocal = ShmDriver<D>;

/// Runs \p Body(rank) on \p N threads, rank r on pseudo-host h(r * Hosts / N).
void onThreads(int N, int Hosts, llvm::function_ref<void(int)> Body) {
  std::vector<std::thread> Threads;
  for (int R = 0; R != N; ++R)
    Threads.emplace_back([&, R] {
      PseudoHostScope Host("h" + std::to_string(R * Hosts / N));
      Body(R);
    });
  for (std::thread &T : Threads)
    T.join();
}

/// Restores the process's transport when the test leaves.
struct TransportScope {
  explicit TransportScope(Transport T) { setTransport(T); }
  ~TransportScope() { setTransport(std::nullopt); }
};

// A size too large on one host fails the members of every host alike and at
// once: none waits in the segment's gathers for a host that left them.
TEST(ShmArena, ASizeTooLargeOnOneHostFailsEveryHostAlike) {
  constexpr int N = 4;
  std::vector<std::string> Errors(N);
  std::vector<std::chrono::milliseconds> Took(N);
  onThreads(N, 2, [&](int R) {
    llvm::Expected<D::UniqueId> Id = D::groupId({"arena-too-large"});
    ASSERT_TRUE(bool(Id)) << llvm::toString(Id.takeError());
    llvm::Expected<D::Communicator> C = D::join(*Id, N, size_t(R));
    ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
    // Long enough for a loaded host; far shorter than the test's own limit.
    D::setTimeout(*C, std::chrono::seconds(20));
    auto Gather = [&](llvm::ArrayRef<uint32_t> W) { return D::allGatherWords(*C, W); };
    llvm::Expected<GroupHosts> H = meetHosts("arena-too-large", Gather);
    ASSERT_TRUE(bool(H)) << llvm::toString(H.takeError());
    ASSERT_EQ(H->Hosts, 2u);
    uint64_t Bytes = R == 3 ? UINT64_MAX - 4096 : 4096;
    auto Start = std::chrono::steady_clock::now();
    llvm::Expected<std::shared_ptr<SharedArena>> A =
        shareArena(*H, Bytes, "arena-too-large", Gather, Start + std::chrono::seconds(20));
    Took[R] = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - Start);
    Errors[R] = A ? "(an arena)" : llvm::toString(A.takeError());
  });
  for (int R = 0; R != N; ++R) {
    EXPECT_EQ(Errors[R], "group 'arena-too-large': rank 3 asks for an arena of " +
                             std::to_string(UINT64_MAX - 4096) + " bytes: too large")
        << "rank " << R;
    EXPECT_LT(Took[R], std::chrono::seconds(10)) << "rank " << R;
  }
}

// Under auto, an arena that cannot be made leaves the executor's buffers
// in private memory (staged), the path saying why; under shm it fails.
TEST(ShmArena, UnderAutoItsFailureIsSaidAndStagedUnderShmAnError) {
  for (Transport Mode : {Transport::Auto, Transport::Shm}) {
    TransportScope Scope(Mode);
    constexpr int N = 2;
    std::vector<std::string> Outcome(N), Why(N);
    onThreads(N, 1, [&](int R) {
      std::string Name = "arena-fallback-" + transportName(Mode).str();
      llvm::Expected<ShmLocal::UniqueId> Id = ShmLocal::groupId({Name});
      ASSERT_TRUE(bool(Id)) << llvm::toString(Id.takeError());
      llvm::Expected<ShmLocal::Communicator> C = ShmLocal::join(*Id, N, size_t(R));
      ASSERT_TRUE(bool(C)) << llvm::toString(C.takeError());
      ASSERT_EQ(ShmLocal::pathOf(*C).first, "shm");
      llvm::Expected<std::shared_ptr<HostArena>> A =
          ShmLocal::shareHostMemory(*C, UINT64_MAX - 4096);
      Outcome[R] = !A ? "error: " + llvm::toString(A.takeError())
                      : *A ? "an arena" : "no arena";
      Why[R] = ShmLocal::pathOf(*C).second;
    });
    for (int R = 0; R != N; ++R) {
      SCOPED_TRACE("rank " + std::to_string(R) + ", transport " + transportName(Mode).str());
      std::string TooLarge = "asks for an arena of " + std::to_string(UINT64_MAX - 4096) +
                             " bytes: too large";
      if (Mode == Transport::Auto) {
        EXPECT_EQ(Outcome[R], "no arena");
        EXPECT_NE(Why[R].find("; no arena for the executor's buffers (group '"),
                  std::string::npos)
            << Why[R];
        EXPECT_NE(Why[R].find(TooLarge + "): operands are staged"), std::string::npos) << Why[R];
      } else {
        EXPECT_NE(Outcome[R].find("error: group '"), std::string::npos) << Outcome[R];
        EXPECT_NE(Outcome[R].find(TooLarge), std::string::npos) << Outcome[R];
        EXPECT_EQ(Why[R].find("no arena"), std::string::npos) << Why[R];
      }
    }
  }
}

} // namespace
