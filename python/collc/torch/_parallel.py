"""collc.torch.DistributedDataParallel: torch's DistributedDataParallel for
CPU modules, with every step's gradient averaging a collc plan replayed
overlapped with backward (docs/torch.md, "DistributedDataParallel").

What happens when, as in torch's DDP:
- construction: every rank checks that its model is rank 0's (names,
  shapes and dtypes of parameters and buffers, all-gathered as a digest),
  then rank 0's parameters and buffers are broadcast;
- each forward: rank 0's buffers are broadcast first when broadcast_buffers
  and the previous forward synchronized (DDP's require_forward_param_sync);
- the first backward records the order in which gradients become ready (a
  hook on each parameter's gradient accumulator, as DDP's reducer hooks
  them; DDP rebuilds its buckets from the same order); at its end rank 0
  writes the step's program (collc.torch.ddp_program), compiles it with
  DDP's bucket rule and bucket_cap_mb, and broadcasts the plan; every rank
  binds each gradient to its slot in the plan's buckets and captures, which
  compares the plan's digest across ranks; this first step's gradients are
  averaged by one replay;
- every later backward that synchronizes: the plan is replayed on the
  executor's thread from the first gradient hook on; the plan's compute of
  each backward region waits until its gradients are ready, so a bucket's
  all_reduce starts once its gradients are (DDP's overlap), and the step
  has ended before backward() returns (a callback at the end of the
  autograd pass waits for it), leaving the averaged gradients in .grad;
- no_sync(): forwards inside skip the averaging; gradients accumulate.

gradient_as_bucket_view=True makes each .grad the slot itself (backward
accumulates into the bucket, nothing is copied); False (DDP's default)
leaves .grad a tensor of its own, copied into its slot when ready and back
once averaged. Either way a .grad that was set to None (zero_grad's
set_to_none) is taken where autograd put it, as DDP does."""

import contextlib
import hashlib
import itertools
import threading
import time

import numpy as np
import torch

import collc
from ._costs import Costs
from ._ddp import ORDER_OBSERVED, DdpStep, ddp_gradients, ddp_program, on_gradient_ready
from ._meeting import meet

# How long a compute of the replay waits between two looks at whether its
# step was abandoned (a backward that failed or left a gradient out).
_POLL_S = 0.05
# The arguments of torch's DDP this wrapper cannot honour, and why.
_REFUSED = {
    "device_ids": "it runs CPU modules (torch's DDP takes device_ids for a module on one GPU)",
    "output_device": "it runs CPU modules (torch's DDP takes output_device for a GPU module)",
}
# Wrappers made in this process, in order: the ranks make theirs in one
# order, so the n-th wrapper of every rank meets in group "ddp.n".
_made = itertools.count()


def _digest(words):
    """8 bytes that name `words` (a list of strings), as a uint64 array."""
    h = hashlib.blake2b("\n".join(words).encode(), digest_size=8).digest()
    return np.frombuffer(h, dtype=np.uint64).copy()


def _plan_computes(text):
    """(compute name, its output tensors' names) by compute index, from plan
    text (docs/plan.md: `tensor N %NAME TYPE` and `compute I @NAME ... out
    [N,...]` lines)."""
    names, computes = {}, []
    for line in text.splitlines():
        w = line.split()
        if len(w) >= 3 and w[0] == "tensor":
            names[w[1]] = w[2]
        elif len(w) >= 3 and w[0] == "compute":
            outs = line[line.index(" out [") + 6:].split("]")[0] if " out [" in line else ""
            computes.append((w[2][1:], [names[i] for i in outs.split(",") if i]))
    return computes


def _raw(t):
    """The bytes of contiguous tensor t as a flat uint8 tensor (a view)."""
    return t.detach().reshape(-1).view(torch.uint8)


class DistributedDataParallel(torch.nn.Module):
    """A drop-in for torch.nn.parallel.DistributedDataParallel on CPU, with
    DDP's arguments where they apply: broadcast_buffers, process_group (its
    rank, world and store), bucket_cap_mb, gradient_as_bucket_view,
    static_graph (a collc plan is static after the first iteration either
    way), dim and check_reduction (unused on CPU, as in DDP). Refused by
    name: device_ids and output_device (CPU only), and
    find_unused_parameters=True (the plan averages every gradient every
    step). collc's own: `backend` ("gloo" or "mpi"; default mpi under
    mpirun, else gloo), `rendezvous` (gloo: "file:DIR", "redis://HOST:PORT";
    default: torch's store) and `timeout` (seconds or a timedelta; default
    COLLC_TIMEOUT_MS, else 300 s)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, process_group=None, bucket_cap_mb=25,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False, *, backend=None,
                 rendezvous=None, timeout=None):
        super().__init__()
        for name, value in (("device_ids", device_ids), ("output_device", output_device)):
            if value is not None:
                raise ValueError(f"collc.torch.DistributedDataParallel: {name} is {value!r}: "
                                 f"{_REFUSED[name]}: expected None")
        if find_unused_parameters:
            raise ValueError(
                "collc.torch.DistributedDataParallel: find_unused_parameters=True: collc "
                "replays one plan, compiled on the first iteration, that averages every "
                "parameter's gradient every step, so it cannot leave out the parameters a step "
                "does not use: expected False (freeze a parameter that gets no gradient: "
                "requires_grad=False)")
        if not bucket_cap_mb or bucket_cap_mb <= 0:
            raise ValueError(f"collc.torch.DistributedDataParallel: bucket_cap_mb is "
                             f"{bucket_cap_mb!r}: expected a positive number of MiB")
        for n, t in itertools.chain(module.named_parameters(), module.named_buffers()):
            if t.device.type != "cpu":
                raise ValueError(
                    f"collc.torch.DistributedDataParallel: {n} is on {t.device}: expected a CPU "
                    "module (collc's gloo and mpi transports run on host memory; torch's DDP on "
                    "nccl is the way for GPU modules)")
        self.module = module
        self.dim = dim
        self.broadcast_buffers = broadcast_buffers
        self.bucket_cap_mb = bucket_cap_mb
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        m = meet(process_group, backend, rendezvous, timeout)
        self.rank, self.world, self._meeting = m.rank, m.world, m
        self._comm = collc.Communicator(m.rank, m.world, backend=m.backend,
                                        rendezvous=m.rendezvous, group=f"ddp.{next(_made)}",
                                        timeout_ms=m.timeout_ms)
        self._grads = ddp_gradients(module)  # what DDP registers, in module order
        self._grad_params = {g.name: g.parameter for g in self._grads}
        self._synced_buffers = [b for _, b in module.named_buffers()]
        self._check_same_model()
        with torch.no_grad():
            self._broadcast([p for _, p in module.named_parameters()] + self._synced_buffers)
        # DDP's require_forward_param_sync: buffers are broadcast before a
        # forward when the one before synchronized.
        self._sync_buffers_next = True
        self._require_backward_grad_sync = True
        self._will_sync = False  # what the last forward decided for its backward
        self._plan = self._exec = None
        self._slots = {}  # parameter name -> its gradient's slot (a tensor view)
        self._computes = []  # the plan's computes: (name, parameter names)
        self._ready = {}  # parameter name -> threading.Event, per step
        self._fired = []  # (name, ns since the backward began) of this backward
        self._in_backward = False
        self._replaying = False  # a step's replay is queued and not waited for
        self._abandon = threading.Event()
        self._broken = None
        self._began = 0
        self.last_wait_s = 0.0  # how long the last step's averaging ran on after backward
        self._accumulators = on_gradient_ready(self._grads, self._on_ready)

    # ------------------------------------------------------------ agreement

    def _check_same_model(self):
        """Refuses, naming the ranks, a world whose models differ from rank 0's."""
        words = [f"{n} {tuple(t.shape)} {t.dtype} {t.requires_grad}"
                 for n, t in self.module.named_parameters()]
        words += [f"buffer {n} {tuple(b.shape)} {b.dtype}" for n, b in self.module.named_buffers()]
        mine = _digest(words)
        every = np.zeros(self.world, np.uint64)
        self._comm.all_gather(mine, every).wait()
        differ = [r for r in range(self.world) if every[r] != every[0]]
        if differ:
            raise RuntimeError(
                f"collc.torch.DistributedDataParallel: rank {self.rank}: rank(s) "
                f"{', '.join(map(str, differ))} hold a model other than rank 0's (the names, "
                "shapes, dtypes or requires_grad of their parameters and buffers differ): "
                "expected the same model on every rank")

    def _broadcast(self, tensors):
        """Rank 0's values of `tensors` into every rank's, all in flight at once."""
        pending, back = [], []
        for t in tensors:
            if t.numel() == 0:
                continue
            if t.is_contiguous():
                pending.append(self._comm.broadcast(_raw(t), root=0))
            else:
                c = t.detach().contiguous()
                pending.append(self._comm.broadcast(_raw(c), root=0))
                back.append((t, c))
        for p in pending:
            p.wait()
        for t, c in back:
            t.detach().copy_(c)

    # ------------------------------------------------------------ forward

    def forward(self, *inputs, **kwargs):
        if self._broken:
            raise RuntimeError(self._broken)
        if self._in_backward:  # the last backward failed before its end
            self._in_backward = False
            if self._replaying:
                self._give_up_step("the last backward failed while its gradients were being "
                                   "averaged")
        if self._sync_buffers_next and self.broadcast_buffers and self._synced_buffers and \
                self.world > 1:
            with torch.no_grad():
                self._broadcast(self._synced_buffers)
        out = self.module(*inputs, **kwargs)
        self._will_sync = torch.is_grad_enabled() and self._require_backward_grad_sync
        self._sync_buffers_next = self._will_sync
        return out

    @contextlib.contextmanager
    def no_sync(self):
        """Forwards inside this block skip the averaging in their backward;
        gradients accumulate until the first forward after it."""
        old = self._require_backward_grad_sync
        self._require_backward_grad_sync = False
        try:
            yield
        finally:
            self._require_backward_grad_sync = old

    # ------------------------------------------------------------ backward

    def _on_ready(self, name):
        """An accumulator hook: `name`'s gradient is accumulated."""
        if not self._in_backward:
            self._begin_backward()
        self._fired.append((name, time.perf_counter_ns() - self._began))
        if self._plan is not None and self._will_sync:
            self._into_slot(name)
            self._ready[name].set()

    def _begin_backward(self):
        self._in_backward = True
        self._began = time.perf_counter_ns()
        self._fired = []
        torch.autograd.Variable._execution_engine.queue_callback(self._end_backward)
        if self._plan is not None and self._will_sync:
            self._abandon.clear()
            for e in self._ready.values():
                e.clear()
            self._exec.replay(self._compute)
            self._replaying = True

    def _compute(self, name, index):
        """The plan's compute `index`: waits until its gradients are ready."""
        for p in self._computes[index][1]:
            while not self._ready[p].wait(_POLL_S):
                if self._abandon.is_set():
                    raise RuntimeError(f"compute @{name}: the step was abandoned before the "
                                       f"gradient of {p} was ready")

    def _end_backward(self):
        """At the end of the autograd pass, before backward() returns."""
        self._in_backward = False
        fired = {n for n, _ in self._fired}
        missing = [g.name for g in self._grads if g.name not in fired]
        if self._plan is None:
            if missing:
                self._fail_unused(missing)
            self._make_plan()
            if self._will_sync:
                self._average_now()
            return
        if not self._will_sync:
            return
        if missing:
            self._give_up_step(None)
            self._fail_unused(missing)
        t = time.perf_counter()
        self._finish_step()
        self.last_wait_s = time.perf_counter() - t
        if not self.gradient_as_bucket_view:
            for g in self._grads:
                g.parameter.grad.copy_(self._slots[g.name])

    def _finish_step(self):
        """Waits for the step's averaging; a failure (a peer gone, a
        timeout) is a RuntimeError naming this rank, and the wrapper is
        broken after it, as a process group is."""
        self._replaying = False
        try:
            self._exec.synchronize(timeout=self._timeout_s())
        except collc.Error as e:
            self._broken = (f"collc.torch.DistributedDataParallel: rank {self.rank}: the "
                            f"gradients' averaging failed: {e}")
            raise RuntimeError(self._broken) from e

    def _fail_unused(self, missing):
        self._broken = (
            f"collc.torch.DistributedDataParallel: rank {self.rank}: {len(missing)} "
            f"parameter(s) require a gradient but got none in this backward: "
            f"{', '.join(missing)}. collc averages every parameter's gradient every step (torch's "
            "DDP refuses them too without find_unused_parameters); freeze them "
            "(requires_grad=False) or use them in the loss")
        raise RuntimeError(self._broken)

    def _give_up_step(self, why):
        """Stops the step in flight, if one is (its computes raise), and
        waits for it; with `why`, the wrapper is broken and says so."""
        self._in_backward = False
        if self._replaying:
            self._replaying = False
            self._abandon.set()
            try:
                self._exec.synchronize(timeout=self._timeout_s())
            except Exception:  # noqa: BLE001 - the abandonment asked for, raised by a compute
                pass
        if why:
            self._broken = f"collc.torch.DistributedDataParallel: rank {self.rank}: {why}"
            raise RuntimeError(self._broken)

    def _timeout_s(self):
        return (self._meeting.timeout_ms or 300000) / 1000.0

    # ------------------------------------------------------------ the plan

    def _make_plan(self):
        """Rank 0's plan of the step this backward showed, on every rank."""
        text = self._rank0_plan_text() if self.rank == 0 else None
        text = self._broadcast_text(text)
        plan = collc.load(text)
        self._check_plan(plan)
        x = collc.Executor(plan, self.rank, backend=self._meeting.backend,
                           rendezvous=self._meeting.rendezvous,
                           timeout_ms=self._meeting.timeout_ms, async_replay=True)
        for g in self._grads:
            self._slots[g.name] = self._slot(x, g)
        count, first = x.unbound()
        if count:
            raise RuntimeError(f"collc.torch.DistributedDataParallel: rank {self.rank}: {count} "
                               f"gradient(s) of the plan are not slots of its buckets, {first} "
                               "first")
        x.capture()  # compares the plan's digest with every rank's
        self._plan, self._exec = plan, x
        self._ready = {g.name: threading.Event() for g in self._grads}
        self._computes = self._plan_computes()

    def _rank0_plan_text(self):
        params = [(g.name, g.parameter) for g in self._grads]
        step = DdpStep(type(self.module).__name__, params, list(self._fired), 0,
                       {n: 0 for n, _ in params}, ORDER_OBSERVED)
        ir, computes = ddp_program(step, Costs("measured", "cpu"), self.world)
        bucket = "ddp" if self.bucket_cap_mb == 25 else \
            f"ddp:{int(self.bucket_cap_mb * 1024 * 1024)}"
        return collc.compile(ir, bucket=bucket).text()

    def _broadcast_text(self, text):
        """Rank 0's `text` on every rank."""
        data = np.frombuffer(text.encode(), np.uint8).copy() if text is not None else None
        size = np.array([0 if data is None else data.size], np.int64)
        self._comm.broadcast(size, root=0).wait()
        if data is None:
            data = np.zeros(int(size[0]), np.uint8)
        self._comm.broadcast(data, root=0).wait()
        return data.tobytes().decode()

    def _plan_computes(self):
        """The plan's computes by index, each with the parameters whose
        gradients it produces, read from the plan (rank 0's order, which
        may be another than this rank's)."""
        tensor_of = {"%" + g.tensor: g.name for g in self._grads}
        return [(name, [tensor_of[t] for t in outs if t in tensor_of])
                for name, outs in _plan_computes(self._plan.text())]

    def _check_plan(self, plan):
        """This rank's parameters against rank 0's plan: a model that differs
        is refused naming the parameter."""
        for g in self._grads:
            want = tuple(g.parameter.shape)
            try:
                t = plan.tensor_type(g.tensor)
            except collc.Error:
                raise RuntimeError(f"collc.torch.DistributedDataParallel: rank {self.rank}: "
                                   f"parameter {g.name} has no gradient in rank 0's plan: "
                                   "expected the same model on every rank") from None
            if t.shape != want:
                raise RuntimeError(f"collc.torch.DistributedDataParallel: rank {self.rank}: "
                                   f"parameter {g.name} is {list(want)} here and {t} in rank "
                                   "0's plan: expected the same model on every rank")

    def _slot(self, x, g):
        """g's gradient slot in x's buckets, as a tensor shaped as g's parameter."""
        arr = x.tensor(g.tensor)
        t = torch.from_numpy(arr.view(np.int16) if arr.dtype == np.uint16 else arr)
        if g.parameter.dtype == torch.bfloat16:
            t = t.view(torch.bfloat16)
        return t.view(g.parameter.shape)

    def _into_slot(self, name):
        """Puts `name`'s gradient in its slot (as a view: the slot becomes .grad)."""
        p, slot = self._grad_params[name], self._slots[name]
        if p.grad is None or p.grad.data_ptr() != slot.data_ptr():
            slot.copy_(p.grad)
            if self.gradient_as_bucket_view:
                p.grad = slot

    def _average_now(self):
        """The first step's averaging, its gradients where autograd put them."""
        for g in self._grads:
            self._into_slot(g.name)
            self._ready[g.name].set()
        self._exec.replay()
        self._finish_step()
        if not self.gradient_as_bucket_view:
            for g in self._grads:
                g.parameter.grad.copy_(self._slots[g.name])
