"""Indexing: x[index] (slices, ints, None, Ellipsis, integer and boolean arrays) and its
transpose, index_add, which sums repeated indices deterministically."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from ..autograd import BuiltinFunction
from ..errors import ShapeError
from ..tensor import Tensor
from .references import index_add_reference, topk_reference
from .registry import InputSpec, op


def _normalize_index(index, backend, shape):
    """Tensor parts of an index -> arrays on the tensor's backend; lists and NumPy arrays ->
    arrays there too. On a GPU, whose gathers wrap an index out of range around, integer
    arrays are range-checked first: on the host before they are sent, or with one read."""
    parts = index if isinstance(index, tuple) else (index,)
    normalized = []
    for part in parts:
        if isinstance(part, Tensor):
            part = part.data
        elif isinstance(part, list):
            part = np.asarray(part)
        normalized.append(part)
    if backend.activate is not None:
        _check_range(normalized, shape, backend)
        normalized = [backend.from_host(part) if isinstance(part, np.ndarray) else part
                      for part in normalized]
    return tuple(normalized)


def _axes_of(parts, ndim):
    """The axis each index part stands at (None for parts that take no axis)."""
    consumed = sum(p.ndim if getattr(p, "dtype", None) == np.bool_ else
                   0 if p is None or p is Ellipsis else 1 for p in parts)
    axes, axis = [], 0
    for part in parts:
        axes.append(axis if part is not None and part is not Ellipsis else None)
        if part is Ellipsis:
            axis += ndim - consumed
        elif getattr(part, "dtype", None) == np.bool_:
            axis += part.ndim
        elif part is not None:
            axis += 1
    return axes


def _check_range(parts, shape, backend):
    for part, axis in zip(parts, _axes_of(parts, len(shape))):
        if getattr(part, "dtype", None) is None or part.dtype.kind not in "iu" or not part.size \
                or axis is None or axis >= len(shape):
            continue
        low, high = int(part.min()), int(part.max())  # on the host, or one read each
        if low < -shape[axis] or high >= shape[axis]:
            raise IndexError(f"getitem: index values in [{low}, {high}] are out of range for "
                             f"axis {axis} of size {shape[axis]} (tensor of shape "
                             f"{tuple(shape)})")


def _has_integer_array(index):
    return any(hasattr(part, "dtype") and part.dtype.kind in "iu" for part in index)


class GetItem(BuiltinFunction):
    name = "getitem"

    def forward(self, x, index=None) -> Any:
        self.index = index
        try:
            return x[index]
        except IndexError as error:
            raise IndexError(f"getitem: {error} (tensor of shape {x.shape})") from None

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return (IndexAdd.apply(grad, index=self.index, shape=self.inputs[0].shape),)


class IndexAdd(BuiltinFunction):
    """zeros(shape) with `values` added at `index`; repeated indices accumulate, summed in an
    order fixed by the indices (the backend's deterministic scatter-add, never atomics)."""

    name = "index_add"

    def forward(self, values, index=None, shape=None) -> Any:
        xp, backend = self.xp, self.backend
        self.index = index
        if not _has_integer_array(index):  # no index can repeat: plain assignment
            out = xp.zeros(shape, dtype=values.dtype)
            out[index] = values
            return out
        if len(index) == 1:  # rows of the first axis (embedding lookups)
            rows = index[0].reshape(-1) % shape[0]  # -1 and n-1 are the same row
            return backend.scatter_add(rows, values.reshape((rows.size,) + tuple(shape[1:])),
                                       shape[0])
        size = 1
        for n in shape:
            size *= n
        positions = xp.arange(size).reshape(shape)[index]
        return backend.scatter_add(positions.reshape(-1), values.reshape(-1), size).reshape(shape)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return (GetItem.apply(grad, index=self.index),)


@op(functions=(GetItem, IndexAdd), reference=operator.getitem, spec=InputSpec("index"),
    namespace=None, operators=("__getitem__",),
    summary="x[index]; repeated indices accumulate in the gradient",
    pytorch="`x[index]`")
def getitem(x, index) -> Tensor:
    return GetItem.apply(x, index=_normalize_index(index, x.backend, x.shape))


@op(functions=(IndexAdd, GetItem), reference=index_add_reference, spec=InputSpec("index_add"),
    summary="zeros(shape) with values summed in at index (deterministic)",
    pytorch="`zeros(shape).index_put_(index, values, accumulate=True)`")
def index_add(values, index, shape) -> Tensor:
    """The transpose of getitem: an array of `shape` with `values` summed in at `index`."""
    return IndexAdd.apply(values, index=_normalize_index(index, values.backend, shape),
                          shape=tuple(shape))


@op(functions=(GetItem,), reference=topk_reference,
    spec=InputSpec("topk", distinct=True, options={"largest": (True, False)}),
    summary="the k largest (or smallest) values (differentiable), their indices",
    pytorch="`torch.topk` (always sorted)")
def topk(x, k, axis=-1, largest=True) -> tuple[Tensor, Tensor]:
    """The k largest values along `axis`, largest first (`largest=False`: the k smallest,
    smallest first), and their int64 indices.

    The values are differentiable (a getitem of x); the indices are not."""
    xp = x.backend.xp
    axis = axis % x.ndim
    if not 1 <= k <= x.shape[axis]:
        raise ShapeError(f"topk: k={k} for an axis of length {x.shape[axis]} (shape {x.shape})")
    key = -x.data if largest else x.data
    # argpartition finds the k largest in linear time; only those k are then sorted
    candidates = xp.argpartition(key, k - 1, axis=axis)
    candidates = xp.take(candidates, xp.arange(k), axis=axis)
    order = xp.argsort(xp.take_along_axis(key, candidates, axis=axis), axis=axis)
    indices = xp.take_along_axis(candidates, order, axis=axis)
    grid = list(xp.meshgrid(*[xp.arange(n) for n in indices.shape], indexing="ij", sparse=True))
    grid[axis] = indices
    values = GetItem.apply(x, index=tuple(grid))
    return values, Tensor._make(indices.astype("int64", copy=False), x.backend)
