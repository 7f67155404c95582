"""What the package hands to C: a str with a NUL inside, or an int its C
type cannot hold, is a ValueError (as open() raises for a NUL), never text
cut at the NUL or an integer wrapped (2**64 + 1 ran as rank 1)."""

import numpy as np
import pytest

import collc
from conftest import TWO_REDUCES, UNFUSED

NUL = r"has a NUL character at index \d+: expected text without NUL"


def test_a_nul_in_program_or_plan_text_is_refused_not_cut():
    with pytest.raises(ValueError, match="text " + NUL):
        collc.compile(TWO_REDUCES + "\0junk")
    plan = collc.compile(TWO_REDUCES, passes=UNFUSED)
    with pytest.raises(ValueError, match="path_or_text " + NUL):
        collc.load(plan.text() + "\0junk")
    with pytest.raises(ValueError, match="passes " + NUL):
        collc.compile(TWO_REDUCES, passes=UNFUSED + "\0,bucket")
    with pytest.raises(ValueError, match="bucket " + NUL):
        collc.compile(TWO_REDUCES, bucket="ddp\0")
    with pytest.raises(ValueError, match="source_name " + NUL):
        collc.compile(TWO_REDUCES, source_name="a\0b.coll")


def test_a_nul_in_a_path_is_refused_and_nothing_is_written(tmp_path, monkeypatch):
    plan = collc.compile(TWO_REDUCES, passes=UNFUSED)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match="path " + NUL):
        plan.save("a\0b.plan")
    with pytest.raises(ValueError, match="path_or_text " + NUL):
        collc.load(tmp_path / "a\0b.plan")
    assert list(tmp_path.iterdir()) == []


def test_a_nul_in_a_name_is_refused():
    plan = collc.compile(TWO_REDUCES, passes=UNFUSED)
    with pytest.raises(ValueError, match="name " + NUL):
        plan.tensor_type("a\0junk")
    with pytest.raises(ValueError, match="link " + NUL):
        plan.simulate("h100-nvlink\0junk")
    with pytest.raises(ValueError, match="focus_steps " + NUL):
        plan.dump(focus_steps="0\0")
    with pytest.raises(ValueError, match="rendezvous " + NUL):
        collc.Executor(plan, 0, rendezvous="py-nul\0other")
    with pytest.raises(ValueError, match="backend " + NUL):
        collc.Executor(plan, 0, backend="local\0junk")
    with collc.Executor(plan, 0, rendezvous="py-nul") as x:
        with pytest.raises(ValueError, match="name " + NUL):
            x.bind("a\0junk", np.zeros(4, np.float32))
        with pytest.raises(ValueError, match="name " + NUL):
            x.address("r\0")
        with pytest.raises(ValueError, match="name " + NUL):
            x.bind_device("a\0", 4096, 16)


def test_an_int_its_c_type_cannot_hold_is_refused_not_wrapped():
    plan = collc.compile(TWO_REDUCES, passes=UNFUSED)
    int64 = r"expected -9223372036854775808..9223372036854775807"
    with pytest.raises(ValueError, match=r"rank is 18446744073709551617: " + int64):
        collc.Executor(plan, 2**64 + 1)
    with pytest.raises(ValueError, match=r"rank is -9223372036854775809: " + int64):
        collc.Executor(plan, -2**63 - 1)
    with pytest.raises(ValueError, match=r"timeout_ms is 18446744073709551621: " + int64):
        collc.Executor(plan, 0, timeout_ms=2**64 + 5)
    with pytest.raises(ValueError, match=r"device is 18446744073709551615: " + int64):
        collc.Executor(plan, 0, device=2**64 - 1)
    with pytest.raises(ValueError, match=r"world is 18446744073709551618: " + int64):
        collc.compile(TWO_REDUCES, world=2**64 + 2)
    with pytest.raises(ValueError, match=r"align is 18446744073709551872: expected "
                                         r"0..18446744073709551615"):
        collc.compile(TWO_REDUCES, align=2**64 + 256)
    with pytest.raises(ValueError, match=r"memory_budget is 18446744073709551616: expected "
                                         r"0..18446744073709551615"):
        collc.compile(TWO_REDUCES, memory_budget=2**64)
    with pytest.raises(ValueError, match=r"rank is 18446744073709551617: " + int64):
        plan.dump("nccl", rank=2**64 + 1)
    with pytest.raises(ValueError, match=r"focus_rank is"):
        plan.dump(focus_rank=2**63)
    with pytest.raises(TypeError, match="rank is float: expected an int"):
        collc.Executor(plan, 1.0)
    # In range, the C API checks the value itself.
    with pytest.raises(collc.Error, match="collcExecutorCreate: rank is 2: expected 0..1"):
        collc.Executor(plan, 2)
    with collc.Executor(plan, 0, rendezvous="py-ints") as x:
        with pytest.raises(ValueError, match=r"timeout \(in ms\) is 1000000000000000019884624838656"):
            x.synchronize(1e27)
        with pytest.raises(ValueError, match=r"pointer is 18446744073709551617: expected "
                                             r"0..18446744073709551615"):
            x.bind_device("a", 2**64 + 1, 16)
        with pytest.raises(ValueError, match=r"nbytes is -1: expected 0..18446744073709551615"):
            x.bind_device("a", 4096, -1)
        with pytest.raises(ValueError, match=r"stream is -1: expected 0..18446744073709551615"):
            x.set_stream(-1)
