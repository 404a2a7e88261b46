"""The recording under explain(): `Recorded.seen` hooks keep what the model computes with the
line that computed it, change nothing the model computes, and hand the modules back to the
recorders watching them before."""

import numpy as np
import pytest

import minigrad as mg
from transformer import AttentionRecorder, Transformer, TransformerConfig
from transformer.attention import MultiHeadAttention
from transformer.illustrated.recording import Recording, code_at

CONFIG = {"src_vocab_size": 11, "tgt_vocab_size": 13, "d_model": 8, "n_heads": 2, "d_ff": 16,
          "n_encoder_layers": 1, "n_decoder_layers": 1, "dropout": 0.0, "max_len": 16}


@pytest.fixture(scope="module")
def model():
    mg.manual_seed(0)
    return Transformer(TransformerConfig(**CONFIG)).eval()


def forward(model):
    src = mg.tensor([[4, 5, 6, 7]], dtype="int64")
    tgt_in = mg.tensor([[1, 8, 9]], dtype="int64")
    with mg.no_grad():
        return model(src, tgt_in).numpy()


def test_recording_changes_nothing_the_model_computes(model):
    plain = forward(model)
    with Recording(model) as recording:
        watched = forward(model)
    assert np.array_equal(plain, watched)  # bit for bit
    assert np.array_equal(recording.value("", "logits"), watched)
    assert all(m.recorder is None for m in model.modules() if hasattr(m, "recorder"))


def test_values_and_their_lines(model):
    with Recording(model) as recording:
        forward(model)
    q = recording.value("encoder.layers.0.self_attn.sublayer", "q")
    assert q.shape == (1, 2, 4, 4)  # (batch, heads, len, d_head)
    weights = recording.value("decoder.layers.0.self_attn.sublayer", "weights")
    assert np.all(np.triu(weights[0], 1) == 0)  # the decoder's future is hidden
    code = recording.code("encoder.layers.0.self_attn.sublayer", "q")
    assert (code.function, code.file) == ("MultiHeadAttention.forward", "transformer/attention.py")
    line = code.source.splitlines()[code.line - code.first_line]
    assert 'self.seen("q"' in line
    assert recording.code("encoder", "scaled").function == "_Stack.embed"
    with pytest.raises(KeyError, match="'encoder' did not name 'q'"):
        recording.value("encoder", "q")


def test_recorders_nest_and_hand_the_modules_back(model):
    with Recording(model) as outer:
        with AttentionRecorder(model) as inner:
            forward(model)
        assert all(m.recorder is outer for m in model.modules()
                   if isinstance(m, MultiHeadAttention))
        forward(model)
    assert len(inner.weights[("encoder", 1, "self_attn")]) == 1
    assert len(outer.values[("encoder.layers.0.self_attn.sublayer", "weights")]) == 1
    assert len(outer.values[("encoder.layers.0.ffn", "output")]) == 2  # ResidualBlocks: both
    assert all(m.recorder is None for m in model.modules() if hasattr(m, "recorder"))


def test_code_at_finds_a_line_or_says_which_function_lacks_it():
    code = code_at(MultiHeadAttention.split_heads, "transpose(0, 2, 1, 3)")
    assert code.first_line < code.line and code.function == "MultiHeadAttention.split_heads"
    with pytest.raises(ValueError, match="no line of MultiHeadAttention.split_heads"):
        code_at(MultiHeadAttention.split_heads, "no such text")
