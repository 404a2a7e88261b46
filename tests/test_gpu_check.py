"""scripts/gpu_check.sh, the one call a GPU machine gets, dry run on the CPU (DEVICE=cpu): each
part runs on the CuPy stand-in and passes, at most 4 files come back, the one-screen summary
is printed last, and a call killed after its smoke part has left the smoke's result and the
console in OUT; its time boxes fit the timeout it asks for; and the guard it sets,
MINIGRAD_REQUIRE_CUDA=1, stops pytest with one line where CuPy cannot run."""

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts/gpu_check.sh"


def dry_run_environment(out):
    # one pytest worker: on 2 cores a second one costs more in start-up than it saves
    return {**os.environ, "DEVICE": "cpu", "OUT": str(out), "WORKERS": "1",
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}


@pytest.mark.acceptance
def test_the_gpu_check_dry_run_passes_writes_at_most_4_files_and_ends_with_its_summary(
        tmp_path):
    out = tmp_path / "out"
    result = subprocess.run(["bash", str(SCRIPT)], env=dry_run_environment(out), cwd=tmp_path,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    files = sorted(path.name for path in out.iterdir())
    assert files == ["console.log", "records.tar.gz", "summary.txt"]  # no GPU: no kernel cache
    summary = (out / "summary.txt").read_text()
    assert result.stdout.rstrip().endswith(summary.rstrip())
    assert (out / "console.log").read_text().rstrip().endswith(summary.rstrip())
    for part in ("env, versions", "smoke", "tests, decisive", "tests, the rest",
                 "main, training on cuda", "main, translate",
                 "train_step_tiny_minigrad (--count)"):
        assert f"{part}: passed" in summary, summary
    assert "train_step_tiny_torch: skipped" in summary
    assert "tests decisive: 4 passed, 0 failed" in summary
    console = (out / "console.log").read_text()
    assert re.search(r"^python \S+ \| pytest \S+ \| pytest-xdist \S+ \| pytest-timeout ", console,
                     re.MULTILINE), console[:2000]


@pytest.mark.acceptance
def test_a_dry_run_killed_after_its_smoke_part_leaves_the_smoke_and_the_console(tmp_path):
    out = tmp_path / "out"
    call = subprocess.Popen(["bash", str(SCRIPT)], env=dry_run_environment(out), cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    summary = out / "summary.txt"
    try:
        deadline = time.monotonic() + 120
        while not (summary.exists() and "smoke:" in summary.read_text()):
            assert call.poll() is None and time.monotonic() < deadline, "no smoke in summary"
            time.sleep(0.05)
    finally:
        os.killpg(call.pid, signal.SIGKILL)  # the call, its tee and its running part
        call.wait()
    assert "smoke: passed" in summary.read_text()
    assert sorted(path.name for path in out.iterdir()) == ["console.log", "records.tar.gz",
                                                           "summary.txt"]
    console = (out / "console.log").read_text()
    assert "== smoke" in console and "all smoke checks passed" in console


def test_the_time_boxes_and_their_graces_fit_the_timeout_the_script_asks_for():
    """The header's table: each box with its kill grace (`B + G`, `N x (B + G)`), their sum
    as stated, at most 380 s, under the caller's timeout that the header names; and each
    box in the script's commands is one of the table's."""
    text = SCRIPT.read_text()
    header = text.split("\nset ")[0]
    rows = re.findall(r"(?:(\d+) x \()?(\d+) \+ (\d+)\)?\s*$", header, re.MULTILINE)
    total = sum(int(count or 1) * (int(box) + int(grace)) for count, box, grace in rows)
    stated = int(re.search(r"in all:\s+(\d+) s", header)[1])
    timeout = int(re.search(r"timeout of (\d+) s", header)[1])
    assert total == stated <= 380 < timeout
    boxes = {(int(box), int(grace)) for _, box, grace in rows}
    used = {(int(box), int(grace)) for grace, box in
            re.findall(r"timeout (?:-s INT )?-k (\d+) (\d+)", text)}
    used |= {(int(box), int(grace)) for box, grace in re.findall(r"\btimed (\d+) (\d+) ", text)}
    bench = re.search(r'CONFIGS="small base" .*BENCH_BOX=(\d+)\n', text)  # 1 s grace on cuda
    used.add((int(bench[1]), int(re.search(r'timed "\$BENCH_BOX" (\d+) ', text)[1])))
    assert used - {(140, 5)} <= boxes, used - boxes  # 140 s: the TESTS rerun, a call alone


def test_requiring_cuda_where_cupy_cannot_run_stops_pytest_with_one_line(tmp_path):
    """gpu_check.sh's MINIGRAD_REQUIRE_CUDA=1: no test passes on the CuPy stand-in instead."""
    from minigrad.backend import cupy_backend

    if cupy_backend._stand_in is None:  # tests/conftest.py found a GPU and left CuPy be
        pytest.skip("CuPy runs on this machine's GPU: nothing to refuse")
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-o", "addopts=", "-p", "no:cacheprovider", "-q",
         str(ROOT / "tests/engine/test_kernels.py")], cwd=tmp_path, capture_output=True,
        text=True, timeout=120,
        env={**os.environ, "MINIGRAD_REQUIRE_CUDA": "1", "PYTHONPATH": str(ROOT)})
    assert result.returncode == 4 and not result.stdout.strip()
    assert re.fullmatch(r"ERROR: MINIGRAD_REQUIRE_CUDA=1 but CuPy cannot run here \(.+\): the "
                        r"cuda tests would run on the CuPy stand-in; unset it to run them so",
                        result.stderr.strip()), result.stderr
