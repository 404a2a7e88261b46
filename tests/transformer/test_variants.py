"""Every combination of the model's switches builds, trains one step and decodes."""

import itertools

import numpy as np
import pytest

import minigrad as mg
from minigrad.nn import functional as F
from minigrad.optim import Adam
from transformer import Transformer, TransformerConfig, beam_search, greedy_decode
from transformer.layers import ResidualBlock

PAD, BOS, EOS, VOCAB = 0, 1, 2, 9
SRC = np.array([[3, 4, 5, 6, 7], [8, 7, 6, PAD, PAD]])
TGT_IN = np.array([[BOS, 4, 5, 6], [BOS, 8, 7, PAD]])
TGT_OUT = np.array([[4, 5, 6, EOS], [8, 7, EOS, PAD]])

VARIANTS = list(itertools.product([False, True], ["standard", "none", "plain", "rezero", "skip"],
                                  [False, True],
                                  ["sinusoidal", "sinusoidal-concat", "learned"]))


@pytest.mark.parametrize("norm_first, residual, share_embeddings, positional", VARIANTS)
def test_variant_builds_trains_one_step_and_decodes(norm_first, residual, share_embeddings,
                                                    positional):
    mg.manual_seed(0)
    model = Transformer(TransformerConfig(
        src_vocab_size=VOCAB, tgt_vocab_size=VOCAB, d_model=8, n_heads=2, n_encoder_layers=1,
        n_decoder_layers=2, d_ff=16, dropout=0.1, max_len=16, norm_first=norm_first,
        residual=residual, share_embeddings=share_embeddings, positional=positional))

    blocks = [m for m in model.modules() if isinstance(m, ResidualBlock)]
    assert len(blocks) == 2 + 3 * 2
    assert all(hasattr(b, "norm") == (residual in ("standard", "none")) for b in blocks)
    assert all(hasattr(b, "alpha") == (residual == "rezero") for b in blocks)
    assert (model.encoder.final_norm is not None) == norm_first
    matrices = {id(model.encoder.embedding.weight), id(model.decoder.embedding.weight),
                id(model.generator.weight)}
    assert len(matrices) == (1 if share_embeddings else 3)

    optimizer = Adam(model.parameters(), lr=1e-2)
    before = [p.numpy() for p in model.parameters()]
    logits = model(mg.tensor(SRC), mg.tensor(TGT_IN))
    loss = F.cross_entropy(logits, mg.tensor(TGT_OUT), ignore_index=PAD)
    loss.backward()
    optimizer.step()
    assert np.isfinite(loss.item())
    assert all(np.isfinite(p.numpy()).all() for p in model.parameters())
    assert any((p.numpy() != old).any() for p, old in zip(model.parameters(), before))

    model.eval()
    greedy = greedy_decode(model, mg.tensor(SRC), 6, BOS, EOS)
    beam = beam_search(model, mg.tensor(SRC), 3, 6, BOS, EOS)
    for tokens in (greedy, beam):
        assert tokens.dtype == np.int64 and tokens.shape[0] == 2 and 1 <= tokens.shape[1] <= 6
        assert ((tokens.numpy() >= 0) & (tokens.numpy() < VOCAB)).all()


@pytest.mark.parametrize("norm_first", [False, True])
def test_a_plain_block_is_its_sublayer_alone(norm_first):
    """residual="plain": out = F(x), no skip, no LayerNorm, whatever norm_first says."""
    mg.manual_seed(0)
    linear = mg.nn.Linear(4, 4)
    block = ResidualBlock(linear, 4, dropout=0.0, norm_first=norm_first, residual="plain")
    x = mg.randn(2, 3, 4)
    np.testing.assert_array_equal(block(x).numpy(), linear(x).numpy())
    assert [name for name, _ in block.named_parameters()] == ["sublayer.weight", "sublayer.bias"]
    assert not block.has_skip and not block.has_norm
