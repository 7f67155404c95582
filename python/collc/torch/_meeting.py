"""Where the processes of a collc.torch wrapper stand and meet: the rank and
world of an initialized torch.distributed process group (the one given, or
the default one) or else of the launcher (torchrun, mpirun, srun, read as
collc reads them: collc.launcher_place); and the transport's rendezvous:

- mpi (the default under mpirun): MPI_COMM_WORLD, nothing to meet in;
- gloo (the default otherwise): the rendezvous given, else
  COLLC_RENDEZVOUS, else torch's own store lent to collc
  (collc.register_store, rendezvous "store:torch"): the process group's
  store under a prefix of its own, or, with no process group, the TCPStore
  at MASTER_ADDR:MASTER_PORT that torchrun's environment names (rank 0
  serves it, as torch's env:// rendezvous does). Under torchrun nothing
  beyond torchrun's own environment is needed."""

import datetime
import os
from typing import NamedTuple

import torch.distributed as dist

import collc

# The store lent to collc: one per process (gloo meets through one
# rendezvous per process), re-lent when a wrapper brings another.
STORE_NAME = "torch"
# TCPStores this process made from MASTER_ADDR:MASTER_PORT, by address: a
# second wrapper reuses the first's (rank 0 serves the port once).
_tcp_stores = {}


class Meeting(NamedTuple):
    rank: int
    world: int
    backend: str        # collc's transport: "gloo" or "mpi"
    rendezvous: object  # what collc.Executor and collc.Communicator take
    timeout_ms: int
    source: str         # who said the rank: "process group", "torchrun", ...


def _timeout_ms(timeout):
    """Milliseconds of `timeout`, or of COLLC_TIMEOUT_MS (0 when it is not
    a number: collc refuses it, naming it, at the first communicator)."""
    if timeout is None:
        env = os.environ.get("COLLC_TIMEOUT_MS", "")
        return int(env) if env.isdigit() else 0
    seconds = timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else timeout
    if not seconds or seconds <= 0:
        raise ValueError(f"timeout is {timeout!r}: expected a positive number of seconds or a "
                         "datetime.timedelta")
    return max(1, int(round(seconds * 1000)))


def _one_host(world):
    """Whether the launcher says every process is on this host."""
    local = os.environ.get("LOCAL_WORLD_SIZE") or os.environ.get("OMPI_COMM_WORLD_LOCAL_SIZE")
    if local is not None:
        return local == str(world)
    return os.environ.get("MASTER_ADDR", "") in ("127.0.0.1", "localhost", "::1")


def _group_store(pg):
    """The store of process group `pg` under a prefix of collc's, or None
    (an mpi group has none)."""
    from torch.distributed import distributed_c10d as c10d
    entry = c10d._pg_map.get(pg)
    if not entry or entry[1] is None:
        return None
    return dist.PrefixStore(f"collc/{c10d._pg_names.get(pg, 'group')}", entry[1])


def _launcher_store(rank, world, timeout_ms):
    """The TCPStore at MASTER_ADDR:MASTER_PORT (served by rank 0)."""
    addr, port = os.environ.get("MASTER_ADDR"), os.environ.get("MASTER_PORT")
    if not addr or not port:
        raise RuntimeError(
            "collc.torch: rank {} has no store to meet its peers in: no process group is "
            "initialized, MASTER_ADDR and MASTER_PORT are not set (torchrun sets them) and no "
            "rendezvous was given (rendezvous='file:DIR' or 'redis://HOST:PORT', or "
            "COLLC_RENDEZVOUS)".format(rank))
    key = (addr, int(port))
    if key not in _tcp_stores:
        wait = datetime.timedelta(milliseconds=timeout_ms or 300000)
        _tcp_stores[key] = dist.TCPStore(addr, int(port), world, rank == 0, wait)
    return dist.PrefixStore("collc", _tcp_stores[key])


def meet(process_group=None, backend=None, rendezvous=None, timeout=None):
    """This process's Meeting (see the module's docstring)."""
    timeout_ms = _timeout_ms(timeout)
    pg = process_group
    if pg is None and dist.is_available() and dist.is_initialized():
        pg = dist.distributed_c10d._get_default_group()
    if pg is not None:
        rank, world, source = dist.get_rank(pg), dist.get_world_size(pg), "process group"
        launcher = None
    else:
        place = collc.launcher_place()
        rank, world, source, launcher = place.rank, place.world, place.launcher, place.launcher
    if backend is None:
        backend = "mpi" if launcher == "mpirun" and rendezvous is None else "gloo"
    if backend not in ("gloo", "mpi"):
        raise ValueError(f"backend is {backend!r}: expected 'gloo' or 'mpi' (collc's CPU "
                         "transports)")
    if backend == "gloo" and rendezvous is None:
        rendezvous = os.environ.get("COLLC_RENDEZVOUS")
    if backend == "gloo" and rendezvous is None:
        store = _group_store(pg) if pg is not None else _launcher_store(rank, world, timeout_ms)
        if store is None:
            raise RuntimeError(f"collc.torch: rank {rank}: the process group has no store to "
                               "meet in (an mpi group): give backend='mpi' or a rendezvous")
        rendezvous = collc.register_store(STORE_NAME, store, one_host=_one_host(world))
    return Meeting(rank, world, backend, rendezvous, timeout_ms, source)
