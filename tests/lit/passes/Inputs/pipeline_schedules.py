#!/usr/bin/env python3
"""Writes the pipeline schedules of tests/lit/passes/check-cross-rank-p2p.coll
as collc programs: GPipe, 1F1B (PipeDream-flush) and interleaved 1F1B, each
rank's ops in the order Megatron-LM issues them (its schedules.py), one rank
after another under `when rank == s` (a rank sees only its own ops, so their
relative order in the file does not matter).

Warm-up and cool-down sends and recvs block, as Megatron's send_forward and
recv_backward do; the steady state's combined ops (send_forward_recv_backward,
send_backward_recv_forward, and the interleaved schedule's
send_forward_backward_recv_forward_backward) are `p2p { }` blocks, as
Megatron issues them with batch_isend_irecv.

  pipeline_schedules.py gpipe|1f1b|interleaved STAGES MICROBATCHES [CHUNKS] [--blocking|--overlap]

--blocking writes each block's ops as blocking sends and recvs instead (sends
first): the steady state then deadlocks, which check-cross-rank must find.

--overlap writes each block as Megatron's overlap_p2p_comm issues it: its
recvs posted async before the compute that precedes the block, its sends
async after that compute, then a wait for each (the exchange with a compute
between its halves, which NCCL issues as one group: nccl-p2p.test).
"""
import sys

T = "f32[16]"
BLOCKING = "--blocking" in sys.argv
OVERLAP = "--overlap" in sys.argv


class Writer:
    def __init__(self, name, world):
        self.lines = [f"program @{name} world({world}) {{"]
        self.block = None
        self.last_compute = None  # where the latest compute line is
        self.tokens = 0

    def op(self, text, rank):
        """One blocking op of rank; None (no neighbour on that side) writes
        nothing."""
        if not text:
            return
        if " = compute " in text:
            self.last_compute = len(self.lines)
        self.lines.append(f"  {text} when rank == {rank}")

    def batch(self, ops, rank):
        ops = [o for o in ops if o]
        if not ops:
            return
        if BLOCKING:
            for o in sorted(ops, key=lambda o: not o.startswith("send")):
                self.op(o, rank)
            return
        if OVERLAP:
            waits = []
            for o in ops:
                if o.startswith("send"):
                    self.tokens += 1
                    token = f"%t.{self.tokens}"
                    self.op(f"{token} = send async{o[len('send'):]}", rank)
                else:
                    name, rest = o.split(" = recv ", 1)
                    # Posted before the compute this block follows, which
                    # never uses what the block receives.
                    self.lines.insert(self.last_compute,
                                      f"  {name} = recv async {rest} when rank == {rank}")
                    self.last_compute += 1
                    token = name
                waits.append(token)
            for t in waits:
                self.op(f"wait {t}", rank)
            return
        self.lines.append("  p2p {")
        for o in ops:
            self.lines.append(f"    {o} when rank == {rank}")
        self.lines.append("  }")

    def text(self):
        return "\n".join(self.lines + ["}"]) + "\n"


def gpipe(P, M):
    w = Writer("gpipe", P)
    for s in range(P):
        for m in range(M):
            src = "" if s == 0 else f"%a.{s}.{m}"
            if s > 0:
                w.op(f"%a.{s}.{m} = recv from {s - 1} : {T}", s)
            w.op(f"%h.{s}.{m} = compute @fwd.{s}({src}) : {T}", s)
            if s < P - 1:
                w.op(f"send %h.{s}.{m} to {s + 1}", s)
        for m in range(M):
            g = f"%h.{s}.{m}"
            if s < P - 1:
                w.op(f"%g.{s}.{m} = recv from {s + 1} : {T}", s)
                g += f", %g.{s}.{m}"
            w.op(f"%d.{s}.{m} = compute @bwd.{s}({g}) : {T}", s)
            if s > 0:
                w.op(f"send %d.{s}.{m} to {s - 1}", s)
    return w.text()


def one_f_one_b(P, M):
    w = Writer("one_f_one_b", P)
    for s in range(P):
        first, last = s == 0, s == P - 1
        warm = min(P - s - 1, M)
        f = b = 0

        def fwd():
            """Computes the next microbatch's forward; returns its number."""
            nonlocal f
            src = "" if first else f"%a.{s}.{f}"
            w.op(f"%h.{s}.{f} = compute @fwd.{s}({src}) : {T}", s)
            f += 1
            return f - 1

        def bwd():
            """Computes the next microbatch's backward; returns its number."""
            nonlocal b
            g = f"%h.{s}.{b}" + ("" if last else f", %g.{s}.{b}")
            w.op(f"%d.{s}.{b} = compute @bwd.{s}({g}) : {T}", s)
            b += 1
            return b - 1

        def alone(recv, compute, send, m):
            """A warm-up or cool-down step: microbatch m's blocking recv, its
            compute, its blocking send (recv_forward, forward, send_forward,
            or their backward twins)."""
            w.op(recv(m), s)
            compute()
            w.op(send(m), s)

        recv_fwd = lambda m: None if first else f"%a.{s}.{m} = recv from {s - 1} : {T}"
        send_fwd = lambda m: None if last else f"send %h.{s}.{m} to {s + 1}"
        recv_bwd = lambda m: None if last else f"%g.{s}.{m} = recv from {s + 1} : {T}"
        send_bwd = lambda m: None if first else f"send %d.{s}.{m} to {s - 1}"
        for _ in range(warm):
            alone(recv_fwd, fwd, send_fwd, f)
        rest = M - warm
        if rest:
            w.op(recv_fwd(f), s)
        for i in range(rest):
            m = fwd()
            # send_forward_recv_backward
            w.batch([send_fwd(m), recv_bwd(b)], s)
            mb = bwd()
            if i == rest - 1:
                w.op(send_bwd(mb), s)
            else:
                # send_backward_recv_forward
                w.batch([send_bwd(mb), recv_fwd(f)], s)
        for _ in range(warm):
            alone(recv_bwd, bwd, send_bwd, b)
    return w.text()


def interleaved(P, M, V):
    """Megatron's interleaved 1F1B: V model chunks per rank; virtual stage
    c * P + s; every step ends in one batch with both neighbours."""
    assert M % P == 0
    w = Writer("interleaved", P)
    N = M * V
    for s in range(P):
        warm = min((P - s - 1) * 2 + (V - 1) * P, N)

        def chunk(k, forward):
            c = (k % (P * V)) // P
            return c if forward else V - c - 1

        def micro(k):
            return (k // (P * V)) * P + k % P

        def vs(k, forward):
            return chunk(k, forward) * P + s

        def fname(k):
            return f"{s}.{chunk(k, True)}.{micro(k)}"

        def bname(k):
            return f"{s}.{chunk(k, False)}.{micro(k)}"

        def fwd(k):
            src = "" if vs(k, True) == 0 else f"%a.{fname(k)}"
            w.op(f"%h.{fname(k)} = compute @fwd.{s}.{chunk(k, True)}({src}) : {T}", s)

        def bwd(k):
            g = f"%h.{bname(k)}"
            if vs(k, False) != P * V - 1:
                g += f", %g.{bname(k)}"
            w.op(f"%d.{bname(k)} = compute @bwd.{s}.{chunk(k, False)}({g}) : {T}", s)

        prev, nxt = (s - 1) % P, (s + 1) % P
        send_fwd = lambda k: None if vs(k, True) == P * V - 1 else f"send %h.{fname(k)} to {nxt}"
        recv_fwd = lambda k: None if k >= N or vs(k, True) == 0 else f"%a.{fname(k)} = recv from {prev} : {T}"
        send_bwd = lambda k: None if vs(k, False) == 0 else f"send %d.{bname(k)} to {prev}"
        recv_bwd = lambda k: None if k >= N or vs(k, False) == P * V - 1 else f"%g.{bname(k)} = recv from {nxt} : {T}"

        w.op(recv_fwd(0), s)
        for k in range(warm):
            fwd(k)
            ops = [send_fwd(k), recv_fwd(k + 1)]
            if k == warm - 1 and warm < N:
                ops.append(recv_bwd(0))  # send_forward_backward_recv_forward_backward
            w.batch(ops, s)
        for i in range(N - warm):
            kf, kb = i + warm, i
            fwd(kf)
            bwd(kb)
            w.batch([send_fwd(kf), send_bwd(kb), recv_fwd(kf + 1), recv_bwd(kb + 1)], s)
        for kb in range(N - warm, N):
            if kb == 0 and warm == N:
                w.op(recv_bwd(0), s)
            bwd(kb)
            w.batch([send_bwd(kb), recv_bwd(kb + 1)], s)
    return w.text()


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a not in ("--blocking", "--overlap")]
    kind, P, M = args[0], int(args[1]), int(args[2])
    if kind == "gpipe":
        sys.stdout.write(gpipe(P, M))
    elif kind == "1f1b":
        sys.stdout.write(one_f_one_b(P, M))
    else:
        sys.stdout.write(interleaved(P, M, int(args[3])))
