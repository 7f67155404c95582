"""DDP tracing: one real forward and backward on CPU, the gradient-ready
order observed from hooks on each parameter's gradient accumulator (what
DDP's reducer observes to rebuild its buckets), written as IR (docs/ir.md).

Parameters are those DDP registers: `module.named_parameters()` with
requires_grad, a shared (tied) parameter once under its first name, as DDP
dedups them. A parameter that requires a gradient but gets none is refused,
naming it, as DDP refuses it without find_unused_parameters."""

import time
from typing import NamedTuple

import torch

from ._costs import Costs
from ._irtext import TraceError, ir_name, ir_type, wrap  # noqa: F401 (TraceError: re-exported)
from ._record import Recorder


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
    if not params:
        raise TraceError("the module has no parameter that requires a gradient")
    return params


def _ir_names(params):
    """The IR names of params' (name, parameter) pairs, refusing two that
    collide."""
    names = [ir_name(n) for n, _ in params]
    clash = sorted({n for n in names if names.count(n) > 1})
    if clash:
        raise TraceError(f"parameter names {clash} collide as IR names")
    return names


def _gradient_tensor(ir):
    """The plan tensor of the gradient of the parameter with IR name ir
    (`%g.NAME` in the program)."""
    return "g." + ir


class DdpGradient(NamedTuple):
    """One gradient DDP averages (public: docs/torch.md)."""
    name: str          # the parameter's name in the module
    parameter: torch.nn.Parameter
    tensor: str        # its gradient in trace_ddp's program and plan: g.NAME


def ddp_gradients(module):
    """The gradients DDP averages for module, in module order, as
    DdpGradient(name, parameter, tensor): one per parameter DDP registers
    (requires_grad, a tied one once under its first name), tensor the name
    trace_ddp gives its gradient (`%g.NAME`), which a compiled plan's
    Executor.tensor and Executor.bind take. Raises TraceError when the module
    has no such parameter or two names collide as IR names."""
    params = ddp_parameters(module)
    return [DdpGradient(n, p, _gradient_tensor(ir))
            for (n, p), ir in zip(params, _ir_names(params))]


def on_gradient_ready(params, fn):
    """Calls fn(name) whenever backward has accumulated the gradient of one
    of params ((name, parameter) pairs, or ddp_gradients' DdpGradients): a
    hook on its gradient accumulator, as DDP's reducer finds it. Returns the
    accumulators, for the caller to keep alive while it listens."""
    accumulators = []
    for name, p, *_ in params:
        acc = p.expand_as(p).grad_fn.next_functions[0][0]
        acc.register_hook(lambda *_, name=name: fn(name))
        accumulators.append(acc)
    return accumulators


def on_meta(params):
    """Whether the parameters are on the meta device (shapes, no storage)."""
    return any(p.is_meta for _, p in params)


# How the ready order was found, for the header.
ORDER_OBSERVED = "in the order autograd's accumulator hooks fired in one real backward on CPU"
ORDER_META = ("in the order autograd's accumulator hooks fired in one backward on the meta "
              "device (the engine's real order, over shapes only)")
ORDER_DERIVED = ("in reverse order of first use in forward, each module's parameters in "
                 "reverse registration order (backward could not run on the meta device)")


def derived_order(params, recorder):
    """The ready order DDP would observe, derived where no backward can run:
    backward visits modules in reverse order of forward, and a parameter's
    gradient is complete at its first use in forward (its last in backward);
    within a module, gradients come in reverse registration order (a linear
    layer's bias before its weight, as autograd's addmm backward gives them)."""
    order = recorder.first_use(params)
    rank = {n: k for k, n in enumerate(order)}
    pos = {n: k for k, (n, _) in enumerate(params)}
    unused = [n for n, _ in params if n not in rank]
    if unused:
        raise TraceError(f"{len(unused)} parameter(s) are used by no module in forward "
                         f"(DDP refuses them without find_unused_parameters): "
                         f"{', '.join(unused)}; freeze them (requires_grad=False) or use them")
    return sorted((n for n, _ in params), key=lambda n: (-rank[n], -pos[n]))


def observe(module, example_inputs, loss_fn=None):
    """Runs one forward and backward; returns (params, ready, fwd_ns,
    recorder, how): params the (name, tensor) pairs DDP would register,
    ready the (name, time_ns) firings in gradient-ready order, times from
    backward's start, the forward's Recorder, and how the order was found."""
    params = ddp_parameters(module)
    _ir_names(params)

    ready, start = [], [0]
    accumulators = on_gradient_ready(
        params, lambda name: ready.append((name, time.perf_counter_ns() - start[0])))

    inputs = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
    module.zero_grad(set_to_none=True)
    t0 = time.perf_counter_ns()
    with Recorder(module) as recorder:
        out = module(*inputs)
    loss = (loss_fn or _default_loss)(out)
    fwd_ns = time.perf_counter_ns() - t0
    start[0] = time.perf_counter_ns()
    how = ORDER_META if on_meta(params) else ORDER_OBSERVED
    try:
        loss.backward()
    except (NotImplementedError, RuntimeError):
        if not on_meta(params):
            raise
        # An op without a meta kernel for its backward: derive the order.
        ready, how = [(n, 0) for n in derived_order(params, recorder)], ORDER_DERIVED
    del accumulators

    fired = {n for n, _ in ready}
    unused = [n for n, _ in params if n not in fired]
    if unused:
        raise TraceError(f"{len(unused)} parameter(s) require a gradient but got none in "
                         f"backward (DDP refuses them without find_unused_parameters): "
                         f"{', '.join(unused)}; freeze them (requires_grad=False) or use them")
    return params, ready, fwd_ns, recorder, how


def cost_mode(params, cost):
    """The cost mode asked for, or by default "flops" on the meta device
    (nothing to measure) and "measured" elsewhere."""
    if cost is None:
        return "flops" if on_meta(params) else "measured"
    if cost == "measured" and on_meta(params):
        raise TraceError("a model on the meta device has no run time to measure; "
                         "use cost='flops'")
    return cost


def trace_ddp(module, example_inputs, loss_fn=None, world=8, device_class="h100",
              program="ddp", group="dp", cost=None, title=None, optimizer="adam"):
    """The IR text of one DDP training step of module on `world` ranks:
    a forward, the backward split at each gradient-ready point (consecutive
    firings of one owning module's parameters form one region, which produces
    their gradients), an `all_reduce avg` per gradient in ready order, and an
    optimizer step. Costs (collc.torch._costs) are this CPU's measured
    profile scaled to device_class, or the FLOP estimate over its nominal
    rate: `cost` "measured" or "flops", by default flops on meta. `title`
    names the model in the header (default: its class name). The optimizer
    step (`optimizer`: "adam" or "sgd-momentum") costs the bytes it moves
    over every parameter, over the device class's memory bandwidth."""
    if not isinstance(world, int) or world < 1:
        raise TraceError(f"world must be a positive integer, not {world!r}")
    costs = Costs(cost_mode(ddp_parameters(module), cost), device_class)
    params, ready, fwd_ns, recorder, how_order = observe(module, example_inputs, loss_fn)
    step = DdpStep(title or type(module).__name__, params, ready, fwd_ns,
                   recorder.param_flops(params), how_order)
    return ddp_program(step, costs, world, program, group, optimizer)[0]


class DdpStep(NamedTuple):
    """What one forward and backward showed of a DDP step."""
    title: str         # the model, for the header
    params: list       # (name, parameter) pairs DDP registers, in module order
    ready: list        # (name, ns since backward began) in gradient-ready order
    fwd_ns: int        # the forward's measured time
    flops: dict        # forward FLOPs per parameter name (estimated)
    how_order: str     # how the ready order was found, for the header


def ddp_program(step, costs, world, program="ddp", group="dp", optimizer="adam"):
    """The IR text of `step` (a DdpStep) on `world` ranks, and its computes
    in program order as (compute name, the parameter names whose gradients
    it produces) pairs: @fwd, the backward regions, @optimizer (whose cost
    is `optimizer`'s step, see trace_ddp)."""
    params, by_name = step.params, dict(step.params)
    step_cost, step_words = costs.optimizer(
        optimizer, [(p.numel(), p.element_size(), p.element_size()) for _, p in params])

    # Regions: runs of consecutive firings with one owner.
    regions = []
    for name, t in step.ready:
        if regions and regions[-1][0] == _owner(name):
            regions[-1][1].append(name)
            regions[-1][2] = t
        else:
            regions.append([_owner(name), [name], t])

    lines = [
        *wrap(f"{step.title} trained data parallel on {world} ranks, traced by "
              f"collc.torch (DDP): {len(params)} gradients {step.how_order}, one compute per run of gradients of one module, each averaged "
               "as it is ready. Tied parameters appear once, under their first name. The "
               "scalar %bwd.* values only order the backward regions (activation gradients "
               f"are not modelled). Costs: {costs.words}."),
        ("// A backward region's cost is the time since the previous region's last hook."
         if costs.how == "measured" else
         "// A backward region's cost is the estimate of the gradients it produces."),
        *wrap(step_words),
        f"program @{program} world({world}) {{",
        f"  group @{group} = world",
        "",
        f"  %loss = compute @fwd cost({costs.of(ns=step.fwd_ns, flops=sum(step.flops.values()))}) : f32",
    ]
    computes = [("fwd", [])]
    prev, prev_t, used = "%loss", 0, set()
    reduced = {}
    for owner, names, t in regions:
        token = f"%bwd.{ir_name(owner)}"
        while token in used:
            token += ".again"
        used.add(token)
        results = [token] + [f"%{_gradient_tensor(ir_name(n))}" for n in names]
        types = ["f32"] + [ir_type(by_name[n]) for n in names]
        cost = costs.of(ns=t - prev_t, flops=2 * sum(step.flops.get(n, 0) for n in names))
        lines.append(f"  {', '.join(results)} = compute @bwd.{ir_name(owner)}({prev}) "
                     f"cost({cost}) : {', '.join(types)}")
        computes.append((f"bwd.{ir_name(owner)}", names))
        for n in names:
            reduced[n] = f"%r.{ir_name(n)}"
            lines.append(f"  {reduced[n]} = all_reduce avg %{_gradient_tensor(ir_name(n))} "
                         f"in @{group}")
        prev, prev_t = token, t
    # The optimizer updates every parameter once all are averaged.
    lines.append(f"  compute @optimizer({', '.join(reduced[n] for n, _ in params)}) "
                 f"cost({step_cost})")
    lines.append("}")
    computes.append(("optimizer", []))
    return "\n".join(lines) + "\n", computes
