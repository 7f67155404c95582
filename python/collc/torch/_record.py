"""What one forward shows: every module call in the order the calls begin,
with the rows it processed, and from those a FLOP estimate per parameter.

The estimate reads parameter shapes and the rows each call saw (its output's
elements over its last dimension: batch x sequence for a transformer layer),
so it is the same on every machine and every run. Per call of a module that
owns parameters directly: a matrix parameter (two or more dimensions, not an
embedding table) costs 2 x rows x its elements (one multiply-add per
element per row); an embedding table, a bias or a norm weight costs rows x
its last dimension (a gather or an elementwise op). Backward costs twice the
forward (the input gradient and the weight gradient are each one GEMM of the
forward's size). Attention's score products and activations have no
parameter and are not counted; a tied parameter is counted at every use."""

import torch


class Call:
    """One module call: its qualified name, rows, and output shape and dtype."""

    def __init__(self, name, module):
        self.name, self.module = name, module
        self.rows, self.shape, self.dtype = 0, None, None


def _first_tensor(out):
    if isinstance(out, torch.Tensor):
        return out
    if isinstance(out, (tuple, list)):
        for o in out:
            if isinstance(o, torch.Tensor):
                return o
    return None


def param_flops(module, p, rows):
    """The forward FLOPs of parameter p of `module` in a call over `rows`."""
    if p.dim() >= 2 and not isinstance(module, torch.nn.Embedding):
        return 2 * rows * p.numel()
    return rows * p.shape[-1]


class Recorder:
    """Hooks on every module of `module` while in a `with` block; `calls`
    lists them in the order their forwards begin."""

    def __init__(self, module):
        self.module, self.calls, self._handles = module, [], []

    def __enter__(self):
        for name, m in self.module.named_modules():
            self._handles.append(m.register_forward_pre_hook(self._pre(name)))
            self._handles.append(m.register_forward_hook(self._post()))
        return self

    def _pre(self, name):
        def hook(m, _):
            self.calls.append(Call(name or "root", m))
            m._collc_calls = getattr(m, "_collc_calls", []) + [self.calls[-1]]
        return hook

    def _post(self):
        def hook(m, _, out):
            call = m._collc_calls.pop()
            t = _first_tensor(out)
            if t is not None and t.dim() >= 1:
                call.shape, call.dtype = tuple(t.shape), t.dtype
                call.rows = t.numel() // max(1, t.shape[-1])
        return hook

    def __exit__(self, *_):
        for h in self._handles:
            h.remove()
        for m in self.module.modules():
            if hasattr(m, "_collc_calls"):
                del m._collc_calls

    def param_flops(self, params):
        """Forward FLOPs per parameter name: each call's share of its module's
        estimate, summed over the calls. `params` are (name, tensor) pairs;
        a tied tensor counts under its one name at every module that uses it."""
        name_of = {id(p): n for n, p in params}
        flops = {n: 0 for n, _ in params}
        for call in self.calls:
            for p in call.module.parameters(recurse=False):
                if id(p) in name_of:
                    flops[name_of[id(p)]] += param_flops(call.module, p, call.rows)
        return flops

    def first_use(self, params):
        """Parameter names in the order forward first uses them (the order of
        the first call of a module owning each)."""
        name_of, order, seen = {id(p): n for n, p in params}, [], set()
        for call in self.calls:
            for p in call.module.parameters(recurse=False):
                n = name_of.get(id(p))
                if n is not None and n not in seen:
                    seen.add(n)
                    order.append(n)
        return order

