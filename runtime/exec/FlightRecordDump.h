//===- runtime/exec/FlightRecordDump.h - A flight record as a JSON file -*- C++ -*-===//
//
// One file per rank, DIR/collc-record-rank<R>.json, written whole or not
// at all (a temporary file renamed over it: plan/OutputFile.h), so that a
// dump is complete even if the process dies a moment later; a later dump
// of the rank replaces it. The format (version 1, docs/diagnose.md):
//
//   {"format": "collc-flight-record", "version": 1,
//    "rank": 2, "world": 4, "backend": "gloo", "pid": 123, "host": "h",
//    "reason": "failure" | "timeout" | "signal" | "exit" | "request",
//    "dumped_ns": <Unix ns>,
//    "plan": {"program": "gpt2_ddp", "digest": "xxh64:...", "source": "gpt2.coll"},
//    "groups": [{"name": "dp", "subgroup": 0, "ranks": [0, 1, 2, 3]}],
//    "replays": 5,
//    "position": {"replay": 5, "step": 81, "activity": "wait"},
//    "error": {"kind": "peer_lost", "peer": 1, "message": "..."},
//    "capacity": 1024, "recorded": 4012,
//    "events": [{"seq": 4011, "replay": 5, "step": 81, "comm": 0,
//                "op": "all_reduce", "group": "dp", "subgroup": 0,
//                "loc": "12:3", "dtype": "f32", "bytes": 4096,
//                "peer": -1, "root": -1, "p2p": -1,
//                "splits": [..], "splits_truncated": false,
//                "state": "failed", "error": "peer_lost", "blamed": 1,
//                "issued_ns": .., "started_ns": .., "ended_ns": ..}]}
//
// Times are Unix nanoseconds to about a millisecond (CoarseClock.h; 0: not
// yet); ranks are world ranks; "groups" lists the subgroups this rank
// belongs to, the world ("") among them.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_EXEC_FLIGHTRECORDDUMP_H
#define COLLC_RUNTIME_EXEC_FLIGHTRECORDDUMP_H

#include "runtime/exec/FlightRecord.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace collc::rt {

/// Why a dump was written, as its "reason" says.
enum class DumpReason { Failure, Timeout, Signal, Exit, Request };
llvm::StringRef dumpReasonName(DumpReason R);

/// Where rank \p Rank's dumps go in \p Dir.
std::string flightRecordPath(llvm::StringRef Dir, int64_t Rank);

/// \p Record's snapshot as the JSON above.
void writeFlightRecord(const FlightRecorder &Record, DumpReason Why, llvm::raw_ostream &OS);

/// Writes \p Record into \p Dir (made if missing) as flightRecordPath says,
/// whole or not at all; an error names the path and why.
llvm::Error dumpFlightRecord(const FlightRecorder &Record, llvm::StringRef Dir, DumpReason Why);

/// What every backend (and a run whose rank fails before its executor
/// exists) does with an error that ends an operation of the rank: keeps
/// it in \p Record as the rank's failure, with \p Blamed the world rank it
/// blames (-1: nobody; nullopt: the error's own peer, where that is a world
/// rank: an error of the world's communicator), and dumps the record where
/// it has a directory (reason "timeout" for a timeout, else "failure").
/// Returns the error as it came (kind, text, peer), its text extended only
/// when the dump could not be written.
llvm::Error recordFailure(FlightRecorder &Record, llvm::Error E,
                          std::optional<int64_t> Blamed);

} // namespace collc::rt

#endif
