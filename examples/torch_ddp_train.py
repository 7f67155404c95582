#!/usr/bin/env python3
"""Trains two copies of a small GPT-2 data parallel on 2 CPU processes
(--world), from the same initial weights on the same data shards with the
same optimizer, step by step in turn, and compares them:

  collc      each process traces the model with collc.torch (DDP), compiles
             the trace with --bucket ddp and replays the plan every step to
             average the gradients (all_reduce avg) on the gloo or mpi backend;
  torch DDP  torch.nn.parallel.DistributedDataParallel on gloo.

It prints both loss curves side by side, both mean step times (without step
0, the warm-up) and the largest loss difference, and exits 1 when the curves
differ by more than the tolerance (docs/torch.md, "Training against torch
DDP", says why it is what it is), 2 when a rank failed or the run timed out.

  PYTHONPATH=python COLLC_LIBRARY=build/lib/libcollc.so \\
      /usr/bin/python3 examples/torch_ddp_train.py [--steps 20] [--backend gloo|mpi]
      [--overlap]

It starts its own processes (the mpi backend: under mpirun, $COLLC_MPIRUN or
`mpirun`), which meet in a temporary directory, and kills them and removes
the directory on every path.
"""

import argparse
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

# torch and collc are imported where the ranks use them: the launcher needs
# neither.

# Each rank's loss within this relative distance of torch DDP's, every step.
# With 2 ranks both averages are exact (a sum of two floats, halved), so the
# curves are equal; the bound leaves room for the summation orders of other
# worlds, measured at 1.8e-7 over 20 steps (docs/torch.md).
TOLERANCE = 1e-5


def options(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--world", type=int, default=2, help="processes")
    ap.add_argument("--backend", choices=["gloo", "mpi"], default="gloo",
                    help="collc's backend (torch DDP is on gloo either way)")
    ap.add_argument("--overlap", action="store_true",
                    help="replay on a thread of its own during backward, each bucket "
                         "averaged once its gradients are ready (default: after backward)")
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--vocab", type=int, default=2048)
    ap.add_argument("--batch", type=int, default=4, help="sequences per rank and step")
    ap.add_argument("--lr", type=float, default=1e-3, help="Adam's learning rate")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tolerance", type=float, default=TOLERANCE,
                    help="largest relative loss difference accepted")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds for the whole run")
    ap.add_argument("--perturb", type=float, default=0.0,
                    help="add this to every gradient collc averaged (tests the comparison)")
    ap.add_argument("--worker", metavar="DIR", help=argparse.SUPPRESS)
    # For the tests of the launcher: this rank fails once its peers wait for it.
    ap.add_argument("--fail-rank", type=int, default=-1, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.steps < 2:
        ap.error(f"--steps is {args.steps}: expected at least 2 (step 0 is the warm-up)")
    if args.world < 1:
        ap.error(f"--world is {args.world}: expected at least 1")
    if args.width % args.heads:
        ap.error(f"--width {args.width} is not a multiple of --heads {args.heads}")
    return args


# ---------------------------------------------------------------- one rank

def batches(args, rank):
    """This rank's shard: args.steps batches of token sequences drawn from a
    fixed random Markov chain (each token is followed by one of 4, chosen
    uniformly), so the loss has something to learn; inputs and next-token
    targets."""
    import torch
    g = torch.Generator().manual_seed(args.seed)
    successors = torch.randint(0, args.vocab, (args.vocab, 4), generator=g)
    g.manual_seed(args.seed * 1000 + 1 + rank)
    out = []
    for _ in range(args.steps):
        tok = torch.randint(0, args.vocab, (args.batch,), generator=g)
        seq = [tok]
        for _ in range(args.seq):
            pick = torch.randint(0, 4, (args.batch,), generator=g)
            tok = successors[tok, pick]
            seq.append(tok)
        seq = torch.stack(seq, dim=1)
        out.append((seq[:, :-1].contiguous(), seq[:, 1:].contiguous()))
    return out


def new_model(args):
    """The same initial weights on every call and every rank."""
    import torch
    from collc.torch.models.gpt2 import GPT2
    torch.manual_seed(args.seed)
    model = GPT2(n_layer=args.layers, n_head=args.heads, n_embd=args.width,
                 vocab_size=args.vocab, n_ctx=args.seq)
    # GPT-2's initialization of the embeddings (nn.Embedding's is N(0, 1),
    # which through the tied head starts the loss far above log(vocab)).
    torch.nn.init.normal_(model.transformer.wte.weight, std=0.02)
    torch.nn.init.normal_(model.transformer.wpe.weight, std=0.01)
    return model


def loss_of(logits, targets):
    import torch
    return torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                             targets.reshape(-1))


def without_costs(ir):
    """The program less its costs and its header: the measured costs, and
    the rates the header states for them (such as this CPU's copy rate,
    which prices the optimizer step), differ between processes."""
    import re
    return re.sub(r"cost\([^)]*\)|//.*", "", ir)


def plan_for(args, rank, data):
    """The plan both ranks replay: each rank traces a model of the same
    weights on its first batch; rank 0's trace is compiled on both, as the
    measured costs differ between processes and the plans' digests must
    agree. Every rank checks its own trace's program equals rank 0's but
    for the costs."""
    import torch.distributed as dist
    import collc
    from collc.torch import trace_ddp
    ids, targets = data[0]
    ir = trace_ddp(new_model(args), (ids,), loss_fn=lambda out: loss_of(out, targets),
                   world=args.world, device_class="cpu", program="gpt2_ddp")
    shared = [ir]
    dist.broadcast_object_list(shared, src=0)
    if without_costs(shared[0]) != without_costs(ir):
        raise RuntimeError(f"rank {rank}: the traced program differs from rank 0's beyond "
                           "its costs (another gradient order?)")
    return collc.compile(shared[0], bucket="ddp"), shared[0]


class Overlap:
    """Replays the plan on a thread of its own while backward runs (--overlap):
    each backward compute op's callback waits until autograd has accumulated
    the gradients the op produces (a hook on each parameter's gradient
    accumulator, as DDP's reducer hooks them), so each bucket's all_reduce
    starts once its gradients are ready, as DDP's do, not after backward."""

    def __init__(self, x, ir, grads, timeout):
        import re
        from collc.torch import on_gradient_ready
        self.x, self.timeout, self.names = x, timeout, [g.name for g in grads]
        of_value = {"%" + g.tensor: g.name for g in grads}
        # compute op -> the parameters whose gradients it produces
        self.waits = {m.group(2): [of_value[v] for v in m.group(1).split(", ") if v in of_value]
                      for m in re.finditer(r"^ +(%.+?) = compute @([^\s(]+)", ir, re.M)}
        self.ready = {}
        self.accumulators = on_gradient_ready(grads, lambda name: self.ready[name].set())

    def start(self):
        import threading
        self.ready = {n: threading.Event() for n in self.names}
        self.abandoned, self.errors = threading.Event(), []
        self.thread = threading.Thread(target=self._replay)
        self.thread.start()

    def _compute(self, op, index):
        for name in self.waits.get(op, ()):
            while not self.ready[name].wait(0.05):
                if self.abandoned.is_set():
                    raise RuntimeError(f"compute @{op}: the step was abandoned before the "
                                       f"gradient of {name} was ready")

    def _replay(self):
        try:
            self.x.replay(self._compute)
            self.x.synchronize(timeout=self.timeout)
        except BaseException as e:  # raised on the training thread, by finish()
            self.errors.append(e)

    def finish(self, backward_done):
        if not backward_done:
            self.abandoned.set()
        self.thread.join()
        if self.errors and backward_done:
            raise self.errors[0]


class CollcTrainer:
    """The model trained with collc's plan averaging its gradients."""

    def __init__(self, args, rank, data, rendezvous):
        import torch
        import collc
        from collc.torch import ddp_gradients
        self.args, self.rank = args, rank
        self.plan, ir = plan_for(args, rank, data)
        self.model = new_model(args)
        self.x = collc.Executor(self.plan, rank, backend=args.backend, rendezvous=rendezvous,
                                timeout_ms=int(args.timeout * 1000))
        # Gradients as bucket views (DDP's gradient_as_bucket_view): each .grad
        # is the plan's %g.NAME, a view of its bucket, which backward
        # accumulates into and the replay averages in place (%r.NAME is the
        # same memory).
        grads = ddp_gradients(self.model)
        self.params = [g.parameter for g in grads]
        for g in grads:
            g.parameter.grad = torch.from_numpy(self.x.tensor(g.tensor)).view(g.parameter.shape)
        self.where = [p.grad.data_ptr() for p in self.params]
        count, first = self.x.unbound()
        if count:
            raise RuntimeError(f"rank {rank}: {count} plan tensors are not views, {first} first")
        self.x.capture()
        self.overlap = Overlap(self.x, ir, grads, args.timeout) if args.overlap else None
        self.opt = torch.optim.Adam(self.model.parameters(), lr=args.lr)
        self.waits = []  # per step: how long averaging ran on after backward

    def step(self, ids, targets):
        if self.overlap:
            self.overlap.start()
        backward_done = False
        try:
            self.opt.zero_grad(set_to_none=False)  # zeroes the views in place
            loss = loss_of(self.model(ids), targets)
            loss.backward()
            if [p.grad.data_ptr() for p in self.params] != self.where:
                raise RuntimeError(f"rank {self.rank}: backward replaced a gradient instead "
                                   "of accumulating into the plan's view")
            backward_done = True
            t = time.perf_counter()
        finally:
            if self.overlap:
                self.overlap.finish(backward_done)
        if not self.overlap:
            self.x.replay()
            self.x.synchronize(timeout=self.args.timeout)
        self.waits.append(time.perf_counter() - t)
        if self.args.perturb:
            for p in self.params:
                p.grad.add_(self.args.perturb)
        self.opt.step()
        return loss

    def close(self):
        """The final parameters; releases the executor and the plan."""
        final = [p.detach().clone() for p in self.params]
        for p in self.params:
            p.grad = None  # the views die with the executor
        self.x.close()
        self.plan.close()
        return final


class DdpTrainer:
    """The model trained with torch's DistributedDataParallel, its defaults."""

    def __init__(self, args):
        import torch
        from torch.nn.parallel import DistributedDataParallel
        from collc.torch import ddp_gradients
        self.model = new_model(args)
        self.params = [g.parameter for g in ddp_gradients(self.model)]
        self.ddp = DistributedDataParallel(self.model)
        self.opt = torch.optim.Adam(self.ddp.parameters(), lr=args.lr)

    def step(self, ids, targets):
        self.opt.zero_grad(set_to_none=False)
        loss = loss_of(self.ddp(ids), targets)
        loss.backward()
        self.opt.step()
        return loss

    def close(self):
        return [p.detach().clone() for p in self.params]


def worker(args):
    import datetime
    import torch
    import torch.distributed as dist
    if args.backend == "mpi":  # Open MPI's variables, then MPICH's
        rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", "-1")))
    else:
        rank = int(os.environ["RANK"])
    torch.set_num_threads(1)  # one core per rank; also keeps the kernels' sums in one order
    dist.init_process_group("gloo", init_method="file://" + os.path.join(args.worker, "torch"),
                            rank=rank, world_size=args.world,
                            timeout=datetime.timedelta(seconds=args.timeout))
    data = batches(args, rank)
    if rank == args.fail_rank:
        raise SystemExit(f"rank {rank}: failing as --fail-rank asks")
    # collc's gloo ranks meet in a directory of their own; mpi's through MPI.
    rendezvous = "file:" + os.path.join(args.worker, "collc") if args.backend == "gloo" else None
    trainers = {"collc": CollcTrainer(args, rank, data, rendezvous), "ddp": DdpTrainer(args)}
    # The two train step by step in turn, the first of a step alternating, so
    # the machine's load falls on both alike and their times compare.
    result = {k: {"loss": [], "time": []} for k in trainers}
    for s, (ids, targets) in enumerate(data):
        for k in (("collc", "ddp") if s % 2 == 0 else ("ddp", "collc")):
            t0 = time.perf_counter()
            loss = trainers[k].step(ids, targets)
            result[k]["time"].append(time.perf_counter() - t0)
            result[k]["loss"].append(loss.item())
    result["collc"]["wait"] = trainers["collc"].waits
    result["drift"] = max(float((a - b).abs().max())
                          for a, b in zip(trainers["collc"].close(), trainers["ddp"].close()))
    with open(os.path.join(args.worker, f"rank{rank}.json"), "w") as f:
        json.dump(result, f)
    dist.destroy_process_group()
    if args.backend == "mpi":
        import collc
        collc.finalize()


# ---------------------------------------------------------------- launcher

def kill(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_ranks(args, tmp):
    """Starts the ranks and waits for them; True when every one succeeded.
    The caller kills what is left."""
    me = [sys.executable, os.path.abspath(__file__)] + sys.argv[1:] + ["--worker", tmp]
    procs = []
    if args.backend == "mpi":
        mpirun = shlex.split(os.environ.get("COLLC_MPIRUN", "mpirun"))
        procs.append(subprocess.Popen(mpirun + ["-np", str(args.world)] + me,
                                      stdin=subprocess.DEVNULL, start_new_session=True))
    else:
        for r in range(args.world):
            env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(args.world))
            procs.append(subprocess.Popen(me, env=env, stdin=subprocess.DEVNULL,
                                          start_new_session=True))
    deadline = time.monotonic() + args.timeout
    try:
        while any(p.poll() is None for p in procs):
            if any(p.poll() not in (None, 0) for p in procs):
                break  # the others would wait for it
            if time.monotonic() > deadline:
                print(f"torch_ddp_train: timeout after {args.timeout:g} s; stopping the ranks",
                      file=sys.stderr)
                return False
            time.sleep(0.05)
        failed = [p.returncode for p in procs if p.poll() not in (None, 0)]
        if failed:
            print(f"torch_ddp_train: a rank failed (exit status {failed[0]}); stopping the "
                  "others", file=sys.stderr)
        return not failed
    finally:
        for p in procs:  # all at once, before waiting: none sees another die first
            if p.poll() is None:
                kill(p)
        for p in procs:
            p.wait()


def mean(xs):
    return sum(xs) / len(xs)


def report(args, ranks):
    """Prints the curves and times; True when they agree within the tolerance."""
    steps = args.steps
    # The loss of a step: the mean over ranks (what each rank's data gives);
    # its time: the slowest rank's (a data-parallel step waits for it).
    loss = {k: [mean([r[k]["loss"][s] for r in ranks]) for s in range(steps)]
            for k in ("collc", "ddp")}
    step_ms = {k: [1000 * max(r[k]["time"][s] for r in ranks) for s in range(steps)]
               for k in ("collc", "ddp")}
    print(f"GPT-2 {args.layers} layers x {args.width} wide, {args.heads} heads, seq {args.seq}, "
          f"vocab {args.vocab}; {args.world} ranks on CPU, {args.batch} sequences each per step; "
          f"Adam lr {args.lr:g}; {steps} steps; collc on {args.backend} "
          f"({'overlapping backward' if args.overlap else 'after backward'}), torch DDP on gloo")
    print(f"{'step':>4}  {'collc loss':>12}  {'DDP loss':>12}  {'|diff|':>9}  "
          f"{'collc ms':>9}  {'DDP ms':>9}")
    worst_abs = worst_rel = 0.0
    for s in range(steps):
        c, d = loss["collc"][s], loss["ddp"][s]
        # Every rank's own loss is compared, not only their mean.
        for r in ranks:
            a, b = r["collc"]["loss"][s], r["ddp"]["loss"][s]
            worst_abs = max(worst_abs, abs(a - b))
            worst_rel = max(worst_rel, abs(a - b) / max(abs(b), 1e-30))
        print(f"{s:>4}  {c:>12.7f}  {d:>12.7f}  {abs(c - d):>9.2e}  "
              f"{step_ms['collc'][s]:>9.1f}  {step_ms['ddp'][s]:>9.1f}")
    c_ms, d_ms = mean(step_ms["collc"][1:]), mean(step_ms["ddp"][1:])
    print(f"mean step time (steps 1-{steps - 1}): collc {c_ms:.1f} ms, torch DDP {d_ms:.1f} ms "
          f"(collc / DDP {c_ms / d_ms:.2f})")
    wait_ms = mean([1000 * mean(r["collc"]["wait"][1:]) for r in ranks])
    print(f"collc's averaging after backward ended: {wait_ms:.1f} ms per step "
          f"(the mean over ranks, steps 1-{steps - 1})")
    drift = max(r["drift"] for r in ranks)
    print(f"max |parameter difference| after {steps} steps: {drift:.3e}")
    ok = worst_rel <= args.tolerance
    print(f"max |loss difference|: {worst_abs:.3e} (relative {worst_rel:.3e}); "
          f"tolerance {args.tolerance:g} relative: {'agree' if ok else 'DISAGREE'}")
    return ok


def main():
    args = options()
    if args.worker:
        worker(args)
        return 0

    def on_signal(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, on_signal)
    tmp = tempfile.mkdtemp(prefix="collc-ddp-train-")
    try:
        os.mkdir(os.path.join(tmp, "collc"))
        if not run_ranks(args, tmp):
            return 2
        ranks = []
        for r in range(args.world):
            with open(os.path.join(tmp, f"rank{r}.json")) as f:
                ranks.append(json.load(f))
        return 0 if report(args, ranks) else 1
    except KeyboardInterrupt as e:
        print(f"torch_ddp_train: stopped: {e}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
