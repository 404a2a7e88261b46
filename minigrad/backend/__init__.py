"""Backends: where arrays live and the few functions that are not uniform across array libraries.

A backend bundles an array namespace `xp` (NumPy or CuPy) with:

- `device`           the device string its arrays live on ("cpu", "cuda:0", ...)
- `from_host(a)`     a NumPy array -> an array of this backend
- `to_host(a)`       an array of this backend -> a NumPy array
- `scatter_add(indices, values, size)`  deterministic out[indices[i]] += values[i]
- `run_blockwise(tasks)`  array work `(function, arrays)` that falls apart
                     along the arrays' first axis, run as `function(*blocks)` over slices of
                     the arrays, each written in place (on every CPU core)
- `generator`        this device's random generator (`seed`, `state`, `set_state`,
                     `normal`, `uniform`, `bernoulli`)
- `synchronize()`    wait for queued work (a no-op on the CPU)

Adding a backend is one file implementing these and one line in `get_backend`.
"""

import os

from ..errors import DeviceError
from .numpy_backend import NumpyBackend

_backends = {}
_default_device = None
_seed = None  # the last manual_seed, given to backends created after it


def normalize_device(device):
    """'cpu' -> 'cpu'; 'cuda' -> 'cuda:0'; 'cuda:N' -> 'cuda:N'; anything else is a DeviceError."""
    if device is None:
        return default_device()
    device = str(device).strip().lower()
    if device == "cpu":
        return "cpu"
    if device == "cuda":
        return "cuda:0"
    if device.startswith("cuda:") and device[5:].isdigit():
        return device
    raise DeviceError(f"unknown device {device!r}: use 'cpu', 'cuda' or 'cuda:N'")


def get_backend(device=None):
    """The backend object for a device string (created on first use; CuPy imported only then)."""
    device = normalize_device(device)
    backend = _backends.get(device)
    if backend is None:
        if device == "cpu":
            backend = NumpyBackend()
        else:
            from .cupy_backend import CupyBackend

            backend = CupyBackend(int(device.split(":")[1]))
        if _seed is not None:
            backend.generator.seed(_seed)
        _backends[device] = backend
    return backend


def seed_all(seed):
    """Seed the random generator of every backend, now and created later."""
    global _seed
    _seed = seed
    for backend in _backends.values():
        backend.generator.seed(seed)


def loaded_backends():
    """The backends created so far (the random state covers each of them)."""
    return dict(_backends)


def default_device():
    """The device new tensors go to: `set_default_device`, else $MINIGRAD_DEVICE, else 'cpu'."""
    if _default_device is not None:
        return _default_device
    env = os.environ.get("MINIGRAD_DEVICE")
    return normalize_device(env) if env else "cpu"


def set_default_device(device):
    """Send every new tensor (and module) to `device` unless told otherwise."""
    global _default_device
    _default_device = None if device is None else normalize_device(device)
    if _default_device is not None:
        get_backend(_default_device)  # fail now, not at the first tensor, if it is unavailable


def backend_of_array(array):
    """The backend that owns an array (NumPy arrays and scalars are 'cpu')."""
    module = type(array).__module__
    if module.startswith("cupy"):
        return get_backend(f"cuda:{array.device.id}")
    return get_backend("cpu")
