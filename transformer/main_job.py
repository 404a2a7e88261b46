"""The main job's settings in one object: the task, the model and the training run that
`python examples/train_translation.py` starts by default. The script's flags and their help,
the tests and `benchmarks/task_step.py` read them from here; where the README and the docs
state one, a test checks it against this object."""

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from minigrad.optim import NoamSchedule

from .training import TrainingConfig


@dataclass(frozen=True)
class MainJob:
    """`model`: TransformerConfig fields, on top of what the data decides (the joint
    vocabulary's size, max_len, shared embeddings: `builders.build_model_config`);
    `training`: the TrainingConfig of a new run (`training_config` gives it with changes);
    `record_flow_every`: the interval of `--record-flow` without a number (a run records no
    gradient flow unless asked)."""

    task: str
    model: Mapping[str, Any]
    training: TrainingConfig
    record_flow_every: int  # what `--record-flow` records at when given no interval

    def training_config(self, **changes) -> TrainingConfig:
        """The main job's TrainingConfig with `changes` (TrainingConfig fields)."""
        return dataclasses.replace(self.training, **changes)

    def peak_lr(self) -> float:
        """The highest rate of the main job's Noam schedule: factor / sqrt(d_model x warmup),
        at step warmup_steps."""
        return NoamSchedule.peak(self.model["d_model"], self.training.warmup_steps,
                                 self.training.lr_factor)


# CPU-sized: a 0.3M-parameter model on the toy grammar, trained in minutes on two cores.
MAIN_JOB = MainJob(
    task="toy-en-es",
    model=MappingProxyType({"d_model": 64, "n_heads": 4, "n_encoder_layers": 2,
                            "n_decoder_layers": 2, "d_ff": 256, "dropout": 0.1}),
    training=TrainingConfig(steps=3800, batch_size=64, warmup_steps=400, lr_factor=0.5,
                            schedule="cosine", target_dropout=0.15, ema_decay=0.999,
                            eval_every=500, checkpoint_every=500, seed=0, samples=3),
    record_flow_every=100)
