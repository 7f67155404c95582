"""How a traced program's compute ops get their costs: "measured" (this CPU's
profile, scaled to a device class: varies from run to run) or "flops" (the
FLOP estimate of _record.py over the class's nominal rate: the same bytes on
every run, which is what a committed example needs). The header of every
program says which was used."""

from ._devices import DEVICE_CLASSES, scale_for

COST_MODES = ("measured", "flops")


class Costs:
    """Formats `cost(...)` durations for one program."""

    def __init__(self, how, device_class):
        if how not in COST_MODES:
            raise ValueError(f"cost {how!r} is not known; expected one of {', '.join(COST_MODES)}")
        if device_class not in DEVICE_CLASSES:
            raise ValueError(f"device class {device_class!r} is not known; expected one of "
                             f"{', '.join(sorted(DEVICE_CLASSES))}")
        self.how = how
        if how == "measured":
            self._factor, self.words = scale_for(device_class)
            return
        peak = DEVICE_CLASSES[device_class]
        if peak is None:
            raise ValueError("cost 'flops' needs a device class with a nominal rate, not "
                             f"{device_class!r} (one of "
                             f"{', '.join(c for c in sorted(DEVICE_CLASSES) if DEVICE_CLASSES[c])})")
        self._per_ns = peak * 1e3  # TFLOP/s as FLOPs per nanosecond
        self.words = (f"a FLOP estimate from parameter shapes and the example inputs' rows "
                      f"(collc.torch, docs/torch.md: 2 x rows x elements per matrix, rows x "
                      f"width per vector or embedding, backward twice forward) over "
                      f"{device_class}'s nominal dense rate ({peak:g} TFLOP/s)")

    def of(self, ns=0, flops=0):
        """The duration of a compute: `ns` measured CPU nanoseconds or `flops`
        estimated FLOPs, as the IR writes it (a whole number of ns, at least 1)."""
        t = ns * self._factor if self.how == "measured" else flops / self._per_ns
        return f"{max(1, round(t))}ns"
