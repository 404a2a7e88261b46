"""The checks every op gets, one drawn call (`strategies.Case`) at a time: run by the generated
tests of minigrad's own ops (tests/engine/test_ops_generated.py) and by `check_op` on an op
written in user code.

- values against the NumPy reference (float64), inputs left unmodified by forward and backward;
- float32 in -> float32 out (values and gradients), integer inputs refused by float-only ops
  and computed as NumPy computes them by the others;
- gradients and gradients of gradients against finite differences (float64, random upstream
  gradients: `mg.gradcheck` never contracts with ones only);
- for an op whose spec takes a mask, every entry masked: outputs and gradients finite.

Each check raises AssertionError (or the op's own error) on a failure; none imports a test
library.
"""

from collections.abc import Callable
from typing import Any

import numpy as np

from ..autograd import grad
from ..errors import DTypeError
from ..gradcheck import gradcheck, gradgradcheck
from ..ops import functions
from ..random import manual_seed
from ..tensor import tensor
from .strategies import Case


def public_function(op: Any) -> Callable:
    """The function users call for `op` (an `Op` record): its function in the generated
    `minigrad/ops/functions.py` for a built-in op declared on its class or taking `dim` there
    (one with `axis`/`keepdims`), the declared one otherwise."""
    if op.function is not None and (not op.function.__module__.startswith("minigrad.")
                                    or not hasattr(functions, op.name)):
        return op.function
    return getattr(functions, op.name)


def check_case(op, case, device="cpu") -> None:
    """Every check of this module on one drawn call."""
    check_values(op, case, device)
    check_dtypes(op, case, device)
    if op.differentiable:
        check_gradients(op, case, device)
    check_fully_masked(op, case, device)


def check_values(op, case, device="cpu") -> None:
    """float64 values as NumPy's (random ops: the same twice with the seed reset); outputs
    differentiable exactly when the op is; no input modified by forward or backward."""
    originals = [array.copy() for array in case.arrays()]
    args, kwargs, made = _tensors(case, device, np.float64, requires_grad=True)
    outputs = _evaluate(op, args, kwargs)
    if op.random:
        for first, second in zip(outputs, _evaluate(op, args, kwargs)):
            np.testing.assert_array_equal(first.numpy(), second.numpy())
    else:
        expected = _as_tuple(op.reference(*case.args, **case.kwargs))
        assert len(outputs) == len(expected), f"{op.name}: {len(outputs)} outputs, reference " \
                                              f"{len(expected)}"
        for out, reference in zip(outputs, expected):
            assert out.shape == np.shape(reference), f"{op.name}: shape {out.shape}, " \
                                                     f"reference {np.shape(reference)}"
            if _is_float(out):
                np.testing.assert_allclose(out.numpy(), reference, rtol=1e-9,
                                           atol=max(op.accuracy, 1e-12), err_msg=op.name)
            else:
                assert out.dtype == np.asarray(reference).dtype, f"{op.name}: {out.dtype}"
                np.testing.assert_array_equal(out.numpy(), reference, err_msg=op.name)
    for out in outputs:
        assert out.requires_grad == (op.differentiable and _is_float(out)), \
            f"{op.name}: requires_grad {out.requires_grad}"
        if out.grad_fn is not None:
            assert type(out.grad_fn) in op.functions, f"{op.name} ran {out.grad_fn.name}"
    floats = [t for t in made if t.requires_grad]
    _backward(outputs, floats, np.random.default_rng(0))
    for original, made_tensor in zip(originals, made):
        np.testing.assert_array_equal(made_tensor.numpy(), original,
                                      err_msg=f"{op.name} mutated")


def check_dtypes(op, case, device="cpu") -> None:
    """float32 in, float32 out (values and gradients); integer inputs: refused by float-only
    ops, computed with NumPy's result dtype by the others."""
    args, kwargs, made = _tensors(case, device, np.float32, requires_grad=op.differentiable)
    outputs = _evaluate(op, args, kwargs)
    for out in outputs:
        assert out.dtype.kind != "f" or out.dtype == np.float32, f"{op.name}: {out.dtype}"
    if op.reference is not None:
        expected = _as_tuple(op.reference(*case.args, **case.kwargs))
        for out, reference in zip(outputs, expected):
            np.testing.assert_allclose(out.numpy(), reference, rtol=1e-4, atol=1e-5,
                                       err_msg=op.name)
    floats = [t for t in made if t.requires_grad]
    for gradient in _backward(outputs, floats, np.random.default_rng(0)):
        assert gradient is None or gradient.dtype == np.float32, \
            f"{op.name}: gradient {gradient.dtype}"
    if op.spec.dtype == "float":
        _check_integer_inputs(op, case, device)


def _check_integer_inputs(op, case, device):
    integer_case = Case(*case.map_arrays(lambda a: _as_integers(a) if _is_float(a) else a))
    args, kwargs, _ = _tensors(integer_case, device, np.int64, requires_grad=False)
    if op.float_only:
        try:
            public_function(op)(*args, **kwargs)
        except DTypeError as error:
            assert "floating-point" in str(error), f"{op.name}: {error}"
        else:
            raise AssertionError(f"{op.name}: float-only, but integer inputs were accepted")
    elif op.reference is not None:
        expected = _as_tuple(op.reference(*integer_case.args, **integer_case.kwargs))
        for out, reference in zip(_evaluate(op, args, kwargs), expected):
            assert out.dtype == np.asarray(reference).dtype, f"{op.name}: {out.dtype}"
            np.testing.assert_array_equal(out.numpy(), reference, err_msg=op.name)


def check_gradients(op, case, device="cpu") -> None:
    """Gradients, and gradients of gradients, against central differences in float64."""
    inputs = [tensor(a, device=device, requires_grad=True)
              for a in case.arrays() if _is_float(a)]

    def fn(*floats):
        replacements = iter(floats)
        args, kwargs = case.map_arrays(
            lambda a: next(replacements) if _is_float(a) else tensor(a, device=device))
        return _evaluate(op, args, kwargs)

    assert gradcheck(fn, inputs, eps=op.eps)
    if op.gradgrad:
        assert gradgradcheck(fn, inputs, eps=op.eps)


def check_fully_masked(op, case, device="cpu") -> None:
    """For an op whose spec takes a `mask`: with every entry masked, the outputs and (for a
    differentiable op) the gradients are finite: no NaN from an empty row."""
    if not op.spec.mask or case.kwargs.get("mask") is None:
        return
    masked = Case(case.args, {**case.kwargs, "mask": np.ones_like(case.kwargs["mask"])})
    args, kwargs, made = _tensors(masked, device, np.float64, requires_grad=op.differentiable)
    outputs = _evaluate(op, args, kwargs)
    floats = [t for t in made if t.requires_grad]
    grads = _backward(outputs, floats, np.random.default_rng(0))
    for result in [*outputs, *(g for g in grads if g is not None)]:
        assert np.isfinite(result.numpy()).all(), f"{op.name}: NaN/Inf with every entry masked"


# ----- helpers --------------------------------------------------------------------------------

def _as_tuple(result):
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)


def _is_float(array):
    return array.dtype.kind == "f"


def _as_integers(array):
    """Floats to distinct int64 (x100, rounded: the spec's margins and gaps survive)."""
    return np.asarray(np.rint(array * 100), dtype=np.int64)


def _tensors(case, device, dtype, requires_grad):
    """The case's arguments as tensors on `device` (floats cast to `dtype`), and every tensor
    made."""
    made = []

    def convert(array):
        floating = _is_float(array)
        made.append(tensor(array.astype(dtype) if floating else array, device=device,
                           requires_grad=requires_grad and floating))
        return made[-1]

    args, kwargs = case.map_arrays(convert)
    return args, kwargs, made


def _evaluate(op, args, kwargs):
    if op.random:
        manual_seed(0)  # the same draws on every evaluation
    return _as_tuple(public_function(op)(*args, **kwargs))


def _backward(outputs, inputs, rng):
    """Gradients of the outputs contracted with random upstream gradients."""
    pairs = [(o, rng.standard_normal(o.shape).astype(o.dtype)) for o in outputs
             if o.requires_grad]
    if not pairs:
        return [None] * len(inputs)
    return grad([o for o, _ in pairs], inputs,
                   [tensor(g, device=o.device) for o, g in pairs], allow_unused=True)
