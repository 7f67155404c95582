//===- tests/runtime/ShmTestTeams.h - Teams of threads for the shm tests -*- C++ -*-===//
//
// A team of the shared-memory transport (runtime/shm/ShmTeam.h) whose
// members are threads of the test, met through the local driver's
// all-gather: the team's segment, its handout over a Unix socket and its
// rendezvous are the real ones (a segment's peers are checked by pid, and
// here every member is this process).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TESTS_RUNTIME_SHMTESTTEAMS_H
#define COLLC_TESTS_RUNTIME_SHMTESTTEAMS_H

#include "runtime/local/LocalDriver.h"
#include "runtime/shm/TeamFormation.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "gtest/gtest.h"

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace collc::test {

/// Forms a team of \p N threads named \p Name and runs \p Body(rank, its
/// team) on each; fails the test where a member cannot join.
inline void onTeamOfThreads(int N, const std::string &Name,
                            llvm::function_ref<void(int, rt::shm::ShmTeam &)> Body) {
  using D = rt::local::LocalDriver;
  std::vector<std::string> Errors(N);
  std::vector<std::thread> Threads;
  for (int R = 0; R != N; ++R)
    Threads.emplace_back([&, R] {
      auto Fail = [&](llvm::Error E) { Errors[R] = llvm::toString(std::move(E)); };
      llvm::Expected<D::UniqueId> Id = D::groupId({Name});
      if (!Id)
        return Fail(Id.takeError());
      llvm::Expected<D::Communicator> C = D::join(*Id, size_t(N), size_t(R));
      if (!C)
        return Fail(C.takeError());
      auto Gather = [&](llvm::ArrayRef<uint32_t> W) { return D::allGatherWords(*C, W); };
      llvm::Expected<rt::shm::GroupHosts> H = rt::shm::meetHosts(Name, Gather);
      if (!H)
        return Fail(H.takeError());
      auto By = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      llvm::Expected<std::shared_ptr<rt::shm::ShmTeam>> T = rt::shm::formTeam(*H, Name, Gather, By);
      if (!T)
        return Fail(T.takeError());
      if (!*T)
        return Fail(rt::makeError(rt::ErrorKind::Backend, "a member alone on its host"));
      Body(R, **T);
      // Every member leaves the team together: nobody unmaps a segment a
      // peer still reads.
      if (llvm::Error E = D::allGatherWords(*C, {0u}).takeError())
        Fail(std::move(E));
    });
  for (std::thread &T : Threads)
    T.join();
  for (int R = 0; R != N; ++R)
    EXPECT_EQ(Errors[R], "") << "member " << R;
}

/// An error's parts, for the tests' expectations.
inline rt::ErrorParts partsOf(llvm::Error E) {
  return rt::takeErrorParts(std::move(E), rt::ErrorKind::Backend);
}

} // namespace collc::test

#endif
