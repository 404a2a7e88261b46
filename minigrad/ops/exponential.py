"""Logarithms, exponentials and powers beyond exp, log and sqrt: log2, log10, log1p, expm1,
exp2, rsqrt, logaddexp; each with its closed-form derivative, written in ops (differentiable
again)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..autograd import BuiltinFunction
from ..tensor import Tensor
from .elementwise import POSITIVE, BinaryFunction
from .registry import InputSpec, op


@op(reference=np.log2, spec=InputSpec("unary", **POSITIVE), summary="base-2 logarithm",
    method=True)
class Log2(BuiltinFunction):
    name = "log2"
    float_only = True

    def forward(self, x) -> Any:
        return self.xp.log2(x)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return (grad / (self.inputs[0] * math.log(2)),)


@op(reference=np.log10, spec=InputSpec("unary", **POSITIVE), summary="base-10 logarithm",
    method=True)
class Log10(BuiltinFunction):
    name = "log10"
    float_only = True

    def forward(self, x) -> Any:
        return self.xp.log10(x)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return (grad / (self.inputs[0] * math.log(10)),)


@op(reference=np.log1p, spec=InputSpec("unary", low=-0.8, high=3.0),
    summary="log(1 + x), accurate near 0", method=True)
class Log1p(BuiltinFunction):
    name = "log1p"
    float_only = True

    def forward(self, x) -> Any:
        return self.xp.log1p(x)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return (grad / (self.inputs[0] + 1),)


@op(reference=np.expm1, spec=InputSpec("unary"), summary="e ** x - 1, accurate near 0",
    method=True)
class Expm1(BuiltinFunction):
    name = "expm1"
    float_only = True
    needs_output = True

    def forward(self, x) -> Any:
        return self.xp.expm1(x)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return (grad * (self.output() + 1),)


@op(reference=np.exp2, spec=InputSpec("unary"), summary="2 ** x", method=True)
class Exp2(BuiltinFunction):
    name = "exp2"
    float_only = True
    needs_output = True

    def forward(self, x) -> Any:
        return self.xp.exp2(x)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return (grad * self.output() * math.log(2),)


@op(reference=lambda x: 1 / np.sqrt(x), spec=InputSpec("unary", **POSITIVE),
    summary="1 / sqrt(x)", method=True)
class Rsqrt(BuiltinFunction):
    name = "rsqrt"
    float_only = True
    needs_output = True

    def forward(self, x) -> Any:
        return 1 / self.xp.sqrt(x)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        y = self.output()
        return (grad * y * y * y * -0.5,)


@op(reference=np.logaddexp, spec=InputSpec("elementwise", low=-3.0, high=3.0),
    summary="log(e ** a + e ** b), stable")
class LogAddExp(BinaryFunction):
    """log(e^a + e^b) as max(a, b) + log1p(e^-|a - b|): no overflow; two -inf give -inf."""

    name = "logaddexp"
    float_only = True
    needs_output = True

    def forward(self, a, b) -> Any:
        return self.xp.logaddexp(a, b)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        a, b = self.inputs
        out = self.output()
        return (grad * (a - out).exp() if a.requires_grad else None,
                grad * (b - out).exp() if b.requires_grad else None)
