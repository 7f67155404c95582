"""FSDP tracing (full shard): the program of one training step as
torch.distributed.fsdp runs it over the units a wrap policy makes.

Units are the modules whose class name or qualified name is in `wrap`, plus
the root, as FSDP always wraps the root. A unit owns the parameters below it
that no nested unit owns, flattened into one flat parameter padded to a
multiple of the world size (FSDP's FlatParameter); each rank keeps one
shard of it. One forward (on the meta device it allocates nothing) shows
the order in which units run; FSDP then issues, per unit:

- before its forward, an all_gather of its shard (the root's first: FSDP's
  root pre-forward runs before any child's);
- before its backward, the all_gather again, since FULL_SHARD frees the
  gathered parameter after forward; not for the root, which FSDP keeps
  gathered from forward to backward;
- once its backward is complete, a reduce_scatter avg of its flat gradient
  (FSDP's post-backward hook on the flat parameter).

Backward runs the units in reverse order of forward (FSDP's pre-backward
hooks fire as the output gradient reaches each unit). Prefetching (FSDP's
backward_prefetch) is not written: it is a schedule, which collc's passes
decide. Compute costs are the FLOP estimate of _record.py, per run of
consecutive module calls inside one unit."""

from ._costs import Costs
from ._irtext import TraceError, ir_name, ir_type, wrap
from ._record import Recorder, param_flops


def units_of(module, wrap_spec):
    """The units' qualified names ("" the root) in named_modules order, and
    each unit's flat parameters as (unit, [(name, tensor)]) pairs: a shared
    tensor is owned by the first unit that reaches it."""
    wanted = set(wrap_spec)
    names = [""]
    for name, m in module.named_modules():
        if name and (type(m).__name__ in wanted or name in wanted):
            names.append(name)
    matched = {type(m).__name__ for n, m in module.named_modules() if n in names} | set(names)
    missing = sorted(w for w in wanted if w not in matched)
    if missing:
        raise TraceError(f"wrap names {missing} match no module class or module name of "
                         f"{type(module).__name__}")

    def unit_of(param_name):
        # The deepest unit whose name is a prefix of the parameter's path.
        best = ""
        for u in names:
            if u and param_name.startswith(u + ".") and len(u) > len(best):
                best = u
        return best

    owned, seen = {u: [] for u in names}, set()
    for name, p in module.named_parameters():
        if p.requires_grad and id(p) not in seen:
            seen.add(id(p))
            owned[unit_of(name)].append((name, p))
    for u, params in owned.items():
        dtypes = sorted({str(p.dtype) for _, p in params})
        if len(dtypes) > 1:
            raise TraceError(f"unit {u or 'root'} mixes dtypes {dtypes}; FSDP flattens a "
                             "unit's parameters into one tensor of one dtype")
    return names, owned


def _unit_label(u):
    return ir_name(u) if u else "root"


def trace_fsdp(module, example_inputs, wrap_spec, world=8, device_class="h100",
               program="fsdp", group="fsdp", cost=None, title=None, optimizer="adam"):
    """The IR text of one FSDP (full shard) training step of module on
    `world` ranks, its units made by `wrap_spec` (module class names or
    qualified module names). The optimizer step (`optimizer`: "adam" or
    "sgd-momentum") updates this rank's shards and costs the bytes it moves
    over the device class's memory bandwidth."""
    if not isinstance(world, int) or world < 1:
        raise TraceError(f"world must be a positive integer, not {world!r}")
    if not wrap_spec:
        raise TraceError("fsdp needs at least one module class or name to wrap (--wrap)")
    names, owned = units_of(module, wrap_spec)
    params = [pr for u in names for pr in owned[u]]
    if not params:
        raise TraceError("the module has no parameter that requires a gradient")
    if cost not in (None, "flops"):
        raise TraceError("fsdp traces costs from the FLOP estimate only (cost='flops')")
    costs = Costs("flops", device_class)

    inputs = example_inputs if isinstance(example_inputs, tuple) else (example_inputs,)
    with Recorder(module) as rec:
        module(*inputs)
    unit_of_param = {n: u for u in names for n, _ in owned[u]}

    # Segments: runs of consecutive calls whose parameters belong to one unit.
    name_of = {id(p): n for n, p in params}
    segments = []  # [unit, forward flops]
    for call in rec.calls:
        here = [p for p in call.module.parameters(recurse=False) if id(p) in name_of]
        if not here:
            continue
        u = unit_of_param[name_of[id(here[0])]]
        f = sum(param_flops(call.module, p, call.rows) for p in here)
        if segments and segments[-1][0] == u:
            segments[-1][1] += f
        else:
            segments.append([u, f])
    used = [u for u in names if owned[u]]
    ran = {u for u, _ in segments}
    idle = [_unit_label(u) for u in used if u not in ran]
    if idle:
        raise TraceError(f"units {idle} own parameters but ran no module in forward")

    sizes = {}
    for u in used:
        n = sum(p.numel() for _, p in owned[u])
        sizes[u] = -(-n // world) * world  # FSDP pads the flat parameter to the world
    ref = {u: owned[u][0][1] for u in used}
    step_cost, step_words = costs.optimizer(
        optimizer, [(sizes[u] // world, ref[u].element_size(), ref[u].element_size())
                    for u in used])

    lines = wrap(
        f"{title or type(module).__name__} trained with FSDP (full shard) on {world} ranks, traced by "
        f"collc.torch: {len(used)} units ({', '.join(sorted(set(wrap_spec)))} and the root), "
        "each a flat parameter padded to a multiple of the world, one shard a rank. In the "
        "order one forward ran them: all_gather a unit's shard before its forward and again "
        "before its backward (the root's stays gathered), reduce_scatter avg its flat "
        "gradient when its backward is done; backward runs the units in reverse. The scalar "
        "%f.* and %b.* values only order the computes (activations are not modelled). "
        f"Costs: {costs.words}.")
    lines += wrap(step_words)
    lines += [f"program @{program} world({world}) {{", f"  group @{group} = world", "",
              "  // this rank's shards, as the previous optimizer step left them"]
    shard = {u: f"%s.{_unit_label(u)}" for u in used}
    lines.append(f"  {', '.join(shard[u] for u in used)} = compute @shards : "
                 f"{', '.join(ir_type(ref[u], [sizes[u] // world]) for u in used)}")

    lines += ["", "  // forward"]
    gathered, prev, labels, fwd_tokens = {}, None, [], []
    for k, (u, f) in enumerate(segments):
        if u not in gathered:
            gathered[u] = f"%w.{_unit_label(u)}"
            lines.append(f"  {gathered[u]} = all_gather {shard[u]} in @{group}")
        again = sum(1 for v, _ in segments[:k] if v == u)  # a unit's later runs: .2, .3
        label = _unit_label(u) + (f".{again + 1}" if again else "")
        labels.append(label)
        args = ", ".join(([prev] if prev else []) + [gathered[u]])
        token = f"%f.{label}"
        lines.append(f"  {token} = compute @fwd.{label}({args}) cost({costs.of(flops=f)}) : f32")
        fwd_tokens.append(token)
        prev = token

    lines += ["", "  // backward, units in reverse"]
    first_seg = {}
    for k, (u, _) in enumerate(segments):
        first_seg.setdefault(u, k)
    regathered, grads = {"": gathered.get("")}, []
    for k in reversed(range(len(segments))):
        u, f = segments[k]
        if u not in regathered:
            regathered[u] = f"%wb.{_unit_label(u)}"
            lines.append(f"  {regathered[u]} = all_gather {shard[u]} in @{group}")
        token = f"%b.{labels[k]}"
        results, types = [token], ["f32"]
        done = first_seg[u] == k  # its first forward segment is its last in backward
        if done:
            results.append(f"%g.{_unit_label(u)}")
            types.append(ir_type(ref[u], [sizes[u]]))
        lines.append(f"  {', '.join(results)} = compute @bwd.{labels[k]}({prev}, "
                     f"{regathered[u]}) cost({costs.of(flops=2 * f)}) : {', '.join(types)}")
        prev = token
        if done:
            grads.append(f"%gs.{_unit_label(u)}")
            lines.append(f"  {grads[-1]} = reduce_scatter avg %g.{_unit_label(u)} in @{group}")
    lines.append(f"  compute @optimizer({', '.join(grads)}) cost({step_cost})")
    lines.append("}")
    return "\n".join(lines) + "\n"
