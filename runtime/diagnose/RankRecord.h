//===- runtime/diagnose/RankRecord.h - One rank's record, whatever wrote it -*- C++ -*-===//
//
// What `collc diagnose` reasons over: for each rank that left a dump, its
// ops in the order it issued them, each placed where every rank taking
// part would place it, so that records of different ranks line up without
// knowing who wrote them. collc's flight records (CollcRecordReader.h) and
// PyTorch's Flight Recorder dumps (TorchRecordReader.h) both become this:
//
//  - a channel is a sequence of ops that its members issue in one order:
//    a plan group's subgroup ("dp/0", the world "world"), a process group
//    of torch, or the sends from one rank to another ("p2p 0->1");
//  - an op's Seq is its place in its channel, the same on every member:
//    for collc the replay and the plan step of its launch (or, for a send
//    or recv, the replay and its ordinal with that peer), for torch the
//    collective_seq_id (or a p2p op's ordinal between its two ranks).
//
// The plan, or for torch the process groups and sequence numbers, stand
// behind it; Diagnosis.h reads it.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_DIAGNOSE_RANKRECORD_H
#define COLLC_RUNTIME_DIAGNOSE_RANKRECORD_H

#include "runtime/exec/FlightRecord.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace collc::diag {

/// The formats a dump may have.
enum class RecordFormat { Collc, Torch };
llvm::StringRef recordFormatName(RecordFormat F);

/// One op as one rank recorded it.
struct OpRecord {
  std::string Channel;
  uint64_t Seq = 0;
  /// Whether Channel and Seq are known (a torch send or recv whose record
  /// does not start at the beginning cannot be paired).
  bool Placed = true;
  /// The world ranks that take part (sorted).
  std::vector<int64_t> Members;
  bool PointToPoint = false;
  rt::CommState State = rt::CommState::Issued;
  /// When it failed, or (torch) timed out: its error's kind and the world
  /// rank blamed (-1: nobody).
  std::optional<rt::ErrorKind> Error;
  int64_t Blamed = -1;
  /// "all_reduce" (collc), "nccl:all_reduce" (torch).
  std::string Op;
  /// What every member must agree on (op, types, sizes).
  std::string Signature;
  /// For the user: what it is and where ("comm #0 all_reduce in @dp/0,
  /// step 81 of replay 4"), its group ("@dp/0", a process group), its
  /// program line, and (collc) the plan's replay, step and comm.
  std::string Label, Group, Loc;
  int64_t Replay = -1, Step = -1, Comm = -1;
  /// A runtime all_to_all_v: the rows this rank said it sends to each member.
  std::vector<int64_t> Splits;
  int64_t IssuedNs = 0, StartedNs = 0, EndedNs = 0;
  /// Its number in the rank's record (collc's seq, torch's record_id):
  /// consecutive numbers are events with nothing between them.
  int64_t Record = -1;
};

/// What a rank said about its own failure.
struct RankFailure {
  rt::ErrorKind Kind = rt::ErrorKind::Backend;
  int64_t Peer = -1; ///< world rank blamed, or -1
  std::string Message;
};

struct RankRecord {
  RecordFormat Format = RecordFormat::Collc;
  std::string File;
  int64_t Rank = 0;
  int64_t World = 0;
  /// What ranks must share to run together: the plan digest (collc); empty
  /// for torch.
  std::string Identity;
  std::string Program, Source, Backend, Reason;
  std::optional<RankFailure> Failure;
  /// In the order this rank issued them.
  std::vector<OpRecord> Ops;
  /// Whether the record holds every op since the start (nothing dropped
  /// from its ring): a channel op it lacks was never issued.
  bool Complete = true;
  /// Where it was outside any op, when it says ("compute at step 12 of
  /// replay 4"), and whether that is a compute.
  std::string Position;
  bool InCompute = false;
  /// Ended normally (collc: dumped at the end of its run).
  bool Finished = false;
  int64_t DumpedNs = 0;
};

} // namespace collc::diag

#endif
