"""The element types of a plan (docs/ir.md) as numpy and torch dtypes.

numpy has no bf16 or f8 types: their tensors are viewed as uint16 / uint8
(raw bits) and bound from torch tensors or from arrays of those raw types."""

# collc spelling -> (numpy dtype name, torch dtype attribute or None)
ELEM_TYPES = {
    "f32": ("float32", "float32"),
    "f16": ("float16", "float16"),
    "bf16": ("uint16", "bfloat16"),
    "f64": ("float64", "float64"),
    "i8": ("int8", "int8"),
    "u8": ("uint8", "uint8"),
    "i32": ("int32", "int32"),
    "u32": ("uint32", None),
    "i64": ("int64", "int64"),
    "u64": ("uint64", None),
    "f8e4m3": ("uint8", "float8_e4m3fn"),
    "f8e5m2": ("uint8", "float8_e5m2"),
}


def numpy_dtype(elem):
    import numpy
    return numpy.dtype(ELEM_TYPES[elem][0])


def torch_dtype(elem):
    import torch
    name = ELEM_TYPES[elem][1]
    return getattr(torch, name, None) if name else None


def is_torch(x):
    """Whether x is a torch tensor (without importing torch)."""
    return type(x).__module__.split(".")[0] == "torch" and hasattr(x, "data_ptr")


def itemsize(elem):
    """Bytes per element of collc element type elem."""
    import numpy
    return numpy.dtype(ELEM_TYPES[elem][0]).itemsize


def elem_of_torch(dtype):
    """The collc element type of torch dtype, or None."""
    import torch
    for elem, (_, name) in ELEM_TYPES.items():
        if name and getattr(torch, name, None) == dtype:
            return elem
    return None


def elem_of_numpy(dtype):
    """The collc element type of numpy dtype (uint16 is bf16's raw bits,
    uint8 u8), or None."""
    import numpy
    for elem, (name, _) in ELEM_TYPES.items():
        if numpy.dtype(name) == dtype and elem not in ("f8e4m3", "f8e5m2"):
            return elem
    return None


def torch_names():
    """The torch dtypes collc takes, for messages."""
    return ", ".join(f"torch.{name}" for _, name in ELEM_TYPES.values() if name)
