"""Smoke tests of the benchmark scripts (the CPU frameworks only: torch is not a test
dependency): op_overhead's JSON record, and compare.py's interleaving and ratios."""

import importlib.util
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_op_overhead_records_through_compare(capsys):
    compare = _load("compare")
    records = compare.interleaved("op_overhead", ["minigrad", "numpy"], 1,
                                  ["--ops", "30", "--repeats", "2"])
    for framework, (record,) in records.items():
        assert record["framework"] == framework and record["figure"] == "us_per_op"
        assert record["device"] == "cpu" and record["config"].startswith("30 ops")
        assert 0 < record["min_ms"] <= record["median_ms"] <= record["max_ms"]
        assert record["us_per_op"] > 0 and record["peak_rss_mb"] > 0
    lines = compare.report(records)
    assert any(line.strip().startswith("minigrad/numpy time:") for line in lines)
    assert any(line.strip().startswith("minigrad/numpy peak RSS:") for line in lines)


def test_the_numpy_floor_computes_minigrads_gradients():
    op_overhead = _load("op_overhead")
    floor = op_overhead.numpy_step(31, "cpu")()
    ours = op_overhead.minigrad_step(31, "cpu")()
    for expected, grad in zip(floor, ours):
        assert (grad.numpy() == expected).all()
