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

# Nominal memory bandwidths in TB/s, from the same data sheets (SXM parts:
# A100 80GB HBM2e, H100 HBM3, H200 HBM3e): what a memory-bound kernel such as
# an optimizer step reaches at best. "cpu" measures this machine's.
MEMORY_TBS = {
    "cpu": None,
    "a100": 2.039,
    "h100": 3.35,
    "h200": 4.8,
}

_cpu_tflops = None
_cpu_memory_tbs = None


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


def cpu_memory_tbs():
    """This CPU's copy rate in TB/s, bytes read plus bytes written (best of
    a few copies of 64 MiB, past the caches)."""
    global _cpu_memory_tbs
    if _cpu_memory_tbs is None:
        src = torch.ones(16 << 20)
        dst = torch.empty_like(src)
        dst.copy_(src)  # fault the pages in
        best = float("inf")
        for _ in range(5):
            t0 = time.perf_counter()
            dst.copy_(src)
            best = min(best, time.perf_counter() - t0)
        _cpu_memory_tbs = 2.0 * src.numel() * src.element_size() / best / 1e12
    return _cpu_memory_tbs


def memory_tbs_for(device_class):
    """(TB/s, words): device_class's memory bandwidth and where it is from."""
    if device_class not in MEMORY_TBS:
        raise ValueError(f"device class {device_class!r} is not known; expected one of "
                         f"{', '.join(sorted(MEMORY_TBS))}")
    tbs = MEMORY_TBS[device_class]
    if tbs is None:
        tbs = cpu_memory_tbs()
        return tbs, f"this CPU's measured copy rate ({tbs * 1000:.1f} GB/s)"
    return tbs, f"{device_class}'s nominal memory bandwidth ({tbs:g} TB/s)"


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
