#!/usr/bin/env python3
"""Writes the DDP program of a decoder-only transformer for the plan-quality
bench (collc_plan_quality): GPT-2 XL and Llama-2-7B, which collc.torch cannot
trace yet (it runs a real forward and backward; meta-device tracing is being
built). When collc.torch writes these programs, pass its files to the bench
instead; this generator only fills the gap.

    python3 transformer_ddp.py gpt2-xl|llama2-7b|gpt2-124m [--grad-dtype f32|bf16] [-o FILE]

The program has the shape of examples/gpt2_ddp.coll: backward from the loss
down to the embeddings, one compute per module that finishes its parameters'
gradients (in reverse order of model.parameters(), bias before weight, the
order DDP's reducer sees them), each gradient averaged as soon as it is ready,
then AdamW over all of them. Gradients are f32 by default (mixed precision
keeps f32 master gradients; `--grad-dtype bf16` for bf16 parameters),
activation gradients bf16.

Costs are estimates for an H100, the rates the GPT-2 124M example's costs
imply: matmul backward at 400 TFLOP/s (4 x tokens x in x out FLOPs),
attention's core backward at 225 TFLOP/s (8 x tokens x seq x hidden), and
memory-bound ops (norms, loss, embedding scatter, AdamW) at 3 TB/s. gpt2-124m
reproduces the example's costs within 25% (its LM head is faster there)."""

import argparse
import math
import sys

MODELS = {
    # name: layers, hidden, ffn, vocab, seq, micro-batch, style
    "gpt2-124m": dict(layers=12, hidden=768, ffn=3072, vocab=50257, seq=1024, batch=8, style="gpt2"),
    "gpt2-xl": dict(layers=48, hidden=1600, ffn=6400, vocab=50257, seq=1024, batch=8, style="gpt2"),
    "llama2-7b": dict(layers=32, hidden=4096, ffn=11008, vocab=32000, seq=4096, batch=1,
                      style="llama"),
}

MATMUL_FLOPS, ATTN_FLOPS, MEM_BPS = 400e12, 225e12, 3e12


def us(x):
    return max(1, round(x * 1e6))


class Writer:
    def __init__(self, cfg, grad):
        self.cfg, self.grad, self.lines, self.params = cfg, grad, [], []
        self.tokens = cfg["batch"] * cfg["seq"]
        self.act = f"bf16[{cfg['batch']}, {cfg['seq']}, {cfg['hidden']}]"

    def backward(self, name, dx_in, grads, cost_s, extra_in=()):
        """One backward compute: the activation gradient, then `grads`
        [(param, shape)] in the order it finishes them, each all-reduced."""
        outs = [f"%dx.{name}"] + [f"%g.{p}" for p, _ in grads]
        types = [self.act] + [f"{self.grad}[{', '.join(map(str, s))}]" for _, s in grads]
        ins = ", ".join([dx_in, *extra_in])
        self.lines.append(f"  {', '.join(outs)} = compute @bwd.{name}({ins}) cost({us(cost_s)}us)"
                          f" : {', '.join(types)}")
        for p, s in grads:
            self.lines.append(f"  %r.{p} = all_reduce avg %g.{p} in @dp")
            self.params.append((p, s))
        return f"%dx.{name}"

    def linear_s(self, i, o):
        return 4 * self.tokens * i * o / MATMUL_FLOPS

    def norm_s(self):
        return self.tokens * self.cfg["hidden"] * 6 / MEM_BPS


def gpt2_layer(w, l, dx):
    h, f = w.cfg["hidden"], w.cfg["ffn"]
    attn_core = 8 * w.tokens * w.cfg["seq"] * h / ATTN_FLOPS
    p = f"h{l}"
    w.lines.append(f"\n  // block {l}, backward: MLP then attention, each with its layer norm")
    dx = w.backward(f"{p}.mlp", dx, [(f"{p}.mlp.c_proj.b", [h]), (f"{p}.mlp.c_proj.w", [f, h]),
                                     (f"{p}.mlp.c_fc.b", [f]), (f"{p}.mlp.c_fc.w", [h, f])],
                    w.linear_s(h, f) * 2)
    dx = w.backward(f"{p}.ln_2", dx, [(f"{p}.ln_2.b", [h]), (f"{p}.ln_2.w", [h])], w.norm_s())
    dx = w.backward(f"{p}.attn", dx, [(f"{p}.attn.c_proj.b", [h]), (f"{p}.attn.c_proj.w", [h, h]),
                                      (f"{p}.attn.c_attn.b", [3 * h]),
                                      (f"{p}.attn.c_attn.w", [h, 3 * h])],
                    w.linear_s(h, 4 * h) + attn_core)
    return w.backward(f"{p}.ln_1", dx, [(f"{p}.ln_1.b", [h]), (f"{p}.ln_1.w", [h])], w.norm_s())


def llama_layer(w, l, dx):
    h, f = w.cfg["hidden"], w.cfg["ffn"]
    attn_core = 8 * w.tokens * w.cfg["seq"] * h / ATTN_FLOPS
    p = f"l{l}"
    w.lines.append(f"\n  // layer {l}, backward: SwiGLU MLP then attention, each with its RMSNorm")
    dx = w.backward(f"{p}.mlp", dx, [(f"{p}.mlp.down_proj.w", [h, f]),
                                     (f"{p}.mlp.up_proj.w", [f, h]),
                                     (f"{p}.mlp.gate_proj.w", [f, h])], w.linear_s(h, f) * 3)
    dx = w.backward(f"{p}.post_attention_layernorm", dx,
                    [(f"{p}.post_attention_layernorm.w", [h])], w.norm_s())
    dx = w.backward(f"{p}.attn", dx, [(f"{p}.attn.o_proj.w", [h, h]), (f"{p}.attn.v_proj.w", [h, h]),
                                      (f"{p}.attn.k_proj.w", [h, h]), (f"{p}.attn.q_proj.w", [h, h])],
                    w.linear_s(h, 4 * h) + attn_core)
    return w.backward(f"{p}.input_layernorm", dx, [(f"{p}.input_layernorm.w", [h])], w.norm_s())


def program(model, grad="f32"):
    cfg = MODELS[model]
    w = Writer(cfg, grad)
    h, v, t = cfg["hidden"], cfg["vocab"], w.tokens
    gpt2 = cfg["style"] == "gpt2"
    logits = f"bf16[{cfg['batch']}, {cfg['seq']}, {v}]"
    w.lines.append(f"  %dlogits = compute @bwd.loss cost({us(t * v * 3.3 / MEM_BPS)}us) : {logits}")
    # GPT-2 ties the LM head to wte: its part of wte's gradient waits for the
    # embedding backward; Llama's lm_head is a parameter of its own.
    if gpt2:
        w.lines.append(f"  %dx.head, %g.wte.head = compute @bwd.lm_head(%dlogits) "
                       f"cost({us(w.linear_s(h, v))}us) : {w.act}, {grad}[{v}, {h}]")
        dx = w.backward("ln_f", "%dx.head", [("ln_f.b", [h]), ("ln_f.w", [h])], w.norm_s())
    else:
        dx = w.backward("lm_head", "%dlogits", [("lm_head.w", [v, h])], w.linear_s(h, v))
        dx = w.backward("norm", dx, [("norm.w", [h])], w.norm_s())
    for l in reversed(range(cfg["layers"])):
        dx = (gpt2_layer if gpt2 else llama_layer)(w, l, dx)
    embed_s = (v * h * 8 + t * h * 2) / MEM_BPS
    w.lines.append("")
    if gpt2:
        w.lines.append(f"  // embeddings: wpe, then wte, whose gradient adds the LM head's")
        w.lines.append(f"  %g.wpe, %g.wte = compute @bwd.embed({dx}, %g.wte.head) cost({us(embed_s)}us)"
                       f" : {grad}[{cfg['seq']}, {h}], {grad}[{v}, {h}]")
        for p, s in [("wpe", [cfg["seq"], h]), ("wte", [v, h])]:
            w.lines.append(f"  %r.{p} = all_reduce avg %g.{p} in @dp")
            w.params.append((p, s))
    else:
        w.lines.append(f"  %g.embed_tokens.w = compute @bwd.embed({dx}) cost({us(embed_s)}us)"
                       f" : {grad}[{v}, {h}]")
        w.lines.append(f"  %r.embed_tokens.w = all_reduce avg %g.embed_tokens.w in @dp")
        w.params.append(("embed_tokens.w", [v, h]))
    numel = sum(math.prod(s) for _, s in w.params)
    ready = ", ".join(f"%r.{p}" for p, _ in reversed(w.params))
    w.lines.append(f"\n  // AdamW over every averaged gradient, in model.parameters() order")
    w.lines.append(f"  compute @optimizer.adamw({ready}) cost({us(numel * 28 / MEM_BPS)}us)")
    name = model.replace("-", "_") + ("" if grad == "f32" else "_" + grad)
    head = [f"// {model} ({numel / 1e6:.0f}M parameters) trained data parallel, as PyTorch DDP runs it:",
            f"// micro-batch {cfg['batch']} x {cfg['seq']} tokens, {grad} gradients. Written by",
            f"// tests/bench/programs/transformer_ddp.py {model}"
            + ("" if grad == "f32" else f" --grad-dtype {grad}"),
            "// (FLOP-estimated H100 costs; see that script). Do not edit by hand.",
            f"program @{name}_ddp world(8) {{", "  group @dp = world", ""]
    return "\n".join(head + w.lines + ["}", ""])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model", choices=sorted(MODELS))
    ap.add_argument("--grad-dtype", choices=("f32", "bf16"), default="f32")
    ap.add_argument("-o", "--output", default="-")
    args = ap.parse_args(argv)
    text = program(args.model, args.grad_dtype)
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
