"""Checks `collc bench --json`: nccl-tests-style rows (op, backend, ranks,
bytes, time_us, algbw, busbw) for every size from 8 B to the maximum, the
memory-copy limit measured alongside, the replay comparison, and the
flight record's cost on replays.
Args: file, largest size in bytes."""
import json
import sys

doc = json.load(open(sys.argv[1]))
largest = int(sys.argv[2])
sizes = []
size = 8
while size <= largest:
    sizes.append(size)
    size *= 2
rows = doc["rows"]
for row in rows:
    assert set(row) == {"op", "backend", "ranks", "bytes", "time_us", "algbw", "busbw"}, row
    assert row["time_us"] > 0 and row["algbw"] > 0 and row["busbw"] > 0, row
    # nccl-tests' definitions: algbw = bytes / time, busbw = algbw * 2(n-1)/n.
    algbw = row["bytes"] / row["time_us"] / 1e3
    assert abs(row["algbw"] - algbw) <= 1e-9 * max(1, algbw), row
for backend in ("local", "limit"):
    got = [r["bytes"] for r in rows if r["backend"] == backend and r["op"] != "replay-fused"
           and not r["op"].startswith("replay")]
    assert got == sizes, (backend, got)
ops = {r["op"] for r in rows}
assert {"replay-fused", "replay-one-by-one"} <= ops, ops
# The flight record's cost: the 8 B replay and the fused one, on and off.
record = {(r["op"], r["backend"]) for r in rows if r["backend"] in ("record", "norecord")}
assert record == {(op, b) for op in ("replay-8B", "replay-fused") for b in ("record", "norecord")}, record
for key in ("record_overhead_8B", "record_overhead_fused"):
    assert isinstance(doc["summary"][key], float), (key, doc["summary"])
# A smoke run on a busy machine proves nothing about speed: only that it
# was measured.
assert doc["summary"]["replay_speedup"] > 0, doc["summary"]
assert doc["mpi"], "the MPI column says what it is or why it was skipped"
print("ok", len(rows))
