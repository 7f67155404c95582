"""examples/torch_ddp_train.py end to end, on a model small enough for a
loaded machine: collc.torch.DistributedDataParallel and torch DDP train to
the same losses (equal on 2 ranks; within the tolerance on 3), a
difference is caught, a failing rank stops the run, and the mpi backend
trains the same. The ctest python-torch-train (label
python) runs this file, with COLLC_MPIRUN when collc has the mpi backend."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

pytest.importorskip("torch")

from conftest import gloo_built  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "torch_ddp_train.py"
SMALL = ["--layers", "2", "--width", "64", "--heads", "2", "--seq", "32", "--vocab", "256",
         "--batch", "2", "--timeout", "120"]
ROW = re.compile(r"^ *(\d+) +([\d.]+) +([\d.]+) +(\S+) +([\d.]+) +([\d.]+)$", re.M)

needs_gloo = pytest.mark.skipif(not gloo_built(),
                                reason="this build of libcollc.so has no gloo backend")


def train(*args, env=None):
    return subprocess.run([sys.executable, str(EXAMPLE), *SMALL, *args], capture_output=True,
                          text=True, timeout=200, env=env or dict(os.environ))


def curves(out):
    """The printed (collc loss, DDP loss) of each step, in order."""
    rows = ROW.findall(out)
    assert [int(r[0]) for r in rows] == list(range(len(rows))), out
    return [(float(r[1]), float(r[2])) for r in rows]


@needs_gloo
def test_two_ranks_train_to_equal_losses():
    run = train("--steps", "6")
    assert run.returncode == 0, run.stdout + run.stderr
    losses = curves(run.stdout)
    assert len(losses) == 6
    # Both averages of two floats are exact: the curves are equal, bit for bit.
    assert all(c == d for c, d in losses), run.stdout
    assert losses[-1][0] < losses[0][0], "the loss did not go down"
    assert "max |loss difference|: 0.000e+00 (relative 0.000e+00); tolerance 1e-05 " \
           "relative: agree" in run.stdout
    assert "max |parameter difference| after 6 steps: 0.000e+00" in run.stdout
    assert re.search(r"^mean step time \(steps 1-5\): collc [\d.]+ ms, torch DDP [\d.]+ ms",
                     run.stdout, re.M), run.stdout
    assert "collc.torch.DistributedDataParallel on gloo, torch DDP on gloo" in run.stdout
    assert re.search(r"^collc's averaging after backward ended: [\d.]+ ms per step",
                     run.stdout, re.M), run.stdout


@needs_gloo
def test_three_ranks_agree_within_the_tolerance():
    run = train("--world", "3", "--steps", "4")
    assert run.returncode == 0, run.stdout + run.stderr
    assert len(curves(run.stdout)) == 4
    assert ": agree" in run.stdout


@needs_gloo
def test_a_difference_is_caught():
    run = train("--steps", "3", "--perturb", "1e-3")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "tolerance 1e-05 relative: DISAGREE" in run.stdout


@pytest.mark.skipif(not os.environ.get("COLLC_MPIRUN"),
                    reason="COLLC_MPIRUN is not set (the ctest sets it when collc has mpi)")
def test_the_mpi_backend_trains_the_same():
    run = train("--steps", "3", "--backend", "mpi")
    assert run.returncode == 0, run.stdout + run.stderr
    assert all(c == d for c, d in curves(run.stdout)), run.stdout
    assert "collc.torch.DistributedDataParallel on mpi, torch DDP on gloo" in run.stdout


@needs_gloo
def test_a_failing_rank_stops_the_run():
    # Rank 1 exits while rank 0 waits for it in a barrier: the launcher stops
    # rank 0 and says so, rather than waiting for the timeout.
    run = train("--steps", "2", "--fail-rank", "1")
    assert run.returncode == 2, run.stdout + run.stderr
    assert "rank 1: failing as --fail-rank asks" in run.stderr
    assert "torch_ddp_train: a rank failed (exit status 1); stopping the others" in run.stderr
    assert "timeout" not in run.stderr
