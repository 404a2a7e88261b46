"""The op table: every op minigrad offers, each declared once, where it is defined.

`@op(...)` on a `Function` subclass declares a public op: its name, where users find it
(`mg.<name>` or `F.<name>`, a `Tensor` method, `Tensor` operators), a NumPy reference and an
input spec (how to draw inputs that check it). The op's function is generated from the class:
`cls.apply` under the op's name, with `forward`'s parameters (those without a default are the
tensor inputs, the others keyword parameters). Where the public call does more than `apply`
(converts its arguments, runs several Functions, runs none), `@op(...)` goes on that function
instead and names the Function classes it runs. Either way the `Tensor` method and operators,
the export and the table entry follow from the declaration.

The ops declared inside minigrad make the table, `ops()`: the generated tests check every
entry with `minigrad/testing/op_checks.py`, and `docs/ops.md` is written from it
(`scripts/make_ops_doc.py`). An op declared in user code gets the same record (`MyOp.op`)
and is checked with `minigrad.testing.check_op`; it joins no table and no namespace.
"""

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field

from ..autograd import Function
from ..errors import OpDefinitionError
from ..tensor import Tensor

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
    dtype: str = "float"  # the drawn tensors: "float" or "bool"
    min_ndim: int = 0  # for "unary": the fewest dimensions (tril needs 2)
    mask: bool = False  # also an optional boolean `mask` (True = masked out)
    options: dict = field(default_factory=dict)  # keyword -> the choices it is drawn from

    @property
    def rule_name(self):
        return self.rule if isinstance(self.rule, str) else self.rule.__name__


@dataclass(frozen=True)
class Op:
    """One declared op: `call(*args, **kwargs)` computes what `reference` computes in NumPy."""

    name: str
    call: Callable
    functions: tuple  # the Function classes it runs (backward included)
    reference: Callable | None  # None for random ops: checked for repeatability instead
    spec: InputSpec
    summary: str
    namespace: str | None = "mg"  # where the function is exported: "mg", "F", or nowhere
    method: str | None = None  # the Tensor method that calls it
    operators: tuple = ()  # Tensor operators that call it ("__add__", "__radd__", ...)
    internal: bool = False  # a helper other ops' backward runs: tested, not in docs/ops.md
    differentiable: bool = True
    gradgrad: bool = True  # its backward is differentiable too
    random: bool = False  # draws from the generator: evaluate with the seed reset each time
    eps: float = 1e-6  # finite-difference step (larger for linear ops that round their output)
    accuracy: float = 0.0  # absolute error allowed against the reference (approximations)

    @property
    def float_only(self):
        """Whether integer tensors are refused (DTypeError)."""
        return any(fn.float_only for fn in self.functions)


_TABLE = []  # the ops declared inside minigrad, in the order they were declared

# Operators whose Tensor is the right operand: `2 - x` calls x.__rsub__(2) = subtract(2, x).
_REFLECTED = {"__radd__", "__rsub__", "__rmul__", "__rtruediv__", "__rpow__", "__rmatmul__"}


def op(name=None, *, method=None, **fields):
    """Declare an op: decorate its `Function` subclass (the public function is generated) or
    the function users call (then `functions` names the classes it runs).

    `fields` are those of `Op`: `reference` and `spec` always, the others where the default
    does not fit. `method`: True for a Tensor method of the op's name, a string for another
    name, or a function `(self, ...)` installed under its own name. `operators`: Tensor
    operator names; a reflected one (`__rsub__`) calls the op with the operands swapped. The
    record is `decorated.op`; an op declared inside minigrad also joins the table and its
    namespace."""

    def declare(target):
        record = describe(target, name=name, method=method, **fields)
        if isinstance(target, type):
            target.name = record.name
        _install_method(method, record)
        for operator_name in record.operators:
            setattr(Tensor, operator_name, _operator(operator_name, record.call))
        target.op = record
        record.call.op = record
        if _inside_minigrad(target):
            _TABLE.append(record)
        return target

    return declare


def describe(target, *, reference, spec, name=None, summary="", functions=(), namespace="mg",
             method=None, operators=(), **fields):
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
    call = _public_function(target, op_name) if is_class else target
    if method is True:
        method = op_name
    elif callable(method):
        method = method.__name__
    return Op(op_name, call, ((target,) if is_class else ()) + tuple(functions), reference, spec,
              summary or _first_line(target.__doc__),
              namespace=namespace if _inside_minigrad(target) else None,
              method=method or None, operators=tuple(operators), **fields)


def ops():
    """The table: every op declared inside minigrad (complete once `minigrad` is imported,
    which any import of this module does first)."""
    return tuple(_TABLE)


def namespace(name):
    """{function name: function} of the table's ops exported to `name` ("mg" or "F")."""
    return {entry.name: entry.call for entry in _TABLE if entry.namespace == name}


def registered_functions():
    """Every Function class some entry runs."""
    return {fn for entry in _TABLE for fn in entry.functions}


def _inside_minigrad(target):
    return target.__module__.split(".")[0] == "minigrad"


def _first_line(doc):
    return (doc or "").strip().split("\n")[0]


def _install_method(method, record):
    """Puts the op on Tensor as the method the declaration names (its own function, or the
    function `(self, ...)` it gives)."""
    if record.method is not None:
        setattr(Tensor, record.method, method if callable(method) else record.call)


def _operator(operator_name, call):
    if operator_name not in _REFLECTED:
        return call  # call(self, other) or call(self)

    def reflected(self, other):
        return call(other, self)

    reflected.__name__ = operator_name
    return reflected


def _public_function(cls, op_name):
    """`def <op_name>(<forward's parameters>): return cls.apply(...)`, written out so that the
    function has forward's signature and costs one call (no packing of *args, **kwargs)."""
    header, arguments, defaults = _parameter_lists(_forward_parameters(cls, op_name))
    source = (f"def {op_name}({', '.join(header)}):\n"
              f"    return _apply({', '.join(arguments)})\n")
    scope = {"_apply": cls.apply, "_defaults": defaults}
    # a file name in minigrad: anomaly mode looks past it for the line of user code
    exec(compile(source, f"<minigrad/ops/registry.py: {op_name}, generated>", "exec"), scope)
    function = scope[op_name]
    function.__module__ = cls.__module__
    function.__qualname__ = op_name
    function.__doc__ = cls.__doc__
    return function


def _forward_parameters(cls, op_name):
    """forward's parameters after self."""
    forward = inspect.getattr_static(cls, "forward")
    if forward is inspect.getattr_static(Function, "forward"):
        raise OpDefinitionError(f"op {op_name!r}: {cls.__name__} defines no forward(self, ...)")
    parameters = list(inspect.signature(cls.forward).parameters.values())
    return parameters if isinstance(forward, staticmethod) else parameters[1:]


def _parameter_lists(parameters):
    """The generated function's parameters, the arguments it passes to apply (the tensors
    positionally, the rest by keyword), and the defaults it refers to."""
    header, arguments, defaults = [], [], {}
    for p in parameters:
        if p.kind is p.VAR_POSITIONAL or p.kind is p.VAR_KEYWORD:
            stars = "*" if p.kind is p.VAR_POSITIONAL else "**"
            header.append(f"{stars}{p.name}")
            arguments.append(f"{stars}{p.name}")
        elif p.default is p.empty and p.kind is not p.KEYWORD_ONLY:
            header.append(p.name)
            arguments.append(p.name)
        else:
            if p.kind is p.KEYWORD_ONLY and not any(h.startswith("*") for h in header):
                header.append("*")
            if p.default is p.empty:
                header.append(p.name)
            else:
                defaults[p.name] = p.default
                header.append(f"{p.name}=_defaults[{p.name!r}]")
            arguments.append(f"{p.name}={p.name}")
    return header, arguments, defaults
