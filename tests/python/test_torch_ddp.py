"""collc.torch's DDP tracing: the buckets collc compiles from a traced GPT-2
124M equal torch DDP's own assignment on the observed order, and the rules
for tied and unused parameters."""

import json
import re
import time

import pytest

torch = pytest.importorskip("torch")
dist = pytest.importorskip("torch.distributed")

import collc  # noqa: E402
from collc.torch import TraceError, trace_ddp  # noqa: E402
from collc.torch._ddp import ir_name  # noqa: E402
from collc.torch.models.gpt2 import gpt2_124m  # noqa: E402

MiB = 1024 * 1024


def ready_order(ir):
    """The gradient names in the order the IR averages them."""
    return re.findall(r"= all_reduce avg %(\S+) in @dp", ir)


def torch_buckets(model, order):
    """DDP's buckets after its rebuild: torch's own assignment over the
    parameters in the observed order, with DDP's caps (a first bucket of
    dist._DEFAULT_FIRST_BUCKET_BYTES, then bucket_cap_mb=25)."""
    params, seen = [], set()
    for name, p in model.named_parameters():
        if p.requires_grad and id(p) not in seen:
            seen.add(id(p))
            params.append((name, p))
    index = {"g." + ir_name(n): i for i, (n, _) in enumerate(params)}
    indices = [index[g] for g in order]
    buckets, _ = dist._compute_bucket_assignment_by_size(
        [params[i][1] for i in indices], [dist._DEFAULT_FIRST_BUCKET_BYTES, 25 * MiB],
        [False] * len(indices), indices)
    return [["g." + ir_name(params[i][0]) for i in b] for b in buckets]


def test_gpt2_124m_buckets_equal_torch_ddp():
    t0 = time.perf_counter()
    model, inputs = gpt2_124m(seq=16, batch=1)
    ir = trace_ddp(model, inputs, world=8, device_class="h100")
    plan = collc.compile(ir, bucket="ddp")
    ours = [b["tensors"] for b in json.loads(plan.dump("json"))["buckets"]]
    order = ready_order(ir)
    theirs = torch_buckets(model, order)
    seconds = time.perf_counter() - t0
    print(f"GPT-2 124M: {len(order)} gradients, {len(ours)} buckets, {seconds:.1f} s")
    # 148 tensors: the tied wte/lm_head weight once.
    assert len(order) == 148 and len(set(order)) == 148
    assert order[-1] == "g.transformer.wte.weight"  # complete only after the embedding
    assert ours == theirs
    # Names follow the parameters; the header states how costs were chosen.
    assert re.search(r"^  %bwd\.transformer\.h\.0\.attn\.c_attn, %g\.transformer\.h\.0\.attn"
                     r"\.c_attn\.bias, %g\.transformer\.h\.0\.attn\.c_attn\.weight = compute "
                     r"@bwd\.transformer\.h\.0\.attn\.c_attn\(", ir, re.M)
    assert "Costs: the measured CPU times scaled by this CPU's f32 GEMM rate" in header(ir)
    assert "over h100's nominal dense rate (989 TFLOP/s)." in header(ir)


def header(ir):
    """The header comment as one line of text (it is wrapped at 88 columns)."""
    return " ".join(line[3:] for line in ir.splitlines() if line.startswith("// "))


def test_gpt2_on_meta_has_the_cpu_order_and_byte_stable_costs():
    """On the meta device nothing is allocated, autograd still runs, and its
    ready order is the one a real CPU backward gives; FLOP costs make the
    text the same on every run."""
    from collc.torch.models.gpt2 import gpt2_124m_meta

    model, inputs = gpt2_124m(seq=16, batch=1)
    on_cpu = ready_order(trace_ddp(model, inputs, device_class="cpu"))
    first, second = (trace_ddp(*gpt2_124m_meta()) for _ in range(2))
    assert first == second
    assert ready_order(first) == on_cpu
    assert "one backward on the meta device" in header(first)
    assert "Costs: a FLOP estimate from parameter shapes" in header(first)
    # fc over 8 x 1024 rows: forward 2 x 8192 x 768 x 3072 FLOPs, backward twice, at 989 TFLOP/s.
    fc = 2 * (2 * 8192 * 768 * 3072 + 8192 * 3072) / 989e3
    assert f"@bwd.transformer.h.0.mlp.c_fc(%bwd.transformer.h.0.mlp.c_proj) cost({round(fc)}ns)" \
        in first
    with pytest.raises(TraceError, match="no run time to measure"):
        trace_ddp(*gpt2_124m_meta(), cost="measured")
    with pytest.raises(ValueError, match="cost 'flops' needs a device class with a nominal rate"):
        trace_ddp(*gpt2_124m_meta(), device_class="cpu")


def test_the_derived_order_where_backward_cannot_run():
    """Where a meta backward fails, the order is derived: reverse first use
    in forward, a module's parameters in reverse registration order. On
    GPT-2 that is autograd's order but for the layer norms, whose backward
    gives weight before bias."""
    from collc.torch._ddp import derived_order, observe
    from collc.torch.models.gpt2 import gpt2_124m_meta

    params, ready, _, recorder, _ = observe(*gpt2_124m_meta())
    derived, real = derived_order(params, recorder), [n for n, _ in ready]
    swapped = {n.rsplit(".", 1)[0] for n, m in zip(derived, real) if n != m}
    assert sorted(derived) == sorted(real)
    assert swapped and all(s.endswith(("ln_1", "ln_2", "ln_f")) for s in swapped)


class TiedMLP(torch.nn.Module):
    """Two layers sharing one weight, and a layer forward never calls."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 8)
        self.fc2 = torch.nn.Linear(8, 8)
        self.fc2.weight = self.fc1.weight
        self.unused = torch.nn.Linear(4, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def test_a_parameter_without_a_gradient_is_refused_by_name():
    with pytest.raises(TraceError, match=r"2 parameter\(s\) require a gradient but got none"
                       r".*: unused\.weight, unused\.bias"):
        trace_ddp(TiedMLP(), (torch.randn(2, 8),), device_class="cpu")


def test_a_tied_weight_is_averaged_once_and_frozen_ones_not_at_all():
    model = TiedMLP()
    model.unused.requires_grad_(False)
    ir = trace_ddp(model, (torch.randn(2, 8),), world=2, device_class="cpu")
    # fc1.weight (also fc2's) is ready only after fc1's backward: last.
    assert ready_order(ir) == ["g.fc2.bias", "g.fc1.bias", "g.fc1.weight"]
    assert "unused" not in ir
    collc.compile(ir)  # a valid program


def test_ddp_gradients_name_the_plans_tensors_and_report_when_ready():
    """The public view of the trace's parameters (docs/torch.md, "Training
    with the plan"): the parameters DDP registers in module order, each with
    its gradient's plan tensor, and a hook per gradient."""
    from collc.torch import DdpGradient, ddp_gradients, on_gradient_ready

    model = TiedMLP()
    model.unused.requires_grad_(False)
    grads = ddp_gradients(model)
    assert [(g.name, g.tensor) for g in grads] == [
        ("fc1.weight", "g.fc1.weight"), ("fc1.bias", "g.fc1.bias"), ("fc2.bias", "g.fc2.bias")]
    assert all(isinstance(g, DdpGradient) for g in grads)
    assert grads[0].parameter is model.fc2.weight  # tied: once, under its first name
    plan = collc.compile(trace_ddp(model, (torch.randn(2, 8),), world=2, device_class="cpu"))
    for g in grads:
        assert tuple(plan.tensor_type(g.tensor).shape) == tuple(g.parameter.shape)

    fired = []
    keep = on_gradient_ready(grads, fired.append)
    model(torch.randn(2, 8)).sum().backward()
    assert fired == ["fc2.bias", "fc1.bias", "fc1.weight"]  # the trace's ready order
    del keep

    class Clash(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_parameter("a b", torch.nn.Parameter(torch.ones(1)))
            self.register_parameter("a_b", torch.nn.Parameter(torch.ones(1)))

    with pytest.raises(TraceError, match=r"parameter names \['a_b'\] collide as IR names"):
        ddp_gradients(Clash())
    with pytest.raises(TraceError, match="no parameter that requires a gradient"):
        ddp_gradients(torch.nn.Linear(2, 2).requires_grad_(False))


def test_names_outside_the_ir_alphabet_become_underscores():
    assert ir_name("h.0.attn.c_attn.weight") == "h.0.attn.c_attn.weight"
    assert ir_name("w[0] x") == "w_0__x"
    assert ir_name("w-") == "w_"  # a name may not end in '-'


def test_unknown_device_class_names_the_known_ones():
    with pytest.raises(ValueError, match=r"device class 'tpu' is not known; expected one of "
                       r"a100, cpu, h100, h200"):
        trace_ddp(TiedMLP(), (torch.randn(2, 8),), device_class="tpu")


class _NoMetaBackward(torch.autograd.Function):
    """An op whose backward has no meta kernel, as some of torch's lack one."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        raise NotImplementedError("no meta kernel for this backward")


class _Blocked(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 8, device="meta")
        self.fc2 = torch.nn.Linear(8, 8, device="meta")

    def forward(self, x):
        return self.fc2(_NoMetaBackward.apply(self.fc1(x)))


def test_a_meta_backward_that_fails_falls_back_to_the_derived_order():
    ir = trace_ddp(_Blocked(), (torch.zeros(2, 8, device="meta"),), world=2)
    assert ready_order(ir) == ["g.fc2.bias", "g.fc2.weight", "g.fc1.bias", "g.fc1.weight"]
    assert "in reverse order of first use in forward" in header(ir)
    collc.compile(ir)
