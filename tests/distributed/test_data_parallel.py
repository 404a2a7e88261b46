"""Data parallelism over MPI keeps its promises (docs/distributed.md): the ranks hold the same
parameters after every step; N ranks reproduce, bitwise, one process that accumulates the
same N shards (MPI's sum at 2 ranks, the rank-ordered sum at 3), and match one process on the
whole batch to rounding; a failing, killed, lagging or different rank ends the job quickly
with a message instead of a hang.

Each case launches `mpiexec` (MPICH from its PyPI wheel, the `distributed` extra) as a
subprocess with a timeout, so that a hang fails one test, not the run."""

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = Path(__file__).with_name("scenarios.py")


def mpiexec():
    beside = Path(sys.executable).with_name("mpiexec")
    return str(beside) if beside.exists() else shutil.which("mpiexec")


pytestmark = [pytest.mark.acceptance, pytest.mark.skipif(  # the acceptance tier: it launches MPI
    importlib.util.find_spec("mpi4py") is None or mpiexec() is None,
    reason="needs mpi4py and mpiexec: pip install -e '.[distributed]'")]


def run(*arguments, ranks=None, timeout=60):
    """Run the scenario script (under mpiexec with `ranks` processes, else alone); returns
    (completed process, seconds)."""
    command = [sys.executable, str(SCENARIOS), *map(str, arguments)]
    if ranks is not None:
        command = [mpiexec(), "-n", str(ranks), sys.executable, "-m", "mpi4py", *command[1:]]
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    started = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                            env=environment, check=False)
    return result, time.monotonic() - started


def outcome(*arguments, ranks=None):
    result, _ = run(*arguments, ranks=ranks)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_two_ranks_reproduce_one_process_accumulating_the_two_shards_bitwise(optimizer):
    together = outcome("train", "--shards", 2, "--optimizer", optimizer, ranks=2)
    alone = outcome("train", "--shards", 2, "--optimizer", optimizer)
    assert together["world"] == 2 and alone["world"] == 1
    assert together["agreed"]  # every rank held the same parameters after every step
    assert together["digest"] == alone["digest"]


def test_three_ranks_with_the_rank_ordered_sum_reproduce_one_process_bitwise():
    together = outcome("train", "--shards", 3, "--rank-ordered", "--optimizer", "adam",
                       ranks=3)
    alone = outcome("train", "--shards", 3, "--optimizer", "adam")
    assert together["agreed"] and together["digest"] == alone["digest"]


def test_sharded_gradients_equal_the_whole_batch_gradient_to_rounding():
    sharded = outcome("train", "--shards", 2, "--steps", 1, ranks=2)
    whole = outcome("train", "--shards", 1, "--steps", 1)
    for mine, reference in zip(sharded["first_gradients"], whole["first_gradients"]):
        np.testing.assert_allclose(mine, reference, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("scenario, named", [
    ("raise", "RuntimeError: a failure on rank 1 at step 2"),
    ("kill", "Killed"),
])
def test_a_rank_that_fails_ends_the_job_quickly(scenario, named):
    result, seconds = run(scenario, ranks=2)
    assert result.returncode != 0
    assert seconds < 10
    assert named in result.stdout + result.stderr


def test_a_rank_left_waiting_aborts_at_its_deadline_and_says_why():
    result, seconds = run("extra-step", "--timeout", 2, ranks=2)
    assert result.returncode != 0 and seconds < 20, result.stdout + result.stderr
    assert re.search(r"error: rank 0 of 2 waited [23] s for the gradient reduction \(\d+ values\) "
                     r"at step 4", result.stderr), result.stdout + result.stderr
    assert "different number of steps" in result.stderr


def test_ranks_with_different_models_are_told_which_parameter_differs():
    result, _ = run("mismatch", ranks=2)
    assert result.returncode != 0
    assert ("rank 1's parameter 0 is 0.weight float32(17, 8) but rank 0's is 0.weight "
            "float32(16, 8)") in result.stderr


def test_the_distributed_benchmark_reports_its_table():
    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "distributed.py"), "--configs", "tiny",
         "--ranks", "1,2", "--steps", "1", "--warmup", "0", "--repeats", "1"],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == 0, result.stderr[-2000:]
    lines = result.stdout.splitlines()
    assert any(line.startswith("| tiny | 2 |") for line in lines)
    assert any(line.startswith("| 67,108,864 |") for line in lines)
    assert any(line.startswith("| tiny | 200 Gb/s InfiniBand |") for line in lines)


def test_the_nccl_communicator_calls_nccl_as_nccl_is_called():
    """Against a stand-in CuPy whose NCCL is MPI underneath (tests/distributed/fake_nccl.py):
    the unique id from rank 0, pointers, counts and types; host arrays through MPI."""
    result = outcome("nccl", ranks=2)
    assert result["same_id"] and result["devices"] == [0, 1]  # one GPU per rank
    assert result["sum"] == [3.0, 3.0, 3.0]
    assert result["gathered"] == [[0, 0], [1, 10]]
    assert result["broadcast"] == [0.0, 2.0, 4.0, 6.0]
    assert result["host"] == [1.0]
