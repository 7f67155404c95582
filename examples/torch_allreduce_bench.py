#!/usr/bin/env python3
"""Times torch.distributed.all_reduce through torch's own API on 2 CPU
processes (--world), on backend "collc" (collc's eager collectives,
registered by `import collc.torch`) beside torch's "gloo", in one run: for
every size from 8 B to 64 MiB (--max-bytes) of float32, the mean time of
an all_reduce (the slower rank's) on each, and their ratio.

  PYTHONPATH=python COLLC_LIBRARY=build/lib/libcollc.so \\
      /usr/bin/python3 examples/torch_allreduce_bench.py [--world 2] [--max-bytes 64MiB]

It starts its ranks itself with torchrun's environment (MASTER_ADDR
127.0.0.1, a free MASTER_PORT), kills them on every path, and exits 2 when
a rank failed. The two backends take turns size by size, so the load of a
shared machine falls on both alike; compare figures within one run.
"""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time

UNITS = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20}


def byte_size(text):
    for unit in sorted(UNITS, key=len, reverse=True):
        if text.endswith(unit) and text[:-len(unit)].isdigit():
            return int(text[:-len(unit)]) * UNITS[unit]
    if text.isdigit():
        return int(text)
    raise argparse.ArgumentTypeError(f"{text!r} is not a size such as 4096, 64KiB or 64MiB")


def human(n):
    for unit in ("MiB", "KiB"):
        if n >= UNITS[unit]:
            return f"{n // UNITS[unit]} {unit}"
    return f"{n} B"


def options():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--world", type=int, default=2)
    ap.add_argument("--max-bytes", type=byte_size, default=64 << 20)
    ap.add_argument("--budget-bytes", type=byte_size, default=256 << 20,
                    help="bytes all_reduced per size and backend (fewer iterations for large sizes)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds for the whole run")
    ap.add_argument("--worker", metavar="FILE", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.world < 2:
        ap.error(f"--world is {args.world}: expected at least 2")
    if args.max_bytes < 8:
        ap.error("--max-bytes must be at least 8")
    return args


def sizes(max_bytes):
    """8 B, then times 4, ending at max_bytes."""
    out, n = [], 8
    while n < max_bytes:
        out.append(n)
        n *= 4
    return out + [max_bytes]


def worker(args):
    import torch
    import torch.distributed as dist
    import collc.torch  # noqa: F401  (registers backend "collc")
    torch.set_num_threads(1)
    dist.init_process_group("gloo")
    groups = {"gloo": dist.group.WORLD, "collc": dist.new_group(backend="collc")}
    rank = dist.get_rank()
    rows = []
    for k, n in enumerate(sizes(args.max_bytes)):
        t = torch.ones(n // 4)
        iters = max(3, min(200, args.budget_bytes // n))
        row = {"bytes": n, "iters": iters}
        for name in (("collc", "gloo") if k % 2 == 0 else ("gloo", "collc")):
            g = groups[name]
            for _ in range(2):  # warm-up
                dist.all_reduce(t, group=g)
            dist.barrier(group=groups["gloo"])
            t0 = time.perf_counter()
            for _ in range(iters):
                dist.all_reduce(t, group=g)
            took = torch.tensor([(time.perf_counter() - t0) / iters])
            dist.all_reduce(took, op=dist.ReduceOp.MAX, group=groups["gloo"])
            row[name] = took.item()
        rows.append(row)
    if rank == 0:
        with open(args.worker, "w") as f:
            json.dump(rows, f)
    dist.destroy_process_group()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    args = options()
    if args.worker:
        worker(args)
        return 0
    out = tempfile.NamedTemporaryFile(prefix="collc-allreduce-bench-", suffix=".json",
                                      delete=False).name
    me = [sys.executable, os.path.abspath(__file__)] + sys.argv[1:] + ["--worker", out]
    port, procs = str(free_port()), []
    try:
        for r in range(args.world):
            env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(args.world), LOCAL_RANK=str(r),
                       LOCAL_WORLD_SIZE=str(args.world), GROUP_RANK="0",
                       MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
            procs.append(subprocess.Popen(me, env=env, stdin=subprocess.DEVNULL,
                                          start_new_session=True))
        deadline = time.monotonic() + args.timeout
        while any(p.poll() is None for p in procs):
            if any(p.poll() not in (None, 0) for p in procs) or time.monotonic() > deadline:
                print("torch_allreduce_bench: a rank failed or the run timed out",
                      file=sys.stderr)
                return 2
            time.sleep(0.05)
        if any(p.returncode for p in procs):
            return 2
        with open(out) as f:
            rows = json.load(f)
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        os.unlink(out)
    print(f"dist.all_reduce of float32, {args.world} CPU processes, torch's API; the mean time "
          "of one (the slower rank's), backends in turn")
    print(f"{'bytes':>9}  {'iters':>5}  {'gloo us':>10}  {'collc us':>10}  {'collc/gloo':>10}")
    for row in rows:
        print(f"{human(row['bytes']):>9}  {row['iters']:>5}  {row['gloo'] * 1e6:>10.1f}  "
              f"{row['collc'] * 1e6:>10.1f}  {row['collc'] / row['gloo']:>10.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
