"""Algebraic properties, edge cases the conventions define (masked rows, ignored targets),
numerical stability on large inputs, and determinism of scatter-adds."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg
from minigrad.nn import functional as F
from minigrad.testing.strategies import shapes


def leaf(array, dtype=np.float64):
    return mg.tensor(np.asarray(array, dtype=dtype), requires_grad=True)


def random(shape, seed=0, scale=1.0):
    return np.random.default_rng(seed).standard_normal(shape) * scale


def assert_finite(*tensors):
    for t in tensors:
        assert np.isfinite(t.numpy()).all(), t


# ----- algebra --------------------------------------------------------------------------------

@given(shape=shapes(), seed=st.integers(0, 2**16))
def test_gradient_of_sum_of_products_is_the_other_factor(shape, seed):
    x, y = leaf(random(shape, seed)), leaf(random(shape, seed + 1))
    (x * y).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.numpy())
    np.testing.assert_array_equal(y.grad.numpy(), x.numpy())


@given(shape=shapes(min_ndim=1), seed=st.integers(0, 2**16), data=st.data())
def test_log_softmax_rows_exponentiate_to_one(shape, seed, data):
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    out = F.log_softmax(mg.tensor(random(shape, seed, scale=5.0)), axis=axis)
    np.testing.assert_allclose(np.exp(out.numpy()).sum(axis=axis), 1.0, rtol=1e-12)


@given(shape=shapes(min_ndim=1), seed=st.integers(0, 2**16),
       shift=st.floats(-1e3, 1e3, allow_nan=False))
def test_softmax_is_shift_invariant(shape, seed, shift):
    x = random(shape, seed)
    np.testing.assert_allclose(F.softmax(mg.tensor(x + shift)).numpy(),
                               F.softmax(mg.tensor(x)).numpy(), rtol=1e-9, atol=1e-12)


@given(shape=shapes(min_ndim=1).filter(lambda s: s[-1] > 1), seed=st.integers(0, 2**16))
def test_layer_norm_output_has_zero_mean_and_unit_variance(shape, seed):
    x = random(shape, seed, scale=3.0) + 2.0
    out = F.layer_norm(mg.tensor(x), shape[-1:], eps=1e-12).numpy()
    np.testing.assert_allclose(out.mean(axis=-1), 0.0, atol=1e-9)
    np.testing.assert_allclose(out.var(axis=-1), 1.0, rtol=1e-6)


def test_max_ties_split_the_gradient_evenly():
    x = leaf([1.0, 3.0, 3.0])
    x.max().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 0.5, 0.5])
    a, b = leaf([2.0, 1.0]), leaf([2.0, 0.0])
    mg.maximum(a, b).sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [0.5, 1.0])
    np.testing.assert_array_equal(b.grad.numpy(), [0.5, 0.0])


def test_python_scalars_on_either_side():
    x = leaf([0.5, 2.0])
    checks = [lambda t: 2 - t, lambda t: 3 / t, lambda t: t ** 3, lambda t: 2 ** t,
              lambda t: 1.5 * t + 1, lambda t: -t / 4]
    for fn in checks:
        assert mg.gradcheck(fn, [x])
        assert mg.gradgradcheck(fn, [x])


# ----- masks, ignored targets -----------------------------------------------------------------

def test_masked_softmax_entries_are_exactly_zero():
    x = mg.tensor(random((3, 5)))
    mask = np.random.default_rng(1).random((3, 5)) < 0.4
    out = F.softmax(x, mask=mask).numpy()
    assert (out[mask] == 0).all()
    rows = ~mask.all(axis=-1)
    np.testing.assert_allclose(out[rows].sum(axis=-1), 1.0)


def test_masked_entries_are_ignored_whatever_they_hold():
    x = mg.tensor([[np.inf, 1.0, 3e38], [-np.inf, 0.0, 2.0], [5.0, -3e38, np.inf]])
    mask = np.array([[True, False, True], [True, False, False], [False, False, True]])
    expected = F.softmax(mg.tensor([[-np.inf, 1.0, -np.inf], [-np.inf, 0.0, 2.0],
                                    [5.0, -3e38, -np.inf]])).numpy()
    np.testing.assert_array_equal(F.softmax(x, mask=mask).numpy(), expected)
    np.testing.assert_array_equal(F.softmax(x, mask=mask[:1]).numpy()[:, [0, 2]], 0.0)


def test_a_fully_masked_softmax_row_is_zeros_with_zero_gradient():
    x = leaf(random((2, 4)))
    mask = np.array([[True] * 4, [False, True, False, False]])
    out = F.softmax(x, mask=mask)
    out.backward(mg.tensor(random((2, 4), seed=3)))
    np.testing.assert_array_equal(out.numpy()[0], 0.0)
    np.testing.assert_array_equal(x.grad.numpy()[0], 0.0)
    assert_finite(out, x.grad)


def test_a_row_of_minus_infinity_gives_zeros():
    x = mg.tensor([[-np.inf, -np.inf], [0.0, -np.inf]])
    np.testing.assert_array_equal(F.softmax(x).numpy(), [[0.0, 0.0], [1.0, 0.0]])
    assert mg.logsumexp(x, axis=-1).numpy()[0] == -np.inf


def test_a_fully_masked_attention_row_is_zeros_with_zero_gradient():
    q, k = leaf(random((1, 2, 3, 4))), leaf(random((1, 2, 5, 4), 1))
    v = leaf(random((1, 2, 5, 3), 2))
    mask = np.zeros((1, 1, 3, 5), dtype=bool)
    mask[..., 0, :] = True  # the first query sees nothing
    mask[..., 1, 3:] = True
    out = F.scaled_dot_product_attention(q, k, v, mask=mask)
    out.backward(mg.tensor(random(out.shape, 4)))
    np.testing.assert_array_equal(out.numpy()[..., 0, :], 0.0)
    np.testing.assert_array_equal(q.grad.numpy()[..., 0, :], 0.0)
    assert_finite(out, q.grad, k.grad, v.grad)


def test_attention_weights_are_the_masked_softmax():
    q, k, v = mg.tensor(random((2, 3, 4))), mg.tensor(random((2, 5, 4), 1)), mg.tensor(
        random((2, 5, 2), 2))
    mask = np.zeros((1, 1, 5), dtype=bool)
    mask[..., -1] = True
    out, weights = F.scaled_dot_product_attention(q, k, v, mask=mask, return_weights=True)
    w = weights.numpy()
    np.testing.assert_allclose(w.sum(axis=-1), 1.0)
    assert (w[..., -1] == 0).all() and not weights.requires_grad
    np.testing.assert_allclose(out.numpy(), w @ v.numpy())


def test_cross_entropy_with_every_target_ignored_is_zero_with_zero_gradient():
    logits = leaf(random((2, 3, 4)))
    target = mg.tensor(np.full((2, 3), -100))
    loss = F.cross_entropy(logits, target, ignore_index=-100, label_smoothing=0.1)
    loss.backward()
    assert loss.item() == 0.0
    np.testing.assert_array_equal(logits.grad.numpy(), 0.0)


def test_embedding_padding_row_gets_no_gradient_and_repeats_accumulate():
    weight = leaf(random((4, 3)))
    ids = mg.tensor([[1, 0, 1], [2, 1, 0]])
    F.embedding(ids, weight, padding_idx=0).sum().backward()
    np.testing.assert_array_equal(weight.grad.numpy()[:, 0], [0.0, 3.0, 1.0, 0.0])


# ----- stability on large inputs --------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("offset, scale", [(1e4, 1.0), (0.0, 1e30)])
def test_softmax_family_is_stable_on_large_inputs(dtype, offset, scale):
    base = random((3, 5))
    x = leaf(base * scale + offset, dtype)
    upstream = mg.tensor(random((3, 5), 1).astype(dtype))
    for fn in (F.softmax, F.log_softmax):
        out = fn(x)
        (grad,) = mg.grad(out, x, upstream)
        assert_finite(out, grad)
    rounding = 1e-3 if dtype == np.float32 else 1e-9  # of the offset inputs themselves
    np.testing.assert_allclose(F.softmax(x).numpy(), F.softmax(mg.tensor(base * scale)).numpy(),
                               atol=rounding)
    loss = F.cross_entropy(x, mg.tensor([0, 3, 4]), label_smoothing=0.1)
    (grad,) = mg.grad(loss, x)
    assert_finite(loss, grad)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_norm_is_stable_on_a_large_offset(dtype):
    base = random((4, 8))
    x = leaf(base + 1e4, dtype)
    out = F.layer_norm(x, (8,))
    (grad,) = mg.grad(out, x, mg.tensor(random((4, 8), 1).astype(dtype)))
    assert_finite(out, grad)
    np.testing.assert_allclose(out.numpy(), F.layer_norm(mg.tensor(base), (8,)).numpy(),
                               atol=5e-3 if dtype == np.float32 else 1e-9)


def test_layer_norm_is_stable_on_a_huge_scale():
    x = leaf(random((4, 8)) * 1e30)
    out = F.layer_norm(x, (8,))
    (grad,) = mg.grad(out, x, mg.tensor(random((4, 8), 1)))
    assert_finite(out, grad)
    np.testing.assert_allclose(out.numpy().var(axis=-1), 1.0, rtol=1e-6)


# ----- indexing and scatter-adds --------------------------------------------------------------

def test_repeated_indices_accumulate_in_the_gradient():
    x = leaf([10.0, 20.0, 30.0])
    x[mg.tensor([0, 2, 0, 0])].backward(mg.tensor([1.0, 2.0, 3.0, 4.0], dtype="float64"))
    np.testing.assert_array_equal(x.grad.numpy(), [8.0, 0.0, 2.0])
    y = leaf(np.zeros((2, 3)))
    y[np.array([1, 1]), np.array([2, 2])].sum().backward()
    np.testing.assert_array_equal(y.grad.numpy(), [[0, 0, 0], [0, 0, 2.0]])


def test_index_add_is_deterministic_bit_for_bit():
    rng = np.random.default_rng(0)
    index = (mg.tensor(rng.integers(0, 7, 500)),)
    values = mg.tensor(rng.standard_normal((500, 3)).astype(np.float32))
    runs = [mg.index_add(values, index, (7, 3)).numpy().tobytes() for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]


def test_embedding_backward_is_deterministic_bit_for_bit():
    rng = np.random.default_rng(0)
    ids = mg.tensor(rng.integers(0, 5, (20, 30)))
    upstream = mg.tensor(rng.standard_normal((20, 30, 8)).astype(np.float32))
    grads = []
    for _ in range(3):
        weight = mg.tensor(np.ones((5, 8), dtype=np.float32), requires_grad=True)
        F.embedding(ids, weight).backward(upstream)
        grads.append(weight.grad.numpy().tobytes())
    assert grads[0] == grads[1] == grads[2]


def test_topk_values_and_indices_agree():
    x = mg.tensor(random((3, 6)))
    values, indices = mg.topk(x, 2)
    np.testing.assert_array_equal(np.take_along_axis(x.numpy(), indices.numpy(), -1),
                                  values.numpy())
    assert (values.numpy()[:, 0] >= values.numpy()[:, 1]).all()
    assert indices.dtype == np.int64


# ----- dropout --------------------------------------------------------------------------------

def test_dropout_zeroes_or_scales_and_its_gradient_is_the_mask():
    x = leaf(random((40, 50)) + 5.0)
    mg.manual_seed(0)
    out = F.dropout(x, 0.25)
    out.backward(mg.ones(40, 50, dtype="float64"))
    kept = out.numpy() != 0
    np.testing.assert_allclose(out.numpy()[kept], x.numpy()[kept] / 0.75)
    np.testing.assert_allclose(x.grad.numpy(), kept / 0.75)
    assert abs(kept.mean() - 0.75) < 0.03


def test_dropout_extremes_and_evaluation_mode():
    x = mg.tensor(random((4, 4)))
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    np.testing.assert_array_equal(F.dropout(x, 1.0).numpy(), 0.0)
    with pytest.raises(ValueError, match="dropout"):
        F.dropout(x, 1.5)


def test_attention_dropout_gradient_with_the_seed_reset():
    q, k, v = leaf(random((2, 3, 4))), leaf(random((2, 3, 4), 1)), leaf(random((2, 3, 2), 2))

    def attend(q, k, v):
        mg.manual_seed(5)
        return F.scaled_dot_product_attention(q, k, v, dropout_p=0.3, training=True)

    assert mg.gradcheck(attend, [q, k, v])
    assert mg.gradgradcheck(attend, [q, k, v])
