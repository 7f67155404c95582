"""Eager communicators (collc.h's collcComm* functions): one group's
collectives op by op over numpy arrays and torch CPU tensors, each call
returning a Pending operation at once; and the launcher's place
(collcLauncherPlace)."""

import ctypes

from . import _dtypes, _lib
from ._handle import OwnedHandle
from ._lib import Error, call, encode, integer

INVALID_ARGUMENT = 1

TICKET = ctypes.c_uint64


class CommOptions(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("backend", ctypes.c_char_p),
                ("rendezvous", ctypes.c_char_p), ("group", ctypes.c_char_p),
                ("timeoutMs", ctypes.c_int64)]


_P = ctypes.c_void_p
_S = ctypes.c_char_p
_T = ctypes.POINTER(TICKET)
_U64P = ctypes.POINTER(ctypes.c_uint64)
_I64P = ctypes.POINTER(ctypes.c_int64)
_SIGNATURES = {
    "collcLauncherPlace": (ctypes.c_int, [_I64P, _I64P, _I64P, _I64P,
                                          ctypes.POINTER(ctypes.c_char_p)]),
    "collcCommOptionsInitSized": (ctypes.c_int, [ctypes.POINTER(CommOptions), ctypes.c_size_t]),
    "collcCommCreate": (ctypes.c_int, [ctypes.c_int64, ctypes.c_int64,
                                       ctypes.POINTER(CommOptions), ctypes.POINTER(_P)]),
    "collcCommAllReduce": (ctypes.c_int, [_P, _P, ctypes.c_uint64, _S, _S, _T]),
    "collcCommBroadcast": (ctypes.c_int, [_P, _P, ctypes.c_uint64, ctypes.c_int64, _T]),
    "collcCommAllGather": (ctypes.c_int, [_P, _P, _P, ctypes.c_uint64, _T]),
    "collcCommReduceScatter": (ctypes.c_int, [_P, _P, _P, ctypes.c_uint64, _S, _S, _T]),
    "collcCommAllToAll": (ctypes.c_int, [_P, _P, _P, _S, _U64P, _U64P, _T]),
    "collcCommSend": (ctypes.c_int, [_P, _P, ctypes.c_uint64, ctypes.c_int64, _T]),
    "collcCommRecv": (ctypes.c_int, [_P, _P, ctypes.c_uint64, ctypes.c_int64, _T]),
    "collcCommBarrier": (ctypes.c_int, [_P, _T]),
    "collcCommWait": (ctypes.c_int, [_P, TICKET, ctypes.c_int64]),
    "collcCommTest": (ctypes.c_int, [_P, TICKET, ctypes.POINTER(ctypes.c_int)]),
    "collcCommDestroy": (ctypes.c_int, [_P]),
}
_lib.declare(_SIGNATURES)


class Place:
    """Where this process stands in its run, as its launcher says."""

    def __init__(self, rank, world, local_rank, local_world, launcher):
        self.rank, self.world = rank, world
        self.local_rank, self.local_world, self.launcher = local_rank, local_world, launcher

    def __repr__(self):
        return (f"Place(rank={self.rank}, world={self.world}, local_rank={self.local_rank}, "
                f"local_world={self.local_world}, launcher={self.launcher!r})")


def launcher_place():
    """This process's Place from its launcher's variables (mpirun, srun,
    torchrun), read as `collc run` reads them; a collc.Error naming what is
    missing or wrong otherwise."""
    r, w, lr, lw = (ctypes.c_int64() for _ in range(4))
    src = ctypes.c_char_p()
    call("collcLauncherPlace", ctypes.byref(r), ctypes.byref(w), ctypes.byref(lr),
         ctypes.byref(lw), ctypes.byref(src))
    return Place(r.value, w.value, lr.value, lw.value, src.value.decode())


def _memory(what, x, writeable=True):
    """(address, nbytes, collc element type) of a contiguous numpy array or
    torch CPU tensor, or a collc.Error naming `what`."""
    def refuse(why):
        raise Error(INVALID_ARGUMENT, f"Communicator: {what}: {why}")
    if _dtypes.is_torch(x):
        if x.device.type != "cpu":
            refuse(f"the tensor is on {x.device}: expected a CPU tensor (collc's eager "
                   "collectives run on host memory)")
        if not x.is_contiguous():
            refuse("the tensor is not contiguous: expected a contiguous one")
        elem = _dtypes.elem_of_torch(x.dtype)
        if elem is None:
            refuse(f"a tensor of {x.dtype}: expected one of collc's element types "
                   f"({_dtypes.torch_names()})")
        return x.data_ptr(), x.numel() * x.element_size(), elem
    if hasattr(x, "__array_interface__") and hasattr(x, "flags"):
        if not x.flags.c_contiguous or (writeable and not x.flags.writeable):
            refuse("the array is not C-contiguous and writeable: expected one that is")
        elem = _dtypes.elem_of_numpy(x.dtype)
        if elem is None:
            refuse(f"an array of {x.dtype}: expected one of collc's element types")
        return x.__array_interface__["data"][0], x.nbytes, elem
    refuse(f"got a {type(x).__name__}: expected a numpy array or a torch tensor")


class Pending:
    """One enqueued operation: wait() for it; the memory it uses stays
    referenced (alive) until then."""

    def __init__(self, comm, ticket, keep):
        self._comm, self.ticket, self._keep = comm, ticket, keep

    def wait(self, timeout=None):
        """Waits for it: `timeout` None up to the communicator's timeout (past
        it the communicator is broken), else at most that many seconds, past
        which a collc.Error named collcTimeout says it still runs (wait
        again)."""
        ms = -1 if timeout is None else int(round(timeout * 1000))
        call("collcCommWait", self._comm.handle, self.ticket, ms)
        self._keep = None

    def done(self):
        d = ctypes.c_int()
        call("collcCommTest", self._comm.handle, self.ticket, ctypes.byref(d))
        return bool(d.value)


class Communicator(OwnedHandle):
    """Rank `rank` of `world` in group `group` (None: "world") on `backend`
    ("local": ranks are threads of this process meeting by `rendezvous`, a
    name; "gloo": "file:DIR", "redis://HOST:PORT" or "store:NAME"; "mpi":
    under mpirun). Each operation returns a Pending at once; `timeout_ms` 0:
    COLLC_TIMEOUT_MS, else 300000."""

    _destroy = "collcCommDestroy"

    def __init__(self, rank, world, backend="local", rendezvous=None, group=None,
                 timeout_ms=0):
        o = CommOptions()
        call("collcCommOptionsInitSized", ctypes.byref(o), ctypes.sizeof(o))
        o.backend = encode(backend, "backend")
        o.rendezvous = encode(rendezvous, "rendezvous")
        o.group = encode(group, "group")
        o.timeoutMs = integer(timeout_ms, "timeout_ms")
        h = ctypes.c_void_p()
        call("collcCommCreate", integer(rank, "rank"), integer(world, "world"), ctypes.byref(o),
             ctypes.byref(h))
        self._handle = h
        self.rank, self.world, self.backend = rank, world, backend

    def _issue(self, fn, keep, *args):
        t = TICKET()
        call(fn, self.handle, *args, ctypes.byref(t))
        return Pending(self, t.value, keep)

    def all_reduce(self, x, op="sum"):
        """x reduced with every rank's in place (op: sum, prod, min, max, avg)."""
        p, n, elem = _memory("all_reduce", x)
        return self._issue("collcCommAllReduce", x, ctypes.c_void_p(p),
                           n // _dtypes.itemsize(elem), encode(elem, "elem"), encode(op, "op"))

    def broadcast(self, x, root=0):
        """Rank root's x into every rank's x."""
        p, n, _ = _memory("broadcast", x)
        return self._issue("collcCommBroadcast", x, ctypes.c_void_p(p), n, root)

    def all_gather(self, x, out):
        """Every rank's x in rank order into out (world times x's bytes)."""
        pi, n, _ = _memory("all_gather's input", x, writeable=False)
        po, _, _ = _memory("all_gather's output", out)
        return self._issue("collcCommAllGather", (x, out), ctypes.c_void_p(pi),
                           ctypes.c_void_p(po), n)

    def reduce_scatter(self, x, out, op="sum"):
        """This rank's chunk of x (world chunks of out's size) reduced with
        every rank's, into out."""
        pi, _, elem = _memory("reduce_scatter's input", x, writeable=False)
        po, n, _ = _memory("reduce_scatter's output", out)
        return self._issue("collcCommReduceScatter", (x, out), ctypes.c_void_p(pi),
                           ctypes.c_void_p(po), n // _dtypes.itemsize(elem), encode(elem, "elem"),
                           encode(op, "op"))

    def all_to_all(self, x, out, send_counts, recv_counts):
        """send_counts[r] elements of x to rank r, recv_counts[r] from it."""
        pi, _, elem = _memory("all_to_all's input", x, writeable=False)
        po, _, _ = _memory("all_to_all's output", out)
        if len(send_counts) != self.world or len(recv_counts) != self.world:
            raise Error(INVALID_ARGUMENT, f"Communicator: all_to_all: {len(send_counts)} send "
                        f"and {len(recv_counts)} recv counts: expected {self.world} of each")
        sc = (ctypes.c_uint64 * self.world)(*send_counts)
        rc = (ctypes.c_uint64 * self.world)(*recv_counts)
        return self._issue("collcCommAllToAll", (x, out, sc, rc), ctypes.c_void_p(pi),
                           ctypes.c_void_p(po), encode(elem, "elem"), sc, rc)

    def send(self, x, peer):
        p, n, _ = _memory("send", x, writeable=False)
        return self._issue("collcCommSend", x, ctypes.c_void_p(p), n, peer)

    def recv(self, x, peer):
        p, n, _ = _memory("recv", x)
        return self._issue("collcCommRecv", x, ctypes.c_void_p(p), n, peer)

    def barrier(self):
        return self._issue("collcCommBarrier", None)

    def __repr__(self):
        return (f"<collc.Communicator rank {self.rank} of {self.world} on {self.backend}>"
                if self._handle else "<collc.Communicator closed>")
