"""Weights for other tools: a model exported as safetensors and imported back is bit-identical
and computes the same logits; a file of another kind is refused naming it; export_weights.py
writes one from a run folder and keeps an existing file."""

import json

import numpy as np
import pytest
from test_cli_errors import assert_one_error_line
from test_examples_cli import run_example

import minigrad as mg
from minigrad.errors import CheckpointError, ConfigError
from transformer import Transformer
from transformer.weights import FORMAT, export_weights, import_weights, read_weights

CONFIG = {"src_vocab_size": 23, "tgt_vocab_size": 23, "d_model": 16, "n_heads": 2,
          "n_encoder_layers": 2, "n_decoder_layers": 1, "d_ff": 32, "share_embeddings": True}


@pytest.fixture
def model():
    mg.manual_seed(3)
    return Transformer(CONFIG).eval()


def test_export_then_import_is_bit_identical(tmp_path, model):
    path = tmp_path / "model.safetensors"
    export_weights(model, path)
    again = import_weights(path)
    ours, theirs = model.state_dict(), again.state_dict()
    assert list(ours) == list(theirs)
    for name in ours:
        a, b = ours[name].numpy(), theirs[name].numpy()
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), name
    assert again.config == model.config
    src = mg.tensor(np.array([[5, 6, 7, 2]]), dtype="int64")
    tgt = mg.tensor(np.array([[1, 8, 9]]), dtype="int64")
    assert np.array_equal(model(src, tgt).numpy(), again(src, tgt).numpy())


def test_the_file_holds_the_state_dict_names_and_the_config(tmp_path, model):
    path = tmp_path / "model.safetensors"
    export_weights(model, path)
    config, arrays = read_weights(path)
    assert set(arrays) == set(model.state_dict())
    assert "encoder.embedding.weight" in arrays and "decoder.embedding.weight" not in arrays
    assert arrays["encoder.layers.0.ffn.sublayer.linear1.weight"].shape == (32, 16)  # (out, in)
    assert config.to_dict() == model.config.to_dict()


def test_an_existing_file_is_kept_unless_overwrite(tmp_path, model):
    path = tmp_path / "model.safetensors"
    path.write_text("mine")
    with pytest.raises(ConfigError, match="exists; nothing was written"):
        export_weights(model, path)
    assert path.read_text() == "mine"
    export_weights(model, path, overwrite=True)
    assert import_weights(path).num_parameters() == model.num_parameters()


def test_other_files_are_refused_naming_them(tmp_path, model):
    junk = tmp_path / "junk.safetensors"
    junk.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00not json at all!")
    with pytest.raises(CheckpointError, match="junk.safetensors is not a safetensors file"):
        import_weights(junk)
    import safetensors.numpy

    foreign = tmp_path / "foreign.safetensors"
    safetensors.numpy.save_file({"w": np.zeros(3, np.float32)}, str(foreign))
    with pytest.raises(CheckpointError, match=f"not a {FORMAT} model's"):
        import_weights(foreign)
    with pytest.raises(CheckpointError, match="does not exist"):
        import_weights(tmp_path / "missing.safetensors")


def test_export_weights_py_writes_a_run_folders_model(memorized_run, tmp_path):
    out = tmp_path / "toy.safetensors"
    result = run_example("export_weights.py", "--checkpoint", memorized_run.path, "--out", out)
    assert result.returncode == 0, result.stderr
    config = json.loads((memorized_run.path / "config.json").read_text())["model"]
    assert import_weights(out).config.to_dict() == config
    again = run_example("export_weights.py", "--checkpoint", memorized_run.path, "--out", out)
    assert_one_error_line(again, 2, f"--out {out} exists", "--overwrite")
