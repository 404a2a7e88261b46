"""Gradients end to end: finite differences on a sample of a float64 model's parameters, a
gradient for every parameter, and finite values even where a whole source row is padding."""

import numpy as np
import pytest

import minigrad as mg
from minigrad.nn import functional as F
from transformer import Transformer, TransformerConfig

PAD, VOCAB = 0, 7
SRC = np.array([[3, 4, 5, 6, PAD], [2, 3, 6, 5, 4]])
TGT_IN = np.array([[1, 4, 5, 6], [1, 6, 5, PAD]])
TGT_OUT = np.array([[4, 5, 6, 2], [6, 5, 2, PAD]])


def tiny_model(**changes):
    mg.manual_seed(0)
    config = TransformerConfig(src_vocab_size=VOCAB, tgt_vocab_size=VOCAB, d_model=8, n_heads=2,
                               n_encoder_layers=2, n_decoder_layers=2, d_ff=16, dropout=0.0,
                               **changes)
    return Transformer(config).to(dtype="float64")


def loss_of(model, src=SRC):
    logits = model(mg.tensor(src), mg.tensor(TGT_IN))  # (batch, tgt_len, vocab)
    return F.cross_entropy(logits, mg.tensor(TGT_OUT), ignore_index=PAD, label_smoothing=0.1)


def test_gradcheck_on_a_sample_of_parameters():
    """The loss as a function of a few parameter tensors: each call puts gradcheck's tensors in
    the parameters' places, so that the whole model lies between them and the loss."""
    model = tiny_model()
    names = ["encoder.embedding.weight", "encoder.layers.0.self_attn.sublayer.q_proj.weight",
             "decoder.layers.1.cross_attn.sublayer.k_proj.bias", "decoder.layers.0.ffn.norm.weight",
             "decoder.layers.1.ffn.sublayer.linear2.weight", "generator.bias"]
    modules = dict(model.named_modules())
    places = [(modules[owner], attribute)
              for owner, _, attribute in (name.rpartition(".") for name in names)]
    originals = [getattr(module, attribute) for module, attribute in places]

    def loss(*values):
        for (module, attribute), value in zip(places, values):
            object.__setattr__(module, attribute, value)  # not registered: a stand-in
        return loss_of(model)

    try:
        assert mg.gradcheck(loss, [p.detach().requires_grad_() for p in originals])
    finally:
        for (module, attribute), parameter in zip(places, originals):
            object.__setattr__(module, attribute, parameter)


@pytest.mark.parametrize("residual", ["standard", "none", "plain", "rezero"])
@pytest.mark.parametrize("norm_first", [False, True])
def test_every_parameter_receives_a_finite_gradient(residual, norm_first):
    model = tiny_model(residual=residual, norm_first=norm_first, positional="learned")
    loss_of(model).backward()
    for name, parameter in model.named_parameters():
        assert parameter.grad is not None, name
        assert parameter.grad.shape == parameter.shape, name
        assert np.isfinite(parameter.grad.numpy()).all(), name
        if residual != "rezero":
            assert np.abs(parameter.grad.numpy()).sum() > 0, name
    if residual == "rezero":  # every branch starts as 0·F(x): only α gets a gradient, and the
        # encoder's do not, being cut off by the cross-attention's α = 0
        alphas = {name: p.grad.item() for name, p in model.named_parameters()
                  if name.endswith("alpha")}
        assert all(g != 0 for name, g in alphas.items() if name.startswith("decoder"))


@pytest.mark.parametrize("padded_rows", [[0], [0, 1]], ids=["one row", "whole batch"])
def test_fully_padded_sources_give_finite_logits_and_gradients(padded_rows):
    model = tiny_model()
    src = SRC.copy()
    src[padded_rows] = PAD
    logits = model(mg.tensor(src), mg.tensor(TGT_IN))
    assert np.isfinite(logits.numpy()).all()
    loss = loss_of(model, src)
    loss.backward()
    assert np.isfinite(loss.item())
    for name, parameter in model.named_parameters():
        assert np.isfinite(parameter.grad.numpy()).all(), name
