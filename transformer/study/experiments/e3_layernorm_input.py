"""E3: Xiong et al. 2020's Lemma 2 at init, with this model's bounds derived from its proof
(App. C; expectations.ffn_gain and expectations.pre_ln_growth_bounds): post-LN, the
LayerNorm input after the FFN is (1 + c)·d; pre-LN, each encoder layer grows the stream by
between c·d and (1 + c)·d, each decoder layer (this study's derivation: a second attention
sub-layer) by between c·d and (2 + c)·d; and the embedding's positions-to-tokens power (the
confound the scaled-embedding init removes), reported."""

import numpy as np

import minigrad as mg

from ...data.batching import Batch
from ...instruments.plots import Series, plot_depth_profiles
from ...model import Transformer
from ..expectations import ffn_gain, pre_ln_growth_bounds
from ..toolkit import Check, Outcome, Study, bound_lines, experiment, mean_value


def embedding_powers(model: Transformer, batch: Batch, pad_id: int) -> tuple[float, float]:
    """(positions, tokens): ‖·‖²/d_model of the encoder's positional vectors and of its token
    embeddings × √d_model, over the batch's tokens that are not padding."""
    stack = model.encoder
    with mg.no_grad():
        tokens = (stack.embedding(batch.src) * stack.scale).numpy()
        positions = stack.embed(batch.src).numpy() - tokens
    real = batch.src.numpy() != pad_id
    return float(np.mean(positions[real] ** 2)), float(np.mean(tokens[real] ** 2))


def mean_growth(stream: np.ndarray) -> np.ndarray:
    """Per seed, (‖x_L‖² − ‖x_0‖²)/(L·d): the mean growth per layer of a stream's power per
    dimension, `stream` (seeds, L + 1) from x_0 (the embedding) to x_L."""
    return (stream[:, -1] - stream[:, 0]) / (stream.shape[1] - 1)


@experiment(name="E3", title="LayerNorm input and stream growth",
            claim="Xiong et al. 2020, Lemma 2 and App. C")
def layernorm_input_and_stream(study: Study) -> Outcome:
    """Post-LN: E‖x^{post,5}‖² = (1 + c)·d; pre-LN: the mean growth per layer against both
    bounds of each stack (c = ffn_gain: ½ under the paper's d × d matrices)."""
    scale, depth = study.scale, study.scale.depth
    study.measure(("post-LN", "pre-LN"), [depth])
    c = ffn_gain(scale.d_model, scale.d_ff)
    layers, with_input = list(range(1, depth + 1)), list(range(0, depth + 1))
    post, pre = {}, {}
    for stack in ("encoder", "decoder"):
        post[stack] = study.values("post-LN", depth, lambda rows, stack=stack: [
            mean_value(rows, quantity="ln_input_sq_norm_per_dim", stack=stack, layer=layer,
                       sublayer="ffn") for layer in layers])
        pre[stack] = study.values("pre-LN", depth, lambda rows, stack=stack: [
            mean_value(rows, quantity="ln_input_sq_norm_per_dim", stack=stack, layer=1,
                       sublayer="self_attn")] + [
            mean_value(rows, quantity="stream_sq_norm_per_dim", stack=stack, layer=layer)
            for layer in layers])
    post_mean = np.mean([post["encoder"], post["decoder"]], axis=(0, 2)) / (1 + c)
    powers = [embedding_powers(study.model(variant, depth, seed, init),
                               study.probes[0], study.data.vocab.pad_id)
              for variant, init in (("post-LN", "xavier"), ("post-LN", "scaled-embedding"))
              for seed in range(scale.seeds)]
    seeds = scale.seeds
    checks = [Check(f"post-LN FFN LN input / (1+c)d (1+c = {1 + c:.3g})", post_mean,
                    expect="E3.post_ln_input")]
    for stack in ("encoder", "decoder"):
        low, high = pre_ln_growth_bounds(stack, c)
        growth = mean_growth(pre[stack])
        checks += [Check(f"pre-LN growth per layer / {low:.3g}, {stack[:3]} (lower)",
                         growth / low, expect=f"E3.pre_ln_growth_{stack}_low"),
                   Check(f"pre-LN growth per layer / {high:.3g}, {stack[:3]} (upper)",
                         growth / high, expect=f"E3.pre_ln_growth_{stack}_high")]
    checks += [Check("positions / tokens power, xavier",
                     [pos / tok for pos, tok in powers[:seeds]]),
               Check("positions / tokens power, scaled-embedding",
                     [pos / tok for pos, tok in powers[seeds:]])]
    theory: dict[str, Series] = {}
    for stack in ("encoder", "decoder"):
        start = pre[stack][:, 0].mean()
        for side, bound in zip(("low", "high"), pre_ln_growth_bounds(stack, c)):
            theory[f"{stack[:3]} {side}: x_0 + {bound:.3g}·l"] = \
                (with_input, [start + bound * layer for layer in with_input])
    figure = plot_depth_profiles(
        {"post-LN: LayerNorm input after the FFN": {s: (layers, post[s]) for s in post},
         "pre-LN: the stream x_l (l = 0: embedding)": {s: (with_input, pre[s]) for s in pre}},
        "E3: ‖x‖²/d_model at init: a LayerNorm's input (post-LN), the stream (pre-LN)",
        ylabel="‖x‖² / d_model (mean over tokens)", log_y=False,
        bounds={"post-LN: LayerNorm input after the FFN": bound_lines("E3.post_ln_input",
                                                                      factor=1 + c)},
        theory={"pre-LN: the stream x_l (l = 0: embedding)": theory})
    rows = study.all_rows(("post-LN", "pre-LN"), [depth])
    notes = [f"c = {c:.3g} for d_model {scale.d_model}, d_ff {scale.d_ff}; V = "
             f"{len(study.data.vocab)}"]
    return Outcome("E3", "layernorm_input_and_stream", "Xiong et al. 2020, Lemma 2, App. C",
                   "‖x‖²/d at init: post-LN LayerNorm input, pre-LN stream growth per layer",
                   checks, rows, figure, notes)
