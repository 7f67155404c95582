//===- tools/collc/InjectedFault.h - A fault a test injects into a run -*- C++ -*-===//
//
// `collc run --inject-fault RANK:POINT:SIGNAL` (a hidden option, for the
// fault tests: tests/launch/fault_matrix.py): the process of rank RANK of a
// process backend stops (`stop`: SIGSTOP) or kills (`kill`: SIGKILL)
// itself at POINT, as a crashed, descheduled or debugged process would, so
// that a test sees what its peers do when a rank fails at a known point:
//
//   start          before the processes meet (on mpi before MPI_Init)
//   join           after the run's meeting, before the executor joins the
//                  plan's groups (the peers are in that join)
//   mid-step       in the second step (the only one of a one-step run), at
//                  the rank's middle compute: what it launched before is in
//                  flight
//   between-steps  after the first step ended, before the next began
//   finalize       after the run reported, before MPI is finalized
//
// It says so on standard error first, then raises the signal.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TOOLS_COLLC_INJECTEDFAULT_H
#define COLLC_TOOLS_COLLC_INJECTEDFAULT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace collc::tool {

enum class FaultPoint { Start, Join, MidStep, BetweenSteps, Finalize };

class InjectedFault {
public:
  /// RANK:POINT:SIGNAL as above; an error naming what is wrong.
  static llvm::Expected<InjectedFault> parse(llvm::StringRef Text);

  /// Whether the fault is at \p P of rank \p Rank's run.
  bool isAt(FaultPoint P, int64_t Rank) const { return P == Point && Rank == OnRank; }
  /// At \p P of rank \p Rank's run: when the fault is there, says so and
  /// raises it (a stopped process goes on when continued).
  void at(FaultPoint P, int64_t Rank) const;

private:
  int64_t OnRank = 0;
  FaultPoint Point = FaultPoint::Start;
  int Signal = 0;
};

} // namespace collc::tool

#endif
