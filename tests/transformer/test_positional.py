"""Positional encodings (paper §3.5): the sinusoidal table against its formula, in both layouts;
relative positions as a dot product; learned positions; sequences longer than max_len."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import minigrad as mg
from minigrad.errors import ShapeError
from transformer import Transformer, TransformerConfig, greedy_decode
from transformer.positional import PositionalEncoding, sinusoidal_encoding

MAX_LEN, D_MODEL = 200, 16
FREQUENCIES = 1.0 / 10000 ** (np.arange(0, D_MODEL, 2) / D_MODEL)  # 1/10000^(2i/d)


@pytest.mark.parametrize("interleaved", [True, False])
def test_table_shape_and_dtype(interleaved):
    table = sinusoidal_encoding(MAX_LEN, D_MODEL, interleaved=interleaved)
    assert isinstance(table, np.ndarray)
    assert table.shape == (MAX_LEN, D_MODEL) and table.dtype == np.float32


def _numpy_table(max_len, d_model, interleaved):
    """The table as NumPy computes it (sin and cos of the same float64 angles)."""
    positions = np.arange(max_len, dtype=np.float64)[:, None]
    angles = positions * (1.0 / 10000 ** (np.arange(0, d_model, 2, dtype=np.float64) / d_model))
    table = np.empty((max_len, d_model))
    if interleaved:
        table[:, 0::2], table[:, 1::2] = np.sin(angles), np.cos(angles)
    else:
        table[:, :d_model // 2], table[:, d_model // 2:] = np.sin(angles), np.cos(angles)
    return table.astype(np.float32)


@pytest.mark.parametrize("interleaved", [True, False])
@pytest.mark.parametrize(("max_len", "d_model"), [(MAX_LEN, D_MODEL), (5000, 512)])
def test_the_engines_table_is_numpys_bit_for_bit(interleaved, max_len, d_model):
    """Built with mg.sin and mg.cos, the table holds the very numbers of NumPy's."""
    np.testing.assert_array_equal(sinusoidal_encoding(max_len, d_model, interleaved),
                                  _numpy_table(max_len, d_model, interleaved))


def test_interleaved_table_matches_the_formula():
    table = sinusoidal_encoding(MAX_LEN, D_MODEL)
    for pos in (0, 1, 7, 199):
        for i in range(D_MODEL // 2):
            angle = pos / 10000 ** (2 * i / D_MODEL)
            assert table[pos, 2 * i] == pytest.approx(np.sin(angle), abs=1e-6)
            assert table[pos, 2 * i + 1] == pytest.approx(np.cos(angle), abs=1e-6)


def test_sin_then_cos_table_has_the_same_frequencies():
    table = sinusoidal_encoding(MAX_LEN, D_MODEL, interleaved=False)
    angles = np.arange(MAX_LEN)[:, None] * FREQUENCIES  # (max_len, d/2)
    np.testing.assert_allclose(table[:, :D_MODEL // 2], np.sin(angles), atol=1e-6)
    np.testing.assert_allclose(table[:, D_MODEL // 2:], np.cos(angles), atol=1e-6)
    interleaved = sinusoidal_encoding(MAX_LEN, D_MODEL)
    np.testing.assert_array_equal(interleaved[:, 0::2], table[:, :D_MODEL // 2])
    np.testing.assert_array_equal(interleaved[:, 1::2], table[:, D_MODEL // 2:])


@pytest.mark.parametrize("interleaved", [True, False])
@settings(max_examples=60, deadline=None)
@given(pos=st.integers(0, MAX_LEN - 1), k=st.integers(0, MAX_LEN - 1))
def test_dot_product_depends_only_on_the_offset(interleaved, pos, k):
    """sin(a)sin(b) + cos(a)cos(b) = cos(b - a): PE[pos]·PE[pos+k] = Σ_i cos(k ω_i)."""
    table = sinusoidal_encoding(MAX_LEN, D_MODEL, interleaved=interleaved).astype(np.float64)
    if pos + k >= MAX_LEN:
        pos = MAX_LEN - 1 - k
    expected = np.cos(k * FREQUENCIES).sum()
    assert table[pos] @ table[pos + k] == pytest.approx(expected, abs=1e-4)
    assert table[pos] @ table[pos + k] == pytest.approx(table[0] @ table[k], abs=1e-4)


def test_encoding_adds_the_table_from_an_offset():
    encoding = PositionalEncoding("sinusoidal", MAX_LEN, D_MODEL)
    x = mg.zeros(2, 5, D_MODEL)
    table = sinusoidal_encoding(MAX_LEN, D_MODEL)
    np.testing.assert_array_equal(encoding(x).numpy()[1], table[:5])
    np.testing.assert_array_equal(encoding(x, offset=3).numpy()[0], table[3:8])


def test_learned_positions_are_a_trained_parameter():
    model = Transformer(TransformerConfig(10, 10, d_model=8, n_heads=2, n_encoder_layers=1,
                                          n_decoder_layers=1, d_ff=16, max_len=12,
                                          positional="learned"))
    names = dict(model.named_parameters())
    assert names["encoder.positional.table"].shape == (12, 8)
    assert names["decoder.positional.table"].shape == (12, 8)
    sinusoidal = Transformer(TransformerConfig(10, 10, d_model=8, n_heads=2, n_encoder_layers=1,
                                               n_decoder_layers=1, d_ff=16))
    assert not any("positional" in name for name, _ in sinusoidal.named_parameters())


@pytest.mark.parametrize("positional", ["sinusoidal", "sinusoidal-concat", "learned"])
def test_sequences_longer_than_max_len_raise_a_clear_error(positional):
    model = Transformer(TransformerConfig(10, 10, d_model=8, n_heads=2, n_encoder_layers=1,
                                          n_decoder_layers=1, d_ff=16, max_len=6,
                                          positional=positional, dropout=0.0))
    fits = mg.tensor(np.ones((2, 6), dtype=np.int64))
    too_long = mg.tensor(np.ones((2, 7), dtype=np.int64))
    assert model(fits, fits).shape == (2, 6, 10)
    for src, tgt in ((too_long, fits), (fits, too_long)):
        with pytest.raises(ShapeError, match="max_len=6"):
            model(src, tgt)
    with pytest.raises(ShapeError, match="max_len"):  # the 7th token fed is at position 6
        greedy_decode(model.eval(), fits, max_len=8, bos_id=1, eos_id=2, stop_at_eos=False)
