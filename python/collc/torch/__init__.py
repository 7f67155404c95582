"""collc.torch: PyTorch on collc in one line, either way a communication
library reaches PyTorch users: DistributedDataParallel, a drop-in for
torch's, and torch.distributed's backend "collc", registered on import
(init_process_group("collc")); and the IR of a PyTorch training step,
written from a real nn.Module and example inputs (docs/torch.md). Needs
torch; `import collc` does not import this package, so collc works without
torch."""

try:
    import torch as _torch  # noqa: F401  (the frontend's one hard dependency)
except ImportError as e:  # pragma: no cover - depends on the machine
    raise ImportError("collc.torch needs PyTorch (apt-get install python3-torch, "
                      "or pip install torch); collc itself works without it") from e

from . import _backend
from ._ddp import DdpGradient, ddp_gradients, on_gradient_ready, trace_ddp
from ._devices import DEVICE_CLASSES
from ._fsdp import trace_fsdp
from ._irtext import TraceError
from ._moe import MIXTRAL_8X7B, trace_moe
from ._parallel import DistributedDataParallel
from ._tppp import trace_tp_pp

__all__ = ["DistributedDataParallel", "TraceError", "trace_ddp", "trace_fsdp", "trace_tp_pp",
           "trace_moe", "MIXTRAL_8X7B", "DEVICE_CLASSES", "ddp_gradients", "DdpGradient",
           "on_gradient_ready"]

# torch.distributed's backend "collc" (docs/torch.md).
_backend.register()
