"""The generator of examples/*.coll and of the plan-quality bench's programs
(tests/bench/programs/*.coll): each program traced by collc.torch from a
model built on the meta device from its published config (random weights,
nothing downloaded, nothing allocated), with FLOP-estimate costs, so every
run writes the same bytes. tests/python/test_torch_examples.py keeps the
committed files equal to what this writes.

    python3 -m collc.torch.examples [--check] [--dir examples]
    python3 -m collc.torch.examples --bench [--check] [--dir tests/bench/programs]
"""

import argparse
import pathlib
import sys

import torch

from . import MIXTRAL_8X7B, trace_ddp, trace_fsdp, trace_moe, trace_tp_pp
from .models.gpt2 import GPT_1_3B, gpt2_124m_meta, gpt2_xl_meta, on_meta
from .models.llama import llama2_7b_meta


def gpt2_ddp():
    """GPT-2 124M, data parallel on 8 ranks, micro-batch 8 x 1024."""
    return trace_ddp(*gpt2_124m_meta(), world=8, program="gpt2_ddp",
                     title="GPT-2 124M (its published config, micro-batch 8 x 1024 tokens)")


LLAMA2_7B = "Llama-2-7B (its published config, bf16, micro-batch 1 x 4096 tokens)"


def llama2_7b_fsdp():
    """Llama-2-7B in bf16, FSDP over its decoder layers on 8 ranks, 1 x 4096."""
    return trace_fsdp(*llama2_7b_meta(), ["LlamaDecoderLayer"], world=8,
                      program="llama2_7b_fsdp", title=LLAMA2_7B)


def megatron_tp2_pp4():
    """The 1.3B GPT in bf16, tensor parallel 2 x pipeline parallel 4, four
    micro-batches of 1 x 2048 on the 1F1B schedule."""
    model, inputs = on_meta(GPT_1_3B, 1, 2048, dtype=torch.bfloat16)
    return trace_tp_pp(model, inputs, tp=2, pp=4, microbatches=4, schedule="1f1b",
                       program="megatron_tp2_pp4",
                       title="A 1.3B GPT (24 layers, hidden 2048, 16 heads, sequence 2048, "
                             "vocabulary 50304; bf16)")


def moe_alltoallv():
    """A Mixtral-8x7B-style MoE on 8 ranks, one expert a rank."""
    return trace_moe(MIXTRAL_8X7B, world=8, program="mixtral_moe")


EXAMPLES = {f.__name__: f for f in (gpt2_ddp, llama2_7b_fsdp, megatron_tp2_pp4, moe_alltoallv)}

GPT2_XL = "GPT-2 XL (its published config, micro-batch 1 x 1024 tokens)"


def _bench_programs():
    """collc_plan_quality's programs (issue 13): DDP at 8 ranks (the bench
    rescales the world: DDP's shapes do not depend on it) and FSDP at each
    world the bench reports (a shard is 1/world of a unit)."""
    out = {
        "gpt2_xl_ddp": lambda: trace_ddp(*gpt2_xl_meta(), world=8, program="gpt2_xl_ddp",
                                         title=GPT2_XL),
        "llama2_7b_ddp": lambda: trace_ddp(*llama2_7b_meta(), world=8, program="llama2_7b_ddp",
                                           title=LLAMA2_7B),
    }
    for world in (8, 64, 512):
        out[f"gpt2_xl_fsdp_w{world}"] = lambda w=world: trace_fsdp(
            *gpt2_xl_meta(), ["Block"], world=w, program="gpt2_xl_fsdp", title=GPT2_XL)
    # At 8 ranks it is examples/llama2_7b_fsdp.coll.
    for world in (64, 512):
        out[f"llama2_7b_fsdp_w{world}"] = lambda w=world: trace_fsdp(
            *llama2_7b_meta(), ["LlamaDecoderLayer"], world=w, program="llama2_7b_fsdp",
            title=LLAMA2_7B)
    return out


BENCH_PROGRAMS = _bench_programs()


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m collc.torch.examples",
                                 description="Write (or check) examples/*.coll.")
    ap.add_argument("--dir", help="where the files are (default: examples/, or "
                                  "tests/bench/programs/ with --bench)")
    ap.add_argument("--bench", action="store_true",
                    help="the plan-quality bench's programs instead of the examples")
    ap.add_argument("--check", action="store_true",
                    help="compare with the files instead of writing them (exit 1 if any differs)")
    args = ap.parse_args(argv)
    root = pathlib.Path(__file__).resolve().parents[3]
    if args.dir is None:
        args.dir = str(root / ("tests/bench/programs" if args.bench else "examples"))
    differ = []
    for name, make in (BENCH_PROGRAMS if args.bench else EXAMPLES).items():
        path = pathlib.Path(args.dir) / f"{name}.coll"
        text = make()
        if args.check:
            if not path.exists() or path.read_text() != text:
                differ.append(str(path))
        else:
            path.write_text(text)
            print(f"wrote {path}")
    if differ:
        print(f"differ from the generator: {', '.join(differ)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
