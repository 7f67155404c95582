//===- tests/launch/GlooRankMain.cpp - One rank of a gloo test run ---------===//
//
// Started once per rank by tests/launch/spawn_ranks.py (rank, world and
// rendezvous from its environment), this process runs its own rank of a
// real plan on createGlooExecutor.
//
//   collc_gloo_rank executor STEPS
//     replays the plan STEPS times and checks this rank's results against
//     runtime/verify's reference after every step; exit 0 when they match.
//   collc_gloo_rank until-lost 0
//     replays the plan until a step fails (or the executor cannot be made),
//     then prints "lost: rank P: WHY" (P the error's peer), stays for the
//     timeout (COLLC_TIMEOUT_MS) and exits 3: for a fault script that
//     SIGKILLs a rank from outside (tests/launch/shm_kill_runs.py). As in
//     kill mode, a survivor that left at once would be the next lost peer
//     of those still finding out. They all began the failed call together
//     (a collective) and find out within a timeout of its start, so each
//     stays until half a timeout past that (and at least half a timeout
//     after finding out): every exit within 1.5 timeouts of the kill where
//     the call began before it, half a timeout of slack on both sides.
//   collc_gloo_rank kill VICTIM
//     every rank replays the plan; at step 3 rank VICTIM SIGKILLs itself in
//     the middle of the step (after its first compute). A survivor must fail
//     within twice the timeout (COLLC_TIMEOUT_MS) with an error that names
//     rank VICTIM: it then prints "survivor: named rank VICTIM" and exits 3
//     (the test expects exactly that status from every survivor) once twice
//     the timeout has passed since the step began; any other outcome exits 1.
//   collc_gloo_rank lost VICTIM
//     every rank replays the plan once; then rank VICTIM exits (0), and
//     every other polls synchronize(0) (which only checks) until it reports
//     rank VICTIM lost, within twice the timeout: exit 0 then, else 1.
//
//===----------------------------------------------------------------------===//

#include "tests/launch/LaunchedRank.h"

#include "compiler/Compile.h"
#include "runtime/exec/RuntimeError.h"
#include "runtime/exec/Timeout.h"
#include "runtime/gloo/GlooExecutor.h"
#include "runtime/verify/PlanChecker.h"
#include "runtime/verify/SyntheticData.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <climits>
#include <csignal>
#include <thread>
#include <cstdlib>
#include <unistd.h>

using namespace collc;
using namespace collc::rt;
using llvm::Error;
using llvm::Expected;

namespace {

// Every kind of driver operation the executor issues for a data- and
// tensor-parallel step, on both reduce paths (f32 direct, bf16 staged).
const char *TestProgram = R"(program @gloo_rank_test world(WORLD) {
  group @dp = world
  %a = compute @layer_a : f32[1000]
  %b = compute @layer_b : bf16[77]
  %c = compute @layer_c : i32[64]
  %ra = all_reduce sum %a in @dp
  %rb = all_reduce avg %b in @dp
  %gc = all_gather %c in @dp
  compute @optimizer(%ra, %rb, %gc)
}
)";

int fail(const llvm::Twine &Msg) {
  llvm::errs() << "error: " << Msg << "\n";
  return 1;
}

/// until-lost's end: the error, the rank it blames, exit 3 once the peers
/// in the call begun at \p Since have found out too (see above).
[[noreturn]] void lost(Error E, std::chrono::milliseconds Timeout,
                       std::chrono::steady_clock::time_point Since) {
  int64_t Peer = -1;
  std::string Msg;
  llvm::handleAllErrors(
      std::move(E),
      [&](const RuntimeError &R) {
        Peer = R.peer();
        Msg = R.text();
      },
      [&](const llvm::ErrorInfoBase &B) { Msg = B.message(); });
  llvm::outs() << llvm::formatv("lost: rank {0}: {1}\n", Peer, Msg);
  llvm::outs().flush();
  std::this_thread::sleep_until(std::max(std::chrono::steady_clock::now() + Timeout / 2,
                                         Since + Timeout + Timeout / 2));
  _exit(3); // Gloo's threads may still hold the dead pairs: leave at once
}

} // namespace

int main(int Argc, char **Argv) {
  if (Argc != 3)
    return fail("usage: collc_gloo_rank executor STEPS | kill VICTIM | lost VICTIM | "
                "until-lost 0");
  std::string Mode = Argv[1];
  int Arg = atoi(Argv[2]);
  Expected<collc::test::LaunchedRank> Me = collc::test::launchedRank();
  if (!Me)
    return fail(llvm::toString(Me.takeError()));
  const ProcessPlace &Place = Me->Place;
  Expected<std::chrono::milliseconds> Timeout = timeoutFromEnvironment();
  if (!Timeout)
    return fail(llvm::toString(Timeout.takeError()));

  std::string Text = TestProgram;
  Text.replace(Text.find("WORLD"), 5, std::to_string(Place.World));
  Expected<plan::Plan> P = compileProgramText(Text, "", "gloo_rank_test.coll");
  if (!P)
    return fail(llvm::toString(P.takeError()));
  ExecutorOptions Opts;
  Opts.Timeout = *Timeout;
  auto Made = std::chrono::steady_clock::now();
  Expected<std::unique_ptr<Executor>> X = createGlooExecutor(*P, Place, Me->Where, Opts);
  if (!X && Mode == "until-lost")
    lost(X.takeError(), *Timeout, Made);
  if (!X)
    return fail(llvm::toString(X.takeError()));
  Executor &E = **X;
  int64_t Rank = Place.Rank;

  std::vector<std::vector<char>> Storage;
  for (const std::string &Name : E.unboundTensors()) {
    uint32_t T = 0;
    while (P->Tensors[T].Name != Name)
      ++T;
    Storage.emplace_back(P->Tensors[T].Type.bytes(), 0);
    if (Error Err = E.bind(Name, Storage.back().data(), Storage.back().size()))
      return fail(llvm::toString(std::move(Err)));
  }
  auto Captured = std::chrono::steady_clock::now();
  if (Error Err = E.capture()) {
    if (Mode == "until-lost")
      lost(std::move(Err), *Timeout, Captured);
    return fail(llvm::toString(std::move(Err)));
  }

  bool Kill = Mode == "kill", Lost = Mode == "lost", UntilLost = Mode == "until-lost";
  if (UntilLost) {
    llvm::outs() << "ready\n";
    llvm::outs().flush();
  }
  int Steps = Kill ? 1000 : Lost ? 1 : UntilLost ? INT_MAX : Arg;
  for (int Step = 0; Step != Steps; ++Step) {
    auto Start = std::chrono::steady_clock::now();
    bool First = true;
    Error Err = E.replay([&](const plan::Compute &C, uint32_t) -> Error {
      if (Kill && Rank == Arg && Step == 3 && !First)
        raise(SIGKILL); // mid-step: after a compute whose gradient is in flight
      First = false;
      for (uint32_t T : C.Outputs) {
        Expected<llvm::MutableArrayRef<char>> M = E.tensor(P->Tensors[T].Name);
        if (!M)
          return M.takeError();
        fillSynthetic(*P, T, Rank, *M);
      }
      return Error::success();
    });
    if (Err) {
      auto Took = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::chrono::steady_clock::now() - Start);
      int64_t Peer = -1;
      std::string Msg;
      llvm::handleAllErrors(
          std::move(Err),
          [&](const RuntimeError &R) {
            Peer = R.peer();
            Msg = R.text();
          },
          [&](const llvm::ErrorInfoBase &B) { Msg = B.message(); });
      llvm::outs() << llvm::formatv("step {0} failed after {1} ms: {2}\n", Step, Took.count(),
                                    Msg);
      if (UntilLost)
        lost(makeError(ErrorKind::Backend, Msg, Peer), *Timeout, Start);
      bool Named = Peer == Arg && Msg.find(llvm::formatv("rank {0}", Arg).str()) != std::string::npos;
      if (Kill && Named && Took <= 2 * *Timeout) {
        llvm::outs() << "survivor: named rank " << Arg << "\n";
        llvm::outs().flush();
        // Stay until the others' deadline too: a survivor that left at once
        // would be the next lost peer of those still finding out.
        std::this_thread::sleep_until(Start + 2 * *Timeout);
        _exit(3); // Gloo's threads may still hold the dead pairs: leave at once
      }
      return fail(Kill ? llvm::formatv("expected an error naming rank {0} within {1} ms", Arg,
                                       2 * Timeout->count())
                             .str()
                       : Msg);
    }
    if (Kill || UntilLost)
      continue;
    // This rank only (the others check theirs); Gloo's float sums within
    // the summation bound, narrow floats accumulated in f32.
    CheckOptions Check;
    Check.OnlyRank = Rank;
    Check.Reductions.RankOrdered = false;
    Expected<CheckSummary> S = checkPlanResults(
        *P,
        [&](int64_t, uint32_t T) -> llvm::ArrayRef<char> {
          Expected<llvm::MutableArrayRef<char>> M = E.tensor(P->Tensors[T].Name);
          if (!M) {
            llvm::consumeError(M.takeError());
            return {};
          }
          return *M;
        },
        Check);
    if (!S)
      return fail(llvm::formatv("step {0}: {1}", Step, llvm::toString(S.takeError())));
    llvm::outs() << llvm::formatv("step {0}: {1} tensors, {2} bytes match the reference\n", Step,
                                  S->TensorsChecked, S->BytesChecked);
  }
  if (Kill)
    return fail("no rank was lost in 1000 steps");
  if (Lost && Rank == Arg)
    return 0;
  if (Lost) {
    // Nothing runs now: only a look at the peers can tell that one ended.
    auto Deadline = std::chrono::steady_clock::now() + 2 * *Timeout;
    while (std::chrono::steady_clock::now() < Deadline) {
      int64_t Peer = -1;
      std::string Msg;
      llvm::handleAllErrors(
          E.synchronize(std::chrono::milliseconds(0)),
          [&](const RuntimeError &R) {
            Peer = R.peer();
            Msg = R.text();
          },
          [&](const llvm::ErrorInfoBase &B) { Msg = B.message(); });
      if (Peer == Arg) {
        llvm::outs() << "survivor: synchronize(0) named rank " << Arg << ": " << Msg << "\n";
        return 0;
      }
      if (!Msg.empty())
        return fail("synchronize(0) failed without naming rank " + std::to_string(Arg) + ": " +
                    Msg);
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return fail(llvm::formatv("synchronize(0) did not report rank {0} lost within {1} ms", Arg,
                              2 * Timeout->count()));
  }
  return 0;
}
