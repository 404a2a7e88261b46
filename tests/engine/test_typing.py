"""What a type checker sees: mypy (the project's settings, pyproject.toml) accepts
`tests/engine/typing_surface.py`, whose `assert_type` lines say that `x.sum()`, `mg.exp(x)`,
`F.softmax(x, -1)` and the other ops' results are `Tensor`. The whole of minigrad and
transformer is checked by the "type check" phase of .ci/run."""

from pathlib import Path

import pytest

api = pytest.importorskip("mypy.api", reason="mypy is in the test extra")

ROOT = Path(__file__).resolve().parents[2]
SURFACE = ROOT / "tests" / "engine" / "typing_surface.py"


def test_the_op_surface_is_typed_for_mypy():
    stdout, stderr, status = api.run(["--config-file", str(ROOT / "pyproject.toml"),
                                      "--cache-dir", str(ROOT / ".mypy_cache"), str(SURFACE)])
    assert status == 0, stdout + stderr


def test_a_wrong_type_is_reported(tmp_path):
    """The check has teeth: a result that is not what the file says fails it."""
    wrong = tmp_path / "wrong.py"
    wrong.write_text("from typing_extensions import assert_type\nimport minigrad as mg\n"
                     "assert_type(mg.exp(mg.randn(2)), int)\n")
    stdout, _, status = api.run(["--config-file", str(ROOT / "pyproject.toml"),
                                 "--cache-dir", str(ROOT / ".mypy_cache"), str(wrong)])
    assert status == 1 and "Tensor" in stdout, stdout
