"""One rank of a gloo run, started by tests/launch/spawn_ranks.py (RANK,
WORLD_SIZE and COLLC_RENDEZVOUS in its environment): all_reduces its
rank's numpy arrays and checks the sums of every rank's."""

import os

import numpy as np

import collc
from conftest import TWO_REDUCES, UNFUSED

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
plan = collc.compile(TWO_REDUCES, world=world, passes=UNFUSED)
with collc.Executor(plan, rank, backend="gloo", rendezvous=os.environ["COLLC_RENDEZVOUS"],
                    timeout_ms=30000) as x:
    a = np.arange(4, dtype=np.float32) + 10 * rank
    b = np.full((2, 3), rank + 1, np.float32)
    r = np.zeros(4, np.float32)
    s = np.zeros((2, 3), np.float32)
    for name, arr in (("a", a), ("b", b), ("r", r), ("s", s)):
        x.bind(name, arr)
    x.capture()
    x.replay()
    x.synchronize(1.0)
ranks = range(world)
np.testing.assert_array_equal(r, sum(np.arange(4, dtype=np.float32) + 10 * q for q in ranks))
np.testing.assert_array_equal(s, np.full((2, 3), sum(q + 1 for q in ranks), np.float32))
print(f"rank {rank} of {world}: gloo all_reduce sums ok")
