"""One rank of a gloo run whose processes meet in torch's TCPStore
(MASTER_ADDR:MASTER_PORT, as under torchrun; tests/launch/spawn_ranks.py
--rendezvous torch): an eager all_reduce, then several executors of one
process, each checked: two of one plan one after the other (a plan made
again) and two plans alive at once (two models)."""

import datetime
import os

import numpy as np
import torch.distributed as dist

import collc
from conftest import OTHER_REDUCE, TWO_REDUCES, UNFUSED

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
store = dist.TCPStore(os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), world,
                      rank == 0, timeout=datetime.timedelta(seconds=60))
where = collc.register_store("torch", store, one_host=True)

comm = collc.Communicator(rank, world, backend="gloo", rendezvous=where, timeout_ms=30000)
x = np.arange(5, dtype=np.float64) * (rank + 1)
comm.all_reduce(x).wait()
np.testing.assert_array_equal(x, np.arange(5) * sum(q + 1 for q in range(world)))
print(f"rank {rank}: an eager all_reduce in the torch store ok")


def bound(plan, scale):
    """An executor of plan with its inputs bound to rank-dependent values."""
    x = collc.Executor(plan, rank, backend="gloo", rendezvous=where, timeout_ms=30000)
    arrays = {}
    for name in ("a", "b", "r", "s"):
        t = plan.tensor_type(name)
        arrays[name] = np.full(t.shape, scale * (rank + 1) if name in "ab" else 0, np.float32)
        x.bind(name, arrays[name])
    x.capture()
    return x, arrays


def check(x, arrays, scale):
    x.replay()
    x.synchronize(5.0)
    want = scale * sum(q + 1 for q in range(world))
    assert np.all(arrays["r"] == want) and np.all(arrays["s"] == want), (arrays, want)


plan = collc.compile(TWO_REDUCES, world=world, passes=UNFUSED)
for again in range(2):  # the same plan made into an executor twice
    x, arrays = bound(plan, 1.0)
    check(x, arrays, 1.0)
    x.close()
other = collc.compile(OTHER_REDUCE, world=world, passes=UNFUSED)
a, arrays_a = bound(plan, 2.0)  # two models' executors alive at once
b, arrays_b = bound(other, 3.0)
check(b, arrays_b, 3.0)
check(a, arrays_a, 2.0)
a.close()
b.close()
comm.close()
print(f"rank {rank} of {world}: four executors of one process in the torch store ok")
