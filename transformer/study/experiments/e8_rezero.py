"""E8: ReZero (Bachlechner et al. 2020): the identity at init, and the finding itself, faster
convergence than post-LN and pre-LN at equal depth and rate without warmup, and a deeper stack
trained without warmup or LayerNorm."""

import numpy as np

from ...instruments.jacobian import isometry_defects
from ...instruments.plots import Series, plot_curves
from ...instruments.streams import layer_streams
from ..processes import map_runs
from ..toolkit import Check, Outcome, build_model, experiment, make_trainer, train

REZERO_LR = 1e-3  # the constant rate of every arm (no warmup)


def stack_deviation(model, batch):
    """{stack: [‖x_l − x_0‖ / ‖x_0‖ for l = 1..L]}."""
    streams = layer_streams(model, batch)
    return {stack: [float(np.linalg.norm(x - xs[0]) / np.linalg.norm(xs[0])) for x in xs[1:]]
            for stack, xs in streams.items()}


@experiment(name="E8", title="ReZero: identity and convergence", claim="Bachlechner et al. 2020")
def rezero(study):
    scale, data, depth = study.scale, study.data, study.scale.depth
    steps = scale.get("rezero_steps", 200 if not scale.quick else 8)
    batch = study.probes[0]
    deviation, defects = [], []
    for seed in range(scale.seeds):
        model = study.model("rezero", depth, seed)
        deviation.append(max(max(v) for v in stack_deviation(model, batch).values()))
        defects.append(max(max(v) for v in isometry_defects(model, batch).values()))
    curves: dict[str, Series] = {}
    last: dict[str, np.ndarray] = {}  # {arm: its last tenth's mean loss per seed}
    first: dict[str, np.ndarray] = {}  # {arm: its first step's loss per seed}
    rows: list[dict] = []
    arms = [("rezero", depth), ("post-LN", depth), ("pre-LN", depth), ("rezero", scale.deep)]

    def run(arm_and_seed):
        (variant, layers), seed = arm_and_seed
        model = build_model(data, seed, layers, **scale.model_sizes, scheme_name=variant)
        return train(make_trainer(model, data, scale.batch_size, seed,
                                  lambda step: REZERO_LR), steps)

    runs_of = [(arm, seed) for arm in arms for seed in range(scale.seeds)]
    losses_of = dict(zip(runs_of, map_runs(run, runs_of, scale.processes), strict=True))
    for variant, layers in arms:
        label = f"{variant}, {layers} layers"
        runs = np.array([losses_of[(variant, layers), seed] for seed in range(scale.seeds)])
        curves[label] = (list(range(1, steps + 1)), runs)
        last[label] = np.mean(runs[:, -max(1, steps // 10):], axis=1)
        first[label] = runs[:, 0]
        rows += [{"config": label, "seed": seed, "step": step, "quantity": "train_loss",
                  "value": float(v)} for seed, run in enumerate(runs)
                 for step, v in enumerate(run, start=1)]
    same, deep = f"{depth} layers", f"rezero, {scale.deep} layers"
    checks = [Check("max ‖x_l − x_0‖/‖x_0‖ at init", deviation, expect="E8.identity"),
              Check("max ‖vᵀJ − v‖/‖v‖ at init", defects),
              Check(f"rezero minus post-LN, final loss ({same})",
                    last[f"rezero, {same}"] - last[f"post-LN, {same}"], expect="E8.faster"),
              Check(f"rezero minus pre-LN, final loss ({same})",
                    last[f"rezero, {same}"] - last[f"pre-LN, {same}"],
                    expect="E8.faster_than_pre_ln"),
              Check(f"{deep}: final loss", last[deep]),
              Check(f"{deep}: final minus first step's loss", last[deep] - first[deep],
                    expect="E8.deep_without_warmup")]
    figure = plot_curves(curves, f"E8: training loss at lr {REZERO_LR:g} without warmup",
                         "step", "training loss")
    return Outcome("E8", "rezero", "Bachlechner et al. 2020",
                   f"identity at init; final training loss after {steps} steps", checks, rows,
                   figure)
