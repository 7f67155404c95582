"""torch.distributed's "collc" backend: `import collc.torch` registers it,
so `dist.init_process_group("collc")` (and `new_group(backend="collc")`)
runs torch's process groups on collc's eager collectives (docs/torch.md,
"The torch.distributed backend"). The process group is a C++ extension,
collc.torch._c10d (python/collc/torch/csrc), built against Debian's
libtorch-dev by collc's CMake; without it the name is still registered, and
init_process_group says why the backend is not there.

Each process group meets where its ranks meet: on gloo (the default) in
the group's own torch store, lent to collc (collc.register_store); on mpi
(the default under mpirun, for the world's group) through MPI_COMM_WORLD.
COLLC_TORCH_TRANSPORT=gloo|mpi chooses. Under mpirun, whose processes have
no RANK or WORLD_SIZE, importing collc.torch sets them from Open MPI's
variables (with MASTER_ADDR 127.0.0.1 when every rank is on this host, and
a MASTER_PORT derived from the job's id), so that init_process_group's
env:// finds them."""

import datetime
import glob
import importlib.util
import os
import pathlib
import zlib

import torch.distributed as dist

import collc
from ._meeting import STORE_NAME, _one_host

BACKEND = "collc"
TRANSPORT_VAR = "COLLC_TORCH_TRANSPORT"


def _extension_paths():
    """Where collc.torch._c10d may be: $COLLC_TORCH_EXTENSION, beside this
    package (installed), the build tree of the libcollc.so in use
    ($COLLC_LIBRARY's build/python/...), the source tree's build/."""
    env = os.environ.get("COLLC_TORCH_EXTENSION")
    if env:
        return [env]
    here = pathlib.Path(__file__).resolve().parent
    places = [here]
    lib = os.environ.get("COLLC_LIBRARY")
    if lib:
        places.append(pathlib.Path(lib).resolve().parents[1] / "python" / "collc" / "torch")
    places.append(here.parents[2] / "build" / "python" / "collc" / "torch")
    return [p for place in places for p in sorted(glob.glob(str(place / "_c10d*.so")))]


def _load_extension():
    """The extension module, or the reason it cannot be loaded."""
    paths = _extension_paths()
    if not paths:
        return None, ("collc was built without its torch.distributed backend (it needs "
                      "libtorch-dev and pybind11-dev where collc is built; docs/torch.md)")
    try:
        spec = importlib.util.spec_from_file_location("collc.torch._c10d", paths[0])
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module, None
    except ImportError as e:  # another torch than the one it was built against
        return None, f"{paths[0]} does not load: {e}"


_c10d, _why_not = _load_extension()
# The transport of each process group made, by torch's group name: what a
# user (or a test) may ask.
transports = {}


def _transport(opts):
    """gloo or mpi for the process group of `opts`."""
    chosen = os.environ.get(TRANSPORT_VAR)
    if chosen and chosen not in ("gloo", "mpi"):
        raise RuntimeError(f"{TRANSPORT_VAR} is {chosen!r}: expected gloo or mpi")
    under_mpirun = "OMPI_COMM_WORLD_SIZE" in os.environ
    world = int(os.environ.get("OMPI_COMM_WORLD_SIZE", "0"))
    whole = opts.group_size == world or not opts.global_ranks_in_group
    transport = chosen or ("mpi" if under_mpirun and whole else "gloo")
    if transport == "mpi" and opts.group_size != world:
        raise RuntimeError(
            f"collc backend (rank {opts.group_rank}): the mpi transport runs the world's group "
            f"only, not a group of {opts.group_size} of its ranks: set {TRANSPORT_VAR}=gloo")
    return transport


def _create(opts, pg_options):
    """torch.distributed's creator of a "collc" process group."""
    if _c10d is None:
        raise RuntimeError(f"torch.distributed backend 'collc' is not available: {_why_not}")
    if pg_options is not None:
        raise RuntimeError(f"collc backend (rank {opts.group_rank}): pg_options is "
                           f"{pg_options!r}: expected None (it takes none)")
    transport = _transport(opts)
    rendezvous = ""
    if transport == "gloo":
        rendezvous = collc.register_store(STORE_NAME, dist.PrefixStore("collc", opts.store),
                                          one_host=_one_host(opts.group_size))
    timeout = opts.timeout
    if not isinstance(timeout, datetime.timedelta):
        timeout = datetime.timedelta(seconds=timeout)
    transports[opts.group_id] = transport
    return _c10d.create_process_group(opts.group_rank, opts.group_size, transport, rendezvous,
                                      f"c10d.{opts.group_id or 'world'}", timeout)


def _place_mpirun_ranks():
    """Under mpirun, torch's env:// variables from Open MPI's (see above)."""
    if "OMPI_COMM_WORLD_RANK" not in os.environ or "RANK" in os.environ:
        return
    place = collc.launcher_place()
    os.environ["RANK"], os.environ["WORLD_SIZE"] = str(place.rank), str(place.world)
    os.environ.setdefault("LOCAL_RANK", str(place.local_rank))
    if "MASTER_ADDR" not in os.environ and place.local_world == place.world:
        os.environ["MASTER_ADDR"] = "127.0.0.1"
    job = os.environ.get("OMPI_MCA_ess_base_jobid", "")
    if "MASTER_PORT" not in os.environ and job:
        os.environ["MASTER_PORT"] = str(20000 + zlib.crc32(job.encode()) % 40000)


def register():
    """Registers backend "collc" with torch.distributed, once (a torch
    without torch.distributed has nothing to register it with)."""
    if not dist.is_available() or BACKEND.upper() in dist.Backend._plugins:
        return
    _place_mpirun_ranks()
    dist.Backend.register_backend(BACKEND, _create, extended_api=True)
