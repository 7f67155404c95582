"""Tensor and pipeline parallel tracing from a small declarative description
(Megatron-LM's layout): `tp` ranks split every layer's matrices, `pp`
stages hold consecutive layers, a step runs `microbatches` micro-batches on a
GPipe or 1F1B schedule, and the ranks left over (world / (tp x pp)) average
gradients data parallel.

One forward of one micro-batch (the example inputs; on the meta device it
allocates nothing) shows the model's shape: the layers are the children of
its largest nn.ModuleList (or `layers`), what runs before them is the
embedding on the first stage, what runs after them the head on the last. In
each layer, a child that owns matrices (GPT-2's attn and mlp, Llama's
self_attn and mlp) is one tensor-parallel block, as Megatron splits it: its
forward ends in an all_reduce sum of its output over the tensor group, its
backward in one of its input gradient. Between stages the layer output goes
by send/recv, and its gradient back. A parameter that both the embedding and
the head use (a tied word embedding) gets its gradients summed over the
first and last stage, as Megatron's embedding group does.

Rank r is tensor rank r % tp of stage r / (tp x dp), data-parallel index
(r / tp) % dp: tensor ranks adjacent, as Megatron places them."""

import torch

from ._costs import Costs
from ._irtext import TraceError, ir_name, type_of, wrap
from ._record import Recorder, param_flops

SCHEDULES = ("gpipe", "1f1b")


def schedule_of(kind, stage, stages, microbatches):
    """One stage's actions in order: ("F", m) and ("B", m)."""
    if kind == "gpipe":
        return [("F", m) for m in range(microbatches)] + [("B", m) for m in range(microbatches)]
    warm = min(stages - 1 - stage, microbatches)
    acts = [("F", m) for m in range(warm)]
    for i in range(microbatches - warm):
        acts += [("F", warm + i), ("B", i)]
    return acts + [("B", m) for m in range(microbatches - warm, microbatches)]


def interleave(kind, stages, microbatches):
    """Every stage's actions as one program order: a stage's next action is
    written once what it receives has been written by its sender (the
    previous stage's forward of that micro-batch, the next stage's backward),
    and a backward that receives its stage's next forward input early (see
    trace_tp_pp's send) once that forward's sender is written too: a checker
    that follows the text meets every send before its recv."""
    plans = [schedule_of(kind, s, stages, microbatches) for s in range(stages)]
    at, done, order = [0] * stages, set(), []

    def needs(s):
        kind_, m = plans[s][at[s]]
        got = [("F", m, s - 1)] if kind_ == "F" else [("B", m, s + 1)]
        if kind_ == "B" and s > 0 and at[s] + 1 < len(plans[s]) and plans[s][at[s] + 1][0] == "F":
            got.append(("F", plans[s][at[s] + 1][1], s - 1))
        return [n for n in got if 0 <= n[2] < stages]

    while len(order) < stages * 2 * microbatches:
        progressed = False
        for s in range(stages):
            while at[s] < len(plans[s]) and all(n in done for n in needs(s)):
                kind_, m = plans[s][at[s]]
                done.add((kind_, m, s))
                order.append((kind_, m, s))
                at[s] += 1
                progressed = True
        if not progressed:  # a schedule that waits on itself; none above does
            raise TraceError(f"schedule {kind} deadlocks at {[p[a] for p, a in zip(plans, at)]}")
    return order


def _largest_module_list(module):
    lists = [(len(m), n) for n, m in module.named_modules() if isinstance(m, torch.nn.ModuleList)]
    if not lists:
        raise TraceError(f"{type(module).__name__} has no nn.ModuleList of layers; name one "
                         "with layers=")
    return max(lists, key=lambda x: (x[0], -len(x[1])))[1]


class _Shape:
    """What one forward of one micro-batch says about the model."""

    def __init__(self, module, inputs, layers_name, tp):
        layers = dict(module.named_modules()).get(layers_name)
        if not isinstance(layers, torch.nn.ModuleList) or not len(layers):
            raise TraceError(f"{layers_name!r} is not a non-empty nn.ModuleList of "
                             f"{type(module).__name__}")
        prefix = {layers_name + "." + str(k): k for k in range(len(layers))}
        with Recorder(module) as rec:
            module(*inputs)
        self.n = len(layers)
        self.blocks = [[n for n, c in layer.named_children()
                        if any(p.dim() >= 2 for p in c.parameters())] for layer in layers]
        for k, b in enumerate(self.blocks):
            if not b:
                raise TraceError(f"layer {layers_name}.{k} has no child with a matrix to split")
        self.flops = [{b: 0 for b in blocks} for blocks in self.blocks]
        self.pre = self.post = 0
        self.pre_params, self.post_params, self.grad_elems = set(), set(), [0] * self.n
        self.act = None
        seen_layer = False
        for call in rec.calls:
            k, rest = _layer_of(call.name, prefix)
            if k is not None and rest == "":
                self.act = (call.shape, call.dtype)  # a layer's output: what stages pass
            own = list(call.module.parameters(recurse=False))
            if not own:
                continue
            f = sum(param_flops(call.module, p, call.rows) for p in own)
            if k is None:
                if seen_layer:
                    self.post += f
                    self.post_params |= {id(p) for p in own}
                else:
                    self.pre += f
                    self.pre_params |= {id(p) for p in own}
                continue
            seen_layer = True
            block = rest.split(".", 1)[0] if rest else ""
            split = block in self.flops[k]
            # A split block's matrices are divided over the tensor group; the
            # rest of the layer (norms) runs whole, counted with its first block.
            self.flops[k][block if split else self.blocks[k][0]] += f // tp if split else f
            self.grad_elems[k] += sum(p.numel() // tp if split and p.dim() >= 2 else p.numel()
                                      for p in own)
        if self.act is None or self.act[0] is None:
            raise TraceError(f"the layers of {layers_name} returned no tensor")
        self.tied = [p for p in module.parameters() if id(p) in self.pre_params & self.post_params]
        self.ref = next(iter(module.parameters()))


def _layer_of(name, prefix):
    for p, k in prefix.items():
        if name == p:
            return k, ""
        if name.startswith(p + "."):
            return k, name[len(p) + 1:]
    return None, None


def _check_args(tp, pp, microbatches, schedule, world, cost):
    """The world size, once every argument is one trace_tp_pp can honour."""
    for name, v in (("tp", tp), ("pp", pp), ("microbatches", microbatches)):
        if not isinstance(v, int) or v < 1:
            raise TraceError(f"{name} must be a positive integer, not {v!r}")
    if schedule not in SCHEDULES:
        raise TraceError(f"schedule {schedule!r} is not known; expected one of "
                         f"{', '.join(SCHEDULES)}")
    world = tp * pp if world is None else world
    if not isinstance(world, int) or world < 1 or world % (tp * pp):
        raise TraceError(f"world {world!r} is not a positive multiple of tp x pp = {tp * pp}")
    if cost not in (None, "flops"):
        raise TraceError("tp-pp traces costs from the FLOP estimate only (cost='flops')")
    return world


def _stage_layers(n, pp, boundaries):
    """The layers of each stage: `boundaries` start stages 1..pp-1 (default:
    n layers split evenly)."""
    if boundaries is None:
        if n < pp:
            raise TraceError(f"{n} layers cannot fill {pp} stages")
        boundaries = [n * s // pp for s in range(1, pp)]
    starts = [0] + list(boundaries)
    if len(starts) != pp or starts != sorted(set(starts)) or starts[-1] >= n:
        raise TraceError(f"boundaries {list(boundaries)} must be {pp - 1} increasing layer "
                         f"indices in 1..{n - 1}")
    return [list(range(a, b)) for a, b in zip(starts, starts[1:] + [n])]


class _StepWriter:
    """Writes one step's IR lines: the header, then each stage's actions in
    the interleaved order, then the gradient averaging."""

    def __init__(self, shape, tp, pp, dp, microbatches, schedule, stage_layers, costs):
        self.shape, self.tp, self.pp, self.dp = shape, tp, pp, dp
        self.stage_layers, self.costs, self.schedule = stage_layers, costs, schedule
        self.microbatches = microbatches
        self.span = tp * dp  # ranks per stage
        self.act_type = type_of(shape.act[1], shape.act[0])
        self.on = [f"rank / {self.span} == {s}" for s in range(pp)]
        self.last = pp - 1
        self.tied = bool(shape.tied) and pp > 1
        self.ends = f"rank / {self.span} == 0 || rank / {self.span} == {self.last}"
        self.lines = []
        self.plans = [schedule_of(schedule, s, pp, microbatches) for s in range(pp)]
        self.step, self.posted, self.last_bwd = [0] * pp, [None] * pp, [None] * pp

    def header(self, title, layers_name, world, program):
        shape, tp, pp, dp, span = self.shape, self.tp, self.pp, self.dp, self.span
        self.lines += wrap(
            f"{title} trained with tensor parallel {tp} x pipeline parallel {pp}"
            f"{f' x data parallel {dp}' if dp > 1 else ''} on {world} ranks, traced by collc.torch: "
            f"rank r is tensor rank r % {tp} of stage r / {span}; stages hold layers "
            f"{', '.join(f'{l[0]}-{l[-1]}' for l in self.stage_layers)} of {layers_name}; a step "
            f"runs {self.microbatches} micro-batches of {'x'.join(map(str, shape.act[0][:-1]))} "
            f"tokens on a "
            f"{'GPipe (all forwards, then all backwards)' if self.schedule == 'gpipe' else '1F1B'} "
            "schedule. Each tensor-parallel block ("
            f"{', '.join(sorted({b for bl in shape.blocks for b in bl}))}) all-reduces its output "
            "in forward and its input gradient in backward over @tp; activations and their "
            "gradients go between stages by send/recv"
            + f", each layer's gradient shard is averaged over @dp ({dp} rank{'s' if dp > 1 else ''}"
            f" a group: Megatron issues it also for one)"
            + (", and the tied embedding's gradient is summed over the first and last stage"
               if self.tied else "")
            + f". Costs: {self.costs.words}, the split blocks' divided by {tp}.")
        self.lines.append(f"program @{program} world({world}) {{")
        if tp > 1:
            self.lines.append(f"  group @tp = split(rank / {tp}, rank)")
        self.lines.append(f"  group @dp = split(rank / {span} * {tp} + rank % {tp}, rank)")
        if self.tied:
            self.lines.append("  // the first and last stage's ranks of one tensor and data index")
            self.lines.append(f"  group @embed = split(({self.ends}) * (rank % {span} + 1) - 1, rank)")

    def receive(self, kind, m, s, when):
        """The recv of what action (kind, m) of stage s needs, or None."""
        if kind == "F" and s > 0:
            return f"%a.m{m}.s{s}.in", f"recv from (rank - {self.span}) : {self.act_type}{when}"
        if kind == "B" and s < self.last:
            return f"%d.m{m}.s{s}.out", f"recv from (rank + {self.span}) : {self.act_type}{when}"
        return None

    def send(self, value, peer, s, when):
        # A stage that sends a gradient down and next receives an activation
        # from the same neighbour receives first: that neighbour is sending
        # it now and only then receives the gradient (sends block until
        # received; this is the order that pairs 1F1B's crossing transfers).
        self.step[s] += 1
        if value and peer.startswith("-") and self.step[s] < len(self.plans[s]):
            kind, m = self.plans[s][self.step[s]]
            if kind == "F":
                got = self.receive(kind, m, s, when)
                self.lines.append(f"  {got[0]} = {got[1]}")
                self.posted[s] = got[0]
        if value:
            self.lines.append(f"  send {value} to (rank {peer}){when}")

    def arrive(self, kind, m, s, when):
        if self.posted[s]:
            self.posted[s] = None  # received before the last send
            return
        got = self.receive(kind, m, s, when)
        self.lines.append(f"  {got[0]} = {got[1]}")

    def _blocks(self, s, m, x, when, backward):
        """Every split block of stage s's layers, in the direction's order,
        each followed by its all_reduce over @tp; returns the last value."""
        shape, costs, tp = self.shape, self.costs, self.tp
        layers = reversed(self.stage_layers[s]) if backward else self.stage_layers[s]
        fn, v, r, scale = ("bwd", "q", "z", 2) if backward else ("fwd", "p", "y", 1)
        for k in layers:
            for b in (reversed(shape.blocks[k]) if backward else shape.blocks[k]):
                tag = f"m{m}.l{k}.{ir_name(b)}"
                self.lines.append(f"  %{v}.{tag} = compute @{fn}.l{k}.{ir_name(b)}({x}) "
                                  f"cost({costs.of(flops=scale * shape.flops[k][b])}) : "
                                  f"{self.act_type}{when}")
                x = f"%{v}.{tag}"
                if tp > 1:
                    self.lines.append(f"  %{r}.{tag} = all_reduce sum %{v}.{tag} in @tp{when}")
                    x = f"%{r}.{tag}"
        return x

    def forward(self, m, s, when):
        shape, costs = self.shape, self.costs
        x = f"%a.m{m}.s{s}.in"
        if s == 0:
            self.lines.append(f"  {x} = compute @fwd.embed cost({costs.of(flops=shape.pre)}) : "
                              f"{self.act_type}{when}")
        else:
            self.arrive("F", m, s, when)
        x = self._blocks(s, m, x, when, backward=False)
        if s == self.last:
            self.lines.append(f"  %loss.m{m} = compute @fwd.head({x}) "
                              f"cost({costs.of(flops=shape.post)}) : f32{when}")
        self.send(x if s < self.last else None, f"+ {self.span}", s, when)

    def backward(self, m, s, when):
        shape, costs = self.shape, self.costs
        d = f"%d.m{m}.s{s}.out"
        if s == self.last:
            self.lines.append(f"  {d} = compute @bwd.head(%loss.m{m}) "
                              f"cost({costs.of(flops=2 * shape.post)}) : {self.act_type}{when}")
        else:
            self.arrive("B", m, s, when)
        d = self._blocks(s, m, d, when, backward=True)
        self.last_bwd[s] = d
        if s == 0:
            self.lines.append(f"  compute @bwd.embed({d}) cost({costs.of(flops=2 * shape.pre)})"
                              f"{when}")
        self.send(d if s > 0 else None, f"- {self.span}", s, when)

    def actions(self):
        for kind, m, s in interleave(self.schedule, self.pp, self.microbatches):
            when = f" when {self.on[s]}"
            self.lines.append("")
            self.lines.append(f"  // micro-batch {m}, stage {s}, "
                              f"{'forward' if kind == 'F' else 'backward'}")
            (self.forward if kind == "F" else self.backward)(m, s, when)

    def averaging(self):
        # Megatron averages over the data-parallel group after every step, also
        # when the group is one rank (its DDP wrapper issues the all_reduce).
        shape, lines = self.shape, self.lines
        lines += ["", "  // data-parallel averaging of each layer's gradient shard, once the "
                      "stage's last backward is done"]
        for s in range(self.pp):
            names = [f"%g.l{k}" for k in self.stage_layers[s]]
            types = [type_of(shape.ref.dtype, [shape.grad_elems[k]]) for k in self.stage_layers[s]]
            lines.append(f"  {', '.join(names)} = compute @grads.s{s}({self.last_bwd[s]}) : "
                         f"{', '.join(types)} when {self.on[s]}")
            for k in self.stage_layers[s]:
                lines.append(f"  %r.l{k} = all_reduce avg %g.l{k} in @dp when {self.on[s]}")
        if self.tied:
            t = shape.tied[0]
            rows = t.shape[0] // self.tp if t.shape[0] % self.tp == 0 else t.shape[0]
            lines += ["", "  // the tied embedding: the first stage's input embedding and the "
                          "last stage's head"]
            lines.append(f"  %g.embed = compute @grads.embed : "
                         f"{type_of(t.dtype, [rows, *t.shape[1:]])} when {self.ends}")
            lines.append(f"  %r.embed = all_reduce sum %g.embed in @embed when {self.ends}")


def trace_tp_pp(module, example_inputs, tp=1, pp=1, microbatches=1, schedule="1f1b",
                world=None, layers=None, boundaries=None, device_class="h100",
                program="tp_pp", cost=None, title=None):
    """The IR text of one training step of module with tensor parallel `tp`,
    pipeline parallel `pp` over `microbatches` micro-batches (the example
    inputs are one), on `world` ranks (default tp x pp; a multiple of it
    adds data parallel). `boundaries` are the first layer of stages 1..pp-1
    (default: layers split evenly)."""
    world = _check_args(tp, pp, microbatches, schedule, world, cost)
    costs = Costs("flops", device_class)
    inputs = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
    layers_name = layers or _largest_module_list(module)
    shape = _Shape(module, inputs, layers_name, tp)
    stage_layers = _stage_layers(shape.n, pp, boundaries)
    w = _StepWriter(shape, tp, pp, world // (tp * pp), microbatches, schedule, stage_layers, costs)
    w.header(title or type(module).__name__, layers_name, world, program)
    w.actions()
    w.averaging()
    w.lines.append("}")
    return "\n".join(w.lines) + "\n"
