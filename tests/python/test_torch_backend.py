"""torch.distributed's backend "collc" (collc.torch._c10d, docs/torch.md,
"The torch.distributed backend") in processes of its own (c10d_rank.py):
with torchrun's environment, every operation against values computed in
the rank, the refusals, a rank that never joins an all_reduce (rank 0
raises within the process group's 3 s timeout, naming it), a rank that
dies (named); under mpirun, where import collc.torch places the ranks and
the world's group runs on collc's mpi transport, every operation again;
torch's own DDP over init_process_group("collc") against torch DDP on gloo
(ddp_parity_rank.py --wrapper torch-on-collc: bit for bit on 2 processes,
within 1e-6 on 4); and the all_reduce bench through torch's API on a few
sizes (examples/torch_allreduce_bench.py)."""

import json
import os
import pathlib
import re
import shlex
import signal
import subprocess
import sys

import pytest

pytest.importorskip("torch")

from conftest import gloo_built  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SPAWN = HERE.parent / "launch" / "spawn_ranks.py"


def backend_built():
    import collc.torch._backend as b
    return b._c10d is not None


pytestmark = [
    pytest.mark.skipif(not gloo_built(), reason="this build of libcollc.so has no gloo backend"),
    pytest.mark.skipif(not backend_built(), reason="collc was built without its torch backend "
                       "(libtorch-dev and pybind11-dev)"),
]


def env():
    e = dict(os.environ)
    e["PYTHONPATH"] = os.pathsep.join([str(HERE), e.get("PYTHONPATH", "")])
    return e


def spawn(n, *args, expect="zero", timeout=240):
    run = subprocess.run([sys.executable, str(SPAWN), "-n", str(n), "--rendezvous", "torch",
                          "--timeout", str(timeout), "--expect-exit", expect, "--",
                          sys.executable, *map(str, args)],
                         env=env(), capture_output=True, text=True, timeout=timeout + 60)
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


# A dead peer is named by the transport that lost it: TCP ("lost rank 1")
# or shared memory ("rank 1 of group '...' is gone: its process ... exited").
LOST_RANK_1 = re.compile(r"lost rank 1|rank 1 of group '[^']*' is gone")


@pytest.mark.parametrize("case,says", [
    ("ops", ["[rank 0] CASE-OK: every operation gave the values computed here",
             "[rank 1] CASE-OK", "CASE-TRANSPORT gloo\n"]),
    ("refusals", ["reduce is not supported", "all_reduce with op BAND is not supported",
                  "all_reduce: a tensor of Short",
                  "all_to_all: input split size 4611686018427387904", "send: tag 3", "[rank 1] CASE-OK"]),
    ("dies", ["[rank 0] CASE-ERROR: collc backend (rank 0): all_reduce failed", LOST_RANK_1]),
])
def test_case(case, says):
    out = spawn(2, HERE / "c10d_rank.py", "--case", case,
                expect="any" if case == "dies" else "zero", timeout=120)
    for words in says:
        assert (words.search(out) if isinstance(words, re.Pattern) else words in out), out


def test_a_peer_that_never_comes_fails_the_work_within_the_timeout():
    out = spawn(2, HERE / "c10d_rank.py", "--case", "timeout", expect="any", timeout=120)
    assert "[rank 0] CASE-ERROR: collc backend (rank 0): all_reduce failed: collcTimeout" in out
    assert "rank 1 did not answer within 3000 ms" in out, out
    seconds = float(re.search(r"CASE-SECONDS ([\d.]+)", out).group(1))
    assert 2.5 <= seconds < 30, out


@pytest.mark.skipif(not os.environ.get("COLLC_MPIRUN"),
                    reason="COLLC_MPIRUN is not set (the ctest sets it when collc has mpi)")
def test_under_mpirun_the_worlds_group_runs_on_mpi():
    mpirun = shlex.split(os.environ["COLLC_MPIRUN"])
    # A session of its own: past the deadline mpirun and its ranks are
    # killed together, none left behind.
    with subprocess.Popen(mpirun + ["-np", "2", sys.executable, str(HERE / "c10d_rank.py"),
                                    "--case", "ops"],
                          env=env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, stdin=subprocess.DEVNULL, start_new_session=True) as run:
        try:
            out, _ = run.communicate(timeout=300)
        except subprocess.TimeoutExpired:
            os.killpg(run.pid, signal.SIGKILL)
            out, _ = run.communicate()
            pytest.fail("mpirun did not end within 300 s:\n" + out)
    assert run.returncode == 0, out
    assert out.count("CASE-OK: every operation gave the values computed here") == 2, out
    assert "CASE-TRANSPORT mpi\n" in out, out


@pytest.mark.parametrize("n,bound", [(2, 0.0), (4, 1e-6)])
def test_torch_ddp_over_collc_trains_as_over_gloo(n, bound):
    out = spawn(n, HERE / "ddp_parity_rank.py", "--wrapper", "torch-on-collc")
    reports = [json.loads(line.split("REPORT ", 1)[1]) for line in out.splitlines()
               if "REPORT " in line]
    assert len(reports) == n, out
    for report in reports:
        assert len(report) == 8, report
        for case, r in report.items():
            assert r["loss"] <= bound and r["state"] <= bound, (case, r)
            assert bound or r["equal"], (case, r)


def test_the_allreduce_bench_prints_both_backends():
    run = subprocess.run([sys.executable, str(ROOT / "examples" / "torch_allreduce_bench.py"),
                          "--max-bytes", "2KiB", "--budget-bytes", "16KiB"],
                         env=env(), capture_output=True, text=True, timeout=240)
    assert run.returncode == 0, run.stdout + run.stderr
    rows = re.findall(r"^ +(\d+ (?:B|KiB)) +(\d+) +([\d.]+) +([\d.]+) +([\d.]+)$", run.stdout,
                      re.M)
    assert [r[0] for r in rows] == ["8 B", "32 B", "128 B", "512 B", "2 KiB"], run.stdout
    assert "gloo us    collc us  collc/gloo" in run.stdout
