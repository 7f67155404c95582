"""collc from Python: compile a program's collectives to a plan, look at it,
and replay it every step over numpy arrays and torch tensors, on the local,
mpi and gloo backends. A thin layer over the C API (libcollc.so, collc.h)
through ctypes; docs/python.md says why, and how the library is found."""

from ._lib import Error, UnsupportedError, finalize, version
from ._plan import Plan, SimResult, TensorType, compile, load
from ._executor import Executor

__all__ = ["Error", "UnsupportedError", "Plan", "SimResult", "TensorType", "Executor",
           "compile", "finalize", "load", "version"]
