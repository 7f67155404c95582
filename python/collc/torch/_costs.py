"""How a traced program's compute ops get their costs: "measured" (this CPU's
profile, scaled to a device class: varies from run to run) or "flops" (the
FLOP estimate of _record.py over the class's nominal rate: the same bytes on
every run, which is what a committed example needs). The header of every
program says which was used."""

from ._devices import DEVICE_CLASSES, memory_tbs_for, scale_for

COST_MODES = ("measured", "flops")

# The optimizer step a trace prices: the state tensors it keeps per
# parameter (torch's Adam: exp_avg and exp_avg_sq; SGD with momentum: the
# momentum buffer), each the parameter's dtype. One step reads a parameter's
# gradient and reads and writes the parameter and each state once.
OPTIMIZERS = {"adam": 2, "sgd-momentum": 1}
_OPTIMIZER_WORDS = {"adam": "Adam", "sgd-momentum": "SGD with momentum"}


def optimizer_bytes(optimizer, tensors):
    """The bytes one step of `optimizer` moves for `tensors`, a list of
    (elements, parameter bytes per element, gradient bytes per element)."""
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer {optimizer!r} is not known; expected one of "
                         f"{', '.join(OPTIMIZERS)}")
    rw = 2 * (1 + OPTIMIZERS[optimizer])  # the parameter and its states, read and written
    return sum(n * (g + rw * p) for n, p, g in tensors)


class Costs:
    """Formats `cost(...)` durations for one program."""

    def __init__(self, how, device_class):
        if how not in COST_MODES:
            raise ValueError(f"cost {how!r} is not known; expected one of {', '.join(COST_MODES)}")
        if device_class not in DEVICE_CLASSES:
            raise ValueError(f"device class {device_class!r} is not known; expected one of "
                             f"{', '.join(sorted(DEVICE_CLASSES))}")
        self.how = how
        self.device_class = device_class
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

    def optimizer(self, optimizer, tensors):
        """(cost, words): the `cost(...)` duration of one `optimizer` step over
        `tensors` ((elements, parameter bytes, gradient bytes) each: what the
        rank updates), its bytes over the device class's memory bandwidth
        (the trace runs no optimizer, so it is not measured); and the
        header's sentence saying so."""
        nbytes = optimizer_bytes(optimizer, tensors)
        tbs, where = memory_tbs_for(self.device_class)
        states = OPTIMIZERS[optimizer]
        words = (f"The optimizer ({_OPTIMIZER_WORDS[optimizer]}: per parameter it reads the "
                 f"gradient, and reads and writes the parameter and {states} state "
                 f"tensor{'s' if states > 1 else ''} of its dtype) costs its bytes, "
                 f"{nbytes} for the parameters this rank updates, over {where}.")
        return f"{max(1, round(nbytes / (tbs * 1e3)))}ns", words

    def of(self, ns=0, flops=0):
        """The duration of a compute: `ns` measured CPU nanoseconds or `flops`
        estimated FLOPs, as the IR writes it (a whole number of ns, at least 1)."""
        t = ns * self._factor if self.how == "measured" else flops / self._per_ns
        return f"{max(1, round(t))}ns"
