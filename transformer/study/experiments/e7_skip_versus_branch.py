"""E7, a mechanism check (not counted among the verdicts): the branch's share of ∂L/∂x
against the skip's. It follows from E3 (the pre-LN stream grows) and Xiong et al. 2020's
Lemma 3 (the LayerNorm Jacobian scales as √d/‖x‖): not independent evidence for E1-E2."""

import numpy as np

from ...instruments.plots import Panels, plot_depth_profiles
from ..toolkit import STACK_NAMES, Check, Outcome, Study, experiment, mean_value

BLOCK_TYPES = (("encoder", "self_attn"), ("encoder", "ffn"), ("decoder", "self_attn"),
               ("decoder", "cross_attn"), ("decoder", "ffn"))


@experiment(name="E7", title="skip versus branch (mechanism check)",
            claim="Xiong et al. 2020, Lemma 3 and App. F; follows from E3")
def skip_versus_branch(study: Study) -> Outcome:
    """Xiong et al. 2020 (§3.2, the pre-LN half of Theorem 1; paraphrase): in a pre-LN block
    the branch sees LN(x), whose Jacobian scales as 1/‖x_l‖, so the branch's part of ∂L/∂x
    shrinks against the skip's as the stream grows: share_l = ‖branch part‖ / ‖∂L/∂s‖ ∝
    1/‖x_l‖. The post-LN shares are reported beside them."""
    depth, layers = study.scale.depth, list(range(1, study.scale.depth + 1))
    study.measure(("post-LN", "pre-LN"), [depth])
    panels: Panels = {}
    theory: Panels = {}
    fits: list[np.ndarray] = []  # per block type, per seed
    post_last: list[np.ndarray] = []
    pre_falls: list[np.ndarray] = []  # per block type, the pre-LN share layer L / 1 per seed
    for stack, sublayer in BLOCK_TYPES:
        title = f"{STACK_NAMES[stack]} {sublayer}"
        panels[title] = {}
        for variant in ("post-LN", "pre-LN"):
            shares = study.values(variant, depth, lambda rows, stack=stack, sublayer=sublayer: [
                mean_value(rows, quantity="grad_branch", stack=stack, layer=layer,
                           sublayer=sublayer) /
                mean_value(rows, quantity="grad_skip", stack=stack, layer=layer,
                           sublayer=sublayer) for layer in layers])
            panels[title][variant] = (layers, shares)
            if variant == "post-LN":
                post_last.append(shares[:, -1])
                continue
            size = study.values(variant, depth, lambda rows, stack=stack, sublayer=sublayer: [
                mean_value(rows, quantity="ln_input_sq_norm_per_dim", stack=stack,
                           layer=layer, sublayer=sublayer) for layer in layers])
            predicted = shares[:, :1] * np.sqrt(size[:, :1] / size)  # ∝ 1/‖x_l‖
            fits.append(shares[:, -1] / predicted[:, -1])
            pre_falls.append(shares[:, -1] / shares[:, 0])
            theory[title] = {"pre-LN theory ∝ 1/‖x_l‖": (layers, predicted.mean(axis=0))}
    fit, post_share = np.mean(fits, axis=0), np.mean(post_last, axis=0)
    pre_fall = np.mean(pre_falls, axis=0)
    checks = [Check(f"pre-LN share layer {depth}/1", pre_fall, expect="E7.pre_ln_fall"),
              Check(f"pre-LN share layer {depth} / theory", fit, expect="E7.pre_ln_theory"),
              Check(f"post-LN share layer {depth}", post_share)]
    figure = plot_depth_profiles(panels, f"E7: ‖branch part of ∂L/∂x‖ / ‖∂L/∂s‖ per block "
                                         f"type ({depth}+{depth} layers, init)",
                                 ylabel="branch / skip", theory=theory, columns=3)
    return Outcome("E7", "skip_versus_branch", "Xiong et al. 2020, Lemma 3; follows from E3",
                   "the branch's share of ∂L/∂x against the skip's, means over block types",
                   checks, study.all_rows(("post-LN", "pre-LN"), [depth]), figure,
                   mechanism=True)


