"""E8: ReZero (Bachlechner et al. 2020): the identity at init, and the finding as §1 states
it, the speed to a loss: the steps each scheme needs to reach the target training loss
(expectations.TARGET_LOSS, fixed from the pilot), ReZero against post-LN (the vanilla
Transformer), each at its best of the peak rates RATES at a constant rate without warm-up,
every rate reported; ReZero against pre-LN reported; a 12-layer ReZero stack trained without
warm-up or LayerNorm (this study's extension: the paper's is over 100 layers)."""


import numpy as np

from ...data.batching import Batch
from ...instruments.jacobian import isometry_defects
from ...instruments.plots import Series, plot_curves
from ...instruments.streams import layer_streams
from ...model import Transformer
from ..expectations import TARGET_LOSS
from ..processes import map_runs
from ..statistics import paired_differences
from ..toolkit import Check, Outcome, Study, build_model, experiment, make_trainer, train
from .e5_e6_warmup import train_seeds

RATES = (1e-3, 3e-3, 1e-2)  # the constant rates each scheme is tried at (no warm-up)
SCHEMES = ("rezero", "post-LN", "pre-LN")
WINDOW = 10  # the training loss is read as its mean over this many steps
DEEP_RATE = 1e-3  # the 12-layer ReZero stack's rate


def stack_deviation(model: Transformer, batch: Batch) -> dict[str, list[float]]:
    """{stack: [‖x_l − x_0‖ / ‖x_0‖ for l = 1..L]}."""
    streams = layer_streams(model, batch)
    return {stack: [float(np.linalg.norm(x - xs[0]) / np.linalg.norm(xs[0])) for x in xs[1:]]
            for stack, xs in streams.items()}


def steps_to(losses: list[float], target: float, window: int = WINDOW) -> float:
    """The first step at which the mean training loss of the last `window` steps is at most
    `target`; len(losses) + 1 (a lower bound: not reached in the budget) where it never is."""
    window = min(window, len(losses))
    smoothed = np.convolve(np.nan_to_num(np.asarray(losses), nan=np.inf),
                           np.ones(window) / window, mode="valid")
    reached = np.flatnonzero(smoothed <= target)
    return float(reached[0] + window) if len(reached) else float(len(losses) + 1)


@experiment(name="E8", title="ReZero: identity and steps to a loss",
            claim="Bachlechner et al. 2020, abstract and §1")
def rezero(study: Study) -> Outcome:
    scale, data, depth = study.scale, study.data, study.scale.depth
    steps = scale.get("rezero_steps", 300 if not scale.quick else 8)
    target = scale.get("rezero_target", TARGET_LOSS)
    seeds = train_seeds(scale)
    batch = study.probes[0]
    deviation, defects = [], []
    for seed in range(scale.seeds):
        model = study.model("rezero", depth, seed)
        deviation.append(max(max(v) for v in stack_deviation(model, batch).values()))
        defects.append(max(max(v) for v in isometry_defects(model, batch).values()))
    arms = [(scheme, depth, rate) for scheme in SCHEMES for rate in RATES]
    arms.append(("rezero", scale.deep, DEEP_RATE))

    def run(arm_and_seed: tuple[tuple[str, int, float], int]) -> list[float]:
        (variant, layers, rate), seed = arm_and_seed
        model = build_model(data, seed, layers, **scale.model_sizes, scheme_name=variant)
        return train(make_trainer(model, data, scale.batch_size, seed,
                                  lambda step: rate), steps)

    runs_of = [(arm, seed) for arm in arms for seed in seeds]
    losses_of = dict(zip(runs_of, map_runs(run, runs_of, scale.processes), strict=True))
    curves: dict[str, Series] = {}
    reached: dict[tuple[str, float], np.ndarray] = {}  # steps to the target per seed
    rows: list[dict] = []
    checks = [Check("max ‖x_l − x_0‖/‖x_0‖ at init", deviation, expect="E8.identity"),
              Check("max ‖vᵀJ − v‖/‖v‖ at init", defects)]
    for variant, layers, rate in arms:
        label = f"{variant}, {layers} layers, lr {rate:g}"
        runs = np.array([losses_of[(variant, layers, rate), seed] for seed in seeds])
        curves[label] = (list(range(1, steps + 1)), runs)
        rows += [{"config": label, "seed": seed, "step": step, "quantity": "train_loss",
                  "value": float(v)} for seed, run in zip(seeds, runs)
                 for step, v in enumerate(run, start=1)]
        if layers == depth:
            reached[variant, rate] = np.array([steps_to(list(run), target) for run in runs])
            checks.append(Check(f"{label}: steps to loss {target:g}", reached[variant, rate]))
    best = {variant: min(RATES, key=lambda rate: (float(np.mean(reached[variant, rate])), rate))
            for variant in SCHEMES}
    censored = {variant: int(np.sum(reached[variant, best[variant]] > steps))
                for variant in SCHEMES}
    untestable = None if censored["rezero"] == 0 else (
        f"ReZero does not reach loss {target:g} in {steps} steps on {censored['rezero']} "
        f"seed(s) at its best rate")
    checks += [Check(f"rezero (lr {best['rezero']:g}) minus post-LN (lr {best['post-LN']:g}): "
                     f"steps to loss {target:g}, each at its best rate (paired)",
                     paired_differences(reached["rezero", best["rezero"]],
                                        reached["post-LN", best["post-LN"]]),
                     expect="E8.faster", untestable=untestable, paired=True),
               Check(f"rezero (lr {best['rezero']:g}) minus pre-LN (lr {best['pre-LN']:g}): "
                     f"steps to loss {target:g}, each at its best rate (paired)",
                     paired_differences(reached["rezero", best["rezero"]],
                                        reached["pre-LN", best["pre-LN"]]), paired=True)]
    deep = np.array([losses_of[("rezero", scale.deep, DEEP_RATE), seed] for seed in seeds])
    window = min(WINDOW, steps)
    last = np.mean(deep[:, -window:], axis=1)
    checks += [Check(f"rezero, {scale.deep} layers, lr {DEEP_RATE:g}: final loss", last),
               Check(f"rezero, {scale.deep} layers: final minus first step's loss",
                     last - deep[:, 0], expect="E8.deep_without_warmup")]
    notes = [f"best rates of {RATES}: " + ", ".join(f"{v} {best[v]:g}" for v in SCHEMES) +
             f"; a run that does not reach loss {target:g} counts {steps + 1} steps (a lower "
             f"bound), at the best rates: " +
             ", ".join(f"{v} {censored[v]} of {len(seeds)}" for v in SCHEMES)]
    figure = plot_curves({label: curve for label, curve in curves.items()
                          if any(f"lr {best[v]:g}" in label and label.startswith(f"{v}, {depth}")
                                 for v in SCHEMES) or f"{scale.deep} layers" in label},
                         f"E8: training loss at each scheme's best constant rate,\nno warm-up "
                         f"(target {target:g})", "step", "training loss")
    return Outcome("E8", "rezero", "Bachlechner et al. 2020, §1",
                   f"identity at init; steps to training loss {target:g} (budget {steps})",
                   checks, rows, figure, notes)


