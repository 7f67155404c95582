"""Traces a small GPT's step at tensor parallel 2 x pipeline parallel 2 with
four micro-batches on the 1F1B schedule, and prints each stage's order."""

import re

import torch

import collc
from collc.torch import trace_tp_pp
from collc.torch.models.gpt2 import on_meta

config = dict(n_layer=4, n_head=4, n_embd=256, vocab_size=1024, n_ctx=128)
model, inputs = on_meta(config, batch=1, seq=128, dtype=torch.bfloat16)  # one micro-batch
ir = trace_tp_pp(model, inputs, tp=2, pp=2, microbatches=4, schedule="1f1b")
for stage in range(2):
    acts = re.findall(rf"// micro-batch (\d+), stage {stage}, (f|b)", ir)
    print(f"stage {stage}:", " ".join(f"{d.upper()}{m}" for m, d in acts))
print("tensor-parallel all_reduces:", len(re.findall(r"all_reduce sum %\S+ in @tp", ir)))
print("sends:", ir.count("  send "))
collc.compile(ir)  # every rank's communication checked against every other's
