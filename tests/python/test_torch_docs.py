"""docs/torch.md shows examples/python/torch_trace.py as it is, the example
runs, and the command line writes a program collc accepts, or refuses with
the documented exit status."""

import os
import pathlib
import re
import subprocess
import sys

import pytest

pytest.importorskip("torch")

ROOT = pathlib.Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "python" / "torch_trace.py"


STRATEGY_EXAMPLES = [ROOT / "examples" / "python" / n for n in
                     ("torch_trace.py", "torch_fsdp.py", "torch_tp_pp.py")]


def test_the_doc_shows_the_examples_verbatim():
    blocks = re.findall(r"^```python\n(.*?)^```$", (ROOT / "docs" / "torch.md").read_text(),
                        re.S | re.M)
    assert len(blocks) == len(STRATEGY_EXAMPLES)
    for block, path in zip(blocks, STRATEGY_EXAMPLES):
        assert block == path.read_text(), f"docs/torch.md's python block differs from {path.name}"


def run_example(path):
    run = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                         timeout=120, env=dict(os.environ))
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


def test_the_fsdp_example_runs():
    out = run_example(STRATEGY_EXAMPLES[1])
    # 33 units: gathered before forward, again before backward (not the root).
    assert "all_gathers: 65\nreduce_scatters: 33\n" in out
    # A decoder layer: 202,383,360 bf16 elements over 64 ranks.
    assert "each decoder layer's bf16[3162240]" in out
    assert re.search(r"simulated step: [0-9.]+ ms, exposed comm [0-9.]+ ms", out)


def test_the_tp_pp_example_runs():
    out = run_example(STRATEGY_EXAMPLES[2])
    assert "stage 0: F0 F1 B0 F2 B1 F3 B2 B3\nstage 1: F0 B0 F1 B1 F2 B2 F3 B3\n" in out
    assert "tensor-parallel all_reduces: 64\nsends: 8\n" in out


def test_the_example_runs():
    run = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True,
                         timeout=120, env=dict(os.environ))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "= all_reduce avg %g.embed.weight in @dp" in run.stdout
    assert "bucket 0: 1049600 bytes: g.fc2.bias, g.fc2.weight" in run.stdout


def cli(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "collc.torch", *args], capture_output=True,
                          text=True, timeout=120, env=dict(os.environ), cwd=cwd)


def test_the_command_line_writes_a_program(tmp_path):
    (tmp_path / "tiny.py").write_text(
        "import torch\n"
        "def make():\n"
        "    torch.manual_seed(0)\n"
        "    return torch.nn.Sequential(torch.nn.Linear(4, 3)), (torch.randn(2, 4),)\n")
    out = tmp_path / "tiny.coll"
    run = cli("tiny:make", "--strategy", "ddp", "--world", "2", "-o", str(out), cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    text = out.read_text()
    assert "program @ddp world(2) {" in text
    assert re.findall(r"all_reduce avg %(\S+)", text) == ["g.0.bias", "g.0.weight"]
    import collc
    collc.compile(text)


def test_the_command_line_writes_fsdp_and_tp_pp(tmp_path):
    import collc
    gpt = "collc.torch.models.gpt2:gpt2_124m_meta"
    fsdp = cli(gpt, "--strategy", "fsdp", "--wrap", "Block", "--world", "64", "-o", "-")
    assert fsdp.returncode == 0, fsdp.stderr
    assert "program @fsdp world(64) {" in fsdp.stdout
    assert fsdp.stdout.count("= reduce_scatter avg") == 13  # 12 blocks and the root
    collc.compile(fsdp.stdout)
    tppp = cli(gpt, "--strategy", "tp-pp", "--tp", "2", "--pp", "4", "--microbatches", "4",
               "--schedule", "1f1b", "--program", "gpt2_tp2_pp4")
    assert tppp.returncode == 0, tppp.stderr
    assert "program @gpt2_tp2_pp4 world(8) {" in tppp.stdout
    collc.compile(tppp.stdout)


def test_the_command_line_refuses_with_the_documented_status():
    gpt = "collc.torch.models.gpt2:gpt2_124m_meta"
    run = cli(gpt, "--strategy", "fsdp")
    assert run.returncode == 1
    assert "fsdp needs at least one module class or name to wrap (--wrap)" in run.stderr
    run = cli(gpt, "--strategy", "fsdp", "--wrap", "NoSuchLayer")
    assert run.returncode == 1 and "wrap names ['NoSuchLayer'] match no module" in run.stderr
    run = cli(gpt, "--strategy", "tp-pp", "--tp", "2", "--pp", "3", "--world", "8")
    assert run.returncode == 1 and "world 8 is not a positive multiple of tp x pp = 6" in run.stderr
    run = cli("collc.torch.models.gpt2:nothing", "--strategy", "ddp")
    assert run.returncode == 2 and "has no function 'nothing'" in run.stderr
    run = cli(gpt, "--strategy", "zero3")
    assert run.returncode == 2
