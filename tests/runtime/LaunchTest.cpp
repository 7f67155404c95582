//===- tests/runtime/LaunchTest.cpp - Rank from the launcher, rendezvous text ===//

#include "runtime/launch/ProcessPlace.h"
#include "runtime/launch/RendezvousAddress.h"

#include "llvm/ADT/StringMap.h"
#include "gtest/gtest.h"

using namespace collc;
using namespace collc::rt;

namespace {

/// placeFromLauncher over a table instead of the process environment.
llvm::Expected<ProcessPlace> placeIn(const llvm::StringMap<std::string> &Vars,
                                     const PlaceFlags &Flags = {}) {
  return placeFromLauncher(Flags, [&](llvm::StringRef Name) -> std::optional<std::string> {
    auto It = Vars.find(Name);
    if (It == Vars.end())
      return std::nullopt;
    return It->second;
  });
}

std::string errorOf(llvm::Expected<ProcessPlace> P) {
  return P ? "no error" : llvm::toString(P.takeError());
}

TEST(ProcessPlace, ReadsEachLauncher) {
  llvm::Expected<ProcessPlace> Mpi = placeIn(
      {{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}});
  ASSERT_TRUE(bool(Mpi)) << llvm::toString(Mpi.takeError());
  EXPECT_EQ(Mpi->Rank, 3);
  EXPECT_EQ(Mpi->World, 4);
  EXPECT_EQ(Mpi->LocalRank, 1);
  EXPECT_EQ(Mpi->Source, "mpirun");

  llvm::Expected<ProcessPlace> Slurm =
      placeIn({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "1"}});
  ASSERT_TRUE(bool(Slurm)) << llvm::toString(Slurm.takeError());
  EXPECT_EQ(Slurm->Rank, 5);
  EXPECT_EQ(Slurm->Source, "srun");

  llvm::Expected<ProcessPlace> Torch = placeIn({{"RANK", "1"}, {"WORLD_SIZE", "2"}});
  ASSERT_TRUE(bool(Torch)) << llvm::toString(Torch.takeError());
  EXPECT_EQ(Torch->Rank, 1);
  EXPECT_EQ(Torch->World, 2);
  EXPECT_EQ(Torch->LocalRank, 0);
  EXPECT_EQ(Torch->Source, "torchrun");
}

TEST(ProcessPlace, MpirunWinsOverAJobScriptsRankAndTheBatchScriptsSlurmTask) {
  llvm::Expected<ProcessPlace> P = placeIn({{"OMPI_COMM_WORLD_RANK", "2"},
                                            {"OMPI_COMM_WORLD_SIZE", "4"},
                                            {"RANK", "0"},
                                            {"WORLD_SIZE", "1"},
                                            {"SLURM_PROCID", "0"},
                                            {"SLURM_NTASKS", "4"}});
  ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
  EXPECT_EQ(P->Rank, 2);
  EXPECT_EQ(P->World, 4);
  EXPECT_EQ(P->Source, "mpirun");
}

/// A torchrun worker under srun inherits SLURM_PROCID/NTASKS of torchrun's
/// own task (0 of 1 here, one task per node): torchrun's RANK, WORLD_SIZE
/// and LOCAL_RANK place it. A RANK without torchrun's other variables (a
/// job script's) does not win over srun.
TEST(ProcessPlace, ATorchrunWorkerIsPlacedByTorchrunUnderSrun) {
  llvm::StringMap<std::string> Worker = {{"SLURM_PROCID", "0"},  {"SLURM_NTASKS", "1"},
                                         {"SLURM_LOCALID", "0"}, {"RANK", "2"},
                                         {"WORLD_SIZE", "3"},    {"LOCAL_RANK", "2"},
                                         {"GROUP_RANK", "0"},    {"LOCAL_WORLD_SIZE", "3"}};
  llvm::Expected<ProcessPlace> P = placeIn(Worker);
  ASSERT_TRUE(bool(P)) << llvm::toString(P.takeError());
  EXPECT_EQ(P->Rank, 2);
  EXPECT_EQ(P->World, 3);
  EXPECT_EQ(P->LocalRank, 2);
  EXPECT_EQ(P->Source, "torchrun");
  Worker.erase("GROUP_RANK");
  llvm::Expected<ProcessPlace> Script = placeIn(Worker);
  ASSERT_TRUE(bool(Script)) << llvm::toString(Script.takeError());
  EXPECT_EQ(Script->Rank, 0);
  EXPECT_EQ(Script->Source, "srun");
}

/// The processes on this host, which share its memory: --local-world, the
/// launcher's count (srun's list: the most on any node, so that every
/// process judges alike), else the whole world, assumed.
TEST(ProcessPlace, CountsTheProcessesOnThisHost) {
  // The count, and whether anything said it (-1: an error).
  auto LocalWorldIn = [](const llvm::StringMap<std::string> &Vars,
                         const PlaceFlags &F = {}) -> std::pair<int64_t, bool> {
    llvm::Expected<ProcessPlace> P = placeIn(Vars, F);
    if (!P) {
      ADD_FAILURE() << llvm::toString(P.takeError());
      return {-1, false};
    }
    return {P->LocalWorld, P->LocalWorldSaid};
  };
  using Count = std::pair<int64_t, bool>;
  llvm::StringMap<std::string> Mpi = {{"OMPI_COMM_WORLD_RANK", "5"},
                                      {"OMPI_COMM_WORLD_SIZE", "16"},
                                      {"OMPI_COMM_WORLD_LOCAL_SIZE", "8"}};
  EXPECT_EQ(LocalWorldIn(Mpi), Count(8, true));
  EXPECT_EQ(LocalWorldIn({{"OMPI_COMM_WORLD_RANK", "5"}, {"OMPI_COMM_WORLD_SIZE", "16"}}),
            Count(16, false));
  // Rank 0 sits on a node of 3; the most on any node is 4.
  EXPECT_EQ(LocalWorldIn({{"SLURM_PROCID", "0"},
                          {"SLURM_NTASKS", "11"},
                          {"SLURM_STEP_TASKS_PER_NODE", "3(x2),4,1"}}),
            Count(4, true));
  EXPECT_EQ(
      LocalWorldIn(
          {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "8"}, {"SLURM_STEP_TASKS_PER_NODE", " 2(x4)"}}),
      Count(2, true));
  EXPECT_EQ(
      LocalWorldIn(
          {{"RANK", "1"}, {"WORLD_SIZE", "6"}, {"GROUP_RANK", "0"}, {"LOCAL_WORLD_SIZE", "3"}}),
      Count(3, true));
  EXPECT_EQ(LocalWorldIn({{"RANK", "1"}, {"WORLD_SIZE", "6"}}), Count(6, false));
  // Placed by flags: the launcher's count where it fits their world, as
  // its local rank is; else the whole world.
  PlaceFlags Both;
  Both.Rank = 0;
  Both.World = 12;
  EXPECT_EQ(LocalWorldIn(Mpi, Both), Count(8, true));
  Both.World = 4;
  EXPECT_EQ(LocalWorldIn(Mpi, Both), Count(4, false));
  EXPECT_EQ(LocalWorldIn({}, Both), Count(4, false));
  PlaceFlags WorldOnly;
  WorldOnly.World = 6;
  EXPECT_EQ(LocalWorldIn(Mpi, WorldOnly), Count(6, false));
  PlaceFlags LocalOnly;
  LocalOnly.LocalRank = 1;
  EXPECT_EQ(LocalWorldIn(Mpi, LocalOnly), Count(8, true));
  // --local-world wins, even over a launcher's count it could not read.
  Both.LocalWorld = 1;
  EXPECT_EQ(LocalWorldIn({}, Both), Count(1, true));
  EXPECT_EQ(LocalWorldIn({{"SLURM_PROCID", "0"},
                          {"SLURM_NTASKS", "8"},
                          {"SLURM_STEP_TASKS_PER_NODE", "1(x2)junk"}},
                         Both),
            Count(1, true));
  // Placed by flags, a launcher's count it cannot read is passed over, as
  // its local rank is.
  PlaceFlags Flagged;
  Flagged.Rank = 0;
  Flagged.World = 8;
  EXPECT_EQ(LocalWorldIn({{"SLURM_STEP_TASKS_PER_NODE", "1(x2)junk"}}, Flagged), Count(8, false));
  Both.LocalWorld = 5;
  EXPECT_EQ(errorOf(placeIn({}, Both)),
            "--local-world 5: expected the processes on this host, 1 to the world's 4");
  // A count that is no count, or more than the launcher's world, is named.
  EXPECT_EQ(errorOf(placeIn({{"OMPI_COMM_WORLD_RANK", "0"},
                             {"OMPI_COMM_WORLD_SIZE", "4"},
                             {"OMPI_COMM_WORLD_LOCAL_SIZE", "5"}})),
            "OMPI_COMM_WORLD_LOCAL_SIZE='5': expected the processes on this host, 1 to the "
            "world's 4");
  EXPECT_EQ(
      errorOf(placeIn(
          {{"RANK", "0"}, {"WORLD_SIZE", "4"}, {"GROUP_RANK", "0"}, {"LOCAL_WORLD_SIZE", "0"}})),
      "LOCAL_WORLD_SIZE='0': expected the processes on this host, 1 to the world's 4");
  for (const char *Bad : {"", "x", "4(x", "4(x0)", "4(2)", "4,,2", "0", "-1", "2(x3)z"})
    EXPECT_EQ(
        errorOf(placeIn(
            {{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "8"}, {"SLURM_STEP_TASKS_PER_NODE", Bad}})),
        std::string("SLURM_STEP_TASKS_PER_NODE='") + Bad +
            "': expected tasks per node as Slurm writes them (such as 4(x2),3)")
        << Bad;
}

TEST(ProcessPlace, FlagsOverrideTheEnvironment) {
  PlaceFlags F;
  F.Rank = 1;
  llvm::Expected<ProcessPlace> P = placeIn({{"RANK", "0"}, {"WORLD_SIZE", "2"}}, F);
  ASSERT_TRUE(bool(P));
  EXPECT_EQ(P->Rank, 1);
  EXPECT_EQ(P->World, 2);
  EXPECT_EQ(P->Source, "flags");
  F.World = 3;
  llvm::Expected<ProcessPlace> Q = placeIn({}, F);
  ASSERT_TRUE(bool(Q));
  EXPECT_EQ(Q->World, 3);
  // Both given, they place the process whatever the launcher's variables
  // hold: half of srun's (an sbatch job without -n), a value that is no
  // number, or mpirun's local rank beyond the flags' world.
  using Vars = llvm::StringMap<std::string>;
  for (const Vars &Env : {Vars{{"SLURM_PROCID", "0"}}, Vars{{"RANK", "abc"}, {"WORLD_SIZE", "2"}},
                          Vars{{"OMPI_COMM_WORLD_RANK", "1"},
                               {"OMPI_COMM_WORLD_SIZE", "2"},
                               {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}}}) {
    PlaceFlags Both;
    Both.Rank = 0;
    Both.World = 1;
    llvm::Expected<ProcessPlace> R = placeIn(Env, Both);
    ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
    EXPECT_EQ(R->Rank, 0);
    EXPECT_EQ(R->World, 1);
    EXPECT_EQ(R->LocalRank, 0);
    EXPECT_EQ(R->Source, "flags");
  }
  // The launcher's local rank is still the one a GPU is chosen by (the C
  // API and `collc run --backend nccl` pass both flags), where it is one.
  PlaceFlags Both;
  Both.Rank = 3;
  Both.World = 8;
  for (const char *Local : {"SLURM_LOCALID", "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK"}) {
    llvm::Expected<ProcessPlace> R = placeIn({{Local, "3"}}, Both);
    ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
    EXPECT_EQ(R->LocalRank, 3) << Local;
  }
  Both.LocalRank = 1;
  llvm::Expected<ProcessPlace> Given = placeIn({{"SLURM_LOCALID", "3"}}, Both);
  ASSERT_TRUE(bool(Given));
  EXPECT_EQ(Given->LocalRank, 1);
}

TEST(ProcessPlace, RefusesWhatIsNotAPlace) {
  EXPECT_EQ(errorOf(placeIn({})),
            "no launcher environment: expected OMPI_COMM_WORLD_RANK/SIZE (mpirun), "
            "SLURM_PROCID/NTASKS (srun) or RANK/WORLD_SIZE (torchrun), or --rank and --world");
  EXPECT_EQ(errorOf(placeIn({{"RANK", "x1"}, {"WORLD_SIZE", "2"}})),
            "RANK='x1': expected a non-negative number");
  EXPECT_EQ(errorOf(placeIn({{"RANK", "0"}})),
            "RANK is set but WORLD_SIZE is not: a torchrun launch sets both");
  EXPECT_EQ(errorOf(placeIn({{"RANK", "2"}, {"WORLD_SIZE", "2"}})),
            "rank 2 of world 2 (from torchrun): expected a rank in 0..world-1 and a world of at "
            "least 1");
  EXPECT_EQ(errorOf(placeIn({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"LOCAL_RANK", "99999999999"}})),
            "local rank 99999999999 of world 2 (from torchrun): expected a local rank below the "
            "world");
  // A world no program has is refused naming where it came from, not as
  // the program's (it was compiled for that world first).
  EXPECT_EQ(errorOf(placeIn({{"RANK", "0"}, {"WORLD_SIZE", "9223372036854775807"}})),
            "world 9223372036854775807 (from torchrun): expected a world of 1..1048576");
  PlaceFlags OnlyRank;
  OnlyRank.Rank = 0;
  EXPECT_EQ(errorOf(placeIn({}, OnlyRank)),
            "no launcher environment: give both --rank and --world");
}

TEST(RendezvousAddress, ParsesTheFourForms) {
  llvm::Expected<RendezvousAddress> F = parseRendezvous("file:/tmp/rdv");
  ASSERT_TRUE(bool(F));
  EXPECT_EQ(F->How, RendezvousAddress::Kind::File);
  EXPECT_EQ(F->Directory, "/tmp/rdv");
  llvm::Expected<RendezvousAddress> R = parseRendezvous("redis://127.0.0.1:6379");
  ASSERT_TRUE(bool(R));
  EXPECT_EQ(R->How, RendezvousAddress::Kind::Redis);
  EXPECT_EQ(R->Host, "127.0.0.1");
  EXPECT_EQ(R->Port, 6379);
  EXPECT_EQ(R->text(), "redis://127.0.0.1:6379");
  // An IPv6 address in brackets: hiredis gets it without them.
  llvm::Expected<RendezvousAddress> V6 = parseRendezvous("redis://[::1]:6379");
  ASSERT_TRUE(bool(V6)) << llvm::toString(V6.takeError());
  EXPECT_EQ(V6->Host, "::1");
  EXPECT_EQ(V6->text(), "redis://[::1]:6379");
  llvm::Expected<RendezvousAddress> M = parseRendezvous("mpi");
  ASSERT_TRUE(bool(M));
  EXPECT_EQ(M->How, RendezvousAddress::Kind::Mpi);
  // The program's store (runtime/launch/ExternalStore.h), by its name.
  llvm::Expected<RendezvousAddress> S = parseRendezvous("store:torch.0");
  ASSERT_TRUE(bool(S));
  EXPECT_EQ(S->How, RendezvousAddress::Kind::Store);
  EXPECT_EQ(S->StoreName, "torch.0");
  EXPECT_EQ(S->text(), "store:torch.0");
}

TEST(RendezvousAddress, RefusesOtherForms) {
  for (const char *Bad :
       {"", "file:", "redis://host", "redis://:80", "redis://h:0", "redis://h:70000", "tcp://h:1",
        "redis://::1:6379", "redis://[::1:6379", "redis://[]:6379",
        "redis://user:pw@127.0.0.1:6379", "redis://127.0.0.1/0:6379", "redis://a b:6379",
        "store:", "store:a/b"}) {
    llvm::Expected<RendezvousAddress> A = parseRendezvous(Bad);
    ASSERT_FALSE(bool(A)) << Bad;
    std::string Msg = llvm::toString(A.takeError());
    EXPECT_NE(Msg.find(std::string("'") + Bad + "'"), std::string::npos) << Msg;
    EXPECT_NE(Msg.find("expected file:DIR, redis://HOST:PORT, store:NAME or mpi"),
              std::string::npos)
        << Msg;
  }
  // An error names where the address was given.
  llvm::Expected<RendezvousAddress> Env = parseRendezvous("nowhere", "COLLC_RENDEZVOUS");
  ASSERT_FALSE(bool(Env));
  EXPECT_EQ(
      llvm::toString(Env.takeError()),
      "COLLC_RENDEZVOUS 'nowhere': unknown form; expected file:DIR, redis://HOST:PORT, store:NAME "
      "or mpi");
}

} // namespace
