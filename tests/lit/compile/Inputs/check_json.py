"""Checks `collc dump --format json`: a `buckets` array whose entries have
kind, dtype, group, bytes and tensors (names). Args: file, expected bucket
count (or -), expected total tensors."""
import json
import sys

doc = json.load(open(sys.argv[1]))
buckets = doc["buckets"]
for b in buckets:
    for key in ("kind", "dtype", "group", "bytes", "tensors"):
        assert key in b, f"bucket {b.get('id')} lacks {key}"
    assert isinstance(b["bytes"], int) and b["bytes"] >= 0
    assert all(isinstance(t, str) for t in b["tensors"])
if sys.argv[2] != "-":
    assert len(buckets) == int(sys.argv[2]), f"{len(buckets)} buckets"
total = sum(len(b["tensors"]) for b in buckets)
assert total == int(sys.argv[3]), f"{total} tensors"
print("ok", len(buckets), total)
