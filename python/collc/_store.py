"""Lends the program's store to collc (collc.h's collcStoreRegister): gloo
groups meet there as rendezvous "store:NAME". Any object with torch's store
methods serves: set(key, value), get(key) -> bytes, add(key, delta) -> int
(torch.distributed's TCPStore, FileStore, PrefixStore, HashStore).

torch 1.13's Python stores cannot say whether a key is set without waiting
(their C++ check() is not bound), which collc's joins ask: every key collc
sets is also counted under KEY/collc.set, and a key is set once its count
is (add(KEY/collc.set, 0) > 0: an add that waits for nothing)."""

import ctypes

from . import _lib
from ._lib import call, encode

DELIVER = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
SET = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p,
                       ctypes.c_size_t)
GET = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, DELIVER, ctypes.c_void_p)
CHECK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p),
                         ctypes.c_size_t, ctypes.POINTER(ctypes.c_int))
ADD = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int64,
                       ctypes.POINTER(ctypes.c_int64))


class StoreStruct(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("user", ctypes.c_void_p), ("set", SET),
                ("get", GET), ("check", CHECK), ("add", ADD), ("oneHost", ctypes.c_int)]


# Counts the sets of a key (the module's docstring says why).
SET_MARK = "/collc.set"

_lib.declare({"collcStoreRegister": (ctypes.c_int, [ctypes.c_char_p,
                                                    ctypes.POINTER(StoreStruct)])})

# Registered stores and their callbacks, by name: collc may call them until
# the name is registered again, so they live as long as that.
_registered = {}


class _Lent:
    """The callbacks over one store; the last exception a callback caught is
    kept in `failures` (collc's error says which operation failed)."""

    def __init__(self, store):
        self.store, self.failures = store, []

        def guarded(fn):
            def run(*args):
                try:
                    fn(*args)
                    return 0
                except BaseException as e:  # never across C
                    self.failures = self.failures[-7:] + [repr(e)]
                    return 1
            return run

        @guarded
        def set_(_, key, value, nbytes):
            k = key.decode()
            self.store.set(k, ctypes.string_at(value, nbytes) if nbytes else b"")
            self.store.add(k + SET_MARK, 1)  # after the value: check() then sees it whole

        @guarded
        def get(_, key, deliver, ctx):
            v = bytes(self.store.get(key.decode()))
            buf = ctypes.create_string_buffer(v, len(v))
            deliver(ctx, ctypes.cast(buf, ctypes.c_void_p), len(v))

        @guarded
        def check(_, keys, count, all_set):
            all_set[0] = int(all(self.store.add(keys[i].decode() + SET_MARK, 0) > 0
                                 for i in range(count)))

        @guarded
        def add(_, key, delta, total):
            total[0] = int(self.store.add(key.decode(), delta))

        self.callbacks = (SET(set_), GET(get), CHECK(check), ADD(add))


def register_store(name, store, one_host=False):
    """Lends `store` to collc as rendezvous "store:NAME" (in place of a store
    registered before under `name`); `one_host` says every process of the
    run is on this host (gloo then listens on the loopback address). The
    store is kept alive until `name` is registered again."""
    lent = _Lent(store)
    s = StoreStruct(ctypes.sizeof(StoreStruct), None, *lent.callbacks, int(bool(one_host)))
    call("collcStoreRegister", encode(name, "name"), ctypes.byref(s))
    _registered[name] = lent
    return f"store:{name}"
