"""python3 -m collc.torch MODULE:FACTORY --strategy ddp --world N -o X.coll

FACTORY is a function in MODULE (imported by name, so MODULE must be on
sys.path) that takes no arguments and returns (module, example_inputs); the
example inputs are a tuple of positional arguments (or one tensor). Exit 0 on
success, 1 when tracing fails (the message says why), 2 on a usage error or a
strategy not built yet."""

import argparse
import importlib
import sys

from . import TraceError, trace_ddp
from ._devices import DEVICE_CLASSES

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


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m collc.torch",
                                 description="Write the IR of a model's training step.")
    ap.add_argument("factory", help="MODULE:FACTORY, a function returning (module, example_inputs)")
    ap.add_argument("--strategy", choices=STRATEGIES, default="ddp")
    ap.add_argument("--world", type=int, default=8)
    ap.add_argument("--device-class", choices=sorted(DEVICE_CLASSES), default="h100")
    ap.add_argument("--program", default="ddp", help="the program's name (@NAME)")
    ap.add_argument("-o", "--output", default="-", help="the .coll file to write (- for stdout)")
    args = ap.parse_args(argv)
    if args.strategy != "ddp":
        print(f"collc.torch: strategy {args.strategy} is not built yet (only ddp)", file=sys.stderr)
        return 2
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
        text = trace_ddp(made[0], made[1], world=args.world, device_class=args.device_class,
                         program=args.program)
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
