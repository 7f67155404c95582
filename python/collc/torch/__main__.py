"""python3 -m collc.torch MODULE:FACTORY --strategy ddp|fsdp|tp-pp ... -o X.coll

FACTORY is a function in MODULE (imported by name, so MODULE must be on
sys.path) that takes no arguments and returns (module, example_inputs); the
example inputs are a tuple of positional arguments (or one tensor). Exit 0 on
success, 1 when tracing fails (the message says why), 2 on a usage error."""

import argparse
import importlib
import sys

from . import TraceError, trace_ddp, trace_fsdp, trace_tp_pp
from ._costs import COST_MODES, OPTIMIZERS
from ._devices import DEVICE_CLASSES
from ._tppp import SCHEDULES

STRATEGIES = ("ddp", "fsdp", "tp-pp")


def _factory(spec):
    mod, sep, fn = spec.partition(":")
    if not sep or not mod or not fn:
        raise ValueError(f"{spec!r} is not MODULE:FACTORY (e.g. collc.torch.models.gpt2:gpt2_124m)")
    try:
        obj = importlib.import_module(mod)
    except ImportError as e:
        raise ValueError(f"cannot import module {mod!r}: {e}") from e
    if not callable(getattr(obj, fn, None)):
        raise ValueError(f"module {mod!r} has no function {fn!r}")
    return getattr(obj, fn)


def _ints(text):
    try:
        return [int(x) for x in text.split(",") if x]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of integers")


def parser():
    ap = argparse.ArgumentParser(prog="python3 -m collc.torch",
                                 description="Write the IR of a model's training step.")
    ap.add_argument("factory", help="MODULE:FACTORY, a function returning (module, example_inputs)")
    ap.add_argument("--strategy", choices=STRATEGIES, default="ddp")
    ap.add_argument("--world", type=int, default=None,
                    help="ranks (default 8 for ddp and fsdp, tp x pp for tp-pp)")
    ap.add_argument("--device-class", choices=sorted(DEVICE_CLASSES), default="h100")
    ap.add_argument("--cost", choices=COST_MODES, default=None,
                    help="compute costs: the measured CPU profile or the FLOP estimate "
                         "(default: flops for a model on the meta device, else measured; "
                         "fsdp and tp-pp: flops)")
    ap.add_argument("--program", default=None, help="the program's name (@NAME; default the strategy)")
    ap.add_argument("--title", default=None,
                    help="the model's name in the header comment (default: its class name)")
    ap.add_argument("--optimizer", choices=sorted(OPTIMIZERS), default="adam",
                    help="the optimizer step whose bytes the @optimizer compute costs "
                         "(ddp and fsdp)")
    fsdp = ap.add_argument_group("fsdp")
    fsdp.add_argument("--wrap", default="", help="CLASS[,CLASS]: module classes or names to wrap")
    tppp = ap.add_argument_group("tp-pp")
    tppp.add_argument("--tp", type=int, default=1, help="tensor-parallel degree")
    tppp.add_argument("--pp", type=int, default=1, help="pipeline stages")
    tppp.add_argument("--microbatches", type=int, default=1,
                      help="micro-batches a step (the example inputs are one)")
    tppp.add_argument("--schedule", choices=SCHEDULES, default="1f1b")
    tppp.add_argument("--layers", default=None,
                      help="the nn.ModuleList of layers (default: the largest)")
    tppp.add_argument("--boundaries", type=_ints, default=None,
                      help="L1,L2,...: the first layer of stages 1..pp-1 (default: even)")
    ap.add_argument("-o", "--output", default="-", help="the .coll file to write (- for stdout)")
    return ap


def trace(args, module, inputs):
    """The IR text of `module` traced as `args` (parsed by parser()) ask."""
    program = args.program or args.strategy.replace("-", "_")
    common = dict(device_class=args.device_class, program=program, cost=args.cost,
                  title=args.title)
    if args.strategy == "ddp":
        return trace_ddp(module, inputs, world=8 if args.world is None else args.world,
                         optimizer=args.optimizer, **common)
    if args.strategy == "fsdp":
        return trace_fsdp(module, inputs, [w for w in args.wrap.split(",") if w],
                          world=8 if args.world is None else args.world,
                          optimizer=args.optimizer, **common)
    return trace_tp_pp(module, inputs, tp=args.tp, pp=args.pp, microbatches=args.microbatches,
                       schedule=args.schedule, world=args.world, layers=args.layers,
                       boundaries=args.boundaries, **common)


def main(argv=None):
    args = parser().parse_args(argv)
    try:
        factory = _factory(args.factory)
    except ValueError as e:
        print(f"collc.torch: {e}", file=sys.stderr)
        return 2
    try:
        made = factory()
        if not (isinstance(made, tuple) and len(made) == 2):
            raise TraceError(f"{args.factory} returned {type(made).__name__}, "
                             "expected (module, example_inputs)")
        text = trace(args, made[0], made[1])
    except (TraceError, ValueError) as e:
        print(f"collc.torch: {args.factory}: {e}", file=sys.stderr)
        return 1
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
