"""The grid runner: any task trained over peak rate × warmup × depth × residual scheme, one
CSV row per run (its final losses, exact match where `decode`, and whether it diverged) and
one comparison figure; named presets: `xiong` (Xiong et al.'s two factors) and `remedies`
(post-LN, pre-LN, Admin, DeepNorm, T-Fixup, ReZero without warmup)."""

import itertools
import math
import time
from dataclasses import dataclass

import numpy as np

from minigrad.backend.blockwise import core_count

from ..evaluation import evaluate
from .plots import plot_grid
from .processes import map_runs
from .study import VALID_EXAMPLES, build_model, make_trainer, train, warmup_schedule

GRID_FIELDS = ("task", "norm", "init", "depth", "lr", "warmup", "seed", "steps", "train_loss",
               "valid_loss", "exact_match", "diverged")


@dataclass(frozen=True)
class Grid:
    """The settings crossed: peak learning rates, warmup steps (0: none), layers per stack,
    residual schemes (transformer/residual.py) and initializations; `decay_from` the step from
    which every schedule decays as 1/√step; each run `steps` steps per seed; `decode`: also
    the exact match on the validation examples (greedy)."""

    lrs: tuple = (1e-3, 3e-3, 1e-2)
    warmups: tuple = (0, 100)
    depths: tuple = (6,)
    norms: tuple = ("post-LN", "pre-LN")
    inits: tuple = ("xavier",)
    seeds: int = 1
    steps: int = 300
    decay_from: int = 100
    decode: bool = False

    def runs(self):
        """(norm, init, depth, lr, warmup, seed) of every run, in order."""
        return list(itertools.product(self.norms, self.inits, self.depths, self.lrs,
                                      self.warmups, range(self.seeds)))


PRESETS = {
    "xiong": Grid(lrs=(1e-2, 5e-3), warmups=(0, 30, 120), norms=("post-LN", "pre-LN"),
                  seeds=3, decay_from=120),
    "remedies": Grid(lrs=(1e-2,), warmups=(0, 120), norms=("post-LN", "pre-LN", "admin",
                                                          "deepnorm", "t-fixup", "rezero"),
                     inits=("xavier",), seeds=2, decay_from=120),
    "embedding": Grid(lrs=(1e-2,), warmups=(0, 120), norms=("post-LN",),
                      inits=("xavier", "scaled-embedding"), seeds=2, decay_from=120),
}


def estimate_seconds(grid, data, scale, probe_steps=3):
    """Seconds the whole grid should take, from `probe_steps` timed steps at each depth
    (after one untimed step) and one validation, its runs shared by `scale.processes`
    processes: a forecast on this machine as loaded now."""
    per_step, validation = {}, 0.0
    for depth in grid.depths:
        model = build_model(data, 0, depth, **scale.model_sizes)
        trainer = make_trainer(model, data, scale.batch_size, 0, lambda step: 1e-3)
        train(trainer, 1)
        started = time.perf_counter()
        train(trainer, probe_steps)
        per_step[depth] = (time.perf_counter() - started) / probe_steps
        started = time.perf_counter()
        evaluate(model, data.valid[:VALID_EXAMPLES], data.vocab, decode=grid.decode)
        validation = max(validation, time.perf_counter() - started)
    processes = min(scale.processes or core_count(), len(grid.runs()))
    return sum(per_step[run[2]] * grid.steps + validation for run in grid.runs()) / processes


def run_grid(grid, data, scale, task="toy-en-es", on_run=None):
    """Train every run of `grid` on `data` (model sizes and batch size from `scale`, the runs
    spread over `scale.processes` processes); returns one row per run (GRID_FIELDS): the mean
    training loss of the last 20 steps, the teacher-forced validation loss after the last step
    and (with `decode`) the exact match; a diverged run is marked, its losses NaN and
    ln(vocabulary size), its exact match 0. `on_run(row)` is called as each run's row comes, in
    the grid's order."""
    def run(settings):
        norm, init, depth, lr, warmup, seed = settings
        model = build_model(data, seed, depth, **scale.model_sizes, scheme_name=norm, init=init)
        schedule = warmup_schedule(lr, warmup, grid.decay_from)
        losses = train(make_trainer(model, data, scale.batch_size, seed, schedule), grid.steps)
        diverged = math.isnan(losses[-1])
        found = {} if diverged else evaluate(model, data.valid[:VALID_EXAMPLES], data.vocab,
                                             decode=grid.decode)
        return {"task": task, "norm": norm, "init": init, "depth": depth, "lr": lr,
                "warmup": warmup, "seed": seed, "steps": grid.steps,
                "train_loss": float(np.mean(losses[-20:])),
                "valid_loss": math.log(len(data.vocab)) if diverged else found["loss"],
                "exact_match": (0.0 if diverged else found["exact_match"]) if grid.decode
                else math.nan,
                "diverged": diverged}

    rows = []
    for row in map_runs(run, grid.runs(), scale.processes):
        rows.append(row)
        if on_run is not None:
            on_run(row)
    return rows


def grid_figure(rows):
    return plot_grid(rows, "grid: validation loss after training, by peak learning rate "
                           "(x: diverged)")
