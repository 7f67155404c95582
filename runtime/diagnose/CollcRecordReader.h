//===- runtime/diagnose/CollcRecordReader.h - collc's flight record dumps -*- C++ -*-===//
//
// Reads a dump of runtime/exec/FlightRecordDump.h (format
// "collc-flight-record", version 1) into a RankRecord, refusing with a
// located error what the writer would never write: another version, a
// rank outside its world, more events than the ring holds, an event of a
// group the dump does not list, a state or an op that does not exist.
//
// A collective's channel is its group's subgroup ("dp/0"; the world is
// "world") and its Seq the replay and plan step of its launch; a send or
// recv's channel is "p2p FROM->TO" and its Seq the replay and its ordinal
// between the two, which the sender and the receiver count alike.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_DIAGNOSE_COLLCRECORDREADER_H
#define COLLC_RUNTIME_DIAGNOSE_COLLCRECORDREADER_H

#include "runtime/diagnose/RankRecord.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

namespace collc::diag {

/// Whether \p Top says it is a collc flight record (whatever its version).
bool isCollcRecord(const llvm::json::Object &Top);

/// The dump \p Top read from \p File.
llvm::Expected<RankRecord> readCollcRecord(const llvm::json::Object &Top, llvm::StringRef File);

/// The channel of a collective of group \p Group ("" for the world), and
/// of the sends from \p From to \p To.
std::string groupChannel(llvm::StringRef Group, int64_t Subgroup);
std::string p2pChannel(int64_t From, int64_t To);

/// How a collc op is said: "comm #0 all_reduce in @dp/0, step 81 of replay
/// 4"; \p Group is "@dp/0", "the world" or "rank 0 to rank 1".
std::string collcOpLabel(int64_t Comm, llvm::StringRef Op, llvm::StringRef Group, int64_t Step,
                         int64_t Replay);
/// What the members of a collc op agree on: "all_reduce f32 4096 B".
std::string collcSignature(llvm::StringRef Op, llvm::StringRef DType, uint64_t Bytes);
/// "@dp/0" for a group's subgroup, "the world" for the world.
std::string collcGroupName(llvm::StringRef Group, int64_t Subgroup);

/// The largest replay a Seq holds (it keeps the step in its low 32 bits).
constexpr int64_t MaxReplay = (int64_t(1) << 31) - 1;

} // namespace collc::diag

#endif
