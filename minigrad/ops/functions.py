"""Every op's public function: `mg.<name>` for those in `__all__`.

Generated from the op declarations by scripts/make_ops_doc.py; do not edit.
An op declared on a function (`where`, `matmul`, ...) is that function, imported here; one
declared on its Function class is written out below, with the class's docstring, and so is
each function with `axis`/`keepdims`: it takes PyTorch's `dim`/`keepdim` too (`aliased`)."""

from ..creation import (
    tril,
    triu,
)
from ..tensor import (
    Operand,
    Tensor,
)
from .activations import (
    Celu,
    Elu,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyRelu,
    Logsigmoid,
    Mish,
    Relu6,
    Selu,
    Silu,
    Softplus,
    Softsign,
)
from .compare import (
    all as _all,
)
from .compare import (
    any as _any,
)
from .compare import (
    argmax as _argmax,
)
from .compare import (
    argmin as _argmin,
)
from .compare import (
    bitwise_left_shift,
    bitwise_not,
    bitwise_right_shift,
    bitwise_xor,
    equal,
    greater,
    greater_equal,
    isclose,
    isfinite,
    isinf,
    isnan,
    less,
    less_equal,
    logical_and,
    logical_not,
    logical_or,
    not_equal,
)
from .cumulative import (
    Cumprod,
    Cumsum,
    LogCumSumExp,
)
from .cumulative import (
    cummax as _cummax,
)
from .cumulative import (
    cummin as _cummin,
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
    lerp,
    masked_fill,
    where,
)
from .exponential import (
    Exp2,
    Expm1,
    Log1p,
    Log2,
    Log10,
    LogAddExp,
    Rsqrt,
)
from .gather import (
    diag,
    diagonal,
    masked_select,
    nonzero,
)
from .gather import (
    gather as _gather,
)
from .gather import (
    scatter as _scatter,
)
from .gather import (
    scatter_add as _scatter_add,
)
from .gather import (
    scatter_reduce as _scatter_reduce,
)
from .indexing import (
    getitem,  # noqa: F401  (a Tensor method's)
    index_add,
)
from .indexing import (
    topk as _topk,
)
from .linalg import (
    einsum,
    matmul,
)
from .nn import (
    LayerNormInputGradient,
)
from .nn import (
    log_softmax as _log_softmax,
)
from .nn import (
    normalize as _normalize,
)
from .nn import (
    softmax as _softmax,
)
from .nn import (
    softmin as _softmin,
)
from .reduce import (
    LogSumExp,
    Max,
    Mean,
    Min,
    Prod,
    Std,
    Sum,
    Var,
)
from .reduce import (
    std_mean as _std_mean,
)
from .registry import (
    aliased,
    missing,
)
from .rounding import (
    Ceil,
    CopySign,
    Floor,
    FloorDivide,
    Fmod,
    Remainder,
    Round,
    Sign,
    Trunc,
    div,
)
from .shape import (
    Flip,
    ToDevice,
    broadcast_to,
    flatten,
    meshgrid,
    repeat,
    repeat_method,  # noqa: F401  (a Tensor method's)
    reshape,
    reshape_method,  # noqa: F401  (a Tensor method's)
    swapaxes,
    transpose,
    transpose_method,  # noqa: F401  (a Tensor method's)
)
from .shape import (
    concatenate as _concatenate,
)
from .shape import (
    expand_dims as _expand_dims,
)
from .shape import (
    repeat_interleave as _repeat_interleave,
)
from .shape import (
    roll as _roll,
)
from .shape import (
    split as _split,
)
from .shape import (
    squeeze as _squeeze,
)
from .shape import (
    stack as _stack,
)
from .shape import (
    unflatten as _unflatten,
)
from .shape import (
    unfold as _unfold,
)
from .sorting import (
    argsort as _argsort,
)
from .sorting import (
    sort as _sort,
)
from .trigonometric import (
    Acos,
    Acosh,
    Asin,
    Asinh,
    Atan,
    Atanh,
    Cos,
    Cosh,
    Sin,
    Sinh,
    Tan,
)

__all__ = [
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
    "lerp",
    "masked_fill",
    "sum",
    "mean",
    "var",
    "std",
    "std_mean",
    "prod",
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
    "bitwise_xor",
    "bitwise_left_shift",
    "bitwise_right_shift",
    "logical_not",
    "bitwise_not",
    "isfinite",
    "isinf",
    "isnan",
    "isclose",
    "argmax",
    "argmin",
    "any",
    "all",
    "index_add",
    "topk",
    "flip",
    "reshape",
    "transpose",
    "swapaxes",
    "expand_dims",
    "squeeze",
    "broadcast_to",
    "concatenate",
    "stack",
    "split",
    "flatten",
    "unflatten",
    "repeat",
    "repeat_interleave",
    "roll",
    "meshgrid",
    "unfold",
    "cumsum",
    "cumprod",
    "cummax",
    "cummin",
    "logcumsumexp",
    "log2",
    "log10",
    "log1p",
    "expm1",
    "exp2",
    "rsqrt",
    "logaddexp",
    "gather",
    "scatter",
    "scatter_add",
    "scatter_reduce",
    "masked_select",
    "nonzero",
    "diagonal",
    "diag",
    "matmul",
    "einsum",
    "sign",
    "floor",
    "ceil",
    "trunc",
    "round",
    "copysign",
    "fmod",
    "remainder",
    "floor_divide",
    "div",
    "sort",
    "argsort",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "asinh",
    "acosh",
    "atanh",
    "tril",
    "triu",
]


def leaky_relu(x: Tensor, negative_slope=0.01) -> Tensor:
    """x where x > 0, else negative_slope · x"""
    return LeakyRelu.apply(x, negative_slope=negative_slope)


def elu(x: Tensor, alpha=1.0) -> Tensor:
    """x where x > 0, else alpha · (e ** x - 1)"""
    return Elu.apply(x, alpha=alpha)


def celu(x: Tensor, alpha=1.0) -> Tensor:
    """max(0, x) + min(0, alpha · (e ** (x / alpha) - 1))"""
    return Celu.apply(x, alpha=alpha)


def selu(x: Tensor) -> Tensor:
    """scale · elu(x, alpha), self-normalizing"""
    return Selu.apply(x)


def silu(x: Tensor) -> Tensor:
    """x · sigmoid(x) (swish)"""
    return Silu.apply(x)


def mish(x: Tensor) -> Tensor:
    """x · tanh(softplus(x))"""
    return Mish.apply(x)


def softplus(x: Tensor, beta=1.0, threshold=20.0) -> Tensor:
    """log(1 + e ** (beta · x)) / beta, x itself past the threshold"""
    return Softplus.apply(x, beta=beta, threshold=threshold)


def softsign(x: Tensor) -> Tensor:
    """x / (1 + |x|)"""
    return Softsign.apply(x)


def hardsigmoid(x: Tensor) -> Tensor:
    """clip(x / 6 + 1/2, 0, 1)"""
    return Hardsigmoid.apply(x)


def hardswish(x: Tensor) -> Tensor:
    """x · clip(x + 3, 0, 6) / 6"""
    return Hardswish.apply(x)


def hardtanh(x: Tensor, min_val=-1.0, max_val=1.0) -> Tensor:
    """x limited to [min_val, max_val]"""
    return Hardtanh.apply(x, min_val=min_val, max_val=max_val)


def relu6(x: Tensor) -> Tensor:
    """min(max(x, 0), 6)"""
    return Relu6.apply(x)


def logsigmoid(x: Tensor) -> Tensor:
    """log(sigmoid(x)), without overflow"""
    return Logsigmoid.apply(x)


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
    b >= 0 (not the NaN or -inf of the formulas there). Integers to integer powers stay
    integers (negative powers refused, as NumPy and PyTorch do).
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


def sum(x: Tensor, axis=None, keepdims=False, dtype=None, *, dim=None, keepdim=None) -> Tensor:
    """The sum over axes; `dtype` the accumulator's and the result's (NumPy's and PyTorch's:
    int32 summed as int64, float32 as float64), the gradient back in the input's dtype.
    """
    if dim is not None:
        axis = aliased("sum", "axis", axis, None, dim)
    if keepdim is not None:
        keepdims = aliased("sum", "keepdims", keepdims, False, keepdim)
    return Sum.apply(x, axis=axis, keepdims=keepdims, dtype=dtype)


def mean(x: Tensor, axis=None, keepdims=False, *, dim=None, keepdim=None) -> Tensor:
    """mean over axes"""
    if dim is not None:
        axis = aliased("mean", "axis", axis, None, dim)
    if keepdim is not None:
        keepdims = aliased("mean", "keepdims", keepdims, False, keepdim)
    return Mean.apply(x, axis=axis, keepdims=keepdims)


def var(x: Tensor, axis=None, keepdims=False, correction=0, *, dim=None, keepdim=None) -> Tensor:
    """Variance: the mean squared deviation with N - correction as the divisor (correction=0:
    the population variance, NumPy's default; 1: the unbiased one, PyTorch's default); two
    passes: mean first, then the squared deviations.
    """
    if dim is not None:
        axis = aliased("var", "axis", axis, None, dim)
    if keepdim is not None:
        keepdims = aliased("var", "keepdims", keepdims, False, keepdim)
    return Var.apply(x, axis=axis, keepdims=keepdims, correction=correction)


def std(x: Tensor, axis=None, keepdims=False, correction=0, *, dim=None, keepdim=None) -> Tensor:
    """sqrt of the variance with divisor N - correction (see var)."""
    if dim is not None:
        axis = aliased("std", "axis", axis, None, dim)
    if keepdim is not None:
        keepdims = aliased("std", "keepdims", keepdims, False, keepdim)
    return Std.apply(x, axis=axis, keepdims=keepdims, correction=correction)


def std_mean(
    x,
    axis=None,
    keepdims=False,
    correction=0,
    *,
    dim=None,
    keepdim=None,
) -> tuple[Tensor, Tensor]:
    """(std, mean) over axes"""
    if dim is not None:
        axis = aliased("std_mean", "axis", axis, None, dim)
    if keepdim is not None:
        keepdims = aliased("std_mean", "keepdims", keepdims, False, keepdim)
    return _std_mean(x, axis=axis, keepdims=keepdims, correction=correction)


def prod(x: Tensor, axis=None, keepdims=False, *, dim=None, keepdim=None) -> Tensor:
    """The product over axes. Its gradient, the product of the other elements, is
    output / x where no element is 0 (differentiable again); where one is, it is computed
    on the arrays from prefix and suffix products (first derivatives only).
    """
    if dim is not None:
        axis = aliased("prod", "axis", axis, None, dim)
    if keepdim is not None:
        keepdims = aliased("prod", "keepdims", keepdims, False, keepdim)
    return Prod.apply(x, axis=axis, keepdims=keepdims)


def max(x: Tensor, axis=None, keepdims=False, *, dim=None, keepdim=None) -> Tensor:
    """largest value over axes; ties split the gradient"""
    if dim is not None:
        axis = aliased("max", "axis", axis, None, dim)
    if keepdim is not None:
        keepdims = aliased("max", "keepdims", keepdims, False, keepdim)
    return Max.apply(x, axis=axis, keepdims=keepdims)


def min(x: Tensor, axis=None, keepdims=False, *, dim=None, keepdim=None) -> Tensor:
    """smallest value over axes; ties split the gradient"""
    if dim is not None:
        axis = aliased("min", "axis", axis, None, dim)
    if keepdim is not None:
        keepdims = aliased("min", "keepdims", keepdims, False, keepdim)
    return Min.apply(x, axis=axis, keepdims=keepdims)


def logsumexp(x: Tensor, axis=None, keepdims=False, *, dim=None, keepdim=None) -> Tensor:
    """log(sum(exp(x))), stable: the maximum is taken out first; all -inf gives -inf."""
    if dim is not None:
        axis = aliased("logsumexp", "axis", axis, None, dim)
    if keepdim is not None:
        keepdims = aliased("logsumexp", "keepdims", keepdims, False, keepdim)
    return LogSumExp.apply(x, axis=axis, keepdims=keepdims)


def argmax(x, axis=None, keepdims=False, *, dim=None, keepdim=None) -> Tensor:
    """Index of the largest value (the first one at ties), int64."""
    if dim is not None:
        axis = aliased("argmax", "axis", axis, None, dim)
    if keepdim is not None:
        keepdims = aliased("argmax", "keepdims", keepdims, False, keepdim)
    return _argmax(x, axis=axis, keepdims=keepdims)


def argmin(x, axis=None, keepdims=False, *, dim=None, keepdim=None) -> Tensor:
    """Index of the smallest value (the first one at ties), int64."""
    if dim is not None:
        axis = aliased("argmin", "axis", axis, None, dim)
    if keepdim is not None:
        keepdims = aliased("argmin", "keepdims", keepdims, False, keepdim)
    return _argmin(x, axis=axis, keepdims=keepdims)


def any(x, axis=None, keepdims=False, *, dim=None, keepdim=None) -> Tensor:
    """whether any element is True"""
    if dim is not None:
        axis = aliased("any", "axis", axis, None, dim)
    if keepdim is not None:
        keepdims = aliased("any", "keepdims", keepdims, False, keepdim)
    return _any(x, axis=axis, keepdims=keepdims)


def all(x, axis=None, keepdims=False, *, dim=None, keepdim=None) -> Tensor:
    """whether every element is True"""
    if dim is not None:
        axis = aliased("all", "axis", axis, None, dim)
    if keepdim is not None:
        keepdims = aliased("all", "keepdims", keepdims, False, keepdim)
    return _all(x, axis=axis, keepdims=keepdims)


def topk(x, k, axis=-1, largest=True, *, dim=None) -> tuple[Tensor, Tensor]:
    """The k largest values along `axis`, largest first (`largest=False`: the k smallest,
    smallest first), and their int64 indices.

    The values are differentiable (a getitem of x); the indices are not.
    """
    if dim is not None:
        axis = aliased("topk", "axis", axis, -1, dim)
    return _topk(x, k, axis=axis, largest=largest)


def flip(x: Tensor, axis=None, *, dim=None) -> Tensor:
    """the order of elements reversed along axes (all: None)"""
    if dim is not None:
        axis = aliased("flip", "axis", axis, None, dim)
    return Flip.apply(x, axis=axis)


def to_device(x: Tensor, device=None) -> Tensor:
    """A copy to another device: the one op whose output lives elsewhere than its input."""
    return ToDevice.apply(x, device=device)


def expand_dims(x, axis=None, *, dim=None) -> Tensor:
    """a new axis of size 1"""
    if dim is not None:
        axis = aliased("expand_dims", "axis", axis, None, dim)
    if axis is None:
        missing("expand_dims", axis=axis)
    return _expand_dims(x, axis)


def squeeze(x, axis=None, *, dim=None) -> Tensor:
    """axes of size 1 removed"""
    if dim is not None:
        axis = aliased("squeeze", "axis", axis, None, dim)
    return _squeeze(x, axis=axis)


def concatenate(tensors, axis=0, *, dim=None) -> Tensor:
    """tensors joined along an axis"""
    if dim is not None:
        axis = aliased("concatenate", "axis", axis, 0, dim)
    return _concatenate(tensors, axis=axis)


def stack(tensors, axis=0, *, dim=None) -> Tensor:
    """tensors joined along a new axis"""
    if dim is not None:
        axis = aliased("stack", "axis", axis, 0, dim)
    return _stack(tensors, axis=axis)


def split(x, indices_or_sections, axis=0, *, dim=None) -> list[Tensor]:
    """NumPy's split: N equal sections, or the indices where each new piece starts."""
    if dim is not None:
        axis = aliased("split", "axis", axis, 0, dim)
    return _split(x, indices_or_sections, axis=axis)


def unflatten(x, axis=None, sizes=None, *, dim=None) -> Tensor:
    """PyTorch's unflatten (`dim`): axis `axis` reshaped to `sizes` (one may be -1)."""
    if dim is not None:
        axis = aliased("unflatten", "axis", axis, None, dim)
    if axis is None or sizes is None:
        missing("unflatten", axis=axis, sizes=sizes)
    return _unflatten(x, axis, sizes)


def repeat_interleave(x, repeats, axis=None, *, dim=None) -> Tensor:
    """PyTorch's repeat_interleave (`dim`): `repeats` an int or one count per element."""
    if dim is not None:
        axis = aliased("repeat_interleave", "axis", axis, None, dim)
    return _repeat_interleave(x, repeats, axis=axis)


def roll(x, shifts, axis=None, *, dim=None) -> Tensor:
    """PyTorch's roll (`dims`): `shifts` and `axis` ints or tuples of one length; axis None
    rolls the flattened tensor.
    """
    if dim is not None:
        axis = aliased("roll", "axis", axis, None, dim)
    return _roll(x, shifts, axis=axis)


def unfold(x, axis=None, size=None, step=None, *, dim=None) -> Tensor:
    """windows of `size` every `step` along an axis, the window last"""
    if dim is not None:
        axis = aliased("unfold", "axis", axis, None, dim)
    if axis is None or size is None or step is None:
        missing("unfold", axis=axis, size=size, step=step)
    return _unfold(x, axis, size, step)


def cumsum(x: Tensor, axis=-1, *, dim=None) -> Tensor:
    """running sums along an axis"""
    if dim is not None:
        axis = aliased("cumsum", "axis", axis, -1, dim)
    return Cumsum.apply(x, axis=axis)


def cumprod(x: Tensor, axis=-1, *, dim=None) -> Tensor:
    """Running products; the gradient sum_{j >= i} grad_j · out_j / x_i (x nonzero)."""
    if dim is not None:
        axis = aliased("cumprod", "axis", axis, -1, dim)
    return Cumprod.apply(x, axis=axis)


def cummax(x, axis=-1, *, dim=None) -> tuple[Tensor, Tensor]:
    """running maxima along an axis (differentiable) and their int64 indices"""
    if dim is not None:
        axis = aliased("cummax", "axis", axis, -1, dim)
    return _cummax(x, axis=axis)


def cummin(x, axis=-1, *, dim=None) -> tuple[Tensor, Tensor]:
    """running minima along an axis (differentiable) and their int64 indices"""
    if dim is not None:
        axis = aliased("cummin", "axis", axis, -1, dim)
    return _cummin(x, axis=axis)


def logcumsumexp(x: Tensor, axis=-1, *, dim=None) -> Tensor:
    """log(cumsum(exp(x))): NumPy's logaddexp accumulated (no overflow, no underflow to
    -inf). The gradient, sum over j >= i of grad_j · exp(x_i - out_j), is taken over every pair
    (i, j) of the axis, each exponent <= 0, so it is exact on any range (memory: the axis's
    length squared per row).
    """
    if dim is not None:
        axis = aliased("logcumsumexp", "axis", axis, -1, dim)
    return LogCumSumExp.apply(x, axis=axis)


def log2(x: Tensor) -> Tensor:
    """base-2 logarithm"""
    return Log2.apply(x)


def log10(x: Tensor) -> Tensor:
    """base-10 logarithm"""
    return Log10.apply(x)


def log1p(x: Tensor) -> Tensor:
    """log(1 + x), accurate near 0"""
    return Log1p.apply(x)


def expm1(x: Tensor) -> Tensor:
    """e ** x - 1, accurate near 0"""
    return Expm1.apply(x)


def exp2(x: Tensor) -> Tensor:
    """2 ** x"""
    return Exp2.apply(x)


def rsqrt(x: Tensor) -> Tensor:
    """1 / sqrt(x)"""
    return Rsqrt.apply(x)


def logaddexp(a: Operand, b: Operand) -> Tensor:
    """log(e^a + e^b) as max(a, b) + log1p(e^-|a - b|): no overflow; two -inf give -inf."""
    return LogAddExp.apply(a, b)


def gather(x, axis=None, index=None, *, dim=None) -> Tensor:
    """x's values at `index` along an axis: `out[i][j] = x[i][index[i][j]]` (axis 1)"""
    if dim is not None:
        axis = aliased("gather", "axis", axis, None, dim)
    if axis is None or index is None:
        missing("gather", axis=axis, index=index)
    return _gather(x, axis, index)


def scatter(x, axis=None, index=None, src=None, *, dim=None) -> Tensor:
    """x with src written at index along an axis"""
    if dim is not None:
        axis = aliased("scatter", "axis", axis, None, dim)
    if axis is None or index is None or src is None:
        missing("scatter", axis=axis, index=index, src=src)
    return _scatter(x, axis, index, src)


def scatter_add(x, axis=None, index=None, src=None, *, dim=None) -> Tensor:
    """x with src summed in at index along an axis (repeats accumulate)"""
    if dim is not None:
        axis = aliased("scatter_add", "axis", axis, None, dim)
    if axis is None or index is None or src is None:
        missing("scatter_add", axis=axis, index=index, src=src)
    return _scatter_add(x, axis, index, src)


def scatter_reduce(
    x,
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
        axis = aliased("scatter_reduce", "axis", axis, None, dim)
    if axis is None or index is None or src is None or reduce is None:
        missing("scatter_reduce", axis=axis, index=index, src=src, reduce=reduce)
    return _scatter_reduce(x, axis, index, src, reduce, include_self=include_self)


def softmax(x, axis=-1, mask=None, *, dim=None) -> Tensor:
    """Probabilities along `axis`; entries where `mask` is True get 0. A fully masked row is all
    zeros, with zero gradient.
    """
    if dim is not None:
        axis = aliased("softmax", "axis", axis, -1, dim)
    return _softmax(x, axis=axis, mask=mask)


def softmin(x, axis=-1, *, dim=None) -> Tensor:
    """softmax(-x): probabilities, small values first"""
    if dim is not None:
        axis = aliased("softmin", "axis", axis, -1, dim)
    return _softmin(x, axis=axis)


def normalize(x, p=2.0, axis=1, eps=1e-12, *, dim=None) -> Tensor:
    """x divided by its p-norm along `axis` (PyTorch's `dim`, default 1), the norm at least
    eps.
    """
    if dim is not None:
        axis = aliased("normalize", "axis", axis, 1, dim)
    return _normalize(x, p=p, axis=axis, eps=eps)


def log_softmax(x, axis=-1, *, dim=None) -> Tensor:
    """log of softmax, stable"""
    if dim is not None:
        axis = aliased("log_softmax", "axis", axis, -1, dim)
    return _log_softmax(x, axis=axis)


def layer_norm_input_gradient(g: Operand, normalized: Operand, rstd: Operand, n_axes=1) -> Tensor:
    """rstd · (g - mean(g) - normalized · mean(g · normalized)), means over the normalized
    axes: LayerNorm's gradient for its input from g = grad · weight, as one op (six passes over
    the rows where the Tensor ops took eleven). Differentiable again.
    """
    return LayerNormInputGradient.apply(g, normalized, rstd, n_axes=n_axes)


def sign(x: Tensor) -> Tensor:
    """-1, 0 or 1 by the sign of x; zero gradient"""
    return Sign.apply(x)


def floor(x: Tensor) -> Tensor:
    """largest integer <= x; zero gradient"""
    return Floor.apply(x)


def ceil(x: Tensor) -> Tensor:
    """smallest integer >= x; zero gradient"""
    return Ceil.apply(x)


def trunc(x: Tensor) -> Tensor:
    """x rounded toward 0; zero gradient"""
    return Trunc.apply(x)


def round(x: Tensor, decimals=0) -> Tensor:
    """x rounded to `decimals` places, halves to even; zero gradient"""
    return Round.apply(x, decimals=decimals)


def copysign(a: Operand, b: Operand) -> Tensor:
    """|a| with the sign of b"""
    return CopySign.apply(a, b)


def fmod(a: Operand, b: Operand) -> Tensor:
    """a - trunc(a / b) · b: the remainder with a's sign (C's fmod)"""
    return Fmod.apply(a, b)


def remainder(a: Operand, b: Operand) -> Tensor:
    """a - floor(a / b) · b: the remainder with b's sign (Python's %)"""
    return Remainder.apply(a, b)


def floor_divide(a: Operand, b: Operand) -> Tensor:
    """floor(a / b) (Python's //); zero gradient"""
    return FloorDivide.apply(a, b)


def sort(x, axis=-1, descending=False, *, dim=None) -> tuple[Tensor, Tensor]:
    """values sorted along an axis (differentiable) and their int64 indices"""
    if dim is not None:
        axis = aliased("sort", "axis", axis, -1, dim)
    return _sort(x, axis=axis, descending=descending)


def argsort(x, axis=-1, descending=False, *, dim=None) -> Tensor:
    """the int64 indices that sort x along an axis (stable)"""
    if dim is not None:
        axis = aliased("argsort", "axis", axis, -1, dim)
    return _argsort(x, axis=axis, descending=descending)


def sin(x: Tensor) -> Tensor:
    """sine"""
    return Sin.apply(x)


def cos(x: Tensor) -> Tensor:
    """cosine"""
    return Cos.apply(x)


def tan(x: Tensor) -> Tensor:
    """tangent"""
    return Tan.apply(x)


def asin(x: Tensor) -> Tensor:
    """inverse sine"""
    return Asin.apply(x)


def acos(x: Tensor) -> Tensor:
    """inverse cosine"""
    return Acos.apply(x)


def atan(x: Tensor) -> Tensor:
    """inverse tangent"""
    return Atan.apply(x)


def sinh(x: Tensor) -> Tensor:
    """hyperbolic sine"""
    return Sinh.apply(x)


def cosh(x: Tensor) -> Tensor:
    """hyperbolic cosine"""
    return Cosh.apply(x)


def asinh(x: Tensor) -> Tensor:
    """inverse hyperbolic sine"""
    return Asinh.apply(x)


def acosh(x: Tensor) -> Tensor:
    """inverse hyperbolic cosine"""
    return Acosh.apply(x)


def atanh(x: Tensor) -> Tensor:
    """inverse hyperbolic tangent"""
    return Atanh.apply(x)
