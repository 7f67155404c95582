"""The mpi backend from Python: `mpirun -np 2 python3 mpi_rank.py`, each
process creating collc.Executor(plan, rank, backend="mpi") over numpy arrays
and checking its rank's sums. Run by the ctest python-mpi (labels python
and mpi), which gives the mpirun command line in COLLC_MPIRUN (tests/
CMakeLists.txt); skipped, saying so, without it or without the backend."""

import os
import pathlib
import shlex
import signal
import subprocess
import sys
import time

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


def stall_rank(language):
    """The command of mpi_stall_rank in Python, or its C twin (the ctest
    python-mpi names its binary)."""
    if language == "python":
        return [sys.executable, str(HERE / "mpi_stall_rank.py")]
    binary = os.environ.get("COLLC_API_MPI_STALL_RANK")
    if not binary:
        pytest.skip("COLLC_API_MPI_STALL_RANK is not set (the ctest python-mpi sets it)")
    return [binary]


@pytest.mark.skipif(not MPIRUN, reason="COLLC_MPIRUN is not set (the ctest python-mpi sets it)")
@pytest.mark.skipif(not mpi_built(), reason="this build of libcollc.so has no mpi backend")
@pytest.mark.parametrize("language", ["python", "c"])
def test_a_rank_that_stops_does_not_hold_the_others_exit(language):
    """Rank 1 stops and is never continued; rank 0's replay fails, and it
    exits (libcollc's teardown at exit, or collcFinalize, after the error):
    that must not wait for rank 1, so that mpirun ends the job."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
    start = time.monotonic()
    job = subprocess.Popen(MPIRUN + ["-np", "2"] + stall_rank(language),
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           start_new_session=True)
    try:
        out, _ = job.communicate(timeout=90)
    except subprocess.TimeoutExpired:
        # Nothing may outlive the test: the stopped rank continued, mpirun
        # asked to end the job (it removes its shared memory), then killed.
        os.killpg(job.pid, signal.SIGCONT)
        job.terminate()
        try:
            out, _ = job.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(job.pid, signal.SIGKILL)
            out, _ = job.communicate()
        pytest.fail("the job did not end within 90 s of its start, rank 1 stopped:\n" + out)
    took = time.monotonic() - start
    assert "rank 0: replay failed:" in out, out
    assert "rank 1" in out.split("rank 0: replay failed:", 1)[1].splitlines()[0], out
    assert job.returncode != 0, out
    for crash in ("signal 11", "Segmentation fault", "PLEASE submit"):
        assert crash not in out, out
    # The timeout is 2 s; the rest is starting Python and MPI on a loaded host.
    assert took < 60, (took, out)
