//===- tests/runtime/JointCases.h - Rank-conditional collectives -*- C++ -*-===//
//
// Programs that write collectives as rank-conditional ops (issue 35): one
// collective spelled as several ops with complementary `when`s, waits in
// different orders per rank, mixes with send/recv, and the real mismatches
// beside them. Each case says what MPI would do with it, so the test reads
// as a table of MPI's behaviour against collc's: the ones MPI runs compile
// and run verified (on local ranks, and on mpi at 2-4 processes), the ones
// it would hang or fail on are refused, naming ranks and ops.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TESTS_RUNTIME_JOINTCASES_H
#define COLLC_TESTS_RUNTIME_JOINTCASES_H

#include <cstdint>
#include <string>
#include <vector>

namespace collc::test {

struct JointCase {
  std::string Name;    ///< unique, for messages
  int64_t World;       ///< the program's world
  std::string Program; ///< IR text
  /// What MPI does with the same calls: "runs: ..." or "hangs: ..." or
  /// "fails: ...", with why.
  std::string Mpi;
  /// Whether collc must compile and run it (every case MPI runs, but those
  /// whose Mpi label says why collc refuses it).
  bool Valid;
  /// Refused cases: fragments the diagnostic must contain (the ranks, the
  /// ops, what differs).
  std::vector<std::string> Mentions;
};

/// Every case, for worlds 2 to 4.
std::vector<JointCase> jointCases();

} // namespace collc::test

#endif
