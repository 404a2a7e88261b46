"""Ops without a gradient: comparisons and logic (boolean tensors), argmax, any/all, isfinite.

They compute on the arrays directly and return tensors outside the graph."""

from __future__ import annotations

import operator

import numpy as np

from ..errors import DeviceError, DTypeError
from ..tensor import Tensor, ensure_tensor
from .broadcasting import broadcast_shape
from .reduce import normalize_axes
from .registry import InputSpec, op


def _binary(name, operation, a, b) -> Tensor:
    like = a if isinstance(a, Tensor) else b
    a, b = ensure_tensor(a, like), ensure_tensor(b, like)
    if a.backend is not b.backend:
        raise DeviceError(f"{name}: tensors on {a.device} and {b.device}; move one with .to()")
    try:
        return Tensor._make(operation(a.data, b.data), a.backend)
    except ValueError:
        broadcast_shape(name, a.shape, b.shape)
        raise


def _declare_binary(name, operation, reference, summary, operators, dtype="float", **fields):
    """The op `name(a, b)`: `operation` on the broadcast arrays, also Tensor's `operators`."""

    def function(a, b) -> Tensor:
        return _binary(name, operation, a, b)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = summary
    operators = (operators,) if isinstance(operators, str) else operators
    spec = InputSpec("shift") if dtype == "shift" else InputSpec("elementwise", dtype=dtype)
    return op(reference=reference, spec=spec, summary=summary, operators=operators,
              differentiable=False, **fields)(function)


def _integer_operation(name, operation):
    """`operation` on boolean or integer arrays; floats refused in one line."""

    def checked(a, b):
        for array in (a, b):
            if array.dtype.kind not in "biu":
                raise DTypeError(f"{name}: needs boolean or integer tensors, got {array.dtype}")
        return operation(a, b)

    return checked


equal = _declare_binary("equal", operator.eq, np.equal, "a == b", "__eq__",
                        pytorch="`torch.eq` (torch.equal compares whole tensors)")
not_equal = _declare_binary("not_equal", operator.ne, np.not_equal, "a != b", "__ne__")
less = _declare_binary("less", operator.lt, np.less, "a < b", "__lt__")
less_equal = _declare_binary("less_equal", operator.le, np.less_equal, "a <= b", "__le__")
greater = _declare_binary("greater", operator.gt, np.greater, "a > b", "__gt__")
greater_equal = _declare_binary("greater_equal", operator.ge, np.greater_equal, "a >= b",
                                "__ge__")
logical_and = _declare_binary("logical_and", operator.and_, np.logical_and, "a & b",
                              ("__and__", "__rand__"), dtype="bool",
                              pytorch="`torch.logical_and`; `&` is bitwise on integers")
logical_or = _declare_binary("logical_or", operator.or_, np.logical_or, "a | b",
                             ("__or__", "__ror__"), dtype="bool",
                             pytorch="`torch.logical_or`; `|` is bitwise on integers")
bitwise_xor = _declare_binary("bitwise_xor", _integer_operation("bitwise_xor", operator.xor),
                              np.bitwise_xor, "a ^ b: bitwise exclusive or",
                              ("__xor__", "__rxor__"), dtype="int")
bitwise_left_shift = _declare_binary(
    "bitwise_left_shift", _integer_operation("bitwise_left_shift", operator.lshift),
    np.left_shift, "a << b: bits shifted left", ("__lshift__", "__rlshift__"), dtype="shift")
bitwise_right_shift = _declare_binary(
    "bitwise_right_shift", _integer_operation("bitwise_right_shift", operator.rshift),
    np.right_shift, "a >> b: bits shifted right (arithmetic)", ("__rshift__", "__rrshift__"),
    dtype="shift")


@op(reference=np.logical_not, spec=InputSpec("unary", dtype="bool"), summary="not x (x == 0)",
    differentiable=False)
def logical_not(x) -> Tensor:
    return Tensor._make(~x.data if x.dtype.kind == "b" else x.data == 0, x.backend)


@op(reference=np.invert, spec=InputSpec("unary", dtype="int"), operators=("__invert__",),
    differentiable=False, summary="~x: bitwise not of integers, logical not of booleans")
def bitwise_not(x) -> Tensor:
    if x.dtype.kind not in "biu":
        raise DTypeError(f"bitwise_not (~): needs a boolean or integer tensor, got {x.dtype}; "
                         "for floats use mg.logical_not(x) (x == 0)")
    return Tensor._make(~x.data, x.backend)


@op(reference=np.isfinite, spec=InputSpec("unary"), method=True, differentiable=False,
    summary="True where x is neither NaN nor ±inf")
def isfinite(x) -> Tensor:
    return Tensor._make(x.backend.xp.isfinite(x.data), x.backend)


@op(reference=np.isinf, spec=InputSpec("unary"), method=True, differentiable=False,
    summary="True where x is ±inf")
def isinf(x) -> Tensor:
    return Tensor._make(x.backend.xp.isinf(x.data), x.backend)


@op(reference=np.isnan, spec=InputSpec("unary"), method=True, differentiable=False,
    summary="True where x is NaN")
def isnan(x) -> Tensor:
    return Tensor._make(x.backend.xp.isnan(x.data), x.backend)


@op(reference=np.isclose, spec=InputSpec("elementwise", options={"rtol": (1e-5, 0.5)}),
    differentiable=False, summary="|a - b| <= atol + rtol · |b|, elementwise")
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False) -> Tensor:
    xp = (a if isinstance(a, Tensor) else b).backend.xp
    return _binary("isclose", lambda x, y: xp.isclose(x, y, rtol=rtol, atol=atol,
                                                      equal_nan=equal_nan), a, b)


@op(reference=np.argmax, spec=InputSpec("arg-reduce", distinct=True), method=True,
    differentiable=False, summary="index of the largest value (int64)")
def argmax(x, axis=None, keepdims=False) -> Tensor:
    """Index of the largest value (the first one at ties), int64."""
    return _arg_reduce("argmax", x, axis, keepdims)


@op(reference=np.argmin, spec=InputSpec("arg-reduce", distinct=True), method=True,
    differentiable=False, summary="index of the smallest value (int64)")
def argmin(x, axis=None, keepdims=False) -> Tensor:
    """Index of the smallest value (the first one at ties), int64."""
    return _arg_reduce("argmin", x, axis, keepdims)


def _arg_reduce(name: str, x: Tensor, axis, keepdims: bool) -> Tensor:
    """`x.data.argmax` or `argmin` (`name`) over one axis or all, as an int64 tensor."""
    if axis is not None:  # a 0-d tensor's only axis: its one element
        axis = (normalize_axes(name, axis, x.ndim) or (None,))[0]
    out = getattr(x.data, name)(axis=axis, keepdims=keepdims)
    return Tensor._make(x.backend.xp.asarray(out, dtype="int64"), x.backend)


def _reduce_bool(name, x, axis, keepdims):
    axes = normalize_axes(name, axis, x.ndim)
    reduced = getattr(x.data, name)(axis=axes, keepdims=keepdims)
    return Tensor._make(x.backend.xp.asarray(reduced), x.backend)


@op(reference=np.any, spec=InputSpec("reduce", dtype="bool"), method=True, differentiable=False,
    summary="whether any element is True")
def any(x, axis=None, keepdims=False) -> Tensor:
    return _reduce_bool("any", x, axis, keepdims)


@op(reference=np.all, spec=InputSpec("reduce", dtype="bool"), method=True, differentiable=False,
    summary="whether every element is True")
def all(x, axis=None, keepdims=False) -> Tensor:
    return _reduce_bool("all", x, axis, keepdims)
