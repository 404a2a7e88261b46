"""The op table: every op minigrad offers, each declared once, where it is defined.

`@op(...)` on a `Function` subclass declares a public op: its name, where users find it
(`mg.<name>` or `F.<name>`, a `Tensor` method, `Tensor` operators), a NumPy reference and an
input spec (how to draw inputs that check it). The op's public function takes `forward`'s
parameters (those without a default are the tensor inputs, the others keyword parameters)
and calls `cls.apply`. Where the public call does more than `apply` (converts its arguments,
runs several Functions, runs none), `@op(...)` goes on that function instead and names the
Function classes it runs.

The ops declared inside minigrad make the table, `ops()`. From it `scripts/make_ops_doc.py`
writes three files, kept up to date by a test: `docs/ops.md`, `minigrad/ops/functions.py`
(the public function of each op declared on its class, and the `mg` namespace's ops) and
`minigrad/tensor_methods.py` (the `Tensor` methods and operators). The generated tests check
every entry with `minigrad/testing/op_checks.py`.

An op declared in user code gets the same record (`MyOp.op`), its function (`MyOp.op.call`)
and, where it asks for them, a `Tensor` method and operators, installed on `Tensor` when it is
declared: a name `Tensor` already has is refused unless the declaration says
`overrides=True`. It joins no table and no namespace, and is checked with
`minigrad.testing.check_op`.

PyTorch's spellings: every generated function and method with an `axis` or `keepdims`
parameter also takes `dim` or `keepdim` (`ALIASES`), keyword-only, settled by `aliased`.
"""

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..autograd import Function
from ..errors import OpDefinitionError
from ..tensor import Tensor

SHAPE_RULES = {
    "unary": "one tensor of 0-4 dims",
    "elementwise": "two tensors whose shapes broadcast (NumPy rules)",
    "shift": "two int64 tensors whose shapes broadcast, the second in [0, 8)",
    "ternary": "three tensors whose shapes broadcast (NumPy rules)",
    "where": "a boolean condition and two tensors, the three shapes broadcasting",
    "masked_fill": "a tensor and a boolean mask that broadcasts to its shape",
    "reduce": "one tensor; `axis` None, an int or a tuple (negative allowed); `keepdims`",
    "axes": "one tensor; `axis` None, an int or a tuple (negative allowed)",
    "arg-reduce": "one tensor; `axis` None or an int; `keepdims`",
    "softmax-like": "one tensor of >= 1 dims and an int `axis`",
    "matmul": "1-D or n-D operands; batch axes broadcast",
    "reshape": "one tensor and a shape of the same size (maybe with -1)",
    "transpose": "one tensor and a permutation of its axes (or None)",
    "swapaxes": "one tensor of >= 1 dims and two axes",
    "expand_dims": "one tensor and a new axis position",
    "squeeze": "one tensor with some axes of size 1; `axis` None or one of them",
    "broadcast_to": "one tensor and a shape it broadcasts to",
    "flatten": "one tensor; start_dim <= end_dim among its axes",
    "unflatten": "one tensor of >= 1 dims, an axis and sizes whose product is its length",
    "repeat": "one tensor and a count per axis (maybe more counts than axes)",
    "repeat_interleave": "one tensor of >= 1 dims, an int or per-element counts, an axis or None",
    "roll": "one tensor; shifts and axes (ints or tuples), or axis None",
    "meshgrid": "a list of 1-3 one-dimensional tensors; indexing 'ij' or 'xy'",
    "unfold": "one tensor of >= 1 dims, an axis, a window size and a step that fit it",
    "concatenate": "a list of 1-3 tensors equal but along `axis`",
    "stack": "a list of 1-3 tensors of one shape and a new axis position",
    "split": "one tensor, a number of equal sections or sorted split points, an axis",
    "index": "one tensor and an index: ints, slices, None, Ellipsis, integer arrays "
             "(with repeats) or a boolean array",
    "index_add": "values, an index as for `index`, and the shape they are added into",
    "topk": "one tensor of >= 1 dims, k, an axis",
    "gather": "one tensor of >= 1 dims, an axis, an int index of as many axes (no larger "
              "off the axis), values in range",
    "scatter": "a tensor, an axis, an int index no larger, each position once, and src of "
               "the index's shape",
    "scatter_add": "a tensor, an axis, an int index no larger (repeats likely), and src of "
                   "the index's shape",
    "diagonal": "one tensor of >= 2 dims, an offset, two distinct axes",
    "diag": "a 1-D or 2-D tensor and a diagonal offset",
    "pad": "one tensor of >= 1 dims, widths for some trailing axes, a mode (reflect: widths "
           "smaller than the axis)",
    "conv2d": "images (N, C, H, W), a weight (O, C, KH, KW) that fits, an optional bias; "
              "stride, padding, dilation",
    "conv_transpose2d": "images (N, C, H, W), a weight (C, O, KH, KW), an optional bias; "
                        "stride, padding, output_padding, dilation",
    "pool2d": "images (N, C, H, W), a kernel that fits, stride (or None), padding <= half "
              "the kernel",
    "interpolate": "images (N, C, H, W), a size or a scale factor, mode nearest or bilinear",
    "einsum": "an equation (products, sums, transposes, outer products) and its operands",
    "one_hot": "int ids of 0-2 dims, num_classes -1 or more than the largest id",
    "layer_norm": "x (..., *normalized_shape), optional weight and bias of normalized_shape",
    "cross_entropy": "logits (..., C), int targets (...) in [0, C), some = ignore_index",
    "attention": "q (..., Lq, d), k (..., Lk, d), v (..., Lk, dv), batch axes broadcasting",
    "embedding": "int ids of 0-2 dims (with repeats), weight (rows, dim)",
    "linear": "x (..., in), weight (out, in), bias (out,) or None",
    "layer_norm_input_gradient": "g and normalized (...), rstd (...) with the last `n_axes` "
                                 "axes of size 1",
    "cross_entropy_backward": "probabilities (..., C), scale (..., 1), int targets (...)",
}


@dataclass(frozen=True)
class InputSpec:
    """How to draw an op's inputs: a shape rule and the values.

    `rule` is a key of SHAPE_RULES, or (for an op no rule fits) a hypothesis strategy
    `rule(spec)` that draws `(args, kwargs)` with a `minigrad.testing.strategies.Slot` where
    each tensor goes."""

    rule: str | Callable
    low: float = -2.0  # floating inputs are drawn in [low, high]
    high: float = 2.0
    kinks: tuple = ()  # points where the op is not smooth: values stay a margin away
    distinct: bool = False  # all values pairwise apart: no ties (max, min, sort)
    dtype: str = "float"  # the drawn tensors: "float", "bool" or "int" (int64)
    min_ndim: int = 0  # for "unary": the fewest dimensions (tril needs 2)
    mask: bool = False  # also an optional boolean `mask` (True = masked out)
    options: dict = field(default_factory=dict)  # keyword -> the choices it is drawn from

    @property
    def rule_name(self) -> str:
        return self.rule if isinstance(self.rule, str) else self.rule.__name__


@dataclass(frozen=True)
class Op:
    """One declared op: `call(*args, **kwargs)` computes what `reference` computes in NumPy."""

    name: str
    function: Callable | None  # the declared function; None where the op is declared on a class
    functions: tuple  # the Function classes it runs (backward included)
    reference: Callable | None  # None for random ops: checked for repeatability instead
    spec: InputSpec
    summary: str
    namespace: str | None = "mg"  # where the function is exported: "mg", "F", or nowhere
    method: str | None = None  # the Tensor method that calls it
    method_function: Callable | None = None  # what the method calls, where not the op's function
    operators: tuple = ()  # Tensor operators that call it ("__add__", "__radd__", ...)
    internal: bool = False  # a helper other ops' backward runs: tested, not in docs/ops.md
    differentiable: bool = True
    gradgrad: bool = True  # its backward is differentiable too
    random: bool = False  # draws from the generator: evaluate with the seed reset each time
    eps: float = 1e-6  # finite-difference step (larger for linear ops that round their output)
    accuracy: float = 0.0  # absolute error allowed against the reference (approximations)
    pytorch: str = ""  # PyTorch's counterpart and how the two differ ("": torch.<name>, alike)

    @property
    def call(self) -> Callable:
        """The op's declared function, or for a user's op declared on its class the one `op`
        made (a built-in op declared on its class, or with `axis`/`keepdims`, has its public
        function in the generated `minigrad/ops/functions.py`:
        `minigrad.testing.public_function`)."""
        if self.function is None:
            raise OpDefinitionError(
                f"op {self.name!r}: a built-in op declared on its class; its function is "
                f"minigrad.ops.functions.{self.name} (minigrad.testing.public_function(op))")
        return self.function

    @property
    def float_only(self) -> bool:
        """Whether integer tensors are refused (DTypeError)."""
        return any(fn.float_only for fn in self.functions)


Declared = TypeVar("Declared")  # the decorated class or function, returned as it is

# NumPy's parameter names and PyTorch's for them, both accepted wherever the first is.
ALIASES = {"axis": "dim", "keepdims": "keepdim"}


def aliased(op_name: str, name: str, value: Any, default: Any, alias: Any) -> Any:
    """The value of `name` (`axis`) when its alias (`dim`) is given: the alias's, refused where
    `name` was given too (not its default) with another value."""
    if value is not default and value != default and value != alias:
        raise TypeError(f"{op_name}: {name}={value!r} and {ALIASES[name]}={alias!r} disagree; "
                        f"pass one of them ({ALIASES[name]} is PyTorch's name for {name})")
    return alias


def missing(op_name: str, **values: Any) -> None:
    """Refuse a call that left out a parameter (None) the op needs."""
    names = [name for name, value in values.items() if value is None]
    raise TypeError(f"{op_name}: missing {', '.join(names)}"
                    + (" (dim= may stand for axis)" if "axis" in names else ""))


_TABLE: list[Op] = []  # the ops declared inside minigrad, in the order they were declared

# Operators whose Tensor is the right operand: `2 - x` calls x.__rsub__(2) = subtract(2, x).
REFLECTED = ("__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__rpow__", "__rmatmul__",
             "__rmod__", "__rfloordiv__", "__rand__", "__ror__", "__rxor__", "__rlshift__",
             "__rrshift__")


def op(name: str | None = None, *, method: bool | str | None = None, overrides: bool = False,
       **fields: Any) -> Callable[[Declared], Declared]:
    """Declare an op: decorate its `Function` subclass (its public function takes forward's
    parameters) or the function users call (then `functions` names the classes it runs).

    `fields` are those of `Op`: `reference` and `spec` always, the others where the default
    does not fit. `method`: True for a Tensor method of the op's name, or a string for another
    name (`method_function`: the function `(self, ...)` it calls, where that is not the op's
    function). `operators`: Tensor operator names; a reflected one (`__rsub__`) calls the op
    with the operands swapped. The record is `decorated.op`. An op declared inside minigrad
    joins the table (its methods and operators are written into `minigrad/tensor_methods.py`);
    one declared elsewhere has its method and operators installed on Tensor, refusing a name
    Tensor already has unless `overrides=True`."""

    def declare(target: Declared) -> Declared:
        declared: Any = target  # a Function class or a function, given attributes here
        record = describe(declared, name=name, method=method, **fields)
        if declared is not record.function:  # a Function class
            declared.name = record.name
        if _inside_minigrad(declared):
            _TABLE.append(record)
        else:
            _install_on_tensor(record, overrides)
        declared.op = record
        return target

    return declare


def describe(target: Any, *, reference: Callable | None, spec: InputSpec,
             name: str | None = None, summary: str = "", functions: tuple = (),
             namespace: str | None = "mg", method: bool | str | None = None,
             operators: tuple = (), **fields: Any) -> Op:
    """The record `op(...)` makes for `target` (a Function subclass or a function), without
    installing or registering anything (`check_op` on an undeclared Function uses it)."""
    is_class = isinstance(target, type)
    if is_class and not issubclass(target, Function):
        raise OpDefinitionError(f"op: {target.__name__} is a class but not a minigrad "
                                "Function; subclass mg.Function")
    op_name = name or (target.name if is_class else target.__name__)
    if not op_name.isidentifier():
        raise OpDefinitionError(f"op: the name {op_name!r} is not a Python identifier; pass "
                                "name='...' with letters, digits and underscores")
    if not isinstance(spec, InputSpec):
        raise OpDefinitionError(f"op {op_name!r}: spec must be an InputSpec, got "
                                f"{type(spec).__name__}")
    inside = _inside_minigrad(target)
    if is_class:
        _forward_parameters(target, op_name)  # refuses a class without forward
        function = None if inside else _public_function(target, op_name)
    else:
        function = target
    if method is True:
        method = op_name
    return Op(op_name, function, ((target,) if is_class else ()) + tuple(functions), reference,
              spec, summary or _first_line(target.__doc__),
              namespace=namespace if inside else None, method=method or None,
              operators=tuple(operators), **fields)


def ops() -> tuple[Op, ...]:
    """The table: every op declared inside minigrad (complete once `minigrad` is imported,
    which any import of this module does first)."""
    return tuple(_TABLE)


def registered_functions() -> set[type]:
    """Every Function class some entry runs."""
    return {fn for entry in _TABLE for fn in entry.functions}


def forward_parameters(cls: Any) -> list[inspect.Parameter]:
    """forward's parameters after self: the parameters of the op's public function."""
    return _forward_parameters(cls, cls.name)


def _inside_minigrad(target):
    return target.__module__.split(".")[0] == "minigrad"


def _first_line(doc):
    return (doc or "").strip().split("\n")[0]


def _install_on_tensor(record, overrides):
    """A user op's method and operators, put on Tensor; a name Tensor has is refused unless
    the declaration overrides it (the engine itself calls Tensor's `sum`, `+`, ...)."""
    names = ([record.method] if record.method is not None else []) + list(record.operators)
    for attribute in names:
        if hasattr(Tensor, attribute) and not overrides:
            raise OpDefinitionError(
                f"op {record.name!r}: Tensor already has {attribute!r} (the engine and every "
                f"user of Tensor call it); choose another method or operator name, or declare "
                f"overrides=True to replace it for the whole process")
    call = record.call
    if record.method is not None:
        setattr(Tensor, record.method, record.method_function or call)
    for operator_name in record.operators:
        setattr(Tensor, operator_name, _operator(operator_name, call))


def _operator(operator_name, call):
    if operator_name not in REFLECTED:
        return call  # call(self, other) or call(self)

    def reflected(self, other):
        return call(other, self)

    reflected.__name__ = operator_name
    return reflected


def _public_function(cls, op_name):
    """A user op's function: `cls.apply` with forward's parameters, the tensors (those without
    a default) passed positionally and the others by keyword."""
    signature = inspect.Signature(_forward_parameters(cls, op_name))
    apply = cls.apply

    def function(*args: Any, **kwargs: Any) -> Tensor:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        tensors, keywords = [], {}
        for parameter in signature.parameters.values():
            value = bound.arguments[parameter.name]
            if parameter.kind is parameter.VAR_POSITIONAL:
                tensors.extend(value)
            elif parameter.kind is parameter.VAR_KEYWORD:
                keywords.update(value)
            elif parameter.default is parameter.empty and parameter.kind is not \
                    parameter.KEYWORD_ONLY:
                tensors.append(value)
            else:
                keywords[parameter.name] = value
        return apply(*tensors, **keywords)

    function.__name__ = function.__qualname__ = op_name
    function.__module__ = cls.__module__
    function.__doc__ = cls.__doc__
    function.__signature__ = signature  # type: ignore[attr-defined]
    return function


def _forward_parameters(cls, op_name):
    """forward's parameters after self."""
    forward = inspect.getattr_static(cls, "forward")
    if forward is inspect.getattr_static(Function, "forward"):
        raise OpDefinitionError(f"op {op_name!r}: {cls.__name__} defines no forward(self, ...)")
    parameters = list(inspect.signature(cls.forward).parameters.values())
    if not isinstance(forward, staticmethod):
        parameters = parameters[1:]
    return [p.replace(kind=p.POSITIONAL_OR_KEYWORD) if p.kind is p.POSITIONAL_ONLY else p
            for p in parameters]  # operator.add's (a, b, /) taken by name too
