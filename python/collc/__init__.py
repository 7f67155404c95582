"""collc from Python: compile a program's collectives to a plan, look at it,
and replay it every step over numpy arrays and torch tensors, on the local,
mpi and gloo backends; and eager collectives op by op (Communicator). A thin
layer over the C API (libcollc.so, collc.h) through ctypes; docs/python.md
says why, and how the library is found."""

from ._lib import Error, UnsupportedError, finalize, version
from ._plan import Plan, SimResult, TensorType, compile, load
from ._executor import Executor
from ._comm import Communicator, Pending, Place, launcher_place
from ._store import register_store

__all__ = ["Error", "UnsupportedError", "Plan", "SimResult", "TensorType", "Executor",
           "Communicator", "Pending", "Place", "compile", "finalize", "launcher_place", "load",
           "register_store", "version"]
