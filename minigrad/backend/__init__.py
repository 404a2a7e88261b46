"""Backends: where arrays live and the few functions that are not uniform across array libraries.

A backend bundles an array namespace `xp` (NumPy or CuPy) with:

- `device`           the device string its arrays live on ("cpu", "cuda:0", ...)
- `from_host(a)`     a NumPy array -> an array of this backend
- `to_host(a)`       an array of this backend -> a NumPy array (on a GPU: a read that waits)
- `owns(a)`          whether `a` is an array of its own (not a view), so a `.grad` may keep it
- `activate`         None, or a function that makes this backend's device current (CuPy's
                     current GPU); called before work on the backend's arrays
- `kernels`          the array work of the fused ops, one interface (`kernels.py`):
                     `CpuKernels` on the CPU; on 'cuda' `ArrayKernels` (chains of CuPy's
                     ops), or `FusedKernels` with `use_fused_kernels(True)` (`cupy_fused.py`)
- `batched_operand(a, transposed=False)`  `a` as an operand of batched matrix products:
                     on a GPU copied once into a C-contiguous array, of `a` or (`transposed`)
                     of `a` with its last two axes swapped, returned as a view in `a`'s shape
                     (CuPy's matmul copies a strided operand at every product); `a` itself on
                     the CPU (where the copy measured slower than NumPy's strided product)
- `matmul(a, b)`     a @ b; on a GPU computed as (bᵀ aᵀ)ᵀ where that leaves fewer operands
                     to copy (the result is then a view of swapped axes)
- `scatter_add(indices, values, size)`  deterministic out[indices[i]] += values[i]
- `run_blockwise(tasks)`  array work `(function, arrays)` that falls apart
                     along the arrays' first axis, run as `function(*blocks)` over slices of
                     the arrays, each written in place (on every CPU core)
- `generator`        this device's random generator (`seed`, `state`, `set_state`,
                     `normal`, `uniform`, `bernoulli`)
- `synchronize()`    wait for queued work (a no-op on the CPU)

`core_count()` is the number of cores this process may run on (the CPU backend's threads).

Adding a backend is one file implementing these and one line in `get_backend`.
"""

import os
from typing import Any

import numpy as np

from ..errors import DeviceError
from .blockwise import core_count
from .numpy_backend import NumpyBackend

_backends: dict = {}
_default_device = None
_fused = os.environ.get("MINIGRAD_FUSED") == "1"  # the CUDA backend's fused kernels
_seed = None  # the last manual_seed, given to backends created after it


def normalize_device(device) -> str:
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


def get_backend(device=None) -> Any:
    """The backend object for a device string (created on first use; CuPy imported only then),
    its device made current: what follows is work on it."""
    device = normalize_device(device)
    backend = _backends.get(device)
    if backend is not None:
        if backend.activate is not None:
            backend.activate()
        return backend
    if device == "cpu":
        backend = NumpyBackend()
    else:
        from .cupy_backend import CupyBackend

        backend = CupyBackend(int(device.split(":")[1]))
        backend.activate()
        backend.use_fused_kernels(_fused)
    if _seed is not None:
        backend.generator.seed(_seed)
    _backends[device] = backend
    return backend


def seed_all(seed) -> None:
    """Seed the random generator of every backend, now and created later."""
    global _seed
    _seed = seed
    for backend in _backends.values():
        backend.generator.seed(seed)  # a CUDA generator starts its stream on its own GPU


def loaded_backends() -> dict[str, Any]:
    """The backends created so far (the random state covers each of them)."""
    return dict(_backends)


def default_device() -> str:
    """The device new tensors go to: `set_default_device`, else $MINIGRAD_DEVICE, else 'cpu'."""
    if _default_device is not None:
        return _default_device
    env = os.environ.get("MINIGRAD_DEVICE")
    return normalize_device(env) if env else "cpu"


def set_default_device(device) -> None:
    """Send every new tensor (and module) to `device` unless told otherwise."""
    global _default_device
    _default_device = None if device is None else normalize_device(device)
    if _default_device is not None:
        get_backend(_default_device)  # fail now, not at the first tensor, if it is unavailable


def use_fused_kernels(on: bool = True) -> None:
    """Whether 'cuda' runs the fused elementwise kernels (`backend/cupy_fused.py`, written with
    `cupy.fuse`) instead of chains of CuPy calls: fewer kernel launches. Off by default until
    they have run on a GPU; MINIGRAD_FUSED=1 turns them on from the start."""
    global _fused
    _fused = bool(on)
    for backend in _backends.values():
        if backend.activate is not None:
            backend.use_fused_kernels(_fused)


def use_cupy(module) -> None:
    """Use `module` as CuPy (None: import the real one); forgets the CUDA backends made."""
    from . import cupy_backend  # the module only: CuPy itself is imported at the first device

    cupy_backend._stand_in = module
    forget_cuda_backends()


def forget_cuda_backends() -> None:
    """Drop the CUDA backends made so far (after switching to or from the CuPy stand-in)."""
    for device in [device for device in _backends if device != "cpu"]:
        del _backends[device]


def backend_of_array(array) -> Any:
    """The backend that owns an array (NumPy arrays and scalars are 'cpu', a CuPy array its
    GPU's)."""
    if isinstance(array, (np.ndarray, np.generic)):
        return get_backend("cpu")
    return get_backend(f"cuda:{array.device.id}")
