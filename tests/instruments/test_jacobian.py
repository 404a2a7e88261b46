"""residual_jacobian_norms: the Hutchinson estimate against the exact Jacobian, built row by
row with one-hot vector-Jacobian products on a tiny float64 model run layer by layer; and
isometry_defects against a vector-Jacobian product taken by hand."""

import numpy as np
import pytest

import minigrad as mg
from transformer import Transformer, TransformerConfig
from transformer.data.batching import make_batch
from transformer.data.vocab import Vocab
from transformer.instruments import isometry_defects, residual_blocks, residual_jacobian_norms

PAIRS = [([4, 5, 6], [5, 4]), ([6, 4], [4, 6, 5])]


def tiny(norm_first):
    mg.manual_seed(1)
    vocab = Vocab.build([["a", "b", "c"]])
    model = Transformer(TransformerConfig(
        len(vocab), len(vocab), d_model=8, n_heads=2, n_encoder_layers=3, n_decoder_layers=2,
        d_ff=16, dropout=0.0, max_len=16, norm_first=norm_first))
    return model.to(dtype="float64"), make_batch(PAIRS, [0, 1], vocab)


def run_layer_by_layer(model, batch):
    """{stack: (the inputs of its layers, its output)}, run one layer at a time."""
    encoder, decoder = model.encoder, model.decoder
    x, encoder_inputs = encoder.embed(batch.src), []
    for layer in encoder.layers:
        encoder_inputs.append(x)
        x = layer(x, batch.src_mask)
    memory = encoder.finish(x)
    y, decoder_inputs = decoder.embed(batch.tgt_in), []
    for layer in decoder.layers:
        decoder_inputs.append(y)
        y = layer(y, memory, batch.src_mask, batch.tgt_mask)
    hidden = decoder.finish(y)
    return {"encoder": (encoder_inputs, memory), "decoder": (decoder_inputs, hidden)}


def exact_norms(model, batch):
    """‖∂x_L/∂x_l‖_F from the full Jacobian: one VJP per element of the stack's output."""
    norms = {}
    for stack, (inputs, output) in run_layer_by_layer(model, batch).items():
        squares = np.zeros(len(inputs))
        for index in range(output.size):
            one_hot = np.zeros(output.size)
            one_hot[index] = 1.0
            rows = mg.grad(output, inputs, grad_outputs=mg.tensor(one_hot.reshape(output.shape)),
                           retain_graph=True)
            squares += [float((row.numpy() ** 2).sum()) for row in rows]
        norms[stack] = np.sqrt(squares)
    return norms


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_estimate_matches_the_exact_jacobian(norm_first):
    """64 samples: the relative error was under 7% for each of 10 seeds."""
    model, batch = tiny(norm_first)
    exact = exact_norms(model, batch)
    estimate = residual_jacobian_norms(model, batch, n_samples=64, seed=0)
    for stack in ("encoder", "decoder"):
        assert len(estimate[stack]) == len(exact[stack])
        np.testing.assert_allclose(estimate[stack], exact[stack], rtol=0.15)


def test_leaves_the_model_as_it_was():
    model, batch = tiny(norm_first=False)
    def marker(block, x, branch, s, out):
        pass

    for *_, block in residual_blocks(model):
        block.observer = marker
    model.train()
    first = residual_jacobian_norms(model, batch, n_samples=2, seed=3)
    assert model.training
    assert all(block.observer is marker for *_, block in residual_blocks(model))
    assert residual_jacobian_norms(model, batch, n_samples=2, seed=3) == first


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_isometry_defects_equal_a_vector_jacobian_product_by_hand(norm_first):
    model, batch = tiny(norm_first)
    defects = isometry_defects(model, batch, seed=5)
    rng = np.random.default_rng(5)
    for stack, (inputs, output) in run_layer_by_layer(model, batch).items():
        v = rng.standard_normal(output.shape)
        vjps = mg.grad(output, inputs, grad_outputs=mg.tensor(v), retain_graph=True)
        expected = [np.linalg.norm(g.numpy() - v) / np.linalg.norm(v) for g in vjps]
        np.testing.assert_allclose(defects[stack], expected, rtol=1e-9)
        assert all(d > 0.01 for d in defects[stack])  # these stacks are not the identity
