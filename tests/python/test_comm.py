"""collc.Communicator (collc.h's eager collectives) on two local ranks
(threads) over numpy arrays and torch CPU tensors, checked against values
computed here; its refusals; and, on gloo, two processes meeting in torch's
TCPStore (collc.register_store), each running an eager all_reduce and four
executors (torch_store_rank.py)."""

import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import collc
from conftest import gloo_built, on_two_ranks

HERE = pathlib.Path(__file__).resolve().parent
SPAWN = HERE.parent / "launch" / "spawn_ranks.py"


def test_every_operation_on_two_local_ranks_over_numpy():
    def body(rank):
        with collc.Communicator(rank, 2, rendezvous="py-comm-numpy") as c:
            s = np.arange(4, dtype=np.float32) + rank
            c.all_reduce(s).wait()
            m = np.array([rank * 3, 9 - rank], np.int64)
            c.all_reduce(m, op="min").wait()
            b = np.full(3, rank + 5, np.int32)
            c.broadcast(b, root=1).wait()
            g = np.zeros((2, 2), np.float64)
            c.all_gather(np.array([rank, -rank], np.float64), g).wait()
            rs = np.zeros(2, np.float32)
            c.reduce_scatter(np.arange(4, dtype=np.float32) * (rank + 1), rs).wait()
            a = np.zeros(3, np.float32)
            counts = [1, 2] if rank == 0 else [2, 1]
            c.all_to_all(np.arange(3, dtype=np.float32) + 10 * rank, a, counts, counts).wait()
            got = np.zeros(2, np.uint8)
            sent = c.send(np.array([rank, rank + 1], np.uint8), 1 - rank)
            c.recv(got, 1 - rank).wait()
            sent.wait()
            c.barrier().wait()
            return s, m, b, g, rs, a, got

    (s0, m0, b0, g0, rs0, a0, got0), (s1, m1, b1, g1, rs1, a1, got1) = on_two_ranks(body)
    for s in (s0, s1):
        np.testing.assert_array_equal(s, [1, 3, 5, 7])
    for m in (m0, m1):
        np.testing.assert_array_equal(m, [0, 8])
    for b in (b0, b1):
        np.testing.assert_array_equal(b, [6, 6, 6])
    for g in (g0, g1):
        np.testing.assert_array_equal(g, [[0, 0], [1, -1]])
    np.testing.assert_array_equal(rs0, [0, 3])  # (0,1) + (0,2)
    np.testing.assert_array_equal(rs1, [6, 9])  # (2,3) + (4,6)
    np.testing.assert_array_equal(a0, [0, 10, 11])
    np.testing.assert_array_equal(a1, [1, 2, 12])
    np.testing.assert_array_equal(got0, [1, 2])
    np.testing.assert_array_equal(got1, [0, 1])


def test_torch_cpu_tensors_of_every_collc_type_are_reduced():
    torch = pytest.importorskip("torch")
    dtypes = [torch.float32, torch.float64, torch.float16, torch.bfloat16, torch.int8,
              torch.uint8, torch.int32, torch.int64]

    def body(rank):
        with collc.Communicator(rank, 2, rendezvous="py-comm-torch") as c:
            out = []
            for dt in dtypes:
                t = (torch.arange(6) % 4 + rank).to(dt)
                c.all_reduce(t).wait()
                out.append(t)
            return out

    r0, r1 = on_two_ranks(body)
    for dt, t0, t1 in zip(dtypes, r0, r1):
        want = (torch.arange(6) % 4 * 2 + 1).to(dt)
        assert torch.equal(t0, want) and torch.equal(t1, want), (dt, t0, t1)


def test_refusals_name_what_is_wrong():
    torch = pytest.importorskip("torch")
    with collc.Communicator(0, 1, rendezvous="py-comm-refusals") as c:
        with pytest.raises(collc.Error, match="the tensor is on meta: expected a CPU tensor"):
            c.all_reduce(torch.zeros(4, device="meta"))
        with pytest.raises(collc.Error, match="not contiguous"):
            c.all_reduce(torch.zeros(4, 4).t())
        with pytest.raises(collc.Error, match="torch.complex64: expected one of collc's"):
            c.all_reduce(torch.zeros(4, dtype=torch.complex64))
        with pytest.raises(collc.Error, match="op is \"xor\": expected sum, prod"):
            c.all_reduce(np.zeros(4, np.float32), op="xor")
        with pytest.raises(collc.Error, match="root is 3: expected 0..0"):
            c.broadcast(np.zeros(4, np.float32), root=3)
        with pytest.raises(collc.Error, match="3 send and 1 recv counts: expected 1 of each"):
            c.all_to_all(np.zeros(3, np.float32), np.zeros(3, np.float32), [1, 1, 1], [3])
        with pytest.raises(collc.Error, match="got a list"):
            c.all_reduce([1.0, 2.0])


@pytest.mark.skipif(not gloo_built(), reason="this build of libcollc.so has no gloo backend")
def test_two_gloo_processes_meet_in_torchs_store_with_four_executors_each():
    pytest.importorskip("torch")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), env.get("PYTHONPATH", "")])
    run = subprocess.run([sys.executable, str(SPAWN), "-n", "2", "--rendezvous", "torch",
                          "--timeout", "120", "--", sys.executable,
                          str(HERE / "torch_store_rank.py")],
                         env=env, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, run.stdout + run.stderr
    for rank in (0, 1):
        assert f"[rank {rank}] rank {rank}: an eager all_reduce in the torch store ok" in run.stdout
        assert (f"[rank {rank}] rank {rank} of 2: four executors of one process in the torch "
                "store ok") in run.stdout
