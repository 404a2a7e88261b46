"""TransformerConfig: the paper's defaults, validation with clear messages, JSON round trip."""

import json

import pytest

from transformer import Transformer, TransformerConfig
from transformer.errors import ConfigError


def test_defaults_are_the_base_model_of_the_paper():
    config = TransformerConfig(src_vocab_size=100, tgt_vocab_size=100)
    assert (config.d_model, config.n_heads, config.n_encoder_layers, config.n_decoder_layers,
            config.d_ff, config.dropout) == (512, 8, 6, 6, 2048, 0.1)
    assert config.d_head == 64
    assert (config.positional, config.residual, config.norm_first) == \
        ("sinusoidal", "standard", False)


@pytest.mark.parametrize("changes, message", [
    ({"d_model": 30, "n_heads": 8}, "divisible by n_heads"),
    ({"d_model": 0}, "d_model must be an integer >= 1"),
    ({"n_heads": -2}, "n_heads must be an integer >= 1"),
    ({"d_ff": 0}, "d_ff must be an integer >= 1"),
    ({"max_len": 0}, "max_len must be an integer >= 1"),
    ({"src_vocab_size": 0}, "src_vocab_size must be an integer >= 1"),
    ({"d_model": 16.0}, "d_model must be an integer >= 1"),
    ({"n_encoder_layers": 0}, "n_encoder_layers must be an integer >= 1"),
    ({"n_decoder_layers": True}, "n_decoder_layers must be an integer >= 1"),
    ({"positional": "rotary"}, "positional must be one of"),
    ({"residual": "highway"}, "residual must be one of"),
    ({"dropout": 1.0}, "dropout must be a number in [0, 1)"),
    ({"dropout": -0.1}, "dropout must be a number in [0, 1)"),
    ({"attention_dropout": 2}, "attention_dropout must be a number in [0, 1)"),
    ({"tgt_vocab_size": 50, "share_embeddings": True}, "share_embeddings needs one joint"),
    ({"pad_id": 100}, "pad_id must be a token id"),
])
def test_invalid_settings_raise_config_error_naming_the_problem(changes, message):
    settings = {"src_vocab_size": 100, "tgt_vocab_size": 100, **changes}
    with pytest.raises(ConfigError, match="TransformerConfig") as error:
        TransformerConfig(**settings)
    assert message in str(error.value)
    assert isinstance(error.value, ValueError)


def test_every_problem_is_reported_at_once():
    with pytest.raises(ConfigError) as error:
        TransformerConfig(src_vocab_size=10, tgt_vocab_size=10, positional="x", residual="y")
    assert "positional" in str(error.value) and "residual" in str(error.value)


def test_json_round_trip():
    config = TransformerConfig(src_vocab_size=37, tgt_vocab_size=37, d_model=64, n_heads=4,
                               n_encoder_layers=2, n_decoder_layers=3, d_ff=128, dropout=0.2,
                               max_len=64, positional="learned", attention_dropout=0.1,
                               norm_first=True, residual="rezero", share_embeddings=True,
                               pad_id=3)
    text = config.to_json()
    assert json.loads(text)["positional"] == "learned"
    assert TransformerConfig.from_json(text) == config
    assert TransformerConfig.from_dict(config.to_dict()) == config


def test_unknown_keys_are_rejected():
    with pytest.raises(ConfigError, match="unknown keys.*n_layers"):
        TransformerConfig.from_dict({"src_vocab_size": 10, "tgt_vocab_size": 10, "n_layers": 2})


def test_model_accepts_a_dict_and_validates_it():
    model = Transformer({"src_vocab_size": 11, "tgt_vocab_size": 13, "d_model": 8,
                         "n_heads": 2, "n_encoder_layers": 1, "n_decoder_layers": 1, "d_ff": 16})
    assert model.config.tgt_vocab_size == 13
    with pytest.raises(ConfigError):
        Transformer({"src_vocab_size": 11, "tgt_vocab_size": 13, "d_model": 9, "n_heads": 2})
