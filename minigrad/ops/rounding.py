"""Signs, rounding and integer division: sign, copysign, floor, ceil, round, trunc, fmod,
remainder (`%`), floor_divide (`//`) and div with PyTorch's rounding_mode.

The steps (sign, rounding, rounded quotients) have a zero gradient, as PyTorch's; on integer
tensors the rounding ops return their input's values and dtype (PyTorch's), and the divisions
compute as NumPy does (floor and trunc quotients stay integers)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd import BuiltinFunction
from ..tensor import Operand, Tensor
from .elementwise import BinaryFunction, Divide
from .registry import InputSpec, op

# values away from every integer and half-integer: where rounding jumps
STEPS = tuple(k / 2 for k in range(-5, 6))
# operands of a division: positive and pairwise apart (a quotient lands on an integer, where
# the remainder jumps, only by chance)
QUOTIENT: dict[str, Any] = {"low": 0.3, "high": 2.0, "distinct": True}


def _integers_kept(rounding):
    """The NumPy reference of a rounding op as PyTorch's: integers come back as they are."""

    def reference(x, **options):
        return x.copy() if x.dtype.kind in "iub" else rounding(x, **options)

    return reference


class _Step(BuiltinFunction):
    """A piecewise-constant op: its gradient is 0 (PyTorch's, where the derivative exists)."""

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return tuple(grad * 0.0 if x.requires_grad else None for x in self.inputs)


class _Rounding(_Step):
    """floor / ceil / trunc: `xp.<name>` on floats, integers returned as they are."""

    def forward(self, x) -> Any:
        return x.copy() if x.dtype.kind in "iub" else getattr(self.xp, self.name)(x)


@op(reference=np.sign, spec=InputSpec("unary", kinks=(0.0,)), method=True,
    summary="-1, 0 or 1 by the sign of x; zero gradient")
class Sign(_Step):
    name = "sign"

    def forward(self, x) -> Any:
        return self.xp.sign(x)


@op(reference=_integers_kept(np.floor), spec=InputSpec("unary", kinks=STEPS), method=True,
    summary="largest integer <= x; zero gradient")
class Floor(_Rounding):
    name = "floor"


@op(reference=_integers_kept(np.ceil), spec=InputSpec("unary", kinks=STEPS), method=True,
    summary="smallest integer >= x; zero gradient")
class Ceil(_Rounding):
    name = "ceil"


@op(reference=_integers_kept(np.trunc), spec=InputSpec("unary", kinks=STEPS), method=True,
    summary="x rounded toward 0; zero gradient")
class Trunc(_Rounding):
    name = "trunc"


@op(reference=_integers_kept(np.round), method=True,
    spec=InputSpec("unary", kinks=STEPS, options={"decimals": (0, 1)}),
    summary="x rounded to `decimals` places, halves to even; zero gradient",
    pytorch="`torch.round` (integers with decimals > 0: returned as they are)")
class Round(_Step):
    name = "round"

    def forward(self, x, decimals=0) -> Any:
        return x.copy() if x.dtype.kind in "iub" else self.xp.round(x, decimals)


@op(reference=np.copysign, spec=InputSpec("elementwise", kinks=(0.0,)),
    summary="|a| with the sign of b")
class CopySign(BinaryFunction):
    name = "copysign"
    float_only = True

    def forward(self, a, b) -> Any:
        return self.xp.copysign(a, b)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        a, b = (x.data for x in self.inputs)
        xp = self.xp
        flips = xp.sign(a) * xp.copysign(xp.ones_like(b), b)  # d|a|·sign(b) / da
        return (grad * self.constant(flips.astype(grad.dtype, copy=False)),
                grad * 0.0 if self.inputs[1].requires_grad else None)


def _quotient_gradients(function, grad, rounded):
    """a - rounded(a / b) · b: the gradient for a is grad, for b -grad · rounded(a / b)."""
    a, b = function.inputs
    rounded = function.constant(rounded)
    return (grad if a.requires_grad else None,
            -grad * rounded if b.requires_grad else None)


@op(reference=np.fmod, spec=InputSpec("elementwise", **QUOTIENT),
    summary="a - trunc(a / b) · b: the remainder with a's sign (C's fmod)")
class Fmod(BinaryFunction):
    name = "fmod"

    def forward(self, a, b) -> Any:
        return self.xp.fmod(a, b)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        a, b = (x.data for x in self.inputs)
        return _quotient_gradients(self, grad, self.xp.trunc(a / b).astype(grad.dtype))


@op(reference=np.remainder, spec=InputSpec("elementwise", **QUOTIENT),
    operators=("__mod__", "__rmod__"),
    summary="a - floor(a / b) · b: the remainder with b's sign (Python's %)")
class Remainder(BinaryFunction):
    name = "remainder"

    def forward(self, a, b) -> Any:
        return self.xp.remainder(a, b)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        a, b = (x.data for x in self.inputs)
        return _quotient_gradients(self, grad, self.xp.floor(a / b).astype(grad.dtype))


@op(reference=np.floor_divide, spec=InputSpec("elementwise", **QUOTIENT),
    operators=("__floordiv__", "__rfloordiv__"),
    summary="floor(a / b) (Python's //); zero gradient")
class FloorDivide(_Step, BinaryFunction):
    name = "floor_divide"

    def forward(self, a, b) -> Any:
        return self.xp.floor_divide(a, b)


class TruncDivide(_Step, BinaryFunction):
    """trunc(a / b), integers staying integers; zero gradient."""

    name = "trunc_divide"

    def forward(self, a, b) -> Any:
        quotient = self.xp.trunc(a / b)
        return quotient.astype(self.xp.result_type(a, b), copy=False)


def div_reference(a, b, rounding_mode=None) -> np.ndarray:
    if rounding_mode is None:
        return np.divide(a, b)
    if rounding_mode == "floor":
        return np.floor_divide(a, b)
    return np.trunc(a / b).astype(np.result_type(a, b))


@op(functions=(Divide, TruncDivide, FloorDivide), reference=div_reference,
    spec=InputSpec("elementwise", **QUOTIENT,
                   options={"rounding_mode": (None, "trunc", "floor")}),
    summary="a / b, rounded as `rounding_mode` says (None, 'trunc', 'floor')")
def div(a: Operand, b: Operand, rounding_mode=None) -> Tensor:
    """PyTorch's div: true division, or the quotient rounded toward 0 ('trunc') or down
    ('floor'; integers stay integers), with a zero gradient."""
    if rounding_mode is None:
        return Divide.apply(a, b)
    if rounding_mode == "floor":
        return FloorDivide.apply(a, b)
    if rounding_mode == "trunc":
        return TruncDivide.apply(a, b)
    raise ValueError(f"div: rounding_mode must be None, 'trunc' or 'floor', got "
                     f"{rounding_mode!r}")
