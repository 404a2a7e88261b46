"""Tensor's methods and operators, one per declared op: `TensorMethods`, which `Tensor`
inherits.

Generated from the op declarations by scripts/make_ops_doc.py; do not edit.
Each calls the op's function or Function class in minigrad/ops/functions.py (`_ops`, bound
by minigrad/__init__.py); `self` is a Tensor, the one class that inherits these."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .ops import functions as _ops
    from .tensor import Operand, Tensor
else:
    _ops = None  # minigrad.ops.functions, bound by minigrad/__init__.py


class TensorMethods:
    """The methods and operators of `Tensor` that run an op."""

    __slots__ = ()

    def __add__(self: Tensor, other: Operand) -> Tensor:
        """a + b (`add`)."""
        return _ops.Add.apply(self, other)

    def __radd__(self: Tensor, other: Operand) -> Tensor:
        """a + b (`add`)."""
        return _ops.Add.apply(other, self)

    def __sub__(self: Tensor, other: Operand) -> Tensor:
        """a - b (`subtract`)."""
        return _ops.Subtract.apply(self, other)

    def __rsub__(self: Tensor, other: Operand) -> Tensor:
        """a - b (`subtract`)."""
        return _ops.Subtract.apply(other, self)

    def __mul__(self: Tensor, other: Operand) -> Tensor:
        """a * b (`multiply`)."""
        return _ops.Multiply.apply(self, other)

    def __rmul__(self: Tensor, other: Operand) -> Tensor:
        """a * b (`multiply`)."""
        return _ops.Multiply.apply(other, self)

    def __truediv__(self: Tensor, other: Operand) -> Tensor:
        """a / b (`divide`)."""
        return _ops.Divide.apply(self, other)

    def __rtruediv__(self: Tensor, other: Operand) -> Tensor:
        """a / b (`divide`)."""
        return _ops.Divide.apply(other, self)

    def __pow__(self: Tensor, other: Operand) -> Tensor:
        """a ** b (`power`)."""
        return _ops.Power.apply(self, other)

    def __rpow__(self: Tensor, other: Operand) -> Tensor:
        """a ** b (`power`)."""
        return _ops.Power.apply(other, self)

    def maximum(self: Tensor, b) -> Tensor:
        """elementwise maximum; ties split the gradient"""
        return _ops.Maximum.apply(self, b)

    def minimum(self: Tensor, b) -> Tensor:
        """elementwise minimum; ties split the gradient"""
        return _ops.Minimum.apply(self, b)

    def __neg__(self: Tensor) -> Tensor:
        """-x (`negative`)."""
        return _ops.Negative.apply(self)

    def exp(self: Tensor) -> Tensor:
        """e ** x"""
        return _ops.Exp.apply(self)

    def log(self: Tensor) -> Tensor:
        """natural logarithm"""
        return _ops.Log.apply(self)

    def sqrt(self: Tensor) -> Tensor:
        """square root"""
        return _ops.Sqrt.apply(self)

    def tanh(self: Tensor) -> Tensor:
        """hyperbolic tangent"""
        return _ops.Tanh.apply(self)

    def sigmoid(self: Tensor) -> Tensor:
        """1 / (1 + e ** -x), without overflow"""
        return _ops.Sigmoid.apply(self)

    def relu(self: Tensor) -> Tensor:
        """max(x, 0)"""
        return _ops.Relu.apply(self)

    def abs(self: Tensor) -> Tensor:
        """|x|"""
        return _ops.Abs.apply(self)

    def erf(self: Tensor) -> Tensor:
        """The error function (needed by the exact GELU), accurate to 1.5e-7, with the exact
        derivative 2/sqrt(pi)·exp(-x²).
        """
        return _ops.Erf.apply(self)

    def clip(self: Tensor, min=None, max=None) -> Tensor:
        """Values limited to [low, high]; the gradient passes where the value was inside."""
        return _ops.Clip.apply(self, min=min, max=max)

    def lerp(self: Tensor, end, weight) -> Tensor:
        """PyTorch's lerp (`input`, `end`, `weight`): any of them a number or an array beside a
        tensor.
        """
        return _ops.lerp(self, end, weight)

    def masked_fill(self: Tensor, mask, value) -> Tensor:
        """value where the mask is True (True = masked out)"""
        return _ops.masked_fill(self, mask, value)

    def astype(self: Tensor, dtype) -> Tensor:
        """a change of dtype"""
        return _ops.astype(self, dtype)

    def sum(
        self: Tensor,
        axis=None,
        keepdims=False,
        dtype=None,
        *,
        dim=None,
        keepdim=None,
    ) -> Tensor:
        """The sum over axes; `dtype` the accumulator's and the result's (NumPy's and PyTorch's:
        int32 summed as int64, float32 as float64), the gradient back in the input's dtype.
        """
        if dim is not None:
            axis = _ops.aliased("sum", "axis", axis, None, dim)
        if keepdim is not None:
            keepdims = _ops.aliased("sum", "keepdims", keepdims, False, keepdim)
        return _ops.Sum.apply(self, axis=axis, keepdims=keepdims, dtype=dtype)

    def mean(self: Tensor, axis=None, keepdims=False, *, dim=None, keepdim=None) -> Tensor:
        """mean over axes"""
        if dim is not None:
            axis = _ops.aliased("mean", "axis", axis, None, dim)
        if keepdim is not None:
            keepdims = _ops.aliased("mean", "keepdims", keepdims, False, keepdim)
        return _ops.Mean.apply(self, axis=axis, keepdims=keepdims)

    def var(
        self: Tensor,
        axis=None,
        keepdims=False,
        correction=0,
        *,
        dim=None,
        keepdim=None,
    ) -> Tensor:
        """Variance: the mean squared deviation with N - correction as the divisor (correction=0:
        the population variance, NumPy's default; 1: the unbiased one, PyTorch's default); two
        passes: mean first, then the squared deviations.
        """
        if dim is not None:
            axis = _ops.aliased("var", "axis", axis, None, dim)
        if keepdim is not None:
            keepdims = _ops.aliased("var", "keepdims", keepdims, False, keepdim)
        return _ops.Var.apply(self, axis=axis, keepdims=keepdims, correction=correction)

    def std(
        self: Tensor,
        axis=None,
        keepdims=False,
        correction=0,
        *,
        dim=None,
        keepdim=None,
    ) -> Tensor:
        """sqrt of the variance with divisor N - correction (see var)."""
        if dim is not None:
            axis = _ops.aliased("std", "axis", axis, None, dim)
        if keepdim is not None:
            keepdims = _ops.aliased("std", "keepdims", keepdims, False, keepdim)
        return _ops.Std.apply(self, axis=axis, keepdims=keepdims, correction=correction)

    def prod(self: Tensor, axis=None, keepdims=False, *, dim=None, keepdim=None) -> Tensor:
        """The product over axes. Its gradient, the product of the other elements, is
        output / x where no element is 0 (differentiable again); where one is, it is computed
        on the arrays from prefix and suffix products (first derivatives only).
        """
        if dim is not None:
            axis = _ops.aliased("prod", "axis", axis, None, dim)
        if keepdim is not None:
            keepdims = _ops.aliased("prod", "keepdims", keepdims, False, keepdim)
        return _ops.Prod.apply(self, axis=axis, keepdims=keepdims)

    def max(self: Tensor, axis=None, keepdims=False, *, dim=None, keepdim=None) -> Tensor:
        """largest value over axes; ties split the gradient"""
        if dim is not None:
            axis = _ops.aliased("max", "axis", axis, None, dim)
        if keepdim is not None:
            keepdims = _ops.aliased("max", "keepdims", keepdims, False, keepdim)
        return _ops.Max.apply(self, axis=axis, keepdims=keepdims)

    def min(self: Tensor, axis=None, keepdims=False, *, dim=None, keepdim=None) -> Tensor:
        """smallest value over axes; ties split the gradient"""
        if dim is not None:
            axis = _ops.aliased("min", "axis", axis, None, dim)
        if keepdim is not None:
            keepdims = _ops.aliased("min", "keepdims", keepdims, False, keepdim)
        return _ops.Min.apply(self, axis=axis, keepdims=keepdims)

    def logsumexp(self: Tensor, axis=None, keepdims=False, *, dim=None, keepdim=None) -> Tensor:
        """log(sum(exp(x))), stable: the maximum is taken out first; all -inf gives -inf."""
        if dim is not None:
            axis = _ops.aliased("logsumexp", "axis", axis, None, dim)
        if keepdim is not None:
            keepdims = _ops.aliased("logsumexp", "keepdims", keepdims, False, keepdim)
        return _ops.LogSumExp.apply(self, axis=axis, keepdims=keepdims)

    def __eq__(self: Tensor, other: Operand) -> Tensor:  # type: ignore[override]
        """a == b (`equal`)."""
        return _ops.equal(self, other)

    def __ne__(self: Tensor, other: Operand) -> Tensor:  # type: ignore[override]
        """a != b (`not_equal`)."""
        return _ops.not_equal(self, other)

    def __lt__(self: Tensor, other: Operand) -> Tensor:
        """a < b (`less`)."""
        return _ops.less(self, other)

    def __le__(self: Tensor, other: Operand) -> Tensor:
        """a <= b (`less_equal`)."""
        return _ops.less_equal(self, other)

    def __gt__(self: Tensor, other: Operand) -> Tensor:
        """a > b (`greater`)."""
        return _ops.greater(self, other)

    def __ge__(self: Tensor, other: Operand) -> Tensor:
        """a >= b (`greater_equal`)."""
        return _ops.greater_equal(self, other)

    def __and__(self: Tensor, other: Operand) -> Tensor:
        """a & b (`logical_and`)."""
        return _ops.logical_and(self, other)

    def __rand__(self: Tensor, other: Operand) -> Tensor:
        """a & b (`logical_and`)."""
        return _ops.logical_and(other, self)

    def __or__(self: Tensor, other: Operand) -> Tensor:
        """a | b (`logical_or`)."""
        return _ops.logical_or(self, other)

    def __ror__(self: Tensor, other: Operand) -> Tensor:
        """a | b (`logical_or`)."""
        return _ops.logical_or(other, self)

    def __xor__(self: Tensor, other: Operand) -> Tensor:
        """a ^ b: bitwise exclusive or (`bitwise_xor`)."""
        return _ops.bitwise_xor(self, other)

    def __rxor__(self: Tensor, other: Operand) -> Tensor:
        """a ^ b: bitwise exclusive or (`bitwise_xor`)."""
        return _ops.bitwise_xor(other, self)

    def __lshift__(self: Tensor, other: Operand) -> Tensor:
        """a << b: bits shifted left (`bitwise_left_shift`)."""
        return _ops.bitwise_left_shift(self, other)

    def __rlshift__(self: Tensor, other: Operand) -> Tensor:
        """a << b: bits shifted left (`bitwise_left_shift`)."""
        return _ops.bitwise_left_shift(other, self)

    def __rshift__(self: Tensor, other: Operand) -> Tensor:
        """a >> b: bits shifted right (arithmetic) (`bitwise_right_shift`)."""
        return _ops.bitwise_right_shift(self, other)

    def __rrshift__(self: Tensor, other: Operand) -> Tensor:
        """a >> b: bits shifted right (arithmetic) (`bitwise_right_shift`)."""
        return _ops.bitwise_right_shift(other, self)

    def __invert__(self: Tensor) -> Tensor:
        """~x: bitwise not of integers, logical not of booleans (`bitwise_not`)."""
        return _ops.bitwise_not(self)

    def isfinite(self: Tensor) -> Tensor:
        """True where x is neither NaN nor ±inf"""
        return _ops.isfinite(self)

    def isinf(self: Tensor) -> Tensor:
        """True where x is ±inf"""
        return _ops.isinf(self)

    def isnan(self: Tensor) -> Tensor:
        """True where x is NaN"""
        return _ops.isnan(self)

    def argmax(self: Tensor, axis=None, keepdims=False, *, dim=None, keepdim=None) -> Tensor:
        """Index of the largest value (the first one at ties), int64."""
        if dim is not None:
            axis = _ops.aliased("argmax", "axis", axis, None, dim)
        if keepdim is not None:
            keepdims = _ops.aliased("argmax", "keepdims", keepdims, False, keepdim)
        return _ops._argmax(self, axis=axis, keepdims=keepdims)

    def argmin(self: Tensor, axis=None, keepdims=False, *, dim=None, keepdim=None) -> Tensor:
        """Index of the smallest value (the first one at ties), int64."""
        if dim is not None:
            axis = _ops.aliased("argmin", "axis", axis, None, dim)
        if keepdim is not None:
            keepdims = _ops.aliased("argmin", "keepdims", keepdims, False, keepdim)
        return _ops._argmin(self, axis=axis, keepdims=keepdims)

    def any(self: Tensor, axis=None, keepdims=False, *, dim=None, keepdim=None) -> Tensor:
        """whether any element is True"""
        if dim is not None:
            axis = _ops.aliased("any", "axis", axis, None, dim)
        if keepdim is not None:
            keepdims = _ops.aliased("any", "keepdims", keepdims, False, keepdim)
        return _ops._any(self, axis=axis, keepdims=keepdims)

    def all(self: Tensor, axis=None, keepdims=False, *, dim=None, keepdim=None) -> Tensor:
        """whether every element is True"""
        if dim is not None:
            axis = _ops.aliased("all", "axis", axis, None, dim)
        if keepdim is not None:
            keepdims = _ops.aliased("all", "keepdims", keepdims, False, keepdim)
        return _ops._all(self, axis=axis, keepdims=keepdims)

    def __getitem__(self: Tensor, index) -> Tensor:
        """x[index] (`getitem`)."""
        return _ops.getitem(self, index)

    def flip(self: Tensor, axis=None, *, dim=None) -> Tensor:
        """the order of elements reversed along axes (all: None)"""
        if dim is not None:
            axis = _ops.aliased("flip", "axis", axis, None, dim)
        return _ops.Flip.apply(self, axis=axis)

    def to_device(self: Tensor, device=None) -> Tensor:
        """A copy to another device: the one op whose output lives elsewhere than its input."""
        return _ops.ToDevice.apply(self, device=device)

    def reshape(self: Tensor, *shape) -> Tensor:
        """`x.reshape(2, 3)` or `x.reshape((2, 3))`."""
        return _ops.reshape_method(self, *shape)

    def transpose(self: Tensor, *axes) -> Tensor:
        """`x.transpose()`, `x.transpose(1, 0)` or `x.transpose((1, 0))`."""
        return _ops.transpose_method(self, *axes)

    def swapaxes(self: Tensor, axis1, axis2) -> Tensor:
        """two axes exchanged"""
        return _ops.swapaxes(self, axis1, axis2)

    def expand_dims(self: Tensor, axis=None, *, dim=None) -> Tensor:
        """a new axis of size 1"""
        if dim is not None:
            axis = _ops.aliased("expand_dims", "axis", axis, None, dim)
        if axis is None:
            _ops.missing("expand_dims", axis=axis)
        return _ops._expand_dims(self, axis)

    def squeeze(self: Tensor, axis=None, *, dim=None) -> Tensor:
        """axes of size 1 removed"""
        if dim is not None:
            axis = _ops.aliased("squeeze", "axis", axis, None, dim)
        return _ops._squeeze(self, axis=axis)

    def broadcast_to(self: Tensor, shape) -> Tensor:
        """x repeated along new or size-1 axes"""
        return _ops.broadcast_to(self, shape)

    def flatten(self: Tensor, start_dim=0, end_dim=-1) -> Tensor:
        """PyTorch's flatten: the axes from start_dim to end_dim (both included) as one; a 0-d
        tensor becomes 1-d.
        """
        return _ops.flatten(self, start_dim=start_dim, end_dim=end_dim)

    def unflatten(self: Tensor, axis=None, sizes=None, *, dim=None) -> Tensor:
        """PyTorch's unflatten (`dim`): axis `axis` reshaped to `sizes` (one may be -1)."""
        if dim is not None:
            axis = _ops.aliased("unflatten", "axis", axis, None, dim)
        if axis is None or sizes is None:
            _ops.missing("unflatten", axis=axis, sizes=sizes)
        return _ops._unflatten(self, axis, sizes)

    def repeat(self: Tensor, *sizes) -> Tensor:
        """`x.repeat(2, 3)` or `x.repeat((2, 3))`."""
        return _ops.repeat_method(self, *sizes)

    def repeat_interleave(self: Tensor, repeats, axis=None, *, dim=None) -> Tensor:
        """PyTorch's repeat_interleave (`dim`): `repeats` an int or one count per element."""
        if dim is not None:
            axis = _ops.aliased("repeat_interleave", "axis", axis, None, dim)
        return _ops._repeat_interleave(self, repeats, axis=axis)

    def roll(self: Tensor, shifts, axis=None, *, dim=None) -> Tensor:
        """PyTorch's roll (`dims`): `shifts` and `axis` ints or tuples of one length; axis None
        rolls the flattened tensor.
        """
        if dim is not None:
            axis = _ops.aliased("roll", "axis", axis, None, dim)
        return _ops._roll(self, shifts, axis=axis)

    def unfold(self: Tensor, axis=None, size=None, step=None, *, dim=None) -> Tensor:
        """windows of `size` every `step` along an axis, the window last"""
        if dim is not None:
            axis = _ops.aliased("unfold", "axis", axis, None, dim)
        if axis is None or size is None or step is None:
            _ops.missing("unfold", axis=axis, size=size, step=step)
        return _ops._unfold(self, axis, size, step)

    def cumsum(self: Tensor, axis=-1, *, dim=None) -> Tensor:
        """running sums along an axis"""
        if dim is not None:
            axis = _ops.aliased("cumsum", "axis", axis, -1, dim)
        return _ops.Cumsum.apply(self, axis=axis)

    def cumprod(self: Tensor, axis=-1, *, dim=None) -> Tensor:
        """Running products; the gradient sum_{j >= i} grad_j · out_j / x_i (x nonzero)."""
        if dim is not None:
            axis = _ops.aliased("cumprod", "axis", axis, -1, dim)
        return _ops.Cumprod.apply(self, axis=axis)

    def cummax(self: Tensor, axis=-1, *, dim=None) -> tuple[Tensor, Tensor]:
        """running maxima along an axis (differentiable) and their int64 indices"""
        if dim is not None:
            axis = _ops.aliased("cummax", "axis", axis, -1, dim)
        return _ops._cummax(self, axis=axis)

    def cummin(self: Tensor, axis=-1, *, dim=None) -> tuple[Tensor, Tensor]:
        """running minima along an axis (differentiable) and their int64 indices"""
        if dim is not None:
            axis = _ops.aliased("cummin", "axis", axis, -1, dim)
        return _ops._cummin(self, axis=axis)

    def logcumsumexp(self: Tensor, axis=-1, *, dim=None) -> Tensor:
        """log(cumsum(exp(x))): NumPy's logaddexp accumulated (no overflow, no underflow to
        -inf). The gradient, sum over j >= i of grad_j · exp(x_i - out_j), is taken over every pair
        (i, j) of the axis, each exponent <= 0, so it is exact on any range (memory: the axis's
        length squared per row).
        """
        if dim is not None:
            axis = _ops.aliased("logcumsumexp", "axis", axis, -1, dim)
        return _ops.LogCumSumExp.apply(self, axis=axis)

    def log2(self: Tensor) -> Tensor:
        """base-2 logarithm"""
        return _ops.Log2.apply(self)

    def log10(self: Tensor) -> Tensor:
        """base-10 logarithm"""
        return _ops.Log10.apply(self)

    def log1p(self: Tensor) -> Tensor:
        """log(1 + x), accurate near 0"""
        return _ops.Log1p.apply(self)

    def expm1(self: Tensor) -> Tensor:
        """e ** x - 1, accurate near 0"""
        return _ops.Expm1.apply(self)

    def exp2(self: Tensor) -> Tensor:
        """2 ** x"""
        return _ops.Exp2.apply(self)

    def rsqrt(self: Tensor) -> Tensor:
        """1 / sqrt(x)"""
        return _ops.Rsqrt.apply(self)

    def gather(self: Tensor, axis=None, index=None, *, dim=None) -> Tensor:
        """x's values at `index` along an axis: `out[i][j] = x[i][index[i][j]]` (axis 1)"""
        if dim is not None:
            axis = _ops.aliased("gather", "axis", axis, None, dim)
        if axis is None or index is None:
            _ops.missing("gather", axis=axis, index=index)
        return _ops._gather(self, axis, index)

    def scatter(self: Tensor, axis=None, index=None, src=None, *, dim=None) -> Tensor:
        """x with src written at index along an axis"""
        if dim is not None:
            axis = _ops.aliased("scatter", "axis", axis, None, dim)
        if axis is None or index is None or src is None:
            _ops.missing("scatter", axis=axis, index=index, src=src)
        return _ops._scatter(self, axis, index, src)

    def scatter_add(self: Tensor, axis=None, index=None, src=None, *, dim=None) -> Tensor:
        """x with src summed in at index along an axis (repeats accumulate)"""
        if dim is not None:
            axis = _ops.aliased("scatter_add", "axis", axis, None, dim)
        if axis is None or index is None or src is None:
            _ops.missing("scatter_add", axis=axis, index=index, src=src)
        return _ops._scatter_add(self, axis, index, src)

    def scatter_reduce(
        self: Tensor,
        axis=None,
        index=None,
        src=None,
        reduce=None,
        include_self=True,
        *,
        dim=None,
    ) -> Tensor:
        """src reduced into x at index along an axis: 'sum' or 'mean'"""
        if dim is not None:
            axis = _ops.aliased("scatter_reduce", "axis", axis, None, dim)
        if axis is None or index is None or src is None or reduce is None:
            _ops.missing("scatter_reduce", axis=axis, index=index, src=src, reduce=reduce)
        return _ops._scatter_reduce(self, axis, index, src, reduce, include_self=include_self)

    def masked_select(self: Tensor, mask) -> Tensor:
        """x's values where `mask` (broadcasting with x) is True, flattened."""
        return _ops.masked_select(self, mask)

    def nonzero(self: Tensor) -> Tensor:
        """the int64 indices of nonzero elements, (count, ndim)"""
        return _ops.nonzero(self)

    def diagonal(self: Tensor, offset=0, axis1=0, axis2=1) -> Tensor:
        """the diagonal of two axes (offset above, or below if negative), as the last axis"""
        return _ops.diagonal(self, offset=offset, axis1=axis1, axis2=axis2)

    def __matmul__(self: Tensor, other: Operand) -> Tensor:
        """a @ b as NumPy: 1-D operands, broadcast batches (`matmul`)."""
        return _ops.matmul(self, other)

    def __rmatmul__(self: Tensor, other: Operand) -> Tensor:
        """a @ b as NumPy: 1-D operands, broadcast batches (`matmul`)."""
        return _ops.matmul(other, self)

    def sign(self: Tensor) -> Tensor:
        """-1, 0 or 1 by the sign of x; zero gradient"""
        return _ops.Sign.apply(self)

    def floor(self: Tensor) -> Tensor:
        """largest integer <= x; zero gradient"""
        return _ops.Floor.apply(self)

    def ceil(self: Tensor) -> Tensor:
        """smallest integer >= x; zero gradient"""
        return _ops.Ceil.apply(self)

    def trunc(self: Tensor) -> Tensor:
        """x rounded toward 0; zero gradient"""
        return _ops.Trunc.apply(self)

    def round(self: Tensor, decimals=0) -> Tensor:
        """x rounded to `decimals` places, halves to even; zero gradient"""
        return _ops.Round.apply(self, decimals=decimals)

    def __mod__(self: Tensor, other: Operand) -> Tensor:
        """a - floor(a / b) · b: the remainder with b's sign (Python's %) (`remainder`)."""
        return _ops.Remainder.apply(self, other)

    def __rmod__(self: Tensor, other: Operand) -> Tensor:
        """a - floor(a / b) · b: the remainder with b's sign (Python's %) (`remainder`)."""
        return _ops.Remainder.apply(other, self)

    def __floordiv__(self: Tensor, other: Operand) -> Tensor:
        """floor(a / b) (Python's //) (`floor_divide`)."""
        return _ops.FloorDivide.apply(self, other)

    def __rfloordiv__(self: Tensor, other: Operand) -> Tensor:
        """floor(a / b) (Python's //) (`floor_divide`)."""
        return _ops.FloorDivide.apply(other, self)

    def sort(self: Tensor, axis=-1, descending=False, *, dim=None) -> tuple[Tensor, Tensor]:
        """values sorted along an axis (differentiable) and their int64 indices"""
        if dim is not None:
            axis = _ops.aliased("sort", "axis", axis, -1, dim)
        return _ops._sort(self, axis=axis, descending=descending)

    def argsort(self: Tensor, axis=-1, descending=False, *, dim=None) -> Tensor:
        """the int64 indices that sort x along an axis (stable)"""
        if dim is not None:
            axis = _ops.aliased("argsort", "axis", axis, -1, dim)
        return _ops._argsort(self, axis=axis, descending=descending)

    def sin(self: Tensor) -> Tensor:
        """sine"""
        return _ops.Sin.apply(self)

    def cos(self: Tensor) -> Tensor:
        """cosine"""
        return _ops.Cos.apply(self)

    def tan(self: Tensor) -> Tensor:
        """tangent"""
        return _ops.Tan.apply(self)

    def asin(self: Tensor) -> Tensor:
        """inverse sine"""
        return _ops.Asin.apply(self)

    def acos(self: Tensor) -> Tensor:
        """inverse cosine"""
        return _ops.Acos.apply(self)

    def atan(self: Tensor) -> Tensor:
        """inverse tangent"""
        return _ops.Atan.apply(self)

    def sinh(self: Tensor) -> Tensor:
        """hyperbolic sine"""
        return _ops.Sinh.apply(self)

    def cosh(self: Tensor) -> Tensor:
        """hyperbolic cosine"""
        return _ops.Cosh.apply(self)

    def asinh(self: Tensor) -> Tensor:
        """inverse hyperbolic sine"""
        return _ops.Asinh.apply(self)

    def acosh(self: Tensor) -> Tensor:
        """inverse hyperbolic cosine"""
        return _ops.Acosh.apply(self)

    def atanh(self: Tensor) -> Tensor:
        """inverse hyperbolic tangent"""
        return _ops.Atanh.apply(self)
