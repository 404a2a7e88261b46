"""Reductions over `axis` (None, an int or a tuple) with `keepdims`, as NumPy defines them."""

from __future__ import annotations

import builtins
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

import numpy as np

from ..autograd import BuiltinFunction
from ..errors import ShapeError
from ..tensor import Tensor
from .elementwise import Where
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


class Reduction(BuiltinFunction):
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


@op(reference=np.sum, spec=REDUCE, summary="sum over axes (in `dtype` if given)", method=True,
    pytorch="`torch.sum`")
class Sum(Reduction):
    """The sum over axes; `dtype` the accumulator's and the result's (NumPy's and PyTorch's:
    int32 summed as int64, float32 as float64), the gradient back in the input's dtype."""

    name = "sum"

    def forward(self, x, axis=None, keepdims=False, dtype=None) -> Any:
        self.dtype = dtype
        return super().forward(x, axis, keepdims)

    def reduce(self, x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
        if self.dtype is None:
            return x.sum(axis=axes, keepdims=keepdims)
        return x.sum(axis=axes, keepdims=keepdims, dtype=self.dtype)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        grad = self.expand(grad)
        dtype = self.inputs[0].dtype
        return (grad if self.dtype is None or grad.dtype == dtype else grad.astype(dtype),)


@op(reference=np.mean, spec=REDUCE, summary="mean over axes", method=True,
    pytorch="`torch.mean`")
class Mean(Reduction):
    name = "mean"
    float_only = True

    def reduce(self, x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
        return x.mean(axis=axes, keepdims=keepdims)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return (self.expand(grad) * (1.0 / builtins.max(self.count(), 1)),)


def _var_reference(x, axis=None, keepdims=False, correction=0) -> np.ndarray:
    return np.var(x, axis=axis, keepdims=keepdims, ddof=correction)


def _std_reference(x, axis=None, keepdims=False, correction=0) -> np.ndarray:
    return np.std(x, axis=axis, keepdims=keepdims, ddof=correction)


# correction 0 (NumPy's default) and a fractional one (the divisor N - correction stays > 0
# for the one-element reductions drawn)
CORRECTED = InputSpec("reduce", options={"correction": (0, 0.5)})
VARIANCE_PYTORCH = ("`torch.{}` with `correction` 0 by default (NumPy's ddof=0), where "
                    "PyTorch's default is 1: pass correction=1 for the unbiased one")


@op(reference=_var_reference, spec=CORRECTED, method=True,
    summary="variance over axes: sum of squared deviations / (N - correction)",
    pytorch=VARIANCE_PYTORCH.format("var"))
class Var(Reduction):
    """Variance: the mean squared deviation with N - correction as the divisor (correction=0:
    the population variance, NumPy's default; 1: the unbiased one, PyTorch's default); two
    passes: mean first, then the squared deviations."""

    name = "var"
    float_only = True

    def forward(self, x, axis=None, keepdims=False, correction=0) -> Any:
        self.correction = correction
        return super().forward(x, axis, keepdims)

    def reduce(self, x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
        return x.var(axis=axes, keepdims=keepdims, ddof=self.correction)

    def divisor(self) -> float:
        return builtins.max(self.count() - self.correction, 0)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0]
        centered = x - x.mean(axis=self.axes, keepdims=True)
        divisor = self.divisor() if self.correction else builtins.max(self.count(), 1)
        return (self.expand(grad) * centered * (2.0 / divisor),)


@op(reference=_std_reference, spec=CORRECTED, method=True,
    summary="standard deviation over axes: sqrt(var(correction))",
    pytorch=VARIANCE_PYTORCH.format("std"))
class Std(Var):
    """sqrt of the variance with divisor N - correction (see var)."""

    name = "std"
    needs_output = True

    def reduce(self, x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
        return x.std(axis=axes, keepdims=keepdims, ddof=self.correction)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0]
        centered = x - x.mean(axis=self.axes, keepdims=True)
        std = self.output()
        constant = std.data == 0  # every deviation 0: a gradient of 0, not 0/0
        if constant.any():
            std = Where.apply(1.0, std, condition=constant)
        return (self.expand(grad / std) * centered * (1.0 / self.divisor()),)


@op(functions=(Std, Mean), reference=lambda x, axis=None, keepdims=False, correction=0: (
    _std_reference(x, axis, keepdims, correction), np.mean(x, axis=axis, keepdims=keepdims)),
    spec=CORRECTED, summary="(std, mean) over axes",
    pytorch=VARIANCE_PYTORCH.format("std_mean"))
def std_mean(x, axis=None, keepdims=False, correction=0) -> tuple[Tensor, Tensor]:
    return (Std.apply(x, axis=axis, keepdims=keepdims, correction=correction),
            Mean.apply(x, axis=axis, keepdims=keepdims))


@op(reference=np.prod, spec=REDUCE, method=True,
    summary="product over axes; the gradient is the product of the others")
class Prod(Reduction):
    """The product over axes. Its gradient, the product of the other elements, is
    output / x where no element is 0 (differentiable again); where one is, it is computed
    on the arrays from prefix and suffix products (first derivatives only)."""

    name = "prod"
    needs_output = True

    def reduce(self, x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
        return x.prod(axis=axes, keepdims=keepdims)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0]
        if not (x.data == 0).any():
            return (self.expand(grad * self.output()) / x,)
        return (self.expand(grad) * self.constant(self._others(x.data)),)

    def _others(self, x: Any) -> Any:
        """The product of every other element of each one's reduction, without dividing."""
        xp, axes = self.xp, self.axes
        last = tuple(range(x.ndim - len(axes), x.ndim))
        moved = xp.moveaxis(x, axes, last)
        rows = moved.reshape(moved.shape[:x.ndim - len(axes)] + (-1,))
        ones = xp.ones_like(rows[..., :1])
        before = xp.cumprod(xp.concatenate([ones, rows[..., :-1]], axis=-1), axis=-1)
        after = xp.flip(xp.cumprod(xp.concatenate([ones, xp.flip(rows, -1)[..., :-1]],
                                                  axis=-1), axis=-1), -1)
        return xp.moveaxis((before * after).reshape(moved.shape), last, axes)


class _Extremum(Reduction):
    """max / min: values only; at ties the gradient is split evenly (docs/conventions.md)."""

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0].data
        winners = x == self.expand_array(self.reduce(x, self.axes, self.keepdims))
        share = winners / winners.sum(axis=self.axes, keepdims=True)
        return (self.expand(grad) * self.constant(share.astype(grad.dtype, copy=False)),)


@op(reference=np.max, spec=InputSpec("reduce", distinct=True), method=True,
    summary="largest value over axes; ties split the gradient",
    pytorch="`torch.amax` (ties split the gradient evenly, as amax's)")
class Max(_Extremum):
    name = "max"

    def reduce(self, x: Any, axes: tuple[int, ...], keepdims: bool) -> Any:
        return x.max(axis=axes, keepdims=keepdims)


@op(reference=np.min, spec=InputSpec("reduce", distinct=True), method=True,
    summary="smallest value over axes; ties split the gradient",
    pytorch="`torch.amin` (ties split the gradient evenly, as amin's)")
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
