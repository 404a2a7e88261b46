"""Gathers and scatters with PyTorch's names: gather, scatter, scatter_add, scatter_reduce
along an axis, masked_select, nonzero, diagonal, diag, and F.one_hot. Each is a getitem or an
index_add (indexing.py) with the index written out, so the gradients are theirs (repeated
indices accumulate, deterministically)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd import BuiltinFunction
from ..errors import DTypeError, ShapeError
from ..tensor import Tensor
from .elementwise import Add, Divide, Multiply, Where, mask_array
from .indexing import GetItem, IndexAdd
from .reduce import normalize_axes
from .registry import InputSpec, op
from .shape import BroadcastTo, Transpose


def _index_array(name, index, x, axis) -> Any:
    """`index` (a Tensor or an array of ints, as many axes as x) on x's device, range-checked
    on the CPU (PyTorch refuses an index out of range; NumPy would wrap a negative one)."""
    array = index.data if isinstance(index, Tensor) else x.backend.xp.asarray(index)
    if array.dtype.kind not in "iu":
        raise DTypeError(f"{name}: index must hold integers, got {array.dtype}")
    if array.ndim != x.ndim:
        raise ShapeError(f"{name}: index of shape {array.shape} for a tensor of shape "
                         f"{x.shape}: they need the same number of axes")
    if array.size and x.backend.activate is None:
        low, high = int(array.min()), int(array.max())
        if low < 0 or high >= x.shape[axis]:
            raise IndexError(f"{name}: index values in [{low}, {high}] for axis {axis} of size "
                             f"{x.shape[axis]}; they must be in [0, {x.shape[axis]})")
    return array


def _positions(xp, axis, index) -> tuple:
    """The getitem index that reads x[..., index[i, j, ...], ...] at each position of index."""
    grid = list(xp.meshgrid(*[xp.arange(n) for n in index.shape], indexing="ij", sparse=True))
    grid[axis] = index
    return tuple(grid)


def _along(x, axis, index) -> tuple:
    return _positions(x.backend.xp, axis, index)


def _axis(name, axis, x) -> int:
    return (normalize_axes(name, axis, x.ndim) or (0,))[0]


def gather_reference(x, axis, index) -> np.ndarray:
    axis %= x.ndim
    leading = tuple(slice(None) if a == axis else slice(n) for a, n in enumerate(index.shape))
    return np.take_along_axis(x[leading], index, axis=axis)


@op(functions=(GetItem,), reference=gather_reference, spec=InputSpec("gather"), method=True,
    summary="x's values at `index` along an axis: `out[i][j] = x[i][index[i][j]]` (axis 1)",
    pytorch="`torch.gather`")
def gather(x, axis, index) -> Tensor:
    axis = _axis("gather", axis, x)
    array = _index_array("gather", index, x, axis)
    for a, (n, m) in enumerate(zip(array.shape, x.shape)):
        if a != axis and n > m:
            raise ShapeError(f"gather: index of shape {array.shape} is larger than the tensor "
                             f"of shape {x.shape} on axis {a}")
    return GetItem.apply(x, index=_along(x, axis, array))


class Scatter(BuiltinFunction):
    """x with `src` written at `index` along an axis; each position written at most once."""

    name = "scatter"

    def forward(self, x, src, axis=0, index=None) -> Any:
        self.positions = _positions(self.xp, axis, index)
        out = x.copy()
        out[self.positions] = src
        self.kept = self.xp.ones(x.shape, dtype=bool)
        self.kept[self.positions] = False
        return out

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x, src = self.inputs
        return (grad * self.constant(self.kept.astype(grad.dtype)) if x.requires_grad else None,
                GetItem.apply(grad, index=self.positions))


def scatter_reference(x, axis, index, src) -> np.ndarray:
    out = x.copy()
    for position in np.ndindex(*index.shape):
        target = list(position)
        target[axis] = index[position]
        out[tuple(target)] = src[position]
    return out


@op(functions=(Scatter, GetItem), reference=scatter_reference, spec=InputSpec("scatter"),
    method=True, summary="x with src written at index along an axis",
    pytorch="`torch.scatter` (src of index's shape, each position written once)")
def scatter(x, axis, index, src) -> Tensor:
    axis = _axis("scatter", axis, x)
    array = _index_array("scatter", index, x, axis)
    if isinstance(src, Tensor) and src.shape != array.shape:
        raise ShapeError(f"scatter: src of shape {src.shape} for an index of shape "
                         f"{array.shape}; they must match")
    if not isinstance(src, Tensor):  # a number: written everywhere the index says
        src = Tensor._make(x.backend.xp.full(array.shape, src, dtype=x.dtype), x.backend)
    return Scatter.apply(x, src, axis=axis, index=array)


def _scattered(x, axis, index, src) -> Tensor:
    """zeros of x's shape with src summed in at index along axis."""
    return IndexAdd.apply(src, index=_along(x, axis, index), shape=x.shape)


def scatter_add_reference(x, axis, index, src) -> np.ndarray:
    out = x.copy()
    positions = list(np.meshgrid(*[np.arange(n) for n in index.shape], indexing="ij"))
    positions[axis] = index
    np.add.at(out, tuple(positions), src)
    return out


@op(functions=(Add, IndexAdd, GetItem), reference=scatter_add_reference,
    spec=InputSpec("scatter_add"), method=True,
    summary="x with src summed in at index along an axis (repeats accumulate)",
    pytorch="`torch.scatter_add` (src of index's shape)")
def scatter_add(x, axis, index, src) -> Tensor:
    axis = _axis("scatter_add", axis, x)
    array = _index_array("scatter_add", index, x, axis)
    if src.shape != array.shape:
        raise ShapeError(f"scatter_add: src of shape {src.shape} for an index of shape "
                         f"{array.shape}; they must match")
    return x + _scattered(x, axis, array, src)


def scatter_reduce_reference(x, axis, index, src, reduce, include_self=True) -> np.ndarray:
    total = scatter_add_reference(x if include_self else np.zeros_like(x), axis, index, src)
    if reduce == "sum":
        return total if include_self else np.where(_counts(np, x, axis, index) > 0, total, x)
    counts = _counts(np, x, axis, index)
    return np.where(counts > 0, total / np.maximum(counts + include_self, 1), x)


def _counts(xp, x, axis, index) -> Any:
    counts = xp.zeros(x.shape, dtype=x.dtype)
    positions = list(xp.meshgrid(*[xp.arange(n) for n in index.shape], indexing="ij"))
    positions[axis] = index
    xp.add.at(counts, tuple(positions), 1)
    return counts


@op(functions=(Add, Multiply, Divide, Where, IndexAdd, GetItem),
    reference=scatter_reduce_reference,
    spec=InputSpec("scatter_add", options={"reduce": ("sum", "mean"),
                                           "include_self": (True, False)}),
    method=True, summary="src reduced into x at index along an axis: 'sum' or 'mean'",
    pytorch="`torch.scatter_reduce` ('sum' and 'mean' only, not 'prod', 'amax', "
            "'amin')")
def scatter_reduce(x, axis, index, src, reduce, include_self=True) -> Tensor:
    if reduce not in ("sum", "mean"):
        raise ValueError(f"scatter_reduce: reduce must be 'sum' or 'mean', got {reduce!r}")
    axis = _axis("scatter_reduce", axis, x)
    array = _index_array("scatter_reduce", index, x, axis)
    if src.shape != array.shape:
        raise ShapeError(f"scatter_reduce: src of shape {src.shape} for an index of shape "
                         f"{array.shape}; they must match")
    added = _scattered(x, axis, array, src)
    counts = _counts(x.backend.xp, x.data, axis, array)
    hit = counts > 0
    if reduce == "sum" and include_self:
        return x + added
    total = x + added if include_self else added
    if reduce == "mean":
        total = total / Tensor._make(counts + include_self + ~hit, x.backend)
    return Where.apply(total, x, condition=hit)


@op(functions=(GetItem, BroadcastTo), reference=lambda x, mask: np.broadcast_to(
    x, np.broadcast_shapes(x.shape, mask.shape))[np.broadcast_to(
        mask, np.broadcast_shapes(x.shape, mask.shape))],
    spec=InputSpec("masked_fill"), method=True,
    summary="the values where mask is True, as a 1-D tensor (row-major order)")
def masked_select(x, mask) -> Tensor:
    """x's values where `mask` (broadcasting with x) is True, flattened."""
    array = mask_array("masked_select", mask, x)
    shape = tuple(np.broadcast_shapes(x.shape, array.shape))
    if x.shape != shape:
        x = BroadcastTo.apply(x, shape=shape)
    return GetItem.apply(x, index=(x.backend.xp.broadcast_to(array, shape),))


@op(reference=lambda x: np.argwhere(x), spec=InputSpec("unary"), method=True,
    differentiable=False, summary="the int64 indices of nonzero elements, (count, ndim)",
    pytorch="`torch.nonzero` (as_tuple=False)")
def nonzero(x) -> Tensor:
    return Tensor._make(x.backend.xp.argwhere(x.data).astype("int64", copy=False), x.backend)


def _diagonal_index(xp, rows, columns, offset) -> tuple[Any, Any]:
    length = max(0, min(rows + min(offset, 0), columns - max(offset, 0)))
    steps = xp.arange(length)
    return steps - min(offset, 0), steps + max(offset, 0)


@op(functions=(Transpose, GetItem), reference=lambda x, offset=0, axis1=0, axis2=1: np.diagonal(
    x, offset, axis1, axis2), spec=InputSpec("diagonal"), method=True,
    summary="the diagonal of two axes (offset above, or below if negative), as the last axis",
    pytorch="`torch.diagonal` (`dim1`, `dim2`)")
def diagonal(x, offset=0, axis1=0, axis2=1) -> Tensor:
    return _diagonal_of(x, offset, axis1, axis2)


def _diagonal_of(x, offset, axis1, axis2) -> Tensor:
    if x.ndim < 2:
        raise ShapeError(f"diagonal: needs a tensor of >= 2 axes, got shape {x.shape}")
    first, second = (normalize_axes("diagonal", a, x.ndim)[0] for a in (axis1, axis2))
    if first == second:
        raise ShapeError(f"diagonal: axis1 and axis2 are the same axis ({first})")
    rest = [a for a in range(x.ndim) if a not in (first, second)]
    moved = Transpose.apply(x, axes=tuple(rest + [first, second]))
    rows, columns = _diagonal_index(x.backend.xp, x.shape[first], x.shape[second], offset)
    return GetItem.apply(moved, index=(Ellipsis, rows, columns))


@op(functions=(IndexAdd, GetItem, Transpose), reference=lambda x, diagonal=0: np.diag(
    x, diagonal), spec=InputSpec("diag"),
    summary="a 1-D tensor as a diagonal matrix; a matrix's diagonal",
    pytorch="`torch.diag` (`diagonal`)")
def diag(x, diagonal=0) -> Tensor:
    if x.ndim == 2:
        return _diagonal_of(x, diagonal, 0, 1)
    if x.ndim != 1:
        raise ShapeError(f"diag: needs a 1-D or 2-D tensor, got shape {x.shape}")
    side = x.shape[0] + abs(diagonal)
    rows, columns = _diagonal_index(x.backend.xp, side, side, diagonal)
    return IndexAdd.apply(x, index=(rows, columns), shape=(side, side))


def one_hot_reference(ids, num_classes=-1) -> np.ndarray:
    classes = int(ids.max()) + 1 if num_classes < 0 else num_classes
    return np.eye(classes, dtype=np.int64)[ids]


@op(reference=one_hot_reference, spec=InputSpec("one_hot"), namespace="F",
    differentiable=False, summary="int64 (..., num_classes) with a 1 at each id")
def one_hot(ids, num_classes=-1) -> Tensor:
    """ids (...) -> (..., num_classes), int64 as PyTorch; num_classes -1: the largest id + 1."""
    data = ids.data
    if data.dtype.kind not in "iu":
        raise DTypeError(f"one_hot: ids must be integers, got {data.dtype}")
    xp = ids.backend.xp
    classes = num_classes if num_classes >= 0 else (int(data.max()) + 1 if data.size else 0)
    if data.size and (int(data.min()) < 0 or int(data.max()) >= classes):
        raise IndexError(f"one_hot: ids must be in [0, {classes}), got values in "
                         f"[{int(data.min())}, {int(data.max())}]")
    return Tensor._make(xp.eye(classes, dtype="int64")[data], ids.backend)
