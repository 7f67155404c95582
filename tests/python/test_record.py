"""Flight records from Python: Executor.record_to and dump_record write the
dumps docs/diagnose.md describes, one JSON file per rank."""

import json

import collc
from conftest import TWO_REDUCES, on_two_ranks


def test_a_replayed_step_is_in_the_dump(tmp_path):
    plan = collc.compile(TWO_REDUCES)
    at_end, now = tmp_path / "end", tmp_path / "now"

    def rank_body(rank):
        with collc.Executor(plan, rank, rendezvous="py.record", timeout_ms=20000) as x:
            x.record_to(at_end, at_exit=True)
            assert x.unbound() == (0, "")  # fused: every tensor is a view
            x.capture()
            x.replay()
            x.dump_record(now)

    on_two_ranks(rank_body)
    for rank in (0, 1):
        taken = json.loads((now / f"collc-record-rank{rank}.json").read_text())
        ended = json.loads((at_end / f"collc-record-rank{rank}.json").read_text())
        assert taken["format"] == "collc-flight-record" and taken["version"] == 1
        assert taken["rank"] == rank and taken["reason"] == "request"
        assert ended["reason"] == "exit"
        assert taken["plan"]["digest"] == plan.digest
        assert [e["op"] for e in taken["events"]] == ["all_reduce"]
        assert taken["events"][0]["state"] == "completed"


def test_a_dump_without_a_directory_is_refused():
    plan = collc.compile(TWO_REDUCES)

    def rank_body(rank):
        with collc.Executor(plan, rank, rendezvous="py.record.none", timeout_ms=20000,
                            digest_handshake=False) as x:
            try:
                x.dump_record()
            except collc.Error as e:
                return str(e)
            return None

    said = on_two_ranks(rank_body)
    assert all(s and "no directory" in s for s in said), said
