"""One rank of an mpi run whose other rank stops (test_mpi.py), started by
`mpirun -np 2`: rank 1 stops itself (SIGSTOP) once both captured, and
nobody continues it. Rank 0's replay fails at its 2 s timeout, naming rank
1; rank 0 says so and exits with status 3, its executor left to the
interpreter's exit. libcollc's teardown at exit must not wait for the
stopped rank (MPI's teardown is collective: it waited for as long as the
rank stayed stopped, then crashed when it came back), so that mpirun, seeing
rank 0 end, ends the job."""

import os
import signal
import sys

import numpy as np

import collc
from conftest import TWO_REDUCES, UNFUSED

rank = int(os.environ["OMPI_COMM_WORLD_RANK"])
world = int(os.environ["OMPI_COMM_WORLD_SIZE"])
plan = collc.compile(TWO_REDUCES, world=world, passes=UNFUSED)
x = collc.Executor(plan, rank, backend="mpi", timeout_ms=2000)
arrays = {"a": np.ones(4, np.float32), "b": np.ones((2, 3), np.float32),
          "r": np.zeros(4, np.float32), "s": np.zeros((2, 3), np.float32)}
for name, arr in arrays.items():
    x.bind(name, arr)
x.capture()
if rank == 1:
    os.kill(os.getpid(), signal.SIGSTOP)
try:
    x.replay()
    x.synchronize(10.0)
except collc.Error as e:
    print(f"rank {rank}: replay failed: {e}", flush=True)
    sys.exit(3)
print(f"rank {rank}: the replay did not fail", flush=True)
sys.exit(1)
