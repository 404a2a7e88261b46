"""The experiments of examples/gradient_flow.py: what the literature says about residual paths
and LayerNorm placement, measured on CPU-sized models with this package's instruments.

    E1  ‖∂L/∂W2‖ of each layer's second FFN weight, layers 1..6, at init: post-LN top/bottom
        >= 2, pre-LN top/bottom in [0.5, 2] (Xiong et al., 2020); both stacks
    E2  that norm for the last layer at depths 2..12: log-log slope against depth, post-LN in
        [-0.25, 0.25], pre-LN in [-0.8, -0.2]; both stacks
    E3  the residual stream's squared norm / d_model per layer at init: pre-LN layer 6 >= 2 ×
        layer 1, post-LN in [0.5, 2] everywhere; encoder
    E4  grad_in per layer at depth 12, with and without residuals, both norm placements:
        bottom/top >= 0.1 with, <= 0.01 without; encoder
    E5  toy translation, 6+6 layers, a fixed budget, constant lr 1e-3 vs Noam warmup to the
        same peak: post-LN ends with a higher loss without warmup, pre-LN within 10%
    E6  the copy task, post-LN vs pre-LN, the same short budget: solve rate, reported

E1-E4 also show residual="rezero", measured after `rezero_steps` training steps (at init its
branch gradients are exactly zero); it is reported, not judged. A check is judged on the
mean over seeds of a figure measured once per seed. The expectations are fixed in advance:
when one does not hold, the outcome says so.
"""

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import minigrad as mg
from minigrad.nn import functional as F
from minigrad.optim import LambdaLR

from ..config import TransformerConfig
from ..data import Vocab, load_task
from ..data.batching import BatchIterator, encode_pairs, make_batch
from ..evaluation import evaluate
from ..model import Transformer
from ..pipeline import build_vocab
from ..training import NonFiniteLossError, Trainer, TrainingConfig
from .plots import plot_depth_profiles, plot_training_curves
from .recorder import STACKS, GradientFlowRecorder, select, write_csv

FIXED_LR = 1e-3  # E5's constant learning rate, E5's warmup peak, and rezero's training lr
VALID_EXAMPLES = 200  # E5's final loss: teacher-forced, on this many validation examples
SOLVED = 0.95  # E6: a run solves the copy task at this exact match on the test split
COPY_MODEL = dict(d_model=64, n_heads=4, d_ff=128)  # examples/copy_task.py's model, 2+2 layers

VARIANTS = {
    "post-LN": dict(norm_first=False, residual="standard"),
    "pre-LN": dict(norm_first=True, residual="standard"),
    "rezero": dict(residual="rezero"),
    "post-LN, no residual": dict(norm_first=False, residual="none"),
    "pre-LN, no residual": dict(norm_first=True, residual="none"),
}


@dataclass(frozen=True)
class Scale:
    """Model sizes, seeds and budgets of a run."""

    seeds: int = 3
    d_model: int = 32
    n_heads: int = 4
    d_ff: int = 128
    probe_examples: int = 64  # the fixed validation batch on which gradients are measured
    batch_size: int = 32  # training batches
    rezero_steps: int = 100
    depths: tuple = (2, 4, 6, 8, 12)
    translation_steps: int = 200  # E5's budget
    translation_warmup: int = 50
    copy_steps: int = 300  # E6's budget
    copy_warmup: int = 100

    @property
    def model_sizes(self):
        return dict(d_model=self.d_model, n_heads=self.n_heads, d_ff=self.d_ff)


DEFAULT = Scale()
QUICK = Scale(seeds=1, d_model=16, n_heads=2, d_ff=64, rezero_steps=20, translation_steps=40,
              translation_warmup=10, copy_steps=100, copy_warmup=30)


# ----- models, data, training -----------------------------------------------------------------
@dataclass
class TaskData:
    """A task's joint vocabulary (from its training split, as the pipeline builds it), its
    training pairs as ids, and its held-out examples."""

    vocab: Vocab
    train: list
    valid: list
    test: list

    @classmethod
    def load(cls, task, seed=0):
        splits = load_task(task, seed=seed)
        vocab = build_vocab(splits)
        return cls(vocab, encode_pairs(splits["train"], vocab), splits["valid"], splits["test"])


def build_model(vocab, seed, depth, d_model, n_heads, d_ff, norm_first=False,
                residual="standard"):
    """A Transformer with `depth` layers per stack on a joint vocabulary, initialized from
    `seed`, without dropout (so that measurements are deterministic)."""
    mg.manual_seed(seed)
    return Transformer(TransformerConfig(
        len(vocab), len(vocab), d_model=d_model, n_heads=n_heads, n_encoder_layers=depth,
        n_decoder_layers=depth, d_ff=d_ff, dropout=0.0, max_len=64, share_embeddings=True,
        norm_first=norm_first, residual=residual, pad_id=vocab.pad_id))


def noam_factor(peak_lr, d_model, warmup_steps):
    """The Noam `lr_factor` whose schedule peaks at `peak_lr` (at step `warmup_steps`)."""
    return peak_lr * math.sqrt(d_model * warmup_steps)


def make_trainer(model, data, batch_size, seed, lr=None, warmup_steps=400, lr_factor=1.0):
    """The project's Trainer (Adam β = (0.9, 0.98), label smoothing 0.1, clipping at 1) on
    `data`, with the Noam schedule (`warmup_steps`, `lr_factor`) or a constant `lr`."""
    config = TrainingConfig(batch_size=batch_size, warmup_steps=warmup_steps,
                            lr_factor=lr_factor, seed=seed, progress=False)
    batches = BatchIterator(data.train, data.vocab, batch_size, seed=seed)
    trainer = Trainer(model, batches, data.valid, data.vocab, config)
    if lr is not None:  # the Trainer's Adam has lr 1, which the schedule scales
        trainer.scheduler = LambdaLR(trainer.optimizer, lambda step_count: lr)
    return trainer


def train(trainer, steps):
    """`steps` of `trainer.train_step` (the Trainer's step, without its logging, validation
    and checkpoints), each read. Returns each step's loss, NaN from a step where the loss
    diverged."""
    losses = []
    try:
        while len(losses) < steps:
            record = trainer.train_step(trainer.data.next_batch())
            trainer.read(record)
            losses.append(record["loss"])
    except NonFiniteLossError:
        losses += [math.nan] * (steps - len(losses))
    return losses


def measure_gradient_flow(model, batch, pad_id, label="", step=0):
    """The recorder's rows for one forward and backward pass on `batch` (cross-entropy without
    label smoothing), numbered `step`."""
    model.zero_grad()
    with GradientFlowRecorder(model, label) as recorder:
        logits = model(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask)
        F.cross_entropy(logits, batch.tgt_out, ignore_index=pad_id).backward()
        recorder.end_pass(step)
    return recorder.rows


class Study:
    """The models of E1-E4, each built (rezero: and trained) and measured once: E1 and E3
    read the same depth-6 models, E2 and E4 the same depth-12 ones."""

    def __init__(self, scale, data):
        self.scale, self.data = scale, data
        probe = encode_pairs(data.valid[:scale.probe_examples], data.vocab)
        self.probe = make_batch(probe, range(len(probe)), data.vocab)
        self._measured = {}

    def rows(self, variant, depth, seed):
        """The gradient-flow rows (with `depth` and `seed` added) of VARIANTS[variant] with
        `depth` layers per stack on the probe batch: at init or, for rezero, after
        `rezero_steps` training steps at the constant lr FIXED_LR."""
        key = (variant, depth, seed)
        if key not in self._measured:
            options = VARIANTS[variant]
            model = build_model(self.data.vocab, seed, depth, **self.scale.model_sizes,
                                **options)
            steps = self.scale.rezero_steps if options["residual"] == "rezero" else 0
            if steps:
                train(make_trainer(model, self.data, self.scale.batch_size, seed, lr=FIXED_LR),
                      steps)
            rows = measure_gradient_flow(model, self.probe, self.data.vocab.pad_id, variant,
                                         steps)
            self._measured[key] = [dict(row, depth=depth, seed=seed) for row in rows]
        return self._measured[key]

    def values(self, variant, depth, pick):
        """(n_seeds, n): `pick(rows)` (n values) for each seed's model."""
        return np.array([pick(self.rows(variant, depth, seed))
                         for seed in range(self.scale.seeds)])

    def all_rows(self, variants, depths):
        return [row for variant in variants for depth in depths
                for seed in range(self.scale.seeds) for row in self.rows(variant, depth, seed)]

    def label(self, variant):
        """A plot line's label: rezero says when it was measured."""
        if VARIANTS[variant]["residual"] == "rezero":
            return f"{variant} (after {self.scale.rezero_steps} steps)"
        return variant


def value(rows, **fields):
    """The value of the one row with these fields."""
    found = select(rows, **fields)
    if len(found) != 1:
        raise LookupError(f"{len(found)} rows match {fields}, expected one")
    return found[0]["value"]


def ffn_w2(stack, layer):
    """The name of the second FFN weight of a layer (numbered from 1)."""
    return f"{stack}.layers.{layer - 1}.ffn.sublayer.linear2.weight"


def ffn_w2_norms(stack, layers):
    """A picker for Study.values: the gradient norm of each of these layers' FFN W2."""
    return lambda rows: [value(rows, quantity="param_grad_norm", param=ffn_w2(stack, layer))
                         for layer in layers]


# ----- outcomes -------------------------------------------------------------------------------
@dataclass
class Check:
    """A figure measured once per seed, judged on its mean against [low, high] (either bound
    may be None); with no bound at all it is only reported."""

    label: str
    values: list
    low: float = None
    high: float = None

    @property
    def judged(self):
        return self.low is not None or self.high is not None

    @property
    def held(self):
        mean = float(np.mean(self.values))
        return (self.low is None or mean >= self.low) and (self.high is None or mean <= self.high)

    def __str__(self):
        text = f"{self.label} {np.mean(self.values):.3g}±{np.std(self.values):.2g}"
        if not self.judged:
            return text
        if self.low is not None and self.high is not None:
            wanted = f"in [{self.low:g}, {self.high:g}]"
        else:
            wanted = f">= {self.low:g}" if self.low is not None else f"<= {self.high:g}"
        return f"{text} ({wanted}: {'held' if self.held else 'NOT held'})"


@dataclass
class Outcome:
    """One experiment's result: its checks, its measurements (CSV rows) and its figure."""

    id: str
    name: str
    headline: str
    checks: list
    rows: list
    figure: object

    @property
    def verdict(self):
        judged = [check.held for check in self.checks if check.judged]
        if not judged:
            return "reported"
        return "held" if all(judged) else "NOT held"

    def summary(self):
        """The printed line: `E1: what: figures (expectations) -> held | NOT held`."""
        checks = "; ".join(str(check) for check in self.checks)
        return f"{self.id}: {self.headline}: {checks} -> {self.verdict}"

    def save(self, folder):
        """Write `<id>_<name>.csv` and `.png` into `folder`; returns their paths."""
        stem = Path(folder) / f"{self.id}_{self.name}"
        csv_path, png_path = stem.with_suffix(".csv"), stem.with_suffix(".png")
        write_csv(self.rows, csv_path)
        self.figure.savefig(png_path, dpi=120)
        return csv_path, png_path


# ----- E1-E4: gradients and the residual stream of models at init -----------------------------
def e1_ffn_gradient_by_layer(study, depth=6):
    variants = ("post-LN", "pre-LN", "rezero")
    bounds = {"post-LN": (2.0, None), "pre-LN": (0.5, 2.0), "rezero": (None, None)}
    layers = list(range(1, depth + 1))
    panels, checks = {}, []
    for stack in STACKS:
        panels[stack] = {}
        for variant in variants:
            norms = study.values(variant, depth, ffn_w2_norms(stack, layers))
            panels[stack][study.label(variant)] = (layers, norms)
            checks.append(Check(f"{variant} {stack[:3]}", norms[:, -1] / norms[:, 0],
                                *bounds[variant]))
    figure = plot_depth_profiles(
        panels, f"E1: gradient norm of each layer's FFN W2 ({depth}+{depth} layers, at init)",
        ylabel="‖∂L/∂W2‖")
    return Outcome("E1", "ffn_gradient_by_layer",
                   f"‖∂L/∂W2‖ layer {depth} / layer 1 at init (rezero after "
                   f"{study.scale.rezero_steps} steps)", checks,
                   study.all_rows(variants, [depth]), figure)


def e2_last_layer_gradient_by_depth(study):
    variants = ("post-LN", "pre-LN", "rezero")
    bounds = {"post-LN": (-0.25, 0.25), "pre-LN": (-0.8, -0.2), "rezero": (None, None)}
    depths = list(study.scale.depths)
    panels, checks = {}, []
    for stack in STACKS:
        panels[stack] = {}
        for variant in variants:
            norms = np.array([[value(study.rows(variant, depth, seed), quantity="param_grad_norm",
                                     param=ffn_w2(stack, depth)) for depth in depths]
                              for seed in range(study.scale.seeds)])
            panels[stack][study.label(variant)] = (depths, norms)
            slopes = [np.polyfit(np.log(depths), np.log(row), 1)[0] for row in norms]
            checks.append(Check(f"{variant} {stack[:3]}", slopes, *bounds[variant]))
    figure = plot_depth_profiles(panels, "E2: gradient norm of the last layer's FFN W2 by depth",
                                 xlabel="layers per stack", ylabel="‖∂L/∂W2‖", log_x=True)
    return Outcome("E2", "last_layer_gradient_by_depth",
                   f"log-log slope of the last layer's ‖∂L/∂W2‖ against depth {depths}", checks,
                   study.all_rows(variants, depths), figure)


def e3_stream_norm_by_layer(study, depth=6):
    variants = ("post-LN", "pre-LN", "rezero")
    layers = list(range(1, depth + 1))
    lines, norms = {}, {}
    for variant in variants:
        norms[variant] = study.values(variant, depth, lambda rows: [
            value(rows, quantity="stream_sq_norm_per_dim", stack="encoder", layer=layer)
            for layer in layers])
        lines[study.label(variant)] = (layers, norms[variant])
    top = f"layer {depth} / layer 1"
    checks = [
        Check(f"pre-LN {top}", norms["pre-LN"][:, -1] / norms["pre-LN"][:, 0], 2.0),
        Check("post-LN min", norms["post-LN"].min(axis=1), 0.5),
        Check("post-LN max", norms["post-LN"].max(axis=1), None, 2.0),
        Check(f"rezero {top}", norms["rezero"][:, -1] / norms["rezero"][:, 0]),
    ]
    figure = plot_depth_profiles({"encoder": lines},
                                 "E3: residual stream ‖x‖² / d_model at each layer's output",
                                 ylabel="‖x‖² / d_model (mean over tokens)")
    return Outcome("E3", "stream_norm_by_layer",
                   "encoder stream ‖x‖²/d_model per layer at init", checks,
                   study.all_rows(variants, [depth]), figure)


def e4_grad_in_with_and_without_residuals(study, depth=12):
    placements = {"post-LN": ("post-LN", "post-LN, no residual"),
                  "pre-LN": ("pre-LN", "pre-LN, no residual")}
    layers = list(range(1, depth + 1))

    def grad_in(variant):
        return study.values(variant, depth, lambda rows: [
            value(rows, quantity="grad_in", stack="encoder", layer=layer, sublayer="self_attn")
            for layer in layers])

    panels, checks = {}, []
    rezero = grad_in("rezero")
    for placement, (with_residual, without) in placements.items():
        with_norms, without_norms = grad_in(with_residual), grad_in(without)
        panels[placement] = {"residual": (layers, with_norms),
                             "no residual": (layers, without_norms),
                             study.label("rezero"): (layers, rezero)}
        checks.append(Check(with_residual, with_norms[:, 0] / with_norms[:, -1], 0.1))
        checks.append(Check(without, without_norms[:, 0] / without_norms[:, -1], None, 0.01))
    checks.append(Check("rezero", rezero[:, 0] / rezero[:, -1]))
    figure = plot_depth_profiles(panels, f"E4: ‖∂L/∂x‖ at each encoder layer's input "
                                         f"({depth}+{depth} layers, at init)",
                                 ylabel="grad_in ‖∂L/∂x‖")
    variants = [v for pair in placements.values() for v in pair] + ["rezero"]
    return Outcome("E4", "grad_in_with_and_without_residuals",
                   f"encoder grad_in layer 1 / layer {depth}, with and without residuals",
                   checks, study.all_rows(variants, [depth]), figure)


# ----- E5-E6: training ------------------------------------------------------------------------
def _training_runs(data, scale, configs, steps, depth, sizes, finish):
    """Train every config {label: (variant options, trainer options)} for every seed.
    Returns CSV rows, {label: (steps, losses (n_seeds, steps))} and {label: [finish(model,
    losses) per seed]}."""
    rows, curves, results = [], {}, {}
    for label, (options, trainer_options) in configs.items():
        losses, results[label] = [], []
        for seed in range(scale.seeds):
            model = build_model(data.vocab, seed, depth, **sizes, **options)
            run = train(make_trainer(model, data, scale.batch_size, seed, **trainer_options),
                        steps)
            losses.append(run)
            results[label].append(finish(model, run))
            rows += [{"config": label, "seed": seed, "step": step, "quantity": "train_loss",
                      "value": loss} for step, loss in enumerate(run, start=1)]
        curves[label] = (list(range(1, steps + 1)), np.array(losses))
    return rows, curves, results


def e5_warmup(data, scale, depth=6):
    warmup = dict(warmup_steps=scale.translation_warmup,
                  lr_factor=noam_factor(FIXED_LR, scale.d_model, scale.translation_warmup))
    configs = {f"{placement}, {schedule}": (VARIANTS[placement], options)
               for placement in ("post-LN", "pre-LN")
               for schedule, options in (("fixed lr", dict(lr=FIXED_LR)), ("warmup", warmup))}

    def final_loss(model, losses):
        if math.isnan(losses[-1]):
            return math.inf  # diverged
        return evaluate(model, data.valid[:VALID_EXAMPLES], data.vocab, decode=False)["loss"]

    rows, curves, final = _training_runs(data, scale, configs, scale.translation_steps, depth,
                                         scale.model_sizes, final_loss)
    rows += [{"config": label, "seed": seed, "step": scale.translation_steps,
              "quantity": "valid_loss", "value": loss}
             for label, losses in final.items() for seed, loss in enumerate(losses)]
    checks = [Check(label, losses) for label, losses in final.items()]
    for placement, bounds in (("post-LN", (1.0, None)), ("pre-LN", (0.9, 1.1))):
        ratio = np.divide(final[f"{placement}, fixed lr"], final[f"{placement}, warmup"])
        checks.append(Check(f"{placement} fixed/warmup", ratio, *bounds))
    figure = plot_training_curves(curves, f"E5: toy translation ({depth}+{depth} layers), "
                                          "with and without warmup")
    return Outcome("E5", "warmup_toy_translation",
                   f"validation loss after {scale.translation_steps} steps", checks, rows,
                   figure)


def e6_copy_task(data, scale, depth=2):
    schedule = dict(warmup_steps=scale.copy_warmup)
    configs = {placement: (VARIANTS[placement], schedule) for placement in ("post-LN", "pre-LN")}

    def exact_match(model, losses):
        return evaluate(model, data.test, data.vocab)["exact_match"]

    rows, curves, matches = _training_runs(data, scale, configs, scale.copy_steps, depth,
                                           COPY_MODEL, exact_match)
    rows += [{"config": label, "seed": seed, "step": scale.copy_steps,
              "quantity": "exact_match", "value": match}
             for label, values in matches.items() for seed, match in enumerate(values)]
    checks = [Check(f"{label} solved {sum(m >= SOLVED for m in values)}/{len(values)}, "
                    f"exact match", values) for label, values in matches.items()]
    figure = plot_training_curves(curves, f"E6: copy task, {depth}+{depth} layers, "
                                          f"{scale.copy_steps} steps")
    return Outcome("E6", "copy_task_solve_rate",
                   f"copy task after {scale.copy_steps} steps (solved: test exact match >= "
                   f"{SOLVED:g})", checks, rows, figure)


EXPERIMENTS = ("E1", "E2", "E3", "E4", "E5", "E6")


def run_experiments(scale=DEFAULT, only=EXPERIMENTS):
    """The Outcome of each experiment in `only`, in order, yielded as each finishes."""
    translation = TaskData.load("toy-en-es")
    study = Study(scale, translation)
    experiments = {
        "E1": lambda: e1_ffn_gradient_by_layer(study),
        "E2": lambda: e2_last_layer_gradient_by_depth(study),
        "E3": lambda: e3_stream_norm_by_layer(study),
        "E4": lambda: e4_grad_in_with_and_without_residuals(study),
        "E5": lambda: e5_warmup(translation, scale),
        "E6": lambda: e6_copy_task(TaskData.load("copy"), scale),
    }
    for experiment in only:
        yield experiments[experiment]()
