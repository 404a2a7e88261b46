"""The experiment framework of the gradient-flow study, for its experiments and for a user's
own (docs/write_your_own_experiment.md):

- `experiment(name=..., title=..., claim=...)`: registers a function `run(study) -> Outcome`
  under `name`, so that examples/gradient_flow.py runs it (`--only name`);
- `Study(scale, task)`: the task's data, the models measured at init (built once, recorded
  once) and `study.task(name)` for another task's data;
- `build_model`, `make_trainer`, `train` (advances `trainer.step` and fires the Trainer's
  callbacks), `warmup_schedule`;
- `Check` (a figure per seed against an Expectation or explicit bounds; held, NOT held, not
  testable, or only reported) and `Outcome` (an experiment's checks, rows and figure).
"""

import json
import math
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

import numpy as np

import minigrad as mg
from minigrad.optim import LambdaLR

from ..builders import build_vocab
from ..config import TransformerConfig
from ..data import Vocab, load_task
from ..data.batching import Batch, BatchIterator, encode_pairs, make_batch
from ..data.grammar import toy_en_es
from ..initialization import initialize
from ..instruments.noise import gradient_statistics, probe_loss
from ..instruments.plots import plot_verdicts
from ..instruments.recorder import GradientFlowRecorder, select, write_csv
from ..model import Transformer
from ..residual import apply_scheme, scheme
from ..training import NonFiniteLossError, Trainer, TrainingConfig, paper_optimizer
from . import statistics
from .expectations import expectation
from .processes import map_runs

if TYPE_CHECKING:
    from matplotlib.figure import Figure

VALID_EXAMPLES = 200  # a run's final loss: teacher-forced, on this many validation examples
STACK_NAMES = {"encoder": "enc", "decoder": "dec"}


class ModelSizes(TypedDict):
    """A model's sizes, as `build_model` takes them."""

    d_model: int
    n_heads: int
    d_ff: int


@dataclass(frozen=True)
class Scale:
    """Model sizes, seeds and budgets of a run; `extra` holds an experiment's own settings.
    `seeds`: the seeds of the measurements at init (E1-E4, E7, E9, Figure 3; at least 10 for
    the study); `train_seeds`: the seeds of the training comparisons (E5, E6, E8; at least
    5)."""

    seeds: int = 10
    train_seeds: int = 5
    d_model: int = 32
    n_heads: int = 4
    d_ff: int = 128
    probe_batches: int = 16  # E1-E3, E7: the expected gradient over these validation batches
    probe_batch_size: int = 32
    depth: int = 6  # E1, E3, E7, E8, Figure 3(a,b)
    deep: int = 12  # E4, E8's deep stack
    depths: tuple[int, ...] = (6, 8, 10, 12, 14)  # E2, Figure 3(c,d): Xiong et al.'s depths
    perturbation_depths: tuple[int, ...] = (2, 4, 6, 8, 12)  # E9
    batch_size: int = 32
    processes: int = 0  # runs at once, each in a process of its own (0: one per core)
    quick: bool = False  # a smoke run: its verdicts are not the study's
    # toy-en-es split sizes; empty: the task's
    toy_sizes: dict[str, int] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def model_sizes(self) -> "ModelSizes":
        return ModelSizes(d_model=self.d_model, n_heads=self.n_heads, d_ff=self.d_ff)

    def get(self, key: str, default: Any) -> Any:
        """An experiment's own setting `key` (its default unless `extra` sets it)."""
        return self.extra.get(key, default)


DEFAULT = Scale()
QUICK = Scale(seeds=2, train_seeds=2, d_model=16, n_heads=2, d_ff=64, probe_batches=2,
              probe_batch_size=16, depth=3, deep=4, depths=(2, 3), perturbation_depths=(1, 2),
              quick=True, toy_sizes=dict(n_train=4000, n_valid=300, n_test=100,
                                         n_compositional=0, n_cross=0, n_long=0))


# ----- data, models, training -----------------------------------------------------------------
@dataclass
class TaskData:
    """A task's joint vocabulary (from its training split, as the pipeline builds it), its
    training pairs as ids, and its held-out examples."""

    vocab: Vocab
    train: list
    valid: list
    test: list

    @classmethod
    def load(cls, task: str, seed: int = 0, toy_sizes: dict | None = None) -> "TaskData":
        """The task's data; `toy_sizes` (toy-en-es only): toy_en_es's split sizes, for a
        smaller draw than the task's own."""
        if toy_sizes and task != "toy-en-es":
            raise ValueError(f"toy_sizes {toy_sizes} are for the toy-en-es task, not {task!r}; "
                             f"drop them")
        splits = toy_en_es(seed, **toy_sizes) if toy_sizes else load_task(task, seed=seed)
        vocab = build_vocab(splits)
        return cls(vocab, encode_pairs(splits["train"], vocab), splits["valid"], splits["test"])

    def batch(self, size: int = 16) -> Batch:
        """The first `size` validation pairs as one batch (what a scheme profiles on)."""
        pairs = encode_pairs(self.valid[:size], self.vocab)
        return make_batch(pairs, range(len(pairs)), self.vocab)


def build_model(data: TaskData, seed: int, depth: int, d_model: int, n_heads: int, d_ff: int,
                scheme_name: str = "post-LN", init: str = "xavier") -> Transformer:
    """A Transformer with `depth` layers per stack on `data`'s joint vocabulary, initialized
    from `seed`, without dropout (measurements are deterministic), with the residual scheme
    `scheme_name` (transformer/residual.py) and the initialization `init`
    (transformer/initialization.py) applied."""
    mg.manual_seed(seed)
    model = Transformer(TransformerConfig(
        len(data.vocab), len(data.vocab), d_model=d_model, n_heads=n_heads,
        n_encoder_layers=depth, n_decoder_layers=depth, d_ff=d_ff, dropout=0.0, max_len=64,
        share_embeddings=True, pad_id=data.vocab.pad_id, **scheme(scheme_name).config_fields))
    initialize(model, init)
    apply_scheme(model, scheme_name, data.batch() if scheme_name == "admin" else None)
    return model


def warmup_schedule(peak_lr: float, warmup_steps: int,
                    decay_from: int) -> Callable[[int], float]:
    """lr(s) for update s = 1, 2, ...: `peak_lr` × min(1, s / warmup_steps) (no warmup when 0)
    × min(1, √(decay_from / s)): the warmups differ in the warmup alone."""
    def lr(step: int) -> float:
        ramp = min(1.0, step / warmup_steps) if warmup_steps else 1.0
        return peak_lr * ramp * min(1.0, math.sqrt(decay_from / step))
    return lr


def make_trainer(model: Transformer, data: TaskData, batch_size: int, seed: int,
                 schedule: Callable[[int], float], callbacks: Sequence = ()) -> Trainer:
    """The project's Trainer (Adam β = (0.9, 0.98), label smoothing 0.1, clipping at 1) on
    `data`, its rate lr(step) = `schedule(step)`, step counted from 1."""
    config = TrainingConfig(batch_size=batch_size, seed=seed, progress=False)
    batches = BatchIterator(data.train, data.vocab, batch_size, seed=seed)
    optimizer = paper_optimizer(model, config)  # lr 1, which the schedule scales
    scheduler = LambdaLR(optimizer, lambda count: schedule(count + 1))  # counts from 0
    return Trainer(model, batches, data.valid, data.vocab, config, callbacks=callbacks,
                   optimizer=optimizer, scheduler=scheduler)


def train(trainer: Trainer, steps: int) -> list[float]:
    """`steps` more steps of `trainer`: each its `train_step` (which fires the callbacks'
    `on_backward_end`), `trainer.step` advanced, the loss read, then every callback's
    `on_step_end`, as `Trainer.train` does, without its logging, validation and checkpoints.
    Returns each step's loss, NaN from a step where the loss diverged on."""
    losses: list[float] = []
    try:
        while len(losses) < steps:
            record = trainer.train_step(trainer.data.next_batch())
            trainer.step += 1
            losses.append(trainer.read()["loss"])
            record.update(step=trainer.step, split="train")
            for callback in trainer.callbacks:
                callback.on_step_end(trainer, trainer.step, record)
    except NonFiniteLossError:
        losses += [math.nan] * (steps - len(losses))
    return losses


class Study:
    """An experiment's context: the scale, the task's data (`data`, toy-en-es by default),
    other tasks' data (`task(name)`, loaded once, or given in `tasks`), and the models
    measured at init, each built and measured once: per probe batch the recorder's rows
    (step = the batch's number, from 1), and over all of them the gradient statistics (step
    0)."""

    def __init__(self, scale: Scale = DEFAULT, data: TaskData | None = None,
                 task: str = "toy-en-es", tasks: dict[str, TaskData] | None = None) -> None:
        self.scale = scale
        self._tasks = dict(tasks or {})  # {name: TaskData} given rather than loaded
        self.data = data if data is not None else self.task(task)
        size = scale.probe_batch_size
        pairs = encode_pairs(self.data.valid[:scale.probe_batches * size], self.data.vocab)
        self.probes = [make_batch(pairs, range(start, min(start + size, len(pairs))),
                                  self.data.vocab) for start in range(0, len(pairs), size)]
        self._models: dict[tuple, Transformer] = {}
        self._rows: dict[tuple, list[dict]] = {}

    def task(self, name: str) -> TaskData:
        if name not in self._tasks:
            sizes = self.scale.toy_sizes if name == "toy-en-es" else None
            self._tasks[name] = TaskData.load(name, toy_sizes=sizes)
        return self._tasks[name]

    def model(self, variant: str, depth: int, seed: int, init: str = "xavier") -> Transformer:
        key = (variant, depth, seed, init)
        if key not in self._models:
            self._models[key] = build_model(self.data, seed, depth, **self.scale.model_sizes,
                                            scheme_name=variant, init=init)
        return self._models[key]

    def rows(self, variant: str, depth: int, seed: int, init: str = "xavier") -> list[dict]:
        """The rows of the scheme `variant` with `depth` layers per stack, `depth` and `seed`
        added."""
        key = (variant, depth, seed, init)
        if key not in self._rows:
            self._rows[key] = self._measure(key, self.model(variant, depth, seed, init))
        return self._rows[key]

    def measure(self, variants: Iterable[str], depths: Iterable[int],
                inits: Iterable[str] = ("xavier",)) -> None:
        """Measure the models of every variant, depth, init and seed not measured yet, spread
        over `scale.processes` processes (processes.map_runs): `rows` then reads them."""
        keys = [(variant, depth, seed, init) for variant in variants for depth in depths
                for init in inits for seed in range(self.scale.seeds)
                if (variant, depth, seed, init) not in self._rows]

        def measure_one(key: tuple) -> list[dict]:
            variant, depth, seed, init = key
            return self._measure(key, build_model(self.data, seed, depth,
                                                  **self.scale.model_sizes,
                                                  scheme_name=variant, init=init))

        for key, rows in zip(keys, map_runs(measure_one, keys, self.scale.processes)):
            self._rows[key] = rows

    def _measure(self, key: tuple, model: Transformer) -> list[dict]:
        variant, depth, seed, init = key
        pad = self.data.vocab.pad_id
        model.zero_grad()
        label = variant if init == "xavier" else f"{variant}, {init}"
        with GradientFlowRecorder(model, label) as recorder:
            for number, batch in enumerate(self.probes, start=1):
                probe_loss(model, batch, pad).backward()
                recorder.end_pass(number)
                model.zero_grad()
        rows = recorder.rows + gradient_statistics(model, self.probes, pad, label)
        return [dict(row, depth=depth, seed=seed) for row in rows]

    def values(self, variant: str, depth: int, pick: Callable[..., Sequence[float]],
               init: str = "xavier") -> np.ndarray:
        """(n_seeds, n): `pick(rows)` (n values) for each seed's model."""
        return np.array([pick(self.rows(variant, depth, seed, init))
                         for seed in range(self.scale.seeds)], dtype=float)

    def all_rows(self, variants: Iterable[str], depths: Iterable[int]) -> list[dict]:
        return [row for variant in variants for depth in depths
                for seed in range(self.scale.seeds) for row in self.rows(variant, depth, seed)]


def mean_value(rows: list[dict], **fields: Any) -> float:
    """The mean value of the rows with these fields."""
    found = select(rows, **fields)
    if not found:
        raise LookupError(f"no row matches {fields}")
    return float(np.mean([row["value"] for row in found]))


def ffn_w2(stack: str, layer: int) -> str:
    """The name of the second FFN weight of a layer (numbered from 1)."""
    return f"{stack}.layers.{layer - 1}.ffn.sublayer.linear2.weight"


def slope(xs: Sequence[float] | np.ndarray, ys: Sequence[float] | np.ndarray) -> float:
    """The least-squares slope of log y against log x."""
    return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])


# ----- outcomes -------------------------------------------------------------------------------
@dataclass
class Check:
    """A figure measured once per seed, judged on the 95% interval of its mean (statistics.py)
    against [low, high]: the bounds of the Expectation `expect` (expectations.py), or explicit
    ones (a user's own); with neither it is only reported. `untestable` (a reason) makes it
    "not testable" whatever the values; so does a check of fewer than two seeds (no interval).
    `paired`: the values are per-seed differences of a comparison paired by seed
    (statistics.paired_differences), which the method says."""

    label: str
    values: Sequence[float] | np.ndarray  # one per seed; a list of floats once made
    low: float | None = None
    high: float | None = None
    expect: str | None = None
    untestable: str | None = None
    paired: bool = False

    def __post_init__(self) -> None:
        if self.expect is not None:
            found = expectation(self.expect)
            self.low, self.high = found.low, found.high
        self.values = [float(v) for v in np.atleast_1d(self.values)]

    @property
    def n(self) -> int:
        return len(self.values)

    @property
    def bounded(self) -> bool:
        return self.low is not None or self.high is not None

    @property
    def reason(self) -> str | None:
        """Why the check is not testable, None where it is."""
        if self.untestable is not None:
            return self.untestable
        if self.bounded and self.n < 2:
            return f"{self.n} seed(s): no interval"
        if self.bounded and not all(math.isfinite(v) for v in self.values):
            return "a seed's figure is not finite (a diverged run): no interval"
        return None

    @property
    def judged(self) -> bool:
        """Whether the check is held, NOT held or inconclusive (bounded and testable)."""
        return self.bounded and self.reason is None

    @property
    def mean(self) -> float:
        return float(np.mean(self.values)) if self.values else math.nan

    @property
    def sd(self) -> float:
        return statistics.sample_sd(self.values)

    @property
    def interval(self) -> tuple[float, float]:
        """The 95% interval of the mean ((nan, nan) below two seeds or with a non-finite
        value)."""
        if self.n < 2 or not all(math.isfinite(v) for v in self.values):
            return math.nan, math.nan
        return statistics.mean_interval(self.values)

    @property
    def method(self) -> str:
        method = statistics.interval_method(self.n)
        return f"{method} {statistics.PAIRED}" if self.paired else method

    @property
    def verdict(self) -> str:
        """held, NOT held, inconclusive, not testable, or reported (no bound)."""
        if not self.bounded:
            return statistics.REPORTED if self.untestable is None else statistics.NOT_TESTABLE
        if self.reason is not None:
            return statistics.NOT_TESTABLE
        return statistics.judge(self.interval, self.low, self.high)

    def bounds_text(self) -> str:
        if self.low is not None and self.high is not None:
            return f"in [{self.low:g}, {self.high:g}]"
        return f">= {self.low:g}" if self.low is not None else f"<= {self.high:g}"

    def __str__(self) -> str:
        low, high = self.interval
        text = f"{self.label} {self.mean:.3g}" + \
            (f" [{low:.3g}, {high:.3g}]" if self.n >= 2 and math.isfinite(low) else "") + \
            f" n={self.n}"
        if self.reason is not None and (self.bounded or self.untestable is not None):
            return f"{text} (not testable: {self.reason})"
        if not self.bounded:
            return text
        return f"{text} ({self.bounds_text()}: {self.verdict})"

    def record(self) -> dict:
        """The check as a dict for verdicts.json."""
        low, high = self.interval
        found = {"label": self.label, "values": self.values, "n": self.n, "mean": self.mean,
                 "sd": self.sd, "interval": [low, high], "method": self.method,
                 "low": self.low, "high": self.high, "expectation": self.expect,
                 "outcome": self.verdict}
        if self.verdict == statistics.NOT_TESTABLE:
            found["reason"] = self.reason
        return found


@dataclass
class Outcome:
    """One experiment's result: the claim it tests, its checks, its measurements (CSV rows)
    and its figure (None: none). `mechanism`: the experiment checks a mechanism that follows
    from others' findings, not independent evidence; `instrument`: it checks the instruments
    where the theory is exact (a miss is a bug); neither is counted among the verdicts.
    `seconds`: how long it ran (set by `run_experiments`)."""

    id: str
    name: str
    claim: str
    headline: str
    checks: list[Check]
    rows: list[dict]
    figure: "Figure | None" = None
    notes: list[str] = field(default_factory=list)
    mechanism: bool = False
    instrument: bool = False  # checks an instrument where the theory is exact: not counted
    seconds: float | None = None
    stem: str | None = None  # the files' name; default `<id>_<name>`

    @property
    def verdict(self) -> str:
        """statistics.experiment_outcome of the checks' outcomes."""
        return statistics.experiment_outcome(check.verdict for check in self.checks)

    def summary(self) -> str:
        checks = "; ".join(str(check) for check in self.checks)
        took = f" ({self.seconds:.0f} s)" if self.seconds is not None else ""
        kind = " [mechanism check, not counted]" if self.mechanism else \
            " [instrument check, not counted]" if self.instrument else ""
        return f"{self.id}: {self.headline}: {checks}{took}{kind} -> {self.verdict}"

    def record(self) -> dict:
        found = {"id": self.id, "name": self.name, "claim": self.claim, "outcome": self.verdict,
                 "checks": [check.record() for check in self.checks], "notes": self.notes,
                 "seconds": self.seconds}
        if self.mechanism:
            found["mechanism"] = True
        if self.instrument:
            found["instrument"] = True
        return found

    def save(self, folder: str | Path) -> None:
        """Write `<stem>.csv` (and `.png` with a figure) into `folder`, the stem `<id>_<name>`
        unless `stem` names it."""
        stem = Path(folder) / (self.stem or f"{self.id}_{self.name}")
        write_csv(self.rows, stem.with_suffix(".csv"))
        if self.figure is not None:
            self.figure.savefig(stem.with_suffix(".png"), dpi=120)


def write_verdicts(outcomes: Iterable[Outcome], path: str | Path, scale: Scale) -> None:
    """verdicts.json: every outcome's checks (values, n, mean, sd, interval, method, bounds,
    outcome), the seeds, and whether it was a smoke run."""
    payload = {"quick": scale.quick, "seeds": scale.seeds, "train_seeds": scale.train_seeds,
               "confidence": statistics.CONFIDENCE,
               "outcomes": [outcome.record() for outcome in outcomes]}
    Path(path).write_text(json.dumps(payload, indent=1, allow_nan=True) + "\n")


def summary_figure(outcomes: Iterable[Outcome], quick: bool = False) -> "Figure":
    """Every judged check of `outcomes` against its bounds, one row each."""
    rows = [(outcome.id, check.label, check.mean, check.interval, check.low, check.high,
             check.verdict)
            for outcome in outcomes for check in outcome.checks if check.judged]
    title = "verdicts (mean and its 95% interval over seeds; grey: the claimed range)"
    return plot_verdicts(rows, ("smoke run, not the study: " if quick else "") + title)


# ----- the registry ---------------------------------------------------------------------------
RunFunction = Callable[[Study], Outcome]


@dataclass(frozen=True)
class Experiment:
    """A registered experiment: `run(study) -> Outcome`; `default` whether the default run
    includes it."""

    name: str
    run: RunFunction
    title: str = ""
    claim: str = ""
    default: bool = True


EXPERIMENTS: dict[str, Experiment] = {}


def experiment(name: str, title: str = "", claim: str = "",
               default: bool = True) -> Callable[[RunFunction], RunFunction]:
    """Register the decorated `run(study) -> Outcome` as the experiment `name` (a user's own
    experiment is then run like E0-E9: `--only name`). Returns the function unchanged."""
    def register(run: RunFunction) -> RunFunction:
        if name in EXPERIMENTS:
            raise ValueError(f"experiment {name!r} is registered already; choose another name "
                             f"than {', '.join(EXPERIMENTS)}")
        EXPERIMENTS[name] = Experiment(name, run, title, claim, default)
        return run
    return register


def run_experiments(names: Sequence[str], scale: Scale = DEFAULT,
                    study: Study | None = None) -> Iterator[Outcome]:
    """The Outcome of each registered experiment in `names`, in order, yielded as each
    finishes, all on one Study."""
    unknown = [name for name in names if name not in EXPERIMENTS]
    if unknown:
        raise ValueError(f"unknown experiment {', '.join(unknown)}; registered: "
                         f"{', '.join(EXPERIMENTS)}")
    study = study if study is not None else Study(scale)
    for name in names:
        started = time.perf_counter()
        outcome = EXPERIMENTS[name].run(study)
        outcome.seconds = time.perf_counter() - started
        yield outcome


def bound_lines(*keys: str, factor: float = 1.0) -> dict[str, float]:
    """{label: y} of the bounds of these expectations (× `factor` where a bound is relative),
    for a figure's `bounds`: the figure reads the bound the verdict judges."""
    lines: dict[str, float] = {}
    for key in keys:
        found = expectation(key)
        for side, value in (("low", found.low), ("high", found.high)):
            if value is not None:
                lines[f"{key} {'>=' if side == 'low' else '<='} {value * factor:.3g}"] = \
                    value * factor
    return lines
