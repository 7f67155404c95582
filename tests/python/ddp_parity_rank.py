"""One rank of the DDP parity run (test_torch_parallel.py): for each model
kind of ddp_models.py, plain and with no_sync over 4 micro-batches, trains
two copies for --steps steps on this rank's batches, one under torch's
DistributedDataParallel on gloo and one under the copy's wrapper (--wrapper
collc: collc.torch.DistributedDataParallel; torch-on-collc: torch's own DDP
over the default process group of dist.init_process_group("collc"), the
gloo one a new_group), and prints the largest relative difference of the
losses and of the final parameters and buffers.

Launched with torchrun's environment (tests/launch/spawn_ranks.py
--rendezvous torch)."""

import argparse
import json
import os
import time

import torch
import torch.distributed as dist

from ddp_models import KINDS, batches, new_model


def train(ddp, opt, kind, data, micro):
    """Losses of each step; a step of `micro` micro-batches runs the first
    micro - 1 under no_sync."""
    loss_fn = KINDS[kind][2]
    losses = []
    for s in range(0, len(data), micro):
        opt.zero_grad(set_to_none=False)
        total = 0.0
        for k in range(micro):
            x, y = data[s + k]
            ctx = ddp.no_sync() if k < micro - 1 else _nothing()
            with ctx:
                loss = loss_fn(ddp(x), y) / micro
                loss.backward()
            total += loss.item()
        opt.step()
        losses.append(total)
    return losses


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *_):
        return False


def rel(a, b):
    return abs(a - b) / max(abs(b), 1e-30)


def state_diff(m1, m2):
    worst = 0.0
    s1, s2 = m1.state_dict(), m2.state_dict()
    assert list(s1) == list(s2), (list(s1), list(s2))
    for k in s1:
        a, b = s1[k].double(), s2[k].double()
        d = (a - b).abs().max().item() if a.numel() else 0.0
        scale = max(b.abs().max().item(), 1e-30) if b.numel() else 1.0
        worst = max(worst, d / scale)
    return worst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--wrapper", choices=["collc", "torch-on-collc"], default="collc")
    ap.add_argument("--kinds", default=",".join(KINDS))
    args = ap.parse_args()
    rank = int(os.environ["RANK"])
    torch.set_num_threads(1)  # one order of each kernel's sums for both copies
    from collc.torch import DistributedDataParallel as CollcDDP  # registers "collc" too
    on_collc = args.wrapper == "torch-on-collc"
    dist.init_process_group("collc" if on_collc else "gloo")
    gloo = dist.new_group(backend="gloo") if on_collc else None
    report = {}
    for kind in args.kinds.split(","):
        for micro in (1, 4):
            t0 = time.perf_counter()
            data = batches(kind, rank, args.steps * micro)
            ref_model, model = new_model(kind, seed=rank), new_model(kind, seed=rank)
            ref = torch.nn.parallel.DistributedDataParallel(ref_model, process_group=gloo)
            view = (micro == 1) == (kind in ("gpt", "lstm"))  # both modes, across the kinds
            if on_collc:
                ddp = torch.nn.parallel.DistributedDataParallel(model,
                                                                gradient_as_bucket_view=view)
            else:
                ddp = CollcDDP(model, gradient_as_bucket_view=view, timeout=60)
            ref_opt = torch.optim.SGD(ref.parameters(), lr=0.05, momentum=0.9)
            opt = torch.optim.SGD(ddp.parameters(), lr=0.05, momentum=0.9)
            want = train(ref, ref_opt, kind, data, micro)
            got = train(ddp, opt, kind, data, micro)
            report[f"{kind}/{micro}"] = {
                "loss": max(rel(a, b) for a, b in zip(got, want)),
                "state": state_diff(ddp, ref),
                "equal": got == want,
                "seconds": time.perf_counter() - t0,
            }
    print("REPORT " + json.dumps(report), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
