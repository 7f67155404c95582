"""Replay on 2 local ranks (two threads, each its own Executor) over numpy
arrays and torch CPU tensors, checked against sums computed here; and the
executor's refusals as collc.Error."""

import threading

import numpy as np
import pytest

import collc
from conftest import TWO_REDUCES, UNFUSED, on_two_ranks

torch = pytest.importorskip("torch", reason="torch is not importable by this interpreter")


def inputs(rank):
    """Rank r's gradients: a different value in every element and rank."""
    a = np.arange(4, dtype=np.float32) + 10 * rank
    b = np.arange(6, dtype=np.float32).reshape(2, 3) * (rank + 1)
    return a, b


def expected():
    (a0, b0), (a1, b1) = inputs(0), inputs(1)
    return a0 + a1, b0 + b1


def replay_two_ranks(plan, rendezvous, make):
    """Each rank binds what make(rank) gives (name -> array), replays twice
    with a compute callback, and returns (its arrays, the computes called)."""
    def rank_body(rank):
        with collc.Executor(plan, rank, rendezvous=rendezvous, timeout_ms=20000) as x:
            assert x.rank == rank
            arrays = make(rank)
            for name, arr in arrays.items():
                x.bind(name, arr)
            assert x.unbound() == (0, "")
            x.capture()
            seen = []
            x.replay(lambda name, index: seen.append((name, index)))
            x.replay()
            x.synchronize(1.0)
            return arrays, seen
    return on_two_ranks(rank_body)


def test_two_local_ranks_all_reduce_numpy_arrays(two_reduces):
    def make(rank):
        a, b = inputs(rank)
        return {"a": a, "b": b, "r": np.zeros(4, np.float32), "s": np.zeros((2, 3), np.float32)}

    want_r, want_s = expected()
    for arrays, seen in replay_two_ranks(two_reduces, "py-numpy", make):
        np.testing.assert_array_equal(arrays["r"], want_r)
        np.testing.assert_array_equal(arrays["s"], want_s)
        assert [n for n, _ in seen] == ["fwd", "fwd2", "use"]
        assert [i for _, i in seen] == sorted(i for _, i in seen)


def test_two_local_ranks_all_reduce_torch_cpu_tensors(two_reduces):
    def make(rank):
        a, b = inputs(rank)
        return {"a": torch.from_numpy(a.copy()), "b": torch.from_numpy(b.copy()),
                "r": torch.zeros(4), "s": torch.zeros(2, 3)}

    want_r, want_s = expected()
    for arrays, _ in replay_two_ranks(two_reduces, "py-torch", make):
        assert torch.equal(arrays["r"], torch.from_numpy(want_r))
        assert torch.equal(arrays["s"], torch.from_numpy(want_s))


def test_views_are_written_through_tensor_and_read_back():
    # Zero-copy views: every tensor is a slot of the comm's buffer.
    plan = collc.compile(TWO_REDUCES)
    x = collc.Executor(plan, 0, rendezvous="py-views-refused")
    with pytest.raises(collc.Error, match=r'%a is a zero-copy view of a plan buffer: write it '
                                          r'at tensor\("a"\) instead of binding it'):
        x.bind("a", np.zeros(4, np.float32))
    x.close()

    def rank_body(rank):
        with collc.Executor(plan, rank, rendezvous="py-views", timeout_ms=20000) as x:
            a, b = inputs(rank)

            def fwd(name, index):
                if name == "fwd":
                    x.tensor("a")[...] = a
                elif name == "fwd2":
                    x.tensor("b")[...] = b

            assert x.unbound() == (0, "")
            x.capture()
            x.replay(fwd)
            assert x.tensor("b").shape == (2, 3) and x.tensor("b").dtype == np.float32
            return x.tensor("r").copy(), x.tensor("s").copy()

    want_r, want_s = expected()
    for r, s in on_two_ranks(rank_body):
        np.testing.assert_array_equal(r, want_r)
        np.testing.assert_array_equal(s, want_s)


def test_a_compute_callbacks_exception_stops_the_step_and_is_raised(two_reduces):
    def rank_body(rank):
        with collc.Executor(two_reduces, rank, rendezvous="py-raise", timeout_ms=20000) as x:
            for name, shape in (("a", 4), ("b", (2, 3)), ("r", 4), ("s", (2, 3))):
                x.bind(name, np.zeros(shape, np.float32))
            x.capture()

            def boom(name, index):
                if rank == 0 and name == "use":  # after every collective of the step
                    raise KeyError("the model failed")

            if rank == 0:
                with pytest.raises(KeyError, match="the model failed") as e:
                    x.replay(boom)
                assert isinstance(e.value.__cause__, collc.Error)
                assert "the compute callback of @use" in e.value.__cause__.text
            else:
                x.replay(boom)
    on_two_ranks(rank_body)


def test_executor_refusals_are_collc_errors(two_reduces):
    with pytest.raises(collc.Error, match="collcExecutorCreate: rank is 2: expected 0..1") as e:
        collc.Executor(two_reduces, 2)
    assert e.value.result == 1
    with pytest.raises(collc.Error, match='backend is "carrier": expected local'):
        collc.Executor(two_reduces, 0, backend="carrier")
    if not torch.cuda.is_available():  # a GPU machine would start NCCL here
        with pytest.raises(collc.UnsupportedError, match='backend is "nccl": ') as e:
            collc.Executor(two_reduces, 0, backend="nccl", rendezvous="file:/nonexistent")
        assert isinstance(e.value, NotImplementedError) and e.value.name == "collcUnsupported"

    x = collc.Executor(two_reduces, 0, rendezvous="py-refuse")
    with pytest.raises(collc.Error, match="has no tensor %zz"):
        x.bind("zz", np.zeros(4, np.float32))
    with pytest.raises(collc.Error, match="has no tensor %zz"):
        x.tensor("zz")
    with pytest.raises(collc.Error, match=r"collcExecutorBind: .*%a is f32\[4\] \(16 bytes\); "
                                          r"32 bytes were bound"):
        x.bind("a", np.zeros(8, np.float32))
    with pytest.raises(collc.Error, match=r'name is "a": the plan\'s tensor is f32\[4\]: '
                                          r"expected an array of float32, got float64"):
        x.bind("a", np.zeros(4, np.float64))
    with pytest.raises(collc.Error, match="expected a tensor of torch.float32, got torch.int32"):
        x.bind("a", torch.zeros(4, dtype=torch.int32))
    with pytest.raises(collc.Error, match="not contiguous"):
        x.bind("b", torch.zeros(3, 2).t())
    with pytest.raises(collc.Error, match="not C-contiguous"):
        x.bind("b", np.zeros((3, 2), np.float32).T)
    with pytest.raises(collc.Error, match="got a list: expected a numpy array or a torch"):
        x.bind("a", [0.0] * 4)
    with pytest.raises(collc.Error, match="collcInvalidUsage: .*expected collcExecutorCapture "
                                          "before collcExecutorReplay"):
        x.replay()
    with pytest.raises(collc.Error, match="collcExecutorSynchronize: timeoutMs is -1000"):
        x.synchronize(-1)
    x.close()
    with pytest.raises(collc.Error, match="collcExecutorRank: exec is NULL: expected an "
                                          "executor from collcExecutorCreate"):
        x.rank
    with pytest.raises(collc.Error, match="collcExecutorCapture: exec is NULL"):
        x.capture()
    two_reduces.close()
    with pytest.raises(collc.Error, match="collcExecutorCreate: plan is NULL"):
        collc.Executor(two_reduces, 0)
    with pytest.raises(TypeError, match="expected a collc.Plan"):
        collc.Executor("plan", 0)


def test_device_memory_and_streams_are_refused_on_a_host_executor(two_reduces):
    with collc.Executor(two_reduces, 0, rendezvous="py-cuda") as x:
        assert not x.on_device  # collcExecutorMemory: host memory
        a = np.zeros(4, np.float32)
        x.bind("a", a)
        assert x.address("a") == (a.__array_interface__["data"][0], 16)
        with pytest.raises(collc.Error, match="collcExecutorBindDevice: exec runs on the local "
                                              "backend, which binds host memory") as e:
            x.bind_device("a", 0x1000, 16)
        assert e.value.name == "collcInvalidUsage"
        with pytest.raises(collc.Error, match="collcExecutorSetStream: cudaStream is NULL"):
            x.set_stream(0)
        with pytest.raises(collc.Error, match="collcExecutorSetStream needs an executor of a "
                                              "device backend"):
            x.set_stream(1)


ONE_RANK = TWO_REDUCES.replace("world(2)", "world(1)")


@pytest.mark.skipif(not torch.cuda.is_available(),
                    reason="torch here has no CUDA device (CPU-only torch or no GPU)")
def test_nccl_replays_torch_cuda_tensors_on_one_rank(tmp_path):
    plan = collc.compile(ONE_RANK, passes=UNFUSED)
    with collc.Executor(plan, 0, backend="nccl", rendezvous=f"file:{tmp_path}",
                        timeout_ms=20000) as x:
        a = torch.arange(4, dtype=torch.float32, device="cuda")
        b = torch.ones(2, 3, device="cuda")
        assert x.on_device
        r, s = torch.zeros(4, device="cuda"), torch.zeros(2, 3, device="cuda")
        for name, t in (("a", a), ("b", b), ("r", r), ("s", s)):
            x.bind(name, t)  # the device pointer, and torch's current stream
        assert x.address("r") == (r.data_ptr(), 16)
        with pytest.raises(collc.Error, match="the nccl backend's tensors are device memory"):
            x.tensor("r")
        x.capture()
        called = []  # as on every backend, each compute of the rank in plan order
        x.replay(lambda name, index: called.append(name))
        assert called == ["fwd", "fwd2", "use"]
        for step in range(3):
            a.add_(1)  # the model's work on the current stream, before the step
            x.replay()
            x.synchronize(10.0)
            torch.cuda.current_stream().synchronize()
            assert torch.equal(r, a) and torch.equal(s, b)  # a world of one


def test_async_replay_queues_steps_and_synchronize_waits(two_reduces):
    def rank_body(rank):
        with collc.Executor(two_reduces, rank, rendezvous="py-async", timeout_ms=20000,
                            async_replay=True) as x:
            a, b = inputs(rank)
            r, s = np.zeros(4, np.float32), np.zeros((2, 3), np.float32)
            for name, arr in (("a", a), ("b", b), ("r", r), ("s", s)):
                x.bind(name, arr)
            x.capture()
            seen = []
            for _ in range(3):
                x.replay(lambda name, index: seen.append(name))
            x.synchronize(10.0)
            return r, s, seen

    want_r, want_s = expected()
    for r, s, seen in on_two_ranks(rank_body):
        np.testing.assert_array_equal(r, want_r)
        np.testing.assert_array_equal(s, want_s)
        assert seen == ["fwd", "fwd2", "use"] * 3


def test_synchronize_times_out_naming_the_step_a_peer_holds(two_reduces):
    executors = {}

    def setup(rank):
        x = collc.Executor(two_reduces, rank, rendezvous="py-async-timeout", timeout_ms=1500,
                           async_replay=True)
        for name, shape in (("a", 4), ("b", (2, 3)), ("r", 4), ("s", (2, 3))):
            x.bind(name, np.zeros(shape, np.float32))
        x.capture()
        executors[rank] = x

    on_two_ranks(setup)
    x0, x1 = executors[0], executors[1]
    x0.replay(lambda name, index: None)  # rank 1 never replays
    with pytest.raises(collc.Error, match=r"rank 0: 1 step\(s\) still pending after 200 ms: "
                                          r"replay #1 has run") as e:
        x0.synchronize(0.2)
    assert e.value.name == "collcTimeout"
    # The step ends at the executor's own timeout, naming the peer.
    with pytest.raises(collc.Error, match="rank 1 of group") as e:
        x0.synchronize(20.0)
    assert e.value.name == "collcTimeout"
    x0.close()
    x1.close()


ONE_RANK = """program @one world(1) {
  group @dp = world
  %a = compute @fwd cost(1us) : f32[4]
  %r = all_reduce sum %a in @dp
  compute @use(%r) cost(1us)
}"""


def test_close_while_another_thread_replays_is_refused_naming_the_replay():
    # Destroying the executor under a running replay was a use of freed
    # memory (Python's __del__ and close() may run on any thread).
    plan = collc.compile(ONE_RANK, passes=UNFUSED)
    x = collc.Executor(plan, 0, rendezvous="py-close-replaying", timeout_ms=20000)
    r = np.zeros(4, np.float32)
    x.bind("a", np.arange(4, dtype=np.float32))
    x.bind("r", r)
    x.capture()
    entered, release = threading.Event(), threading.Event()

    def hold(name, index):
        if name == "fwd":
            entered.set()
            release.wait(60)

    replayer = threading.Thread(target=x.replay, args=(hold,))
    replayer.start()
    try:
        assert entered.wait(60)
        with pytest.raises(collc.Error, match=r"collcExecutorDestroy: exec \(.*\) is in use by "
                                              r"collcExecutorReplay on another thread") as e:
            x.close()
        assert e.value.name == "collcInvalidUsage"
    finally:
        release.set()
        replayer.join(60)
    np.testing.assert_array_equal(r, np.arange(4, dtype=np.float32))
    x.replay()  # the refused close left it whole
    x.close()
    assert repr(x) == "<collc.Executor closed>"


def test_bindings_that_partly_overlap_are_refused_naming_both():
    # g = buf[:N], r = buf[1:N+1] gave silently wrong sums (2046 of 65536
    # elements on 2 local ranks); the same memory (in place) is right.
    n = 1024
    plan = collc.compile(f"""program @overlap world(2) {{
  group @dp = world
  %g = compute @bwd : f32[{n}]
  %r = all_reduce sum %g in @dp
  compute @use(%r)
}}""", passes=UNFUSED)

    def rank_body(rank):
        with collc.Executor(plan, rank, rendezvous="py-overlap", timeout_ms=20000) as x:
            buf = np.arange(n + 1, dtype=np.float32) * (rank + 1)
            x.bind("g", buf[:n])
            x.bind("r", buf[1:n + 1])
            with pytest.raises(collc.Error, match=rf"rank {rank} cannot capture plan @overlap: "
                                                  rf"%g \({4 * n} bytes\) and %r \({4 * n} "
                                                  rf"bytes\) overlap: %r starts 4 bytes into %g"):
                x.capture()
            x.bind("r", buf[:n])
            x.capture()
            x.replay()
            return buf[:n].copy()

    for out in on_two_ranks(rank_body):
        np.testing.assert_array_equal(out, np.arange(n, dtype=np.float32) * 3)


def test_a_tensor_whose_memory_does_not_hold_its_values_is_refused_naming_it(two_reduces):
    # A negative view's memory holds 2 where the tensor means -2: bound as
    # raw memory, the sum used +2. Likewise a conjugate view.
    with collc.Executor(two_reduces, 0, rendezvous="py-neg-bit") as x:
        neg = torch.full((4,), 2.0)._neg_view()
        assert neg.is_neg()
        with pytest.raises(collc.Error, match=r'Executor.bind: name is "a": the tensor\'s '
                                              r"is_neg\(\) is set: its memory does not hold its "
                                              r"values: .*bind t.resolve_neg\(\)"):
            x.bind("a", neg)
        conj = torch.full((4,), 1 + 2j, dtype=torch.complex64).conj()
        assert conj.is_conj()
        with pytest.raises(collc.Error, match=r'name is "a": the tensor\'s is_conj\(\) is set'):
            x.bind("a", conj)
        resolved = neg.resolve_neg()
        x.bind("a", resolved)
        assert x.tensor("a").tolist() == [-2.0] * 4
