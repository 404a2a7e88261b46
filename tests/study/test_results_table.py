"""docs/gradient_flow.md's results table is the one scripts/make_gradient_flow_table.py makes
from docs/gradient_flow/verdicts.json, and the table reads every judged check."""

import importlib.util
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("make_gradient_flow_table",
                                              ROOT / "scripts" / "make_gradient_flow_table.py")
assert spec is not None and spec.loader is not None
script = importlib.util.module_from_spec(spec)
spec.loader.exec_module(script)


def test_the_results_table_is_current():
    assert script.main(["--check"]) == 0


def test_the_table_has_a_row_per_judged_check_with_its_interval():
    verdicts = {"outcomes": [
        {"id": "E1", "outcome": "inconclusive", "checks": [
            {"label": "a", "low": 1.0, "high": None, "interval": [0.5, 1.5], "mean": 1.0,
             "n": 10, "outcome": "inconclusive"},
            {"label": "reported", "low": None, "high": None, "interval": [0, 1], "mean": 0.5,
             "n": 10, "outcome": "reported"}]},
        {"id": "E7", "outcome": "held", "mechanism": True, "checks": [
            {"label": "b", "low": None, "high": 0.8, "interval": [0.2, 0.3], "mean": 0.25,
             "n": 10, "outcome": "held"}]},
        {"id": "E6", "outcome": "not testable", "checks": [
            {"label": "c", "low": -0.05, "high": None, "interval": [0.1, 0.2], "mean": 0.15,
             "n": 5, "outcome": "not testable", "reason": "the baseline does not train"}]}]}
    table = script.results_table(json.loads(json.dumps(verdicts)))
    rows = [line for line in table.splitlines() if line.startswith("| E")]
    assert rows == [
        "| E1: inconclusive | a | ≥ 1 | 1 | [0.5, 1.5] | 10 | inconclusive |",
        "| E7: held (mechanism check, not counted) | b | ≤ 0.8 | 0.25 | [0.2, 0.3] | 10 | held |",
        "| E6: not testable | c | ≥ -0.05 | 0.15 | [0.1, 0.2] | 5 | not testable: the "
        "baseline does not train |"]
    assert "1 inconclusive, 1 not testable" in table and "1 judged checks" in table
