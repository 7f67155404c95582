//===- tests/launch/LaunchedRank.h - A test process's place and rendezvous -*- C++ -*-===//
//
// What a test binary started by a launcher (tests/launch/spawn_ranks.py,
// torchrun, mpirun) reads first: its place from the launcher's
// environment, and where the ranks meet from COLLC_RENDEZVOUS.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TESTS_LAUNCH_LAUNCHEDRANK_H
#define COLLC_TESTS_LAUNCH_LAUNCHEDRANK_H

#include "runtime/exec/RuntimeError.h"
#include "runtime/launch/ProcessPlace.h"
#include "runtime/launch/RendezvousAddress.h"

namespace collc::test {

struct LaunchedRank {
  rt::ProcessPlace Place;
  rt::RendezvousAddress Where;
};

inline llvm::Expected<LaunchedRank> launchedRank() {
  llvm::Expected<rt::ProcessPlace> Place = rt::placeFromLauncher();
  if (!Place)
    return Place.takeError();
  std::optional<std::string> Text = rt::processEnvironment("COLLC_RENDEZVOUS");
  if (!Text)
    return rt::makeError(rt::ErrorKind::InvalidArgument,
                         "COLLC_RENDEZVOUS is not set (file:DIR or redis://HOST:PORT)");
  llvm::Expected<rt::RendezvousAddress> Where = rt::parseRendezvous(*Text);
  if (!Where)
    return Where.takeError();
  return LaunchedRank{*Place, *Where};
}

} // namespace collc::test

#endif
