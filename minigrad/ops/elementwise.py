"""Elementwise ops: arithmetic with NumPy broadcasting, unary math, clip, where, masked_fill."""

import math
import operator

import numpy as np

from ..autograd import Function, is_grad_enabled
from ..errors import DeviceError, DTypeError, ShapeError
from ..tensor import Tensor
from .broadcasting import broadcast_shape


class BinaryFunction(Function):
    """Broadcasting a op b: a shape mismatch is reported with both shapes."""

    def explain_failure(self, a, b):
        broadcast_shape(self.name, a.shape, b.shape)


class Add(BinaryFunction):
    name = "add"
    forward = staticmethod(operator.add)

    def backward(self, grad):
        a, b = self.inputs
        return (grad if a.requires_grad else None,
                grad if b.requires_grad else None)


class Subtract(BinaryFunction):
    name = "subtract"
    forward = staticmethod(operator.sub)

    def backward(self, grad):
        a, b = self.inputs
        return (grad if a.requires_grad else None,
                -grad if b.requires_grad else None)


class Multiply(BinaryFunction):
    name = "multiply"
    forward = staticmethod(operator.mul)

    def backward(self, grad):
        a, b = self.inputs
        return (grad * b if a.requires_grad else None,
                grad * a if b.requires_grad else None)


class Divide(BinaryFunction):
    name = "divide"
    forward = staticmethod(operator.truediv)

    def backward(self, grad):
        a, b = self.inputs
        grad_a = grad / b
        return (grad_a if a.requires_grad else None,
                -grad_a * a / b if b.requires_grad else None)


class Power(BinaryFunction):
    """a ** b; the gradient for b is asked only where b requires grad (it needs log a)."""

    name = "power"
    float_only = True
    needs_output = True

    def forward(self, a, b):
        return a ** b

    def backward(self, grad):
        a, b = self.inputs
        grad_a = grad * b * a ** (b - 1) if a.requires_grad else None
        grad_b = grad * self.output() * log(a) if b.requires_grad else None
        return grad_a, grad_b


class Maximum(BinaryFunction):
    """Elementwise maximum; at ties the gradient is split evenly (docs/conventions.md)."""

    name = "maximum"

    def forward(self, a, b):
        return self.xp.maximum(a, b)

    def backward(self, grad):
        return _split_at_ties(self, grad, self.inputs[0].data > self.inputs[1].data)


class Minimum(BinaryFunction):
    name = "minimum"

    def forward(self, a, b):
        return self.xp.minimum(a, b)

    def backward(self, grad):
        return _split_at_ties(self, grad, self.inputs[0].data < self.inputs[1].data)


def _split_at_ties(fn, grad, a_wins):
    a, b = fn.inputs
    share_a = a_wins + 0.5 * (a.data == b.data)
    share_a = fn.constant(share_a.astype(grad.dtype, copy=False))
    return grad * share_a, grad * (1 - share_a)


class Negative(Function):
    name = "negative"

    def forward(self, x):
        return -x

    def backward(self, grad):
        return (-grad,)


class Exp(Function):
    name = "exp"
    float_only = True
    needs_output = True

    def forward(self, x):
        return self.xp.exp(x)

    def backward(self, grad):
        return (grad * self.output(),)


class Log(Function):
    name = "log"
    float_only = True

    def forward(self, x):
        return self.xp.log(x)

    def backward(self, grad):
        return (grad / self.inputs[0],)


class Sqrt(Function):
    name = "sqrt"
    float_only = True
    needs_output = True

    def forward(self, x):
        return self.xp.sqrt(x)

    def backward(self, grad):
        return (grad / (2 * self.output()),)


class Tanh(Function):
    name = "tanh"
    float_only = True
    needs_output = True

    def forward(self, x):
        return self.xp.tanh(x)

    def backward(self, grad):
        return (TanhBackward.apply(grad, self.output()),)


class TanhBackward(BinaryFunction):
    """grad · (1 - y²), tanh's backward from its output y, as one op (itself differentiable,
    so tanh has gradients of gradients)."""

    name = "tanh_backward"
    float_only = True

    def forward(self, grad, y):
        return grad - grad * y * y  # = grad · (1 - y²); NumPy is slower with a Python 1

    def backward(self, grad_of_grad):
        grad, y = self.inputs
        return grad_of_grad * (1 - y * y), grad_of_grad * grad * y * -2


class Sigmoid(Function):
    name = "sigmoid"
    float_only = True
    needs_output = True

    def forward(self, x):
        # 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) for x < 0: neither overflows
        e = self.xp.exp(-self.xp.abs(x))
        return self.xp.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)

    def backward(self, grad):
        return (SigmoidBackward.apply(grad, self.output()),)


class SigmoidBackward(BinaryFunction):
    """grad · y(1 - y), sigmoid's backward from its output y, as one op (differentiable)."""

    name = "sigmoid_backward"
    float_only = True

    def forward(self, grad, y):
        grad_y = grad * y
        return grad_y - grad_y * y  # = grad · y(1 - y); NumPy is slower with a Python 1

    def backward(self, grad_of_grad):
        grad, y = self.inputs
        return grad_of_grad * y * (1 - y), grad_of_grad * grad * (1 - 2 * y)


class Relu(Function):
    name = "relu"

    def forward(self, x):  # against a row of zeros: NumPy's SIMD loop, 2x faster than a scalar 0
        if self.backend.activate is not None:  # a GPU: one kernel, no row to make
            return self.xp.maximum(x, x.dtype.type(0))
        return self.xp.maximum(x, self.xp.zeros(x.shape[-1:], x.dtype))

    def backward(self, grad):
        kernels = self.backend.kernels
        if kernels is not None and not is_grad_enabled():  # not recorded: one fused kernel
            return (self.constant(kernels.relu_backward(grad.data, self.inputs[0].data)),)
        return (grad * self.constant(self.inputs[0].data > 0),)  # float × bool stays float


class Abs(Function):
    name = "abs"

    def forward(self, x):
        return self.xp.abs(x)

    def backward(self, grad):
        x = self.inputs[0].data
        return (grad * self.constant(self.xp.sign(x)),)


# Abramowitz & Stegun 7.1.26 coefficients; |error| < 1.5e-7, far below float32 resolution.
_ERF_P = 0.3275911
_ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def erf_array(xp, x):
    """erf on an array by a rational approximation (NumPy has no erf)."""
    t = 1 / (1 + _ERF_P * xp.abs(x))
    poly = t * (_ERF_A[0] + t * (_ERF_A[1] + t * (_ERF_A[2] + t * (_ERF_A[3] + t * _ERF_A[4]))))
    return (xp.sign(x) * (1 - poly * xp.exp(-x * x))).astype(x.dtype, copy=False)


class Erf(Function):
    """The error function (needed by the exact GELU), accurate to 1.5e-7, with the exact
    derivative 2/sqrt(pi)·exp(-x²)."""

    name = "erf"
    float_only = True

    def forward(self, x):
        return erf_array(self.xp, x)

    def backward(self, grad):
        x = self.inputs[0]
        return (grad * (2 / math.sqrt(math.pi)) * exp(-x * x),)


class Clip(Function):
    """Values limited to [low, high]; the gradient passes where the value was inside."""

    name = "clip"

    def forward(self, x, low=None, high=None):
        self.low, self.high = low, high
        return self.xp.clip(x, low, high)

    def backward(self, grad):
        x = self.inputs[0].data
        inside = self.xp.ones(x.shape, dtype=bool)
        if self.low is not None:
            inside &= x >= self.low
        if self.high is not None:
            inside &= x <= self.high
        return (grad * self.constant(inside.astype(grad.dtype)),)


class Where(Function):
    """where(condition, a, b): a where condition is True, else b (condition not differentiable)."""

    name = "where"

    def forward(self, a, b, condition=None):
        self.condition = condition
        try:
            return self.xp.where(condition, a, b)
        except ValueError:
            broadcast_shape(self.name, condition.shape, a.shape, b.shape)
            raise

    def backward(self, grad):
        a, b = self.inputs
        take_a = self.constant(self.condition.astype(grad.dtype))
        return grad * take_a, grad * (1 - take_a)


class MaskedFill(Function):
    """x with `value` where mask is True (docs/conventions.md, Masks: True = masked out)."""

    name = "masked_fill"
    creates_nonfinite = True

    def forward(self, x, mask=None, value=0.0):
        self.mask = mask
        try:
            out = self.xp.where(mask, self.xp.asarray(value, dtype=x.dtype), x)
        except ValueError:
            broadcast_shape(self.name, x.shape, mask.shape)
            raise
        if out.shape != x.shape:
            raise ShapeError(f"masked_fill: a mask of shape {mask.shape} would broadcast the "
                             f"tensor of shape {x.shape} to {out.shape}; the mask must "
                             "broadcast to the tensor's shape")
        return out

    def backward(self, grad):
        keep = self.constant((~self.mask).astype(grad.dtype))
        return (grad * keep,)


class AsType(Function):
    """A change of dtype; differentiable between floating dtypes."""

    name = "astype"

    def forward(self, x, dtype=None):
        return x.astype(dtype)

    def backward(self, grad):
        return (grad.astype(self.inputs[0].dtype),)


# ----- the functions users call --------------------------------------------------------------

def add(a, b):
    return Add.apply(a, b)


def subtract(a, b):
    return Subtract.apply(a, b)


def multiply(a, b):
    return Multiply.apply(a, b)


def divide(a, b):
    return Divide.apply(a, b)


def power(a, b):
    return Power.apply(a, b)


def maximum(a, b):
    return Maximum.apply(a, b)


def minimum(a, b):
    return Minimum.apply(a, b)


def negative(x):
    return Negative.apply(x)


def exp(x):
    return Exp.apply(x)


def log(x):
    return Log.apply(x)


def sqrt(x):
    return Sqrt.apply(x)


def tanh(x):
    return Tanh.apply(x)


def sigmoid(x):
    return Sigmoid.apply(x)


def relu(x):
    return Relu.apply(x)


def abs(x):
    return Abs.apply(x)


def erf(x):
    return Erf.apply(x)


def clip(x, min=None, max=None):
    return Clip.apply(x, low=min, high=max)


def mask_array(name, mask, like):
    """A boolean mask (Tensor or array) as an array on `like`'s device."""
    array = mask.data if isinstance(mask, Tensor) else like.backend.xp.asarray(mask)
    if array.dtype != np.bool_:
        raise DTypeError(f"{name}: the mask must be boolean (True = masked out), got "
                         f"{array.dtype}; compare first, e.g. ids == pad_id")
    if isinstance(mask, Tensor) and mask.backend is not like.backend:
        raise DeviceError(f"{name}: the mask is on {mask.device}, the tensor on {like.device}")
    return array


def where(condition, a, b):
    """a where condition is True, else b (NumPy's where; a and b may be scalars)."""
    like = a if isinstance(a, Tensor) else b
    if not isinstance(like, Tensor):
        raise TypeError("where: a or b must be a Tensor")
    return Where.apply(a, b, condition=mask_array("where", condition, like))


def masked_fill(x, mask, value):
    return MaskedFill.apply(x, mask=mask_array("masked_fill", mask, x), value=value)


def astype(x, dtype):
    dtype = np.dtype(dtype)
    if dtype == x.dtype:
        return x
    if dtype.kind != "f" and x.requires_grad:
        return Tensor._make(x.data.astype(dtype), x.backend)
    return AsType.apply(x, dtype=dtype)
