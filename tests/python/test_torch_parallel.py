"""collc.torch.DistributedDataParallel against torch's
DistributedDataParallel on gloo (docs/torch.md, "DistributedDataParallel"),
each run in processes of its own with torchrun's environment
(tests/launch/spawn_ranks.py --rendezvous torch):

- parity: four model kinds (a GPT with a tied embedding, a CNN with
  BatchNorm buffers, a two-layer LSTM, an MLP with a frozen layer), each
  plainly and with no_sync over 4 micro-batches, 20 steps: losses and final
  parameters and buffers equal bit for bit on 2 processes, within 1e-6
  (relative to each tensor's largest magnitude) on 4 (ddp_parity_rank.py);
- a checkpoint of torch DDP loads into collc's wrapper and back with equal
  losses; two wrappers alive in one process; and the bad inputs, each an
  error naming what is wrong (ddp_case_rank.py)."""

import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

pytest.importorskip("torch")

from conftest import gloo_built  # noqa: E402

HERE = pathlib.Path(__file__).resolve().parent
SPAWN = HERE.parent / "launch" / "spawn_ranks.py"

pytestmark = pytest.mark.skipif(not gloo_built(),
                                reason="this build of libcollc.so has no gloo backend")


def spawn(n, script, *args, expect="zero", timeout=240):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
    run = subprocess.run([sys.executable, str(SPAWN), "-n", str(n), "--rendezvous", "torch",
                          "--timeout", str(timeout), "--expect-exit", expect, "--",
                          sys.executable, str(HERE / script), *args],
                         env=env, capture_output=True, text=True, timeout=timeout + 60)
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def reports(out, n):
    got = [json.loads(line.split("REPORT ", 1)[1]) for line in out.splitlines()
           if "REPORT " in line]
    assert len(got) == n, out
    return got


def test_two_processes_train_bit_for_bit_as_torch_ddp():
    for report in reports(spawn(2, "ddp_parity_rank.py"), 2):
        assert len(report) == 8, report
        for case, r in report.items():
            assert r["equal"] and r["state"] == 0.0, (case, r)


def test_four_processes_train_within_1e_6_of_torch_ddp():
    for report in reports(spawn(4, "ddp_parity_rank.py"), 4):
        assert len(report) == 8, report
        for case, r in report.items():
            assert r["loss"] <= 1e-6 and r["state"] <= 1e-6, (case, r)


# A dead peer is named by the transport that lost it: TCP ("lost rank 1")
# or shared memory ("rank 1 of group '...' is gone: its process ... exited").
LOST_RANK_1 = re.compile(r"lost rank 1|rank 1 of group '[^']*' is gone")


@pytest.mark.parametrize("case,n,says", [
    ("checkpoint", 2, ["CASE-OK: the losses are equal through torch DDP -> collc -> torch DDP"]),
    ("two-models", 2, ["CASE-OK: two wrappers in one process train as two torch DDPs"]),
    ("other-model", 2, ["[rank 0] CASE-ERROR", "rank(s) 1 hold a model other than rank 0's"]),
    ("other-world", 2, ["[rank 0] CASE-ERROR", "[rank 1] CASE-ERROR",
                        "its ranks were started with different sizes"]),
    ("dies", 2, ["[rank 0] CASE-ERROR", LOST_RANK_1]),
    ("refusals", 1, ["CASE-OK: refused, each naming what is wrong"]),
])
def test_case(case, n, says):
    out = spawn(n, "ddp_case_rank.py", "--case", case, expect="any" if case == "dies" else "zero",
                timeout=120)
    for words in says:
        assert (words.search(out) if isinstance(words, re.Pattern) else words in out), out
