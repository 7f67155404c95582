"""The optimizer step a trace writes has a cost (issue 35): the bytes Adam
or SGD with momentum moves for the parameters a rank updates, over the
device class's memory bandwidth, and the header says so."""

import os
import re
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

from collc.torch import MIXTRAL_8X7B, trace_ddp, trace_fsdp, trace_moe  # noqa: E402
from collc.torch._costs import Costs, optimizer_bytes  # noqa: E402
from collc.torch.models.gpt2 import on_meta  # noqa: E402

# A small GPT on the meta device: the pricing does not depend on the size,
# and a small trace keeps the test quick on a loaded machine.
SMALL = dict(n_layer=2, n_head=4, n_embd=64, vocab_size=128, n_ctx=32)


def optimizer_ns(ir):
    found = re.findall(r"compute @optimizer\(.*\) cost\((\d+)ns\)", ir)
    assert len(found) == 1, "one optimizer step, with a cost"
    return int(found[0])


def header(ir):
    return " ".join(l[3:] for l in ir.splitlines() if l.startswith("// "))


def test_the_bytes_of_one_step_per_parameter():
    # Adam: the gradient read; parameter, exp_avg, exp_avg_sq read and written.
    assert optimizer_bytes("adam", [(10, 4, 4)]) == 10 * (4 + 6 * 4)
    # SGD with momentum: the gradient read; parameter and buffer read and written.
    assert optimizer_bytes("sgd-momentum", [(10, 4, 4)]) == 10 * (4 + 4 * 4)
    # bf16 parameters (and states) with f32 gradients, and two tensors.
    assert optimizer_bytes("adam", [(10, 2, 4), (3, 4, 4)]) == 10 * (4 + 12) + 3 * 28
    with pytest.raises(ValueError, match=r"optimizer 'lamb' is not known; expected one of "
                                         r"adam, sgd-momentum"):
        optimizer_bytes("lamb", [(1, 4, 4)])


def test_the_cost_is_the_bytes_over_the_memory_bandwidth():
    # 3.35 TB/s is 3350 bytes a nanosecond: 3350 x 28 bytes of f32 Adam, 28 ns.
    cost, words = Costs("flops", "h100").optimizer("adam", [(3350, 4, 4)])
    assert cost == "28ns"
    assert "93800 for the parameters this rank updates" in words
    assert "h100's nominal memory bandwidth (3.35 TB/s)" in words
    assert Costs("flops", "a100").optimizer("sgd-momentum", [(2039, 4, 4)])[0] == "20ns"


def test_ddp_prices_adam_over_every_parameter():
    model, inputs = on_meta(SMALL, 2, 32)
    ir = trace_ddp(model, inputs)
    params = sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())
    assert optimizer_ns(ir) == round(params * 28 / 3350)
    assert (f"The optimizer (Adam: per parameter it reads the gradient, and reads and writes "
            f"the parameter and 2 state tensors of its dtype) costs its bytes, {params * 28} "
            f"for the parameters this rank updates, over h100's nominal memory bandwidth "
            f"(3.35 TB/s).") in header(ir)
    sgd = trace_ddp(model, inputs, optimizer="sgd-momentum")
    assert optimizer_ns(sgd) == round(params * 20 / 3350)
    assert "SGD with momentum" in header(sgd) and "1 state tensor of its dtype" in header(sgd)


def test_fsdp_prices_the_shards_of_this_rank():
    model, inputs = on_meta(SMALL, 2, 32)
    params = sum(p.numel() for p in {id(p): p for p in model.parameters()}.values())
    for world in (8, 64):
        ir = trace_fsdp(model, inputs, ["Block"], world=world)
        (nbytes,) = [int(b) for b in re.findall(r"costs its bytes, (\d+) for", header(ir))]
        # A shard is 1/world of a unit, padded to a multiple of the world:
        # 3 units here (2 blocks and the root), each at most world - 1 more.
        assert params * 28 <= nbytes * world <= (params + 3 * (world - 1)) * 28
        assert optimizer_ns(ir) == round(nbytes / 3350)


def test_moe_prices_the_dense_parameters_and_this_ranks_experts():
    ir = trace_moe(MIXTRAL_8X7B, world=8)
    # bf16 parameters and states (2 bytes, 6 accesses), f32 gradients.
    sizes = [int(s) for s in re.findall(r"costs its bytes, (\d+) for", header(ir))]
    assert len(sizes) == 1 and optimizer_ns(ir) == round(sizes[0] / 3350)
    assert sizes[0] % (4 + 6 * 2) == 0


def test_an_unknown_optimizer_is_refused():
    with pytest.raises(ValueError, match=r"optimizer 'adagrad' is not known"):
        trace_ddp(*on_meta(SMALL, 1, 16), optimizer="adagrad")



def test_the_command_line_takes_the_optimizer(tmp_path):
    (tmp_path / "tiny.py").write_text(
        "import torch\n"
        "def make():\n"
        "    torch.manual_seed(0)\n"
        "    return torch.nn.Sequential(torch.nn.Linear(4, 3)), (torch.randn(2, 4),)\n")
    costs = {}
    for optimizer in ("adam", "sgd-momentum"):
        out = tmp_path / f"{optimizer}.coll"
        run = subprocess.run([sys.executable, "-m", "collc.torch", "tiny:make", "--world", "2",
                              "--device-class", "h100", "--optimizer", optimizer, "-o",
                              str(out)], capture_output=True, text=True, timeout=120,
                             env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)),
                             cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        costs[optimizer] = header(out.read_text())
    # 15 f32 parameters: Adam 15 x 28 bytes, SGD with momentum 15 x 20.
    assert "costs its bytes, 420 for" in costs["adam"]
    assert "costs its bytes, 300 for" in costs["sgd-momentum"]
