"""The CUDA backend: CuPy arrays on one GPU. Imported only when a 'cuda' device is asked for.

Work for `cuda:N` runs with GPU N as CuPy's current device: `activate()` makes it current
(and leaves it so), and minigrad calls it before every op (`Function.apply`), in the backward
pass, and whenever a backend is looked up by device string (creation, loading).
`minigrad/testing/fake_cupy/` stands in for CuPy on a machine without a GPU.
"""

import os
from typing import Any

import numpy as np

from ..errors import DeviceError
from .kernels import ArrayKernels

# how to install CuPy 14, named by every error that says so (pyproject.toml's extras; `[ctk]`
# brings CUDA's libraries where no CUDA toolkit is installed)
INSTALL_CUPY = ("pip install -e '.[gpu-cuda12]' (CUDA 12) or pip install -e '.[gpu-cuda13]' "
                "(CUDA 13)")
MINIMUM_VERSION = (14, 0)  # put_along_axis, NumPy 2's promotion rules (NEP 50)
_stand_in = None  # a module used instead of `import cupy` (the test double), or None:
# set by `minigrad.backend.use_cupy`, which also forgets the CUDA backends made before


def _import_cupy():
    """CuPy and its device count, or one DeviceError line saying what is missing."""
    cupy: Any
    if _stand_in is not None:
        cupy = _stand_in
    else:
        try:
            import cupy  # type: ignore[no-redef]
        except ImportError:
            raise DeviceError(
                f"device 'cuda' needs CuPy 14: {INSTALL_CUPY} on a machine with an NVIDIA "
                "GPU, or use device='cpu'"
            ) from None
    version = tuple(int(part) for part in cupy.__version__.split(".")[:2] if part.isdigit())
    if version < MINIMUM_VERSION:
        raise DeviceError(f"device 'cuda' needs CuPy >= 14, found CuPy {cupy.__version__}: "
                          f"{INSTALL_CUPY}")
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # CuPy's CUDARuntimeError: no driver, or no GPU
        raise DeviceError(f"device 'cuda': no usable GPU ({str(error).splitlines()[0]}); "
                          "use device='cpu'") from None
    if count == 0:
        raise DeviceError("device 'cuda': CuPy finds no GPU on this machine; use device='cpu'")
    return cupy, count


def sorted_segment_sum(xp, indices, values, size) -> Any:
    """Deterministic scatter-add on the GPU in O(N · D): out[indices[i]] += values[i] for
    indices (N,) and values (N, D...), with no atomics and no read by the host.

    The rows are sorted by index (a stable sort); each row learns where its run of equal
    indices starts and ends (two binary searches), and the run's sum is the difference of
    two rows of the running sum (float64: the sum of a run is exact to float32 precision).
    Every row of a run then writes the same total to its index, so the order of the writes
    does not matter."""
    n = indices.shape[0]
    rest = values.shape[1:]
    out = xp.zeros((size,) + rest, dtype=values.dtype)
    if n == 0:
        return out
    flat = values.reshape(n, -1)  # (N, D)
    order = xp.argsort(indices, kind="stable")
    sorted_indices = indices[order]
    running = xp.cumsum(flat[order].astype(xp.float64), axis=0)  # (N, D)
    running = xp.concatenate([xp.zeros((1, flat.shape[1]), xp.float64), running])  # (N+1, D)
    starts = xp.searchsorted(sorted_indices, sorted_indices, side="left")
    ends = xp.searchsorted(sorted_indices, sorted_indices, side="right")
    totals = running[ends] - running[starts]  # (N, D): the run's sum, at each of its rows
    out.reshape(size, -1)[sorted_indices] = totals.astype(values.dtype)
    return out


class CupyGenerator:
    """A CUDA random generator whose state is its seed and the number of draws made since.

    Philox4x3210, a counter-based generator, with a fixed number of states (`STATES`): CuPy's
    default is 8 · 256 · the GPU's SM count, so that one seed would draw other numbers on
    another GPU. A stream starts at each seed and at each restore point (`state()`), on the
    backend's GPU: two launches (the states' zero fill and cuRAND's init) and 4 MiB of
    states (64 bytes each) from CuPy's memory pool; a restore point is taken when a
    checkpoint is saved, not per step."""

    STATES = 65_536

    def __init__(self, xp, activate, seed=None) -> None:
        self.xp = xp
        self.activate = activate
        self.seed(seed)

    def seed(self, seed) -> None:
        if seed is None:
            seed = int.from_bytes(os.urandom(4), "little")
        self.initial_seed = int(seed)
        self._restart(0)

    def _restart(self, draws):
        """Continue with a stream that depends on (seed, draws) alone: a restore point."""
        self.draws = draws
        self.activate()
        self.rng = self.xp.random.default_rng(
            self.xp.random.Philox4x3210((self.initial_seed << 32) + draws, size=self.STATES))

    def state(self) -> dict[str, int]:
        """The state; also a restore point, so the draws that follow are those that
        `set_state` of this state gives (a CUDA generator's own state is not portable)."""
        self._restart(self.draws)
        return {"seed": self.initial_seed, "draws": self.draws}

    def set_state(self, state) -> None:
        self.initial_seed = int(state["seed"])
        self._restart(int(state["draws"]))

    def _next(self):
        self.draws += 1
        self.activate()
        return self.rng

    def normal(self, shape, dtype) -> Any:
        return self._next().standard_normal(shape, dtype=dtype)

    def uniform(self, shape, dtype) -> Any:
        return self._next().random(shape, dtype=dtype)

    def bernoulli(self, shape, probability) -> Any:
        """Booleans, each True with `probability`."""
        return self.uniform(shape, self.xp.float32) < probability

    def permutation(self, n) -> Any:
        return self.xp.argsort(self.uniform((n,), self.xp.float64))


def _copies(a, b):
    """How many operands of a batched product CuPy's matmul copies: those not C-contiguous."""
    return (not a.flags.c_contiguous) + (not b.flags.c_contiguous)


class CupyBackend:
    """Arrays in GPU memory on device `cuda:index`, computed by CuPy."""

    name = "cupy"

    def __init__(self, index) -> None:
        xp, count = _import_cupy()
        if index >= count:
            raise DeviceError(f"device 'cuda:{index}' does not exist: this machine has {count} "
                              f"GPU(s), cuda:0 to cuda:{count - 1}")
        self.xp = xp
        self.index = index
        self.device = f"cuda:{index}"
        self._runtime = xp.cuda.runtime
        self.generator = CupyGenerator(xp, self.activate)
        self.kernels: ArrayKernels = ArrayKernels(self)

    def use_fused_kernels(self, on) -> None:
        """`kernels`: the fused kernels (`cupy_fused.py`) when on, else chains of CuPy's ops
        (`kernels.ArrayKernels`)."""
        from .cupy_fused import FusedKernels

        self.kernels = FusedKernels(self) if on else ArrayKernels(self)

    def activate(self) -> None:
        """Make this backend's GPU CuPy's current device (where new arrays and kernels go)."""
        if self._runtime.getDevice() != self.index:
            self._runtime.setDevice(self.index)

    def from_host(self, array) -> Any:
        self.activate()
        return self.xp.asarray(array)

    def to_host(self, array) -> np.ndarray:
        return self.xp.asnumpy(array)

    def owns(self, array) -> bool:
        """Whether `array` is a whole array of its own (not a view), so a `.grad` may keep it."""
        return array.base is None

    def batched_operand(self, array, transposed=False) -> Any:
        """`array` C-contiguous, or with `transposed` a view of a C-contiguous array that holds
        it with its last two axes swapped: CuPy's matmul of more than 2 dimensions copies every
        operand that is not C-contiguous (`_core/_routines_linalg.pyx`), so a strided one is
        copied once here, into the layout its products take (`matmul`), rather than at each
        product that uses it."""
        if not transposed:
            return self.xp.ascontiguousarray(array)
        swap = self.xp.swapaxes
        return swap(self.xp.ascontiguousarray(swap(array, -1, -2)), -1, -2)

    def matmul(self, a, b) -> Any:
        """a @ b, computed as (bᵀ aᵀ)ᵀ where that makes fewer operands CuPy must copy (those
        not C-contiguous, in a product of more than 2 dimensions): the result is then a view
        with its last two axes swapped."""
        if min(a.ndim, b.ndim) < 2 or max(a.ndim, b.ndim) < 3:
            return a @ b
        swap = self.xp.swapaxes
        a_t, b_t = swap(a, -1, -2), swap(b, -1, -2)
        if _copies(b_t, a_t) < _copies(a, b):
            return swap(b_t @ a_t, -1, -2)
        return a @ b

    def scatter_add(self, indices, values, size) -> Any:
        self.activate()
        return sorted_segment_sum(self.xp, indices, values, size)

    def run_blockwise(self, tasks) -> None:
        """Each task on its whole arrays: the GPU is parallel within each kernel already."""
        self.activate()
        for function, arrays in tasks:
            function(*arrays)

    def synchronize(self) -> None:
        self.activate()
        self.xp.cuda.Device(self.index).synchronize()
