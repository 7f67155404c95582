"""Shared by the Python package's tests: the programs, and a runner of the
two ranks of the local backend on two threads (collc.h: local ranks are
executors driven from different threads of one process)."""

import threading

import pytest

# Two f32 all_reduces (sum) over world 2 that the program's own computes
# produce and use (fused into one comm).
TWO_REDUCES = """program @two world(2) {
  group @dp = world
  %a = compute @fwd cost(1us) : f32[4]
  %b = compute @fwd2 cost(1us) : f32[2, 3]
  %r = all_reduce sum %a in @dp
  %s = all_reduce sum %b in @dp
  compute @use(%r, %s) cost(1us)
}"""

# A pipeline without the bucket and fuse passes (docs/passes.md).
UNFUSED = "verify,check-cross-rank,order,schedule,plan-memory"

# The same with another size: another digest.
OTHER_REDUCE = TWO_REDUCES.replace("f32[4]", "f32[8]")


def gloo_built():
    """Whether this build of libcollc.so has the gloo backend."""
    import collc
    try:
        collc.Executor(collc.compile(TWO_REDUCES), 0, backend="gloo",
                       rendezvous="file:/nonexistent-collc-dir", timeout_ms=1)
    except collc.UnsupportedError:
        return False
    except collc.Error:
        pass
    return True


def on_two_ranks(body):
    """Runs body(rank) for ranks 0 and 1 on two threads; returns their
    results, or raises the first exception either raised."""
    results, errors = [None, None], [None, None]

    def run(rank):
        try:
            results[rank] = body(rank)
        except BaseException as e:  # reported on the test's thread
            errors[rank] = e

    t = threading.Thread(target=run, args=(1,))
    t.start()
    run(0)
    t.join(60)
    assert not t.is_alive(), "rank 1 hung"
    for e in errors:
        if e is not None:
            raise e
    return results


@pytest.fixture
def two_reduces():
    """The plan with one comm per all_reduce (no fuse pass): no plan buffer,
    so the caller binds all four tensors."""
    import collc
    return collc.compile(TWO_REDUCES, passes=UNFUSED)
