"""collc.compile, load, save, digest, dump (every format), simulate, diff and
their errors, through libcollc.so."""

import json

import pytest

import collc
from conftest import OTHER_REDUCE, TWO_REDUCES, UNFUSED


def test_compile_gives_a_plan_of_the_programs_world_and_types(two_reduces):
    assert two_reduces.world == 2
    assert two_reduces.digest.startswith("xxh64:")
    assert two_reduces.tensor_type("b") == collc.TensorType("f32", [2, 3])
    assert repr(two_reduces.tensor_type("a")) == "f32[4]"
    # The IR spells it %b: that is its name too.
    assert two_reduces.tensor_type("%b") == collc.TensorType("f32", [2, 3])
    assert collc.version() > 0


def test_compile_options_reach_the_pipeline():
    p = collc.compile(TWO_REDUCES, world=4, bucket="fixed:1MiB", align=1024, views=False)
    assert p.world == 4
    text = p.text()
    assert "align 1024" in text
    assert 'note "bucket: fixed:1MiB"' in text
    q = collc.compile(TWO_REDUCES, passes=UNFUSED)
    assert f'note "pipeline: {UNFUSED}"' in q.text()


def test_save_and_load_round_trip(tmp_path, two_reduces):
    path = tmp_path / "two.plan"
    two_reduces.save(path)
    assert path.read_text() == two_reduces.text()
    for loaded in (collc.load(path), collc.load(str(path)), collc.load(two_reduces.text())):
        assert loaded.digest == two_reduces.digest
        assert loaded.diff(two_reduces) == []


def test_dump_gives_every_format(two_reduces):
    text = two_reduces.dump()
    assert "@two" in text
    assert text == two_reduces.dump("text")
    data = json.loads(two_reduces.dump("json"))
    assert "buckets" in data
    assert two_reduces.dump("dot").startswith("digraph")
    trace = json.loads(two_reduces.dump("trace"))
    assert trace["traceEvents"]
    assert "ncclAllReduce" in two_reduces.dump("nccl", rank=1)
    assert two_reduces.dump("text", explain=True) != ""
    with pytest.raises(ValueError, match="format is 'yaml': expected one of text, json"):
        two_reduces.dump("yaml")


def test_simulate_gives_the_step(two_reduces):
    r = two_reduces.simulate()
    assert r.step_us > 0
    assert r.compute_only_us <= r.step_us
    assert 0 <= r.slowest_rank < 2
    assert two_reduces.simulate("h100-nvlink").step_us == r.step_us
    with pytest.raises(collc.Error, match="collcPlanSimulate") as e:
        two_reduces.simulate("carrier-pigeon")
    assert e.value.result == 1 and e.value.name == "collcInvalidArgument"


def test_simulate_states_the_peak_memory(two_reduces):
    # All-reduces work in place: no communication allocates.
    r = two_reduces.simulate()
    assert r.peak_memory_bytes == 0 and r.peak_memory_comm is None
    # Two gathers in one bucket: the figure of the JSON dump and `collc simulate`.
    gathers = collc.compile("program @g world(4) {\n"
                            "  group @dp = world\n"
                            "  %s0, %s1 = compute @shards : f32[4], f32[4]\n"
                            "  %w0 = all_gather %s0 in @dp\n"
                            "  %w1 = all_gather %s1 in @dp\n"
                            "  compute @use(%w0, %w1)\n"
                            "}\n")
    r = gathers.simulate("ib-ndr")
    peak = json.loads(gathers.dump("json"))["peak_memory"]
    assert r.peak_memory_bytes == peak["bytes"] == 2656
    assert r.peak_memory_tensor_bytes == peak["tensor_bytes"]
    assert r.peak_memory_staging_bytes == peak["staging_bytes"] == 2528
    assert r.peak_memory_tensors == peak["tensors"] == 2
    assert r.peak_memory_rank == peak["rank"]
    assert r.peak_memory_comm == peak["comm"]
    assert "peak_memory_bytes=2656" in repr(r)


def test_diff_says_what_differs(two_reduces):
    other = collc.compile(OTHER_REDUCE, passes=UNFUSED)
    assert other.digest != two_reduces.digest
    lines = two_reduces.diff(other)
    assert lines and any("digest" in line for line in lines)
    assert two_reduces.diff(two_reduces) == []
    with pytest.raises(TypeError, match="expected a collc.Plan"):
        two_reduces.diff("plan")


def test_errors_are_exceptions_with_the_c_text(tmp_path, two_reduces):
    with pytest.raises(collc.Error) as e:
        collc.compile("program @x world(2) { bogus }", source_name="mine.coll")
    assert e.value.result == 1
    assert "mine.coll" in e.value.text and "collcCompile" in str(e.value)
    with pytest.raises(collc.Error, match="collcPlanLoad: "):
        collc.load("collc-plan 1\nbogus\n")
    with pytest.raises(collc.Error, match="collcPlanLoadFile: .*nope.plan"):
        collc.load(tmp_path / "nope.plan")
    with pytest.raises(collc.Error, match='name is "zz": plan @two has no tensor %zz'):
        two_reduces.tensor_type("zz")
    with pytest.raises(collc.Error, match="collcCompile: options->world is -1: expected"):
        collc.compile(TWO_REDUCES, world=-1)


def test_a_closed_plan_is_refused_as_a_null_handle(two_reduces):
    two_reduces.close()
    two_reduces.close()  # twice: nothing
    with pytest.raises(collc.Error, match="collcPlanDigest: plan is NULL") as e:
        two_reduces.digest
    assert e.value.result == 1
    assert "closed" in repr(two_reduces)


FSDP_SMALL = (__import__("pathlib").Path(__file__).parents[1] / "lit" / "compile" / "Inputs" /
              "fsdp_small.coll").read_text()


def test_memory_budget_bounds_the_peak_and_refuses_what_cannot_fit():
    free = json.loads(collc.compile(FSDP_SMALL, passes=None).dump("json"))["peak_memory"]
    budget = free["bytes"]
    p = collc.compile(FSDP_SMALL, memory_budget=budget)
    assert f"schedule{{memory-budget={budget}}}" in p.text()
    assert json.loads(p.dump("json"))["peak_memory"]["bytes"] <= budget
    with pytest.raises(collc.Error, match="memory budget of 1024 bytes cannot be met"):
        collc.compile(FSDP_SMALL, memory_budget=1024)
    with pytest.raises(ValueError, match="memory_budget is -1"):
        collc.compile(FSDP_SMALL, memory_budget=-1)
