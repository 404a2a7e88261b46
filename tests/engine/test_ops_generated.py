"""Tests generated from the op table (`minigrad.ops.registry.ops()`): every op, on inputs
drawn from its spec (minigrad/testing/strategies.py), on every available device, by the
checks of minigrad/testing/op_checks.py (the same ones `mg.testing.check_op` runs on a user's
op)."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from minigrad.ops.registry import ops
from minigrad.testing import op_checks
from minigrad.testing.strategies import cases

OPS = ops()
DIFFERENTIABLE = [op for op in OPS if op.differentiable]
MASKED = [op for op in OPS if op.spec.mask]


def _params(ops):
    return [pytest.param(op, id=op.name) for op in ops]


@pytest.mark.parametrize("op", _params(OPS))
@given(data=st.data())
def test_values_match_reference(op, device, data):
    op_checks.check_values(op, data.draw(cases(op)), device)


@pytest.mark.parametrize("op", _params(OPS))
@given(data=st.data())
def test_dtypes(op, device, data):
    op_checks.check_dtypes(op, data.draw(cases(op)), device)


@pytest.mark.parametrize("op", _params(DIFFERENTIABLE))
@given(data=st.data())
def test_gradients(op, device, data):
    op_checks.check_gradients(op, data.draw(cases(op)), device)


@pytest.mark.parametrize("op", _params(MASKED))
@given(data=st.data())
def test_fully_masked(op, device, data):
    op_checks.check_fully_masked(op, data.draw(cases(op)), device)
