"""E1: the expected gradient of the FFN's W2 by layer at init, 6+6 layers (Xiong et al. 2020,
§3.4 'On the extended theory', Fig. 3(a,b)), bias-corrected for the finite number of probe
batches: post-LN grows along with the layer index, pre-LN almost keeps the same, judged on
the decoder (Fig. 3's stack is not stated; the decoder's layers are the ones near the
output); the encoder's and the gradient ‖∂L/∂x‖ through each stack reported."""

import numpy as np

from ...instruments.plots import Panels, plot_depth_profiles
from ..toolkit import Check, Outcome, Study, bound_lines, experiment, ffn_w2, mean_value


@experiment(name="E1", title="expected gradient by layer",
            claim="Xiong et al. 2020, §3.4 and Fig. 3(a,b)")
def expected_gradient_by_layer(study: Study) -> Outcome:
    """At init the expected ‖∂L/∂W2‖ of the last layer over layer 1's: above 1 post-LN, within
    a band around 1 pre-LN. ‖ḡ‖ over K batches is biased up by σ²/K: the corrected
    `grad_mean_norm_unbiased` is judged (the raw one reported)."""
    depth, layers = study.scale.depth, list(range(1, study.scale.depth + 1))
    study.measure(("post-LN", "pre-LN"), [depth])
    panels: Panels = {}
    ratios: dict[tuple[str, str], np.ndarray] = {}  # {(variant, stack): last / layer 1 per seed}
    raw: dict[tuple[str, str], np.ndarray] = {}
    for stack in ("encoder", "decoder"):
        panels[stack] = {}
        for variant in ("post-LN", "pre-LN"):
            for quantity, into in (("grad_mean_norm_unbiased", ratios),
                                   ("grad_mean_norm", raw)):
                norms = study.values(variant, depth, lambda rows, stack=stack, q=quantity: [
                    mean_value(rows, quantity=q, param=ffn_w2(stack, layer))
                    for layer in layers])
                relative = norms / norms[:, :1]
                into[variant, stack] = relative[:, -1]
                if quantity == "grad_mean_norm_unbiased":
                    panels[stack][variant] = (layers, relative)
    through = {(variant, stack): study.values(variant, depth, lambda rows, stack=stack: [
        mean_value(rows, quantity="grad_in", stack=stack, layer=1, sublayer="self_attn") /
        mean_value(rows, quantity="grad_out", stack=stack, layer=depth, sublayer="ffn")])[:, 0]
        for variant in ("post-LN", "pre-LN") for stack in ("encoder", "decoder")}
    checks = [Check("post-LN dec", ratios["post-LN", "decoder"], expect="E1.post_ln_decoder"),
              Check("pre-LN dec", ratios["pre-LN", "decoder"], expect="E1.pre_ln_decoder"),
              Check("post-LN enc", ratios["post-LN", "encoder"]),
              Check("pre-LN enc", ratios["pre-LN", "encoder"]),
              Check("post-LN dec, uncorrected", raw["post-LN", "decoder"])]
    checks += [Check(f"{variant} {stack[:3]}: ‖∂L/∂x‖ input / last output",
                     through[variant, stack])
               for variant in ("post-LN", "pre-LN") for stack in ("decoder", "encoder")]
    figure = plot_depth_profiles(
        panels, f"E1: expected ‖∂L/∂W2‖ by layer (bias-corrected), over layer 1's "
                f"({depth}+{depth} layers, init, {study.scale.probe_batches} batches)",
        ylabel="‖E ∂L/∂W2‖ / layer 1's",
        bounds={"decoder": bound_lines("E1.post_ln_decoder", "E1.pre_ln_decoder")})
    return Outcome("E1", "expected_gradient_by_layer", "Xiong et al. 2020, §3.4, Fig. 3(a,b)",
                   f"expected ‖∂L/∂W2‖ layer {depth} / layer 1 at init", checks,
                   study.all_rows(("post-LN", "pre-LN"), [depth]), figure)
