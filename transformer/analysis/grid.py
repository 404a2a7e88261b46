"""The grid runner: toy translation trained over learning rate × warmup × depth × norm
placement, one CSV row per run and one comparison figure. A run's schedule is
experiments.warmup_schedule (the warmup alone differs between warmup settings)."""

import itertools
import math
import time
from dataclasses import dataclass

import numpy as np

from ..evaluation import evaluate
from .experiments import VALID_EXAMPLES, VARIANTS, build_model, make_trainer, train, warmup_schedule
from .plots import plot_grid

GRID_FIELDS = ("norm", "depth", "lr", "warmup", "seed", "steps", "train_loss", "valid_loss",
               "diverged")


@dataclass(frozen=True)
class Grid:
    """The settings crossed: peak learning rates, warmup steps (0: none), layers per stack,
    norm placements (VARIANTS keys); `decay_from` the step from which both schedules decay
    as 1/√step; each run `steps` steps per seed."""

    lrs: tuple = (1e-3, 3e-3, 1e-2)
    warmups: tuple = (0, 100)
    depths: tuple = (6,)
    norms: tuple = ("post-LN", "pre-LN")
    seeds: int = 1
    steps: int = 300
    decay_from: int = 100

    def runs(self):
        """(norm, depth, lr, warmup, seed) of every run, in order."""
        return list(itertools.product(self.norms, self.depths, self.lrs, self.warmups,
                                      range(self.seeds)))


def estimate_seconds(grid, data, scale, probe_steps=3):
    """Seconds the whole grid should take, from `probe_steps` timed steps at each depth
    (after one untimed step) and one validation: a forecast on this machine as loaded now."""
    per_step, validation = {}, 0.0
    for depth in grid.depths:
        model = build_model(data.vocab, 0, depth, **scale.model_sizes)
        trainer = make_trainer(model, data, scale.batch_size, 0, lambda step: 1e-3)
        train(trainer, 1)
        started = time.perf_counter()
        train(trainer, probe_steps)
        per_step[depth] = (time.perf_counter() - started) / probe_steps
        started = time.perf_counter()
        evaluate(model, data.valid[:VALID_EXAMPLES], data.vocab, decode=False)
        validation = max(validation, time.perf_counter() - started)
    return sum(per_step[depth] * grid.steps + validation
               for _, depth, *_ in grid.runs())


def run_grid(grid, data, scale, on_run=None):
    """Train every run of `grid` (model sizes and batch size from `scale`); returns one row per
    run (GRID_FIELDS): the mean training loss of the last 20 steps and the teacher-forced
    validation loss after the last step (a diverged run: NaN and ln(vocabulary size)).
    `on_run(row)` is called after each run."""
    rows = []
    for norm, depth, lr, warmup, seed in grid.runs():
        model = build_model(data.vocab, seed, depth, **scale.model_sizes, **VARIANTS[norm])
        schedule = warmup_schedule(lr, warmup, grid.decay_from)
        losses = train(make_trainer(model, data, scale.batch_size, seed, schedule), grid.steps)
        diverged = math.isnan(losses[-1])
        valid = math.log(len(data.vocab)) if diverged else \
            evaluate(model, data.valid[:VALID_EXAMPLES], data.vocab, decode=False)["loss"]
        row = {"norm": norm, "depth": depth, "lr": lr, "warmup": warmup, "seed": seed,
               "steps": grid.steps, "train_loss": float(np.mean(losses[-20:])),
               "valid_loss": valid, "diverged": diverged}
        rows.append(row)
        if on_run is not None:
            on_run(row)
    return rows


def grid_figure(rows):
    return plot_grid(rows, "grid: validation loss after training, by peak learning rate")
