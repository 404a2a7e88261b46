"""A training run as data: `RunSpec`, what a run folder's config.json holds and nothing else:
the task and its data, the tokenizer, the model's configuration, the training settings the
Trainer reads and the run's monitors. `start_run(spec, out)` (transformer.pipeline) trains
one; `MAIN_JOB` is the run of `python examples/train_translation.py`, whose flags
(transformer.options) change it field by field (`with_changes`).

A new run's spec names the model's sizes and switches it chooses (TransformerConfig fields);
the data decides the rest (the joint vocabulary's size, shared embeddings and, unless given,
max_len: `builders.build_model_config`), and the spec in config.json holds the model
resolved, every field, so a run folder is read without its data. Likewise the subword
tokenizer's pieces and digest are known once it is trained."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Annotated, Any

from minigrad.optim import NoamSchedule

from . import rules
from .config import TransformerConfig
from .data import DATA_TASKS, TASKS
from .errors import ConfigError
from .rules import BOOLEAN, TEXT, at_least, one_of, optional
from .training_config import TrainingConfig


@dataclass(frozen=True)
class TaskSpec:
    """The task (transformer.data.TASKS) and, for the tasks that read data, its path
    (config.json holds it absolute; a Path is kept as its string); `skip_bad_lines` leaves
    out the bad lines of a pairs file instead of refusing it."""

    name: Annotated[str, one_of(*TASKS)] = "toy-en-es"
    data: Annotated[str | None, optional(TEXT, "the task's own data")] = None
    skip_bad_lines: Annotated[bool, BOOLEAN] = False

    def __post_init__(self):
        if isinstance(self.data, os.PathLike):
            object.__setattr__(self, "data", os.fspath(self.data))
        rules.check(self, self._across_fields)

    def _across_fields(self) -> list[str]:
        if self.data is not None and self.name not in DATA_TASKS:
            return [f"data {self.data}: only the tasks {', '.join(DATA_TASKS)} read data "
                    "(task pairs for a TSV file)"]
        if self.skip_bad_lines and self.name != "pairs":
            return ["skip_bad_lines: only the task pairs reads a TSV file that may have bad "
                    "lines (task pairs with its data)"]
        if self.name == "pairs" and self.data is None:
            return ["the task pairs needs data, a TSV file of 'source<TAB>target' lines"]
        return []


@dataclass(frozen=True)
class TokenizerSpec:
    """Word-level, or with `subword` a SentencePiece model of at most that many pieces per
    language trained on the train split; a started subword run knows its models' `pieces`
    per side and their `digest` (checked against the models in the run folder)."""

    subword: Annotated[int | None, optional(at_least(1), "word-level")] = None
    pieces: Mapping[str, int] | None = None
    digest: str | None = None

    def __post_init__(self):
        rules.check(self)

    @property
    def kind(self) -> str:
        return "word" if self.subword is None else "subword"


@dataclass(frozen=True)
class MonitorSpec:
    """What the run shows of itself (transformer.monitoring): the first `samples` validation
    sentences translated at each validation, the gradient flow recorded every
    `record_flow_every` steps, TensorBoard logs in the folder `tensorboard`."""

    samples: Annotated[int, at_least(0)] = 3
    record_flow_every: Annotated[int, at_least(0)] = 0
    tensorboard: Annotated[str | None, optional(TEXT, "no TensorBoard")] = None

    def __post_init__(self):
        if isinstance(self.tensorboard, os.PathLike):
            object.__setattr__(self, "tensorboard", os.fspath(self.tensorboard))
        rules.check(self)


# The sizes a new run's data decides (builders.build_model_config; its model is checked
# with a size in their place).
_DATA_DECIDES = ("src_vocab_size", "tgt_vocab_size")
_MODEL_FIELDS = tuple(f.name for f in dataclasses.fields(TransformerConfig))


@dataclass(frozen=True)
class RunSpec:
    """One training run, as config.json holds it (`to_dict`, `from_dict`). `model` holds
    TransformerConfig fields: those a new run chooses (the others are TransformerConfig's
    defaults or the data's), every field in a started run's. Every field is checked when the
    spec is made (ConfigError naming each value that breaks its rule)."""

    task: TaskSpec = field(default_factory=TaskSpec)
    tokenizer: TokenizerSpec = field(default_factory=TokenizerSpec)
    model: Mapping[str, Any] = field(default_factory=dict)
    training: TrainingConfig = field(default_factory=TrainingConfig)
    monitors: MonitorSpec = field(default_factory=MonitorSpec)

    def __post_init__(self):
        if not isinstance(self.model, Mapping):
            raise ConfigError(f"RunSpec: model must be a mapping of TransformerConfig fields, "
                              f"got {type(self.model).__name__}")
        object.__setattr__(self, "model", MappingProxyType(dict(self.model)))
        self._checked_model()

    def _checked_model(self) -> TransformerConfig:
        """The model's configuration, checked: as it is when it holds the data's sizes,
        else with a vocabulary size in their place that every rule allows."""
        if all(name in self.model for name in _DATA_DECIDES):
            return self.model_config()
        pad_id = self.model.get("pad_id", 0)
        size = pad_id + 1 if isinstance(pad_id, int) and not isinstance(pad_id, bool) and \
            pad_id >= 0 else 1
        return TransformerConfig.from_dict({**self.model, **dict.fromkeys(_DATA_DECIDES, size)})

    def model_config(self) -> TransformerConfig:
        """The TransformerConfig of a started run's `model` (config.json's: every field)."""
        return TransformerConfig.from_dict(self.model)

    # ----- config.json ------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {"task": dataclasses.asdict(self.task),
                "tokenizer": {**dataclasses.asdict(self.tokenizer),
                              "pieces": None if self.tokenizer.pieces is None else
                              dict(self.tokenizer.pieces)},
                "model": dict(self.model), "training": dataclasses.asdict(self.training),
                "monitors": dataclasses.asdict(self.monitors)}

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> RunSpec:
        """The spec of a config.json (`to_dict`'s layout, or the earlier one: `upgraded`)."""
        values = upgraded(values)
        unknown = sorted(set(values) - set(PARTS))
        if unknown:
            raise ConfigError(f"RunSpec: unknown sections {unknown}; known: {list(PARTS)}")
        return cls(**{name: values[name] if part is None else rules.from_dict(part, values[name])
                      for name, part in PARTS.items() if name in values})

    # ----- paths: "training.steps", "model.d_model" ---------------------------------------------
    def value(self, path: str) -> Any:
        """The value at `path` (a model field not given: None)."""
        part, name = _split(path)
        if part == "model":
            return self.model.get(name)
        return getattr(getattr(self, part), name)

    def with_changes(self, changes: Mapping[str, Any]) -> RunSpec:
        """This spec with the values of `changes` ({path: value}), checked."""
        parts: dict[str, Any] = {}
        for path, value in changes.items():
            part, name = _split(path)
            parts.setdefault(part, {})[name] = value
        replaced: dict[str, Any] = {part: {**self.model, **named} if part == "model" else
                    dataclasses.replace(getattr(self, part), **named)
                    for part, named in parts.items()}
        return dataclasses.replace(self, **replaced)

    def peak_lr(self) -> float:
        """The highest rate of the run's schedule: factor / sqrt(d_model x warmup), at step
        warmup_steps (Noam's, and the cosine schedule's)."""
        return NoamSchedule.peak(self._checked_model().d_model,
                                 self.training.warmup_steps, self.training.lr_factor)


# The sections of config.json: the dataclass of each (None: the model's mapping).
PARTS: dict[str, type | None] = {"task": TaskSpec, "tokenizer": TokenizerSpec, "model": None,
                                 "training": TrainingConfig, "monitors": MonitorSpec}


def paths() -> list[str]:
    """Every field of a RunSpec, as a path (the model's: every TransformerConfig field)."""
    return [f"{name}.{f}" for name, part in PARTS.items()
            for f in (_MODEL_FIELDS if part is None else
                      [each.name for each in dataclasses.fields(part)])]


def _split(path: str) -> tuple[str, str]:
    part, _, name = path.partition(".")
    if part not in PARTS or name not in {p.partition(".")[2] for p in paths()
                                         if p.startswith(part + ".")}:
        raise ConfigError(f"RunSpec: no field {path!r}; the fields are {', '.join(paths())}")
    return part, name


def upgraded(values: Mapping[str, Any]) -> dict[str, Any]:
    """A config.json of the earlier layout in today's: the sample translations and the flow
    recording were training settings (there was no `monitors` section), the tokenizer was
    `{"kind": "word"}` or `{"kind": "subword", "size": N, "pieces": ..., "digest": ...}` (and
    absent before subword runs), and the task had no `skip_bad_lines`. Today's layout is
    returned as it is."""
    if not isinstance(values, Mapping):
        raise ConfigError(f"RunSpec: expected a mapping of sections, got "
                          f"{type(values).__name__}")
    if "monitors" in values:
        return dict(values)
    values = dict(values)
    training = dict(values.get("training", {}))
    values["monitors"] = {name: training.pop(name) for name in ("samples",
                                                                  "record_flow_every")
                          if name in training}
    values["training"] = training
    tokenizer = dict(values.get("tokenizer", {"kind": "word"}))
    kind = tokenizer.pop("kind", None)
    if kind not in ("word", "subword"):
        raise ConfigError(f"RunSpec: unknown tokenizer kind {kind!r} (expected 'word' or "
                          "'subword')")
    size = tokenizer.pop("size", None)
    if kind == "subword" and size is None:  # the largest model's pieces: at most the size
        size = max((tokenizer.get("pieces") or {"": 1}).values())
    values["tokenizer"] = {"subword": size if kind == "subword" else None, **tokenizer}
    return values
