"""minigrad against PyTorch's numbers for the ops whose meaning PyTorch defines. The numbers
are committed fixtures (tests/fixtures/torch_ops.npz, written by
scripts/make_torch_fixtures.py): PyTorch is never imported here. Each case checks the output
and the gradient of every floating input for the stored random upstream gradient, in float64."""

from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
from minigrad.nn import functional as F

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "torch_ops.npz"

# The same cases as the script, in minigrad's conventions: class axis last, mask True = masked.
CASES = {
    "cross_entropy_smoothing": lambda logits, target: F.cross_entropy(
        logits, target, ignore_index=-100, label_smoothing=0.1),
    "cross_entropy_ignore_class_sum": lambda logits, target: F.cross_entropy(
        logits, target, ignore_index=2, label_smoothing=0.2, reduction="sum"),
    "cross_entropy_none": lambda logits, target: F.cross_entropy(
        logits, target, ignore_index=-100, label_smoothing=0.1, reduction="none"),
    "layer_norm": lambda x, weight, bias: F.layer_norm(x, (6,), weight, bias, eps=1e-5),
    "layer_norm_2d": lambda x, weight, bias: F.layer_norm(x, (2, 3), weight, bias, eps=1e-5),
    "gelu_exact": lambda x: F.gelu(x),
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "softmax": lambda x: F.softmax(x, axis=-1),
    "softmax_axis1": lambda x: F.softmax(x, axis=1),
    "log_softmax": lambda x: F.log_softmax(x, axis=-1),
    "attention": lambda q, k, v, mask: F.scaled_dot_product_attention(q, k, v, mask=mask),
}


@pytest.fixture(scope="module")
def fixtures():
    with np.load(FIXTURES) as stored:
        return dict(stored)


def test_every_fixture_case_is_checked(fixtures):
    assert {key.split("__")[0] for key in fixtures} == set(CASES)


@pytest.mark.parametrize("name", CASES)
def test_matches_pytorch(fixtures, name):
    arrays = []
    while f"{name}__in{len(arrays)}" in fixtures:
        arrays.append(fixtures[f"{name}__in{len(arrays)}"])
    inputs = [mg.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    out = CASES[name](*inputs)
    # minigrad's erf is an approximation accurate to 1.5e-7: exact GELU agrees to ~1e-6
    np.testing.assert_allclose(out.numpy(), fixtures[f"{name}__out"], rtol=1e-6, atol=1e-6)
    floats = [t for t in inputs if t.requires_grad]
    grads = mg.grad(out, floats, mg.tensor(fixtures[f"{name}__upstream"]))
    positions = [i for i, t in enumerate(inputs) if t.requires_grad]
    for i, grad in zip(positions, grads):
        np.testing.assert_allclose(grad.numpy(), fixtures[f"{name}__grad{i}"], rtol=1e-6,
                                   atol=1e-6, err_msg=f"{name}: gradient of input {i}")
