#!/usr/bin/env python3
"""Write the flight record dumps of one seeded fault into a directory.

  make_dumps.py SCENARIO OUTDIR [DIGEST]

Each scenario is a run of 4 ranks as its dumps would tell it: collc's
flight records (runtime/exec/FlightRecordDump.h, format
collc-flight-record 1) or PyTorch Flight Recorder dumps (schema 2.4, the
fields of torch/csrc/distributed/c10d/FlightRecorder.hpp). A rank that
died or stopped leaves no dump. The goldens (*.test) say what
`collc diagnose` must conclude from them.
"""

import json
import os
import sys

WORLD = 4
DIGEST = sys.argv[3] if len(sys.argv) > 3 else "xxh64:00000000000000aa"
NS = 1_800_000_000_000_000_000  # a plausible time of day, in ns


def event(seq, replay, step, comm, op="all_reduce", group="dp", subgroup=0, state="completed",
          error=None, blamed=-1, splits=()):
    e = {"seq": seq, "replay": replay, "step": step, "comm": comm, "op": op, "group": group,
         "subgroup": subgroup, "loc": "%d:3" % (4 + step), "dtype": "f32", "bytes": 4096,
         "peer": -1, "root": -1, "p2p": -1, "splits": list(splits), "splits_truncated": False,
         "state": state, "issued_ns": NS + seq * 1000, "started_ns": NS + seq * 1000,
         "ended_ns": NS + seq * 1000 + 500 if state == "completed" else 0}
    if state == "failed":
        e["error"] = error
        e["blamed"] = blamed
    return e


def replays(n, first_seq=0):
    """Replays 1..n of step 1's all_reduce, each completed."""
    return [event(first_seq + i, i + 1, 1, 0) for i in range(n)]


def collc(rank, events, groups=None, error=None, reason="failure", replays_done=5,
          activity="wait", step=1, digest=DIGEST, recorded=None):
    groups = groups or [("", 0, list(range(WORLD))), ("dp", 0, list(range(WORLD)))]
    d = {"format": "collc-flight-record", "version": 1, "rank": rank, "world": WORLD,
         "backend": "gloo", "pid": 1000 + rank, "host": "node%d" % rank, "reason": reason,
         "dumped_ns": NS + 10**9,
         "plan": {"program": "model", "digest": digest, "source": "model.coll"},
         "groups": [{"name": n, "subgroup": s, "ranks": r} for n, s, r in groups if rank in r],
         "replays": replays_done,
         "position": {"replay": replays_done, "step": step, "activity": activity},
         "capacity": 1024, "recorded": len(events) if recorded is None else recorded,
         "events": events}
    if error:
        kind, peer, message = error
        d["error"] = {"kind": kind, "peer": peer, "message": message}
    return d


def waiting(rank, kind, peer, message, blamed=None):
    """A rank whose all_reduce of replay 5 failed after four went well."""
    ev = replays(4) + [event(4, 5, 1, 0, state="failed", error=kind,
                             blamed=peer if blamed is None else blamed)]
    return collc(rank, ev, error=(kind, peer, message))


def lost(rank, peer):
    return waiting(rank, "peer_lost", peer, "rank %d, step 1 (wait comm #0 all_reduce in @dp): "
                   "lost rank %d (Connection reset by peer)" % (rank, peer))


def gone(rank, peer, done):
    """A rank that saw the process of rank `peer` end after `done` replays, between
    two (the gloo driver's health check, before its next op)."""
    return collc(rank, replays(done), replays_done=done, activity="idle", step=0,
                 error=("peer_lost", peer, "group 'collc.run/#world' on rank %d: lost rank %d "
                        "(process vm:%d is no longer running)" % (rank, peer, 1000 + peer)))


def timed_out(rank):
    return waiting(rank, "timeout", -1, "rank %d, step 1 (wait comm #0 all_reduce in @dp): "
                   "timed out after 5000 ms" % rank)


def torch_entry(rid, pg, seq, name="nccl:all_reduce", state="completed", retired=False):
    return {"record_id": rid, "pg_id": int(pg), "process_group": [pg, "undefined"],
            "collective_seq_id": seq, "p2p_seq_id": 0, "op_id": seq,
            "profiling_name": name, "input_sizes": [[1024]], "input_dtypes": ["Float"],
            "output_sizes": [[1024]], "output_dtypes": ["Float"], "state": state,
            "time_created_ns": NS + rid * 1000,
            "time_discovered_started_ns": NS + rid * 1000 if state != "scheduled" else None,
            "time_discovered_completed_ns": NS + rid * 1000 + 500 if state == "completed"
            else None,
            "timeout_ms": 600000, "is_p2p": False, "retired": retired, "frames": []}


def torch(rank, entries, pgs):
    return {"version": "2.4", "rank": rank,
            "pg_config": {pg: {"name": pg, "desc": "undefined", "ranks": str(r)}
                          for pg, r in pgs.items() if rank in r},
            "pg_status": {}, "entries": entries}


def scenarios():
    s = {}
    # Rank 2 killed during replay 5: ranks 1 and 3 lose it; rank 0 loses
    # rank 1, which closed on it only after it lost rank 2.
    s["dead"] = {0: lost(0, 1), 1: lost(1, 2), 3: lost(3, 2)}
    # The same with half of the dumps gone: ranks 1 and 2 both silent, and
    # no survivor tells them apart.
    s["dead-half"] = {0: lost(0, 1), 3: lost(3, 2)}
    # Rank 2 killed between replays 4 and 5, on rank 0's host: rank 0 saw
    # its process end before issuing replay 5 (outside any op); rank 1 lost
    # rank 0, which closed on it; rank 3 lost rank 2.
    s["dead-between"] = {0: gone(0, 2, 4), 1: lost(1, 0), 3: lost(3, 2)}
    # The same seen by every survivor between replays: no rank waits.
    s["dead-outside"] = {r: gone(r, 2, 5) for r in (0, 1, 3)}
    # Rank 1 stopped (SIGSTOP): no dump, its peers time out.
    s["stalled"] = {0: timed_out(0), 2: timed_out(2), 3: timed_out(3)}
    # Rank 3 still computes replay 5's step 0 while the others wait.
    s["behind"] = {0: timed_out(0), 1: timed_out(1), 2: timed_out(2),
                   3: collc(3, replays(4), reason="signal", activity="compute", step=0)}
    # Rank 1 skipped replay 5's step 1 and issued step 2's all_reduce.
    s["skipped"] = {0: timed_out(0), 2: timed_out(2), 3: timed_out(3),
                    1: collc(1, replays(4) + [event(4, 5, 2, 1)], reason="signal",
                             activity="wait", step=2)}
    # Rank 2 sent all_to_all_v split sizes that do not fit: every member
    # refuses the exchange and names it.
    a2a = {}
    for r in range(WORLD):
        bad = [1, 1, 9, 1] if r == 2 else [1, 1, 1, 1]
        ev = replays(4) + [event(4, 5, 1, 0, op="all_to_all_v", state="failed",
                                 error="invalid_argument", blamed=2, splits=bad)]
        a2a[r] = collc(r, ev, error=("invalid_argument", 2, "rank %d, step 1: all_to_all_v: rank 2 "
                                     "sends 9 rows to rank 2, the plan has 4" % r))
    s["splits"] = a2a
    # Ranks 0 and 1 time out in tp/0 waiting for rank 1's partner... rank
    # 1 stopped; tp/1 (ranks 2 and 3) went on and finished.
    tp = [("", 0, [0, 1, 2, 3]), ("tp", 0, [0, 1]), ("tp", 1, [2, 3])]
    tp_done = [event(i, i + 1, 1, 0, group="tp", subgroup=1) for i in range(5)]
    tp_wait = [event(i, i + 1, 1, 0, group="tp", subgroup=0) for i in range(4)] + [
        event(4, 5, 1, 0, group="tp", subgroup=0, state="failed", error="timeout")]
    s["group"] = {0: collc(0, tp_wait, groups=tp, error=("timeout", -1, "rank 0: timed out")),
                  2: collc(2, tp_done, groups=tp, reason="exit", activity="idle", step=0),
                  3: collc(3, tp_done, groups=tp, reason="exit", activity="idle", step=0)}
    # Ranks 2 and 3 run another plan than ranks 0 and 1.
    other = "xxh64:00000000000000bb"
    s["plans"] = {r: collc(r, [], digest=DIGEST if r < 2 else other, replays_done=0,
                           activity="idle", step=0,
                           error=("mismatch", 0 if r >= 2 else 2, "plan digests differ across "
                                  "ranks"))
                  for r in range(WORLD)}
    # PyTorch: ranks 0 and 1 wait at the world's collective #3; rank 2
    # waits in its pair group for rank 3, which stopped. fr_trace blames
    # ranks 2 and 3 (missing from world #3); rank 2 only waited.
    pgs = {"0": [0, 1, 2, 3], "1": [0, 1], "2": [2, 3]}
    done = [torch_entry(0, "0", 1), torch_entry(1, "0", 2)]
    s["torch-waits"] = {
        0: torch(0, done + [torch_entry(2, "0", 3, state="scheduled")], pgs),
        1: torch(1, done + [torch_entry(2, "0", 3, state="scheduled")], pgs),
        2: torch(2, done + [torch_entry(2, "2", 1), torch_entry(3, "2", 2, state="started")],
                 pgs)}
    # PyTorch: rank 3 broadcasts where the others all_reduce.
    s["torch-op"] = {r: torch(r, done + [torch_entry(
        2, "0", 3, name="nccl:broadcast" if r == 3 else "nccl:all_reduce", state="started")],
        pgs) for r in range(WORLD)}
    # Only rank 1's dump, whose record goes from replay 3 to replay 5 with
    # nothing between: given the plan (Inputs/model.coll), it skipped
    # replay 4's all_reduce.
    s["plan-skip"] = {1: collc(1, replays(3) + [event(3, 5, 1, 0, state="started")],
                               reason="signal")}
    return s


def hostile(out):
    """Rank 0's dump whole beside dumps no reader may trust: each must be a
    located finding, never a crash or a culprit."""
    good = scenarios()["dead"]
    texts = {"collc-record-rank0.json": json.dumps(good[0], indent=1)}
    texts["truncated.json"] = json.dumps(good[1], indent=1)[:300]
    for name, edit in [
            ("version.json", lambda d: d.update(version=7)),
            ("capacity.json", lambda d: d.update(capacity=1)),
            ("world.json", lambda d: d.update(world=1 << 40)),
            ("state.json", lambda d: d["events"][2].update(state=7)),
            ("group.json", lambda d: d["events"][0].update(group="tp")),
            ("splits.json", lambda d: d["events"][0].update(splits=[1] * 100000))]:
        d = json.loads(json.dumps(good[3]))
        edit(d)
        texts[name] = json.dumps(d)
    texts["deep.json"] = "[" * 100000
    os.makedirs(out, exist_ok=True)
    for name, text in texts.items():
        with open(os.path.join(out, name), "w") as f:
            f.write(text)
    # The recorder's pickle form (protocol 4 begins 0x80 0x04).
    with open(os.path.join(out, "pickle"), "wb") as f:
        f.write(b"\x80\x04\x95\x10\x00\x00\x00")


def main():
    name, out = sys.argv[1], sys.argv[2]
    if name == "hostile":
        return hostile(out)
    dumps = scenarios()[name]
    os.makedirs(out, exist_ok=True)
    torch_like = name.startswith("torch")
    for rank, d in sorted(dumps.items()):
        file = "nccl_trace_rank_%d" % rank if torch_like else "collc-record-rank%d.json" % rank
        with open(os.path.join(out, file), "w") as f:
            json.dump(d, f, indent=1)


if __name__ == "__main__":
    main()
