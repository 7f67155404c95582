"""The pieces of IR text every strategy writes (docs/ir.md): the error a
trace raises, value names from parameter names, tensor types, and the header
comment."""

import re

import torch


class TraceError(ValueError):
    """The module cannot be traced as asked; the message says what and where."""


_ELEM = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16",
         torch.float64: "f64", torch.int64: "i64", torch.int32: "i32"}


def ir_name(name):
    """A parameter name as an IR value name (docs/ir.md: letters, digits and
    `_ . $ -`, not ending in `-`): any other character becomes `_`."""
    s = re.sub(r"[^A-Za-z0-9_.$-]", "_", name)
    return s[:-1] + "_" if s.endswith("-") else s


def type_of(dtype, shape):
    """The IR type of a tensor of `dtype` and `shape`."""
    if dtype not in _ELEM:
        raise TraceError(f"a tensor of dtype {dtype} has no IR element type "
                         f"(expected one of {', '.join(map(str, _ELEM))})")
    return f"{_ELEM[dtype]}[{', '.join(map(str, shape))}]"


def ir_type(t, shape=None):
    """The IR type of tensor t, or of t's dtype with another shape."""
    return type_of(t.dtype, t.shape if shape is None else shape)


def wrap(text, width=88):
    """A header comment: `text` as `// ` lines of at most `width` characters."""
    lines, line = [], "//"
    for word in text.split():
        if len(line) + 1 + len(word) > width and line != "//":
            lines.append(line)
            line = "//"
        line += " " + word
    return lines + [line]
