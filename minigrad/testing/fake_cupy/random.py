"""cupy.random: bit generators of CuPy's size and a Generator that draws on its device."""

import numpy as np

from .array import _Devices, monitor, ndarray


class BitGenerator:
    """A bit generator of `size` states (by default 8 · 256 · the GPU's SM count, as CuPy's
    `_cuRANDGenerator`, `random/_bit_generator.pyx`): its draws depend on the seed and on
    `size`, as CuPy's do; making it fills the states (two launches: zeros, cuRAND's init)."""

    kind = "BitGenerator"

    def __init__(self, seed=None, *, size=-1) -> None:
        self.seed = seed
        self.size = 8 * 256 * _Devices.multiprocessors if size < 0 else size
        self.device = _Devices.current
        monitor.bit_generators[self.kind] += 1
        monitor.launch(f"{self.kind} init", 2)


def bit_generator(kind) -> type[BitGenerator]:
    return type(kind, (BitGenerator,), {"kind": kind})


class _Generator:
    """cupy.random.Generator over a bit generator; it computes on the device it was made on."""

    def __init__(self, bit_generator) -> None:
        self.bit_generator = bit_generator
        seed = bit_generator.seed
        self._rng = np.random.default_rng(
            None if seed is None else [int(seed) & (2 ** 64 - 1), bit_generator.size])

    def _draw(self, name, make):
        if self.bit_generator.device != _Devices.current:
            raise ValueError(f"The device where the array resides ({self.bit_generator.device}) "
                             f"is different from the current device ({_Devices.current}). Peer "
                             "access is unavailable between these devices. (random generator)")
        monitor.launch(f"random.{name}")
        return ndarray._make(np.asarray(make()), _Devices.current)

    def random(self, size=None, dtype=np.float64, out=None):
        return self._draw("random", lambda: self._rng.random(size, dtype=dtype))

    def standard_normal(self, size=None, dtype=np.float64, out=None):
        return self._draw("standard_normal", lambda: self._rng.standard_normal(size, dtype=dtype))

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        return self._draw("integers", lambda: self._rng.integers(low, high, size, dtype=dtype,
                                                                 endpoint=endpoint))

    def uniform(self, low=0.0, high=1.0, size=None, dtype=np.float64):
        return self._draw("uniform", lambda: self._rng.uniform(low, high, size).astype(dtype))


def default_rng(seed=None) -> _Generator:
    """A Generator; an int seed (or None) makes an XORWOW bit generator, as CuPy's does."""
    if not isinstance(seed, BitGenerator):
        seed = bit_generator("XORWOW")(seed)
    return _Generator(seed)
