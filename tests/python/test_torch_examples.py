"""Every examples/*.coll, and every program of the plan-quality bench
(tests/bench/programs/*.coll), is what its committed generator
(collc.torch.examples) writes, byte for byte: the frontend on a model built
on the meta device from its published config, with FLOP-estimate costs."""

import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("torch")

from collc.torch.examples import BENCH_PROGRAMS, EXAMPLES  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_the_generator_covers_every_example():
    assert sorted(EXAMPLES) == sorted(p.stem for p in (ROOT / "examples").glob("*.coll"))


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_example_is_what_the_generator_writes(name):
    text = EXAMPLES[name]()
    committed = (ROOT / "examples" / f"{name}.coll").read_text()
    assert text == committed, (f"examples/{name}.coll differs from the generator: "
                               "python3 -m collc.torch.examples rewrites it")
    assert EXAMPLES[name]() == text  # byte-stable from run to run


def test_the_generator_covers_every_bench_program():
    assert sorted(BENCH_PROGRAMS) == sorted(
        p.stem for p in (ROOT / "tests" / "bench" / "programs").glob("*.coll"))


@pytest.mark.parametrize("name", sorted(BENCH_PROGRAMS))
def test_the_bench_program_is_what_the_generator_writes(name):
    committed = (ROOT / "tests" / "bench" / "programs" / f"{name}.coll").read_text()
    assert BENCH_PROGRAMS[name]() == committed, (
        f"tests/bench/programs/{name}.coll differs from the generator: "
        "python3 -m collc.torch.examples --bench rewrites it")


def test_check_mode_reports_a_difference(tmp_path):
    for name in EXAMPLES:
        (tmp_path / f"{name}.coll").write_text(EXAMPLES[name]())
    (tmp_path / "gpt2_ddp.coll").write_text("edited\n")
    run = subprocess.run([sys.executable, "-m", "collc.torch.examples", "--check",
                          "--dir", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 1
    assert "differ from the generator:" in run.stderr and "gpt2_ddp.coll" in run.stderr
    assert "llama2_7b_fsdp" not in run.stderr
