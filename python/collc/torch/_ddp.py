"""DDP tracing: one real forward and backward on CPU, the gradient-ready
order observed from hooks on each parameter's gradient accumulator (what
DDP's reducer observes to rebuild its buckets), written as IR (docs/ir.md).

Parameters are those DDP registers: `module.named_parameters()` with
requires_grad, a shared (tied) parameter once under its first name, as DDP
dedups them. A parameter that requires a gradient but gets none is refused,
naming it, as DDP refuses it without find_unused_parameters."""

import re
import time

import torch

from ._devices import scale_for


class TraceError(ValueError):
    """The module cannot be traced as asked; the message says what and where."""


_ELEM = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16",
         torch.float64: "f64"}


def ir_name(name):
    """A parameter name as an IR value name (docs/ir.md: letters, digits and
    `_ . $ -`, not ending in `-`): any other character becomes `_`."""
    s = re.sub(r"[^A-Za-z0-9_.$-]", "_", name)
    return s[:-1] + "_" if s.endswith("-") else s


def _ir_type(t):
    if t.dtype not in _ELEM:
        raise TraceError(f"parameter of dtype {t.dtype} has no IR element type "
                         f"(expected one of {', '.join(map(str, _ELEM))})")
    return f"{_ELEM[t.dtype]}[{', '.join(map(str, t.shape))}]"


def _owner(name):
    """The module that owns a parameter: its name without the last part."""
    return name.rsplit(".", 1)[0] if "." in name else "root"


def _default_loss(out):
    if isinstance(out, (tuple, list)):
        out = out[0]
    if not isinstance(out, torch.Tensor):
        raise TraceError(f"the module returned {type(out).__name__}, not a tensor; "
                         "pass loss_fn to make a scalar loss of it")
    return out.float().sum()


def ddp_parameters(module):
    """The (name, parameter) pairs DDP registers, in module order: those that
    require a gradient, a shared (tied) one once under its first name."""
    seen, params = set(), []
    for name, p in module.named_parameters():  # dedups tied parameters by identity
        if p.requires_grad and id(p) not in seen:
            seen.add(id(p))
            params.append((name, p))
    return params


def on_gradient_ready(params, fn):
    """Calls fn(name) whenever backward has accumulated the gradient of one
    of params ((name, parameter) pairs): a hook on its gradient accumulator,
    as DDP's reducer finds it. Returns the accumulators, for the caller to
    keep alive while it listens."""
    accumulators = []
    for name, p in params:
        acc = p.expand_as(p).grad_fn.next_functions[0][0]
        acc.register_hook(lambda *_, name=name: fn(name))
        accumulators.append(acc)
    return accumulators


def observe(module, example_inputs, loss_fn=None):
    """Runs one forward and backward; returns (params, ready, fwd_ns, bwd_ns):
    params the (name, tensor) pairs DDP would register, ready the
    (name, time_ns) firings in gradient-ready order, times from backward's
    start."""
    params = ddp_parameters(module)
    if not params:
        raise TraceError("the module has no parameter that requires a gradient")

    names = [ir_name(n) for n, _ in params]
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:
        raise TraceError(f"parameter names {clash} collide as IR names")

    ready, start = [], [0]
    accumulators = on_gradient_ready(
        params, lambda name: ready.append((name, time.perf_counter_ns() - start[0])))

    inputs = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
    module.zero_grad(set_to_none=True)
    t0 = time.perf_counter_ns()
    out = module(*inputs)
    loss = (loss_fn or _default_loss)(out)
    fwd_ns = time.perf_counter_ns() - t0
    start[0] = time.perf_counter_ns()
    loss.backward()
    bwd_ns = time.perf_counter_ns() - start[0]
    del accumulators

    fired = {n for n, _ in ready}
    unused = [n for n, _ in params if n not in fired]
    if unused:
        raise TraceError(f"{len(unused)} parameter(s) require a gradient but got none in "
                         f"backward (DDP refuses them without find_unused_parameters): "
                         f"{', '.join(unused)}; freeze them (requires_grad=False) or use them")
    return params, ready, fwd_ns, bwd_ns


def _cost(ns, factor):
    return f"{max(1, round(ns * factor))}ns"


def trace_ddp(module, example_inputs, loss_fn=None, world=8, device_class="h100",
              program="ddp", group="dp"):
    """The IR text of one DDP training step of module on `world` ranks:
    a forward, the backward split at each gradient-ready point (consecutive
    firings of one owning module's parameters form one region, which produces
    their gradients), an `all_reduce avg` per gradient in ready order, and an
    optimizer step. Costs come from this CPU's measured profile scaled to
    device_class (collc.torch.DEVICE_CLASSES)."""
    if not isinstance(world, int) or world < 1:
        raise TraceError(f"world must be a positive integer, not {world!r}")
    factor, how = scale_for(device_class)
    params, ready, fwd_ns, bwd_ns = observe(module, example_inputs, loss_fn)
    by_name = dict(params)

    # Regions: runs of consecutive firings with one owner.
    regions = []
    for name, t in ready:
        if regions and regions[-1][0] == _owner(name):
            regions[-1][1].append(name)
            regions[-1][2] = t
        else:
            regions.append([_owner(name), [name], t])

    lines = [
        f"// {type(module).__name__} trained data parallel on {world} ranks, traced by "
        f"collc.torch (DDP): {len(params)} gradients",
        "// in the order autograd's accumulator hooks fired in one real backward on CPU, one",
        "// compute per run of gradients of one module, each averaged as it is ready. Tied",
        "// parameters appear once, under their first name. The scalar %bwd.* values only",
        "// order the backward regions (activation gradients are not modelled).",
        f"// Costs: {how}.",
        "// A backward region's cost is the time since the previous region's last hook.",
        f"program @{program} world({world}) {{",
        f"  group @{group} = world",
        "",
        f"  %loss = compute @fwd cost({_cost(fwd_ns, factor)}) : f32",
    ]
    prev, prev_t, used = "%loss", 0, set()
    reduced = {}
    for k, (owner, names, t) in enumerate(regions):
        token = f"%bwd.{ir_name(owner)}"
        while token in used:
            token += ".again"
        used.add(token)
        results = [token] + [f"%g.{ir_name(n)}" for n in names]
        types = ["f32"] + [_ir_type(by_name[n]) for n in names]
        lines.append(f"  {', '.join(results)} = compute @bwd.{ir_name(owner)}({prev}) "
                     f"cost({_cost(t - prev_t, factor)}) : {', '.join(types)}")
        for n in names:
            reduced[n] = f"%r.{ir_name(n)}"
            lines.append(f"  {reduced[n]} = all_reduce avg %g.{ir_name(n)} in @{group}")
        prev, prev_t = token, t
    # The optimizer updates every parameter once all are averaged; its cost is
    # not measured (the trace runs no optimizer), so it is left at 0.
    lines.append(f"  compute @optimizer({', '.join(reduced[n] for n, _ in params)})")
    lines.append("}")
    return "\n".join(lines) + "\n"
