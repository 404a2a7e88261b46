"""examples/digits_cnn.py end to end: the convolutional network on scikit-learn's 8x8 digits
trains to over 95% test accuracy (seed 0, its default 15 epochs)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.acceptance
def test_the_digits_network_beats_95_percent():
    pytest.importorskip("sklearn", reason="the digits come with scikit-learn (the test extra)")
    result = subprocess.run([sys.executable, str(ROOT / "examples" / "digits_cnn.py")],
                            capture_output=True, text=True, check=True, cwd=ROOT, timeout=300,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    accuracy = float(re.search(r"^test accuracy ([0-9.]+)", result.stdout, re.M).group(1))
    assert accuracy > 0.95, result.stdout
