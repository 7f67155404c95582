//===- ProcessGroupCollc.cpp - torch.distributed's "collc" backend --------===//

#include "ProcessGroupCollc.h"

#include <Python.h>

#include <ATen/core/ivalue.h>
#include <c10/util/Exception.h>

#include <numeric>
#include <stdexcept>

namespace collc::torch {

namespace {

/// torch's reductions as collc spells them (null: collc lacks it).
struct Reduction {
  c10d::ReduceOp::RedOpType Torch;
  const char *TorchName;
  const char *Collc;
};
constexpr Reduction Reductions[] = {
    {c10d::ReduceOp::SUM, "SUM", "sum"},
    {c10d::ReduceOp::AVG, "AVG", "avg"},
    {c10d::ReduceOp::PRODUCT, "PRODUCT", "prod"},
    {c10d::ReduceOp::MIN, "MIN", "min"},
    {c10d::ReduceOp::MAX, "MAX", "max"},
    {c10d::ReduceOp::BAND, "BAND", nullptr},
    {c10d::ReduceOp::BOR, "BOR", nullptr},
    {c10d::ReduceOp::BXOR, "BXOR", nullptr},
    {c10d::ReduceOp::PREMUL_SUM, "PREMUL_SUM", nullptr},
};

/// Bytes of tensor \p T's elements.
uint64_t bytesOf(const at::Tensor &T) { return uint64_t(T.numel()) * T.element_size(); }

/// \p T itself when it is contiguous, else a contiguous copy (the caller
/// copies results back).
at::Tensor contiguous(const at::Tensor &T) { return T.is_contiguous() ? T : T.contiguous(); }

/// Copies \p From back into \p To unless they are one tensor.
void copyBack(at::Tensor To, const at::Tensor &From) {
  if (!To.is_same(From))
    To.copy_(From);
}

/// The watcher's pause before a pass: short after a pass that completed a
/// work, doubling while none completes. A work's caller that waits at once
/// completes it itself meanwhile, without a thread woken for it.
constexpr auto FirstPause = std::chrono::microseconds(50);
constexpr auto LongestPause = std::chrono::microseconds(500);

} // namespace

// ---------------------------------------------------------------- WorkCollc

WorkCollc::WorkCollc(std::shared_ptr<CommHandle> Comm, collcTicket_t Ticket, int Rank,
                     c10d::OpType Op, std::string What, std::vector<at::Tensor> Outputs,
                     std::function<void()> Finish)
    : c10d::Work(Rank, Op), Comm(std::move(Comm)), Ticket(Ticket), What(std::move(What)),
      Outputs(std::move(Outputs)), Finish(std::move(Finish)),
      Future(
          c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()))) {
}

WorkCollc::~WorkCollc() {
  // The operation reads or writes the tensors this work holds (a group
  // destroyed with works in flight drops them): they go once it has run.
  if (!Done.load())
    collcCommWait(Comm->get(), Ticket, -1);
}

bool WorkCollc::isCompleted() { return Done.load() || poll(); }

bool WorkCollc::poll() {
  if (Done.load())
    return true;
  int Ran = 0;
  if (collcCommTest(Comm->get(), Ticket, &Ran) != collcSuccess || !Ran)
    return false;
  // A waiter on the caller's thread may be completing it now.
  std::unique_lock<std::mutex> L(WaitLock, std::try_to_lock);
  if (!L.owns_lock())
    return false;
  if (!Done.load())
    complete(collcCommWait(Comm->get(), Ticket, 0));
  return true;
}

bool WorkCollc::wait(std::chrono::milliseconds Timeout) {
  if (!Done.load()) {
    std::lock_guard<std::mutex> L(WaitLock);
    if (!Done.load()) {
      int64_t Ms = Timeout == kNoTimeout ? -1 : int64_t(Timeout.count());
      collcResult_t R = collcCommWait(Comm->get(), Ticket, Ms);
      TORCH_CHECK(R != collcTimeout || Ms < 0, What, " did not end within ", Ms,
                  " ms (it goes on: wait again)");
      complete(R);
    }
  }
  return c10d::Work::wait(kNoTimeout); // rethrows the work's failure
}

void WorkCollc::complete(collcResult_t R) {
  std::exception_ptr Failed;
  if (R != collcSuccess) {
    Failed = std::make_exception_ptr(std::runtime_error(
        What + " failed: " + collcGetErrorString(R) + ": " + collcGetLastError()));
  } else if (Finish) {
    try {
      Finish();
    } catch (...) {
      Failed = std::current_exception();
    }
  }
  Done.store(true);
  if (Failed)
    Future->setError(Failed);
  else
    Future->markCompleted(c10::IValue(Outputs));
  finish(Failed);
}

// ---------------------------------------------------------- ProcessGroupCollc

ProcessGroupCollc::ProcessGroupCollc(int Rank, int Size, const std::string &Backend,
                                     const std::string &Rendezvous, const std::string &Group,
                                     std::chrono::milliseconds Timeout)
    : c10d::ProcessGroup(Rank, Size) {
  collcCommOptions_t O;
  collcCommOptionsInit(&O);
  O.backend = Backend.c_str();
  O.rendezvous = Rendezvous.empty() ? nullptr : Rendezvous.c_str();
  O.group = Group.c_str();
  O.timeoutMs = int64_t(Timeout.count());
  collcComm_t C = nullptr;
  collcResult_t R = collcCommCreate(Rank, Size, &O, &C);
  TORCH_CHECK(R == collcSuccess, where("init_process_group"), ": ", collcGetErrorString(R), ": ",
              collcGetLastError());
  Comm = std::make_shared<CommHandle>(C);
  Watcher = std::thread([this] { watcherLoop(); });
}

ProcessGroupCollc::~ProcessGroupCollc() {
  {
    std::lock_guard<std::mutex> L(M);
    Stopping = true;
  }
  Wake.notify_all();
  // The watcher may be dropping a work's tensors, which takes the GIL: a
  // Python caller's (destroy_process_group's) must not be held meanwhile.
  PyThreadState *Saved = Py_IsInitialized() && PyGILState_Check() ? PyEval_SaveThread() : nullptr;
  Watcher.join();
  if (Saved)
    PyEval_RestoreThread(Saved);
  // Works still referenced complete when waited for: they hold the comm.
}

std::string ProcessGroupCollc::where(const char *Op) const {
  return "collc backend (rank " + std::to_string(getRank()) + "): " + Op;
}

void ProcessGroupCollc::unsupported(const char *Op) const {
  TORCH_CHECK(false, where(Op),
              " is not supported (the collc backend offers all_reduce, broadcast, all_gather, "
              "reduce_scatter, all_to_all of one tensor, send, recv and barrier)");
}

at::Tensor &ProcessGroupCollc::single(std::vector<at::Tensor> &Tensors, const char *Op) const {
  TORCH_CHECK(Tensors.size() == 1, where(Op), ": ", Tensors.size(),
              " tensors: expected one per process (the collc backend runs one CPU per rank)");
  at::Tensor &T = Tensors.front();
  TORCH_CHECK(T.device().is_cpu(), where(Op), ": the tensor is on ", T.device(),
              ": expected a CPU tensor (the collc backend's transports run on host memory; "
              "torch's nccl backend is the one for CUDA tensors)");
  TORCH_CHECK(T.layout() == at::kStrided, where(Op), ": a ", T.layout(),
              " tensor: expected a dense one");
  return T;
}

const char *ProcessGroupCollc::elemTypeOf(const at::Tensor &T, const char *Op) const {
  switch (T.scalar_type()) {
  case at::kFloat:
    return "f32";
  case at::kDouble:
    return "f64";
  case at::kHalf:
    return "f16";
  case at::kBFloat16:
    return "bf16";
  case at::kChar:
    return "i8";
  case at::kByte:
    return "u8";
  case at::kInt:
    return "i32";
  case at::kLong:
    return "i64";
  default:
    TORCH_CHECK(false, where(Op), ": a tensor of ", T.scalar_type(),
                ": the collc backend reduces float32, float64, float16, bfloat16, int8, uint8, "
                "int32 and int64 (it moves any type)");
  }
}

const char *ProcessGroupCollc::reduction(const c10d::ReduceOp &R, const char *Op) const {
  std::string Known;
  for (const Reduction &X : Reductions) {
    if (X.Torch == R.op_ && X.Collc)
      return X.Collc;
    if (X.Collc)
      Known += std::string(Known.empty() ? "" : ", ") + X.TorchName;
  }
  const char *Name = "an unknown op";
  for (const Reduction &X : Reductions)
    if (X.Torch == R.op_)
      Name = X.TorchName;
  TORCH_CHECK(false, where(Op), " with op ", Name,
              " is not supported (the collc backend reduces with ", Known, ")");
}

void ProcessGroupCollc::checkNoTag(int Tag, const char *Op) const {
  TORCH_CHECK(Tag == 0, where(Op), ": tag ", Tag,
              ": the collc backend matches a peer's sends and recvs in order and takes no tags: "
              "expected 0");
}

void ProcessGroupCollc::check(collcResult_t R, const char *Op) const {
  TORCH_CHECK(R == collcSuccess, where(Op), ": ", collcGetErrorString(R), ": ",
              collcGetLastError());
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCollc::watch(collcTicket_t T, c10d::OpType Type,
                                                        const char *Op,
                                                        std::vector<at::Tensor> Outputs,
                                                        std::function<void()> Finish) {
  auto W = c10::make_intrusive<WorkCollc>(Comm, T, getRank(), Type, where(Op), std::move(Outputs),
                                          std::move(Finish));
  bool WasEmpty;
  {
    std::lock_guard<std::mutex> L(M);
    WasEmpty = Pending.empty();
    Pending.push_back(W);
  }
  if (WasEmpty) // else the watcher looks again within its pause
    Wake.notify_one();
  return W;
}

void ProcessGroupCollc::watcherLoop() {
  auto Pause = FirstPause;
  std::unique_lock<std::mutex> L(M);
  for (;;) {
    Wake.wait(L, [&] { return Stopping || !Pending.empty(); });
    if (Wake.wait_for(L, Pause, [&] { return Stopping; }))
      return;
    std::deque<c10::intrusive_ptr<WorkCollc>> Look;
    Look.swap(Pending);
    L.unlock();
    bool Any = false;
    std::deque<c10::intrusive_ptr<WorkCollc>> Still;
    for (auto &W : Look) {
      // Done works leave the list; a work its caller waits for also ends
      // up done.
      if (W->poll())
        Any = true;
      else
        Still.push_back(std::move(W));
    }
    Pause = Any ? FirstPause : std::min(Pause * 2, LongestPause);
    // The done works go before M is taken again: the last reference to a
    // tensor a Python object owns takes the GIL, whose holder may be
    // waiting for M (the destructor, a new operation).
    Look.clear();
    L.lock();
    for (auto It = Still.rbegin(); It != Still.rend(); ++It)
      Pending.push_front(std::move(*It));
  }
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCollc::allreduce(std::vector<at::Tensor> &Tensors,
                                                            const c10d::AllreduceOptions &Opts) {
  const char *Op = "all_reduce";
  at::Tensor &T = single(Tensors, Op);
  const char *Reduce = reduction(Opts.reduceOp, Op);
  const char *Elem = elemTypeOf(T, Op);
  at::Tensor C = contiguous(T);
  collcTicket_t Ticket = 0;
  check(collcCommAllReduce(Comm->get(), C.data_ptr(), uint64_t(C.numel()), Elem, Reduce, &Ticket),
        Op);
  return watch(Ticket, c10d::OpType::ALLREDUCE, Op, Tensors, [T, C] { copyBack(T, C); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCollc::broadcast(std::vector<at::Tensor> &Tensors,
                                                            const c10d::BroadcastOptions &Opts) {
  const char *Op = "broadcast";
  at::Tensor &T = single(Tensors, Op);
  at::Tensor C = contiguous(T);
  collcTicket_t Ticket = 0;
  check(collcCommBroadcast(Comm->get(), C.data_ptr(), bytesOf(C), Opts.rootRank, &Ticket), Op);
  return watch(Ticket, c10d::OpType::BROADCAST, Op, Tensors, [T, C] { copyBack(T, C); });
}

c10::intrusive_ptr<c10d::Work>
ProcessGroupCollc::allgather(std::vector<std::vector<at::Tensor>> &Outputs,
                             std::vector<at::Tensor> &Inputs, const c10d::AllgatherOptions &) {
  const char *Op = "all_gather";
  at::Tensor &In = single(Inputs, Op);
  TORCH_CHECK(Outputs.size() == 1 && Outputs[0].size() == size_t(getSize()), where(Op),
              ": expected one list of ", getSize(), " output tensors");
  for (const at::Tensor &O : Outputs[0])
    TORCH_CHECK(O.numel() == In.numel() && O.scalar_type() == In.scalar_type() &&
                    O.device().is_cpu(),
                where(Op), ": an output of ", O.numel(), " ", O.scalar_type(), " on ", O.device(),
                ": expected ", In.numel(), " ", In.scalar_type(), " on the CPU, as the input");
  at::Tensor C = contiguous(In);
  at::Tensor All = at::empty({int64_t(getSize()) * In.numel()}, In.options());
  collcTicket_t Ticket = 0;
  check(collcCommAllGather(Comm->get(), C.data_ptr(), All.data_ptr(), bytesOf(C), &Ticket), Op);
  std::vector<at::Tensor> Out = Outputs[0];
  return watch(Ticket, c10d::OpType::ALLGATHER, Op, Out, [Out, All, C] {
    for (size_t R = 0; R != Out.size(); ++R)
      Out[R].copy_(All.narrow(0, int64_t(R) * C.numel(), C.numel()).view(Out[R].sizes()));
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCollc::_allgather_base(at::Tensor &Output,
                                                                  at::Tensor &Input,
                                                                  const c10d::AllgatherOptions &) {
  const char *Op = "all_gather";
  std::vector<at::Tensor> Ins{Input}, Outs{Output};
  single(Ins, Op);
  single(Outs, Op);
  TORCH_CHECK(Output.numel() == int64_t(getSize()) * Input.numel() &&
                  Output.scalar_type() == Input.scalar_type(),
              where(Op), ": the output holds ", Output.numel(), " ", Output.scalar_type(),
              ": expected ", getSize(), " x ", Input.numel(), " ", Input.scalar_type());
  at::Tensor C = contiguous(Input), O = contiguous(Output);
  collcTicket_t Ticket = 0;
  check(collcCommAllGather(Comm->get(), C.data_ptr(), O.data_ptr(), bytesOf(C), &Ticket), Op);
  return watch(Ticket, c10d::OpType::_ALLGATHER_BASE, Op, Outs,
               [Output, O, C] { copyBack(Output, O); });
}

c10::intrusive_ptr<c10d::Work>
ProcessGroupCollc::reduce_scatter(std::vector<at::Tensor> &Outputs,
                                  std::vector<std::vector<at::Tensor>> &Inputs,
                                  const c10d::ReduceScatterOptions &Opts) {
  const char *Op = "reduce_scatter";
  TORCH_CHECK(Inputs.size() == 1 && Inputs[0].size() == size_t(getSize()), where(Op),
              ": expected one list of ", getSize(), " input tensors");
  at::Tensor &Out = single(Outputs, Op);
  for (const at::Tensor &I : Inputs[0])
    TORCH_CHECK(I.numel() == Out.numel() && I.scalar_type() == Out.scalar_type(), where(Op),
                ": an input of ", I.numel(), " ", I.scalar_type(), ": expected ", Out.numel(), " ",
                Out.scalar_type(), ", as the output");
  std::vector<at::Tensor> Flat;
  for (const at::Tensor &I : Inputs[0])
    Flat.push_back(I.reshape({-1}));
  at::Tensor All = at::cat(Flat);
  return _reduce_scatter_base(Out, All, Opts);
}

c10::intrusive_ptr<c10d::Work>
ProcessGroupCollc::_reduce_scatter_base(at::Tensor &Output, at::Tensor &Input,
                                        const c10d::ReduceScatterOptions &Opts) {
  const char *Op = "reduce_scatter";
  std::vector<at::Tensor> Ins{Input}, Outs{Output};
  single(Ins, Op);
  single(Outs, Op);
  const char *Reduce = reduction(Opts.reduceOp, Op);
  TORCH_CHECK(Input.numel() == int64_t(getSize()) * Output.numel() &&
                  Output.scalar_type() == Input.scalar_type(),
              where(Op), ": the input holds ", Input.numel(), " ", Input.scalar_type(),
              ": expected ", getSize(), " x ", Output.numel(), " ", Output.scalar_type());
  const char *Elem = elemTypeOf(Output, Op);
  at::Tensor C = contiguous(Input), O = contiguous(Output);
  collcTicket_t Ticket = 0;
  check(collcCommReduceScatter(Comm->get(), C.data_ptr(), O.data_ptr(), uint64_t(O.numel()), Elem,
                               Reduce, &Ticket),
        Op);
  return watch(Ticket, c10d::OpType::_REDUCE_SCATTER_BASE, Op, Outs,
               [Output, O, C] { copyBack(Output, O); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCollc::alltoall_base(at::Tensor &Output,
                                                                at::Tensor &Input,
                                                                std::vector<int64_t> &OutputSplits,
                                                                std::vector<int64_t> &InputSplits,
                                                                const c10d::AllToAllOptions &) {
  const char *Op = "all_to_all";
  std::vector<at::Tensor> Ins{Input}, Outs{Output};
  single(Ins, Op);
  single(Outs, Op);
  TORCH_CHECK(Output.scalar_type() == Input.scalar_type(), where(Op), ": an output of ",
              Output.scalar_type(), " for an input of ", Input.scalar_type());
  TORCH_CHECK(Input.dim() >= 1 && Output.dim() >= 1, where(Op),
              ": expected tensors of at least one dimension (their rows are split)");
  // Rows of dimension 0, in bytes: an empty split list splits equally.
  auto Counts = [&](const at::Tensor &T, std::vector<int64_t> &Splits,
                    const char *Which) -> std::vector<uint64_t> {
    int64_t Rows = T.size(0), RowBytes = Rows ? int64_t(bytesOf(T)) / Rows : 0;
    std::vector<uint64_t> Out;
    if (Splits.empty()) {
      TORCH_CHECK(Rows % getSize() == 0, where(Op), ": the ", Which, " has ", Rows,
                  " rows: expected a multiple of ", getSize(), " without split sizes");
      Out.assign(size_t(getSize()), uint64_t(Rows / getSize() * RowBytes));
      return Out;
    }
    TORCH_CHECK(Splits.size() == size_t(getSize()), where(Op), ": ", Splits.size(), " ", Which,
                " split sizes: expected ", getSize());
    // Each split within the rows left: no sum or byte count can overflow.
    int64_t Sum = 0;
    for (int64_t S : Splits) {
      TORCH_CHECK(S >= 0 && S <= Rows - Sum, where(Op), ": ", Which, " split size ", S, " after ",
                  Sum, " rows: expected 0 to ", Rows - Sum, " (the rows left of ", Rows, ")");
      Sum += S;
      Out.push_back(uint64_t(S) * uint64_t(RowBytes));
    }
    TORCH_CHECK(Sum == Rows, where(Op), ": the ", Which, " split sizes add up to ", Sum,
                " rows: expected the ", Which, "'s ", Rows);
    return Out;
  };
  std::vector<uint64_t> Send = Counts(Input, InputSplits, "input");
  std::vector<uint64_t> Recv = Counts(Output, OutputSplits, "output");
  at::Tensor C = contiguous(Input), O = contiguous(Output);
  collcTicket_t Ticket = 0;
  check(collcCommAllToAll(Comm->get(), C.data_ptr(), O.data_ptr(), "u8", Send.data(), Recv.data(),
                          &Ticket),
        Op);
  return watch(Ticket, c10d::OpType::ALLTOALL_BASE, Op, Outs,
               [Output, O, C] { copyBack(Output, O); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCollc::send(std::vector<at::Tensor> &Tensors, int Dst,
                                                       int Tag) {
  return pointToPoint(Tensors, Dst, Tag, /*Send=*/true);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCollc::recv(std::vector<at::Tensor> &Tensors, int Src,
                                                       int Tag) {
  return pointToPoint(Tensors, Src, Tag, /*Send=*/false);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCollc::pointToPoint(std::vector<at::Tensor> &Tensors,
                                                               int Peer, int Tag, bool Send) {
  const char *Op = Send ? "send" : "recv";
  at::Tensor &T = single(Tensors, Op);
  checkNoTag(Tag, Op);
  at::Tensor C = contiguous(T);
  collcTicket_t Ticket = 0;
  check(Send ? collcCommSend(Comm->get(), C.data_ptr(), bytesOf(C), Peer, &Ticket)
             : collcCommRecv(Comm->get(), C.data_ptr(), bytesOf(C), Peer, &Ticket),
        Op);
  return watch(Ticket, Send ? c10d::OpType::SEND : c10d::OpType::RECV, Op, Tensors, [T, C, Send] {
    if (!Send) // a send's tensor is only read
      copyBack(T, C);
  });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupCollc::barrier(const c10d::BarrierOptions &) {
  const char *Op = "barrier";
  collcTicket_t Ticket = 0;
  check(collcCommBarrier(Comm->get(), &Ticket), Op);
  return watch(Ticket, c10d::OpType::BARRIER, Op, {});
}

c10::intrusive_ptr<c10d::Work>
ProcessGroupCollc::allreduce_coalesced(std::vector<at::Tensor> &,
                                       const c10d::AllreduceCoalescedOptions &) {
  unsupported("all_reduce_coalesced");
}
c10::intrusive_ptr<c10d::Work> ProcessGroupCollc::reduce(std::vector<at::Tensor> &,
                                                         const c10d::ReduceOptions &) {
  unsupported("reduce");
}
c10::intrusive_ptr<c10d::Work>
ProcessGroupCollc::allgather_coalesced(std::vector<std::vector<at::Tensor>> &,
                                       std::vector<at::Tensor> &, const c10d::AllgatherOptions &) {
  unsupported("all_gather_coalesced");
}
c10::intrusive_ptr<c10d::Work> ProcessGroupCollc::gather(std::vector<std::vector<at::Tensor>> &,
                                                         std::vector<at::Tensor> &,
                                                         const c10d::GatherOptions &) {
  unsupported("gather");
}
c10::intrusive_ptr<c10d::Work> ProcessGroupCollc::scatter(std::vector<at::Tensor> &,
                                                          std::vector<std::vector<at::Tensor>> &,
                                                          const c10d::ScatterOptions &) {
  unsupported("scatter");
}
c10::intrusive_ptr<c10d::Work> ProcessGroupCollc::alltoall(std::vector<at::Tensor> &,
                                                           std::vector<at::Tensor> &,
                                                           const c10d::AllToAllOptions &) {
  unsupported("all_to_all of tensor lists");
}
c10::intrusive_ptr<c10d::Work> ProcessGroupCollc::recvAnysource(std::vector<at::Tensor> &, int) {
  unsupported("recv from any source");
}
void ProcessGroupCollc::monitoredBarrier(const c10d::BarrierOptions &, bool) {
  unsupported("monitored_barrier");
}

c10::intrusive_ptr<c10d::ProcessGroup> createProcessGroupCollc(int Rank, int Size,
                                                               const std::string &Backend,
                                                               const std::string &Rendezvous,
                                                               const std::string &Group,
                                                               std::chrono::milliseconds Timeout) {
  return c10::make_intrusive<ProcessGroupCollc>(Rank, Size, Backend, Rendezvous, Group, Timeout);
}

} // namespace collc::torch
