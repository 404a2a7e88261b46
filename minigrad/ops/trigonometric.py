"""Trigonometric and hyperbolic functions with their closed-form derivatives, written in ops
(differentiable again): sin, cos, tan, their inverses, and the hyperbolic ones (tanh is in
elementwise.py). PyTorch's names (`asin`, where NumPy says `arcsin`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd import BuiltinFunction
from ..tensor import Tensor
from .registry import InputSpec, op


@op(reference=np.sin, spec=InputSpec("unary"), method=True,
    summary="sine")
class Sin(BuiltinFunction):
    name = "sin"
    float_only = True

    def forward(self, x) -> Any:
        return self.xp.sin(x)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0]
        return (grad * x.cos(),)


@op(reference=np.cos, spec=InputSpec("unary"), method=True,
    summary="cosine")
class Cos(BuiltinFunction):
    name = "cos"
    float_only = True

    def forward(self, x) -> Any:
        return self.xp.cos(x)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0]
        return (-grad * x.sin(),)


@op(reference=np.tan, spec=InputSpec("unary", low=-1.2, high=1.2), method=True,
    summary="tangent")
class Tan(BuiltinFunction):
    name = "tan"
    float_only = True
    needs_output = True

    def forward(self, x) -> Any:
        return self.xp.tan(x)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        y = self.output()
        return (grad * (1 + y * y),)


@op(reference=np.arcsin, spec=InputSpec("unary", low=-0.9, high=0.9), method=True,
    summary="inverse sine")
class Asin(BuiltinFunction):
    name = "asin"
    float_only = True

    def forward(self, x) -> Any:
        return self.xp.arcsin(x)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0]
        return (grad * (1 - x * x).rsqrt(),)


@op(reference=np.arccos, spec=InputSpec("unary", low=-0.9, high=0.9), method=True,
    summary="inverse cosine")
class Acos(BuiltinFunction):
    name = "acos"
    float_only = True

    def forward(self, x) -> Any:
        return self.xp.arccos(x)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0]
        return (-grad * (1 - x * x).rsqrt(),)


@op(reference=np.arctan, spec=InputSpec("unary"), method=True,
    summary="inverse tangent")
class Atan(BuiltinFunction):
    name = "atan"
    float_only = True

    def forward(self, x) -> Any:
        return self.xp.arctan(x)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0]
        return (grad / (1 + x * x),)


@op(reference=np.sinh, spec=InputSpec("unary"), method=True,
    summary="hyperbolic sine")
class Sinh(BuiltinFunction):
    name = "sinh"
    float_only = True

    def forward(self, x) -> Any:
        return self.xp.sinh(x)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0]
        return (grad * x.cosh(),)


@op(reference=np.cosh, spec=InputSpec("unary"), method=True,
    summary="hyperbolic cosine")
class Cosh(BuiltinFunction):
    name = "cosh"
    float_only = True

    def forward(self, x) -> Any:
        return self.xp.cosh(x)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0]
        return (grad * x.sinh(),)


@op(reference=np.arcsinh, spec=InputSpec("unary"), method=True,
    summary="inverse hyperbolic sine")
class Asinh(BuiltinFunction):
    name = "asinh"
    float_only = True

    def forward(self, x) -> Any:
        return self.xp.arcsinh(x)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0]
        return (grad * (x * x + 1).rsqrt(),)


@op(reference=np.arccosh, spec=InputSpec("unary", low=1.2, high=3.0), method=True,
    summary="inverse hyperbolic cosine")
class Acosh(BuiltinFunction):
    name = "acosh"
    float_only = True

    def forward(self, x) -> Any:
        return self.xp.arccosh(x)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0]
        return (grad * (x * x - 1).rsqrt(),)


@op(reference=np.arctanh, spec=InputSpec("unary", low=-0.9, high=0.9), method=True,
    summary="inverse hyperbolic tangent")
class Atanh(BuiltinFunction):
    name = "atanh"
    float_only = True

    def forward(self, x) -> Any:
        return self.xp.arctanh(x)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0]
        return (grad / (1 - x * x),)
