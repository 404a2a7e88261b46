"""Xiong et al. 2020's Figure 3 reproduced at this scale, as §3.4 describes it (the paper's
caption is not available): (a, b) on a 6-6 model, the expected gradient norm of the FFN's
second weight W² per layer, post-LN at initialization and after a short warm-up with Adam
beside pre-LN at initialization, the encoder's layers in (a) and the decoder's in (b); (c, d)
the last layer's gradient norm of W² at 6-6, 8-8, 10-10, 12-12 and 14-14 layers at
initialization, encoder and decoder. Every point is the mean over the study's seeds ("The
experiments are repeated ten times using different random seeds", §3.4), its error bar one
sample standard deviation. Written into --out as xiong_figure3.png."""

import textwrap

import numpy as np

from ...instruments.noise import gradient_statistics
from ...instruments.plots import Panels, plot_depth_profiles
from ..expectations import WARMUP_PEAK
from ..processes import map_runs
from ..toolkit import (
    Check,
    Outcome,
    Study,
    build_model,
    experiment,
    ffn_w2,
    make_trainer,
    mean_value,
    train,
    warmup_schedule,
)

STACKS = ("encoder", "decoder")
QUANTITY = "grad_mean_norm_unbiased"  # ‖E ∂L/∂W²‖ over the probe batches, bias-corrected
CAPTION = ("Xiong et al. 2020's Figure 3 as §3.4 describes it, at this scale (the paper's "
           "caption is not available). (a, b): 6-6 model, the expected gradient norm of the "
           "FFN's W² per layer, encoder (a) and decoder (b): post-LN at initialization and "
           "after {warmup} steps of Adam warm-up (to lr {peak:g}), pre-LN at initialization. "
           "(c, d): the last layer's expected gradient norm of W² at initialization against "
           "the layers per stack, encoder (c) and decoder (d). Mean over {seeds} seeds, error "
           "bars ± one sample standard deviation; d_model {d_model}, toy translation.")


def norms_by_layer(rows: list[dict], stack: str, layers: list[int]) -> list[float]:
    """The expected gradient norm of W² in each of `layers` of `stack`, from a model's rows."""
    return [mean_value(rows, quantity=QUANTITY, param=ffn_w2(stack, layer)) for layer in layers]


@experiment(name="F3", title="Xiong et al.'s Figure 3 at this scale",
            claim="Xiong et al. 2020, §3.4, Fig. 3")
def xiong_figure3(study: Study) -> Outcome:
    scale, data = study.scale, study.data
    depth, depths, seeds = scale.depth, list(scale.depths), range(scale.seeds)
    warmup = scale.get("figure3_warmup", 120 if not scale.quick else 3)
    layers = list(range(1, depth + 1))
    study.measure(("post-LN", "pre-LN"), sorted({depth, *depths}))
    pad = data.vocab.pad_id

    def after_warmup(seed: int) -> dict[str, list[float]]:
        model = build_model(data, seed, depth, **scale.model_sizes, scheme_name="post-LN")
        train(make_trainer(model, data, scale.batch_size, seed,
                           warmup_schedule(WARMUP_PEAK, warmup, warmup)), warmup)
        rows = gradient_statistics(model, study.probes, pad)
        return {stack: norms_by_layer(rows, stack, layers) for stack in STACKS}

    warmed = list(map_runs(after_warmup, list(seeds), scale.processes))
    by_layer: dict[str, dict[str, np.ndarray]] = {stack: {} for stack in STACKS}
    by_depth: dict[str, dict[str, np.ndarray]] = {stack: {} for stack in STACKS}
    for stack in STACKS:
        for variant in ("post-LN", "pre-LN"):
            by_layer[stack][f"{variant}, init"] = study.values(
                variant, depth, lambda rows, stack=stack: norms_by_layer(rows, stack, layers))
            by_depth[stack][variant] = np.array(
                [[norms_by_layer(study.rows(variant, d, seed), stack, [d])[0] for d in depths]
                 for seed in seeds])
        by_layer[stack][f"post-LN, after {warmup} warm-up steps"] = \
            np.array([found[stack] for found in warmed])
    panels: Panels = {}
    for letter, stack in zip("ab", STACKS):
        panels[f"({letter}) {stack}, 6-6: W² by layer"] = {
            label: (layers, values) for label, values in by_layer[stack].items()}
    for letter, stack in zip("cd", STACKS):
        panels[f"({letter}) {stack}: last layer's W² by depth"] = {
            label: (depths, values) for label, values in by_depth[stack].items()}
    figure = plot_depth_profiles(panels, "Xiong et al. 2020, Figure 3, at this scale",
                                 ylabel="expected gradient norm of W²", sharey=False,
                                 columns=2)
    for number, ax in enumerate(figure.axes):  # the axes as §3.4 names them
        ax.set_xlabel("layer index" if number < 2 else "size of the model (layers per stack)")
    figure.supxlabel(textwrap.fill(CAPTION.format(warmup=warmup, peak=WARMUP_PEAK,
                                                  seeds=len(seeds), d_model=scale.d_model),
                                   150), fontsize="small", ha="left", x=0.01)
    rows = [{"config": label, "seed": seed, "stack": stack, "layer": layer,
             "quantity": QUANTITY, "value": float(value)}
            for stack in STACKS for label, values in by_layer[stack].items()
            for seed, row in zip(seeds, values) for layer, value in zip(layers, row)]
    rows += [{"config": f"{variant}, init", "seed": seed, "stack": stack, "depth": d,
              "layer": d, "quantity": QUANTITY, "value": float(value)}
             for stack in STACKS for variant, values in by_depth[stack].items()
             for seed, row in zip(seeds, values) for d, value in zip(depths, row)]
    checks = []
    for stack in STACKS:
        lines = by_layer[stack]
        checks += [Check(f"{stack}: {label}, layer {depth} / layer 1",
                         values[:, -1] / values[:, 0]) for label, values in lines.items()]
        checks.append(Check(f"{stack}: post-LN layer {depth}, after warm-up / at init",
                            lines[f"post-LN, after {warmup} warm-up steps"][:, -1] /
                            lines["post-LN, init"][:, -1]))
        checks += [Check(f"{stack}: {variant} last layer, {depths[-1]} / {depths[0]} layers",
                         values[:, -1] / values[:, 0])
                   for variant, values in by_depth[stack].items()]
    return Outcome("F3", "xiong_figure3", "Xiong et al. 2020, §3.4, Fig. 3",
                   "Figure 3's quantities, reported", checks, rows, figure,
                   stem="xiong_figure3")
