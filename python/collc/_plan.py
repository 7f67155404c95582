"""Plans: compile, load, look at them (collc.h's plan and dump functions)."""

import ctypes
import os

from . import _lib
from ._handle import OwnedHandle
from ._lib import call, encode, integer, take_string

# collcDumpFormat_t, by the names `collc dump --format` takes.
DUMP_FORMATS = {"text": 0, "json": 1, "dot": 2, "trace": 3, "nccl": 4}


class TensorType:
    """A tensor's element type ("f32", "bf16", ...) and shape."""

    def __init__(self, elem, shape):
        self.elem = elem
        self.shape = tuple(shape)

    def __eq__(self, other):
        return isinstance(other, TensorType) and (self.elem, self.shape) == (other.elem,
                                                                              other.shape)

    def __repr__(self):
        return f"{self.elem}[{', '.join(map(str, self.shape))}]"


class SimResult:
    """One simulated step (collcSimResult_t): times in microseconds, and the
    plan's peak communication memory per rank in bytes, as `collc simulate`
    states it (docs/passes.md, "Peak memory"): `peak_memory_bytes` of which
    `peak_memory_tensor_bytes` are tensors communication makes and
    `peak_memory_staging_bytes` pack/unpack buffers, `peak_memory_tensors`
    tensors live then, reached on `peak_memory_rank` at the launch of comm
    `peak_memory_comm` (None when no communication allocates)."""

    def __init__(self, r):
        self.step_us = r.stepUs
        self.compute_only_us = r.computeOnlyUs
        self.exposed_comm_us = r.exposedCommUs
        self.comm_busy_us = r.commBusyUs
        self.slowest_rank = r.slowestRank
        self.peak_memory_bytes = r.peakMemoryBytes
        self.peak_memory_tensor_bytes = r.peakMemoryTensorBytes
        self.peak_memory_staging_bytes = r.peakMemoryStagingBytes
        self.peak_memory_tensors = r.peakMemoryTensors
        self.peak_memory_rank = r.peakMemoryRank
        self.peak_memory_comm = None if r.peakMemoryComm < 0 else r.peakMemoryComm

    def __repr__(self):
        return (f"SimResult(step_us={self.step_us}, compute_only_us={self.compute_only_us}, "
                f"exposed_comm_us={self.exposed_comm_us}, comm_busy_us={self.comm_busy_us}, "
                f"slowest_rank={self.slowest_rank}, "
                f"peak_memory_bytes={self.peak_memory_bytes}, "
                f"peak_memory_tensor_bytes={self.peak_memory_tensor_bytes}, "
                f"peak_memory_staging_bytes={self.peak_memory_staging_bytes}, "
                f"peak_memory_tensors={self.peak_memory_tensors}, "
                f"peak_memory_rank={self.peak_memory_rank}, "
                f"peak_memory_comm={self.peak_memory_comm})")


class Plan(OwnedHandle):
    """A compiled plan (a collcPlan_t). Executors made from it keep the C
    plan alive on their own, so a Plan may be collected before them."""

    _destroy = "collcPlanDestroy"

    def __init__(self, handle):
        self._handle = ctypes.c_void_p(handle)

    @property
    def digest(self):
        """"xxh64:<hex>": what every rank compares before it replays."""
        d = ctypes.c_char_p()
        call("collcPlanDigest", self.handle, ctypes.byref(d))
        return d.value.decode()

    @property
    def world(self):
        w = ctypes.c_int64()
        call("collcPlanWorld", self.handle, ctypes.byref(w))
        return w.value

    def text(self):
        """The plan file's text (docs/plan.md)."""
        return take_string("collcPlanText", self.handle)

    def save(self, path):
        call("collcPlanSave", self.handle, encode(os.fspath(path), "path"))

    def tensor_type(self, name):
        """The TensorType of tensor `name` (`g0` or `%g0`)."""
        elem = ctypes.c_char_p()
        rank = ctypes.c_int64()
        shape = _lib.c_int64_p()
        call("collcPlanTensorType", self.handle, encode(name, "name"), ctypes.byref(elem),
             ctypes.byref(rank), ctypes.byref(shape))
        return TensorType(elem.value.decode(), [shape[i] for i in range(rank.value)])

    def dump(self, format="text", explain=False, link=None, rank=0, focus_rank=-1,
             focus_bucket=-1, focus_steps=None):
        """The text `collc dump --format FORMAT` prints: text, json, dot,
        trace or nccl (the calls of rank `rank`)."""
        if format not in DUMP_FORMATS:
            raise ValueError(f"format is {format!r}: expected one of "
                             + ", ".join(DUMP_FORMATS))
        o = _lib.DumpOptions()
        call("collcDumpOptionsInitSized", ctypes.byref(o), ctypes.sizeof(o))
        o.format = DUMP_FORMATS[format]
        o.explain = int(bool(explain))
        o.link = encode(link, "link")
        o.rank = integer(rank, "rank")
        o.focusRank = integer(focus_rank, "focus_rank")
        o.focusBucket = integer(focus_bucket, "focus_bucket")
        o.focusSteps = encode(focus_steps, "focus_steps")
        return take_string("collcPlanDump", self.handle, ctypes.byref(o))

    def simulate(self, link=None):
        """One step simulated on link class `link` (None: h100-nvlink), or on
        a link file (a path from `collc bench --calibrate`)."""
        r = _lib.SimResult()
        call("collcSimResultInitSized", ctypes.byref(r), ctypes.sizeof(r))
        call("collcPlanSimulate", self.handle, encode(link, "link"), ctypes.byref(r))
        return SimResult(r)

    def diff(self, other):
        """What differs from `other`, one difference a line (collc diff);
        [] when the plans agree on everything ranks must agree on."""
        if not isinstance(other, Plan):
            raise TypeError(f"other is {type(other).__name__}: expected a collc.Plan")
        return take_string("collcPlanDiff", self.handle, other.handle).splitlines()

    def __repr__(self):
        return f"<collc.Plan {self.digest} world {self.world}>" if self._handle else \
            "<collc.Plan closed>"


def _new_plan(fn, *args):
    h = ctypes.c_void_p()
    call(fn, *args, ctypes.byref(h))
    return Plan(h.value)


def compile(text, world=0, bucket=None, passes=None, align=0, views=True, source_name=None,
            memory_budget=0):
    """Compiles program text to a Plan. `world` 0: the program's; `bucket`
    a bucket policy (ddp, fixed:25MiB, auto, none; None: ddp); `passes` a
    pipeline (docs/passes.md; not with `bucket`); `memory_budget` the peak
    communication memory per rank, in bytes, the schedule stays within (0:
    none; gathers are prefetched as PyTorch FSDP's default)."""
    o = _lib.CompileOptions()
    call("collcCompileOptionsInitSized", ctypes.byref(o), ctypes.sizeof(o))
    o.world = integer(world, "world")
    o.bucketPolicy = encode(bucket, "bucket")
    o.pipeline = encode(passes, "passes")
    o.align = integer(align, "align", ctypes.c_uint64)
    o.views = int(bool(views))
    o.sourceName = encode(source_name, "source_name")
    if not isinstance(memory_budget, int) or memory_budget < 0:
        raise ValueError(f"memory_budget is {memory_budget!r}: expected bytes, an int >= 0")
    o.memoryBudget = integer(memory_budget, "memory_budget", ctypes.c_uint64)
    return _new_plan("collcCompile", encode(text, "text"), ctypes.byref(o))


def load(path_or_text):
    """A Plan from plan text, or from the file at a path (a str that is not
    plan text, or an os.PathLike)."""
    if isinstance(path_or_text, str) and path_or_text.startswith("collc-plan"):
        return _new_plan("collcPlanLoad", encode(path_or_text, "path_or_text"))
    return _new_plan("collcPlanLoadFile", encode(os.fspath(path_or_text), "path_or_text"))
