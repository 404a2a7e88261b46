"""The training run folder (CONVENTIONS): config.json, vocab.json, last.npz, best.npz,
metrics.jsonl and, at the end, metrics.json."""

import json
import os
from pathlib import Path

import minigrad as mg
from minigrad.errors import CheckpointError

from .config import TransformerConfig
from .data.vocab import Vocab
from .model import Transformer


class RunFolder:
    """Paths and small readers/writers of one run's folder."""

    def __init__(self, path):
        self.path = Path(path)

    def file(self, name):
        return self.path / name

    def checkpoint(self, which):
        if which not in ("best", "last"):
            raise ValueError(f"which must be 'best' or 'last', got {which!r}")
        return self.file(f"{which}.npz")

    def write_json(self, name, value):
        """Atomic write: a temporary file in the folder, then a rename."""
        self.path.mkdir(parents=True, exist_ok=True)
        temporary = self.file(name + ".tmp")
        temporary.write_text(json.dumps(value, indent=2) + "\n")
        os.replace(temporary, self.file(name))

    def read_json(self, name):
        path = self.file(name)
        if not path.exists():
            raise CheckpointError(f"{path} does not exist: is {self.path} a training run "
                                  "folder (made by examples/train_translation.py --out)?")
        return json.loads(path.read_text())

    def append_metrics(self, record):
        with open(self.file("metrics.jsonl"), "a") as f:
            f.write(json.dumps(record) + "\n")

    def model_config(self):
        return TransformerConfig.from_dict(self.read_json("config.json")["model"])

    def vocab(self):
        return Vocab.load(self.file("vocab.json"))

    def load_model(self, which="best", device=None):
        """The model of this run with the weights of `which` checkpoint, in eval mode."""
        model = Transformer(self.model_config())
        if device is not None:
            model.to(device)
        path = self.checkpoint(which)
        if not path.exists():
            raise CheckpointError(f"{path} does not exist (which={which!r}); "
                                  f"available: {sorted(p.name for p in self.path.glob('*.npz'))}")
        model.load_state_dict(mg.load(path)["model"])
        return model.eval()
