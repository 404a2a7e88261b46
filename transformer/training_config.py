"""TrainingConfig: the settings a Trainer reads, each field's rule declared on it, JSON
round-trippable (as `config.TransformerConfig` is for the model)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from . import rules
from .rules import BOOLEAN, at_least, non_negative, one_of, positive, rate

# The schedules a TrainingConfig names (`paper_schedule` builds them).
SCHEDULES = ("noam", "cosine")


@dataclass(frozen=True)
class TrainingConfig:
    """The settings a Trainer reads. The default optimizer, schedule and loss read
    `warmup_steps`, `lr_factor` and `label_smoothing` (the paper's recipe, §5.3-5.4);
    `schedule` "cosine" keeps the Noam schedule's warmup and peak and then decays the rate
    along a half cosine to 0 at `steps` (`paper_schedule`). With
    `ema_decay` > 0 the run validates, keeps best.npz by, and translates with an exponential
    moving average of the weights (minigrad.optim.ExponentialMovingAverage). Each field's
    rule is declared on it (`transformer.rules`)."""

    steps: Annotated[int, at_least(1)] = 5000
    batch_size: Annotated[int, at_least(1)] = 64
    lr_factor: Annotated[float, positive()] = 1.0
    warmup_steps: Annotated[int, at_least(1)] = 400
    schedule: Annotated[str, one_of(*SCHEDULES)] = "noam"  # the paper's (§5.3), or "cosine"
    label_smoothing: Annotated[float, rate()] = 0.1
    # share of the decoder's input tokens read as <unk> (batching)
    target_dropout: Annotated[float, rate()] = 0.0
    # the decay of the weights' moving average, per step
    ema_decay: Annotated[float, rate(" (0: no average)")] = 0.0
    clip_norm: Annotated[float, positive()] = 1.0
    log_every: Annotated[int, at_least(1)] = 50
    # read the loss, gradient norm and stop flags every this many steps (0: at the logging
    # interval); between reads a GPU step never waits
    sync_every: Annotated[int, at_least(0)] = 0
    eval_every: Annotated[int, at_least(1)] = 500
    eval_examples: Annotated[int, at_least(1)] = 400
    checkpoint_every: Annotated[int, at_least(1)] = 500
    seed: Annotated[int, at_least(0)] = 0
    # stop early after this many seconds of training
    time_limit_s: Annotated[float, non_negative(" (0: no limit)")] = 0.0
    progress: Annotated[bool, BOOLEAN] = True
    accumulate: Annotated[int, at_least(1)] = 1  # micro-batches per rank and step

    def __post_init__(self):
        rules.check(self)

    @classmethod
    def from_dict(cls, values) -> TrainingConfig:
        return rules.from_dict(cls, values)
