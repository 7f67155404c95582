//===- tests/property/ProgramGenerator.h - Random whole programs -*- C++ -*-===//
//
// Generates program text for the agreement property (issue 13): groups
// (world, explicit ranks, splits with and without uncolored ranks),
// collectives of every kind with random `when` predicates (none, aligned to
// the group's subgroups, arbitrary, complementary pairs), async launches
// and their waits, point-to-point chains and pairs (blocking and async
// recv), ring shifts with `send async` tokens waited at once or later, rings
// and pair exchanges in `p2p { }` blocks (one way or both, recvs first or
// sends first), a ring split over two blocks (a deadlock to refuse), chains of collectives through results, and uses of values where
// they may be undefined. Most programs are meant to compile; the rest probe
// refusals. One seed gives one program shape, written for any world size,
// so a shape is checked on every world from 2 to 8.
//
// Deterministic across platforms: a std::mt19937_64 read raw (no standard
// distributions, whose results differ between libraries).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_TESTS_PROPERTY_PROGRAMGENERATOR_H
#define COLLC_TESTS_PROPERTY_PROGRAMGENERATOR_H

#include <cstdint>
#include <string>
#include <vector>

namespace collc::property {

/// One program shape: lines with the world size left open.
class ProgramShape {
public:
  /// The shape of seed \p Seed.
  static ProgramShape generate(uint64_t Seed);
  /// The program's text for a world of \p World ranks.
  std::string text(int64_t World) const;

private:
  friend class ShapeBuilder;
  /// Lines of the body; "$M" stands for a
  /// world x world split matrix of ones (all_to_all_v).
  std::vector<std::string> Lines;
  uint64_t Seed = 0;
};

} // namespace collc::property

#endif
