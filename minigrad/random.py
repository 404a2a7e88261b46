"""Seeding and the random state of every generator minigrad uses (init, dropout, randn, ...)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .backend import get_backend, loaded_backends, seed_all
from .backend.numpy_backend import NumpyGenerator

if TYPE_CHECKING:  # the CUDA backend is imported only when a 'cuda' device is asked for
    from .backend.cupy_backend import CupyGenerator


def manual_seed(seed: int) -> None:
    """Seed every device's generator, so that a run can be repeated exactly."""
    seed_all(int(seed))


def get_rng_state(devices=None) -> dict:
    """The state of every generator in use (or of those of `devices`, e.g. a run's own), as
    JSON-serializable data (saved in checkpoints)."""
    backends = loaded_backends()
    chosen = backends if devices is None else {device: get_backend(device) for device in devices}
    return {device: backend.generator.state() for device, backend in chosen.items()}


def set_rng_state(state) -> None:
    """Restore what `get_rng_state` returned: the run continues with the same random numbers."""
    for device, generator_state in state.items():
        get_backend(device).generator.set_state(generator_state)


def generator(device: str | None = None) -> NumpyGenerator | CupyGenerator:
    """The random generator of a device (for code that draws with minigrad's seed)."""
    return get_backend(device).generator
