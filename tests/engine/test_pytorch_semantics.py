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


# ----- the added ops: behaviour the generated checks do not draw ------------------------------

def _leaf(values, dtype=np.float64):
    return mg.tensor(np.asarray(values, dtype=dtype), requires_grad=True)


def test_var_and_std_with_pytorchs_unbiased_correction():
    values = np.array([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]])
    x = _leaf(values)
    np.testing.assert_allclose(x.var(1, correction=1).numpy(), values.var(1, ddof=1))
    np.testing.assert_allclose(x.std(correction=1).numpy(), values.std(ddof=1))
    assert mg.gradcheck(lambda t: t.var(1, correction=1), [x])
    assert mg.gradcheck(lambda t: t.std(0, correction=1), [x])


def test_std_of_equal_values_has_a_zero_gradient():
    x = _leaf([2.0, 2.0, 2.0])
    (gradient,) = _gradient(x.std(), [x])
    np.testing.assert_array_equal(gradient.numpy(), [0.0, 0.0, 0.0])


def test_prod_gradient_with_zeros_is_the_product_of_the_others():
    x = _leaf([[2.0, 0.0, 3.0], [0.0, 0.0, 5.0], [1.5, 2.0, -1.0]])
    (gradient,) = _gradient(x.prod(1), [x], upstream=1.0)
    np.testing.assert_allclose(gradient.numpy(), [[0.0, 6.0, 0.0], [0.0, 0.0, 0.0],
                                                  [-2.0, -1.5, 3.0]])


def test_sum_in_another_dtype_gives_the_gradient_in_the_inputs():
    x = _leaf([1.0, 2.0], np.float32)
    total = x.sum(dtype="float64")
    (gradient,) = _gradient(total, [x])
    assert total.dtype == np.float64 and gradient.dtype == np.float32
    assert mg.tensor(np.array([2**31 - 1, 1], np.int32)).sum(dtype="int64").numpy() == 2**31


def test_where_with_two_number_branches_is_a_tensor_on_the_conditions_device():
    condition = mg.tensor(np.array([True, False]))
    floats, ints = mg.where(condition, 1.0, 0.0), mg.where(condition, 2, 5)
    assert floats.dtype == mg.get_default_dtype() and ints.dtype == np.int64
    np.testing.assert_array_equal(ints.numpy(), [2, 5])


def test_cross_entropy_against_class_probabilities():
    rng = np.random.default_rng(0)
    logits = _leaf(rng.standard_normal((3, 4)))
    target = _leaf(rng.dirichlet(np.ones(4), 3))
    loss = F.cross_entropy(logits, target, label_smoothing=0.1)
    q = 0.9 * target.numpy() + 0.025
    log_p = logits.numpy() - np.log(np.exp(logits.numpy()).sum(-1, keepdims=True))
    np.testing.assert_allclose(loss.numpy(), -(q * log_p).sum(-1).mean())
    assert mg.gradcheck(lambda a, b: F.cross_entropy(a, b), [logits, target])
    with pytest.raises(ShapeError, match="class-probability targets of shape"):
        F.cross_entropy(logits, _leaf(np.ones((3, 5))))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_stable_ops_stay_finite_on_large_inputs(dtype):
    big = np.array([-1e4, -100.0, 0.0, 100.0, 1e4], dtype=dtype)
    x = _leaf(big, dtype)
    outputs = [F.logsigmoid(x), F.softplus(x), F.silu(x), F.mish(x), F.elu(x), F.selu(x),
               mg.logaddexp(x, x.flip()), x.logcumsumexp(0),
               F.binary_cross_entropy_with_logits(x, mg.tensor(np.full(5, 0.5, dtype))),
               F.normalize(x.reshape(1, 5), axis=1)]
    for out in outputs:
        assert np.isfinite(out.numpy()).all(), out
        (gradient,) = _gradient(out.sum(), [x])
        assert np.isfinite(gradient.numpy()).all()
    np.testing.assert_allclose(x.logcumsumexp(0).numpy()[-1], 1e4 + np.log1p(np.exp(-1e4)),
                               rtol=1e-6)


def test_binary_cross_entropy_clips_its_logs_at_minus_100_as_pytorch():
    p = _leaf([0.0, 1.0, 0.5])
    loss = F.binary_cross_entropy(p, mg.tensor(np.array([1.0, 0.0, 1.0])), reduction="none")
    np.testing.assert_allclose(loss.numpy(), [100.0, 100.0, math.log(2)])
    (gradient,) = _gradient(loss.sum(), [p])
    assert np.isfinite(gradient.numpy()).all()


def test_creation_functions():
    np.testing.assert_array_equal(mg.eye(2, 3).numpy(), np.eye(2, 3))
    np.testing.assert_array_equal(mg.linspace(0, 1, 5).numpy(), np.linspace(0, 1, 5))
    assert mg.full_like(mg.tensor(np.zeros(2, np.int64)), 7).numpy().tolist() == [7, 7]
    assert mg.empty(2, 3).shape == (2, 3)
    mg.manual_seed(0)
    drawn = mg.randint(3, 7, (1000,)).numpy()
    assert drawn.dtype == np.int64 and set(drawn) == {3, 4, 5, 6}
    mg.manual_seed(0)
    np.testing.assert_array_equal(mg.randint(3, 7, (1000,)).numpy(), drawn)


def test_bad_arguments_of_the_added_ops_are_refused_in_one_line():
    x = _leaf(np.ones((2, 3)))
    cases = [
        (lambda: mg.div(x, x, rounding_mode="round"), ValueError, "div: rounding_mode"),
        (lambda: mg.gather(x, 1, np.array([[3]])), IndexError, r"gather: index values in \[3"),
        (lambda: mg.gather(x, 1, np.array([0])), ShapeError, "same number of axes"),
        (lambda: F.pad(x, (1,)), ShapeError, "pad: 1 widths"),
        (lambda: F.pad(x, (3, 0), mode="reflect"), ShapeError, "smaller than the axis"),
        (lambda: mg.einsum("ii->i", mg.tensor(np.ones((2, 2)))), ShapeError, "repeated"),
        (lambda: mg.einsum("...i->i", x), ShapeError, "ellipses"),
        (lambda: x.repeat(2), ShapeError, "one per axis"),
        (lambda: mg.scatter_reduce(x, 1, np.zeros((2, 3), np.int64), x, "amax"), ValueError,
         "scatter_reduce: reduce must be"),
        (lambda: mg.tensor(np.array([1])) ^ mg.tensor(np.array([1.0])), DTypeError,
         "bitwise_xor: needs boolean or integer"),
        (lambda: F.mse_loss(mg.tensor(np.array([1])), mg.tensor(np.array([2]))), DTypeError,
         "mse_loss: needs floating-point"),
        (lambda: mg.randint(3, 3, (2,)), ValueError, "randint: high"),
    ]
    for call, error, message in cases:
        with pytest.raises(error, match=message):
            call()


def test_a_row_attending_to_nothing_by_attn_mask_gives_zeros_and_finite_gradients():
    q, k, v = _qkv()
    attend = np.ones((3, 4), bool)
    attend[1] = False  # the second query attends to nothing (PyTorch: NaN)
    out = F.scaled_dot_product_attention(q, k, v, mg.tensor(attend))
    assert np.all(out.numpy()[:, :, 1] == 0) and np.isfinite(out.numpy()).all()
    grads = _gradient(out.sum(), [q, k, v])
    assert all(np.isfinite(g.numpy()).all() for g in grads)
