"""The copy task: a small model learns to reproduce random symbol sequences, and greedy
decoding copies held-out ones exactly (the classic smoke test of an encoder-decoder)."""

import numpy as np
import pytest

import minigrad as mg
from minigrad.nn import functional as F
from minigrad.optim import Adam, NoamSchedule
from transformer import Transformer, TransformerConfig, greedy_decode

PAD, BOS, EOS, VOCAB = 0, 1, 2, 12  # symbols are 3 .. 11
MAX_SYMBOLS = 8


def random_sequences(rng, count):
    """`count` sequences of 1..MAX_SYMBOLS random symbols, as (count, MAX_SYMBOLS) padded ids."""
    lengths = rng.integers(1, MAX_SYMBOLS + 1, count)
    symbols = rng.integers(3, VOCAB, (count, MAX_SYMBOLS))
    return np.where(np.arange(MAX_SYMBOLS) < lengths[:, None], symbols, PAD), lengths


def teacher_forcing_batch(sequences, lengths):
    """tgt_in = BOS + symbols, tgt_out = symbols + EOS, both padded."""
    rows = np.arange(len(sequences))
    tgt_out = np.concatenate([sequences, np.full((len(sequences), 1), PAD)], axis=1)
    tgt_out[rows, lengths] = EOS
    tgt_in = np.concatenate([np.full((len(sequences), 1), BOS), sequences], axis=1)
    return tgt_in, tgt_out


@pytest.mark.acceptance
def test_a_small_model_learns_to_copy():
    """2+2 layers of width 32, 400 steps of 64 sequences with Adam (the paper's betas and eps)
    and Noam warmup; then greedy copies of 200 fresh sequences, >= 90% exactly right."""
    mg.manual_seed(0)
    rng = np.random.default_rng(0)
    model = Transformer(TransformerConfig(
        src_vocab_size=VOCAB, tgt_vocab_size=VOCAB, d_model=32, n_heads=4, n_encoder_layers=2,
        n_decoder_layers=2, d_ff=64, dropout=0.0, max_len=16))
    optimizer = Adam(model.parameters(), lr=1.0, betas=(0.9, 0.98), eps=1e-9)
    schedule = NoamSchedule(optimizer, d_model=32, warmup_steps=50, factor=0.5)
    for _ in range(400):
        sequences, lengths = random_sequences(rng, 64)
        tgt_in, tgt_out = teacher_forcing_batch(sequences, lengths)
        logits = model(mg.tensor(sequences), mg.tensor(tgt_in))
        loss = F.cross_entropy(logits, mg.tensor(tgt_out), ignore_index=PAD)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        schedule.step()

    model.eval()
    sequences, lengths = random_sequences(np.random.default_rng(1), 200)
    copies = greedy_decode(model, mg.tensor(sequences), MAX_SYMBOLS + 1, BOS, EOS).numpy()
    _, expected = teacher_forcing_batch(sequences, lengths)  # symbols, EOS, padding
    padded = np.full_like(expected, PAD)
    padded[:, :copies.shape[1]] = copies
    exact = (padded == expected).all(axis=1)
    assert exact.mean() >= 0.9, f"exact match {exact.mean():.2f}, last loss {loss.item():.3f}"
