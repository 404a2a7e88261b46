"""Matrix products: `a @ b` with NumPy's rules (1-D, 2-D, batched, broadcast batches)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd import BuiltinFunction
from ..errors import ShapeError
from ..tensor import Tensor, ensure_tensor
from .broadcasting import broadcast_shape
from .registry import InputSpec, op
from .shape import Reshape


class MatMul(BuiltinFunction):
    """The product of two tensors of at least 2 dimensions (batch axes broadcast)."""

    name = "matmul"

    def forward(self, a, b) -> Any:
        if a.shape[-1] != b.shape[-2]:
            raise ShapeError(
                f"matmul: shapes {a.shape} and {b.shape} do not fit: the last axis of the first "
                f"({a.shape[-1]}) must equal the second-to-last axis of the second "
                f"({b.shape[-2]}); transpose one of them (x.mT) or fix the layer sizes")
        broadcast_shape(self.name, a.shape[:-2], b.shape[:-2])
        return a @ b

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        a, b = self.inputs
        return (grad @ b.mT if a.requires_grad else None,
                a.mT @ grad if b.requires_grad else None)

    def backward_arrays(self, grad) -> tuple[Any, ...]:
        a, b = self.inputs
        return (grad @ b.data.swapaxes(-1, -2) if a.requires_grad else None,
                a.data.swapaxes(-1, -2) @ grad if b.requires_grad else None)


@op(functions=(MatMul, Reshape), reference=np.matmul, spec=InputSpec("matmul"),
    operators=("__matmul__", "__rmatmul__"),
    summary="a @ b as NumPy: 1-D operands, broadcast batches")
def matmul(a, b) -> Tensor:
    """a @ b as NumPy computes it: a 1-D operand is a row (left) or a column (right) vector."""
    if not isinstance(a, Tensor):
        a = ensure_tensor(a, b)
    if not isinstance(b, Tensor):
        b = ensure_tensor(b, a)
    if a.ndim == 0 or b.ndim == 0:
        raise ShapeError(f"matmul: operands need at least one dimension, got shapes {a.shape} "
                         f"and {b.shape}; use * for a product with a scalar")
    if a.ndim >= 2 and b.ndim >= 2:
        return MatMul.apply(a, b)
    row, column = a.ndim == 1, b.ndim == 1
    a2 = a.reshape((1,) + a.shape) if row else a
    b2 = b.reshape(b.shape + (1,)) if column else b
    out = MatMul.apply(a2, b2)
    rows = () if row else out.shape[-2:-1]
    columns = () if column else out.shape[-1:]
    return out.reshape(out.shape[:-2] + rows + columns)


class Einsum(BuiltinFunction):
    """NumPy's einsum of the operands; each gradient is an einsum of the incoming gradient
    with the other operands (a letter only this operand sums over is broadcast back)."""

    name = "einsum"

    def forward(self, *operands, equation="") -> Any:
        self.terms, self.output_term = _parse_einsum(equation, operands)
        return self.xp.einsum(equation, *operands, optimize=len(operands) > 2)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        grads: list[Tensor | None] = []
        for i, (term, operand) in enumerate(zip(self.terms, self.inputs)):
            if not operand.requires_grad:
                grads.append(None)
                continue
            others = [(t, x) for j, (t, x) in enumerate(zip(self.terms, self.inputs)) if j != i]
            present = set(self.output_term).union(*[t for t, _ in others])
            kept = "".join(c for c in term if c in present)
            equation = ",".join([self.output_term] + [t for t, _ in others]) + "->" + kept
            partial = Einsum.apply(grad, *[x for _, x in others], equation=equation)
            shape = tuple(n if c in present else 1 for c, n in zip(term, operand.shape))
            grads.append(partial.reshape(shape).broadcast_to(operand.shape))
        return tuple(grads)


def _parse_einsum(equation, operands) -> tuple[list[str], str]:
    """The operands' subscripts and the output's (implicit: the letters used once, sorted);
    refused in one line: ellipses, a letter twice in one operand, a count that does not fit."""
    compact = equation.replace(" ", "")
    if "." in compact:
        raise ShapeError(f"einsum: {equation!r}: ellipses are not supported; name every axis")
    inputs, _, output = compact.partition("->")
    terms = inputs.split(",")
    if "->" not in compact:
        letters = "".join(terms)
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    if len(terms) != len(operands):
        raise ShapeError(f"einsum: {equation!r} names {len(terms)} operands, got "
                         f"{len(operands)}")
    for term, operand in zip(terms, operands):
        if len(set(term)) != len(term):
            raise ShapeError(f"einsum: {equation!r}: a letter repeated in one operand "
                             f"({term!r}: a diagonal) is not supported; use mg.diagonal")
        if len(term) != operand.ndim:
            raise ShapeError(f"einsum: {term!r} names {len(term)} axes of an operand of shape "
                             f"{operand.shape}")
    return terms, output


@op(functions=(Einsum, Reshape), reference=np.einsum, spec=InputSpec("einsum"),
    summary="Einstein summation of the operands",
    pytorch="`torch.einsum` (no ellipsis, no letter repeated within one operand)")
def einsum(equation, *operands) -> Tensor:
    like = next((x for x in operands if isinstance(x, Tensor)), None)
    if like is None:
        raise TypeError("einsum: needs at least one Tensor operand")
    return Einsum.apply(*[ensure_tensor(x, like) for x in operands], equation=equation)
