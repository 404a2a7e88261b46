"""Tensors made from nothing: zeros, ones, full, empty, eye, random draws (randint among
them), ranges (linspace among them), triangles."""

from __future__ import annotations

import numpy as np

from .backend import get_backend
from .ops.elementwise import MaskedFill
from .ops.registry import InputSpec, op
from .tensor import Tensor, get_default_dtype


def _shape(shape):
    if len(shape) == 1 and not isinstance(shape[0], int):
        return tuple(shape[0])
    return tuple(shape)


def _make(array, backend, requires_grad):
    tensor = Tensor._make(array, backend)
    return tensor.requires_grad_() if requires_grad else tensor


def full(shape, value, dtype=None, device=None, requires_grad=False) -> Tensor:
    backend = get_backend(device)
    if dtype is None:
        dtype = get_default_dtype() if isinstance(value, float) else np.result_type(value)
    return _make(backend.xp.full(_shape((shape,)), value, dtype=dtype), backend, requires_grad)


def zeros(*shape, dtype=None, device=None, requires_grad=False) -> Tensor:
    backend = get_backend(device)
    array = backend.xp.zeros(_shape(shape), dtype=dtype or get_default_dtype())
    return _make(array, backend, requires_grad)


def ones(*shape, dtype=None, device=None, requires_grad=False) -> Tensor:
    backend = get_backend(device)
    array = backend.xp.ones(_shape(shape), dtype=dtype or get_default_dtype())
    return _make(array, backend, requires_grad)


def zeros_like(x, dtype=None, requires_grad=False) -> Tensor:
    return zeros(x.shape, dtype=dtype or x.dtype, device=x.device, requires_grad=requires_grad)


def ones_like(x, dtype=None, requires_grad=False) -> Tensor:
    return ones(x.shape, dtype=dtype or x.dtype, device=x.device, requires_grad=requires_grad)


def randn(*shape, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Standard normal draws from the device's seeded generator (`mg.manual_seed`)."""
    backend = get_backend(device)
    array = backend.generator.normal(_shape(shape), np.dtype(dtype or get_default_dtype()))
    return _make(array, backend, requires_grad)


def rand(*shape, dtype=None, device=None, requires_grad=False) -> Tensor:
    """Uniform draws in [0, 1) from the device's seeded generator."""
    backend = get_backend(device)
    array = backend.generator.uniform(_shape(shape), np.dtype(dtype or get_default_dtype()))
    return _make(array, backend, requires_grad)


def arange(start, stop=None, step=1, dtype=None, device=None) -> Tensor:
    """NumPy's arange: int64 for integer arguments, the default float dtype otherwise."""
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        integral = all(isinstance(v, int) for v in (start, stop, step))
        dtype = np.int64 if integral else get_default_dtype()
    backend = get_backend(device)
    return Tensor._make(backend.xp.arange(start, stop, step, dtype=dtype), backend)


def empty(*shape, dtype=None, device=None, requires_grad=False) -> Tensor:
    """A tensor of `shape` whose values are not to be read before they are written (zeros
    here, so that nothing uninitialized is ever seen)."""
    return zeros(*shape, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(x, value, dtype=None, requires_grad=False) -> Tensor:
    return full(x.shape, value, dtype=dtype or x.dtype, device=x.device,
                requires_grad=requires_grad)


def eye(n, m=None, dtype=None, device=None, requires_grad=False) -> Tensor:
    """The n x m identity (m = n unless given)."""
    backend = get_backend(device)
    array = backend.xp.eye(n, n if m is None else m, dtype=dtype or get_default_dtype())
    return _make(array, backend, requires_grad)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False) -> Tensor:
    """`steps` evenly spaced values from start to end, both included (PyTorch's and NumPy's)."""
    backend = get_backend(device)
    array = backend.xp.linspace(start, end, steps, dtype=dtype or get_default_dtype())
    return _make(array, backend, requires_grad)


def randint(low, high=None, size=(), dtype=None, device=None) -> Tensor:
    """Integers drawn uniformly from [low, high) (`randint(high, size)`: from [0, high)) by the
    device's seeded generator; int64 unless `dtype` says otherwise."""
    if high is None:
        low, high = 0, low
    if high <= low:
        raise ValueError(f"randint: high ({high}) must be larger than low ({low})")
    backend = get_backend(device)
    shape = (size,) if isinstance(size, int) else tuple(size)
    uniform = backend.generator.uniform(shape, np.dtype(np.float64))
    drawn = backend.xp.floor(low + uniform * (high - low)).clip(low, high - 1)
    return Tensor._make(drawn.astype(dtype or np.int64), backend)


def _triangle(x, k, upper):
    xp = x.backend.xp
    rows, cols = x.shape[-2:]
    keep = xp.tri(rows, cols, k - 1 if upper else k, dtype=bool)
    return x.masked_fill(keep if upper else ~keep, 0)


@op(functions=(MaskedFill,), reference=np.tril, summary="zeros above the k-th diagonal",
    spec=InputSpec("unary", min_ndim=2, options={"k": (-1, 0, 1)}))
def tril(x, k=0) -> Tensor:
    """x with the elements above the k-th diagonal set to 0 (differentiable)."""
    return _triangle(x, k, upper=False)


@op(functions=(MaskedFill,), reference=np.triu, summary="zeros below the k-th diagonal",
    spec=InputSpec("unary", min_ndim=2, options={"k": (-1, 0, 1)}))
def triu(x, k=0) -> Tensor:
    """x with the elements below the k-th diagonal set to 0 (differentiable)."""
    return _triangle(x, k, upper=True)
