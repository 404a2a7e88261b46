"""Matrix products: `a @ b` with NumPy's rules (1-D, 2-D, batched, broadcast batches)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd import Function
from ..errors import ShapeError
from ..tensor import Tensor, ensure_tensor
from .broadcasting import broadcast_shape
from .registry import InputSpec, op
from .shape import Reshape


class MatMul(Function):
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
