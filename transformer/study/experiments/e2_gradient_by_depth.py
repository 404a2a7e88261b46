"""E2: the last layer's expected ‖∂L/∂W2‖ against depth (Xiong et al. 2020, Theorem 1 as
the abstract states it: large near the output post-LN, well-behaved pre-LN)."""

import numpy as np

from ...instruments.plots import Panels, plot_depth_profiles
from ..toolkit import STACK_NAMES, Check, Outcome, experiment, ffn_w2, mean_value, slope


@experiment(name="E2", title="last layer's gradient by depth", claim="Xiong et al. 2020")
def last_layer_gradient_by_depth(study):
    """Log-log slope against depth L: 0 for post-LN, -1/2 for pre-LN (O(d√(ln d / L)))."""
    depths = list(study.scale.depths)
    panels: Panels = {}
    theory: Panels = {}
    checks: list[Check] = []
    for stack in ("encoder", "decoder"):
        panels[stack], theory[stack] = {}, {}
        for variant, key, expected in (("post-LN", "E2.post_ln_slope", 0.0),
                                       ("pre-LN", "E2.pre_ln_slope", -0.5)):
            norms = np.array([[mean_value(study.rows(variant, depth, seed),
                                          quantity="grad_mean_norm_unbiased",
                                          param=ffn_w2(stack, depth))
                               for depth in depths] for seed in range(study.scale.seeds)])
            panels[stack][variant] = (depths, norms)
            start = norms[:, 0].mean()
            theory[stack][f"theory: slope {expected:g}"] = \
                (depths, [start * (d / depths[0]) ** expected for d in depths])
            checks.append(Check(f"{variant} {STACK_NAMES[stack]}",
                                [slope(depths, row) for row in norms], expect=key))
    figure = plot_depth_profiles(panels, "E2: the last layer's expected ‖∂L/∂W2‖ by depth "
                                         "(init)", xlabel="layers per stack",
                                 ylabel="‖E ∂L/∂W2‖", log_x=True, theory=theory)
    return Outcome("E2", "last_layer_gradient_by_depth", "Xiong et al. 2020",
                   f"log-log slope of the last layer's expected ‖∂L/∂W2‖ against depth "
                   f"{depths}", checks, study.all_rows(("post-LN", "pre-LN"), depths), figure)
