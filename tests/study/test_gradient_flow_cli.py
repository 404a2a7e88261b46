"""examples/gradient_flow.py as a user runs it wrongly: every mistake is one `error: ...` line
naming the flag and the value, exit status 2, nothing run and nothing written; a scheme of a
--load'ed file accepted by --norms; results already in --out are kept unless --overwrite; and
the grid runner end to end on a tiny grid, judged (slow)."""

import csv
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from transformer.residual import SCHEMES

ROOT = Path(__file__).resolve().parents[2]


def run_script(*args, timeout=120):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [
        str(ROOT), os.environ.get("PYTHONPATH")])))
    return subprocess.run([sys.executable, str(ROOT / "examples" / "gradient_flow.py"),
                           *map(str, args)], capture_output=True, text=True, env=env,
                          timeout=timeout, check=False)


def assert_usage_error(result, *fragments):
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.mark.parametrize("args, fragments", [
    (["--only", "E10"], ["--only", "unknown experiment E10", "E1, E2"]),
    (["--only", ","], ["--only", "names no experiment"]),
    (["--seeds", "0"], ["--seeds", "'0'", "positive integer"]),
    (["--seeds", "two"], ["--seeds", "'two'"]),
    (["--grid", "custom", "--lrs", "1e-3,-1"], ["--lrs", "'-1'", "positive number"]),
    (["--grid", "custom", "--warmups", "100,x"], ["--warmups", "'x'", "integer >= 0"]),
    (["--grid", "custom", "--depths", "0"], ["--depths", "'0'"]),
    (["--grid", "custom", "--norms", "post-LN,mid-LN"], ["--norms", "'mid-LN'", "pre-LN"]),
    (["--grid", "custom", "--steps", "0"], ["--steps", "'0'"]),
    (["--grid", "custom", "--quick"], ["--grid runs the grid only"]),
    (["--grid", "nope"], ["--grid", "'nope'", "xiong"]),
    (["--load", "missing.py"], ["--load missing.py", "no such Python file"]),
    (["--frobnicate"], ["unrecognized arguments: --frobnicate"]),
    (["--set", "steps=abc"], ["--set", "'steps=abc'", "Python literal"]),
    (["--only", "init,E99"], ["--only", "unknown experiment E99", "init"]),
])
def test_a_wrong_flag_is_one_error_line(tmp_path, args, fragments):
    out = tmp_path / "out"
    result = run_script(*args, "--out", out)
    assert_usage_error(result, *fragments)
    assert not out.exists()


def test_a_scheme_registered_by_a_loaded_file_is_accepted_by_norms(tmp_path):
    spec = importlib.util.spec_from_file_location("gradient_flow_cli",
                                                  ROOT / "examples" / "gradient_flow.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    module = tmp_path / "my_scheme.py"
    module.write_text("from transformer.residual import ResidualScheme, register_scheme\n"
                      "register_scheme(ResidualScheme('my-post-LN'))\n")
    try:
        args = script.parse_args(["--grid", "custom", "--norms", "post-LN,my-post-LN",
                                  "--load", str(module)])
    finally:
        SCHEMES.pop("my-post-LN", None)
    assert args.norms == ("post-LN", "my-post-LN") and args.load == [str(module)]


def test_results_in_out_are_kept_unless_overwrite(tmp_path):
    (tmp_path / "E1_expected_gradient_by_layer.csv").write_text("kept\n")
    result = run_script("--quick", "--only", "E1", "--out", tmp_path)
    assert_usage_error(result, f"--out {tmp_path} already holds results",
                       "E1_expected_gradient_by_layer.csv", "--overwrite")
    assert (tmp_path / "E1_expected_gradient_by_layer.csv").read_text() == "kept\n"


def test_out_that_is_a_file_is_one_error_line(tmp_path):
    (tmp_path / "a_file").write_text("not a folder\n")
    result = run_script("--quick", "--only", "E1", "--out", tmp_path / "a_file")
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and "a_file" in lines[0]


@pytest.mark.acceptance
def test_the_grid_runner_forecasts_then_writes_one_csv_and_one_figure(tmp_path):
    result = run_script("--grid", "custom", "--lrs", "1e-3,1e-2", "--warmups", "0,5",
                        "--depths", "1",
                        "--steps", "6", "--out", tmp_path, timeout=600)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("grid custom on toy-en-es: 8 runs of 6 steps; about ")
    assert " min " in lines[0]
    with open(tmp_path / "grid.csv", newline="") as file:
        rows = list(csv.DictReader(file))
    assert len(rows) == 8
    assert {(r["norm"], r["lr"], r["warmup"]) for r in rows} == {
        (norm, lr, warmup) for norm in ("post-LN", "pre-LN") for lr in ("0.001", "0.01")
        for warmup in ("0", "5")}
    assert (tmp_path / "grid.png").stat().st_size > 0
    verdicts = json.loads((tmp_path / "verdicts.json").read_text())["outcomes"]
    assert [outcome["id"] for outcome in verdicts] == ["lr 0.001", "lr 0.01"]
    assert {check["expectation"] for check in verdicts[0]["checks"]} == {
        None, "E5.warmup_essential"}
    judged = next(c for c in verdicts[0]["checks"] if c["expectation"])
    assert judged["outcome"] == "not testable" and "fewer than the 5" in judged["reason"]
    assert any(line.startswith("lr 0.01: ") for line in lines)
    again = run_script("--grid", "custom", "--depths", "1", "--steps", "6", "--out", tmp_path)
    assert_usage_error(again, "already holds results", "grid.csv")
