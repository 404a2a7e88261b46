"""The op table: every op minigrad offers, with what it takes to check it.

One entry per public callable: its name, the callable, the `Function` classes it runs, a
NumPy reference, and a declarative input spec (a shape rule, a value range, kinks to stay
away from, flags). `tests/strategies.py` turns the specs into hypothesis strategies and the
generated tests check every entry: values against the reference, gradients and gradients of
gradients against finite differences, dtypes, inputs left unmodified. `docs/ops.md` is
generated from this table (`scripts/make_ops_doc.py`).

Adding an op is one `Function` subclass and one entry in `OPS`.
"""

import inspect
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .. import creation
from ..autograd import Function
from ..nn import functional as F
from ..tensor import Tensor
from . import compare, elementwise, indexing, linalg, nn, reduce, shape
from .elementwise import BinaryFunction
from .reduce import Reduction, _Extremum

# Shared bases that are never applied themselves: not expected in the table.
ABSTRACT_FUNCTIONS = (Function, BinaryFunction, Reduction, _Extremum)

SHAPE_RULES = {
    "unary": "one tensor of 0-4 dims",
    "elementwise": "two tensors whose shapes broadcast (NumPy rules)",
    "where": "a boolean condition and two tensors, the three shapes broadcasting",
    "masked_fill": "a tensor and a boolean mask that broadcasts to its shape",
    "reduce": "one tensor; `axis` None, an int or a tuple (negative allowed); `keepdims`",
    "arg-reduce": "one tensor; `axis` None or an int; `keepdims`",
    "softmax-like": "one tensor of >= 1 dims and an int `axis`",
    "matmul": "1-D or n-D operands; batch axes broadcast",
    "reshape": "one tensor and a shape of the same size (maybe with -1)",
    "transpose": "one tensor and a permutation of its axes (or None)",
    "swapaxes": "one tensor of >= 1 dims and two axes",
    "expand_dims": "one tensor and a new axis position",
    "squeeze": "one tensor with some axes of size 1; `axis` None or one of them",
    "broadcast_to": "one tensor and a shape it broadcasts to",
    "concatenate": "a list of 1-3 tensors equal but along `axis`",
    "stack": "a list of 1-3 tensors of one shape and a new axis position",
    "split": "one tensor, a number of equal sections or sorted split points, an axis",
    "index": "one tensor and an index: ints, slices, None, Ellipsis, integer arrays "
             "(with repeats) or a boolean array",
    "index_add": "values, an index as for `index`, and the shape they are added into",
    "topk": "one tensor of >= 1 dims, k, an axis",
    "layer_norm": "x (..., *normalized_shape), optional weight and bias of normalized_shape",
    "cross_entropy": "logits (..., C), int targets (...) in [0, C), some = ignore_index",
    "attention": "q (..., Lq, d), k (..., Lk, d), v (..., Lk, dv), batch axes broadcasting",
    "embedding": "int ids of 0-2 dims (with repeats), weight (rows, dim)",
    "linear": "x (..., in), weight (out, in), bias (out,) or None",
}


@dataclass(frozen=True)
class InputSpec:
    """How to draw an op's inputs: a shape rule (a key of SHAPE_RULES) and the values."""

    rule: str
    low: float = -2.0  # floating inputs are drawn in [low, high]
    high: float = 2.0
    kinks: tuple = ()  # points where the op is not smooth: values stay a margin away
    distinct: bool = False  # all values pairwise apart: no ties (max, min, sort)
    dtype: str = "float"  # the drawn tensors: "float" or "bool"
    min_ndim: int = 0  # for "unary": the fewest dimensions (tril needs 2)
    mask: bool = False  # also an optional boolean `mask` (True = masked out)
    options: dict = field(default_factory=dict)  # keyword -> the choices it is drawn from


@dataclass(frozen=True)
class Op:
    """One public op: `call(*args, **kwargs)` computes what `reference` computes in NumPy."""

    name: str
    call: Callable
    functions: tuple  # the Function classes it runs (backward included)
    reference: Callable | None  # None for random ops: checked for repeatability instead
    spec: InputSpec
    summary: str
    differentiable: bool = True
    gradgrad: bool = True  # its backward is differentiable too
    random: bool = False  # draws from the generator: evaluate with the seed reset each time
    eps: float = 1e-6  # finite-difference step (larger for linear ops that round their output)
    accuracy: float = 0.0  # absolute error allowed against the reference (approximations)

    @property
    def float_only(self):
        """Whether integer tensors are refused (DTypeError)."""
        return any(fn.float_only for fn in self.functions)


# ----- NumPy references (straightforward formulas; small values, no stability tricks needed) --

erf_reference = np.vectorize(math.erf, otypes=[np.float64])


def gelu_reference(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + erf_reference(x / math.sqrt(2)))


def logsumexp_reference(x, axis=None, keepdims=False):
    return np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))


def softmax_reference(x, axis=-1, mask=None):
    """exp(x) / sum(exp(x)) with masked entries left out; a row left empty is all zeros."""
    e = np.exp(x) if mask is None else np.where(mask, 0.0, np.exp(x))
    total = e.sum(axis=axis, keepdims=True)
    return e / np.where(total == 0, 1, total)


def log_softmax_reference(x, axis=-1):
    return x - logsumexp_reference(x, axis=axis, keepdims=True)


def layer_norm_reference(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    axes = tuple(range(-len(normalized_shape), 0))
    out = (x - x.mean(axis=axes, keepdims=True)) / np.sqrt(x.var(axis=axes, keepdims=True) + eps)
    if weight is not None:
        out = out * weight
    return out if bias is None else out + bias


def cross_entropy_reference(logits, target, ignore_index=None, label_smoothing=0.0,
                            reduction="mean"):
    """-sum(q · log p) with q = (1 - ε)·onehot(target) + ε/C, as PyTorch defines smoothing."""
    classes = logits.shape[-1]
    valid = np.ones(target.shape, bool) if ignore_index is None else target != ignore_index
    q = (1 - label_smoothing) * np.eye(classes)[np.where(valid, target, 0)] + (
        label_smoothing / classes)
    losses = np.where(valid, -(q * log_softmax_reference(logits)).sum(axis=-1), 0.0)
    if reduction == "none":
        return losses
    return losses.sum() / (max(valid.sum(), 1) if reduction == "mean" else 1)


def attention_reference(q, k, v, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    return softmax_reference(scores, axis=-1, mask=mask) @ v


def linear_reference(x, weight, bias=None):
    out = x @ weight.T
    return out if bias is None else out + bias


def topk_reference(x, k, axis=-1):
    indices = np.take(np.argsort(-x, axis=axis, kind="stable"), np.arange(k), axis=axis)
    return np.take_along_axis(x, indices, axis=axis), indices


def index_add_reference(values, index, shape):
    out = np.zeros(shape, values.dtype)
    positions = np.arange(out.size).reshape(shape)[index]
    np.add.at(out.reshape(-1), positions, values)
    return out


def masked_fill_reference(x, mask, value):
    return np.where(mask, np.array(value).astype(x.dtype), x)


# ----- the table -----------------------------------------------------------------------------

POSITIVE = {"low": 0.2, "high": 3.0}  # the domain of log and sqrt
BINARY = InputSpec("elementwise")


def _comparison(name, call, reference, summary):
    return Op(name, call, (), reference, BINARY, summary, differentiable=False)


OPS = (
    # elementwise arithmetic, broadcasting
    Op("add", elementwise.add, (elementwise.Add,), np.add, BINARY, "a + b"),
    Op("subtract", elementwise.subtract, (elementwise.Subtract,), np.subtract, BINARY, "a - b"),
    Op("multiply", elementwise.multiply, (elementwise.Multiply,), np.multiply, BINARY, "a * b"),
    Op("divide", elementwise.divide, (elementwise.Divide,), np.divide,
       InputSpec("elementwise", kinks=(0.0,)), "a / b"),
    Op("power", elementwise.power, (elementwise.Power,), np.power,
       InputSpec("elementwise", low=0.5, high=2.0), "a ** b"),
    Op("maximum", elementwise.maximum, (elementwise.Maximum,), np.maximum,
       InputSpec("elementwise", distinct=True), "elementwise maximum; ties split the gradient"),
    Op("minimum", elementwise.minimum, (elementwise.Minimum,), np.minimum,
       InputSpec("elementwise", distinct=True), "elementwise minimum; ties split the gradient"),
    # elementwise unary
    Op("negative", elementwise.negative, (elementwise.Negative,), np.negative,
       InputSpec("unary"), "-x"),
    Op("exp", elementwise.exp, (elementwise.Exp,), np.exp, InputSpec("unary"), "e ** x"),
    Op("log", elementwise.log, (elementwise.Log,), np.log, InputSpec("unary", **POSITIVE),
       "natural logarithm"),
    Op("sqrt", elementwise.sqrt, (elementwise.Sqrt,), np.sqrt, InputSpec("unary", **POSITIVE),
       "square root"),
    Op("tanh", elementwise.tanh, (elementwise.Tanh,), np.tanh, InputSpec("unary"),
       "hyperbolic tangent"),
    Op("tanh_backward", elementwise.TanhBackward.apply, (elementwise.TanhBackward,),
       lambda grad, y: grad * (1 - y * y), BINARY, "grad · (1 - y²): tanh's backward"),
    Op("sigmoid_backward", elementwise.SigmoidBackward.apply, (elementwise.SigmoidBackward,),
       lambda grad, y: grad * y * (1 - y), BINARY, "grad · y(1 - y): sigmoid's backward"),
    Op("sigmoid", elementwise.sigmoid, (elementwise.Sigmoid,), lambda x: 1 / (1 + np.exp(-x)),
       InputSpec("unary", low=-4.0, high=4.0), "1 / (1 + e ** -x), without overflow"),
    Op("relu", elementwise.relu, (elementwise.Relu,), lambda x: np.maximum(x, 0),
       InputSpec("unary", kinks=(0.0,)), "max(x, 0)"),
    Op("abs", elementwise.abs, (elementwise.Abs,), np.abs, InputSpec("unary", kinks=(0.0,)),
       "|x|"),
    Op("erf", elementwise.erf, (elementwise.Erf,), erf_reference, InputSpec("unary"),
       "error function (rational approximation, |error| < 1.5e-7)", accuracy=1.5e-7),
    Op("clip", elementwise.clip, (elementwise.Clip,),
       lambda x, min=None, max=None: np.clip(x, min, max),
       InputSpec("unary", kinks=(-1.0, 1.0), options={"min": (None, -1.0), "max": (None, 1.0)}),
       "x limited to [min, max]"),
    Op("where", elementwise.where, (elementwise.Where,), np.where, InputSpec("where"),
       "a where the condition is True, else b"),
    Op("masked_fill", elementwise.masked_fill, (elementwise.MaskedFill,), masked_fill_reference,
       InputSpec("masked_fill", options={"value": (0.0, -1.5)}),
       "value where the mask is True (True = masked out)"),
    Op("tril", creation.tril, (elementwise.MaskedFill,), np.tril,
       InputSpec("unary", min_ndim=2, options={"k": (-1, 0, 1)}), "zeros above the k-th diagonal"),
    Op("triu", creation.triu, (elementwise.MaskedFill,), np.triu,
       InputSpec("unary", min_ndim=2, options={"k": (-1, 0, 1)}), "zeros below the k-th diagonal"),
    Op("astype", Tensor.astype, (elementwise.AsType,), lambda x, dtype: x.astype(dtype),
       InputSpec("unary", options={"dtype": ("float32",)}), "a change of dtype", eps=0.1),
    # reductions
    Op("sum", reduce.sum, (reduce.Sum,), np.sum, InputSpec("reduce"), "sum over axes"),
    Op("mean", reduce.mean, (reduce.Mean,), np.mean, InputSpec("reduce"), "mean over axes"),
    Op("var", reduce.var, (reduce.Var,), np.var, InputSpec("reduce"),
       "population variance (ddof=0) over axes"),
    Op("max", reduce.max, (reduce.Max,), np.max, InputSpec("reduce", distinct=True),
       "largest value over axes; ties split the gradient"),
    Op("min", reduce.min, (reduce.Min,), np.min, InputSpec("reduce", distinct=True),
       "smallest value over axes; ties split the gradient"),
    Op("logsumexp", reduce.logsumexp, (reduce.LogSumExp,), logsumexp_reference,
       InputSpec("reduce"), "log(sum(exp(x))) over axes, stable"),
    # products
    Op("matmul", linalg.matmul, (linalg.MatMul, shape.Reshape), np.matmul, InputSpec("matmul"),
       "a @ b as NumPy: 1-D operands, broadcast batches"),
    # shape
    Op("reshape", shape.reshape, (shape.Reshape,), np.reshape, InputSpec("reshape"),
       "the same elements in another shape"),
    Op("transpose", shape.transpose, (shape.Transpose,), np.transpose, InputSpec("transpose"),
       "a permutation of the axes (none given: reversed)"),
    Op("swapaxes", shape.swapaxes, (shape.Transpose,), np.swapaxes, InputSpec("swapaxes"),
       "two axes exchanged"),
    Op("expand_dims", shape.expand_dims, (shape.Reshape,), np.expand_dims,
       InputSpec("expand_dims"), "a new axis of size 1"),
    Op("squeeze", shape.squeeze, (shape.Reshape,), np.squeeze, InputSpec("squeeze"),
       "axes of size 1 removed"),
    Op("broadcast_to", shape.broadcast_to, (shape.BroadcastTo,), np.broadcast_to,
       InputSpec("broadcast_to"), "x repeated along new or size-1 axes"),
    Op("concatenate", shape.concatenate, (shape.Concatenate,), np.concatenate,
       InputSpec("concatenate"), "tensors joined along an axis"),
    Op("stack", shape.stack, (shape.Concatenate, shape.Reshape), np.stack, InputSpec("stack"),
       "tensors joined along a new axis"),
    Op("split", shape.split, (indexing.GetItem,), np.split, InputSpec("split"),
       "pieces along an axis (equal sections or split points)"),
    Op("to_device", shape.to_device, (shape.ToDevice,), lambda x, device: x,
       InputSpec("unary", options={"device": ("cpu",)}), "a copy on another device"),
    # indexing
    Op("getitem", operator.getitem, (indexing.GetItem, indexing.IndexAdd), operator.getitem,
       InputSpec("index"), "x[index]; repeated indices accumulate in the gradient"),
    Op("index_add", indexing.index_add, (indexing.IndexAdd, indexing.GetItem),
       index_add_reference, InputSpec("index_add"),
       "zeros(shape) with values summed in at index (deterministic)"),
    Op("topk", indexing.topk, (indexing.GetItem,), topk_reference,
       InputSpec("topk", distinct=True), "the k largest values (differentiable), their indices"),
    # fused neural-network ops
    Op("softmax", F.softmax, (nn.Softmax,), softmax_reference,
       InputSpec("softmax-like", mask=True),
       "probabilities along an axis; masked entries get 0, a fully masked row is zeros"),
    Op("log_softmax", F.log_softmax, (nn.LogSoftmax,), log_softmax_reference,
       InputSpec("softmax-like"), "log of softmax, stable"),
    Op("layer_norm", F.layer_norm, (nn.LayerNorm, nn.LayerNormInputGradient), layer_norm_reference,
       InputSpec("layer_norm", distinct=True), "normalized over trailing axes, then affine"),
    Op("gelu", F.gelu, (nn.Gelu,), gelu_reference,
       InputSpec("unary", low=-3.0, high=3.0, options={"approximate": ("none", "tanh")}),
       "x·Φ(x), exact or with the tanh approximation", accuracy=3e-7),
    Op("dropout", F.dropout, (nn.Dropout,), None,
       InputSpec("unary", kinks=(0.0,), options={"p": (0.25, 0.5)}),
       "inverted dropout from the device's seeded generator", random=True),
    Op("embedding", F.embedding, (nn.Embedding, indexing.IndexAdd),
       lambda ids, weight: weight[ids], InputSpec("embedding"), "rows of weight picked by ids"),
    Op("linear", F.linear, (nn.Linear,), linear_reference, InputSpec("linear"),
       "x @ weight.T + bias, weight (out, in)"),
    Op("cross_entropy", F.cross_entropy,
       (nn.CrossEntropy, nn.CrossEntropyBackward, nn.Softmax), cross_entropy_reference,
       InputSpec("cross_entropy", low=-3.0, high=3.0,
                 options={"label_smoothing": (0.0, 0.1), "reduction": ("mean", "sum", "none")}),
       "loss from logits (class axis last), label smoothing, ignore_index"),
    Op("scaled_dot_product_attention", F.scaled_dot_product_attention,
       (nn.ScaledDotProductAttention, nn.Softmax), attention_reference,
       InputSpec("attention", mask=True), "softmax(q kᵀ / sqrt(d)) v, masked, one fused op"),
    # without gradient
    _comparison("equal", compare.equal, np.equal, "a == b"),
    _comparison("not_equal", compare.not_equal, np.not_equal, "a != b"),
    _comparison("less", compare.less, np.less, "a < b"),
    _comparison("less_equal", compare.less_equal, np.less_equal, "a <= b"),
    _comparison("greater", compare.greater, np.greater, "a > b"),
    _comparison("greater_equal", compare.greater_equal, np.greater_equal, "a >= b"),
    Op("logical_and", compare.logical_and, (), np.logical_and,
       InputSpec("elementwise", dtype="bool"), "a & b", differentiable=False),
    Op("logical_or", compare.logical_or, (), np.logical_or,
       InputSpec("elementwise", dtype="bool"), "a | b", differentiable=False),
    Op("logical_not", compare.logical_not, (), np.logical_not, InputSpec("unary", dtype="bool"),
       "~x", differentiable=False),
    Op("isfinite", compare.isfinite, (), np.isfinite, InputSpec("unary"),
       "True where x is neither NaN nor ±inf", differentiable=False),
    Op("argmax", compare.argmax, (), np.argmax, InputSpec("arg-reduce", distinct=True),
       "index of the largest value (int64)", differentiable=False),
    Op("any", compare.any, (), np.any, InputSpec("reduce", dtype="bool"),
       "whether any element is True", differentiable=False),
    Op("all", compare.all, (), np.all, InputSpec("reduce", dtype="bool"),
       "whether every element is True", differentiable=False),
)


def registered_functions():
    """Every Function class some entry runs."""
    return {fn for op in OPS for fn in op.functions}


# ----- the op list of the docs ---------------------------------------------------------------

def public_name(call):
    """How users spell a callable: mg.exp, F.softmax, Tensor.astype, operator.getitem."""
    import minigrad  # the package's namespace is complete only once it has been imported

    name = call.__name__
    namespaces = (("mg", minigrad), ("F", F), ("Tensor", Tensor), ("operator", operator))
    for prefix, namespace in namespaces:
        if getattr(namespace, name, None) is call:
            return f"{prefix}.{name}"
    return f"{call.__module__}.{name}"


def _signature(call):
    try:
        return public_name(call) + str(inspect.signature(call))
    except ValueError:  # builtins such as operator.getitem have no inspectable signature
        return public_name(call) + "(a, b)"


def _inputs(spec):
    text = spec.rule
    if spec.min_ndim:
        text += f", >= {spec.min_ndim} dims"
    if spec.dtype != "float":
        text += f", {spec.dtype}"
    elif (spec.low, spec.high) != (InputSpec.low, InputSpec.high):
        text += f", values in [{spec.low:g}, {spec.high:g}]"
    if spec.kinks:
        text += ", away from " + ", ".join(f"{k:g}" for k in spec.kinks)
    if spec.distinct:
        text += ", no ties"
    return text


def _flags(op):
    flags = [flag for flag, on in (("no gradient", not op.differentiable),
                                   ("float only", op.float_only), ("random", op.random),
                                   ("no grad-of-grad", op.differentiable and not op.gradgrad))
             if on]
    return ", ".join(flags)


def ops_markdown():
    """docs/ops.md: the table as Markdown."""
    lines = [
        "# minigrad ops",
        "",
        "Generated from `minigrad/ops/registry.py` by `scripts/make_ops_doc.py`; do not edit.",
        "Each op is checked by the generated tests in `tests/engine/test_ops_generated.py`:",
        "values against the NumPy reference, gradients and gradients of gradients against",
        "finite differences (float64, random upstream gradients), dtypes, unmodified inputs.",
        "",
        "| op | call | summary | Function classes | inputs | flags |",
        "|---|---|---|---|---|---|",
    ]
    for op in OPS:
        classes = ", ".join(fn.__name__ for fn in op.functions) or "-"
        summary = op.summary.replace("|", "\\|")
        lines.append(f"| {op.name} | `{_signature(op.call)}` | {summary} | {classes} | "
                     f"{_inputs(op.spec)} | {_flags(op)} |")
    lines += ["", "## Shape rules", "", "| rule | inputs |", "|---|---|"]
    lines += [f"| {rule} | {text} |" for rule, text in SHAPE_RULES.items()]
    return "\n".join(lines) + "\n"
