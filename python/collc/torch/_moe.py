"""Mixture-of-experts from a small declarative description: expert parallel
over the world (the experts split evenly across ranks), the dense parts
(embedding, attention, router, norms, head) replicated and averaged data
parallel. Written from the description, not a traced module: the split
sizes of an MoE's all_to_all_v are the router's decisions on real data, so
a meta trace has nothing to say about them; the IR leaves them to run time
(`splits %counts`), as a real MoE step does.

Per layer, forward: attention, the router (top-k of the experts: the rows
to send and how many go to each rank), all_to_all_v to the experts, the
experts, all_to_all_v back, combine. Backward runs the same exchanges the
reverse way with the same counts, and each dense gradient is averaged as it
is ready; an expert's gradient stays on its rank."""

import math

import torch

from ._costs import Costs
from ._irtext import TraceError, type_of, wrap

# Mixtral 8x7B's published shape (Jiang et al. 2024): 32 layers, hidden
# 4096, expert FFN 14336, 32 query and 8 key/value heads, vocabulary 32000,
# 8 experts, top-2 routing; a micro-batch of 1 x 4096 tokens in bf16 and an
# expert capacity factor of 1.25.
MIXTRAL_8X7B = dict(layers=32, hidden=4096, ffn=14336, heads=32, kv_heads=8, vocab=32000,
                    experts=8, top_k=2, capacity_factor=1.25, batch=1, seq=4096,
                    dtype=torch.bfloat16, grad_dtype=torch.float32)


def _itemsize(dtype):
    return torch.empty((), dtype=dtype).element_size()


def trace_moe(cfg, world=8, device_class="h100", program="moe", optimizer="adam"):
    """The IR text of one training step of the MoE that `cfg` describes
    (keys as MIXTRAL_8X7B's) on `world` ranks, costs the FLOP estimate; the
    optimizer step (`optimizer`: "adam" or "sgd-momentum") updates the dense
    parameters and this rank's experts, its cost the bytes it moves over
    the device class's memory bandwidth."""
    missing = sorted(set(MIXTRAL_8X7B) - set(cfg))
    if missing:
        raise TraceError(f"the MoE description lacks {missing}")
    if not isinstance(world, int) or world < 1 or cfg["experts"] % world:
        raise TraceError(f"{cfg['experts']} experts do not split evenly over world {world!r}")
    c = cfg
    costs = Costs("flops", device_class)
    h, tokens, per_rank = c["hidden"], c["batch"] * c["seq"], c["experts"] // world
    kv = h * c["kv_heads"] // c["heads"]
    sent = tokens * c["top_k"]  # rows a rank dispatches
    cap = round(sent * c["capacity_factor"])  # rows a rank's experts accept
    act, dt, gt = type_of(c["dtype"], [c["batch"], c["seq"], h]), c["dtype"], c["grad_dtype"]
    rows = lambda n: type_of(dt, [n, h])  # noqa: E731
    counts = type_of(torch.int64, [world])
    dense = [("attn.q", [h, h]), ("attn.k", [kv, h]), ("attn.v", [kv, h]), ("attn.o", [h, h]),
             ("router", [c["experts"], h]), ("norm.attn", [h]), ("norm.moe", [h])]
    lead = [per_rank] if per_rank > 1 else []
    experts = [("expert.w1", lead + [c["ffn"], h]), ("expert.w2", lead + [h, c["ffn"]]),
               ("expert.w3", lead + [c["ffn"], h])]
    f_attn = 2 * tokens * (2 * h * h + 2 * kv * h)
    f_route = 2 * tokens * h * c["experts"] + tokens * h
    f_expert = 2 * cap * 3 * h * c["ffn"]
    f_combine = sent * h
    f_head = 2 * tokens * h * c["vocab"] + tokens * h
    f_embed = tokens * h
    numel = lambda shape: math.prod(shape)  # noqa: E731
    updated = ([numel(s) for _, s in dense + experts] * c["layers"]
               + [c["vocab"] * h, h, c["vocab"] * h])  # lm_head, norm, embed
    pb, gb = _itemsize(dt), _itemsize(gt)
    step_cost, step_words = costs.optimizer(optimizer, [(n, pb, gb) for n in updated])

    lines = wrap(
        f"A mixture-of-experts stack on {world} ranks, written by collc.torch from its "
        f"description ({c['layers']} layers, hidden {h}, expert FFN {c['ffn']}, "
        f"{c['heads']} query and {c['kv_heads']} key/value heads, vocabulary {c['vocab']}, "
        f"{c['experts']} experts, top-{c['top_k']} routing): expert parallel with "
        f"{per_rank} expert{'s' if per_rank > 1 else ''} a rank, the dense parts "
        "replicated and averaged across the world. Each rank holds "
        f"{c['batch']} x {c['seq']} tokens and dispatches {sent} rows; its experts accept up "
        f"to {cap} (capacity factor {c['capacity_factor']:g}). The split sizes are known only "
        "at run time: the router says how many rows go to each rank, the experts how many "
        f"go back. Costs: {costs.words}.")
    lines += wrap(step_words)
    lines += [f"program @{program} world({world}) {{", "  group @ep = world", "  group @dp = world",
              "", f"  %x.embed = compute @fwd.embed cost({costs.of(flops=f_embed)}) : {act}"]
    x = "%x.embed"
    for k in range(c["layers"]):
        lines += [
            f"  // layer {k}, forward: attention, route, dispatch, expert, combine",
            f"  %x.l{k}.attn = compute @fwd.l{k}.attn({x}) cost({costs.of(flops=f_attn)}) : {act}",
            f"  %d.l{k}, %cnt.l{k} = compute @fwd.l{k}.route(%x.l{k}.attn) "
            f"cost({costs.of(flops=f_route)}) : {rows(sent)}, {counts}",
            f"  %e.l{k} = all_to_all_v %d.l{k} in @ep splits %cnt.l{k} : {rows(cap)}",
            f"  %eo.l{k}, %ecnt.l{k} = compute @fwd.l{k}.expert(%e.l{k}) "
            f"cost({costs.of(flops=f_expert)}) : {rows(cap)}, {counts}",
            f"  %c.l{k} = all_to_all_v %eo.l{k} in @ep splits %ecnt.l{k} : {rows(sent)}",
            f"  %x.l{k} = compute @fwd.l{k}.combine(%c.l{k}, %x.l{k}.attn) "
            f"cost({costs.of(flops=f_combine)}) : {act}"]
        x = f"%x.l{k}"
    lines.append(f"  %loss = compute @fwd.head({x}) cost({costs.of(flops=f_head)}) : f32")
    lines.append("")
    lines.append(f"  %dx.head, %g.lm_head, %g.norm = compute @bwd.head(%loss) "
                 f"cost({costs.of(flops=2 * f_head)}) : {act}, "
                 f"{type_of(gt, [c['vocab'], h])}, {type_of(gt, [h])}")
    done = ["%r.lm_head", "%r.norm"]
    lines += ["  %r.lm_head = all_reduce avg %g.lm_head in @dp",
              "  %r.norm = all_reduce avg %g.norm in @dp"]
    dx = "%dx.head"
    for k in reversed(range(c["layers"])):
        eg = [f"%g.l{k}.{n}" for n, _ in experts]
        dg = [f"%g.l{k}.{n}" for n, _ in dense]
        lines += [
            f"  // layer {k}, backward: the gradient rows travel the reverse way",
            f"  %dc.l{k} = compute @bwd.l{k}.combine({dx}, %c.l{k}) "
            f"cost({costs.of(flops=2 * f_combine)}) : {rows(sent)}",
            f"  %de.l{k} = all_to_all_v %dc.l{k} in @ep splits %cnt.l{k} : {rows(cap)}",
            f"  %dd.l{k}, {', '.join(eg)} = compute @bwd.l{k}.expert(%de.l{k}, %e.l{k}) "
            f"cost({costs.of(flops=2 * f_expert)}) : {rows(cap)}, "
            f"{', '.join(type_of(gt, s) for _, s in experts)}",
            f"  %dr.l{k} = all_to_all_v %dd.l{k} in @ep splits %ecnt.l{k} : {rows(sent)}",
            f"  %dx.l{k}, {', '.join(dg)} = compute @bwd.l{k}.attn(%dr.l{k}, %x.l{k}.attn) "
            f"cost({costs.of(flops=2 * (f_attn + f_route))}) : {act}, "
            f"{', '.join(type_of(gt, s) for _, s in dense)}"]
        for n, _ in dense:
            lines.append(f"  %r.l{k}.{n} = all_reduce avg %g.l{k}.{n} in @dp")
        done += [f"%r.l{k}.{n}" for n, _ in dense] + eg
        dx = f"%dx.l{k}"
    lines.append(f"  %g.embed = compute @bwd.embed({dx}) cost({costs.of(flops=2 * f_embed)}) : "
                 f"{type_of(gt, [c['vocab'], h])}")
    lines.append("  %r.embed = all_reduce avg %g.embed in @dp")
    lines.append(f"  compute @optimizer({', '.join(done + ['%r.embed'])}) cost({step_cost})")
    lines.append("}")
    return "\n".join(lines) + "\n"
