"""E9: the amplification effect (Liu et al. 2020): how much the decoder's output moves when
the weights move, against depth, post-LN against pre-LN and the remedies (Admin, DeepNorm,
T-Fixup), each arm's slope paired with post-LN's on the same seed. Judged on the noise proxy
(random perturbations, the output change as the authors' admin-torch README defines it);
the real update, one Adam step, reported beside it."""

import itertools

import numpy as np

import minigrad as mg

from ...data.batching import Batch
from ...instruments.plots import plot_depth_profiles
from ...model import Transformer
from ..processes import map_runs
from ..toolkit import (
    Check,
    Outcome,
    Study,
    TaskData,
    build_model,
    experiment,
    make_trainer,
    slope,
    train,
)

PERTURBATION = 0.01  # each weight matrix moves by this fraction of its own rms
ADAM_LR = 1e-3  # the real update: one Adam step at this rate
ARMS = ("post-LN", "pre-LN", "admin", "deepnorm", "t-fixup")


def decoder_output(model: Transformer, batch: Batch) -> np.ndarray:
    with mg.no_grad():
        memory = model.encode(batch.src, batch.src_mask)
        return model.decode(batch.tgt_in, memory, batch.src_mask, batch.tgt_mask).numpy()


def output_change(model: Transformer, batch: Batch, seed: int, draws: int) -> float:
    """‖f(W*) − f(W)‖² / ‖f(W)‖², f the decoder's output on `batch`, W* = W with every weight
    matrix of the layers moved by PERTURBATION × its own rms × standard normal noise; the
    mean over `draws` draws. The weights are put back."""
    rng = np.random.default_rng(seed)
    matrices = [p for name, p in model.named_parameters() if ".layers." in name and p.ndim == 2]
    model.eval()
    base, changes = decoder_output(model, batch), []
    originals = [p.data.copy() for p in matrices]
    try:
        for _ in range(draws):
            for p, original in zip(matrices, originals):
                rms = float(np.sqrt(np.mean(original ** 2)))
                noise = rng.standard_normal(original.shape).astype(original.dtype)
                p.data[...] = original + PERTURBATION * rms * noise
            changes.append(float(np.sum((decoder_output(model, batch) - base) ** 2) /
                                 np.sum(base ** 2)))
    finally:
        for p, original in zip(matrices, originals):
            p.data[...] = original
    return float(np.mean(changes))


def update_change(model: Transformer, data: TaskData, batch: Batch, seed: int,
                  batch_size: int) -> float:
    """The same measure after one real Adam step at ADAM_LR (the model is changed)."""
    model.eval()
    base = decoder_output(model, batch)
    train(make_trainer(model, data, batch_size, seed, lambda step: ADAM_LR), 1)
    model.eval()
    return float(np.sum((decoder_output(model, batch) - base) ** 2) / np.sum(base ** 2))


@experiment(name="E9", title="output change against depth",
            claim="Liu et al. 2020, abstract; Wang et al. 2022, abstract")
def output_change_by_depth(study: Study) -> Outcome:
    scale, data = study.scale, study.data
    depths = list(scale.perturbation_depths)
    seeds = scale.seeds
    draws = scale.get("perturbation_draws", 16 if not scale.quick else 1)
    batch = study.probes[0]

    def changes(arm_seed_depth):  # (random perturbations', one Adam update's)
        arm, seed, depth = arm_seed_depth
        model = build_model(data, seed, depth, **scale.model_sizes, scheme_name=arm)
        return (output_change(model, batch, seed, draws),
                update_change(model, data, batch, seed, scale.batch_size))

    cells = list(itertools.product(ARMS, range(seeds), depths))
    found = np.array(list(map_runs(changes, cells, scale.processes)))  # (cells, 2)
    shaped = found.reshape(len(ARMS), seeds, len(depths), 2)
    random = {arm: shaped[i, ..., 0] for i, arm in enumerate(ARMS)}
    updates = {arm: shaped[i, ..., 1] for i, arm in enumerate(ARMS)}
    slopes = {arm: np.array([slope(depths, row) for row in random[arm]]) for arm in ARMS}
    update_slopes = {arm: np.array([slope(depths, row) for row in updates[arm]])
                     for arm in ARMS}
    checks = [Check(f"{arm} slope", slopes[arm]) for arm in ARMS]
    checks.append(Check("post-LN minus pre-LN slope (paired)", slopes["post-LN"] -
                        slopes["pre-LN"], expect="E9.paired_slope", paired=True))
    checks += [Check(f"{arm} minus post-LN slope (paired)", slopes[arm] - slopes["post-LN"],
                     expect="E9.remedy_slope", paired=True)
               for arm in ("admin", "deepnorm", "t-fixup")]
    checks += [Check(f"{arm} slope, one Adam update", update_slopes[arm]) for arm in ARMS]
    checks += [Check(f"{arm} minus post-LN slope, one Adam update (paired)",
                     update_slopes[arm] - update_slopes["post-LN"], paired=True)
               for arm in ARMS[1:]]
    rows = [{"config": arm, "seed": seed, "depth": depth, "quantity": quantity,
             "value": float(value)}
            for quantity, table in (("output_change", random), ("update_change", updates))
            for arm in ARMS for seed, row in enumerate(table[arm])
            for depth, value in zip(depths, row)]
    figure = plot_depth_profiles(
        {f"W* = W + {PERTURBATION:g}·rms·noise": {arm: (depths, random[arm]) for arm in ARMS},
         f"one Adam step at lr {ADAM_LR:g}": {arm: (depths, updates[arm]) for arm in ARMS}},
        "E9: decoder output change against depth (init)", xlabel="layers per stack",
        ylabel="‖f(W*) − f(W)‖² / ‖f(W)‖²", log_x=True, sharey=False)
    return Outcome("E9", "output_change_by_depth", "Liu et al. 2020; Wang et al. 2022",
                   f"log-log slope of the output change against depth {depths}, {seeds} "
                   f"seeds, {draws} draws", checks, rows, figure)
