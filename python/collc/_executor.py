"""Executors: bind tensors, capture, replay every step (collc.h's executor
functions) over numpy arrays and torch tensors."""

import ctypes

from . import _dtypes, _lib
from ._lib import INVALID_USAGE, SUCCESS, Error, call, encode, lib

INVALID_ARGUMENT = 1


class _Memory:
    """What numpy sees of executor memory (__array_interface__); it holds the
    executor, so a view keeps it from being collected."""

    def __init__(self, owner, address, dtype, shape):
        self.owner = owner
        self.__array_interface__ = {"data": (address, False), "typestr": dtype.str,
                                    "shape": tuple(shape), "version": 3}


def _is_torch(x):
    return type(x).__module__.split(".")[0] == "torch" and hasattr(x, "data_ptr")


class Executor:
    """The executor of rank `rank` of `plan` on `backend` ("local": the
    ranks are threads of this process and `rendezvous` a name they share;
    "mpi": under mpirun; "gloo": `rendezvous` "file:DIR" or
    "redis://HOST:PORT"). `timeout_ms` 0: COLLC_TIMEOUT_MS, else 300000."""

    def __init__(self, plan, rank, backend="local", rendezvous=None, timeout_ms=0,
                 digest_handshake=True):
        from ._plan import Plan
        if not isinstance(plan, Plan):
            raise TypeError(f"plan is {type(plan).__name__}: expected a collc.Plan")
        o = _lib.ExecutorOptions()
        call("collcExecutorOptionsInit", ctypes.byref(o))
        o.backend = encode(backend)
        o.rendezvous = encode(rendezvous)
        o.timeoutMs = timeout_ms
        o.digestHandshake = int(bool(digest_handshake))
        h = ctypes.c_void_p()
        call("collcExecutorCreate", plan.handle, rank, ctypes.byref(o), ctypes.byref(h))
        self._handle = h
        self.plan = plan
        self.backend = backend
        # name -> the array or tensor bound: the memory must outlive the binding.
        self._bound = {}

    @property
    def handle(self):
        return self._handle if self._handle else None

    def close(self):
        """Releases the executor now (also done when it is collected). Views
        from tensor() must not be used after."""
        if getattr(self, "_handle", None):
            lib.collcExecutorDestroy(self._handle)
            self._handle = ctypes.c_void_p()
        self._bound = {}

    def __del__(self):
        if lib is not None:
            self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def rank(self):
        r = ctypes.c_int64()
        call("collcExecutorRank", self.handle, ctypes.byref(r))
        return r.value

    def _refuse(self, name, what):
        raise Error(INVALID_ARGUMENT, f"Executor.bind: name is \"{name}\": {what}")

    def bind(self, name, array):
        """Binds tensor `name` (without '%') to a contiguous numpy array or
        torch tensor of its element type and size. The executor keeps a
        reference to it until the next bind of the name or close(); binding
        again requires capture() again. A CUDA tensor is bound with its device
        pointer and the current stream (the nccl backend)."""
        t = self.plan.tensor_type(name)
        if _is_torch(array):
            want = _dtypes.torch_dtype(t.elem)
            if array.dtype != want:
                self._refuse(name, f"the plan's tensor is {t}: expected a tensor of "
                             f"{want}, got {array.dtype}")
            if not array.is_contiguous():
                self._refuse(name, "the tensor is not contiguous: expected a contiguous one")
            nbytes = array.numel() * array.element_size()
            if array.device.type == "cuda":
                import torch
                stream = torch.cuda.current_stream(array.device).cuda_stream
                self.bind_device(name, array.data_ptr(), nbytes, stream)
            elif array.device.type == "cpu":
                call("collcExecutorBind", self.handle, encode(name),
                     ctypes.c_void_p(array.data_ptr()), nbytes)
            else:
                self._refuse(name, f"the tensor is on {array.device}: expected cpu or cuda")
        elif hasattr(array, "__array_interface__") and hasattr(array, "flags"):
            want = _dtypes.numpy_dtype(t.elem)
            if array.dtype != want:
                self._refuse(name, f"the plan's tensor is {t}: expected an array of "
                             f"{want}, got {array.dtype}")
            if not array.flags.c_contiguous or not array.flags.writeable:
                self._refuse(name, "the array is not C-contiguous and writeable: expected "
                             "one that is (numpy.ascontiguousarray)")
            call("collcExecutorBind", self.handle, encode(name),
                 ctypes.c_void_p(array.__array_interface__["data"][0]), array.nbytes)
        else:
            self._refuse(name, f"got a {type(array).__name__}: expected a numpy array or "
                         "a torch tensor")
        self._bound[name] = array

    def bind_device(self, name, pointer, nbytes, stream):
        """Binds tensor `name` to `nbytes` of device memory at address
        `pointer`, the replay to run on CUDA stream `stream` (an address;
        0: the default stream): the nccl backend's binding, which bind()
        uses for CUDA tensors. The caller keeps the memory alive."""
        call("collcExecutorBindDevice", self.handle, encode(name), ctypes.c_void_p(pointer),
             nbytes, ctypes.c_void_p(stream))

    def tensor(self, name):
        """Tensor `name` as a numpy array over the executor's memory: a
        zero-copy view slot of a plan buffer (write the model's input there)
        or the memory bound to it."""
        import numpy
        data = ctypes.c_void_p()
        nbytes = ctypes.c_size_t()
        call("collcExecutorTensor", self.handle, encode(name), ctypes.byref(data),
             ctypes.byref(nbytes))
        t = self.plan.tensor_type(name)
        dtype = _dtypes.numpy_dtype(t.elem)
        shape = t.shape
        count = 1
        for d in shape:
            count *= d
        if count * dtype.itemsize != nbytes.value:  # never for a plan that verified
            shape = (nbytes.value // dtype.itemsize,)
        return numpy.asarray(_Memory(self, data.value or 0, dtype, shape))

    def unbound(self):
        """How many tensors are still to bind, and the first one's name."""
        count = ctypes.c_size_t()
        first = ctypes.c_char_p()
        call("collcExecutorUnbound", self.handle, ctypes.byref(count), ctypes.byref(first))
        return count.value, first.value.decode()

    def capture(self):
        """Resolves the plan for this rank; a collective: every rank
        captures, and the first capture compares plan digests."""
        call("collcExecutorCapture", self.handle)

    def replay(self, compute=None):
        """One step. `compute(name, index)` runs at each compute op of this
        rank (None: none runs); an exception it raises stops the step and is
        raised here, from the collc.Error of the replay."""
        raised = []

        def trampoline(name, index, user):
            try:
                compute(name.decode(), index)
                return SUCCESS
            except BaseException as e:  # carried across C to the caller
                raised.append(e)
                return INVALID_USAGE

        fn = _lib.COMPUTE_FN(trampoline) if compute else ctypes.cast(None, _lib.COMPUTE_FN)
        result = lib.collcExecutorReplay(self.handle, fn, None)
        if result != SUCCESS:
            err = _lib.error_for(result)
            if raised:
                raise raised[0] from err
            raise err

    def synchronize(self, timeout=0.0):
        """Waits at most `timeout` seconds (0: only check) for the replays
        issued; on CPU backends reports a peer lost since."""
        call("collcExecutorSynchronize", self.handle, int(round(timeout * 1000)))

    def __repr__(self):
        return f"<collc.Executor rank {self.rank} on {self.backend}>" if self._handle else \
            "<collc.Executor closed>"
