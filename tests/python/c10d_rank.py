"""One rank of a torch.distributed run on backend "collc"
(test_torch_backend.py), launched with torchrun's environment
(tests/launch/spawn_ranks.py --rendezvous torch) or under mpirun; --case
picks what it checks and prints CASE-OK, or the error it expects
(CASE-ERROR: ...):

  ops       every operation, against values computed here: all_reduce of
            every dtype collc reduces with every op, all_gather into a list
            and into one tensor, reduce_scatter from a list and one tensor,
            broadcast, all_to_all of one tensor with and without split
            sizes, send and recv both ways at once, barrier, async works and
            their futures, non-contiguous tensors, a teardown with works in
            flight
  refusals  an op collc lacks, a reduction it lacks, a dtype it cannot
            reduce, all_to_all split sizes past the tensor's rows, a send
            with a tag: each named (a tensor off the CPU is refused by torch
            1.13's dispatcher before a process group sees it, for every
            backend but nccl: the backend's own refusal of a CUDA tensor
            needs a torch with CUDA)
  timeout   rank 1 never joins an all_reduce: rank 0 raises within the
            process group's timeout (3 s), naming rank 1
  dies      rank 1 ends before an all_reduce: rank 0 raises, naming it"""

import argparse
import datetime
import os
import time

import torch
import torch.distributed as dist

import collc.torch  # noqa: F401  (registers the backend)
from expect import expect_error

DTYPES = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8, torch.uint8,
          torch.int32, torch.int64]
OPS = {dist.ReduceOp.SUM: sum, dist.ReduceOp.PRODUCT: None, dist.ReduceOp.MIN: min,
       dist.ReduceOp.MAX: max}


def each_rank(world, f):
    return [f(r) for r in range(world)]


def ops(rank, world):
    def value(r, dt):  # small integers: exact in every dtype, and their sums too
        return (torch.arange(6) % 3 + r + 1).to(dt)

    for dt in DTYPES:
        for op in (dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN,
                   dist.ReduceOp.MAX):
            t = value(rank, dt)
            dist.all_reduce(t, op=op)
            vals = each_rank(world, lambda r: value(r, torch.float64))
            if op == dist.ReduceOp.SUM:
                want = sum(vals)
            elif op == dist.ReduceOp.PRODUCT:
                want = torch.stack(vals).prod(0)
            elif op == dist.ReduceOp.MIN:
                want = torch.stack(vals).min(0).values
            else:
                want = torch.stack(vals).max(0).values
            assert torch.equal(t, want.to(dt)), (dt, op, t, want)
    t = torch.full((4,), float(rank * 2))
    dist.all_reduce(t, op=dist.ReduceOp.AVG)
    assert torch.equal(t, torch.full((4,), float(world - 1))), t

    x = torch.arange(3, dtype=torch.int64) + 10 * rank
    outs = [torch.zeros(3, dtype=torch.int64) for _ in range(world)]
    dist.all_gather(outs, x)
    assert all(torch.equal(o, torch.arange(3) + 10 * r) for r, o in enumerate(outs)), outs
    flat = torch.zeros(3 * world, dtype=torch.int64)
    dist._all_gather_base(flat, x)
    assert torch.equal(flat, torch.cat([torch.arange(3) + 10 * r for r in range(world)])), flat

    ins = [torch.full((2,), float(rank + 10 * q)) for q in range(world)]
    out = torch.zeros(2)
    dist.reduce_scatter(out, ins)
    assert torch.equal(out, torch.full((2,), float(sum(r + 10 * rank for r in range(world))))), out
    out.zero_()
    dist._reduce_scatter_base(out, torch.cat(ins))
    assert torch.equal(out, torch.full((2,), float(sum(r + 10 * rank for r in range(world))))), out

    b = torch.full((5,), rank, dtype=torch.bfloat16)
    dist.broadcast(b, src=world - 1)
    assert torch.equal(b, torch.full((5,), world - 1, dtype=torch.bfloat16)), b

    # Rank r sends r + 1 rows to each peer, 2 columns each.
    send_rows = [rank + 1] * world
    recv_rows = [r + 1 for r in range(world)]
    inp = torch.full((sum(send_rows), 2), float(rank))
    got = torch.zeros(sum(recv_rows), 2)
    dist.all_to_all_single(got, inp, recv_rows, send_rows)
    assert torch.equal(got, torch.cat([torch.full((r + 1, 2), float(r)) for r in range(world)]))
    even = torch.arange(world * 2, dtype=torch.int32) + 100 * rank
    got = torch.zeros(world * 2, dtype=torch.int32)
    dist.all_to_all_single(got, even)
    assert torch.equal(got, torch.cat([torch.arange(2 * rank, 2 * rank + 2) + 100 * r
                                       for r in range(world)]).int()), got

    # Every rank sends to the next and receives from the previous, at once.
    nxt, prv = (rank + 1) % world, (rank - 1) % world
    s = dist.isend(torch.full((7,), float(rank)), nxt)
    r = torch.zeros(7)
    dist.irecv(r, prv).wait()
    s.wait()
    assert torch.equal(r, torch.full((7,), float(prv))), r

    # Async works and their futures; non-contiguous tensors in place.
    works = [dist.all_reduce(torch.ones(3) * (k + 1), async_op=True) for k in range(4)]
    fut = dist.all_reduce(torch.ones(2), async_op=True).get_future()
    vals = fut.wait()
    assert torch.equal(vals[0], torch.full((2,), float(world))), vals
    for w in works:
        w.wait()
        assert w.is_completed()
    nc = torch.arange(8.).reshape(2, 4).t()
    dist.all_reduce(nc)
    assert torch.equal(nc, (torch.arange(8.).reshape(2, 4) * world).t()), nc
    dist.barrier()
    # Works in flight at teardown, their tensors held by the works alone:
    # the watcher drops them (which takes the GIL) while main() destroys
    # the group.
    for _ in range(8):
        dist.all_reduce(torch.ones(1 << 16), async_op=True)
    print("CASE-OK: every operation gave the values computed here", flush=True)


def refusals(rank, world):
    expect_error(lambda: dist.reduce(torch.zeros(3), dst=0),
                 f"collc backend (rank {rank}): reduce is not supported")
    expect_error(lambda: dist.all_reduce(torch.zeros(3, dtype=torch.int32),
                                         op=dist.ReduceOp.BAND),
                 "all_reduce with op BAND is not supported")
    expect_error(lambda: dist.all_reduce(torch.zeros(3, dtype=torch.int16)),
                 "all_reduce: a tensor of Short")
    huge = 1 << 62  # its bytes would overflow 64 bits: refused before any arithmetic
    expect_error(lambda: dist.all_to_all_single(torch.zeros(world), torch.zeros(world),
                                                [1] * world, [huge] + [0] * (world - 1)),
                 f"all_to_all: input split size {huge} after 0 rows: expected 0 to {world}")
    expect_error(lambda: dist.send(torch.zeros(2), (rank + 1) % world, tag=3),
                 "send: tag 3", "expected 0")
    dist.barrier()
    print("CASE-OK: each refusal named what is wrong", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", required=True)
    args = ap.parse_args()
    timeout = datetime.timedelta(seconds=3 if args.case in ("timeout", "dies") else 60)
    dist.init_process_group("collc", timeout=timeout)
    rank, world = dist.get_rank(), dist.get_world_size()
    assert dist.get_backend() == "collc", dist.get_backend()
    if args.case == "ops":
        ops(rank, world)
        used = sorted(set(collc.torch._backend.transports.values()))
        print(f"CASE-TRANSPORT {','.join(used)}", flush=True)
    elif args.case == "refusals":
        refusals(rank, world)
    elif args.case in ("timeout", "dies"):
        if rank == 1:
            if args.case == "dies":
                os._exit(3)
            time.sleep(30)  # never joins; killed once rank 0 is done
            os._exit(0)
        t0 = time.monotonic()
        expect_error(lambda: dist.all_reduce(torch.ones(4)), f"collc backend (rank {rank}): "
                     "all_reduce failed", "rank 1")
        print(f"CASE-SECONDS {time.monotonic() - t0:.1f}", flush=True)
        os._exit(0)  # the process group would wait for rank 1
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
