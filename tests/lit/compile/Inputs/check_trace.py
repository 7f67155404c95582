"""Checks a Chrome trace (the format chrome://tracing and Perfetto open):
traceEvents with complete events (ph X, numeric ts/dur, pid, tid, name) for
every rank, and metadata naming each process. Args: file, world size, and
"measured" for a trace of `collc run` (launches and waits on the comm
stream) rather than a simulated one."""
import json
import sys

doc = json.load(open(sys.argv[1]))
events = doc["traceEvents"]
world = int(sys.argv[2])
complete = [e for e in events if e["ph"] == "X"]
assert complete, "no complete events"
for e in complete:
    assert isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float))
    assert e["dur"] >= 0 and e["ts"] >= 0
    assert isinstance(e["pid"], int) and isinstance(e["tid"], int) and e["name"]
ranks = {e["pid"] for e in complete}
assert ranks == set(range(world)), sorted(ranks)
names = {e["pid"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
assert names == set(range(world))
if len(sys.argv) > 3 and sys.argv[3] == "measured":
    cats = {e.get("cat") for e in complete}
    assert {"launch", "wait"} <= cats, cats
else:
    assert any(e.get("cat") == "comm" for e in complete), "no communication"
assert doc["otherData"]["step_us"] > 0
print("ok", len(complete))
