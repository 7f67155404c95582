//===- runtime/nccl/NcclLowering.h - A plan as one rank's CUDA/NCCL calls -*- C++ -*-===//
//
// The NCCL backend's lowering, kept free of CUDA so that it builds and is
// golden-tested everywhere (`collc dump PLAN --format nccl --rank R` prints
// it: NcclListing.h) and the executor on a GPU walks the very same list.
//
// For one rank: the setup (device, comm stream, communicators: the world's
// root from its unique id, every other split from it; premul_sum ops, plan
// buffers, events), the eager warm-up (one call per distinct
// communicator/op/peer, so that NCCL connects before capture), and the
// capture: the plan's steps as calls on the comm stream. The model records
// a ready event after each compute, and enqueues a step's records before it
// launches that step's graph (the contract of cudaStreamWaitEvent: a wait
// is on a record already issued). On the device each wait still holds back
// only its own bucket, so communication overlaps the backward pass.
// A launch waits on the latest compute of
// each model stream that produced one of its inputs (stream order covers
// the earlier ones) unless an earlier wait already did. Launches are issued
// in the groups of IssueOrder.h, after their waits and pack kernels:
// consecutive collectives form one NCCL group; sends and recvs form groups
// of their own, a group holding an async one open across computes until
// the wait for one of its comms or the next collective (an IR `p2p { }`
// block lies within one group; the exchange `recv async; compute; send;
// wait` is one group); a wait step unpacks and records the comm's done
// event, which the model's compute streams wait on before using the
// results. A step is then one cudaGraphLaunch per
// graph. An all_to_all_v whose split sizes are only known at run time cannot
// be captured: it ends a graph, runs eagerly (its counts are exchanged and
// read back to the host), and the next graph starts after it.
//
// Invariant: a rank's calls name only communicators it belongs to, every
// NCCL call of a communicator appears in the same order on all of its
// ranks (the plan's step order), and no NCCL communicator is created or
// connected inside a capture. Whether the ranks' streams, issuing in this
// order, can run together is StreamOrderCheck.h's to judge, once per plan:
// lowerRunnableForRank there lowers a plan it accepts.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_RUNTIME_NCCL_NCCLLOWERING_H
#define COLLC_RUNTIME_NCCL_NCCLLOWERING_H

#include "plan/Plan.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace collc::rt::nccl {

/// NCCL's names (nccl.h) for collc's element types and reduce ops. Every
/// collc type has one: fp8 needs NCCL 2.24 and an SM90 GPU at run time.
llvm::StringRef ncclTypeName(ElemType T);
/// premul_sum has none: it is an op created per communicator and factor.
llvm::StringRef ncclOpName(ReduceOp Op);

/// Where a pointer argument points: a plan buffer, or a tensor the model
/// binds (its own device memory), plus an offset in bytes. Two buffers
/// follow the plan's: scratch (Plan::Buffers.size(), the barrier's int32)
/// and counts (+1, the split sizes of runtime all_to_all_v).
struct Ref {
  int32_t Buffer = -1;
  int32_t Tensor = -1;
  uint64_t Offset = 0;
  bool operator==(const Ref &O) const {
    return Buffer == O.Buffer && Tensor == O.Tensor && Offset == O.Offset;
  }
};

/// One contiguous copy of a pack or unpack kernel.
struct CopySegment {
  Ref Dst, Src;
  uint64_t Bytes;
};

enum class CallKind : uint8_t {
  // Setup, eager.
  SetDevice,
  CreateStream,
  CommInit,  ///< the world's root communicator, from its unique id
  CommSplit, ///< a communicator that carries traffic, split from the root
  CreatePreMulSum,
  Malloc,
  CreateEvents,
  // On the comm stream.
  WaitReady,  ///< cudaStreamWaitEvent on a compute's ready event
  Pack,       ///< one kernel per bucket
  GroupStart,
  GroupEnd,
  AllReduce,
  ReduceScatter,
  AllGather,
  Broadcast,
  AllToAll,
  Send,
  Recv,
  Unpack,
  RecordDone, ///< the comm's done event, for the model's consumers
  CountsToHost, ///< runtime all_to_all_v: counts exchanged and read back
  StreamSync,
  // Graphs.
  BeginCapture,
  EndCapture,
  Instantiate,
  GraphLaunch,
};

struct Call {
  Call() = default;
  Call(CallKind K) : Kind(K) {} // so that `{CallKind::GroupStart}` is a call
  CallKind Kind = CallKind::SetDevice;
  int32_t Comm = -1; ///< index into NcclRankPlan::Comms (CommSplit: -1, none)
  /// CommSplit: the plan group split (-1: the world's traffic).
  int32_t SplitGroup = -1;
  Ref SendBuf, RecvBuf;
  uint64_t Count = 0; ///< elements, as NCCL counts them for this call
  /// Send/Recv of a runtime all_to_all_v: the count comes from the split
  /// sizes exchanged by the CountsToHost call before it.
  bool CountAtRunTime = false;
  /// Send/Recv of a runtime all_to_all_v: elements per row of dimension 0
  /// of the tensor it moves (its Ref may be a view slot, with no tensor).
  uint64_t RowElems = 0;
  ElemType Elem = ElemType::F32;
  ReduceOp Op = ReduceOp::Sum;
  int32_t PreMulSum = -1; ///< index into NcclRankPlan::PreMulSums
  int64_t Peer = -1;      ///< root (broadcast) or peer (send/recv), a rank of Comm
  uint32_t Compute = 0;   ///< WaitReady: the compute whose event it waits on
  uint32_t Tensor = 0;    ///< CountsToHost: the counts tensor
  int32_t Buffer = -1;    ///< Malloc, Pack, Unpack
  uint64_t Bytes = 0;     ///< Malloc
  std::vector<CopySegment> Copies; ///< Pack, Unpack
  uint32_t PlanComm = 0;  ///< the plan comm a call belongs to
  int32_t Graph = -1;     ///< capture calls and launches
  std::string Note;       ///< a comment for the listing
};

struct CommDesc {
  std::string Key; ///< what every member derives its name (the root: its unique id) from
  std::string Label;
  int64_t Size = 1, Rank = 0;
  /// The color it is split from the root with (its subgroup; the world's
  /// traffic: 0); its key is Rank.
  int64_t Color = 0;
};

struct PreMulSumDesc {
  int32_t Comm;
  ElemType Elem;
  double Scale;
};

/// One rank's plan as NCCL communicators and calls (lowerForRank).
struct NcclRankPlan {
  int64_t Rank = 0;
  /// The world's communicator made from a unique id, non-blocking, only to
  /// be split: the one id a run shares.
  CommDesc Root;
  /// The communicators this rank's calls use, split from Root: the world's
  /// first, then one per plan group it is in, in the plan's order.
  std::vector<CommDesc> Comms;
  std::vector<PreMulSumDesc> PreMulSums;
  std::vector<Call> Setup;  ///< once, eager
  std::vector<Call> WarmUp; ///< once, eager, before any capture
  /// Capture-time calls, graph after graph (with eager calls between
  /// graphs for runtime all_to_all_v).
  std::vector<Call> Capture;
  /// What the host issues every step.
  std::vector<Call> Step;
  unsigned Graphs = 0;
  unsigned ReadyEvents = 0, DoneEvents = 0;
  /// Per tensor: its view slot in a plan buffer, or itself (memory the
  /// model binds).
  std::vector<Ref> Homes;
};

/// The part of its tensor that a send or receive of a runtime all_to_all_v
/// moves, once the split sizes are known: \p Rows holds the rows to (a
/// send) or from (a receive) every rank of the group, in rank order.
struct RuntimeSlice {
  uint64_t Offset = 0; ///< bytes, from the call's Ref
  uint64_t Count = 0;  ///< elements
};
RuntimeSlice runtimeSlice(const Call &C, llvm::ArrayRef<uint64_t> Rows);

/// Lowers \p P for rank \p Rank (an error for a rank outside the world).
/// It does not judge whether every rank's issue order can run together:
/// checkStreamOrder does, once per plan (StreamOrderCheck.h).
llvm::Expected<NcclRankPlan> lowerForRank(const plan::Plan &P, int64_t Rank);

} // namespace collc::rt::nccl

#endif
