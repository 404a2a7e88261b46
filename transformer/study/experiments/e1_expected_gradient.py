"""E1: the expected gradient of the FFN's W2 by layer at init (Xiong et al. 2020; Liu et al.
2020 for the encoder), bias-corrected for the finite number of probe batches; and the gradient
‖∂L/∂x‖ through each stack, from its last layer's output to its input (Liu et al. 2020: the
post-LN decoder's attenuation)."""

import numpy as np

from ...instruments.plots import Panels, plot_depth_profiles
from ..toolkit import Check, Outcome, bound_lines, experiment, ffn_w2, mean_value


@experiment(name="E1", title="expected gradient by layer",
            claim="Xiong et al. 2020 (abstract); Liu et al. 2020 (abstract, §1)")
def expected_gradient_by_layer(study):
    """At init the expected ‖∂L/∂W2‖ grows towards the output of a post-LN decoder, not of a
    pre-LN one; the post-LN encoder neither vanishes nor grows. ‖ḡ‖ over K batches is biased
    up by σ²/K: the corrected `grad_mean_norm_unbiased` is judged (the raw one reported)."""
    depth, layers = study.scale.depth, list(range(1, study.scale.depth + 1))
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
              Check("post-LN enc", ratios["post-LN", "encoder"], expect="E1.post_ln_encoder"),
              Check("pre-LN enc", ratios["pre-LN", "encoder"]),
              Check("post-LN dec, uncorrected", raw["post-LN", "decoder"]),
              Check("post-LN dec: ‖∂L/∂x‖ input / last output", through["post-LN", "decoder"],
                    expect="E1.post_ln_decoder_attenuation")]
    checks += [Check(f"{variant} {stack[:3]}: ‖∂L/∂x‖ input / last output",
                     through[variant, stack])
               for variant, stack in (("pre-LN", "decoder"), ("post-LN", "encoder"),
                                      ("pre-LN", "encoder"))]
    figure = plot_depth_profiles(
        panels, f"E1: expected ‖∂L/∂W2‖ by layer (bias-corrected), over layer 1's "
                f"({depth}+{depth} layers, init, {study.scale.probe_batches} batches)",
        ylabel="‖E ∂L/∂W2‖ / layer 1's",
        bounds={"decoder": bound_lines("E1.post_ln_decoder", "E1.pre_ln_decoder"),
                "encoder": bound_lines("E1.post_ln_encoder")})
    return Outcome("E1", "expected_gradient_by_layer", "Xiong et al. 2020; Liu et al. 2020",
                   f"expected ‖∂L/∂W2‖ layer {depth} / layer 1 at init", checks,
                   study.all_rows(("post-LN", "pre-LN"), [depth]), figure)
