"""The training run folder: config.json, vocab.json, last.npz, best.npz, metrics.jsonl and, at
the end, metrics.json (docs/conventions.md, "The run folder").

A run folder is never overwritten by accident, and never holds two runs: a new run is
written whole into a hidden folder beside it (`.NAME.new-XXXX`: config.json, vocab.json and
the step-0 last.npz), which then takes the folder's place by a rename. Replacing an old run
(`overwrite=True`) moves it aside to `.NAME.replaced` first and deletes it after; a process
killed between those two renames leaves the old run there, and the next use of the folder
puts it back. Every file is written whole (a temporary file, then a rename).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import minigrad as mg
from minigrad import errors as engine

from .config import TransformerConfig
from .data.tokenizer import WORDS, WordTokenizer
from .data.vocab import Vocab
from .errors import CheckpointError, ConfigError
from .model import Transformer
from .run_spec import RunSpec

if TYPE_CHECKING:
    from .data.subword import SubwordTokenizer

# The files a run writes; a folder holding any other file is not replaced. A subword run also
# has its two SentencePiece models, TOKENIZER_FILES.
TOKENIZER_FILES = {"source": "tokenizer-source.model", "target": "tokenizer-target.model"}
# The records kept step by step (transformer.monitoring writes samples and flow), cut back
# to a resumed run's step.
RECORD_FILES = ("metrics.jsonl", "samples.jsonl", "flow.jsonl")
RUN_FILES = ("config.json", "vocab.json", "last.npz", "best.npz", "metrics.json",
             *RECORD_FILES, "curves.png", "flow.png", "report.html", "attention.npz",
             *TOKENIZER_FILES.values())


class RunFolder:
    """Paths and small readers/writers of one run's folder."""

    def __init__(self, path) -> None:
        self.path = Path(path)

    def file(self, name) -> Path:
        return self.path / name

    def checkpoint(self, which) -> Path:
        if which not in ("best", "last"):
            raise ValueError(f"which must be 'best' or 'last', got {which!r}")
        return self.file(f"{which}.npz")

    # ----- a new run, written whole -----------------------------------------------------------
    def holds_run(self) -> bool:
        self.recover()
        return self.path.is_dir() and any(self.file(name).exists() for name in RUN_FILES)

    def check_new_run(self, overwrite=False) -> None:
        """Raise ConfigError unless a new run may be written here: the folder is new or empty,
        or (with `overwrite`) holds a run and nothing else."""
        self.recover()
        if self.path.exists() and not self.path.is_dir():
            raise ConfigError(f"{self.path} is a file, not a run folder; choose another --out")
        if not self.path.exists():
            return
        names = sorted(p.name for p in self.path.iterdir())
        others = [n for n in names if n not in RUN_FILES and not n.endswith(".tmp")]
        if others:
            raise ConfigError(
                f"{self.path} holds files that are not a training run's ({_some(others)}); "
                "nothing was changed: choose another --out")
        if self.holds_run() and not overwrite:
            raise ConfigError(
                f"{self.path} already holds a training run ({_some(names)}); nothing was "
                "changed: continue it with --resume, replace it with --overwrite, or choose "
                "another --out")

    def create(self, write_first_state, overwrite=False) -> None:
        """Make this folder a new run: `write_first_state(staging)` fills a RunFolder beside
        it, which then replaces this folder whole (an old run only with `overwrite`)."""
        self.check_new_run(overwrite)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        for stale in self.path.parent.glob(f".{self.path.name}.new-*"):
            shutil.rmtree(stale, ignore_errors=True)  # left by a process killed while writing
        staging = RunFolder(self.path.parent / f".{self.path.name}.new-{secrets.token_hex(4)}")
        staging.path.mkdir()
        try:
            write_first_state(staging)
            if self.path.exists():
                replaced = self._replaced()
                os.replace(self.path, replaced)
                os.replace(staging.path, self.path)
                shutil.rmtree(replaced)
            else:
                os.replace(staging.path, self.path)
        finally:
            shutil.rmtree(staging.path, ignore_errors=True)

    def recover(self) -> None:
        """Put back an old run that an interrupted replacement left aside."""
        replaced = self._replaced()
        if replaced.exists():
            if self.path.exists():  # the new run made it into place: the old one goes
                shutil.rmtree(replaced)
            else:
                os.replace(replaced, self.path)

    def _replaced(self):
        return self.path.parent / f".{self.path.name}.replaced"

    # ----- files -------------------------------------------------------------------------------
    def write_json(self, name, value) -> None:
        """Atomic write: a temporary file in the folder, then a rename."""
        self.path.mkdir(parents=True, exist_ok=True)
        temporary = self.file(name + ".tmp")
        temporary.write_text(json.dumps(value, indent=2) + "\n")
        os.replace(temporary, self.file(name))

    def read_json(self, name) -> Any:
        path = self.file(name)
        if not path.exists():
            raise CheckpointError(f"{path} does not exist: is {self.path} a training run "
                                  "folder (made by examples/train_translation.py --out)?")
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise CheckpointError(f"{path} is not valid JSON ({error}); the run folder is "
                                  "damaged") from None

    def append_metrics(self, record) -> None:
        """One whole line per record (a single write)."""
        self.append_record("metrics.jsonl", record)

    def metrics_records(self) -> list[dict[str, Any]]:
        return self.records("metrics.jsonl")

    def append_record(self, name, record) -> None:
        """Append `record` to the JSON Lines file `name` (one of RECORD_FILES) in one write."""
        self.path.mkdir(parents=True, exist_ok=True)
        with open(self.file(name), "a") as file:
            file.write(json.dumps(record) + "\n")

    def records(self, name) -> list[dict[str, Any]]:
        """The records of the JSON Lines file `name` ([] when absent)."""
        path = self.file(name)
        if not path.exists():
            return []
        records = []
        for number, line in enumerate(path.read_text().splitlines(), start=1):
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                raise CheckpointError(f"{path}, line {number}: not a JSON record") from None
        return records

    def truncate_records(self, step) -> None:
        """Keep the records of steps up to `step` in every file of RECORD_FILES that exists
        (a resumed run repeats the steps after its checkpoint), atomically per file."""
        for name in RECORD_FILES:
            if not self.file(name).exists():
                continue
            kept = [r for r in self.records(name) if r.get("step", 0) <= step]
            temporary = self.file(name + ".tmp")
            temporary.write_text("".join(json.dumps(r) + "\n" for r in kept))
            os.replace(temporary, self.file(name))

    # ----- what the run holds ------------------------------------------------------------------
    def spec(self) -> RunSpec:
        """The run's RunSpec, from config.json (of today's layout or the earlier one);
        CheckpointError, naming the file, when it is not one."""
        try:
            return RunSpec.from_dict(self.read_json("config.json"))
        except (ConfigError, TypeError, AttributeError) as error:
            raise CheckpointError(f"{self.file('config.json')}: {error}") from None

    def model_config(self) -> TransformerConfig:
        spec = self.spec()
        try:
            return spec.model_config()
        except ConfigError as error:
            raise CheckpointError(f"{self.file('config.json')}: {error}") from None

    def vocab(self) -> Vocab:
        return Vocab.load(self.file("vocab.json"))

    def write_tokenizer(self, tokenizer) -> None:
        """The subword models beside the vocabulary (a word-level run has no files)."""
        for side, name in TOKENIZER_FILES.items() if tokenizer.kind == "subword" else ():
            temporary = self.file(name + ".tmp")
            temporary.write_bytes(tokenizer.models[side])
            os.replace(temporary, self.file(name))

    def tokenizer(self) -> WordTokenizer | SubwordTokenizer:
        """The run's tokenizer: as config.json's `tokenizer` says, its models checked against
        the digest recorded there."""
        described = self.spec().tokenizer
        if described.kind == "word":
            return WORDS
        from .data.subword import SubwordTokenizer

        paths = {side: self.file(name) for side, name in TOKENIZER_FILES.items()}
        missing = [str(path) for path in paths.values() if not path.exists()]
        if missing:
            raise CheckpointError(f"{', '.join(missing)} missing: {self.path} is a subword "
                                  "run and needs both tokenizer models")
        try:
            tokenizer = SubwordTokenizer(*(paths[side].read_bytes() for side in ("source",
                                                                                "target")))
        except ValueError as error:
            raise CheckpointError(f"{self.path}: {error}") from None
        if tokenizer.digest() != described.digest:
            raise CheckpointError(
                f"the tokenizer models in {self.path} (digest {tokenizer.digest()}) are not "
                f"the run's ({described.digest} in config.json); the files of "
                f"{self.path} do not belong together")
        return tokenizer

    def read_checkpoint(self, which, model_config, vocab, device=None) -> dict[str, Any]:
        """The state in `which`.npz, after checking that it was trained with `model_config`
        and `vocab` (checkpoints older than those records: checked by the weights' shapes)."""
        path = self.checkpoint(which)
        if not path.exists():
            raise CheckpointError(f"{path} does not exist (which={which!r}); "
                                  f"available: {sorted(p.name for p in self.path.glob('*.npz'))}")
        state = mg.load(path, device=device)
        if not isinstance(state, dict) or "model" not in state:
            raise CheckpointError(f"{path} is a minigrad checkpoint but not a training run's "
                                  "(no 'model' entry)")
        if "model_config" in state:
            differences = config_differences(state["model_config"], model_config.to_dict())
            if differences:
                raise CheckpointError(
                    f"{path} was trained with another model than {self.file('config.json')} "
                    f"describes: {_some(differences, 3)}; the files of {self.path} do not "
                    "belong together (config.json edited?)")
        if "vocab_digest" in state and state["vocab_digest"] != vocab.digest():
            raise CheckpointError(
                f"{path} was trained with another vocabulary (digest {state['vocab_digest']}) "
                f"than {self.file('vocab.json')} holds ({vocab.digest()}, {len(vocab)} tokens); "
                f"the files of {self.path} do not belong together")
        return state

    def load_model(self, which="best", device=None) -> Transformer:
        """The model of this run with the weights of `which` checkpoint, in eval mode: the
        moving average of the weights where the run keeps one (`TrainingConfig.ema_decay`),
        as validation used, else the weights trained."""
        self.recover()
        config, vocab = self.model_config(), self.vocab()
        path = self.checkpoint(which)
        state = self.read_checkpoint(which, config, vocab)
        model = Transformer(config)
        if device is not None:
            model.to(device)
        weights = state["model"]
        if "average" in state:
            average = state["average"]
            if not isinstance(average, dict) or not isinstance(average.get("averages"), dict):
                raise CheckpointError(f"{path}: its 'average' entry holds no 'averages' of the "
                                      "weights; the file was not written by a training run")
            weights = {**weights, **average["averages"]}
        try:
            model.load_state_dict(weights)
        except engine.CheckpointError as error:  # the engine's: the weights do not fit
            raise CheckpointError(f"{path}: {error}") from None
        return model.eval()


def config_differences(saved, current) -> list[str]:
    """`key: saved -> current` for each key where two config dicts differ."""
    keys = sorted(set(saved) | set(current))
    missing = "(absent)"
    return [f"{key} {saved.get(key, missing)!r} in the checkpoint, "
            f"{current.get(key, missing)!r} in config.json"
            for key in keys if saved.get(key, missing) != current.get(key, missing)]


def _some(items, shown=5):
    """The first `shown` items, and how many more."""
    items = list(items)
    text = ", ".join(map(str, items[:shown]))
    return text + (f" and {len(items) - shown} more" if len(items) > shown else "")
