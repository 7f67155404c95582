"""Traces Llama-2-7B's FSDP step on 64 ranks with collc.torch: the model is
built on the meta device from its published config, so nothing is allocated."""

import re

import collc
from collc.torch import trace_fsdp
from collc.torch.models.llama import llama2_7b_meta

model, inputs = llama2_7b_meta()  # bf16, micro-batch 1 x 4096 tokens
ir = trace_fsdp(model, inputs, ["LlamaDecoderLayer"], world=64, program="llama2_7b_fsdp")
print("all_gathers:", len(re.findall(r"= all_gather ", ir)))
print("reduce_scatters:", len(re.findall(r"= reduce_scatter ", ir)))
shards = re.search(r"= compute @shards : (.*)", ir).group(1).split(", ")
print("this rank's shards: the root's", shards[0], "and each decoder layer's", shards[1])
step = collc.compile(ir).simulate(link="h100-nvlink")
print(f"simulated step: {step.step_us / 1000:.1f} ms, exposed comm {step.exposed_comm_us / 1000:.1f} ms")
