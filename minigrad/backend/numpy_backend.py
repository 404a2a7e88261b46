"""The CPU backend: NumPy arrays."""

import math
import operator
from typing import Any

import numpy as np

from .blockwise import BlockRunner
from .host_memory import keep_freed_memory
from .kernels import CpuKernels

MINIMUM_VERSION = (2, 0)  # NumPy 2's promotion rules (NEP 50): float32 stays float32 beside 0.5


def check_numpy_version(version: str) -> None:
    """An ImportError naming the NumPy found and what to install, if it is older than
    MINIMUM_VERSION (NumPy 1.x promotes a float32 0-d array times 0.5 to float64)."""
    found = tuple(int(part) for part in version.split(".")[:2] if part.isdigit())
    if found < MINIMUM_VERSION:
        raise ImportError(f"minigrad needs NumPy >= 2.0, found NumPy {version}: "
                          "pip install -U 'numpy>=2'")


check_numpy_version(np.__version__)


def sorted_segment_sum(xp, indices, values, size) -> Any:
    """Deterministic scatter-add: sort the indices, then sum each run of equal indices.

    out[indices[i]] += values[i] for 1-D `indices` of length N and `values` of shape (N, ...).
    The order of summation depends only on the inputs, never on threads.
    """
    out = xp.zeros((size,) + values.shape[1:], dtype=values.dtype)
    if indices.size == 0:
        return out
    order = xp.argsort(indices, kind="stable")
    sorted_indices = indices[order]
    run_starts = xp.flatnonzero(
        xp.concatenate([xp.ones(1, dtype=bool), sorted_indices[1:] != sorted_indices[:-1]])
    )
    out[sorted_indices[run_starts]] = xp.add.reduceat(values[order], run_starts, axis=0)
    return out


class NumpyGenerator:
    """The CPU random generator: NumPy's PCG64, whose state is a JSON-serializable dict."""

    def __init__(self, seed=None) -> None:
        self.seed(seed)

    def seed(self, seed) -> None:
        self.rng = np.random.Generator(np.random.PCG64(seed))

    def state(self) -> dict[str, Any]:
        return dict(self.rng.bit_generator.state)

    def set_state(self, state) -> None:
        self.rng.bit_generator.state = state

    def normal(self, shape, dtype) -> np.ndarray:
        return self.rng.standard_normal(shape, dtype=dtype)

    def uniform(self, shape, dtype) -> np.ndarray:
        """Uniform in [0, 1)."""
        return self.rng.random(shape, dtype=dtype)

    def bernoulli(self, shape, probability) -> np.ndarray:
        """Booleans, each True with `probability` (to within 2^-33): raw 32-bit draws below
        a threshold, faster than comparing float uniforms (dropout's masks; the figures are in
        benchmarks/README.md)."""
        if probability >= 1:
            return np.ones(shape, bool)
        count = math.prod(shape)
        bits = self.rng.bit_generator.random_raw((count + 1) // 2).view(np.uint32)[:count]
        return (bits < round(probability * 2**32)).reshape(shape)

    def permutation(self, n) -> np.ndarray:
        return self.rng.permutation(n)


class NumpyBackend:
    """Arrays in host memory, computed by NumPy (and its BLAS for products)."""

    name = "numpy"

    def __init__(self) -> None:
        # Instance attributes, not class attributes: every op reads them, and Python reads an
        # instance's own attribute several times faster than one found on its class.
        self.device = "cpu"
        self.xp = np
        self.activate = None  # one device, always current (CUDA's makes its GPU current)
        self.generator = NumpyGenerator()
        self._blocks = BlockRunner()
        self.kernels = CpuKernels(self)
        keep_freed_memory()

    def from_host(self, array) -> np.ndarray:
        return np.asarray(array)

    def to_host(self, array) -> np.ndarray:
        return np.asarray(array)

    def owns(self, array) -> bool:
        """Whether `array` is a whole writable array of its own (not a view, not read-only),
        so that a `.grad` may keep it."""
        return array.base is None and array.flags.writeable

    def batched_operand(self, array, transposed=False) -> np.ndarray:
        return array

    matmul = staticmethod(operator.matmul)  # NumPy's products take strided operands as they are

    def scatter_add(self, indices, values, size) -> np.ndarray:
        return sorted_segment_sum(np, indices, values, size)

    def run_blockwise(self, tasks) -> None:
        self._blocks.run(tasks)

    def synchronize(self) -> None:
        pass
