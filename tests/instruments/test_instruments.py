"""The study instruments beside the recorder: gradient noise and signal-to-noise per parameter
(against gradients taken by hand with mg.grad), the layer streams and their token share, and
attention entropy per head (against the formula on the AttentionRecorder's weights)."""

import math

import numpy as np
import pytest

import minigrad as mg
from transformer import Transformer, TransformerConfig
from transformer.attention import AttentionRecorder
from transformer.data import Example, Vocab, tokenize
from transformer.data.batching import encode_pairs, make_batch
from transformer.instruments.entropy import attention_entropy, entropy_rows
from transformer.instruments.noise import gradient_statistics, probe_loss
from transformer.instruments.streams import layer_streams, lengths_of, token_share

SENTENCES = ["a b c", "b c d a", "c d", "d a b c", "a c d", "b d a b", "c a", "d b c"]


@pytest.fixture(scope="module")
def task():
    examples = [Example(s, s, "copy") for s in SENTENCES]
    vocab = Vocab.build([tokenize(s) for s in SENTENCES])
    pairs = encode_pairs(examples, vocab)
    batches = [make_batch(pairs, range(i, i + 3), vocab) for i in (0, 3, 5)]
    return vocab, batches


def tiny_model(vocab, residual="standard", norm_first=False):
    mg.manual_seed(0)
    return Transformer(TransformerConfig(
        len(vocab), len(vocab), d_model=8, n_heads=2, n_encoder_layers=2, n_decoder_layers=2,
        d_ff=16, dropout=0.0, max_len=16, share_embeddings=True, residual=residual,
        norm_first=norm_first, pad_id=vocab.pad_id)).to(dtype="float64")


def test_gradient_statistics_equal_gradients_taken_by_hand(task):
    vocab, batches = task
    model = tiny_model(vocab)
    names, params = zip(*model.named_parameters())
    per_batch = [[g.numpy() for g in mg.grad(probe_loss(model, b, vocab.pad_id), list(params))]
                 for b in batches]
    rows = gradient_statistics(model, batches, vocab.pad_id, "tiny")
    found = {(r["param"], r["quantity"]): r["value"] for r in rows}
    for i, name in enumerate(names):
        grads = np.array([g[i] for g in per_batch])  # (K, *shape)
        mean = grads.mean(axis=0)
        noise_sq = sum(np.sum((g - mean) ** 2) for g in grads) / (len(grads) - 1)
        assert found[(name, "grad_mean_norm")] == pytest.approx(np.linalg.norm(mean), rel=1e-9)
        assert found[(name, "grad_noise")] == pytest.approx(math.sqrt(noise_sq), rel=1e-6)
        assert found[(name, "grad_snr")] == pytest.approx(np.sum(mean ** 2) / noise_sq,
                                                          rel=1e-6)
    w2 = [r for r in rows if r["param"] == "decoder.layers.1.ffn.sublayer.linear2.weight"]
    assert {(r["stack"], r["layer"], r["sublayer"], r["config"]) for r in w2} == \
        {("decoder", 2, "ffn", "tiny")}
    assert all(p.grad is None or not p.grad.numpy().any() for p in params)


def test_gradient_statistics_need_two_batches(task):
    vocab, batches = task
    with pytest.raises(ValueError, match="gradient_statistics: the noise needs two or more "
                                         "batches, got 1"):
        gradient_statistics(tiny_model(vocab), batches[:1], vocab.pad_id)


def test_layer_streams_are_the_blocks_inputs_and_outputs(task):
    vocab, batches = task
    model = tiny_model(vocab)
    seen = []
    model.encoder.layers[0].self_attn.observer = lambda *args: seen.append("kept")
    streams = layer_streams(model, batches[0])
    assert [len(streams[s]) for s in ("encoder", "decoder")] == [3, 3]
    embedded = model.encoder.embed(batches[0].src).numpy()
    np.testing.assert_allclose(streams["encoder"][0], embedded)
    memory = model.encode(batches[0].src, batches[0].src_mask).numpy()
    np.testing.assert_allclose(streams["encoder"][-1], memory)
    assert seen == ["kept"]  # the observer set before is back


def test_token_share():
    alike = np.ones((1, 4, 3))
    assert token_share(alike, [4]) == 0.0
    opposite = np.array([[[1.0, 0], [-1.0, 0], [5.0, 5.0]]])  # the third token is padding
    assert token_share(opposite, [2]) == 1.0
    x = np.random.default_rng(0).standard_normal((2, 5, 3))
    x[1, :2] = [[1, 0, 0], [-1, 0, 0]]  # share 1 over its first two tokens
    centred = x[0] - x[0].mean(axis=0)
    expected = (np.sum(centred ** 2) / np.sum(x[0] ** 2) + 1.0) / 2
    assert token_share(x, [5, 2]) == pytest.approx(expected)
    with pytest.raises(ValueError, match="token_share: no sequence has two or more tokens"):
        token_share(x, [1, 0])


def test_lengths_of(task):
    vocab, batches = task
    assert lengths_of(batches[0].src, vocab.pad_id).tolist() == \
        [len(tokenize(s)) for s in SENTENCES[:3]]  # the source has no end token


def test_attention_entropy_of_uniform_and_one_hot_rows():
    weights = np.zeros((1, 2, 3, 4))
    weights[0, 0] = 0.25  # head 1: uniform over 4 keys
    weights[0, 1, :, 2] = 1.0  # head 2: one key
    np.testing.assert_allclose(attention_entropy(weights), [math.log(4), 0.0])
    weights[0, 0, 2] = [0.5, 0.5, 0, 0]  # query 3: uniform over 2 keys, left out below
    np.testing.assert_allclose(attention_entropy(weights, [[True, True, False]]),
                               [math.log(4), 0.0])


@pytest.mark.parametrize("shape, valid, message", [
    ((2, 3, 4), None, r"weights must be \(batch, heads, q_len, k_len\), got shape \(2, 3, 4\)"),
    ((1, 2, 3, 4), [[True, True]], r"query_valid must be \(batch, q_len\) = \(1, 3\), got "
                                   r"\(1, 2\)"),
    ((1, 2, 3, 4), [[False] * 3], "query_valid selects no query position")])
def test_attention_entropy_refuses_bad_input_in_one_line(shape, valid, message):
    with pytest.raises(ValueError, match="attention_entropy: " + message):
        attention_entropy(np.full(shape, 0.25), valid)


def test_entropy_rows_from_an_attention_recorder(task):
    vocab, batches = task
    model, batch = tiny_model(vocab), batches[1]
    with AttentionRecorder(model) as recorder, mg.no_grad():
        model(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask)
    valid = {"encoder": batch.src.numpy() != vocab.pad_id,
             "decoder": batch.tgt_in.numpy() != vocab.pad_id}
    rows = entropy_rows(recorder, valid, "tiny")
    assert len(rows) == (2 + 2 * 2) * 2  # (encoder self, decoder self and cross) × 2 heads
    cross = [r for r in rows if (r["stack"], r["layer"], r["sublayer"]) ==
             ("decoder", 2, "cross_attn")]
    weights = recorder.weights[("decoder", 2, "cross_attn")][-1]  # (batch, heads, q, k)
    for row in cross:
        p = weights[:, row["head"] - 1][valid["decoder"]]  # (valid queries, k)
        entropy = -np.sum(np.where(p > 0, p * np.log(np.where(p > 0, p, 1)), 0), axis=-1)
        assert row["value"] == pytest.approx(entropy.mean())
        assert 0 < row["value"] <= math.log(weights.shape[-1])
