"""The mpi backend from Python: `mpirun -np 2 python3 mpi_rank.py`, each
process creating collc.Executor(plan, rank, backend="mpi") over numpy arrays
and checking its rank's sums. Run by the ctest python-mpi (labels python
and mpi), which gives the mpirun command line in COLLC_MPIRUN (tests/
CMakeLists.txt); skipped, saying so, without it or without the backend."""

import os
import pathlib
import shlex
import subprocess
import sys

import pytest

import collc
from conftest import TWO_REDUCES

HERE = pathlib.Path(__file__).resolve().parent
MPIRUN = shlex.split(os.environ.get("COLLC_MPIRUN", ""))


def mpi_built():
    try:
        collc.Executor(collc.compile(TWO_REDUCES), 0, backend="mpi", rendezvous="not-mpi")
    except collc.UnsupportedError:
        return False
    except collc.Error:
        pass  # refused for the rendezvous, before MPI is started
    return True


@pytest.mark.skipif(not MPIRUN, reason="COLLC_MPIRUN is not set (the ctest python-mpi sets it)")
@pytest.mark.skipif(not mpi_built(), reason="this build of libcollc.so has no mpi backend")
def test_two_mpi_processes_all_reduce_numpy_arrays():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
    run = subprocess.run(MPIRUN + ["-np", "2", sys.executable, str(HERE / "mpi_rank.py")],
                         env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    for rank in (0, 1):
        assert f"rank {rank} of 2: mpi all_reduce sums ok" in run.stdout, run.stdout + run.stderr
