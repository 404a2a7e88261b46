"""The main job on several ranks, as a user launches it: two ranks give, bitwise, the run of
one process that accumulates the same two shards of each global batch; a run resumes at
another world size on the same global batches; Ctrl-C stops every rank after the same step
and rank 0 saves; --distributed without a launcher says how to launch.

Dropout is off: a rank draws its own dropout masks, which no single process reproduces."""

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from test_data_parallel import mpiexec, pytestmark  # noqa: F401  (acceptance; skips without MPI)

import minigrad as mg

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "examples" / "train_translation.py"
# Noam's rate does not depend on the number of steps: a run stopped on its way to 2000 steps
# and resumed to 8 takes the steps of a run of 8 (a cosine schedule would decay otherwise)
FLAGS = ["--task", "copy", "--d-model", "16", "--heads", "2", "--layers", "1", "--d-ff", "32",
         "--dropout", "0", "--batch-size", "16", "--warmup", "4", "--schedule", "noam",
         "--eval-every", "4", "--no-progress"]


def command(ranks, *arguments):
    python = [sys.executable, "-m", "mpi4py"] if ranks > 1 else [sys.executable]
    launcher = [mpiexec(), "-n", str(ranks)] if ranks > 1 else []
    return [*launcher, *python, str(SCRIPT), *FLAGS, *map(str, arguments)] + \
        (["--distributed", "--collective-timeout", "60"] if ranks > 1 else [])


def train(ranks, *arguments, timeout=240):
    result = subprocess.run(command(ranks, *arguments), capture_output=True, text=True,
                            timeout=timeout, env={"PYTHONPATH": str(REPO), "PATH": ""},
                            check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def assert_same_run(folder, expected):
    mine, theirs = mg.load(folder / "last.npz"), mg.load(expected / "last.npz")
    assert mine["step"] == theirs["step"]
    for key in ("model", "optimizer", "average"):  # the weights' moving average too
        for a, b in zip(_arrays(mine[key]), _arrays(theirs[key])):
            assert a.dtype == b.dtype and np.array_equal(a, b)
    losses = [[r["loss"] for r in map(json.loads, (f / "metrics.jsonl").read_text()
                                      .splitlines()) if r["split"] == "train"]
              for f in (folder, expected)]
    assert losses[0] == losses[1]


def _arrays(tree):
    if isinstance(tree, dict):
        for key in sorted(tree):
            yield from _arrays(tree[key])
    elif isinstance(tree, (list, tuple)):
        for item in tree:
            yield from _arrays(item)
    elif hasattr(tree, "shape"):
        yield tree.numpy() if hasattr(tree, "numpy") else np.asarray(tree)


@pytest.fixture(scope="module")
def one_process(tmp_path_factory):
    """8 steps of one process accumulating 2 micro-batches per step."""
    out = tmp_path_factory.mktemp("alone") / "run"
    train(1, "--steps", 8, "--accumulate", 2, "--out", out)
    return out


def test_two_ranks_give_the_run_of_one_process_accumulating_two_shards(one_process, tmp_path):
    out = tmp_path / "run"
    result = train(2, "--steps", 8, "--out", out)
    assert_same_run(out, one_process)
    assert result.stdout.count("trained 8 steps") == 1  # rank 0 alone reports


def test_a_run_resumes_at_another_world_size_on_the_same_global_batches(one_process,
                                                                         tmp_path):
    out = tmp_path / "run"
    train(1, "--steps", 4, "--accumulate", 2, "--out", out)
    # 2 ranks × 1 micro-batch: the global batch cut into the same 2 shards as before
    result = train(2, "--steps", 8, "--resume", "--accumulate", 1, "--out", out)
    assert f"resuming {out} from step 4 of 8" in result.stdout
    assert_same_run(out, one_process)


def test_ctrl_c_stops_every_rank_after_the_same_step_and_the_run_resumes(one_process,
                                                                          tmp_path):
    out = tmp_path / "run"
    # ranks agree on stopping at read steps: with --sync-every 1, after the step Ctrl-C hit
    with subprocess.Popen(command(2, "--steps", 2000, "--sync-every", 1, "--out", out),
                          stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True,
                          env={"PYTHONPATH": str(REPO), "PATH": ""}) as process:
        for line in process.stdout:  # the validation of step 4: training is under way
            if "  valid  " in line:
                process.send_signal(signal.SIGINT)  # mpiexec forwards it to every rank
                break
        stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr[-2000:]
    assert "Traceback" not in stderr
    stopped = mg.load(out / "last.npz")["step"]
    assert stdout.count("interrupted at step") == 1
    assert f"interrupted at step {stopped}: saved" in stdout
    assert 4 <= stopped < 8
    train(2, "--steps", 8, "--resume", "--sync-every", 1, "--out", out)
    assert_same_run(out, one_process)


def test_distributed_without_a_launcher_says_how_to_launch(tmp_path):
    started = time.monotonic()
    result = subprocess.run([sys.executable, str(SCRIPT), *FLAGS, "--distributed", "--out",
                             tmp_path / "run"], capture_output=True, text=True, timeout=60,
                            env={"PYTHONPATH": str(REPO), "PATH": ""}, check=False)
    assert result.returncode == 1 and time.monotonic() - started < 30
    assert result.stderr.strip().splitlines() == [
        "error: distributed training needs an MPI launcher: run it as `mpiexec -n 2 python -m "
        "mpi4py SCRIPT ...` (pip install -e '.[distributed]' installs mpi4py and MPICH)"]
    assert not (tmp_path / "run").exists()
