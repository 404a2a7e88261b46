"""Smoke tests of the benchmark scripts (the CPU frameworks only: torch is not a test
dependency): op_overhead's JSON record, compare.py's interleaving and ratios, decode.py's beam
search records."""

import importlib.util
import json
from pathlib import Path

import pytest

from transformer.main_job import MAIN_JOB

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


def test_compare_runs_one_framework_under_each_setting_of_a_variable(capsys):
    compare = _load("compare")
    setting = ("MINIGRAD_RELEASE_BLAS_THREADS", ["1", "0"])
    records = compare.interleaved("train_step", ["minigrad"], 1,
                                  ["--config", "tiny", "--steps", "1", "--warmup", "0"], setting)
    assert list(records) == ["MINIGRAD_RELEASE_BLAS_THREADS=1", "MINIGRAD_RELEASE_BLAS_THREADS=0"]
    on, off = (runs[0] for runs in records.values())
    assert off["blas_release"] == "off (MINIGRAD_RELEASE_BLAS_THREADS=0)" != on["blas_release"]
    lines = compare.report(records)
    assert "optimizer phase" in lines[1] and "optimizer phase" in lines[2]
    assert any(line.strip().startswith(
        "MINIGRAD_RELEASE_BLAS_THREADS=1/MINIGRAD_RELEASE_BLAS_THREADS=0 optimizer phase: ")
        for line in lines)


def test_the_numpy_floor_computes_minigrads_gradients():
    op_overhead = _load("op_overhead")
    floor = op_overhead.numpy_step(31, "cpu")()
    ours = op_overhead.minigrad_step(31, "cpu")()
    for expected, grad in zip(floor, ours):
        assert (grad.numpy() == expected).all()


def _count(config, monkeypatch, fused=False):
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # train_step imports configs
    train_step = _load("train_step")
    configs = _load("configs")
    return train_step.count(configs.CONFIGS[config], steps=1, warmup=1, fused=fused)


@pytest.mark.parametrize("release", ["1", "0"])
def test_a_timed_step_on_the_cpu_says_whether_blas_workers_are_released(release, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))
    train_step = _load("train_step")
    configs = _load("configs")
    monkeypatch.setitem(train_step.GEMM_SIZE, "cpu", 64)
    monkeypatch.setenv("MINIGRAD_RELEASE_BLAS_THREADS", release)
    _, record = train_step.measure("minigrad", configs.CONFIGS["tiny"], "cpu", 1, 0)
    from minigrad.backend.blas_threads import release_state

    assert record["blas_release"] == release_state()
    turned_off = record["blas_release"] == "off (MINIGRAD_RELEASE_BLAS_THREADS=0)"
    assert turned_off == (release == "0")
    assert train_step.describe(record).splitlines()[-1] == (
        f"  OpenBLAS's idle workers released: {record['blas_release']}")
    assert train_step.blas_release("torch", "cpu") is None


def test_counting_a_tiny_step_finds_no_synchronization_and_few_launches(monkeypatch):
    """The Trainer's step on 'cuda' (the CuPy stand-in counts): no read by the host between
    two read steps; launches (1,947 before the multi-tensor optimizer and clipping, by the
    rule before it counted what CuPy launches inside matmul, mean, take_along_axis and
    concatenate) by phase and by op in the record; the moving average one update."""
    record = _count("tiny", monkeypatch)
    assert record["syncs_per_step"] == 0 and not record["sync_reasons"]
    assert record["launches_per_step"] <= 900
    assert set(record["phases"]) == {"forward", "backward", "clip", "optimizer", "average"}
    assert record["phases"]["optimizer"]["launches"] <= 25
    assert record["phases"]["average"]["launches"] == 3
    assert sum(c["launches"] for c in record["phases"].values()) == record["launches_per_step"]
    assert record["by_op"]["layer_norm"]["calls"] == 10


def test_the_fused_kernels_take_a_tiny_step_in_at_most_650_launches(monkeypatch):
    """650 by the corrected rule (600 before it; benchmarks/README.md has the figures)."""
    record = _count("tiny", monkeypatch, fused=True)
    assert record["fused"] and record["syncs_per_step"] == 0
    assert record["launches_per_step"] <= 650
    assert record["phases"]["average"]["launches"] == 1
    assert record["by_kernel"]["fuse:layer_norm_backward"] == 10


@pytest.mark.acceptance
@pytest.mark.parametrize("config, fused, launches", [
    ("small", False, 1300), ("base", False, 2500), ("base", True, 1500)])
def test_counting_small_and_base_steps(config, fused, launches, monkeypatch):
    """The targets: no synchronization between reads; base in at most 2,500 launches (5,904
    before), 1,500 with the fused kernels (benchmarks/README.md has the figures)."""
    record = _count(config, monkeypatch, fused)
    assert record["syncs_per_step"] == 0
    assert record["launches_per_step"] <= launches


def test_task_step_times_a_tasks_own_batches(capsys):
    task_step = _load("task_step")
    task_step.main(["--task", "copy", "--steps", "2", "--warmup", "1", "--json"])
    lines = capsys.readouterr().out.strip().splitlines()
    record = json.loads(lines[-1])
    config = f"copy word-level, moving average {MAIN_JOB.training.ema_decay}"  # the main job's
    assert record["config"] == config
    assert record["steps"] == 2
    assert record["vocab_size"] == 14  # 10 symbols and the 4 specials
    assert 0 < record["min_ms"] <= record["median_ms"] <= record["max_ms"]
    assert lines[0].startswith(f"{config}: vocabulary 14 tokens, a step ")
    task_step.main(["--task", "copy", "--steps", "1", "--warmup", "0", "--ema-decay", "0"])
    assert capsys.readouterr().out.startswith("copy word-level: vocabulary 14 tokens")


def test_decode_times_beam_search_and_its_n_best_lists(capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # decode.py imports configs beside it
    decode = _load("decode")
    decode.main(["--beam", "2", "--n-best", "2", "--cache", "on", "--repeats", "1", "--json"])
    [record] = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert (record["beam"], record["n_best"], record["cache"]) == (2, 2, "on")
    assert record["steps"] == 32 and 0 < record["median_ms"]


def test_compare_reports_each_ratio_with_its_sd_and_95_percent_interval():
    compare = _load("compare")
    record = {"benchmark": "op_overhead", "config": "3 ops", "device": "cpu",
              "figure": "us_per_op", "us_per_op": 1.0}
    records = {"PYTHONPATH=new": [dict(record, median_ms=ms) for ms in (3.0, 3.0, 3.0)],
               "PYTHONPATH=old": [dict(record, median_ms=ms) for ms in (4.0, 5.0, 6.0)]}
    (line,) = [line for line in compare.report(records) if " time: " in line]
    # ratios 0.75, 0.6, 0.5: mean 0.6167, sd 0.1258, t(0.975, 2) = 4.303
    assert line.strip() == ("PYTHONPATH=new/PYTHONPATH=old time: 0.60x (spread 0.50-0.75 over "
                            "the rounds; mean 0.617, sd 0.126, 95% interval [0.304, 0.929], n 3)")
