//===- ProcessGroupCollc.h - torch.distributed's "collc" backend -*- C++ -*-===//
//
// A c10d ProcessGroup (torch 1.13's one interface for NCCL, Gloo, MPI) whose
// every operation is one of collc's eager collectives (collc.h's collcComm*
// functions, over collc's drivers): all_reduce, broadcast, all_gather (into
// a list or one tensor), reduce_scatter (from a list or one tensor),
// all_to_all of one tensor with split sizes, send, recv and barrier, each
// asynchronous work, on CPU tensors of collc's element types. Anything
// else is refused by name, as is a CUDA tensor. The process group's
// timeout is its communicator's: a peer that does not come, or dies, fails
// the work within it, naming the peer.
//
// Works complete when waited for, or, for those nobody waits for (a
// future's callbacks: DDP's comm hooks), on the group's watcher thread,
// which asks collc which are done without blocking on any one of them: a
// recv still waiting for its send never holds back a later collective.
//
//===----------------------------------------------------------------------===//
#ifndef COLLC_PYTHON_TORCH_PROCESSGROUPCOLLC_H
#define COLLC_PYTHON_TORCH_PROCESSGROUPCOLLC_H

#include "collc/collc.h"

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace collc::torch {

/// A collc communicator, destroyed with its last user (the group or a
/// work still referenced).
class CommHandle {
public:
  explicit CommHandle(collcComm_t C) : C(C) {}
  ~CommHandle() { collcCommDestroy(C); }
  CommHandle(const CommHandle &) = delete;
  CommHandle &operator=(const CommHandle &) = delete;
  collcComm_t get() const { return C; }

private:
  collcComm_t C;
};

/// One enqueued operation of a ProcessGroupCollc.
class WorkCollc : public c10d::Work {
public:
  /// \p Finish runs once the operation succeeded (copies results where a
  /// caller's tensor could not be used in place); \p Outputs are result()'s
  /// and the future's value.
  WorkCollc(std::shared_ptr<CommHandle> Comm, collcTicket_t Ticket, int Rank, c10d::OpType Op,
            std::string What, std::vector<at::Tensor> Outputs, std::function<void()> Finish);
  /// Waits for an operation still in flight (its tensors go with the work).
  ~WorkCollc() override;

  bool isCompleted() override;
  /// Waits for the operation (its timeout: the group's, or \p Timeout); a
  /// failure is a RuntimeError naming the rank and the operation.
  bool wait(std::chrono::milliseconds Timeout = kNoTimeout) override;
  std::vector<at::Tensor> result() override { return Outputs; }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return Future; }

  /// Completes the work if its operation has run; whether it is complete.
  /// Never blocks.
  bool poll();

private:
  /// Completes the work with \p R, the result of waiting for its ticket
  /// (read with this thread's last error), once.
  void complete(collcResult_t R);

  std::shared_ptr<CommHandle> Comm;
  collcTicket_t Ticket;
  std::string What;
  std::vector<at::Tensor> Outputs;
  std::function<void()> Finish;
  c10::intrusive_ptr<c10::ivalue::Future> Future;
  /// Held by whoever completes the work (a caller's wait; the watcher,
  /// which never waits for it).
  std::mutex WaitLock;
  std::atomic<bool> Done{false};
};

class ProcessGroupCollc : public c10d::ProcessGroup {
public:
  /// Rank \p Rank of \p Size in collc's group \p Group on \p Backend (gloo
  /// or mpi), meeting at \p Rendezvous, every wait bounded by \p Timeout.
  ProcessGroupCollc(int Rank, int Size, const std::string &Backend, const std::string &Rendezvous,
                    const std::string &Group, std::chrono::milliseconds Timeout);
  ~ProcessGroupCollc() override;

  const std::string getBackendName() const override { return "collc"; }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor> &Tensors,
                                           const c10d::BroadcastOptions &Opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor> &Tensors,
                                           const c10d::AllreduceOptions &Opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>> &Outputs,
                                           std::vector<at::Tensor> &Inputs,
                                           const c10d::AllgatherOptions &Opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor &Output, at::Tensor &Input,
                                                 const c10d::AllgatherOptions &Opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor> &Outputs,
                                                std::vector<std::vector<at::Tensor>> &Inputs,
                                                const c10d::ReduceScatterOptions &Opts) override;
  c10::intrusive_ptr<c10d::Work>
  _reduce_scatter_base(at::Tensor &Output, at::Tensor &Input,
                       const c10d::ReduceScatterOptions &Opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor &Output, at::Tensor &Input,
                                               std::vector<int64_t> &OutputSplits,
                                               std::vector<int64_t> &InputSplits,
                                               const c10d::AllToAllOptions &Opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor> &Tensors, int Dst, int Tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor> &Tensors, int Src, int Tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions &Opts) override;

  // Named refusals of what collc does not offer (c10d's defaults would
  // say "ProcessGroup collc does not support X" without a rank).
  c10::intrusive_ptr<c10d::Work>
  allreduce_coalesced(std::vector<at::Tensor> &, const c10d::AllreduceCoalescedOptions &) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor> &,
                                        const c10d::ReduceOptions &) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(std::vector<std::vector<at::Tensor>> &,
                                                     std::vector<at::Tensor> &,
                                                     const c10d::AllgatherOptions &) override;
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>> &,
                                        std::vector<at::Tensor> &,
                                        const c10d::GatherOptions &) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor> &,
                                         std::vector<std::vector<at::Tensor>> &,
                                         const c10d::ScatterOptions &) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor> &, std::vector<at::Tensor> &,
                                          const c10d::AllToAllOptions &) override;
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor> &, int) override;
  void monitoredBarrier(const c10d::BarrierOptions &, bool) override;

private:
  /// "collc backend (rank R): " and \p Op, the start of every message.
  std::string where(const char *Op) const;
  [[noreturn]] void unsupported(const char *Op) const;
  /// The one tensor of a list c10d passes per process (one device each).
  at::Tensor &single(std::vector<at::Tensor> &Tensors, const char *Op) const;
  /// The collc element type of \p T, refusing a tensor collc cannot move.
  const char *elemTypeOf(const at::Tensor &T, const char *Op) const;
  /// collc's spelling of reduction \p R, refusing one it lacks.
  const char *reduction(const c10d::ReduceOp &R, const char *Op) const;
  /// Refuses a send or recv tag: collc matches them in order.
  void checkNoTag(int Tag, const char *Op) const;
  /// send (\p Send) or recv of the one tensor of \p Tensors with \p Peer.
  c10::intrusive_ptr<c10d::Work> pointToPoint(std::vector<at::Tensor> &Tensors, int Peer, int Tag,
                                              bool Send);
  /// Refuses \p R (a failed enqueue) with collc's words; otherwise nothing.
  void check(collcResult_t R, const char *Op) const;
  /// The work of ticket \p T, watched until it completes.
  c10::intrusive_ptr<c10d::Work> watch(collcTicket_t T, c10d::OpType Type, const char *Op,
                                       std::vector<at::Tensor> Outputs,
                                       std::function<void()> Finish = nullptr);
  void watcherLoop();

  std::shared_ptr<CommHandle> Comm;
  std::mutex M;
  std::condition_variable Wake;
  std::deque<c10::intrusive_ptr<WorkCollc>> Pending;
  bool Stopping = false;
  std::thread Watcher;
};

/// The process group of the creator torch.distributed calls
/// (collc/torch/_backend.py).
c10::intrusive_ptr<c10d::ProcessGroup> createProcessGroupCollc(int Rank, int Size,
                                                               const std::string &Backend,
                                                               const std::string &Rendezvous,
                                                               const std::string &Group,
                                                               std::chrono::milliseconds Timeout);

} // namespace collc::torch

#endif
