"""collc.torch's FSDP and tensor/pipeline-parallel tracing, on models built
on the meta device: the collectives come in the order FSDP and Megatron run
them, and collc compiles every program (compile runs check-cross-rank, which
runs all ranks' communication together and refuses a deadlock)."""

import re

import pytest

torch = pytest.importorskip("torch")

import collc  # noqa: E402
from collc.torch import TraceError, trace_fsdp, trace_tp_pp  # noqa: E402
from collc.torch._tppp import schedule_of  # noqa: E402
from collc.torch.models.gpt2 import GPT2_124M, on_meta  # noqa: E402
from collc.torch.models.llama import llama2_7b_meta  # noqa: E402

SMALL = dict(n_layer=4, n_head=4, n_embd=64, vocab_size=128, n_ctx=32)


def ops(ir, kind):
    return re.findall(rf"= {kind} (?:avg )?(%\S+) in @", ir)


def test_fsdp_gathers_before_forward_and_backward_and_reduce_scatters_in_fsdp_order():
    ir = trace_fsdp(*on_meta(GPT2_124M, 8, 1024), ["Block"], world=8)
    blocks = [f"transformer.h.{k}" for k in range(12)]
    # Forward: the root's shard first, then each block's; backward: the blocks
    # again in reverse (the root's stays gathered).
    assert ops(ir, "all_gather") == ["%s.root"] + [f"%s.{b}" for b in blocks] + \
        [f"%s.{b}" for b in reversed(blocks)]
    # Each unit's gradient once its backward is done; the root's last (the
    # embedding, used first in forward).
    assert ops(ir, "reduce_scatter") == [f"%g.{b}" for b in reversed(blocks)] + ["%g.root"]
    # A block's flat parameter: 7,087,872 elements, divisible by 8; the root's
    # (wte, wpe, ln_f; the tied lm_head once) 39,385,344 padded to 8.
    assert re.search(r"%b\.transformer\.h\.0, %g\.transformer\.h\.0 = compute "
                     r"@bwd\.transformer\.h\.0\(.*\) cost\(\d+ns\) : f32, f32\[7087872\]", ir)
    assert "f32[39385344]" in ir and "f32[4923168]" in ir  # the root's gradient and shard
    assert trace_fsdp(*on_meta(GPT2_124M, 8, 1024), ["Block"], world=8) == ir  # byte-stable
    collc.compile(ir)


def test_fsdp_llama_7b_at_512_ranks_without_memory():
    model, inputs = llama2_7b_meta()
    ir = trace_fsdp(model, inputs, ["LlamaDecoderLayer"], world=512)
    assert len(ops(ir, "reduce_scatter")) == 33
    # A decoder layer: 4 x 4096^2 + 3 x 4096 x 11008 + 2 x 4096 = 202,383,360,
    # padded to 512 ranks: 202,383,360 is 395,280 x 512.
    assert "bf16[202383360]" in ir and "bf16[395280]" in ir
    collc.compile(ir)  # 512 ranks: cross-rank checked rank by rank


def test_fsdp_wrap_by_module_name_and_nested_units():
    model, inputs = on_meta(SMALL, 2, 16)
    ir = trace_fsdp(model, inputs, ["transformer.h.1", "MLP"], world=4)
    units = ops(ir, "reduce_scatter")
    assert units == ["%g.transformer.h.3.mlp", "%g.transformer.h.2.mlp", "%g.transformer.h.1.mlp",
                     "%g.transformer.h.1", "%g.transformer.h.0.mlp", "%g.root"]
    collc.compile(ir)
    with pytest.raises(TraceError, match=r"wrap names \['Nope'\] match no module"):
        trace_fsdp(model, inputs, ["Nope"])


def stage_actions(ir, stage):
    """A stage's (F|B, micro-batch) sequence, from the section comments."""
    return [("F" if d == "forward" else "B", int(m)) for m, s, d in
            re.findall(r"// micro-batch (\d+), stage (\d+), (forward|backward)", ir)
            if int(s) == stage]


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
def test_tp_pp_runs_each_stage_on_its_schedule_and_compiles(schedule):
    model, inputs = on_meta(SMALL, 1, 16, dtype=torch.bfloat16)
    ir = trace_tp_pp(model, inputs, tp=2, pp=4, microbatches=6, schedule=schedule, world=8)
    for s in range(4):
        assert stage_actions(ir, s) == schedule_of(schedule, s, 4, 6)
    # Megatron: per layer, the attention and MLP blocks all-reduce forward and backward.
    assert len(ops(ir, "all_reduce sum")) == 4 * 2 * 2 * 6 + 1  # and the tied embedding
    assert ir.count("send ") == ir.count(" = recv from") == 2 * 3 * 6
    assert "group @embed = split((rank / 2 == 0 || rank / 2 == 3) * (rank % 2 + 1) - 1, rank)" in ir
    collc.compile(ir)


def test_1f1b_is_one_forward_one_backward_after_the_warm_up():
    assert schedule_of("1f1b", 0, 4, 6) == [("F", 0), ("F", 1), ("F", 2), ("F", 3), ("B", 0),
                                            ("F", 4), ("B", 1), ("F", 5), ("B", 2), ("B", 3),
                                            ("B", 4), ("B", 5)]
    assert schedule_of("1f1b", 3, 4, 2) == [("F", 0), ("B", 0), ("F", 1), ("B", 1)]


def test_tp_pp_with_data_parallel_and_boundaries():
    model, inputs = on_meta(SMALL, 1, 16)
    ir = trace_tp_pp(model, inputs, tp=2, pp=2, microbatches=2, world=8, boundaries=[1])
    header = " ".join(line[3:] for line in ir.splitlines() if line.startswith("// "))
    assert "stages hold layers 0-0, 1-3 of transformer.h" in header
    assert "group @dp = split(rank / 4 * 2 + rank % 2, rank)" in ir
    assert ops(ir, "all_reduce avg") == ["%g.l0", "%g.l1", "%g.l2", "%g.l3"]
    collc.compile(ir)
    with pytest.raises(TraceError, match=r"boundaries \[3, 1\] must be 2 increasing layer"):
        trace_tp_pp(model, inputs, tp=1, pp=3, boundaries=[3, 1])


def test_fsdp_and_tp_pp_take_flop_costs_on_a_real_model_too():
    torch.manual_seed(0)
    model = on_meta(SMALL, 1, 16)[0].__class__(**SMALL)  # on CPU, with storage
    inputs = (torch.randint(0, SMALL["vocab_size"], (1, 16)),)
    assert "Costs: a FLOP estimate" in " ".join(trace_fsdp(model, inputs, ["Block"]).split())
    assert "Costs: a FLOP estimate" in " ".join(trace_tp_pp(model, inputs, pp=2).split())
    with pytest.raises(TraceError, match=r"fsdp traces costs from the FLOP estimate only"):
        trace_fsdp(model, inputs, ["Block"], cost="measured")
