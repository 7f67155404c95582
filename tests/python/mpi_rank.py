"""One rank of an mpi run, started by `mpirun -np 2` (test_mpi.py): the
package starts MPI at the first mpi executor, all_reduces its rank's numpy
arrays, checks the sums of every rank's and ends MPI with collc.finalize()."""

import os

import numpy as np

import collc
from conftest import TWO_REDUCES, UNFUSED

# Open MPI's variables (MPICH's hydra: PMI_RANK, PMI_SIZE).
rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", "-1")))
world = int(os.environ.get("OMPI_COMM_WORLD_SIZE", os.environ.get("PMI_SIZE", "0")))
plan = collc.compile(TWO_REDUCES, world=world, passes=UNFUSED)
a = np.arange(4, dtype=np.float32) + 10 * rank
b = np.full((2, 3), rank + 1, np.float32)
r = np.zeros(4, np.float32)
s = np.zeros((2, 3), np.float32)
with collc.Executor(plan, rank, backend="mpi", timeout_ms=30000) as x:
    assert x.rank == rank, (x.rank, rank)
    for name, arr in (("a", a), ("b", b), ("r", r), ("s", s)):
        x.bind(name, arr)
    x.capture()
    for _ in range(2):
        r[:] = 0
        x.replay()
        x.synchronize(1.0)
        ranks = range(world)
        np.testing.assert_array_equal(r, sum(np.arange(4, dtype=np.float32) + 10 * q
                                             for q in ranks))
        np.testing.assert_array_equal(s, np.full((2, 3), sum(q + 1 for q in ranks), np.float32))
    try:
        collc.finalize()
        raise AssertionError("collc.finalize() with an open executor was not refused")
    except collc.Error as e:
        assert e.name == "collcInvalidUsage", e
collc.finalize()
print(f"rank {rank} of {world}: mpi all_reduce sums ok")
