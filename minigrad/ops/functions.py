"""Every op's public function: `mg.<name>` for those in `__all__`.

Generated from the op declarations by scripts/make_ops_doc.py; do not edit.
An op declared on a function (`where`, `matmul`, ...) is that function, imported here; one
declared on its Function class is written out below, with the class's docstring."""

import sys

from .. import (
    tensor_methods,
)
from ..creation import (
    tril,
    triu,
)
from ..tensor import (
    Operand,
    Tensor,
)
from .compare import (
    all,
    any,
    argmax,
    bitwise_not,
    equal,
    greater,
    greater_equal,
    isfinite,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    not_equal,
)
from .elementwise import (
    Abs,
    Add,
    Clip,
    Divide,
    Erf,
    Exp,
    Log,
    Maximum,
    Minimum,
    Multiply,
    Negative,
    Power,
    Relu,
    Sigmoid,
    SigmoidBackward,
    Sqrt,
    Subtract,
    Tanh,
    TanhBackward,
    astype,  # noqa: F401  (a Tensor method's)
    masked_fill,
    where,
)
from .indexing import (
    getitem,  # noqa: F401  (a Tensor method's)
    index_add,
    topk,
)
from .linalg import (
    matmul,
)
from .nn import (
    LayerNormInputGradient,
)
from .reduce import (
    LogSumExp,
    Max,
    Mean,
    Min,
    Sum,
    Var,
)
from .shape import (
    ToDevice,
    broadcast_to,
    concatenate,
    expand_dims,
    reshape,
    reshape_method,  # noqa: F401  (a Tensor method's)
    split,
    squeeze,
    stack,
    swapaxes,
    transpose,
    transpose_method,  # noqa: F401  (a Tensor method's)
)

__all__ = [
    "sum",
    "mean",
    "var",
    "max",
    "min",
    "logsumexp",
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "logical_and",
    "logical_or",
    "logical_not",
    "bitwise_not",
    "isfinite",
    "argmax",
    "any",
    "all",
    "add",
    "subtract",
    "multiply",
    "divide",
    "power",
    "maximum",
    "minimum",
    "negative",
    "exp",
    "log",
    "sqrt",
    "tanh",
    "sigmoid",
    "relu",
    "abs",
    "erf",
    "clip",
    "where",
    "masked_fill",
    "index_add",
    "topk",
    "reshape",
    "transpose",
    "swapaxes",
    "expand_dims",
    "squeeze",
    "broadcast_to",
    "concatenate",
    "stack",
    "split",
    "matmul",
    "tril",
    "triu",
]


def sum(x: Tensor, axis=None, keepdims=False) -> Tensor:
    """sum over axes"""
    return Sum.apply(x, axis=axis, keepdims=keepdims)


def mean(x: Tensor, axis=None, keepdims=False) -> Tensor:
    """mean over axes"""
    return Mean.apply(x, axis=axis, keepdims=keepdims)


def var(x: Tensor, axis=None, keepdims=False) -> Tensor:
    """Population variance (ddof=0), two passes: mean first, then mean squared deviation."""
    return Var.apply(x, axis=axis, keepdims=keepdims)


def max(x: Tensor, axis=None, keepdims=False) -> Tensor:
    """largest value over axes; ties split the gradient"""
    return Max.apply(x, axis=axis, keepdims=keepdims)


def min(x: Tensor, axis=None, keepdims=False) -> Tensor:
    """smallest value over axes; ties split the gradient"""
    return Min.apply(x, axis=axis, keepdims=keepdims)


def logsumexp(x: Tensor, axis=None, keepdims=False) -> Tensor:
    """log(sum(exp(x))), stable: the maximum is taken out first; all -inf gives -inf."""
    return LogSumExp.apply(x, axis=axis, keepdims=keepdims)


def add(a: Operand, b: Operand) -> Tensor:
    """a + b"""
    return Add.apply(a, b)


def subtract(a: Operand, b: Operand) -> Tensor:
    """a - b"""
    return Subtract.apply(a, b)


def multiply(a: Operand, b: Operand) -> Tensor:
    """a * b"""
    return Multiply.apply(a, b)


def divide(a: Operand, b: Operand) -> Tensor:
    """a / b"""
    return Divide.apply(a, b)


def power(a: Operand, b: Operand) -> Tensor:
    """a ** b; the gradient for b is asked only where b requires grad (it needs log a). As
    PyTorch's, the gradient for a is 0 where b = 0 and the one for b is 0 where a = 0 and
    b >= 0 (not the NaN or -inf of the formulas there).
    """
    return Power.apply(a, b)


def maximum(a: Operand, b: Operand) -> Tensor:
    """elementwise maximum; ties split the gradient"""
    return Maximum.apply(a, b)


def minimum(a: Operand, b: Operand) -> Tensor:
    """elementwise minimum; ties split the gradient"""
    return Minimum.apply(a, b)


def negative(x: Tensor) -> Tensor:
    """-x"""
    return Negative.apply(x)


def exp(x: Tensor) -> Tensor:
    """e ** x"""
    return Exp.apply(x)


def log(x: Tensor) -> Tensor:
    """natural logarithm"""
    return Log.apply(x)


def sqrt(x: Tensor) -> Tensor:
    """square root"""
    return Sqrt.apply(x)


def tanh(x: Tensor) -> Tensor:
    """hyperbolic tangent"""
    return Tanh.apply(x)


def tanh_backward(grad: Operand, y: Operand) -> Tensor:
    """grad · (1 - y²), tanh's backward from its output y, as one op (itself differentiable,
    so tanh has gradients of gradients).
    """
    return TanhBackward.apply(grad, y)


def sigmoid(x: Tensor) -> Tensor:
    """1 / (1 + e ** -x), without overflow"""
    return Sigmoid.apply(x)


def sigmoid_backward(grad: Operand, y: Operand) -> Tensor:
    """grad · y(1 - y), sigmoid's backward from its output y, as one op (differentiable)."""
    return SigmoidBackward.apply(grad, y)


def relu(x: Tensor) -> Tensor:
    """max(x, 0)"""
    return Relu.apply(x)


def abs(x: Tensor) -> Tensor:
    """|x|"""
    return Abs.apply(x)


def erf(x: Tensor) -> Tensor:
    """The error function (needed by the exact GELU), accurate to 1.5e-7, with the exact
    derivative 2/sqrt(pi)·exp(-x²).
    """
    return Erf.apply(x)


def clip(x: Tensor, min=None, max=None) -> Tensor:
    """Values limited to [low, high]; the gradient passes where the value was inside."""
    return Clip.apply(x, min=min, max=max)


def to_device(x: Tensor, device=None) -> Tensor:
    """A copy to another device: the one op whose output lives elsewhere than its input."""
    return ToDevice.apply(x, device=device)


def layer_norm_input_gradient(g: Operand, normalized: Operand, rstd: Operand, n_axes=1) -> Tensor:
    """rstd · (g - mean(g) - normalized · mean(g · normalized)), means over the normalized
    axes: LayerNorm's gradient for its input from g = grad · weight, as one op (six passes over
    the rows where the Tensor ops took eleven). Differentiable again.
    """
    return LayerNormInputGradient.apply(g, normalized, rstd, n_axes=n_axes)


tensor_methods.bind(sys.modules[__name__])  # Tensor's methods call these
