"""The experiments of examples/gradient_flow.py, one per module, each registered by
`@experiment` (transformer/study/toolkit.py) under its id; their expectations are in
transformer/study/expectations.py.

    E0  the instruments in Xiong et al. 2020's own setting (App. C), where Lemmas 1-2 are exact
    E1  Xiong et al. 2020 (Fig. 3(a,b)): the expected ‖∂L/∂W2‖ by layer at init
    E2  Xiong et al. 2020: the last layer's expected gradient against depth
    E3  Xiong et al. 2020: the LayerNorm input (post-LN) and the stream's growth (pre-LN)
    E4  Dong et al. 2021: rank collapse of pure attention, with and without skip, float64
    E5  Xiong et al. 2020: warm-up ladder at two peaks, toy translation (loss)
    E6  Xiong et al. 2020: pre-LN without warm-up against the baseline, copy task
    E7  Xiong et al. 2020: the branch's share of ∂L/∂x (a mechanism check, not counted)
    E8  Bachlechner et al. 2020: ReZero's identity at init and its convergence speed
    E9  Liu et al. 2020: the output change against depth, paired by seed; the remedies
    F3  Xiong et al. 2020's Figure 3 at this scale (reported, written as xiong_figure3.png)

The pilot (`pilot`, not in the default run) chose E5's peak and E8's target loss on seeds of
its own.
"""

from . import (  # noqa: F401  (each registers its experiment)
    e0_xiong_setting,
    e1_expected_gradient,
    e2_gradient_by_depth,
    e3_layernorm_input,
    e4_rank_collapse,
    e5_e6_warmup,
    e7_skip_versus_branch,
    e8_rezero,
    e9_output_change,
    figure3,
)
