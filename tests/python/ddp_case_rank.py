"""One rank of a collc.torch.DistributedDataParallel case
(test_torch_parallel.py), launched with torchrun's environment
(tests/launch/spawn_ranks.py --rendezvous torch); --case picks it:

  checkpoint   a torch DDP checkpoint loads into collc's wrapper and back,
               and training goes on to equal losses
  two-models   two wrappers alive in one process, stepped in turn
  other-model  rank 1 holds another model: refused, naming the rank
  other-world  rank 1 was started with another WORLD_SIZE: refused
  dies         rank 1 ends during a step: rank 0 raises, naming it
  refusals     (one rank) arguments it cannot honour, a module off the CPU,
               a parameter that gets no gradient

Each prints CASE-OK or the error it expects (CASE-ERROR: ...)."""

import argparse
import io
import os
import sys

import torch
import torch.distributed as dist

from collc.torch import DistributedDataParallel as CollcDDP
from ddp_models import KINDS, batches, new_model
from expect import expect_error

TIMEOUT_S = 20


def step(ddp, opt, kind, batch):
    opt.zero_grad()
    loss = KINDS[kind][2](ddp(batch[0]), batch[1])
    loss.backward()
    opt.step()
    return loss.item()


def checkpoint(rank):
    """torch DDP -> collc wrapper -> torch DDP, against one torch DDP
    trained throughout."""
    data = batches("cnn", rank, 15)
    ref = torch.nn.parallel.DistributedDataParallel(new_model("cnn", rank))
    ref_opt = torch.optim.SGD(ref.parameters(), lr=0.05)
    want = [step(ref, ref_opt, "cnn", b) for b in data]

    a = torch.nn.parallel.DistributedDataParallel(new_model("cnn", rank))
    a_opt = torch.optim.SGD(a.parameters(), lr=0.05)
    got = [step(a, a_opt, "cnn", b) for b in data[:5]]
    saved = io.BytesIO()
    torch.save(a.state_dict(), saved)  # keys begin "module."
    saved.seek(0)
    b = CollcDDP(new_model("cnn", rank + 7), timeout=TIMEOUT_S)
    b.load_state_dict(torch.load(saved))
    b_opt = torch.optim.SGD(b.parameters(), lr=0.05)
    got += [step(b, b_opt, "cnn", x) for x in data[5:10]]
    saved = io.BytesIO()
    torch.save(b.state_dict(), saved)
    saved.seek(0)
    c = torch.nn.parallel.DistributedDataParallel(new_model("cnn", rank + 9))
    c.load_state_dict(torch.load(saved))
    c_opt = torch.optim.SGD(c.parameters(), lr=0.05)
    got += [step(c, c_opt, "cnn", x) for x in data[10:]]
    assert got == want, (got, want)
    assert list(b.state_dict()) == list(ref.state_dict())
    print("CASE-OK: the losses are equal through torch DDP -> collc -> torch DDP", flush=True)


def two_models(rank):
    kinds = ("lstm", "frozen")
    refs = [torch.nn.parallel.DistributedDataParallel(new_model(k, rank)) for k in kinds]
    mine = [CollcDDP(new_model(k, rank), timeout=TIMEOUT_S) for k in kinds]
    opts = [torch.optim.SGD(m.parameters(), lr=0.05) for m in refs + mine]
    data = [batches(k, rank, 6) for k in kinds]
    for s in range(6):
        for i, k in enumerate(kinds):
            want = step(refs[i], opts[i], k, data[i][s])
            got = step(mine[i], opts[2 + i], k, data[i][s])
            assert got == want, (k, s, got, want)
    print("CASE-OK: two wrappers in one process train as two torch DDPs", flush=True)


class Unused(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.used = torch.nn.Linear(4, 4)
        self.spare = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.used(x)


class UnusedLater(Unused):
    """Uses `spare` in its first forward only."""

    def forward(self, x):
        self.calls = getattr(self, "calls", 0) + 1
        return self.used(x) + (self.spare(x) if self.calls == 1 else 0)


def refusals():
    expect_error(lambda: CollcDDP(new_model("frozen"), device_ids=[0]), "device_ids is [0]",
                 "expected None")
    expect_error(lambda: CollcDDP(new_model("frozen"), find_unused_parameters=True),
                 "find_unused_parameters=True", "expected False")
    expect_error(lambda: CollcDDP(new_model("frozen").to("meta")), "is on meta",
                 "expected a CPU module")
    ddp = CollcDDP(Unused(), timeout=TIMEOUT_S)
    expect_error(lambda: ddp(torch.ones(2, 4)).sum().backward(),
                 "2 parameter(s) require a gradient but got none in this backward: spare.weight, "
                 "spare.bias")
    ddp = CollcDDP(UnusedLater(), timeout=TIMEOUT_S)
    ddp(torch.ones(2, 4)).sum().backward()
    expect_error(lambda: ddp(torch.ones(2, 4)).sum().backward(),
                 "rank 0: 2 parameter(s) require a gradient but got none in this backward: "
                 "spare.weight, spare.bias")
    expect_error(lambda: ddp(torch.ones(2, 4)), "spare.weight")  # and it stays broken
    print("CASE-OK: refused, each naming what is wrong", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", required=True)
    args = ap.parse_args()
    rank = int(os.environ["RANK"])
    torch.set_num_threads(1)
    if args.case == "other-world":
        # No process group (its own store would refuse first): the ranks
        # meet as torchrun's workers do, at MASTER_ADDR:MASTER_PORT.
        if rank == 1:
            os.environ["WORLD_SIZE"] = "3"
        expect_error(lambda: CollcDDP(new_model("frozen", rank), timeout=TIMEOUT_S),
                     "different sizes")
        return
    if args.case == "refusals":
        refusals()
        return
    dist.init_process_group("gloo")
    if args.case == "checkpoint":
        checkpoint(rank)
    elif args.case == "two-models":
        two_models(rank)
    elif args.case == "other-model":
        kind = "frozen" if rank == 0 else "lstm"
        expect_error(lambda: CollcDDP(new_model(kind, rank), timeout=TIMEOUT_S),
                     "rank(s) 1 hold a model other than rank 0's")
    elif args.case == "dies":
        ddp = CollcDDP(new_model("frozen", rank), timeout=TIMEOUT_S)
        opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
        data = batches("frozen", rank, 5)
        for s, b in enumerate(data):
            if s == 3:
                # Both ranks are past step 2 (its end included: a peer seen
                # gone then would fail step 2 on rank 0 instead).
                dist.barrier()
            if s == 3 and rank == 1:
                os._exit(3)  # gone mid-run, without a word
            if s == 3:
                expect_error(lambda: step(ddp, opt, "frozen", b), "rank 1")
                sys.stdout.flush()
                os._exit(0)  # the process group would wait for rank 1
            step(ddp, opt, "frozen", b)
    else:
        raise SystemExit(f"unknown case {args.case}")
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
