"""Shapes through every layer, the attention recorder, incremental decoding's cache, and the
parameter count of the paper's base model written out term by term."""

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.errors import ConfigError, ShapeError
from transformer import AttentionRecorder, MultiHeadAttention, Transformer, TransformerConfig
from transformer.layers import DecoderLayer, EncoderLayer, FeedForward, ResidualBlock
from transformer.masks import padding_mask

BATCH, SRC_LEN, TGT_LEN = 3, 7, 5
CONFIG = {"src_vocab_size": 13, "tgt_vocab_size": 17, "d_model": 16, "n_heads": 4,
          "n_encoder_layers": 2, "n_decoder_layers": 3, "d_ff": 24, "dropout": 0.1}


@pytest.fixture(scope="module")
def model():
    mg.manual_seed(0)
    return Transformer(TransformerConfig(**CONFIG))


@pytest.fixture(scope="module")
def batch():
    rng = np.random.default_rng(0)
    src = rng.integers(1, CONFIG["src_vocab_size"], (BATCH, SRC_LEN))
    src[0, 4:] = 0
    tgt = rng.integers(1, CONFIG["tgt_vocab_size"], (BATCH, TGT_LEN))
    return mg.tensor(src), mg.tensor(tgt)


def test_encode_decode_generator_and_forward_shapes(model, batch):
    src, tgt = batch
    src_mask = padding_mask(src, 0)
    memory = model.encode(src, src_mask)
    hidden = model.decode(tgt, memory, src_mask)
    assert memory.shape == (BATCH, SRC_LEN, 16) and memory.dtype == np.float32
    assert hidden.shape == (BATCH, TGT_LEN, 16)
    assert model.generator(hidden).shape == (BATCH, TGT_LEN, 17)
    assert model(src, tgt).shape == (BATCH, TGT_LEN, 17)


def test_every_layer_keeps_the_model_width(model, batch):
    """Every layer and sublayer block maps (batch, len, d_model) to the same shape; the FFN's
    hidden layer is d_ff wide."""
    shapes = {}

    def remember(module, inputs, output):
        shapes.setdefault(type(module).__name__, set()).add(output.shape)

    handles = [m.register_forward_hook(remember) for m in model.modules()
               if isinstance(m, (EncoderLayer, DecoderLayer, ResidualBlock, FeedForward))]
    handles.append(model.decoder.layers[0].ffn.sublayer.linear1.register_forward_hook(
        lambda module, inputs, output: shapes.setdefault("hidden", set()).add(output.shape)))
    model(*batch)
    for handle in handles:
        handle.remove()
    assert shapes["EncoderLayer"] == {(BATCH, SRC_LEN, 16)}
    assert shapes["DecoderLayer"] == {(BATCH, TGT_LEN, 16)}
    assert shapes["ResidualBlock"] == shapes["FeedForward"] == {(BATCH, SRC_LEN, 16),
                                                                (BATCH, TGT_LEN, 16)}
    assert shapes["hidden"] == {(BATCH, TGT_LEN, 24)}


def test_recorder_keeps_one_weight_array_per_attention_call(model, batch):
    with AttentionRecorder(model) as recorder:
        model(*batch)
    expected = {("encoder", layer, "self_attn") for layer in (1, 2)}
    expected |= {("decoder", layer, sub) for layer in (1, 2, 3)
                 for sub in ("self_attn", "cross_attn")}
    assert set(recorder.weights) == expected
    q_k = {"encoder": (SRC_LEN, SRC_LEN), "self_attn": (TGT_LEN, TGT_LEN),
           "cross_attn": (TGT_LEN, SRC_LEN)}
    for (stack, _, sublayer), arrays in recorder.weights.items():
        assert len(arrays) == 1 and isinstance(arrays[0], np.ndarray)
        assert arrays[0].shape == (BATCH, 4) + q_k["encoder" if stack == "encoder" else sublayer]


def test_nothing_is_recorded_outside_the_block(model, batch):
    with AttentionRecorder(model) as recorder:
        model(*batch)
    model(*batch)
    assert all(len(arrays) == 1 for arrays in recorder.weights.values())
    assert all(m.recorder is None for m in model.modules() if isinstance(m, MultiHeadAttention))


def test_cached_decoding_takes_one_position_at_a_time(batch):
    src, tgt = batch
    model = Transformer(TransformerConfig(**CONFIG)).eval()
    src_mask = padding_mask(src, 0)
    memory = model.encode(src, src_mask)
    cache = model.new_decoder_cache(memory)
    steps = [model.decode(tgt[:, t:t + 1], memory, src_mask, cache=cache) for t in range(TGT_LEN)]
    assert all(step.shape == (BATCH, 1, 16) for step in steps) and cache.offset == TGT_LEN
    assert cache.layers[0]["self"]["k"].shape == (BATCH, 4, TGT_LEN, 4)
    assert cache.layers[0]["cross"]["k"].shape == (BATCH, 4, SRC_LEN, 4)
    whole = model.decode(tgt, memory, src_mask)
    np.testing.assert_allclose(mg.concatenate(steps, axis=1).numpy(), whole.numpy(), atol=1e-5)


def test_base_model_parameter_count_matches_the_paper():
    """Shared 37000-token vocabulary (§3.4, §5.1): one embedding matrix, generator without
    bias; sinusoidal positions have no parameters; post-LN has no final norm."""
    d, d_ff, n, vocab = 512, 2048, 6, 37000
    attention = 4 * (d * d + d)  # W_Q, W_K, W_V, W_O with biases
    ffn = 2 * d * d_ff + d_ff + d
    layer_norm = 2 * d
    encoder_layer = attention + ffn + 2 * layer_norm
    decoder_layer = 2 * attention + ffn + 3 * layer_norm
    expected = vocab * d + n * encoder_layer + n * decoder_layer
    model = Transformer(TransformerConfig(vocab, vocab, share_embeddings=True))
    assert model.num_parameters() == expected == 63_082_496


def test_heads_split_the_width_without_adding_parameters():
    eight, one = MultiHeadAttention(512, 8), MultiHeadAttention(512, 1)
    assert (eight.d_head, one.d_head) == (64, 512)
    assert eight.num_parameters() == one.num_parameters() == 4 * (512 * 512 + 512)


@pytest.mark.parametrize("share_embeddings, positional",
                         [(True, "sinusoidal"), (False, "learned")])
def test_each_parameter_is_drawn_once(monkeypatch, share_embeddings, positional):
    """The model draws random numbers for exactly the entries of its matrices (the weights,
    the embedding tables, learned positions), each once: nothing it draws is overwritten.
    With shared embeddings the encoder, decoder and generator hold one Parameter."""
    generator, drawn = mg.random.generator(), []
    for name in ("normal", "uniform"):
        draw = getattr(generator, name)
        monkeypatch.setattr(generator, name, lambda shape, dtype, draw=draw:
                            drawn.append(int(np.prod(shape))) or draw(shape, dtype))
    model = Transformer(TransformerConfig(40, 40, d_model=16, n_heads=2, d_ff=32,
                                          n_encoder_layers=1, n_decoder_layers=1,
                                          share_embeddings=share_embeddings,
                                          positional=positional))
    matrices = {id(p): p.size for p in model.parameters() if p.ndim == 2}
    assert sum(drawn) == sum(matrices.values())
    table = model.encoder.embedding.weight
    shared = model.decoder.embedding.weight is table and model.generator.weight is table
    assert shared == share_embeddings


@pytest.mark.parametrize("layer", ["Linear", "Embedding"])
def test_a_given_weight_must_be_a_parameter_of_the_layers_shape(layer):
    build = {"Linear": lambda w: nn.Linear(3, 4, bias=False, weight=w),
             "Embedding": lambda w: nn.Embedding(4, 3, weight=w)}[layer]
    weight = nn.Parameter(mg.zeros(4, 3))
    assert build(weight).weight is weight
    with pytest.raises(ShapeError, match=rf"{layer}\(weight=...\) needs shape \(4, 3\), "
                                         r"got \(3, 4\)"):
        build(nn.Parameter(mg.zeros(3, 4)))
    with pytest.raises(ConfigError, match=rf"{layer}\(weight=...\) takes a Parameter"):
        build(mg.zeros(4, 3))
