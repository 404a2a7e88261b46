"""Where minigrad reads a call as PyTorch does: axis -1 of a 0-d tensor, the softmax family on
0-d inputs, the gradients of `**` at a zero base, `~` on integers, and
`F.scaled_dot_product_attention`'s `attn_mask`, `is_causal`, `scale` and `enable_gqa`."""

import math

import numpy as np
import pytest

import minigrad as mg
from minigrad.errors import DTypeError, ShapeError
from minigrad.nn import functional as F


def _scalar(value=0.7):
    return mg.tensor(np.float64(value), requires_grad=True)


def _gradient(output, inputs, upstream=1.3):
    return mg.grad([output], inputs, [mg.tensor(np.full(output.shape, upstream))])


@pytest.mark.parametrize("axis", [0, -1, (0,), (-1,)])
@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "logsumexp", "var"])
def test_a_zero_dimensional_tensor_takes_axis_zero_and_minus_one(reduce, axis):
    x = _scalar()
    out = getattr(x, reduce)(axis)
    assert out.shape == ()
    (gradient,) = _gradient(out, [x])
    assert np.isfinite(gradient.numpy())


def test_squeeze_and_argmax_of_a_zero_dimensional_tensor_along_minus_one():
    x = _scalar()
    assert x.squeeze(-1).shape == ()
    assert int(x.argmax(-1).numpy()) == 0


def test_axis_out_of_range_of_a_zero_dimensional_tensor_names_the_range():
    with pytest.raises(ShapeError, match=r"sum: axis 1 .* \[-1, 0\]"):
        _scalar().sum(1)


@pytest.mark.parametrize("axis", [0, -1])
def test_the_softmax_family_of_a_zero_dimensional_tensor_is_pytorchs(axis):
    x = _scalar(3.5)
    probability, log_probability = F.softmax(x, axis), F.log_softmax(x, axis)
    assert probability.shape == log_probability.shape == ()
    assert float(probability.numpy()) == 1.0 and float(log_probability.numpy()) == 0.0
    for out in (probability, log_probability):
        (gradient,) = _gradient(out, [x])
        assert float(gradient.numpy()) == 0.0
    masked = F.softmax(x, axis, mask=mg.tensor(np.bool_(True)))
    assert float(masked.numpy()) == 0.0


def test_the_softmax_of_a_zero_dimensional_tensor_refuses_another_axis_in_one_line():
    with pytest.raises(ShapeError, match=r"log_softmax: axis 1 is out of range"):
        F.log_softmax(_scalar(), 1)


def test_power_gradients_at_a_zero_base_are_masked_as_pytorch():
    """d/da = b·a^(b-1) is 0 where b = 0; d/db = a^b·log a is 0 where a = 0 and b >= 0 (the
    values PyTorch gives); elsewhere the formulas."""
    a = mg.tensor(np.array([0.0, 0.0, 0.0, 2.0, 0.0]), requires_grad=True)
    b = mg.tensor(np.array([0.0, 1.0, 2.5, 0.0, -1.0]), requires_grad=True)
    with np.errstate(divide="ignore"):  # 0 ** -1 = inf, as intended
        out = a ** b
    grad_a, grad_b = _gradient(out, [a, b], upstream=1.0)
    np.testing.assert_array_equal(out.numpy(), [1.0, 0.0, 0.0, 1.0, np.inf])
    np.testing.assert_array_equal(grad_a.numpy()[:4], [0.0, 1.0, 0.0, 0.0])
    np.testing.assert_allclose(grad_b.numpy()[:4], [0.0, 0.0, 0.0, math.log(2.0)])
    assert grad_b.numpy()[4] == -np.inf  # a = 0, b < 0: inf · log 0, as PyTorch


def test_power_gradient_of_a_constant_exponent_zero_is_zero():
    x = mg.tensor(np.array([0.0, 1.5]), requires_grad=True)
    (gradient,) = _gradient(x ** 0.0, [x], upstream=1.0)
    np.testing.assert_array_equal(gradient.numpy(), [0.0, 0.0])


def test_invert_is_bitwise_on_integers_and_logical_on_booleans():
    ints = mg.tensor(np.array([0, 1, -3, 6], dtype=np.int64))
    np.testing.assert_array_equal((~ints).numpy(), [-1, -2, 2, -7])
    flags = mg.tensor(np.array([True, False]))
    np.testing.assert_array_equal((~flags).numpy(), [False, True])
    np.testing.assert_array_equal(mg.logical_not(ints).numpy(), [True, False, False, False])


def test_invert_refuses_floats_in_one_line():
    with pytest.raises(DTypeError, match=r"bitwise_not \(~\): .* float64; .*logical_not"):
        ~mg.tensor(np.array([1.0]))


# ----- scaled_dot_product_attention ----------------------------------------------------------

def _qkv(seed=0, q_heads=2, kv_heads=2, q_len=3, k_len=4, d=5):
    rng = np.random.default_rng(seed)
    return [mg.tensor(rng.standard_normal(shape), requires_grad=True)
            for shape in ((2, q_heads, q_len, d), (2, kv_heads, k_len, d),
                          (2, kv_heads, k_len, 3))]


def _reference(q, k, v, excluded=None, bias=None, scale=None):
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ np.swapaxes(k, -1, -2) * scale
    if bias is not None:
        scores = scores + bias
    if excluded is not None:
        scores = np.where(excluded, -np.inf, scores)
    peak = scores.max(axis=-1, keepdims=True)
    e = np.exp(scores - np.where(np.isfinite(peak), peak, 0))
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total == 0, 1, total) @ v


def test_a_boolean_attn_mask_is_true_where_attended_as_pytorch():
    q, k, v = _qkv()
    attend = np.random.default_rng(1).random((3, 4)) < 0.6
    out = F.scaled_dot_product_attention(q, k, v, mg.tensor(attend))
    np.testing.assert_allclose(out.numpy(), _reference(q.numpy(), k.numpy(), v.numpy(),
                                                       excluded=~attend))
    own = F.scaled_dot_product_attention(q, k, v, mask=mg.tensor(~attend))
    np.testing.assert_array_equal(out.numpy(), own.numpy())


def test_a_float_attn_mask_is_added_to_the_scores():
    q, k, v = _qkv()
    bias = np.random.default_rng(2).standard_normal((1, 2, 3, 4))
    bias[0, 0, 1] = -np.inf  # a row attending to nothing: zeros, no NaN
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias, scale=0.3)
    expected = _reference(q.numpy(), k.numpy(), v.numpy(), bias=bias, scale=0.3)
    np.testing.assert_allclose(out.numpy(), expected)
    assert np.all(out.numpy()[:, 0, 1] == 0)
    grads = _gradient(out.sum(), [q, k, v])
    assert all(np.isfinite(g.numpy()).all() for g in grads)


def test_is_causal_is_the_top_left_causal_mask():
    q, k, v = _qkv(q_len=4)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    above = np.triu(np.ones((4, 4), bool), 1)
    np.testing.assert_allclose(out.numpy(), _reference(q.numpy(), k.numpy(), v.numpy(),
                                                       excluded=above))


def test_is_causal_with_an_attn_mask_is_refused_in_one_line():
    q, k, v = _qkv()
    with pytest.raises(ValueError, match="attn_mask or is_causal"):
        F.scaled_dot_product_attention(q, k, v, mg.tensor(np.ones((3, 4), bool)),
                                       is_causal=True)


def test_grouped_query_attention_shares_each_key_head_with_its_group():
    q, k, v = _qkv(q_heads=4, kv_heads=2)
    out = F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
    repeated = [np.repeat(t.numpy(), 2, axis=-3) for t in (k, v)]
    np.testing.assert_allclose(out.numpy(), _reference(q.numpy(), *repeated))
    _, grad_k, _ = _gradient(out.sum(), [q, k, v])
    assert grad_k.shape == k.shape
    with pytest.raises(ShapeError, match="multiple of the key's and value's"):
        F.scaled_dot_product_attention(*_qkv(q_heads=3, kv_heads=2), enable_gqa=True)


def test_an_attn_mask_of_another_dtype_is_refused_in_one_line():
    q, k, v = _qkv()
    with pytest.raises(DTypeError, match="attn_mask must be boolean"):
        F.scaled_dot_product_attention(q, k, v, np.ones((3, 4), np.int64))
