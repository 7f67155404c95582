"""Device classes: how a CPU-measured time becomes a time on a named device.

A measured CPU time is scaled by the ratio of two matrix-multiply rates: the
rate this CPU reaches on a square f32 GEMM (measured once per process) and the
device class's nominal dense rate. Backward is dominated by GEMMs, so this is
the one ratio that carries; memory-bound kernels are flattered by it, which the
IR's header says."""

import time

import torch

# Nominal dense matmul rates in TFLOP/s, from the vendors' data sheets (the
# precision a training step's GEMMs run in: bf16 tensor cores on GPUs).
# "cpu" keeps the measured times as they are.
DEVICE_CLASSES = {
    "cpu": None,
    "a100": 312.0,
    "h100": 989.0,
    "h200": 989.0,
}

_cpu_tflops = None


def cpu_tflops():
    """This CPU's f32 GEMM rate in TFLOP/s (best of a few 512^3 products)."""
    global _cpu_tflops
    if _cpu_tflops is None:
        n = 512
        a, b = torch.randn(n, n), torch.randn(n, n)
        torch.mm(a, b)  # warm up the kernels and the allocator
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            torch.mm(a, b)
            best = min(best, time.perf_counter() - t0)
        _cpu_tflops = 2.0 * n ** 3 / best / 1e12
    return _cpu_tflops


def scale_for(device_class):
    """(factor, words): the factor that turns a CPU time into one on
    device_class, and a sentence that says how it was chosen."""
    if device_class not in DEVICE_CLASSES:
        raise ValueError(f"device class {device_class!r} is not known; expected one of "
                         f"{', '.join(sorted(DEVICE_CLASSES))}")
    peak = DEVICE_CLASSES[device_class]
    if peak is None:
        return 1.0, "the measured CPU times, unscaled"
    cpu = cpu_tflops()
    return cpu / peak, (f"the measured CPU times scaled by this CPU's f32 GEMM rate "
                        f"({cpu * 1000:.1f} GFLOP/s) over {device_class}'s nominal dense rate "
                        f"({peak:g} TFLOP/s)")
