"""The gloo backend with 2 processes started as a launcher would
(tests/launch/spawn_ranks.py, file rendezvous), each checking its rank's
sums (gloo_rank.py)."""

import os
import pathlib
import subprocess
import sys

import pytest

from conftest import gloo_built

HERE = pathlib.Path(__file__).resolve().parent
SPAWN = HERE.parent / "launch" / "spawn_ranks.py"


@pytest.mark.skipif(not gloo_built(), reason="this build of libcollc.so has no gloo backend")
def test_two_gloo_processes_all_reduce_numpy_arrays():
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
    run = subprocess.run([sys.executable, str(SPAWN), "-n", "2", "--rendezvous", "file",
                          "--timeout", "60", "--", sys.executable, str(HERE / "gloo_rank.py")],
                         env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    for rank in (0, 1):
        assert f"[rank {rank}] rank {rank} of 2: gloo all_reduce sums ok" in run.stdout
