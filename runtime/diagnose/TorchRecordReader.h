//===- runtime/diagnose/TorchRecordReader.h - PyTorch Flight Recorder dumps -*- C++ -*-===//
//
// Reads a dump of PyTorch's Flight Recorder (torch/csrc/distributed/c10d/
// FlightRecorder.hpp, its JSON form, dump_json; the pickle form holds the
// same dictionary but is not read here) into a
// RankRecord, so that the rules of Diagnosis.h run on it with process
// groups and sequence numbers standing in for the plan:
//
//   {"version": "2.4", "pg_config": {NAME: {"name", "desc", "ranks"}},
//    "pg_status": {PG_ID: {...}}, "entries": [{"record_id", "pg_id",
//    "process_group": [NAME, DESC], "collective_seq_id", "p2p_seq_id",
//    "op_id", "profiling_name", "input_sizes", "input_dtypes",
//    "output_sizes", "output_dtypes", "state", "time_created_ns",
//    "time_discovered_started_ns", "time_discovered_completed_ns",
//    "timeout_ms", "is_p2p", "retired"?, "frames"?}]}
//
// Version 2.x of the schema is read (the fields above, all present since
// 2.4; later minor versions add fields, which are ignored); another major
// version is refused. A collective's channel is its process group (its
// name and ranks) and its Seq the collective_seq_id; a send or recv
// ("nccl:send 0->1", group ranks) pairs with the other side by its ordinal
// between the two ranks, known only when the record starts at record 0.
// An entry the recorder retired without seeing it complete timed out
// (FlightRecorder.hpp says so); "coalesced" entries mark the end of a
// batch and are not ops. The dump does not say its rank: a "rank" field
// does, else the digits that end the file's name, as fr_trace reads them
// (nccl_trace_rank_3).
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_DIAGNOSE_TORCHRECORDREADER_H
#define COLLC_RUNTIME_DIAGNOSE_TORCHRECORDREADER_H

#include "runtime/diagnose/RankRecord.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/JSON.h"

namespace collc::diag {

/// The schema major version read, and the first minor version it knows.
constexpr int TorchSchemaMajor = 2;
constexpr int TorchSchemaMinor = 4;

/// Whether \p Top looks like a Flight Recorder dump (a version and a
/// pg_config, and no collc format).
bool isTorchRecord(const llvm::json::Object &Top);

/// The dump \p Top read from \p File.
llvm::Expected<RankRecord> readTorchRecord(const llvm::json::Object &Top, llvm::StringRef File);

} // namespace collc::diag

#endif
