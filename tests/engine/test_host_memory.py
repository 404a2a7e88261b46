"""Freed host memory is kept for reuse (`minigrad.backend.host_memory`): a loop that allocates
and frees the same large arrays stops page-faulting once the NumPy backend exists."""

import os
import subprocess
import sys

import pytest

from minigrad.backend import host_memory

PROGRAM = """
import resource
import numpy as np
import minigrad as mg

mg.zeros(1)  # creates the NumPy backend
def step():  # a training step in miniature: large temporaries, all freed at the end
    held = [np.ones(2_000_000, np.float32) * i for i in range(8)]
    return sum(float(a[0]) for a in held)
step()
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
for _ in range(5):
    step()
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def page_faults(keep):
    env = dict(os.environ, MINIGRAD_KEEP_HOST_MEMORY="1" if keep else "0")
    result = subprocess.run([sys.executable, "-c", PROGRAM], env=env, capture_output=True,
                            text=True, check=True)
    return int(result.stdout.strip())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs glibc's mallopt")
def test_steps_after_the_first_reuse_freed_memory():
    if not host_memory.keep_freed_memory():
        pytest.skip("this C library has no mallopt")
    kept, released = page_faults(keep=True), page_faults(keep=False)
    assert released > 10_000  # 5 steps x 64 MB of fresh pages, 4 KiB each
    assert kept < released / 10


def test_it_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("MINIGRAD_KEEP_HOST_MEMORY", "0")
    assert host_memory.keep_freed_memory() is False
