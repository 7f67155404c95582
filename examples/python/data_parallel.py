# Two data-parallel ranks of one process (threads) average their gradients
# with a plan collc compiled, replayed over numpy arrays.
import threading

import numpy as np

import collc

PROGRAM = """program @dp_step world(2) {
  group @dp = world
  %g.w = compute @bwd.w cost(40us) : f32[256, 64]
  %g.b = compute @bwd.b cost(2us) : f32[64]
  %r.w = all_reduce avg %g.w in @dp
  %r.b = all_reduce avg %g.b in @dp
  compute @opt(%r.w, %r.b) cost(10us)
}"""

plan = collc.compile(PROGRAM, bucket="ddp")
print(plan.digest, "world", plan.world)
print(plan.dump("text").splitlines()[0])
print(f"simulated step: {plan.simulate().step_us:.1f} us")

results = {}


def rank_main(rank):
    x = collc.Executor(plan, rank, backend="local", rendezvous="example")
    # Bucketed gradients are zero-copy views in the plan's buffer: the
    # "backward" writes them there, in the compute callback.
    def compute(name, index):
        if name == "bwd.w":
            x.tensor("g.w")[...] = rank + 1.0
        elif name == "bwd.b":
            x.tensor("g.b")[...] = np.arange(64, dtype=np.float32) * (rank + 1)

    assert x.unbound() == (0, "")  # every tensor is a view: nothing to bind
    x.capture()
    x.replay(compute)
    x.synchronize(timeout=1.0)
    results[rank] = (x.tensor("r.w").copy(), x.tensor("r.b").copy())
    x.close()


threads = [threading.Thread(target=rank_main, args=(r,)) for r in (0, 1)]
for t in threads:
    t.start()
for t in threads:
    t.join()

for rank, (w, b) in sorted(results.items()):
    assert np.all(w == 1.5), w  # (1 + 2) / 2
    assert np.array_equal(b, np.arange(64, dtype=np.float32) * 1.5)
    print(f"rank {rank}: gradients averaged")
