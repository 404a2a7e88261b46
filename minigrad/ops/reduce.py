"""Reductions over `axis` (None, an int or a tuple) with `keepdims`, as NumPy defines them."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

import numpy as np

from ..autograd import Function
from ..errors import ShapeError
from ..tensor import Tensor
from .references import logsumexp_reference
from .registry import InputSpec, op

REDUCE = InputSpec("reduce")


def normalize_axes(name, axis, ndim) -> tuple[int, ...]:
    """axis (None | int | tuple) -> a sorted tuple of non-negative axes, checked."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    normalized = []
    span = builtins.max(ndim, 1)  # a 0-d tensor takes axis 0 and -1, as in PyTorch
    for a in axes:
        if not -span <= a < span:
            raise ShapeError(f"{name}: axis {a} is out of range for a tensor with {ndim} "
                             f"dimension(s); use an axis in [{-span}, {span - 1}]")
        normalized.append(a % span)
    if len(set(normalized)) != len(normalized):
        raise ShapeError(f"{name}: repeated axis in {axis}")
    return tuple(sorted(normalized)) if ndim else ()


class Reduction(Function):
    """Shared bookkeeping: the reduced axes, and how to stretch a gradient back over them."""

    reduce: Callable[..., Any]  # (x, axes, keepdims) -> the reduced array: each op's own

    def forward(self, x, axis=None, keepdims=False) -> Any:
        self.axes = normalize_axes(self.name, axis, x.ndim)
        self.keepdims = keepdims
        return self.reduce(x, self.axes, keepdims)

    def count(self) -> int:
        shape = self.inputs[0].shape
        n = 1
        for a in self.axes:
            n *= shape[a]
        return n

    def expand(self, value: Tensor) -> Tensor:
        """A reduced tensor with the reduced axes put back (size 1), then broadcast to x."""
        x = self.inputs[0]
        if not self.keepdims:
            value = value.reshape(tuple(1 if i in self.axes else n for i, n in enumerate(x.shape)))
        return value.broadcast_to(x.shape)

    def expand_array(self, array: Any) -> Any:
        if not self.keepdims:
            array = self.xp.expand_dims(array, self.axes)
        return array


@op(reference=np.sum, spec=REDUCE, summary="sum over axes", method=True)
class Sum(Reduction):
    name = "sum"

    def reduce(self, x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
        return x.sum(axis=axes, keepdims=keepdims)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return (self.expand(grad),)


@op(reference=np.mean, spec=REDUCE, summary="mean over axes", method=True)
class Mean(Reduction):
    name = "mean"
    float_only = True

    def reduce(self, x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
        return x.mean(axis=axes, keepdims=keepdims)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return (self.expand(grad) * (1.0 / builtins.max(self.count(), 1)),)


@op(reference=np.var, spec=REDUCE, summary="population variance (ddof=0) over axes", method=True)
class Var(Reduction):
    """Population variance (ddof=0), two passes: mean first, then mean squared deviation."""

    name = "var"
    float_only = True

    def reduce(self, x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
        return x.var(axis=axes, keepdims=keepdims)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0]
        centered = x - x.mean(axis=self.axes, keepdims=True)
        return (self.expand(grad) * centered * (2.0 / builtins.max(self.count(), 1)),)


class _Extremum(Reduction):
    """max / min: values only; at ties the gradient is split evenly (docs/conventions.md)."""

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0].data
        winners = x == self.expand_array(self.reduce(x, self.axes, self.keepdims))
        share = winners / winners.sum(axis=self.axes, keepdims=True)
        return (self.expand(grad) * self.constant(share.astype(grad.dtype, copy=False)),)


@op(reference=np.max, spec=InputSpec("reduce", distinct=True), method=True,
    summary="largest value over axes; ties split the gradient")
class Max(_Extremum):
    name = "max"

    def reduce(self, x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
        return x.max(axis=axes, keepdims=keepdims)


@op(reference=np.min, spec=InputSpec("reduce", distinct=True), method=True,
    summary="smallest value over axes; ties split the gradient")
class Min(_Extremum):
    name = "min"

    def reduce(self, x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
        return x.min(axis=axes, keepdims=keepdims)


@op(reference=logsumexp_reference, spec=REDUCE, summary="log(sum(exp(x))) over axes, stable",
    method=True)
class LogSumExp(Reduction):
    """log(sum(exp(x))), stable: the maximum is taken out first; all -inf gives -inf."""

    name = "logsumexp"
    float_only = True
    needs_output = True

    def reduce(self, x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
        xp = self.xp
        peak = x.max(axis=axes, keepdims=True)
        peak = xp.where(xp.isfinite(peak), peak, 0)
        with _quiet(xp):
            out = xp.log(xp.exp(x - peak).sum(axis=axes, keepdims=True)) + peak
        return out if keepdims else out.squeeze(axis=axes)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0]
        return (self.expand(grad) * (x - self.expand(self.output())).exp(),)


def _quiet(xp):
    """Silence NumPy's divide-by-zero warning for log(0) = -inf (an intended result)."""
    errstate = getattr(xp, "errstate", None)
    return errstate(divide="ignore") if errstate else nullcontext()
