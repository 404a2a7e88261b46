"""E3: the post-LN LayerNorm input and the pre-LN stream's growth at init, against both
bounds of the pre-LN lemma (Xiong et al. 2020), and the embedding's positions-to-tokens
power (the confound the scaled-embedding init removes)."""

import numpy as np

import minigrad as mg

from ...instruments.plots import plot_depth_profiles
from ..expectations import expectation
from ..toolkit import Check, Outcome, bound_lines, experiment, ffn_gain, mean_value


def embedding_powers(model, batch, pad_id):
    """(positions, tokens): ‖·‖²/d_model of the encoder's positional vectors and of its token
    embeddings × √d_model, over the batch's tokens that are not padding."""
    stack = model.encoder
    with mg.no_grad():
        tokens = (stack.embedding(batch.src) * stack.scale).numpy()
        positions = stack.embed(batch.src).numpy() - tokens
    real = batch.src.numpy() != pad_id
    return float(np.mean(positions[real] ** 2)), float(np.mean(tokens[real] ** 2))


@experiment(name="E3", title="LayerNorm input and stream growth", claim="Xiong et al. 2020")
def layernorm_input_and_stream(study):
    """Post-LN: E‖x + FFN(x)‖² = (1 + c)·d; pre-LN: the stream grows by between c·d and 3c·d
    per layer (c = `ffn_gain`: ½ under Xiong et al.'s init). The growth is judged as a
    multiple of c against both bounds."""
    scale, depth = study.scale, study.scale.depth
    c = ffn_gain(scale.d_model, scale.d_ff)
    layers, with_input = list(range(1, depth + 1)), list(range(0, depth + 1))
    post, pre, growth = {}, {}, {}
    for stack in ("encoder", "decoder"):
        post[stack] = study.values("post-LN", depth, lambda rows, stack=stack: [
            mean_value(rows, quantity="ln_input_sq_norm_per_dim", stack=stack, layer=layer,
                       sublayer="ffn") for layer in layers])
        pre[stack] = study.values("pre-LN", depth, lambda rows, stack=stack: [
            mean_value(rows, quantity="ln_input_sq_norm_per_dim", stack=stack, layer=1,
                       sublayer="self_attn")] + [
            mean_value(rows, quantity="stream_sq_norm_per_dim", stack=stack, layer=layer)
            for layer in layers])
        growth[stack] = np.array([np.polyfit(with_input, row, 1)[0] for row in pre[stack]])
    post_mean = np.mean([post["encoder"], post["decoder"]], axis=(0, 2)) / (1 + c)
    powers = [embedding_powers(study.model(variant, depth, seed, init),
                               study.probes[0], study.data.vocab.pad_id)
              for variant, init in (("post-LN", "xavier"), ("post-LN", "scaled-embedding"))
              for seed in range(scale.seeds)]
    seeds = scale.seeds
    checks = [Check(f"post-LN FFN LN input / (1+c)d (1+c = {1 + c:.3g})", post_mean,
                    expect="E3.post_ln_input")]
    for stack in ("encoder", "decoder"):
        checks += [Check(f"pre-LN growth / c, {stack[:3]} (lower)", growth[stack] / c,
                         expect="E3.pre_ln_growth_low"),
                   Check(f"pre-LN growth / c, {stack[:3]} (upper)", growth[stack] / c,
                         expect="E3.pre_ln_growth_high")]
    checks += [Check("positions / tokens power, xavier",
                     [pos / tok for pos, tok in powers[:seeds]]),
               Check("positions / tokens power, scaled-embedding",
                     [pos / tok for pos, tok in powers[seeds:]])]
    start = np.mean([pre[s][:, 0].mean() for s in pre])
    figure = plot_depth_profiles(
        {"post-LN: LayerNorm input after the FFN": {s: (layers, post[s]) for s in post},
         "pre-LN: the stream x_l (l = 0: embedding)": {s: (with_input, pre[s]) for s in pre}},
        "E3: ‖x‖²/d_model at init: a LayerNorm's input (post-LN), the stream (pre-LN)",
        ylabel="‖x‖² / d_model (mean over tokens)", log_y=False,
        bounds={"post-LN: LayerNorm input after the FFN": bound_lines("E3.post_ln_input",
                                                                      factor=1 + c)},
        theory={"pre-LN: the stream x_l (l = 0: embedding)": {
            f"bounds x_0 + {factor:g}c·l": (with_input, [start + factor * c * layer
                                                         for layer in with_input])
            for factor in (expectation("E3.pre_ln_growth_low").bound("low"),
                           expectation("E3.pre_ln_growth_high").bound("high"))}})
    rows = study.all_rows(("post-LN", "pre-LN"), [depth])
    notes = [f"c = {c:.3g} for d_model {scale.d_model}, d_ff {scale.d_ff}; V = "
             f"{len(study.data.vocab)}"]
    return Outcome("E3", "layernorm_input_and_stream", "Xiong et al. 2020",
                   "‖x‖²/d at init: post-LN LayerNorm input, pre-LN stream growth", checks,
                   rows, figure, notes)
