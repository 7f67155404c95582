//===- tests/launch/NcclIdRankMain.cpp - One rank of the nccl id exchange test ===//
//
// Started once per rank (mpirun, or tests/launch/spawn_ranks.py with a file:
// or redis rendezvous), this process joins the run's CPU world as `collc
// run --backend nccl` does (runtime/process/CpuWorld.h) and exchanges the NCCL
// unique ids of a plan whose groups are led by different ranks
// (runtime/nccl/IdGather.h). ncclGetUniqueId needs no GPU, so the ids are
// real. It checks:
//  - one communicator of the run is made from an id, the world's root (the
//    groups' are split from it, whichever rank leads them): rank 0 mints
//    it, and every rank gets it, served once;
//  - every rank got the same id (a second all-gather of what each got);
//  - ranks that disagree on the keys (here: a prefix of their own) fail,
//    every one of them, at once, naming both keys, instead of waiting.
// Prints "rank R: ok" and exits 0, or says what failed and exits 1.
//
//===----------------------------------------------------------------------===//

#include "compiler/Compile.h"
#include "runtime/exec/Timeout.h"
#include "runtime/nccl/IdGather.h"
#include "runtime/process/CpuWorld.h"
#include "runtime/process/ProcessBackends.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>
#include <set>

using namespace collc;
using namespace collc::rt;
using llvm::Expected;

namespace {

// @rev's rank 0 is world rank 1, and each @solo subgroup has its own
// leader: the ids come from both ranks.
const char *TestProgram = R"(program @nccl_id_test world(2) {
  group @dp = world
  group @solo = split(rank, 0)
  group @rev = split(0, 1 - rank)
  %a = compute @a : f32[64]
  %ra = all_reduce sum %a in @dp
  %rs = all_reduce sum %a in @solo
  %rr = all_reduce sum %a in @rev
  compute @opt(%ra, %rs, %rr)
}
)";

int Rank = -1;

int fail(const llvm::Twine &Msg) {
  llvm::errs() << "rank " << Rank << ": FAILED: " << Msg << "\n";
  return 1;
}

} // namespace

int main() {
  Expected<ProcessPlace> Place = placeFromLauncher();
  if (!Place)
    return fail(llvm::toString(Place.takeError()));
  Rank = int(Place->Rank);
  Expected<RendezvousAddress> Where =
      parseRendezvous(processEnvironment("COLLC_RENDEZVOUS").value_or("mpi"));
  if (!Where)
    return fail(llvm::toString(Where.takeError()));
  Expected<std::chrono::milliseconds> Timeout = timeoutFromEnvironment();
  if (!Timeout)
    return fail(llvm::toString(Timeout.takeError()));
  Expected<plan::Plan> P = compileProgramText(TestProgram, "", "nccl_id_test.coll");
  if (!P)
    return fail(llvm::toString(P.takeError()));
  if (Place->World != P->World)
    return fail(llvm::formatv("run with {0} processes, not {1}", P->World, Place->World));

  Expected<std::shared_ptr<void>> Mpi = rt::startSessionFor("nccl", *Where);
  if (!Mpi)
    return fail(llvm::toString(Mpi.takeError()));
  Expected<std::unique_ptr<WorldGather>> World =
      rt::joinCpuWorld(*Place, *Where, "nccl-id-test/#cpu-world", *Timeout);
  if (!World)
    return fail(llvm::toString(World.takeError()));
  Expected<nccl::NcclRankPlan> L = nccl::lowerForRank(*P, Rank);
  if (!L)
    return fail(llvm::toString(L.takeError()));

  Expected<std::unique_ptr<nccl::UniqueIdExchange>> Ids = nccl::gatherUniqueIds(*L, "t", **World);
  if (!Ids)
    return fail("gathering: " + llvm::toString(Ids.takeError()));
  Expected<std::vector<nccl::KeyedId>> Led = nccl::mintLedIds(*L, "t");
  if (!Led)
    return fail(llvm::toString(Led.takeError()));
  if (Led->size() != (Rank == 0 ? 1u : 0u))
    return fail(llvm::formatv("rank {0} minted {1} ids: only rank 0 mints one, the root's", Rank,
                              Led->size()));
  std::vector<nccl::KeyedId> Got;
  for (const nccl::CommDesc &D : {L->Root}) {
    std::string Key = nccl::commKey("t", D.Key);
    Expected<ncclUniqueId> Id = (*Ids)->idFor(Key, D.Rank == 0, D.Size);
    if (!Id)
      return fail(llvm::toString(Id.takeError()));
    Got.push_back({Key, *Id});
    Expected<ncclUniqueId> Again = (*Ids)->idFor(Key, D.Rank == 0, D.Size);
    if (Again)
      return fail("the id of " + Key + " was served twice");
    std::string Why = llvm::toString(Again.takeError());
    if (Why.find("served already") == std::string::npos)
      return fail("a second request for " + Key + " said: " + Why);
  }

  // What every rank got, side by side.
  Expected<std::vector<std::vector<uint32_t>>> All =
      allGatherRagged(**World, nccl::encodeKeyedIds(Got));
  if (!All)
    return fail(llvm::toString(All.takeError()));
  llvm::StringMap<ncclUniqueId> ByKey;
  std::set<std::string> Keys; // ordered: the report below is deterministic
  for (int64_t R = 0; R != int64_t(All->size()); ++R) {
    Expected<std::vector<nccl::KeyedId>> Theirs = nccl::decodeKeyedIds((*All)[R], R);
    if (!Theirs)
      return fail(llvm::toString(Theirs.takeError()));
    for (const nccl::KeyedId &K : *Theirs) {
      if (!K.Id)
        return fail(llvm::formatv("rank {0} sent {1} without its id", R, K.Key));
      auto [It, New] = ByKey.insert({K.Key, *K.Id});
      if (!New && memcmp(&It->second, &*K.Id, sizeof(ncclUniqueId)) != 0)
        return fail(llvm::formatv("rank {0} got another id for {1}", R, K.Key));
      Keys.insert(K.Key);
    }
  }
  // The root alone: @dp/0, @solo/0, @solo/1 and @rev/0 are split from it.
  if (Keys.size() != 1 || *Keys.begin() != "t/world")
    return fail(llvm::formatv("{0} communicators across the ranks, expected the root alone",
                              Keys.size()));

  // Ranks that derive different keys fail at once, naming what is missing.
  Expected<std::unique_ptr<nccl::UniqueIdExchange>> Wrong =
      nccl::gatherUniqueIds(*L, "own" + std::to_string(Rank), **World);
  if (Wrong)
    return fail("ranks with different keys were given a table");
  std::string Why = llvm::toString(Wrong.takeError());
  if (Why.find("derives the NCCL communicator") == std::string::npos)
    return fail("different keys said: " + Why);
  llvm::outs() << llvm::formatv("rank {0}: ok ({1} id in the run, {2} communicators split from "
                                "it here; different keys: {3})\n",
                                Rank, Keys.size(), L->Comms.size(), Why);
  return 0;
}
