"""Shared test setup: hypothesis profiles, the `device` fixture and `made_once`.

Profiles (env HYPOTHESIS_PROFILE; default `ci` when env CI is set, else `dev`):
`ci` bounded and derandomized, `dev` quick and random, `thorough` many examples, `gpu` few,
`versions` quick and derandomized (CI's runs on the other Pythons and NumPys, `.ci/run`).
The `device` fixture runs each test on 'cpu' and on 'cuda': real CuPy where a GPU is present,
otherwise the strict CuPy stand-in (`minigrad.testing.fake_cupy`, two devices), except under
MINIGRAD_REQUIRE_CUDA=1, where a machine without a working CuPy runs no test.
"""

import fcntl
import importlib.util
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import settings

from minigrad.testing import fake_cupy

settings.register_profile("ci", derandomize=True, max_examples=40, deadline=None,
                          print_blob=True)
settings.register_profile("dev", max_examples=10, deadline=None)
settings.register_profile("thorough", max_examples=200, deadline=None)
settings.register_profile("versions", derandomize=True, max_examples=10, deadline=None,
                          print_blob=True)
settings.register_profile("gpu", derandomize=True, max_examples=3, deadline=None,
                          print_blob=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


MAIN_JOB_MODULE = "tests/test_main_job_run.py"  # minutes of training, run once for the module


def pytest_collection_modifyitems(config, items):
    """The main job's module last: under pytest-xdist (`--dist loadfile`, pyproject.toml) the
    workers share out the rest of the suite first, and its training (two BLAS threads) then
    has the cores to itself: beside another worker's tests it took over three times as long."""
    items.sort(key=lambda item: item.nodeid.split("::")[0] == MAIN_JOB_MODULE)


def cuda_missing():
    """Why CuPy cannot run here (no CuPy, no driver, no GPU), or None where it can."""
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            return None
        return "CuPy sees no GPU"
    except (ImportError, RuntimeError) as error:  # CuPy's CUDARuntimeError: no driver
        return f"{type(error).__name__}: {error}"


CUDA_MISSING = cuda_missing()
ON_GPU = CUDA_MISSING is None
REQUIRE_CUDA = os.environ.get("MINIGRAD_REQUIRE_CUDA") == "1"  # scripts/gpu_check.sh sets it
if not ON_GPU and not REQUIRE_CUDA:  # the cuda cases run on the CuPy stand-in, two devices
    fake_cupy.install(devices=2)


def pytest_configure(config):
    """MINIGRAD_REQUIRE_CUDA=1 without a GPU: no test runs (the stand-in would pass them)."""
    if REQUIRE_CUDA and not ON_GPU:
        raise pytest.UsageError(
            f"MINIGRAD_REQUIRE_CUDA=1 but CuPy cannot run here ({CUDA_MISSING.splitlines()[0]}):"
            " the cuda tests would run on the CuPy stand-in; unset it to run them so")


DEVICES = [
    pytest.param("cpu", id="cpu"),
    pytest.param("cuda", id="cuda", marks=pytest.mark.gpu),
]


@pytest.fixture(params=DEVICES, scope="session")  # session scope: usable with @given
def device(request):
    """Each device in turn: 'cpu', then 'cuda' (real CuPy on a GPU, else the CuPy stand-in
    minigrad/testing/fake_cupy/, never skipped)."""
    return request.param


@pytest.fixture
def stand_in():
    """The CuPy stand-in's counters, reset (tests of what a GPU run would do: syncs and
    launches); skipped on a GPU, where real CuPy runs."""
    if ON_GPU:
        pytest.skip("counts come from the CuPy stand-in; this machine runs real CuPy")
    fake_cupy.monitor.reset()
    return fake_cupy.monitor


EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.fixture(scope="session")
def example_script():
    """load(name) -> the module of examples/<name>.py (the scripts are not a package)."""
    def load(name):
        spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load


@pytest.fixture(scope="session")
def made_once(tmp_path_factory):
    """made_once(name, make) -> the folder `name` that make(folder) filled, made once for the
    whole test session: under pytest-xdist in the workers' common temporary folder, by the
    first worker that asks, holding a lock (fcntl) while the others wait for it. For what
    takes seconds to make and tests only read: a trained run folder."""
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the session's folder, above each worker's

    def made(name, make):
        folder, done = root / name, root / f"{name}.made"
        with open(root / f"{name}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not done.exists():
                shutil.rmtree(folder, ignore_errors=True)  # a make that failed part way
                folder.mkdir()
                make(folder)
                done.touch()
        return folder

    return made
