"""E0, the instruments checked where the theory is exact: the recorder's sizes on a model
built in Xiong et al. 2020's own setting (App. C's conditions: one head, uniform attention
W^Q = W^K = 0, d × d matrices W^V, W¹, W² with i.i.d. N(0, 1/d) entries, as Xavier gives for
d × d, no W^O (the identity here), zero biases, LayerNorm γ = 1, β = 0, d_ff = d), where
Lemma 1's ½·d, Lemma 2's 3/2·d and its pre-LN bounds are exact statements in expectation.
Judged at the study's seeds (10 or more), each seed's figure the mean over 8 weight draws
(the lemmas state expectations over the initialization), d_model four times the study's; a
miss is a bug in an instrument, not a finding."""

import numpy as np

from ...instruments.recorder import GradientFlowRecorder
from ...model import Transformer
from ..processes import map_runs
from ..toolkit import Check, Outcome, Study, TaskData, build_model, experiment, mean_value

STACKS = ("encoder", "decoder")


def xiong_model(data: TaskData, seed: int, depth: int, d_model: int,
                variant: str) -> Transformer:
    """A `variant` ("post-LN" or "pre-LN") Transformer of `depth` layers per stack in App. C's
    setting (the module's docstring), its weights drawn from `seed`."""
    model = build_model(data, seed, depth, d_model=d_model, n_heads=1, d_ff=d_model,
                        scheme_name=variant)
    rng = np.random.default_rng(seed)
    for name, param in model.named_parameters():
        if ".layers." not in name or "norm" in name:
            continue
        shape, dtype = param.data.shape, param.data.dtype
        if name.endswith("bias"):
            value = np.zeros(shape)
        elif "q_proj" in name or "k_proj" in name:
            value = np.zeros(shape)  # uniform attention
        elif "out_proj" in name:
            value = np.eye(shape[0])  # App. C has no W^O
        else:  # W^V, W¹, W²: N(0, 1/d)
            value = rng.normal(0.0, d_model ** -0.5, shape)
        param.data[...] = value.astype(dtype)
    return model


def measured(study: Study, variant: str, seed: int, d_model: int, draws: int,
             batches: int) -> list[dict]:
    """The recorder's size rows of `draws` App. C models `variant` (`d_model` wide, drawn
    from seed·1000 + 0, 1, ...), each from one forward pass with a graph on each of the first
    `batches` probe batches (sizes need no backward): a seed's figure is their mean, the
    expectation over initializations that the lemmas state taken over `draws` of them."""
    rows: list[dict] = []
    for draw in range(draws):
        model = xiong_model(study.data, seed * 1000 + draw, study.scale.depth, d_model, variant)
        with GradientFlowRecorder(model, f"{variant}, App. C") as recorder:
            for batch in study.probes[:batches]:
                model(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask)
        rows += [dict(row, seed=seed, draw=draw) for row in recorder.rows]
    return rows


@experiment(name="E0", title="the instruments in Xiong et al.'s setting",
            claim="Xiong et al. 2020, Lemma 1, Lemma 2, App. C: an instrument check")
def instruments_in_xiong_setting(study: Study) -> Outcome:
    """Post-LN: the FFN's output ‖x^{post,4}‖²/d = ½ (Lemma 1 as App. C applies it) and the
    LayerNorm input after the FFN ‖x^{post,5}‖²/d = 3/2 (Lemma 2), means over the layers of
    both stacks; pre-LN: the encoder's stream grows by between ½·d and 3/2·d a layer (Lemma 2's
    step) and its attention sub-layer adds at most d."""
    depth, seeds = study.scale.depth, list(range(study.scale.seeds))
    d_model = study.scale.get("xiong_d_model", 4 * study.scale.d_model)
    draws = study.scale.get("xiong_draws", 8)
    batches = study.scale.get("xiong_batches", 2)
    layers = list(range(1, depth + 1))
    post = list(map_runs(lambda seed: measured(study, "post-LN", seed, d_model, draws,
                                               batches), seeds, study.scale.processes))
    pre = list(map_runs(lambda seed: measured(study, "pre-LN", seed, d_model, draws, batches),
                        seeds, study.scale.processes))

    def per_layer_mean(rows: list[dict], quantity: str, sublayer: str) -> float:
        return float(np.mean([mean_value(rows, quantity=quantity, stack=stack, layer=layer,
                                         sublayer=sublayer)
                              for stack in STACKS for layer in layers]))

    def growth(rows: list[dict]) -> float:
        start = mean_value(rows, quantity="ln_input_sq_norm_per_dim", stack="encoder",
                           layer=1, sublayer="self_attn")
        end = mean_value(rows, quantity="stream_sq_norm_per_dim", stack="encoder",
                         layer=depth)
        return (end - start) / depth

    grown = [growth(rows) for rows in pre]
    checks = [
        Check("post-LN: ‖x^{post,4}‖²/d, the FFN's output (Lemma 1: 1/2)",
              [per_layer_mean(rows, "branch_sq_norm_per_dim", "ffn") for rows in post],
              expect="E0.lemma1_ffn"),
        Check("post-LN: ‖x^{post,5}‖²/d, the LayerNorm input after the FFN (Lemma 2: 3/2)",
              [per_layer_mean(rows, "ln_input_sq_norm_per_dim", "ffn") for rows in post],
              expect="E0.lemma2_post_ln"),
        Check("pre-LN encoder: growth per layer / d (lower, Lemma 2: 1/2)", grown,
              expect="E0.lemma2_pre_ln_low"),
        Check("pre-LN encoder: growth per layer / d (upper, Lemma 2: 3/2)", grown,
              expect="E0.lemma2_pre_ln_high"),
        Check("pre-LN encoder: attention's output ‖x^{pre,2}‖²/d (App. C: at most 1)",
              [float(np.mean([mean_value(rows, quantity="branch_sq_norm_per_dim",
                                         stack="encoder", layer=layer, sublayer="self_attn")
                              for layer in layers])) for rows in pre],
              expect="E0.attention_at_most_d"),
    ]
    rows = [dict(row, config=f"{variant}, App. C") for variant, found in
            (("post-LN", post), ("pre-LN", pre)) for seed_rows in found for row in seed_rows
            if row["quantity"] in ("branch_sq_norm_per_dim", "ln_input_sq_norm_per_dim",
                                   "stream_sq_norm_per_dim")]
    return Outcome("E0", "instruments_in_xiong_setting",
                   "Xiong et al. 2020, Lemma 1, Lemma 2, App. C",
                   f"the recorder's sizes in App. C's setting, {depth}+{depth} layers, d "
                   f"{d_model}", checks, rows, instrument=True)
