//===- api/LauncherApi.cpp - collc.h: this process's launcher place -----===//
//
// collcLauncherPlace: runtime/launch/ProcessPlace.h's reading of the
// launcher's variables, the one the tool and the process backends use, so a
// Python or C program finds its rank as `collc run` does.
//
//===----------------------------------------------------------------------===//

#include "api/ApiEntry.h"

#include "runtime/launch/ProcessPlace.h"

#include <string>

using namespace llvm;
using namespace collc;
using namespace collc::api;

extern "C" {

collcResult_t collcLauncherPlace(int64_t *Rank, int64_t *World, int64_t *LocalRank,
                                 int64_t *LocalWorld, const char **Launcher) {
  return entry(__func__, [&]() -> Error {
    Args A;
    A.notNull(Rank, "rank", "where to store the rank")
        .notNull(World, "world", "where to store the world");
    if (Error E = A.done())
      return E;
    Expected<rt::ProcessPlace> P = rt::placeFromLauncher();
    if (!P)
      return makeApiError(collcInvalidArgument, toString(P.takeError()));
    // The caller's until its next call on this thread.
    static thread_local std::string Source;
    Source = P->Source;
    *Rank = P->Rank;
    *World = P->World;
    if (LocalRank)
      *LocalRank = P->LocalRank;
    if (LocalWorld)
      *LocalWorld = P->LocalWorld;
    if (Launcher)
      *Launcher = Source.c_str();
    return Error::success();
  });
}

} // extern "C"
