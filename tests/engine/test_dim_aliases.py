"""PyTorch's spellings `dim`/`keepdim` wherever `axis`/`keepdims` are taken: the same values and
gradients, a one-line error where the two disagree, and every generated function and method
with `axis` taking `dim` (so that a new op cannot miss it)."""

import inspect
import re

import numpy as np
import pytest

import minigrad as mg
from minigrad.nn import functional as F
from minigrad.ops.registry import ALIASES, ops
from minigrad.tensor_methods import TensorMethods
from minigrad.testing.op_checks import public_function

INDEX = np.array([[2, 0, 1, 1], [0, 0, 3, 2], [1, 3, 0, 0]])

# name -> the call with NumPy's spellings, as (x, axis, keepdims) -> tensor (or a tuple's first)
CALLS = {
    "sum": lambda x, **kw: x.sum(**kw),
    "mean": lambda x, **kw: x.mean(**kw),
    "max": lambda x, **kw: x.max(**kw),
    "argmax": lambda x, **kw: x.argmax(**kw),
    "var": lambda x, **kw: x.var(correction=1, **kw),
    "cumsum": lambda x, **kw: x.cumsum(**kw),
    "softmax": lambda x, **kw: F.softmax(x, **kw),
    "sort": lambda x, **kw: x.sort(descending=True, **kw)[0],
    "squeeze": lambda x, **kw: x.expand_dims(1).squeeze(**kw),
    "gather": lambda x, **kw: x.gather(index=mg.tensor(INDEX), **kw),
    "mg.argmin": lambda x, **kw: mg.argmin(x, **kw),
    "mg.gather": lambda x, **kw: mg.gather(x, index=mg.tensor(INDEX), **kw),
}
KEEPS = {"sum", "mean", "max", "argmax", "var", "mg.argmin"}  # those with keepdims


def _numpy_spelling(name):
    axis = 1
    return {"axis": axis, **({"keepdims": True} if name in KEEPS else {})}


def _pytorch_spelling(name):
    return {ALIASES[key]: value for key, value in _numpy_spelling(name).items()}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_dim_and_keepdim_give_what_axis_and_keepdims_give(name):
    data = np.random.default_rng(0).permutation(12).reshape(3, 4) / 7.0  # no ties
    results, gradients = [], []
    for spelling in (_numpy_spelling(name), _pytorch_spelling(name)):
        x = mg.tensor(data, requires_grad=True)
        out = CALLS[name](x, **spelling)
        results.append(out.numpy())
        if out.dtype.kind == "f":
            upstream = mg.tensor(np.linspace(-1.0, 2.0, out.size).reshape(out.shape))
            gradients.append(mg.grad([out], [x], [upstream])[0].numpy())
    np.testing.assert_array_equal(results[0], results[1])
    assert results[0].dtype == results[1].dtype
    if gradients:
        np.testing.assert_array_equal(gradients[0], gradients[1])
    if name in KEEPS:
        assert results[1].ndim == 2  # keepdim kept the axis


def test_an_alias_may_repeat_its_name_with_the_same_value():
    x = mg.tensor(np.arange(6.0).reshape(2, 3))
    np.testing.assert_array_equal(x.sum(axis=1, dim=1, keepdims=True, keepdim=True).numpy(),
                                  [[3.0], [12.0]])


@pytest.mark.parametrize("call, message", [
    (lambda x: x.sum(axis=0, dim=1), "sum: axis=0 and dim=1 disagree"),
    (lambda x: mg.mean(x, keepdims=True, keepdim=False),
     "mean: keepdims=True and keepdim=False disagree"),
    (lambda x: mg.argmax(x, axis=(0,), dim=1), "argmax: axis=(0,) and dim=1 disagree"),
    (lambda x: F.softmax(x, axis=0, dim=1), "softmax: axis=0 and dim=1 disagree"),
    (lambda x: x.gather(axis=0, dim=1, index=mg.tensor(INDEX[:2, :3])),
     "gather: axis=0 and dim=1 disagree"),
])
def test_axis_and_dim_that_disagree_are_refused_in_one_line(call, message):
    with pytest.raises(TypeError, match=f"^{re.escape(message)}; pass one of them") as error:
        call(mg.tensor(np.arange(6.0).reshape(2, 3)))
    assert "\n" not in str(error.value)


def test_an_op_whose_axis_has_no_default_names_what_is_missing():
    x = mg.tensor(np.arange(6.0).reshape(2, 3))
    with pytest.raises(TypeError, match=r"^gather: missing axis \(dim= may stand for axis\)$"):
        x.gather(index=mg.tensor(INDEX[:2, :3]))
    with pytest.raises(TypeError, match="^gather: missing index$"):
        mg.gather(x, dim=1)


def _takes_the_aliases(function):
    parameters = inspect.signature(function).parameters
    return [f"{ALIASES[name]} for {name}" for name in ALIASES
            if name in parameters and ALIASES[name] not in parameters]


def test_every_function_and_method_with_axis_takes_dim():
    """Over the op table: each public function (mg.*, F.*) and Tensor method with `axis` or
    `keepdims` has `dim` or `keepdim` too."""
    lacking, checked = [], 0
    for op in ops():
        callables = [public_function(op)]
        if op.method is not None:
            callables.append(getattr(TensorMethods, op.method))
        for function in callables:
            checked += bool(set(ALIASES) & set(inspect.signature(function).parameters))
            lacking += [f"{op.name}: {gap}" for gap in _takes_the_aliases(function)]
    assert not lacking, f"generated without PyTorch's spelling: {lacking}"
    assert checked > 60  # the reductions, cumulative, sorting, shape and gather ops, F.softmax...
