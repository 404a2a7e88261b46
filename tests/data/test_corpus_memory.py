"""The streaming reader on a generated multi-million-line file keeps its memory bounded: at
most 64 bytes per corpus line beyond a fixed base (benchmarks/corpus_memory.py, each size in a
fresh process)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "corpus_memory.py"


@pytest.mark.acceptance
def test_two_million_lines_cost_at_most_64_bytes_a_line_beyond_the_base():
    result = subprocess.run([sys.executable, BENCHMARK, "--lines", "100000", "2000000",
                             "--json"], capture_output=True, text=True, timeout=900,
                            check=False)  # the test reads the status
    assert result.returncode == 0, result.stderr
    *records, summary = [json.loads(line) for line in result.stdout.splitlines()]
    assert [r["lines"] for r in records] == [100_000, 2_000_000]
    large = records[-1]
    assert large["train"] + large["valid"] + large["test"] == 2_000_000  # none repeats
    assert large["valid"] == large["test"] == 5000 and large["batch_tokens"] > 0
    assert summary["bytes_per_line"] <= 64, summary
