"""The oldest NumPy minigrad runs on is declared once (`numpy_backend.MINIMUM_VERSION`), in
pyproject.toml, pinned by CI on the oldest Python, and below it `import minigrad` stops with
one line saying what to install."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

from minigrad.backend.numpy_backend import MINIMUM_VERSION, check_numpy_version

ROOT = Path(__file__).resolve().parents[2]
FLOOR = ".".join(map(str, MINIMUM_VERSION))


def test_import_below_the_floor_says_what_to_install():
    program = "import numpy; numpy.__version__ = '1.26.4'; import minigrad"
    result = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode != 0
    assert result.stderr.strip().splitlines()[-1] == (
        f"ImportError: minigrad needs NumPy >= {FLOOR}, found NumPy 1.26.4: "
        "pip install -U 'numpy>=2'")


@pytest.mark.parametrize("version", ["2.0.0", "2.0.2", "2.4.6", "2.5.0.dev0+git20261201", "3.0.0"])
def test_versions_from_the_floor_on_are_accepted(version):
    check_numpy_version(version)


@pytest.mark.parametrize("version", ["1.26.4", "1.99.0", "1.0"])
def test_versions_below_the_floor_are_refused(version):
    with pytest.raises(ImportError, match=rf"found NumPy {re.escape(version)}: pip install"):
        check_numpy_version(version)


def test_the_floor_is_what_pyproject_declares_ci_pins_and_the_readme_says():
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert f'"numpy>={FLOOR}"' in pyproject
    assert f'"numpy=={FLOOR}.*"' in (ROOT / ".ci" / "run").read_text()
    assert f"Python 3.10 with NumPy {FLOOR}, the oldest supported" in " ".join(
        (ROOT / "README.md").read_text().split())
