"""Masks: the builders' shapes and values, and their effect on a whole model, exactly: what a
position must not see cannot move its output; what it may see does."""

import numpy as np
import pytest

import minigrad as mg
from transformer import AttentionRecorder, Transformer, TransformerConfig
from transformer.masks import causal_mask, combine, padding_mask

PAD = 0


def ids(rows):
    return mg.tensor(np.array(rows, dtype=np.int64))


@pytest.fixture(scope="module")
def model():
    """A tiny float64 model without dropout (so that outputs are deterministic)."""
    mg.manual_seed(0)
    config = TransformerConfig(src_vocab_size=11, tgt_vocab_size=11, d_model=16, n_heads=4,
                               n_encoder_layers=2, n_decoder_layers=2, d_ff=32, dropout=0.0)
    return Transformer(config).to(dtype="float64").eval()


SRC = [[3, 4, 5, 6, 7, PAD, PAD], [8, 9, 10, 3, 4, 5, 6]]
TGT = [[1, 5, 6, 7, 8, 9], [1, 9, 8, 7, 6, 5]]


def test_padding_mask_shape_and_values():
    mask = padding_mask(ids(SRC), PAD)
    assert mask.shape == (2, 1, 1, 7) and mask.dtype == np.bool_
    np.testing.assert_array_equal(mask.numpy()[:, 0, 0], np.array(SRC) == PAD)


def test_causal_mask_shape_and_values():
    mask = causal_mask(4)
    assert mask.shape == (1, 1, 4, 4) and mask.dtype == np.bool_
    np.testing.assert_array_equal(mask.numpy()[0, 0], np.triu(np.ones((4, 4), bool), k=1))


def test_causal_mask_with_an_offset_lets_new_queries_see_the_cached_keys():
    mask = causal_mask(2, offset=3).numpy()[0, 0]  # queries at positions 3, 4; keys 0..4
    np.testing.assert_array_equal(mask, [[False, False, False, False, True],
                                         [False, False, False, False, False]])


def test_combine_is_a_logical_or_that_broadcasts():
    combined = combine(padding_mask(ids(SRC)[:, :4], PAD), None, causal_mask(4))
    assert combined.shape == (2, 1, 4, 4)
    assert combine(None, None) is None
    expected = (np.array(SRC)[:, None, None, :4] == PAD) | np.triu(np.ones((4, 4), bool), k=1)
    np.testing.assert_array_equal(combined.numpy(), expected)


@pytest.mark.parametrize("position", [1, 3, 5])
def test_a_future_target_token_does_not_reach_earlier_outputs(model, position):
    before = model(ids(SRC), ids(TGT)).numpy()
    changed = np.array(TGT)
    changed[:, position] = 2
    after = model(ids(SRC), ids(changed)).numpy()
    np.testing.assert_allclose(after[:, :position], before[:, :position], rtol=0, atol=1e-12)
    moved = np.abs(after[:, position:] - before[:, position:]).max(axis=-1)  # (batch, later)
    assert (moved > 1e-6).all()


def test_a_padded_source_position_reaches_no_output(model):
    src_mask = padding_mask(ids(SRC), PAD)
    before = model(ids(SRC), ids(TGT), src_mask=src_mask).numpy()
    memory_before = model.encode(ids(SRC), src_mask).numpy()
    changed = np.array(SRC)
    changed[0, 5:] = [9, 10]  # other tokens where row 0 is padded, the mask kept
    after = model(ids(changed), ids(TGT), src_mask=src_mask).numpy()
    memory_after = model.encode(ids(changed), src_mask).numpy()
    np.testing.assert_allclose(after, before, rtol=0, atol=1e-12)
    np.testing.assert_allclose(memory_after[0, :5], memory_before[0, :5], rtol=0, atol=1e-12)


def test_an_unpadded_source_token_reaches_every_output_of_its_row(model):
    before = model(ids(SRC), ids(TGT)).numpy()
    changed = np.array(SRC)
    changed[0, 2] = 9
    after = model(ids(changed), ids(TGT)).numpy()
    assert (np.abs(after[0] - before[0]).max(axis=-1) > 1e-6).all()
    np.testing.assert_allclose(after[1], before[1], rtol=0, atol=1e-12)  # rows are independent


def test_attention_weights_are_zero_where_masked(model):
    with AttentionRecorder(model) as recorder:
        model(ids(SRC), ids(TGT))
    future = np.triu(np.ones((6, 6), bool), k=1)
    for layer in (1, 2):
        encoder = recorder.weights[("encoder", layer, "self_attn")][0]  # (batch, heads, 7, 7)
        decoder = recorder.weights[("decoder", layer, "self_attn")][0]  # (batch, heads, 6, 6)
        cross = recorder.weights[("decoder", layer, "cross_attn")][0]  # (batch, heads, 6, 7)
        assert (encoder[0, :, :, 5:] == 0).all() and (cross[0, :, :, 5:] == 0).all()
        assert (decoder[:, :, future] == 0).all()
        for weights in (encoder, decoder, cross):
            np.testing.assert_allclose(weights.sum(axis=-1), 1.0, atol=1e-12)
