//===- ir/Ids.h - Indices that name values, ops and groups -------*- C++ -*-===//
//
// A program refers to its values, ops and groups by index (Program.h); the
// cross-rank simulation (RankSimulation.h), which also runs schedules that
// are not programs, names what ranks issue by the same kinds of index.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_IR_IDS_H
#define COLLC_IR_IDS_H

#include <cstdint>

namespace collc {

using ValueId = uint32_t;
using OpId = uint32_t;
using GroupId = uint32_t;
constexpr uint32_t InvalidId = ~0u;

} // namespace collc

#endif // COLLC_IR_IDS_H
