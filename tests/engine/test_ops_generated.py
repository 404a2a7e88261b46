"""Tests generated from the op registry (minigrad/ops/registry.py): every op, on inputs drawn
from its spec (tests/strategies.py), on every available device.

- values against the NumPy reference (float64), inputs left unmodified by forward and backward;
- float32 in -> float32 out (values and gradients), integer inputs refused by float-only ops
  and computed as NumPy computes them by the others;
- gradients and gradients of gradients against finite differences (float64, random upstream
  gradients: `mg.gradcheck` never contracts with ones only).
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import cases

import minigrad as mg
from minigrad.errors import DTypeError
from minigrad.ops.registry import OPS

DIFFERENTIABLE = [op for op in OPS if op.differentiable]


def _params(ops):
    return [pytest.param(op, id=op.name) for op in ops]


def _as_tuple(result):
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)


def _is_float(array):
    return array.dtype.kind == "f"


def _tensors(case, device, dtype, requires_grad):
    """The case's arguments as tensors on `device` (floats cast to `dtype`), and every tensor
    made."""
    made = []

    def convert(array):
        floating = _is_float(array)
        tensor = mg.tensor(array.astype(dtype) if floating else array, device=device,
                           requires_grad=requires_grad and floating)
        made.append(tensor)
        return tensor

    args, kwargs = case.map_arrays(convert)
    return args, kwargs, made


def _evaluate(op, args, kwargs):
    if op.random:
        mg.manual_seed(0)  # the same draws on every evaluation
    return _as_tuple(op.call(*args, **kwargs))


def _backward(outputs, inputs, rng):
    """Gradients of the outputs contracted with random upstream gradients."""
    pairs = [(o, rng.standard_normal(o.shape).astype(o.dtype)) for o in outputs
             if o.requires_grad]
    if not pairs:
        return [None] * len(inputs)
    return mg.grad([o for o, _ in pairs], inputs,
                   [mg.tensor(g, device=o.device) for o, g in pairs], allow_unused=True)


@pytest.mark.parametrize("op", _params(OPS))
@given(data=st.data())
def test_values_match_reference(op, device, data):
    """float64 values as NumPy's (random ops: the same twice with the seed reset); outputs
    differentiable exactly when the op is; no input modified by forward or backward."""
    case = data.draw(cases(op))
    originals = [array.copy() for array in case.arrays()]
    args, kwargs, made = _tensors(case, device, np.float64, requires_grad=True)
    outputs = _evaluate(op, args, kwargs)
    if op.random:
        again = _evaluate(op, args, kwargs)
        for first, second in zip(outputs, again):
            np.testing.assert_array_equal(first.numpy(), second.numpy())
    else:
        expected = _as_tuple(op.reference(*case.args, **case.kwargs))
        assert len(outputs) == len(expected)
        for out, reference in zip(outputs, expected):
            assert out.shape == np.shape(reference)
            if _is_float(out):
                np.testing.assert_allclose(out.numpy(), reference, rtol=1e-9,
                                           atol=max(op.accuracy, 1e-12))
            else:
                assert out.dtype == np.asarray(reference).dtype
                np.testing.assert_array_equal(out.numpy(), reference)
    for out in outputs:
        assert out.requires_grad == (op.differentiable and _is_float(out))
        if out.grad_fn is not None:
            assert type(out.grad_fn) in op.functions, f"{op.name} ran {out.grad_fn.name}"
    floats = [t for t in made if t.requires_grad]
    _backward(outputs, floats, np.random.default_rng(0))
    for original, tensor in zip(originals, made):
        np.testing.assert_array_equal(tensor.numpy(), original, err_msg=f"{op.name} mutated")


def _as_integers(array):
    """Floats to distinct int64 (x100, rounded: the spec's margins and gaps survive)."""
    return np.asarray(np.rint(array * 100), dtype=np.int64)


@pytest.mark.parametrize("op", _params(OPS))
@given(data=st.data())
def test_dtypes(op, device, data):
    """float32 in, float32 out (values and gradients); integer inputs: refused by float-only
    ops, computed with NumPy's result dtype by the others."""
    case = data.draw(cases(op))
    args, kwargs, made = _tensors(case, device, np.float32, requires_grad=op.differentiable)
    outputs = _evaluate(op, args, kwargs)
    for out in outputs:
        assert out.dtype.kind != "f" or out.dtype == np.float32, f"{op.name}: {out.dtype}"
    if op.reference is not None:
        expected = _as_tuple(op.reference(*case.args, **case.kwargs))
        for out, reference in zip(outputs, expected):
            np.testing.assert_allclose(out.numpy(), reference, rtol=1e-4, atol=1e-5)
    floats = [t for t in made if t.requires_grad]
    for grad in _backward(outputs, floats, np.random.default_rng(0)):
        assert grad is None or grad.dtype == np.float32

    if op.spec.dtype != "float":
        return
    integer_case = type(case)(*case.map_arrays(
        lambda a: _as_integers(a) if _is_float(a) else a))
    args, kwargs, _ = _tensors(integer_case, device, np.int64, requires_grad=False)
    if op.float_only:
        with pytest.raises(DTypeError, match="floating-point"):
            op.call(*args, **kwargs)
    elif op.reference is not None:
        expected = _as_tuple(op.reference(*integer_case.args, **integer_case.kwargs))
        for out, reference in zip(_evaluate(op, args, kwargs), expected):
            assert out.dtype == np.asarray(reference).dtype, f"{op.name}: {out.dtype}"
            np.testing.assert_array_equal(out.numpy(), reference)


@pytest.mark.parametrize("op", _params(DIFFERENTIABLE))
@given(data=st.data())
def test_gradients(op, device, data):
    """Gradients, and gradients of gradients, against central differences in float64."""
    case = data.draw(cases(op))
    inputs = [mg.tensor(a, device=device, requires_grad=True)
              for a in case.arrays() if _is_float(a)]

    def fn(*floats):
        replacements = iter(floats)
        args, kwargs = case.map_arrays(
            lambda a: next(replacements) if _is_float(a) else mg.tensor(a, device=device))
        return _evaluate(op, args, kwargs)

    assert mg.gradcheck(fn, inputs, eps=op.eps)
    if op.gradgrad:
        assert mg.gradgradcheck(fn, inputs, eps=op.eps)
