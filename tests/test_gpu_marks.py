"""Every test that runs on 'cuda' is in the cuda suite (`pytest -m gpu`, what a GPU machine
runs: scripts/gpu_check.sh): a test collected without the `gpu` mark that runs on 'cuda' fails
here. A test runs on 'cuda' when a parameter is a cuda device, when it asks for the
`stand_in` fixture (the CuPy stand-in's counters), or when its code, a fixture's or a function
of its module that it calls names a cuda device ("cuda", "cuda:1"; also in a global tuple or
list it reads), unless a parameter says it is the case on the cpu.

    python tests/test_gpu_marks.py [PATH ...]    # the unmarked ones, one a line; status 1
"""

import inspect
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CUDA_DEVICE = re.compile(r"cuda(:\d+)?")


def _is_cuda_device(value) -> bool:
    return isinstance(value, str) and CUDA_DEVICE.fullmatch(value) is not None


def _names_a_cuda_device(function, seen) -> bool:
    """Whether `function`'s code, a global it reads (a name, or a tuple or list of names) or
    the code of a function of its module it refers to names a cuda device."""
    code = getattr(function, "__code__", None)
    if code is None or code in seen:
        return False
    seen.add(code)
    codes = [code]
    while codes:
        code = codes.pop()
        for constant in code.co_consts:
            if _is_cuda_device(constant):
                return True
            if isinstance(constant, types.CodeType):
                codes.append(constant)
        for name in code.co_names:
            value = function.__globals__.get(name)
            if _is_cuda_device(value) or isinstance(value, (tuple, list)) \
                    and any(_is_cuda_device(item) for item in value):
                return True
            if inspect.isfunction(value) and value.__module__ == function.__module__ \
                    and _names_a_cuda_device(value, seen):
                return True
    return False


def runs_on_cuda(item) -> bool:
    parameters = getattr(item, "callspec", None)
    values = parameters.params.values() if parameters else ()
    devices = [value for value in values
               if _is_cuda_device(value) or isinstance(value, str) and value == "cpu"]
    if devices:  # the case of a device parameter runs where it says
        return any(device != "cpu" for device in devices)
    if "stand_in" in item.fixturenames:
        return True
    seen: set = set()
    fixtures = [definition.func for name in item.fixturenames
                for definition in item._fixtureinfo.name2fixturedefs.get(name, ())]
    return any(_names_a_cuda_device(function, seen)
               for function in [getattr(item, "function", None), *fixtures])


class UnmarkedCudaTests:
    """A pytest plugin: after collection, the tests that run on 'cuda' without the gpu mark."""

    def __init__(self) -> None:
        self.found: list[str] = []

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items) -> None:
        self.found = [item.nodeid for item in items
                      if item.get_closest_marker("gpu") is None and runs_on_cuda(item)]


def unmarked(paths, cwd) -> tuple[int, list[str]]:
    """This file run as a script on `paths` (a fresh process: collecting imports every test
    module): its exit status and the unmarked tests, or its output's end if it failed."""
    result = subprocess.run([sys.executable, str(Path(__file__).resolve()), *paths], cwd=cwd,
                            capture_output=True, text=True, timeout=120,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    head, found, tail = result.stdout.partition("== unmarked\n")
    return result.returncode, tail.split() if found else [(head + result.stderr)[-3000:]]


def test_every_test_that_runs_on_cuda_is_marked_gpu():
    status, found = unmarked(["tests"], ROOT)
    assert status == 0, ("tests that run on 'cuda' without @pytest.mark.gpu (the GPU run "
                         "would leave them out):\n" + "\n".join(found))


def test_an_unmarked_test_on_cuda_is_found(tmp_path):
    (tmp_path / "test_sample.py").write_text(
        "import pytest\n\n"
        "def on(device):\n    return device\n\n"
        "def test_calls_a_helper_on_cuda():\n    on('cuda')\n\n"
        "@pytest.mark.parametrize('device', ['cpu', 'cuda'])\n"
        "def test_parametrized(device):\n    pass\n\n"
        "@pytest.mark.parametrize('device', ['cpu', pytest.param('cuda', marks="
        "pytest.mark.gpu)])\ndef test_marked_case(device):\n    on('cuda' if device else 0)\n\n"
        "@pytest.mark.gpu\ndef test_marked():\n    on('cuda:1')\n\n"
        "def test_on_the_cpu():\n    on('cpu')\n")
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    gpu: the cuda suite\n")
    assert unmarked(["test_sample.py"], tmp_path) == (
        1, ["test_sample.py::test_calls_a_helper_on_cuda",
            "test_sample.py::test_parametrized[cuda]"])


def main(paths) -> int:
    plugin = UnmarkedCudaTests()
    status = pytest.main(["--collect-only", "-q", "-o", "addopts=", "-p", "no:cacheprovider",
                          *paths], plugins=[plugin])
    sys.stdout.flush()
    if status != 0:
        return int(status)
    print("\n".join(["== unmarked", *plugin.found]), flush=True)
    return 1 if plugin.found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
