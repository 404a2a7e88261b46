"""A trained model's weights as a safetensors file, for other tools (the `.npz` checkpoint
stays the training format). The `safetensors` extra is imported here only.

The file holds every entry of `Transformer.state_dict()` under its dotted name, as float32
arrays in the model's layout (a Linear's weight is (out_features, in_features), as
PyTorch's; a shared embedding matrix appears once, as `encoder.embedding.weight`), and in
its metadata `format` ("minigrad-transformer"), `version` and `model_config` (the
TransformerConfig as JSON). docs/conventions.md, "Weights for other tools", lists the names.
Reading it parses a header and copies arrays; no code runs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from .config import TransformerConfig
from .errors import CheckpointError, ConfigError
from .model import Transformer

FORMAT = "minigrad-transformer"
VERSION = "1"


def _safetensors():
    try:
        import safetensors.numpy
    except ImportError as error:
        raise ImportError("safetensors files need the safetensors package: "
                          "pip install -e '.[safetensors]'") from error
    return safetensors


def export_weights(model, path, overwrite=False) -> None:
    """Write `model`'s weights and config to `path` (a new file unless `overwrite`)."""
    safetensors = _safetensors()
    path = Path(path)
    if path.exists() and not overwrite:
        raise ConfigError(f"{path} exists; nothing was written: remove it, choose another "
                          "file, or pass --overwrite")
    arrays = {name: np.ascontiguousarray(value.numpy())
              for name, value in model.state_dict().items()}
    metadata = {"format": FORMAT, "version": VERSION,
                "model_config": json.dumps(model.config.to_dict())}
    temporary = path.with_name(f".{path.name}.tmp")
    safetensors.numpy.save_file(arrays, str(temporary), metadata=metadata)
    os.replace(temporary, path)


def read_weights(path) -> tuple[TransformerConfig, dict[str, np.ndarray]]:
    """(TransformerConfig, {name: array}) of a file written by `export_weights`;
    CheckpointError naming the file for anything else."""
    safetensors = _safetensors()
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{path} does not exist or is not a file")
    try:
        with safetensors.safe_open(str(path), framework="numpy") as file:
            metadata = file.metadata() or {}
            arrays = {name: file.get_tensor(name) for name in file.keys()}
    except Exception as error:  # the reader's own error class: a damaged or foreign file
        raise CheckpointError(f"{path} is not a safetensors file ({error})") from None
    if metadata.get("format") != FORMAT or metadata.get("version") != VERSION:
        raise CheckpointError(f"{path} is a safetensors file but not a minigrad-transformer "
                              f"model's (format {metadata.get('format')!r}, version "
                              f"{metadata.get('version')!r}; expected {FORMAT!r} {VERSION})")
    try:
        config = TransformerConfig.from_dict(json.loads(metadata["model_config"]))
    except (KeyError, json.JSONDecodeError, ConfigError, TypeError) as error:
        raise CheckpointError(f"{path}: no valid model_config in its metadata ({error})") \
            from None
    return config, arrays


def import_weights(path, device=None) -> Transformer:
    """The Transformer stored in `path`, in eval mode."""
    config, arrays = read_weights(path)
    model = Transformer(config)
    if device is not None:
        model.to(device)
    try:
        model.load_state_dict(arrays)
    except (ValueError, KeyError) as error:
        raise CheckpointError(f"{path}: {error}") from None
    return model.eval()
