"""Sorting along one axis: sort (values differentiable, a gather of x, and their indices) and
argsort; ties keep their order (a stable sort), as PyTorch's with stable=True."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..tensor import Tensor
from .indexing import GetItem
from .reduce import normalize_axes
from .registry import InputSpec, op

SORTED = InputSpec("softmax-like", distinct=True, options={"descending": (False, True)})


def _order(name, x, axis, descending) -> tuple[int, Any]:
    """(the axis, the int64 indices that sort x along it), ties in their order."""
    if x.ndim == 0:
        normalize_axes(name, axis, 0)
        return 0, x.backend.xp.zeros((), dtype="int64")
    axis = normalize_axes(name, axis, x.ndim)[0]
    data = x.data
    if descending:  # largest first, ties still in their order
        data = ~data if x.dtype.kind == "b" else -data
    indices = x.backend.xp.argsort(data, axis=axis, kind="stable")
    return axis, indices.astype("int64", copy=False)


def _sort_reference(x, axis=-1, descending=False) -> tuple[np.ndarray, np.ndarray]:
    indices = np.argsort(-x if descending else x, axis=axis, kind="stable")
    return np.take_along_axis(x, indices, axis=axis), indices


@op(functions=(GetItem,), reference=_sort_reference, spec=SORTED, method=True,
    summary="values sorted along an axis (differentiable) and their int64 indices",
    pytorch="`torch.sort` (the sort is always stable here)")
def sort(x, axis=-1, descending=False) -> tuple[Tensor, Tensor]:
    axis, indices = _order("sort", x, axis, descending)
    if x.ndim == 0:
        return GetItem.apply(x, index=()), Tensor._make(indices, x.backend)
    xp = x.backend.xp
    grid = list(xp.meshgrid(*[xp.arange(n) for n in x.shape], indexing="ij", sparse=True))
    grid[axis] = indices
    return GetItem.apply(x, index=tuple(grid)), Tensor._make(indices, x.backend)


@op(reference=lambda x, axis=-1, descending=False: _sort_reference(x, axis, descending)[1],
    spec=SORTED, method=True, differentiable=False,
    summary="the int64 indices that sort x along an axis (stable)",
    pytorch="`torch.argsort` (always stable here)")
def argsort(x, axis=-1, descending=False) -> Tensor:
    return Tensor._make(_order("argsort", x, axis, descending)[1], x.backend)
