"""Cumulative ops along one axis: cumsum, cumprod, cummax, cummin, logcumsumexp; each
gradient a reversed cumulative sum (or, for the running extremes, a scatter to the index
each value came from)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..autograd import BuiltinFunction
from ..tensor import Tensor
from .indexing import GetItem
from .reduce import normalize_axes
from .registry import InputSpec, op
from .shape import Flip

ALONG = InputSpec("softmax-like")


def _axis(name, axis, ndim) -> int:
    if not isinstance(axis, int):
        raise TypeError(f"{name}: axis must be an int, got {axis!r}")
    return (normalize_axes(name, axis, ndim) or (0,))[0]


def _reverse_cumsum(grad: Tensor, axis: int) -> Tensor:
    """sum over j >= i of grad_j, along axis (recorded: differentiable again)."""
    return Flip.apply(Cumsum.apply(Flip.apply(grad, axis=axis), axis=axis), axis=axis)


@op(reference=lambda x, axis=-1: np.cumsum(x, axis=axis), spec=ALONG, method=True,
    summary="running sums along an axis", pytorch="`torch.cumsum`")
class Cumsum(BuiltinFunction):
    name = "cumsum"

    def forward(self, x, axis=-1) -> Any:
        self.axis = _axis(self.name, axis, x.ndim)
        return self.xp.cumsum(x, axis=self.axis) if x.ndim else x.copy()

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return (_reverse_cumsum(grad, self.axis),)


@op(reference=lambda x, axis=-1: np.cumprod(x, axis=axis), method=True,
    spec=InputSpec("softmax-like", kinks=(0.0,)),
    summary="running products along an axis",
    pytorch="`torch.cumprod` (the gradient divides by x: NaN where x = 0, "
            "where PyTorch's is finite)")
class Cumprod(BuiltinFunction):
    """Running products; the gradient sum_{j >= i} grad_j · out_j / x_i (x nonzero)."""

    name = "cumprod"
    needs_output = True

    def forward(self, x, axis=-1) -> Any:
        self.axis = _axis(self.name, axis, x.ndim)
        return self.xp.cumprod(x, axis=self.axis) if x.ndim else x.copy()

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return (_reverse_cumsum(grad * self.output(), self.axis) / self.inputs[0],)


def _cumulative_extreme(x, axis, larger, xp) -> tuple[Any, Any]:
    """(running extremes, the index each came from: the latest at ties, as PyTorch's)."""
    ufunc = xp.maximum if larger else xp.minimum
    values = ufunc.accumulate(x, axis=axis)
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    positions = xp.arange(x.shape[axis]).reshape(shape)
    indices = xp.maximum.accumulate(xp.where(x == values, positions, 0), axis=axis)
    return values, indices.astype("int64", copy=False)


def _cumulative_extreme_reference(larger):
    def reference(x, axis=-1):
        return _cumulative_extreme(x, axis % x.ndim, larger, np)

    return reference


def _running_extreme(name, x, axis, larger) -> tuple[Tensor, Tensor]:
    xp = x.backend.xp
    axis = _axis(name, axis, x.ndim)
    _, indices = _cumulative_extreme(x.data, axis, larger, xp)
    grid = list(xp.meshgrid(*[xp.arange(n) for n in x.shape], indexing="ij", sparse=True))
    grid[axis] = indices
    return GetItem.apply(x, index=tuple(grid)), Tensor._make(indices, x.backend)


@op(functions=(GetItem,), reference=_cumulative_extreme_reference(True), method=True,
    spec=InputSpec("softmax-like", distinct=True),
    summary="running maxima along an axis (differentiable) and their int64 indices")
def cummax(x, axis=-1) -> tuple[Tensor, Tensor]:
    return _running_extreme("cummax", x, axis, larger=True)


@op(functions=(GetItem,), reference=_cumulative_extreme_reference(False), method=True,
    spec=InputSpec("softmax-like", distinct=True),
    summary="running minima along an axis (differentiable) and their int64 indices")
def cummin(x, axis=-1) -> tuple[Tensor, Tensor]:
    return _running_extreme("cummin", x, axis, larger=False)


@op(reference=lambda x, axis=-1: np.logaddexp.accumulate(x, axis=axis), spec=ALONG,
    method=True, summary="log of running sums of exp along an axis, stable")
class LogCumSumExp(BuiltinFunction):
    """log(cumsum(exp(x))): NumPy's logaddexp accumulated (no overflow, no underflow to
    -inf). The gradient, sum over j >= i of grad_j · exp(x_i - out_j), is taken over every pair
    (i, j) of the axis, each exponent <= 0, so it is exact on any range (memory: the axis's
    length squared per row)."""

    name = "logcumsumexp"
    float_only = True
    needs_output = True

    def forward(self, x, axis=-1) -> Any:
        self.axis = _axis(self.name, axis, x.ndim)
        if not x.ndim:
            return x.copy()
        xp = self.xp
        if hasattr(xp.logaddexp, "accumulate"):
            return xp.logaddexp.accumulate(x, axis=self.axis)
        peak = x.max(axis=self.axis, keepdims=True)  # CuPy: no accumulate
        return xp.log(xp.cumsum(xp.exp(x - peak), axis=self.axis)) + peak

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x, out = self.inputs[0], self.output()
        if not x.ndim:
            return (grad,)
        last = x.ndim - 1
        x, out, grad = (t.swapaxes(self.axis, last) for t in (x, out, grad))
        n = x.shape[-1]
        exponents = x.expand_dims(-1) - out.expand_dims(-2)  # (..., i, j): x_i - out_j
        before = self.xp.tri(n, n, -1, dtype=bool)  # j < i: no term
        weights = exponents.masked_fill(before, -math.inf).exp()
        return ((weights * grad.expand_dims(-2)).sum(axis=-1).swapaxes(self.axis, last),)
