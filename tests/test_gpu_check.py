"""scripts/gpu_check.sh, the one call a GPU machine gets, dry run on the CPU (DEVICE=cpu): each
part runs on the CuPy stand-in and passes, at most 4 files come back, and the one-screen
summary is printed last."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.acceptance
def test_the_gpu_check_dry_run_passes_writes_at_most_4_files_and_ends_with_its_summary(
        tmp_path):
    out = tmp_path / "out"
    # one pytest worker: on 2 cores a second one costs more in start-up than it saves
    env = {**os.environ, "DEVICE": "cpu", "OUT": str(out), "WORKERS": "1",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(["bash", str(ROOT / "scripts/gpu_check.sh")], env=env, cwd=tmp_path,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    files = sorted(path.name for path in out.iterdir())
    assert files == ["console.log", "records.tar.gz", "summary.txt"]  # no GPU: no kernel cache
    summary = (out / "summary.txt").read_text()
    assert result.stdout.rstrip().endswith(summary.rstrip())
    for part in ("smoke", "tests, decisive", "tests, the rest", "main, training on cuda",
                 "main, translate", "train_step_tiny_minigrad (--count)"):
        assert f"{part}: passed" in summary, summary
    assert "train_step_tiny_torch: skipped" in summary
    assert "tests decisive: 4 passed, 0 failed" in summary
