//===- tests/runtime/ShmSegmentTest.cpp - Segments, their handout, the path -===//

#include "tests/runtime/ShmTestTeams.h"

#include "runtime/shm/PathChoice.h"
#include "runtime/shm/SegmentHandout.h"
#include "runtime/shm/SharedSegment.h"

#include "llvm/Support/FormatVariadic.h"

#include <dirent.h>
#include <fcntl.h>
#include <set>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace collc;
using namespace collc::rt;
using namespace collc::rt::shm;

namespace {

std::string refusal(llvm::Expected<SharedSegment> S) {
  return S ? std::string("(adopted)") : llvm::toString(S.takeError());
}

TEST(ShmSegment, AdoptsOnlyASealedOwnerOnlyFileOfTheAgreedSize) {
  llvm::Expected<SharedSegment> S = SharedSegment::create(4096, "test");
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  EXPECT_NE(refusal(SharedSegment::adopt(dup(S->fd()), 8192, "test"))
                .find("it holds 4096 bytes, not the 8192 agreed"),
            std::string::npos);
  EXPECT_EQ(refusal(SharedSegment::adopt(dup(S->fd()), 4096, "test")), "(adopted)");

  int Unsealed = memfd_create("unsealed", MFD_CLOEXEC);
  ASSERT_GE(Unsealed, 0);
  ASSERT_EQ(fchmod(Unsealed, 0600), 0);
  ASSERT_EQ(ftruncate(Unsealed, 4096), 0);
  EXPECT_NE(refusal(SharedSegment::adopt(Unsealed, 4096, "test")).find("its size is not sealed"),
            std::string::npos);

  int Open = memfd_create("open", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  ASSERT_GE(Open, 0);
  ASSERT_EQ(fchmod(Open, 0644), 0);
  EXPECT_NE(refusal(SharedSegment::adopt(Open, 0, "test")).find("not owner-only"),
            std::string::npos);
}

TEST(ShmSegment, ItsSizeCannotChange) {
  llvm::Expected<SharedSegment> S = SharedSegment::create(4096, "test");
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  // A peer that shrank it would make the others' next access a SIGBUS.
  EXPECT_NE(ftruncate(S->fd(), 0), 0);
  EXPECT_NE(ftruncate(S->fd(), 8192), 0);
  struct stat St;
  ASSERT_EQ(fstat(S->fd(), &St), 0);
  EXPECT_EQ(St.st_mode & 0777, 0600u);
}

TEST(ShmHandout, ServesOnlyTheExpectedProcesses) {
  llvm::Expected<Nonce> N = randomNonce();
  ASSERT_TRUE(bool(N)) << llvm::toString(N.takeError());
  llvm::Expected<SegmentServer> Server = SegmentServer::listen(*N, "test");
  ASSERT_TRUE(bool(Server)) << llvm::toString(Server.takeError());
  llvm::Expected<SharedSegment> S = SharedSegment::create(4096, "test");
  ASSERT_TRUE(bool(S)) << llvm::toString(S.takeError());
  auto Soon = [] { return std::chrono::steady_clock::now() + std::chrono::milliseconds(300); };
  // A client that expects another creator refuses this one.
  std::thread Client([&] {
    llvm::Expected<int> Fd = receiveSegment(*N, getpid() + 1, 7, Soon(), "test");
    ASSERT_FALSE(bool(Fd));
    ErrorParts P = test::partsOf(Fd.takeError());
    EXPECT_EQ(P.Peer, 7);
    EXPECT_NE(P.Text.find("not the segment's creator, rank 7"), std::string::npos) << P.Text;
  });
  // The server expects another process: this one's connection goes unserved.
  llvm::Error E = Server->handOut(S->fd(), {int32_t(getpid() + 1)}, Soon(),
                                  [](int32_t) { return int64_t(3); });
  Client.join();
  ErrorParts P = test::partsOf(std::move(E));
  EXPECT_EQ(P.Peer, 3);
  EXPECT_NE(P.Text.find(llvm::formatv("rank 3 (pid {0}) did not come for the shared segment",
                                      getpid() + 1)
                            .str()),
            std::string::npos)
      << P.Text;
}

std::set<std::string> devShm() {
  std::set<std::string> Names;
  if (DIR *D = opendir("/dev/shm")) {
    while (dirent *E = readdir(D))
      Names.insert(E->d_name);
    closedir(D);
  }
  return Names;
}

TEST(ShmSegment, ATeamLeavesNothingInDevShm) {
  std::set<std::string> Before = devShm();
  test::onTeamOfThreads(3, "devshm", [&](int, ShmTeam &T) {
    EXPECT_EQ(T.size(), 3u);
    // While the team lives: its segment has no name anywhere.
    for (const std::string &Name : devShm())
      EXPECT_TRUE(Before.count(Name) || Name.find("collc") == std::string::npos) << Name;
  });
  for (const std::string &Name : devShm())
    EXPECT_TRUE(Before.count(Name)) << "left in /dev/shm: " << Name;
}

/// Group \p Hosts (per group rank, a host number) as meetHosts would see it
/// from group rank \p Rank.
GroupHosts hostsOf(std::vector<uint32_t> HostOf, int Rank, Transport Mode = Transport::Auto) {
  GroupHosts H;
  H.Size = int(HostOf.size());
  H.Rank = Rank;
  H.HostOf = HostOf;
  H.Hosts = *std::max_element(HostOf.begin(), HostOf.end()) + 1;
  for (int R = 0; R != H.Size; ++R)
    if (HostOf[R] == HostOf[Rank])
      H.Local.push_back(R);
  H.Pids.assign(HostOf.size(), 1);
  H.HostName = "node";
  H.Mode = Mode;
  return H;
}

std::string chosen(const GroupHosts &H) {
  llvm::Expected<PathChoice> C = choosePath(H, "mpi");
  return C ? describePath("g", H.Size, *C) : "error: " + llvm::toString(C.takeError());
}

TEST(ShmPath, IsChosenFromWhereTheProcessesAre) {
  EXPECT_EQ(chosen(hostsOf({0, 0, 0, 0}, 1)),
            "group 'g' (4 processes): shm: its 4 processes share memory on host node");
  EXPECT_EQ(chosen(hostsOf({0, 0, 1, 1}, 3)),
            "group 'g' (4 processes): hierarchical: 2 hosts x 2 processes: an all_reduce is "
            "reduced in shared memory within each host and by mpi across hosts, one slice per "
            "process; other collectives on mpi");
  EXPECT_EQ(chosen(hostsOf({0, 1, 2}, 0)),
            "group 'g' (3 processes): engine: each of its 3 processes is on a host of its own");
  EXPECT_EQ(chosen(hostsOf({0, 0, 1}, 2)),
            "group 'g' (3 processes): engine: its 2 hosts hold 1 to 2 of its processes (the "
            "hierarchical path takes as many on each)");
  EXPECT_EQ(chosen(hostsOf({0}, 0)), "group 'g' (1 processes): engine: a group of one process");
  EXPECT_EQ(chosen(hostsOf({0, 0}, 0, Transport::Engine)),
            "group 'g' (2 processes): engine: the transport asked is engine (--transport or "
            "COLLC_TRANSPORT)");
  // Asked for shared memory where it cannot serve: an error saying why.
  EXPECT_EQ(chosen(hostsOf({0, 0, 1}, 0, Transport::Shm)),
            "error: --transport shm (COLLC_TRANSPORT=shm): shared memory cannot carry this "
            "group: its 2 hosts hold 1 to 2 of its processes (the hierarchical path takes as "
            "many on each)");
  EXPECT_EQ(chosen(hostsOf({0, 0, 1, 1}, 0, Transport::Shm)).substr(0, 41),
            "group 'g' (4 processes): hierarchical: 2 ");
}

TEST(ShmTransport, IsReadFromItsNames) {
  EXPECT_EQ(*parseTransport("shm", "--transport"), Transport::Shm);
  llvm::Expected<Transport> Bad = parseTransport("fast", "COLLC_TRANSPORT");
  ASSERT_FALSE(bool(Bad));
  EXPECT_EQ(llvm::toString(Bad.takeError()),
            "COLLC_TRANSPORT 'fast': expected auto, shm or engine");
}

} // namespace
