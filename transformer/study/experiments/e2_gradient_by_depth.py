"""E2: the last layer's expected ‖∂L/∂W2‖ against depth, 6-6 to 14-14 layers at init (Xiong
et al. 2020, Theorem 1 and §3.4 'On Theorem 1', Fig. 3(c,d)): it remains the same post-LN and
decreases pre-LN, judged on the decoder's last FFN sub-layer (the encoder's reported)."""

import numpy as np

from ...instruments.plots import Panels, plot_depth_profiles
from ..toolkit import (
    STACK_NAMES,
    Check,
    Outcome,
    Study,
    experiment,
    ffn_w2,
    mean_value,
    slope,
)


@experiment(name="E2", title="last layer's gradient by depth",
            claim="Xiong et al. 2020, Theorem 1, §3.4 and Fig. 3(c,d)")
def last_layer_gradient_by_depth(study: Study) -> Outcome:
    """Log-log slope against depth L: near 0 post-LN, below 0 pre-LN (Theorem 1's O-bound
    O(d√(ln d / L)) drawn as slope -1/2)."""
    depths = list(study.scale.depths)
    study.measure(("post-LN", "pre-LN"), depths)
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
                                [slope(depths, row) for row in norms],
                                expect=key if stack == "decoder" else None))
    figure = plot_depth_profiles(panels, "E2: the last layer's expected ‖∂L/∂W2‖ by depth "
                                         "(init)", xlabel="layers per stack",
                                 ylabel="‖E ∂L/∂W2‖", log_x=True, theory=theory)
    return Outcome("E2", "last_layer_gradient_by_depth", "Xiong et al. 2020, Theorem 1, §3.4",
                   f"log-log slope of the last layer's expected ‖∂L/∂W2‖ against depth "
                   f"{depths}", checks, study.all_rows(("post-LN", "pre-LN"), depths), figure)
