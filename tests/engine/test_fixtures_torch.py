"""minigrad against PyTorch's numbers for the ops whose meaning PyTorch defines. The numbers
are committed fixtures (tests/fixtures/torch_ops.npz, written by
scripts/make_torch_fixtures.py): PyTorch is never imported here. Each case checks the output
and the gradient of every floating input (but those PyTorch uses as constants) for the stored
random upstream gradient, in float64."""

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
# minigrad's own names and arguments for the script's other cases (same names as PyTorch's,
# axis for dim, the class axis last)
UNARY = ("log2", "log10", "log1p", "expm1", "exp2", "rsqrt", "sin", "cos", "tan", "asin",
         "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh")
CASES.update({name: getattr(mg, name) for name in UNARY})
ACTIVATIONS = {
    "leaky_relu": {"negative_slope": 0.2}, "elu": {"alpha": 0.7}, "celu": {"alpha": 0.5},
    "selu": {}, "silu": {}, "mish": {}, "softplus": {"beta": 2.0}, "softsign": {},
    "hardsigmoid": {}, "hardswish": {}, "hardtanh": {"min_val": -0.5, "max_val": 1.5},
    "relu6": {}, "logsigmoid": {},
}
CASES.update({f"F_{name}": (lambda f, o: lambda x: f(x, **o))(getattr(F, name), options)
              for name, options in ACTIVATIONS.items()})
CASES.update({
    "logaddexp": mg.logaddexp,
    "copysign": mg.copysign,
    "fmod": mg.fmod,
    "remainder": lambda a, b: a % b,
    "div_floor": lambda a, b: mg.div(a, b, rounding_mode="floor"),
    "rounding": lambda x: x.floor() + x.ceil() + x.round() + x.trunc() + x.sign(),
    "power_zero_base": lambda a, b: a ** b,
    "lerp": mg.lerp,
    "softmin": lambda x: F.softmin(x, axis=1),
    "normalize": lambda x: F.normalize(x, p=2.0, axis=1),
    "var_unbiased": lambda x: x.var(1, correction=1),
    "std_unbiased": lambda x: x.std(0, keepdims=True, correction=1),
    "prod": lambda x: x.prod(1),
    "cumsum": lambda x: x.cumsum(1),
    "cumprod": lambda x: x.cumprod(0),
    "cummax": lambda x: x.cummax(1)[0],
    "cummin": lambda x: x.cummin(0)[0],
    "logcumsumexp": lambda x: x.logcumsumexp(1),
    "sort_descending": lambda x: x.sort(1, descending=True)[0],
    "topk_smallest": lambda x: mg.topk(x, 2, axis=0, largest=False)[0],
    "flip": lambda x: x.flip((0, 2)),
    "roll": lambda x: x.roll((1, -2), axis=(0, 1)),
    "repeat": lambda x: x.repeat(2, 1, 3),
    "repeat_interleave": lambda x: x.repeat_interleave(2, axis=1),
    "flatten": lambda x: x.flatten(1, 2),
    "unfold": lambda x: x.unfold(1, 3, 2),
    "gather": lambda x, index: mg.gather(x, 1, index),
    "scatter": lambda x, index, src: mg.scatter(x, 1, index, src),
    "scatter_add": lambda x, index, src: mg.scatter_add(x, 0, index, src),
    "scatter_reduce_mean": lambda x, index, src: mg.scatter_reduce(x, 0, index, src, "mean"),
    "masked_select": mg.masked_select,
    "diagonal": lambda x: mg.diagonal(x, offset=1, axis1=0, axis2=2),
    "diag": lambda x: mg.diag(x, -1),
    "nll_loss": lambda x, target: F.nll_loss(x, target),
    "cross_entropy_probabilities": lambda logits, target: F.cross_entropy(
        logits, target, label_smoothing=0.1),
    "binary_cross_entropy": F.binary_cross_entropy,
    "binary_cross_entropy_with_logits": lambda x, t: F.binary_cross_entropy_with_logits(
        x, t, pos_weight=2.5),
    "mse_loss": F.mse_loss,
    "l1_loss": lambda x, t: F.l1_loss(x, t, reduction="sum"),
    "pad_constant": lambda x: F.pad(x, (1, 2, 0, 1), value=-0.5),
    "pad_reflect": lambda x: F.pad(x, (2, 1), mode="reflect"),
    "pad_replicate": lambda x: F.pad(x, (1, 2, 2, 0), mode="replicate"),
    "pad_circular": lambda x: F.pad(x, (2, 1), mode="circular"),
    "einsum": lambda a, b, c: mg.einsum("bi,ij,bj->b", a, b, c),
    "conv2d": lambda x, w, b: F.conv2d(x, w, b, stride=(1, 2), padding=1, dilation=(2, 1)),
    "conv_transpose2d": lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1,
                                                           output_padding=1),
    "max_pool2d": lambda x: F.max_pool2d(x, 3, stride=2, padding=1),
    "avg_pool2d": lambda x: F.avg_pool2d(x, (2, 3), stride=(2, 1), padding=(1, 1)),
    "attention_attn_mask_bool": lambda q, k, v, attend: F.scaled_dot_product_attention(
        q, k, v, attn_mask=attend),
    "attention_float_mask_scale": lambda q, k, v, bias: F.scaled_dot_product_attention(
        q, k, v, attn_mask=bias, scale=0.3),
    "attention_causal_gqa": lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, is_causal=True, enable_gqa=True),
    "conv2d_groups": lambda x, w: F.conv2d(x, w, stride=2, padding=(1, 0), groups=2),
    "conv_transpose2d_groups": lambda x, w: F.conv_transpose2d(x, w, stride=(2, 1), dilation=2,
                                                               groups=2),
    "interpolate_nearest": lambda x: F.interpolate(x, size=(5, 3), mode="nearest"),
    "interpolate_bilinear": lambda x: F.interpolate(x, scale_factor=(1.5, 2.0),
                                                    mode="bilinear"),
    "interpolate_bilinear_down": lambda x: F.interpolate(x, size=(2, 3), mode="bilinear"),
})


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
    inputs = [mg.tensor(a, requires_grad=f"{name}__grad{i}" in fixtures)
              for i, a in enumerate(arrays)]
    out = CASES[name](*inputs)
    # minigrad's erf is an approximation accurate to 1.5e-7: exact GELU agrees to ~1e-6
    np.testing.assert_allclose(out.numpy(), fixtures[f"{name}__out"], rtol=1e-6, atol=1e-6)
    floats = [t for t in inputs if t.requires_grad]
    grads = mg.grad(out, floats, mg.tensor(fixtures[f"{name}__upstream"]))
    positions = [i for i, t in enumerate(inputs) if t.requires_grad]
    for i, grad in zip(positions, grads):
        np.testing.assert_allclose(grad.numpy(), fixtures[f"{name}__grad{i}"], rtol=1e-6,
                                   atol=1e-6, err_msg=f"{name}: gradient of input {i}")
