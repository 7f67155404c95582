"""Executors: bind tensors, capture, replay every step (collc.h's executor
functions) over numpy arrays and torch tensors."""

import ctypes

from . import _dtypes, _lib
from ._handle import OwnedHandle
from ._lib import INVALID_USAGE, SUCCESS, Error, call, encode, integer, lib

INVALID_ARGUMENT = 1
# cudaStreamLegacy: what torch's default stream (cuda_stream 0) is; collc.h
# refuses 0 itself, which a C caller may mean as the per-thread stream.
CUDA_STREAM_LEGACY = 1


class _Memory:
    """What numpy sees of executor memory (__array_interface__); it holds the
    executor, so a view keeps it from being collected."""

    def __init__(self, owner, address, dtype, shape):
        self.owner = owner
        self.__array_interface__ = {"data": (address, False), "typestr": dtype.str,
                                    "shape": tuple(shape), "version": 3}


class Executor(OwnedHandle):
    """The executor of rank `rank` of `plan` on `backend` ("local": the
    ranks are threads of this process and `rendezvous` a name they share;
    "mpi": under mpirun; "gloo": `rendezvous` "file:DIR" or
    "redis://HOST:PORT"; "nccl": one process per GPU, `rendezvous` where the
    NCCL ids meet: None or "mpi", "file:DIR", "redis://HOST:PORT", and
    `device` the GPU, -1: the launcher's local rank). `timeout_ms` 0:
    COLLC_TIMEOUT_MS, else 300000. `async_replay` (CPU backends): replay()
    queues the step on the executor's thread and returns; synchronize()
    waits for it."""

    _destroy = "collcExecutorDestroy"

    def __init__(self, plan, rank, backend="local", rendezvous=None, timeout_ms=0,
                 digest_handshake=True, device=-1, async_replay=False):
        from ._plan import Plan
        if not isinstance(plan, Plan):
            raise TypeError(f"plan is {type(plan).__name__}: expected a collc.Plan")
        o = _lib.ExecutorOptions()
        call("collcExecutorOptionsInitSized", ctypes.byref(o), ctypes.sizeof(o))
        o.backend = encode(backend, "backend")
        o.rendezvous = encode(rendezvous, "rendezvous")
        o.timeoutMs = integer(timeout_ms, "timeout_ms")
        o.digestHandshake = int(bool(digest_handshake))
        o.device = integer(device, "device")
        o.asyncReplay = int(bool(async_replay))
        h = ctypes.c_void_p()
        call("collcExecutorCreate", plan.handle, integer(rank, "rank"), ctypes.byref(o),
             ctypes.byref(h))
        self._handle = h
        self.plan = plan
        self.backend = backend
        self._async = bool(async_replay)
        # name -> the array or tensor bound: the memory must outlive the binding.
        self._bound = {}
        # async_replay: the callbacks of the queued steps (kept alive until
        # synchronize) and the exceptions they raised.
        self._queued = []
        self._raised = []

    def close(self):
        """Releases the executor now (also done when it is collected). Views
        from tensor() must not be used after. While another thread's call
        uses it (a replay), a collc.Error naming that call, and the executor
        stays open."""
        super().close()
        self._bound = {}
        self._queued = []

    @property
    def rank(self):
        r = ctypes.c_int64()
        call("collcExecutorRank", self.handle, ctypes.byref(r))
        return r.value

    @property
    def on_device(self):
        """Whether the executor's tensors are device memory (nccl), as the
        executor says (collcExecutorMemory), not its backend's name."""
        m = ctypes.c_int()
        call("collcExecutorMemory", self.handle, ctypes.byref(m))
        return m.value == 1

    def _refuse(self, name, what):
        raise Error(INVALID_ARGUMENT, f"Executor.bind: name is \"{name}\": {what}")

    def bind(self, name, array):
        """Binds tensor `name` (`g0` or `%g0`) to a contiguous numpy array or
        torch tensor of its element type and size. The executor keeps a
        reference to it until the next bind of the name or close(); binding
        again requires capture() again. A CUDA tensor (the nccl backend) is
        bound with its device pointer, and the executor's stream becomes the
        tensor's device's current stream (torch.cuda.current_stream): bind
        under the stream the model computes on."""
        t = self.plan.tensor_type(name)
        if _dtypes.is_torch(array):
            # collc reads and writes the memory itself: a lazy negation or
            # conjugation (a bit on the tensor, not in its memory) would be
            # silently lost, in what collc reads and in what it writes.
            for bit, resolve in (("is_neg", "resolve_neg"), ("is_conj", "resolve_conj")):
                if getattr(array, bit, lambda: False)():
                    self._refuse(name, f"the tensor's {bit}() is set: its memory does not hold "
                                 f"its values: expected a tensor without it (bind "
                                 f"t.{resolve}(), and use that tensor)")
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
                self.bind_device(name, array.data_ptr(), nbytes)
                self.set_stream(stream or CUDA_STREAM_LEGACY)
            elif array.device.type == "cpu":
                call("collcExecutorBind", self.handle, encode(name, "name"),
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
            call("collcExecutorBind", self.handle, encode(name, "name"),
                 ctypes.c_void_p(array.__array_interface__["data"][0]), array.nbytes)
        else:
            self._refuse(name, f"got a {type(array).__name__}: expected a numpy array or "
                         "a torch tensor")
        # One entry per tensor, however it was spelled (g0 or %g0).
        self._bound[name[1:] if name.startswith("%") else name] = array

    def bind_device(self, name, pointer, nbytes):
        """Binds tensor `name` to `nbytes` of device memory at address
        `pointer`: the nccl backend's binding, which bind() uses for CUDA
        tensors. The caller keeps the memory alive."""
        call("collcExecutorBindDevice", self.handle, encode(name, "name"),
             ctypes.c_void_p(integer(pointer, "pointer", ctypes.c_void_p)),
             integer(nbytes, "nbytes", ctypes.c_size_t))

    def set_stream(self, stream):
        """The CUDA stream the model computes on (its address, as torch's
        `Stream.cuda_stream`; 0 is refused, 1 is cudaStreamLegacy, 2
        cudaStreamPerThread): each replay runs after the work queued on it
        and before what is queued next (the nccl backend; bind() of a CUDA
        tensor sets it)."""
        call("collcExecutorSetStream", self.handle,
             ctypes.c_void_p(integer(stream, "stream", ctypes.c_void_p)))

    def tensor(self, name):
        """Tensor `name` as a numpy array over the executor's memory: a
        zero-copy view slot of a plan buffer (write the model's input there)
        or the memory bound to it."""
        import numpy
        if self.on_device:  # numpy must never read device memory
            raise Error(INVALID_USAGE, f"Executor.tensor: name is \"{name}\": the "
                        f"{self.backend} backend's tensors are device memory: expected "
                        "Executor.address(name)")
        address, nbytes = self.address(name)
        t = self.plan.tensor_type(name)
        dtype = _dtypes.numpy_dtype(t.elem)
        shape = t.shape
        count = 1
        for d in shape:
            count *= d
        if count * dtype.itemsize != nbytes:  # never for a plan that verified
            shape = (nbytes // dtype.itemsize,)
        return numpy.asarray(_Memory(self, address, dtype, shape))

    def address(self, name):
        """Where tensor `name` lives, as (address, nbytes): host memory, or
        on nccl device memory (a view slot of a plan buffer or the bound
        tensor)."""
        data = ctypes.c_void_p()
        nbytes = ctypes.c_size_t()
        call("collcExecutorTensor", self.handle, encode(name, "name"), ctypes.byref(data),
             ctypes.byref(nbytes))
        return data.value or 0, nbytes.value

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
        raised here, from the collc.Error of the replay (with async_replay:
        it runs on the executor's thread, and is raised by synchronize()).
        On nccl, `compute` enqueues the model's work on the executor's
        stream; the step is enqueued on the GPU after it, and returns once
        enqueued."""
        raised = self._raised

        def trampoline(name, index, user):
            try:
                compute(name.decode(), index)
                return SUCCESS
            except BaseException as e:  # carried across C to the caller
                raised.append(e)
                return INVALID_USAGE

        fn = _lib.COMPUTE_FN(trampoline) if compute else ctypes.cast(None, _lib.COMPUTE_FN)
        result = lib.collcExecutorReplay(self.handle, fn, None)
        if result == SUCCESS and self._async:
            self._queued.append(fn)  # the executor's thread calls it later
            return
        self._finish(result)

    def synchronize(self, timeout=0.0):
        """Waits at most `timeout` seconds (0: only check) for the replays
        issued; past it a collc.Error with .name "collcTimeout" names what
        is still pending (the step goes on: synchronize again). Reports a
        peer lost since, and the error of a queued step (or the exception
        its compute callback raised)."""
        result = lib.collcExecutorSynchronize(
            self.handle, integer(int(round(timeout * 1000)), "timeout (in ms)"))
        if result == _lib.TIMEOUT:
            # The steps may still run: their callbacks must stay alive.
            raise _lib.error_for(result)
        self._finish(result)

    def _finish(self, result):
        """No step is running any more: forgets the queued callbacks, and
        raises the Error of `result`, from a callback's exception if one
        stopped the step."""
        self._queued = []
        if result == SUCCESS:
            return
        err = _lib.error_for(result)
        if self._raised:
            first = self._raised[0]
            self._raised.clear()
            raise first from err
        raise err

    def record_to(self, directory, at_exit=False):
        """From now on, dumps this rank's flight record (its last comm events
        in plan terms, docs/diagnose.md) into `directory` (None: nowhere) as
        collc-record-rank<R>.json: when a capture, replay or synchronize
        fails or times out, when the process gets SIGUSR1, and with
        `at_exit` when the executor is closed. `collc diagnose DIR` reads
        the dumps of every rank."""
        call("collcExecutorRecordTo", self.handle, encode(None if directory is None else
                                                          str(directory), "directory"),
             int(bool(at_exit)))

    def dump_record(self, directory=None):
        """Dumps this rank's flight record now into `directory` (None: the
        one given to record_to)."""
        call("collcExecutorRecordDump", self.handle,
             encode(None if directory is None else str(directory), "directory"))

    def __repr__(self):
        return f"<collc.Executor rank {self.rank} on {self.backend}>" if self._handle else \
            "<collc.Executor closed>"
