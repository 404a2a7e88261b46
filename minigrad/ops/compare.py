"""Ops without a gradient: comparisons and logic (boolean tensors), argmax, any/all, isfinite.

They compute on the arrays directly and return tensors outside the graph."""

import operator

from ..errors import DeviceError
from ..tensor import Tensor, ensure_tensor
from .broadcasting import broadcast_shape
from .reduce import normalize_axes


def _binary(name, op, a, b):
    like = a if isinstance(a, Tensor) else b
    a, b = ensure_tensor(a, like), ensure_tensor(b, like)
    if a.backend is not b.backend:
        raise DeviceError(f"{name}: tensors on {a.device} and {b.device}; move one with .to()")
    try:
        return Tensor._make(op(a.data, b.data), a.backend)
    except ValueError:
        broadcast_shape(name, a.shape, b.shape)
        raise


def equal(a, b):
    return _binary("equal", operator.eq, a, b)


def not_equal(a, b):
    return _binary("not_equal", operator.ne, a, b)


def less(a, b):
    return _binary("less", operator.lt, a, b)


def less_equal(a, b):
    return _binary("less_equal", operator.le, a, b)


def greater(a, b):
    return _binary("greater", operator.gt, a, b)


def greater_equal(a, b):
    return _binary("greater_equal", operator.ge, a, b)


def logical_and(a, b):
    return _binary("logical_and", operator.and_, a, b)


def logical_or(a, b):
    return _binary("logical_or", operator.or_, a, b)


def logical_not(x):
    return Tensor._make(~x.data if x.dtype.kind == "b" else x.data == 0, x.backend)


def isfinite(x):
    return Tensor._make(x.backend.xp.isfinite(x.data), x.backend)


def argmax(x, axis=None, keepdims=False):
    """Index of the largest value (the first one at ties), int64."""
    if axis is not None:
        axis = normalize_axes("argmax", axis, x.ndim)[0]
    out = x.data.argmax(axis=axis, keepdims=keepdims)
    return Tensor._make(x.backend.xp.asarray(out, dtype="int64"), x.backend)


def any(x, axis=None, keepdims=False):
    axes = normalize_axes("any", axis, x.ndim)
    return Tensor._make(x.backend.xp.asarray(x.data.any(axis=axes, keepdims=keepdims)), x.backend)


def all(x, axis=None, keepdims=False):
    axes = normalize_axes("all", axis, x.ndim)
    return Tensor._make(x.backend.xp.asarray(x.data.all(axis=axes, keepdims=keepdims)), x.backend)
