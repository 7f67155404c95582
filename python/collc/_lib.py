"""libcollc.so through ctypes: where it is found, the C signatures, and the
one place a collcResult_t becomes a Python exception.

The package calls the C API (api/include/collc/collc.h) and nothing else, so
its arguments are checked where C callers' are, and its errors carry the
same text (collcGetLastError)."""

import atexit
import ctypes
import operator
import os
import pathlib

ENV_VAR = "COLLC_LIBRARY"

# collcResult_t (collc.h), by value.
RESULT_NAMES = ["collcSuccess", "collcInvalidArgument", "collcInvalidUsage",
                "collcSystemError", "collcInternalError", "collcTimeout",
                "collcMismatch", "collcUnsupported", "collcRemoteError"]
SUCCESS = 0
INVALID_USAGE = 2
TIMEOUT = 5
UNSUPPORTED = 7


class Error(Exception):
    """A collc function failed: .result is its collcResult_t (an int; .name
    spells it), .text the C library's last-error text for the call."""

    def __init__(self, result, text):
        self.result = result
        self.name = RESULT_NAMES[result] if 0 <= result < len(RESULT_NAMES) else str(result)
        self.text = text
        super().__init__(f"{self.name}: {text}")


class UnsupportedError(Error, NotImplementedError):
    """collcUnsupported: this build or machine cannot do it (the text says
    why); a NotImplementedError too."""


def _candidates():
    """Where libcollc.so may be, in order (docs/python.md)."""
    here = pathlib.Path(__file__).resolve().parent
    env = os.environ.get(ENV_VAR)
    if env:
        return [pathlib.Path(env)], True
    return [
        # Installed: PREFIX/LIBDIR/python3/site-packages/collc -> PREFIX/LIBDIR.
        here.parents[2] / "libcollc.so",
        # The source tree's package with the build tree `build/` beside it.
        here.parents[1] / "build" / "lib" / "libcollc.so",
    ], False


def _load():
    paths, from_env = _candidates()
    for p in paths:
        if p.exists():
            return ctypes.CDLL(str(p))
    if from_env:
        raise ImportError(f"collc: {ENV_VAR} is {paths[0]}, which does not exist: expected "
                          "the path of libcollc.so")
    raise ImportError("collc: libcollc.so not found at " + ", ".join(map(str, paths)) +
                      f": set {ENV_VAR} to its path, or build it (cmake --build build)")


lib = _load()

c_int64_p = ctypes.POINTER(ctypes.c_int64)
COMPUTE_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32, ctypes.c_void_p)


class CompileOptions(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("pipeline", ctypes.c_char_p),
                ("bucketPolicy", ctypes.c_char_p), ("world", ctypes.c_int64),
                ("align", ctypes.c_uint64), ("views", ctypes.c_int),
                ("sourceName", ctypes.c_char_p), ("memoryBudget", ctypes.c_uint64)]


class DumpOptions(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("format", ctypes.c_int), ("explain", ctypes.c_int),
                ("link", ctypes.c_char_p), ("rank", ctypes.c_int64),
                ("focusRank", ctypes.c_int64), ("focusBucket", ctypes.c_int64),
                ("focusSteps", ctypes.c_char_p)]


class SimResult(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("stepUs", ctypes.c_double),
                ("computeOnlyUs", ctypes.c_double), ("exposedCommUs", ctypes.c_double),
                ("commBusyUs", ctypes.c_double), ("slowestRank", ctypes.c_int64),
                # version 2
                ("peakMemoryBytes", ctypes.c_uint64), ("peakMemoryTensorBytes", ctypes.c_uint64),
                ("peakMemoryStagingBytes", ctypes.c_uint64),
                ("peakMemoryTensors", ctypes.c_int64), ("peakMemoryRank", ctypes.c_int64),
                ("peakMemoryComm", ctypes.c_int64)]


class ExecutorOptions(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("backend", ctypes.c_char_p),
                ("rendezvous", ctypes.c_char_p), ("timeoutMs", ctypes.c_int64),
                ("digestHandshake", ctypes.c_int), ("device", ctypes.c_int64),
                ("asyncReplay", ctypes.c_int)]


_P = ctypes.c_void_p
_PP = ctypes.POINTER(ctypes.c_void_p)
_S = ctypes.c_char_p
_SP = ctypes.POINTER(ctypes.c_char_p)
# Strings the caller frees come back as void* so that collcFree gets the
# pointer itself, not a Python copy.
_OWNED = ctypes.POINTER(ctypes.c_void_p)

# The structs' Init is the sized call, given ctypes.sizeof the struct above
# (what collc.h's Init macros pass): the unsized symbol of each fills only
# version 1 of its struct (docs/c-api.md, "Versioned structs").
_SIGNATURES = {
    "collcGetErrorString": (ctypes.c_char_p, [ctypes.c_int]),
    "collcGetLastError": (ctypes.c_char_p, []),
    "collcFree": (None, [_P]),
    "collcGetVersion": (ctypes.c_int, [ctypes.POINTER(ctypes.c_int)]),
    "collcCompileOptionsInitSized": (ctypes.c_int, [ctypes.POINTER(CompileOptions),
                                                    ctypes.c_size_t]),
    "collcCompile": (ctypes.c_int, [_S, ctypes.POINTER(CompileOptions), _PP]),
    "collcPlanLoad": (ctypes.c_int, [_S, _PP]),
    "collcPlanLoadFile": (ctypes.c_int, [_S, _PP]),
    "collcPlanSave": (ctypes.c_int, [_P, _S]),
    "collcPlanText": (ctypes.c_int, [_P, _OWNED]),
    "collcPlanDigest": (ctypes.c_int, [_P, _SP]),
    "collcPlanWorld": (ctypes.c_int, [_P, c_int64_p]),
    "collcPlanTensorType": (ctypes.c_int, [_P, _S, _SP, c_int64_p,
                                           ctypes.POINTER(c_int64_p)]),
    "collcPlanDiff": (ctypes.c_int, [_P, _P, _OWNED]),
    "collcPlanDestroy": (ctypes.c_int, [_P]),
    "collcDumpOptionsInitSized": (ctypes.c_int, [ctypes.POINTER(DumpOptions),
                                                 ctypes.c_size_t]),
    "collcPlanDump": (ctypes.c_int, [_P, ctypes.POINTER(DumpOptions), _OWNED]),
    "collcSimResultInitSized": (ctypes.c_int, [ctypes.POINTER(SimResult),
                                               ctypes.c_size_t]),
    "collcPlanSimulate": (ctypes.c_int, [_P, _S, ctypes.POINTER(SimResult)]),
    "collcExecutorOptionsInitSized": (ctypes.c_int, [ctypes.POINTER(ExecutorOptions),
                                                     ctypes.c_size_t]),
    "collcExecutorCreate": (ctypes.c_int, [_P, ctypes.c_int64, ctypes.POINTER(ExecutorOptions),
                                           _PP]),
    "collcExecutorRank": (ctypes.c_int, [_P, c_int64_p]),
    "collcExecutorMemory": (ctypes.c_int, [_P, ctypes.POINTER(ctypes.c_int)]),
    "collcExecutorBind": (ctypes.c_int, [_P, _S, _P, ctypes.c_size_t]),
    "collcExecutorBindDevice": (ctypes.c_int, [_P, _S, _P, ctypes.c_size_t]),
    "collcExecutorSetStream": (ctypes.c_int, [_P, _P]),
    "collcExecutorTensor": (ctypes.c_int, [_P, _S, _PP, ctypes.POINTER(ctypes.c_size_t)]),
    "collcExecutorUnbound": (ctypes.c_int, [_P, ctypes.POINTER(ctypes.c_size_t), _SP]),
    "collcExecutorCapture": (ctypes.c_int, [_P]),
    "collcExecutorReplay": (ctypes.c_int, [_P, COMPUTE_FN, _P]),
    "collcExecutorSynchronize": (ctypes.c_int, [_P, ctypes.c_int64]),
    "collcExecutorDestroy": (ctypes.c_int, [_P]),
    "collcFinalize": (ctypes.c_int, []),
    "collcExecutorRecordTo": (ctypes.c_int, [_P, _S, ctypes.c_int]),
    "collcExecutorRecordDump": (ctypes.c_int, [_P, _S]),
}


def declare(signatures):
    """Sets the ctypes signature of each function of `signatures` (name ->
    (result type, argument types)), as the other modules' tables do too."""
    for name, (res, args) in signatures.items():
        f = getattr(lib, name)
        f.restype = res
        f.argtypes = args


declare(_SIGNATURES)


def error_for(result, text=None):
    """The exception of \\p result with this thread's last-error text."""
    if text is None:
        text = lib.collcGetLastError().decode("utf-8", "replace")
    cls = UnsupportedError if result == UNSUPPORTED else Error
    return cls(result, text)


def check(result):
    """Raises the Error of a failed call; the last error is read at once,
    on the calling thread, before any other collc call can clear it."""
    if result != SUCCESS:
        raise error_for(result)


def call(name, *args):
    check(getattr(lib, name)(*args))


def encode(s, name):
    """`s` (argument `name`) as the NUL-terminated UTF-8 a C string is, or
    None for None. A NUL inside it raises ValueError, as open() does: C
    would read the text up to the NUL and silently drop the rest."""
    if s is None:
        return None
    at = s.find("\0")
    if at >= 0:
        raise ValueError(f"{name} has a NUL character at index {at}: expected text without "
                         "NUL (a C string ends at the first)")
    return s.encode("utf-8")


def integer(value, name, ctype=ctypes.c_int64):
    """`value` (argument `name`) as an int that C type `ctype` holds, or
    ValueError: ctypes would wrap it silently (2**64 + 1 as an int64_t is
    1); TypeError for what is not an int."""
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} is {type(value).__name__}: expected an int") from None
    bits = 8 * ctypes.sizeof(ctype)
    signed = ctype(-1).value < 0
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if not low <= v <= high:
        raise ValueError(f"{name} is {v}: expected {low}..{high} (the range of its C type, "
                         f"{ctype.__name__})")
    return v


def take_string(name, *args):
    """Calls \\p name with a trailing `char **` out-argument and returns the
    string, freed with collcFree."""
    out = ctypes.c_void_p()
    call(name, *args, ctypes.byref(out))
    try:
        return ctypes.string_at(out.value).decode("utf-8") if out.value else ""
    finally:
        lib.collcFree(out)


def finalize():
    """collcFinalize: ends MPI if collc started it, once every executor is
    closed (an Error while one is open). Also tried at interpreter exit."""
    call("collcFinalize")


def _finalize_at_exit():
    # Refused while an executor is still open: then the library's statics
    # finalize MPI when the process exits.
    lib.collcFinalize()


atexit.register(_finalize_at_exit)


def version():
    v = ctypes.c_int()
    call("collcGetVersion", ctypes.byref(v))
    return v.value
