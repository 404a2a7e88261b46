"""Elementwise ops: arithmetic with NumPy broadcasting, unary math, clip, where, masked_fill."""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

import numpy as np

from ..autograd import BuiltinFunction
from ..errors import DeviceError, DTypeError, ShapeError
from ..tensor import Operand, Tensor, ensure_tensor, get_default_dtype
from .broadcasting import broadcast_shape
from .references import erf_reference, masked_fill_reference
from .registry import InputSpec, op

BINARY = InputSpec("elementwise")
POSITIVE: dict[str, Any] = {"low": 0.2, "high": 3.0}  # the domain of log and sqrt


class BinaryFunction(BuiltinFunction):
    """Broadcasting a op b: a shape mismatch is reported with both shapes."""

    def explain_failure(self, a, b) -> None:
        broadcast_shape(self.name, a.shape, b.shape)


@op(reference=np.add, spec=BINARY, summary="a + b", operators=("__add__", "__radd__"))
class Add(BinaryFunction):
    name = "add"
    forward = staticmethod(operator.add)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        a, b = self.inputs
        return (grad if a.requires_grad else None,
                grad if b.requires_grad else None)

    backward_arrays = backward  # the same on arrays


@op(reference=np.subtract, spec=BINARY, summary="a - b",
    operators=("__sub__", "__rsub__"))
class Subtract(BinaryFunction):
    name = "subtract"
    forward = staticmethod(operator.sub)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        a, b = self.inputs
        return (grad if a.requires_grad else None,
                -grad if b.requires_grad else None)

    backward_arrays = backward  # the same operators on arrays


@op(reference=np.multiply, spec=BINARY, summary="a * b",
    operators=("__mul__", "__rmul__"))
class Multiply(BinaryFunction):
    name = "multiply"
    forward = staticmethod(operator.mul)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        a, b = self.inputs
        return (grad * b if a.requires_grad else None,
                grad * a if b.requires_grad else None)

    def backward_arrays(self, grad) -> tuple[Any, ...]:
        a, b = self.inputs
        return (grad * b.data if a.requires_grad else None,
                grad * a.data if b.requires_grad else None)


@op(reference=np.divide, spec=InputSpec("elementwise", kinks=(0.0,)), summary="a / b",
    operators=("__truediv__", "__rtruediv__"))
class Divide(BinaryFunction):
    name = "divide"
    forward = staticmethod(operator.truediv)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        a, b = self.inputs
        grad_a = grad / b
        return (grad_a if a.requires_grad else None,
                -grad_a * a / b if b.requires_grad else None)

    def backward_arrays(self, grad) -> tuple[Any, ...]:
        a, b = self.inputs
        grad_a = grad / b.data
        return (grad_a if a.requires_grad else None,
                -grad_a * a.data / b.data if b.requires_grad else None)


@op(reference=np.power, spec=InputSpec("elementwise", low=0.5, high=2.0), summary="a ** b",
    operators=("__pow__", "__rpow__"), pytorch="`torch.pow`")
class Power(BinaryFunction):
    """a ** b; the gradient for b is asked only where b requires grad (it needs log a). As
    PyTorch's, the gradient for a is 0 where b = 0 and the one for b is 0 where a = 0 and
    b >= 0 (not the NaN or -inf of the formulas there). Integers to integer powers stay
    integers (negative powers refused, as NumPy and PyTorch do)."""

    name = "power"
    needs_output = True

    def forward(self, a, b) -> Any:
        return a ** b

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        a, b = self.inputs
        xp = self.xp
        grad_a = grad_b = None
        with _quiet_power(xp):
            if a.requires_grad:
                grad_a = grad * self._zero_where(b.data == 0, b * a ** (b - 1))
            if b.requires_grad:
                at_zero = (a.data == 0) & (b.data >= 0)
                grad_b = grad * self._zero_where(at_zero, self.output() * a.log())
        return grad_a, grad_b

    def _zero_where(self, condition, value: Tensor) -> Tensor:
        """value with 0 where `condition` (an array) holds; on the CPU, where nothing is masked
        (the common case), the formula as it is (a GPU would wait for the test)."""
        if self.backend.activate is None and not condition.any():
            return value
        return Where.apply(0.0, value, condition=condition)


def _quiet_power(xp):
    """Silence NumPy's warnings for 0 ** -1 and log 0 (masked right after)."""
    errstate = getattr(xp, "errstate", None)
    return errstate(divide="ignore", invalid="ignore") if errstate else nullcontext()


class _PairExtremum(BinaryFunction):
    """maximum / minimum of a and b: `xp.<name>`; at ties the gradient is split evenly
    (docs/conventions.md), elsewhere it goes to the input `a_wins` picks."""

    a_wins: Callable[..., Any]  # the comparison of a with b that picks a

    def forward(self, a, b) -> Any:
        return getattr(self.xp, self.name)(a, b)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        a, b = (t.data for t in self.inputs)
        share_a = self.a_wins(a, b) + 0.5 * (a == b)
        share_a = self.constant(share_a.astype(grad.dtype, copy=False))
        return grad * share_a, grad * (1 - share_a)


@op(reference=np.maximum, spec=InputSpec("elementwise", distinct=True), method=True,
    summary="elementwise maximum; ties split the gradient")
class Maximum(_PairExtremum):
    name = "maximum"
    a_wins = operator.gt


@op(reference=np.minimum, spec=InputSpec("elementwise", distinct=True), method=True,
    summary="elementwise minimum; ties split the gradient")
class Minimum(_PairExtremum):
    name = "minimum"
    a_wins = operator.lt


@op(reference=np.negative, spec=InputSpec("unary"), summary="-x", operators=("__neg__",))
class Negative(BuiltinFunction):
    name = "negative"

    def forward(self, x) -> Any:
        return -x

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return (-grad,)

    backward_arrays = backward  # the same operator on arrays


@op(reference=np.exp, spec=InputSpec("unary"), summary="e ** x", method=True)
class Exp(BuiltinFunction):
    name = "exp"
    float_only = True

    def forward(self, x) -> Any:
        y = self.y = self.xp.exp(x)  # the output, which the gradient is made of
        return y

    def recompute(self) -> Tensor:
        return self.inputs[0].exp()

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return (grad * self.recompute(),)

    def backward_arrays(self, grad) -> tuple[Any, ...]:
        return (grad * self.y,)


@op(reference=np.log, spec=InputSpec("unary", **POSITIVE), summary="natural logarithm",
    method=True)
class Log(BuiltinFunction):
    name = "log"
    float_only = True

    def forward(self, x) -> Any:
        return self.xp.log(x)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return (grad / self.inputs[0],)

    def backward_arrays(self, grad) -> tuple[Any, ...]:
        return (grad / self.inputs[0].data,)


@op(reference=np.sqrt, spec=InputSpec("unary", **POSITIVE), summary="square root",
    method=True)
class Sqrt(BuiltinFunction):
    name = "sqrt"
    float_only = True

    def forward(self, x) -> Any:
        y = self.y = self.xp.sqrt(x)  # the output, which the gradient is made of
        return y

    def recompute(self) -> Tensor:
        return self.inputs[0].sqrt()

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return (grad / (2 * self.recompute()),)

    def backward_arrays(self, grad) -> tuple[Any, ...]:
        return (grad / (2 * self.y),)


@op(reference=np.tanh, spec=InputSpec("unary"), summary="hyperbolic tangent", method=True)
class Tanh(BuiltinFunction):
    name = "tanh"
    float_only = True

    def forward(self, x) -> Any:
        y = self.y = self.xp.tanh(x)  # the output, which the gradient is made of
        return y

    def recompute(self) -> Tensor:
        return self.inputs[0].tanh()

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return (TanhBackward.apply(grad, self.recompute()),)

    def backward_arrays(self, grad) -> tuple[Any, ...]:
        return (tanh_derivative(grad, self.y),)


def tanh_derivative(grad: Any, y: Any) -> Any:
    """grad · (1 - y²) on arrays, tanh's backward from its output y."""
    return grad - grad * y * y  # NumPy is slower with a Python 1


@op(reference=lambda grad, y: grad * (1 - y * y), spec=BINARY, namespace=None, internal=True,
    summary="grad · (1 - y²): tanh's backward")
class TanhBackward(BinaryFunction):
    """grad · (1 - y²), tanh's backward from its output y, as one op (itself differentiable,
    so tanh has gradients of gradients)."""

    name = "tanh_backward"
    float_only = True

    forward = staticmethod(tanh_derivative)

    def backward(self, grad_of_grad: Tensor) -> tuple[Tensor | None, ...]:
        grad, y = self.inputs
        return grad_of_grad * (1 - y * y), grad_of_grad * grad * y * -2


@op(reference=lambda x: 1 / (1 + np.exp(-x)), spec=InputSpec("unary", low=-4.0, high=4.0),
    summary="1 / (1 + e ** -x), without overflow", method=True)
class Sigmoid(BuiltinFunction):
    name = "sigmoid"
    float_only = True

    def forward(self, x) -> Any:
        # 1 / (1 + e^-x) for x >= 0 and e^x / (1 + e^x) for x < 0: neither overflows
        e = self.xp.exp(-self.xp.abs(x))
        y = self.xp.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)
        self.y = y  # the output, which the gradient is made of
        return y

    def recompute(self) -> Tensor:
        return self.inputs[0].sigmoid()

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return (SigmoidBackward.apply(grad, self.recompute()),)

    def backward_arrays(self, grad) -> tuple[Any, ...]:
        return (sigmoid_derivative(grad, self.y),)


def sigmoid_derivative(grad: Any, y: Any) -> Any:
    """grad · y(1 - y) on arrays, sigmoid's backward from its output y."""
    grad_y = grad * y
    return grad_y - grad_y * y  # NumPy is slower with a Python 1


@op(reference=lambda grad, y: grad * y * (1 - y), spec=BINARY, namespace=None, internal=True,
    summary="grad · y(1 - y): sigmoid's backward")
class SigmoidBackward(BinaryFunction):
    """grad · y(1 - y), sigmoid's backward from its output y, as one op (differentiable)."""

    name = "sigmoid_backward"
    float_only = True

    forward = staticmethod(sigmoid_derivative)

    def backward(self, grad_of_grad: Tensor) -> tuple[Tensor | None, ...]:
        grad, y = self.inputs
        return grad_of_grad * y * (1 - y), grad_of_grad * grad * (1 - 2 * y)


@op(reference=lambda x: np.maximum(x, 0), spec=InputSpec("unary", kinks=(0.0,)),
    summary="max(x, 0)", method=True)
class Relu(BuiltinFunction):
    name = "relu"

    def forward(self, x) -> Any:
        return self.backend.kernels.relu(x)

    def backward_arrays(self, grad) -> tuple[Any, ...]:
        return (self.backend.kernels.relu_backward(grad, self.inputs[0].data),)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return (grad * self.constant(self.inputs[0].data > 0),)  # float × bool stays float


@op(reference=np.abs, spec=InputSpec("unary", kinks=(0.0,)), summary="|x|", method=True)
class Abs(BuiltinFunction):
    name = "abs"

    def forward(self, x) -> Any:
        return self.xp.abs(x)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0].data
        return (grad * self.constant(self.xp.sign(x)),)


# Abramowitz & Stegun 7.1.26 coefficients; |error| < 1.5e-7, far below float32 resolution.
_ERF_P = 0.3275911
_ERF_A = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def erf_array(xp, x) -> Any:
    """erf on an array by a rational approximation (NumPy has no erf)."""
    t = 1 / (1 + _ERF_P * xp.abs(x))
    poly = t * (_ERF_A[0] + t * (_ERF_A[1] + t * (_ERF_A[2] + t * (_ERF_A[3] + t * _ERF_A[4]))))
    return (xp.sign(x) * (1 - poly * xp.exp(-x * x))).astype(x.dtype, copy=False)


@op(reference=erf_reference, spec=InputSpec("unary"), accuracy=1.5e-7, method=True,
    summary="error function (rational approximation, |error| < 1.5e-7)")
class Erf(BuiltinFunction):
    """The error function (needed by the exact GELU), accurate to 1.5e-7, with the exact
    derivative 2/sqrt(pi)·exp(-x²)."""

    name = "erf"
    float_only = True

    def forward(self, x) -> Any:
        return erf_array(self.xp, x)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0]
        return (grad * (2 / math.sqrt(math.pi)) * (-x * x).exp(),)


@op(reference=lambda x, min=None, max=None: x if min is None and max is None
    else np.clip(x, min, max), method=True,
    spec=InputSpec("unary", kinks=(-1.0, 1.0), options={"min": (None, -1.0), "max": (None, 1.0)}),
    summary="x limited to [min, max]",
    pytorch="`torch.clamp`")
class Clip(BuiltinFunction):
    """Values limited to [low, high]; the gradient passes where the value was inside."""

    name = "clip"

    def forward(self, x, min=None, max=None) -> Any:
        self.low, self.high = min, max
        if min is None and max is None:  # NumPy before 2.1 and CuPy refuse clip(x, None, None)
            return x.copy()
        return self.xp.clip(x, min, max)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0].data
        inside = self.xp.ones(x.shape, dtype=bool)
        if self.low is not None:
            inside &= x >= self.low
        if self.high is not None:
            inside &= x <= self.high
        return (grad * self.constant(inside.astype(grad.dtype)),)


class Where(BuiltinFunction):
    """where(condition, a, b): a where condition is True, else b (condition not differentiable)."""

    name = "where"

    def forward(self, a, b, condition=None) -> Any:
        self.condition = condition
        try:
            return self.xp.where(condition, a, b)
        except ValueError:
            broadcast_shape(self.name, condition.shape, a.shape, b.shape)
            raise

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        a, b = self.inputs
        take_a = self.constant(self.condition.astype(grad.dtype))
        return grad * take_a, grad * (1 - take_a)


class MaskedFill(BuiltinFunction):
    """x with `value` where mask is True (docs/conventions.md, Masks: True = masked out)."""

    name = "masked_fill"
    creates_nonfinite = True

    def forward(self, x, mask=None, value=0.0) -> Any:
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

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        keep = self.constant((~self.mask).astype(grad.dtype))
        return (grad * keep,)


class AsType(BuiltinFunction):
    """A change of dtype; differentiable between floating dtypes."""

    name = "astype"

    def forward(self, x, dtype=None) -> Any:
        return x.astype(dtype)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return (grad.astype(self.inputs[0].dtype),)


def mask_array(name, mask, like) -> Any:
    """A boolean mask (Tensor or array) as an array on `like`'s device."""
    array = mask.data if isinstance(mask, Tensor) else like.backend.xp.asarray(mask)
    if array.dtype != np.bool_:
        raise DTypeError(f"{name}: the mask must be boolean (True = masked out), got "
                         f"{array.dtype}; compare first, e.g. ids == pad_id")
    if isinstance(mask, Tensor) and mask.backend is not like.backend:
        raise DeviceError(f"{name}: the mask is on {mask.device}, the tensor on {like.device}")
    return array


@op(functions=(Where,), reference=np.where, spec=InputSpec("where"),
    summary="a where the condition is True, else b")
def where(condition, a, b) -> Tensor:
    """a where condition is True, else b (NumPy's where; a and b may be numbers: both numbers
    give a tensor on the condition's device, floats in the default float dtype)."""
    like = a if isinstance(a, Tensor) else b
    if not isinstance(like, Tensor):
        if not isinstance(condition, Tensor):
            raise TypeError("where: the condition, a or b must be a Tensor")
        dtype = get_default_dtype() if isinstance(a, float) or isinstance(b, float) \
            else np.result_type(a, b)
        like = Tensor._make(condition.backend.xp.asarray(a, dtype=dtype), condition.backend)
        a = like
    return Where.apply(a, b, condition=mask_array("where", condition, like))


@op(functions=(Add, Multiply, Subtract), reference=lambda start, end, weight: start + weight * (
    end - start), spec=InputSpec("ternary"), method=True,
    summary="start + weight · (end - start)",
    pytorch="`torch.lerp` (`input` is `start` here)")
def lerp(start: Operand, end: Operand, weight: Operand) -> Tensor:
    """PyTorch's lerp (`input`, `end`, `weight`): any of them a number or an array beside a
    tensor."""
    like = next((v for v in (start, end, weight) if isinstance(v, Tensor)), None)
    if like is None:
        raise TypeError("lerp: start, end or weight must be a Tensor")
    start, end, weight = (ensure_tensor(v, like) for v in (start, end, weight))
    return start + weight * (end - start)


@op(functions=(MaskedFill,), reference=masked_fill_reference, method=True,
    spec=InputSpec("masked_fill", options={"value": (0.0, -1.5)}),
    summary="value where the mask is True (True = masked out)",
    pytorch="`Tensor.masked_fill`")
def masked_fill(x, mask, value) -> Tensor:
    return MaskedFill.apply(x, mask=mask_array("masked_fill", mask, x), value=value)


@op(functions=(AsType,), reference=lambda x, dtype: x.astype(dtype), namespace=None, method=True,
    spec=InputSpec("unary", options={"dtype": ("float32",)}), summary="a change of dtype", eps=0.1,
    pytorch="`Tensor.to(dtype)`")
def astype(x, dtype) -> Tensor:
    dtype = np.dtype(dtype)
    if dtype == x.dtype:
        return x
    if dtype.kind != "f" and x.requires_grad:
        return Tensor._make(x.data.astype(dtype), x.backend)
    return AsType.apply(x, dtype=dtype)
