"""The CUDA backend: CuPy arrays on one GPU. Imported only when a 'cuda' device is asked for."""

import math
import os

from ..errors import DeviceError


def _import_cupy():
    try:
        import cupy
    except ImportError as error:
        raise DeviceError(
            "device 'cuda' needs CuPy: install the 'gpu' extra (pip install -e '.[gpu]') "
            "on a machine with an NVIDIA GPU, or use device='cpu'"
        ) from error
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as error:  # CuPy raises its own CUDARuntimeError when no driver is found
        raise DeviceError(f"device 'cuda': no usable GPU ({error}); use device='cpu'") from error
    return cupy, count


def onehot_segment_sum(xp, indices, values, size):
    """Deterministic scatter-add on the GPU: a one-hot (size, N) matrix times values (N, ...).

    Atomic adds would make the summation order depend on thread timing; a matrix product
    has a fixed order, and on a GPU it is fast for the sizes minigrad meets (embeddings,
    gathers of activations).
    """
    n = indices.shape[0]
    flat = values.reshape(n, math.prod(values.shape[1:]))  # (N, ...) -> (N, rest), N may be 0
    onehot = xp.zeros((size, n), dtype=values.dtype)
    onehot[indices, xp.arange(n)] = 1
    return (onehot @ flat).reshape((size,) + values.shape[1:])


class CupyGenerator:
    """A CUDA random generator whose state is its seed and the number of draws made since."""

    def __init__(self, xp, seed=None):
        self.xp = xp
        self.seed(seed)

    def seed(self, seed):
        if seed is None:
            seed = int.from_bytes(os.urandom(4), "little")
        self.initial_seed = int(seed)
        self._restart(0)

    def _restart(self, draws):
        """Continue with a stream that depends on (seed, draws) alone: a restore point."""
        self.draws = draws
        self.rng = self.xp.random.default_rng((self.initial_seed << 32) + draws)

    def state(self):
        """The state; also a restore point, so the draws that follow are those that
        `set_state` of this state gives (a CUDA generator's own state is not portable)."""
        self._restart(self.draws)
        return {"seed": self.initial_seed, "draws": self.draws}

    def set_state(self, state):
        self.initial_seed = int(state["seed"])
        self._restart(int(state["draws"]))

    def _next(self):
        self.draws += 1
        return self.rng

    def normal(self, shape, dtype):
        return self._next().standard_normal(shape, dtype=dtype)

    def uniform(self, shape, dtype):
        return self._next().random(shape, dtype=dtype)

    def bernoulli(self, shape, probability):
        """Booleans, each True with `probability`."""
        return self.uniform(shape, self.xp.float64) < probability

    def permutation(self, n):
        return self.xp.argsort(self.uniform((n,), self.xp.float64))


class CupyBackend:
    """Arrays in GPU memory on device `cuda:index`, computed by CuPy."""

    name = "cupy"

    def __init__(self, index, xp=None):
        if xp is None:
            xp, count = _import_cupy()
            if index >= count:
                raise DeviceError(
                    f"device 'cuda:{index}' does not exist: this machine has {count} GPU(s)"
                )
        self.xp = xp
        self.index = index
        self.device = f"cuda:{index}"
        self.generator = CupyGenerator(xp)

    def _on_device(self):
        cuda = getattr(self.xp, "cuda", None)
        return cuda.Device(self.index) if cuda is not None and hasattr(cuda, "Device") else _Null()

    def from_host(self, array):
        with self._on_device():
            return self.xp.asarray(array)

    def to_host(self, array):
        return self.xp.asnumpy(array) if hasattr(self.xp, "asnumpy") else array

    def scatter_add(self, indices, values, size):
        with self._on_device():
            return onehot_segment_sum(self.xp, indices, values, size)

    def run_blockwise(self, tasks):
        """Each task on its whole arrays: the GPU is parallel within each kernel already."""
        with self._on_device():
            for function, arrays in tasks:
                function(*arrays)

    def synchronize(self):
        cuda = getattr(self.xp, "cuda", None)
        if cuda is not None:
            cuda.Stream.null.synchronize()


class _Null:
    """A do-nothing context manager (NumPy standing in for CuPy has no devices to enter)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False
