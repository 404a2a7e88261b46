"""Activation functions with PyTorch's names and arguments (`F.<name>`): each its forward on
arrays, without overflow, and its closed-form derivative written in ops (differentiable
again; the pieces of a piecewise op are constant masks)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd import BuiltinFunction
from ..tensor import Tensor
from .registry import InputSpec, op

# SELU's constants (Klambauer et al. 2017, eq. 14; PyTorch's values)
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _sigmoid(xp, x) -> Any:
    """1 / (1 + e^-x) without overflow."""
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


def _softplus(xp, x) -> Any:
    """log(1 + e^x) without overflow: max(x, 0) + log1p(e^-|x|)."""
    return xp.maximum(x, 0) + xp.log1p(xp.exp(-xp.abs(x)))


class _Activation(BuiltinFunction):
    """An activation: float only; `where(mask)` is a constant 0/1 tensor of the input's dtype."""

    float_only = True

    def where(self, mask) -> Tensor:
        return self.constant(mask.astype(self.inputs[0].dtype))


@op(reference=lambda x, negative_slope=0.01: np.where(x > 0, x, x * negative_slope),
    namespace="F", spec=InputSpec("unary", kinks=(0.0,), options={"negative_slope": (0.01, 0.2)}),
    summary="x where x > 0, else negative_slope · x")
class LeakyRelu(_Activation):
    name = "leaky_relu"

    def forward(self, x, negative_slope=0.01) -> Any:
        self.slope = negative_slope
        return self.xp.where(x > 0, x, x * x.dtype.type(negative_slope))

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        positive = self.where(self.inputs[0].data > 0)
        return (grad * (positive + (1 - positive) * self.slope),)


def elu_reference(x, alpha=1.0) -> np.ndarray:
    return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


@op(reference=elu_reference, namespace="F",
    spec=InputSpec("unary", kinks=(0.0,), options={"alpha": (1.0, 0.5)}),
    summary="x where x > 0, else alpha · (e ** x - 1)")
class Elu(_Activation):
    name = "elu"

    def forward(self, x, alpha=1.0) -> Any:
        self.alpha = alpha
        return self.xp.where(x > 0, x, x.dtype.type(alpha) * self.xp.expm1(self.xp.minimum(x, 0)))

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0]
        positive = self.where(x.data > 0)
        negative_part = self.alpha * (x * (1 - positive)).exp()  # alpha e^x where x <= 0
        return (grad * (positive + (1 - positive) * negative_part),)


@op(reference=lambda x, alpha=1.0: np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0) / alpha)),
    namespace="F", spec=InputSpec("unary", kinks=(0.0,), options={"alpha": (1.0, 0.5)}),
    summary="max(0, x) + min(0, alpha · (e ** (x / alpha) - 1))")
class Celu(_Activation):
    name = "celu"

    def forward(self, x, alpha=1.0) -> Any:
        self.alpha = alpha
        xp = self.xp
        return xp.where(x > 0, x, x.dtype.type(alpha) * xp.expm1(xp.minimum(x, 0) / alpha))

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0]
        positive = self.where(x.data > 0)
        return (grad * (positive + (1 - positive) * (x * (1 - positive) / self.alpha).exp()),)


@op(reference=lambda x: SELU_SCALE * elu_reference(x, SELU_ALPHA), namespace="F",
    spec=InputSpec("unary", kinks=(0.0,)), summary="scale · elu(x, alpha), self-normalizing")
class Selu(_Activation):
    name = "selu"

    def forward(self, x) -> Any:
        xp = self.xp
        negative = x.dtype.type(SELU_ALPHA) * xp.expm1(xp.minimum(x, 0))
        return x.dtype.type(SELU_SCALE) * xp.where(x > 0, x, negative)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0]
        positive = self.where(x.data > 0)
        slope = positive + (1 - positive) * SELU_ALPHA * (x * (1 - positive)).exp()
        return (grad * slope * SELU_SCALE,)


@op(reference=lambda x: x / (1 + np.exp(-x)), namespace="F", spec=InputSpec("unary"),
    summary="x · sigmoid(x) (swish)")
class Silu(_Activation):
    name = "silu"

    def forward(self, x) -> Any:
        return x * _sigmoid(self.xp, x)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0]
        s = x.sigmoid()
        return (grad * s * (1 + x * (1 - s)),)


@op(reference=lambda x: x * np.tanh(np.log1p(np.exp(x))), namespace="F",
    spec=InputSpec("unary"), summary="x · tanh(softplus(x))")
class Mish(_Activation):
    name = "mish"

    def forward(self, x) -> Any:
        return x * self.xp.tanh(_softplus(self.xp, x))

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0]
        t = Softplus.apply(x).tanh()
        return (grad * (t + x * x.sigmoid() * (1 - t * t)),)


def softplus_reference(x, beta=1.0, threshold=20.0) -> np.ndarray:
    return np.where(beta * x > threshold, x, np.log1p(np.exp(beta * x)) / beta)


@op(reference=softplus_reference, namespace="F",
    spec=InputSpec("unary", options={"beta": (1.0, 2.0)}),
    summary="log(1 + e ** (beta · x)) / beta, x itself past the threshold")
class Softplus(_Activation):
    name = "softplus"

    def forward(self, x, beta=1.0, threshold=20.0) -> Any:
        self.beta, self.threshold = beta, threshold
        scaled = x * x.dtype.type(beta)
        return self.xp.where(scaled > threshold, x, _softplus(self.xp, scaled) / beta)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0]
        linear = self.where(x.data * self.beta > self.threshold)
        return (grad * (linear + (1 - linear) * (x * self.beta).sigmoid()),)


@op(reference=lambda x: x / (1 + np.abs(x)), namespace="F",
    spec=InputSpec("unary", kinks=(0.0,)), summary="x / (1 + |x|)")
class Softsign(_Activation):
    name = "softsign"

    def forward(self, x) -> Any:
        return x / (1 + self.xp.abs(x))

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        denominator = 1 + self.inputs[0].abs()
        return (grad / (denominator * denominator),)


@op(reference=lambda x: np.clip(x / 6 + 0.5, 0, 1), namespace="F",
    spec=InputSpec("unary", low=-4.0, high=4.0, kinks=(-3.0, 3.0)),
    summary="clip(x / 6 + 1/2, 0, 1)")
class Hardsigmoid(_Activation):
    name = "hardsigmoid"

    def forward(self, x) -> Any:
        return self.xp.clip(x / 6 + x.dtype.type(0.5), 0, 1)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0].data
        return (grad * self.where((x > -3) & (x < 3)) * (1 / 6),)


@op(reference=lambda x: x * np.clip(x + 3, 0, 6) / 6, namespace="F",
    spec=InputSpec("unary", low=-4.0, high=4.0, kinks=(-3.0, 3.0)),
    summary="x · clip(x + 3, 0, 6) / 6")
class Hardswish(_Activation):
    name = "hardswish"

    def forward(self, x) -> Any:
        return x * self.xp.clip(x + 3, 0, 6) / 6

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0]
        inside = self.where((x.data > -3) & (x.data < 3))
        above = self.where(x.data >= 3)
        return (grad * (inside * (x * (1 / 3) + 0.5) + above),)


@op(reference=lambda x, min_val=-1.0, max_val=1.0: np.clip(x, min_val, max_val), namespace="F",
    spec=InputSpec("unary", kinks=(-1.0, 1.0)), summary="x limited to [min_val, max_val]")
class Hardtanh(_Activation):
    name = "hardtanh"

    def forward(self, x, min_val=-1.0, max_val=1.0) -> Any:
        self.low, self.high = min_val, max_val
        return self.xp.clip(x, min_val, max_val)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0].data
        return (grad * self.where((x > self.low) & (x < self.high)),)


@op(reference=lambda x: np.clip(x, 0, 6), namespace="F",
    spec=InputSpec("unary", low=-2.0, high=8.0, kinks=(0.0, 6.0)), summary="min(max(x, 0), 6)")
class Relu6(_Activation):
    name = "relu6"

    def forward(self, x) -> Any:
        return self.xp.clip(x, 0, 6)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0].data
        return (grad * self.where((x > 0) & (x < 6)),)


@op(reference=lambda x: -np.log1p(np.exp(-x)), namespace="F", spec=InputSpec("unary"),
    summary="log(sigmoid(x)), without overflow")
class Logsigmoid(_Activation):
    name = "logsigmoid"

    def forward(self, x) -> Any:
        return -_softplus(self.xp, -x)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return (grad * (-self.inputs[0]).sigmoid(),)

