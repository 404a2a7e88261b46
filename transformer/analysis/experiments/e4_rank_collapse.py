"""E4: rank collapse (Dong et al. 2021). Self-attention-only stacks in float64: pure
attention, attention + skip, attention + LayerNorm (no FFN in any), the per-layer rate of
-log(token share) judged where at least MIN_RATIOS layer-to-layer ratios lie above the float64
floor (else "not testable at this scale"); beside them the full model's arms at init: post-LN
and pre-LN judged against the share their identity path alone keeps (a prediction from each
block's LayerNorm input and branch sizes, which the recorder has), and the plain stack (no
skip, no LayerNorm) under Xavier and under gain-1 init (init against depth), reported."""

import math

import numpy as np

from ..plots import plot_depth_profiles
from ..streams import layer_streams, lengths_of, token_share
from ..study import Check, Outcome, experiment, mean_value

FLOOR = 1e-24  # a token share below this is float64 rounding, not the stack: not used
MIN_RATIOS = 3  # a rate is judged on at least this many layer-to-layer ratios above FLOOR
ARMS = ("pure", "skip", "layernorm")


def attention_stack(x, depth, n_heads, seed, arm, lengths):
    """[token share of x_0, ..., x_depth] through `depth` self-attention layers in float64
    (Xavier-uniform query, key, value and output matrices drawn from `seed`, keys masked past
    each sequence's length): x_{l+1} = SA(x_l) ("pure"), x_l + SA(x_l) ("skip") or
    LN(SA(x_l)) ("layernorm")."""
    rng = np.random.default_rng(seed)
    x = np.asarray(x, dtype=np.float64)
    batch, length, d = x.shape
    d_head = d // n_heads
    mask = np.arange(length)[None, :] < np.asarray(lengths)[:, None]  # (batch, keys)
    bound = math.sqrt(6.0 / (d + d))
    shares = [token_share(x, lengths)]
    for _ in range(depth):
        wq, wk, wv, wo = (rng.uniform(-bound, bound, (d, d)) for _ in range(4))

        def heads(m, x=x):
            return (x @ m).reshape(batch, length, n_heads, d_head).transpose(0, 2, 1, 3)

        scores = heads(wq) @ heads(wk).transpose(0, 1, 3, 2) / math.sqrt(d_head)
        scores = np.where(mask[:, None, None, :], scores, -np.inf)
        weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
        weights /= weights.sum(axis=-1, keepdims=True)
        out = (weights @ heads(wv)).transpose(0, 2, 1, 3).reshape(batch, length, d) @ wo
        if arm == "pure":
            x = out
        elif arm == "skip":
            x = x + out
        else:
            centred = out - out.mean(axis=-1, keepdims=True)
            x = centred / np.sqrt((centred ** 2).mean(axis=-1, keepdims=True) + 1e-12)
        shares.append(token_share(x, lengths))
    return shares


def growth_ratios(shares):
    """(-log s_{l+1}) / (-log s_l) over the layers whose share lies above FLOOR and below 1."""
    logs = [-math.log(s / shares[0]) for s in shares[1:] if s > FLOOR]
    return [b / a for a, b in zip(logs, logs[1:]) if a > 0]


def too_few_ratios(table):
    """None if every seed's row of shares (`table`) has MIN_RATIOS layer-to-layer ratios above
    FLOOR, else the reason it is not testable at this scale."""
    fewest = min(len(growth_ratios(row)) for row in table)
    if fewest >= MIN_RATIOS:
        return None
    return (f"{fewest} layer-to-layer ratio(s) above the float64 floor {FLOOR:g}, "
            f"{MIN_RATIOS} needed")


def identity_path_share(rows, variant, depth):
    """The token share of layer `depth` over layer 0's that the identity path alone keeps:
    the product over the encoder's blocks of ‖x‖²/‖x + branch‖², from the first probe batch's
    rows, with x and the branch uncorrelated at init: 1 − branch/LN input post-LN (the sum is
    the LayerNorm's input), LN input/(LN input + branch) pre-LN (the stream x is). The branches'
    own between-token power can only add to it: the measured share lies at or above it."""
    product = 1.0
    for layer in range(1, depth + 1):
        for sublayer in ("self_attn", "ffn"):
            ln_input, branch = (mean_value(rows, quantity=quantity, stack="encoder",
                                           layer=layer, sublayer=sublayer, step=1)
                                for quantity in ("ln_input_sq_norm_per_dim",
                                                 "branch_sq_norm_per_dim"))
            product *= 1 - branch / ln_input if variant == "post-LN" else \
                ln_input / (ln_input + branch)
    return product


def linear_excess(shares):
    """max over l >= 2 of (-log s_l)/(-log s_{l-1}) × (l-1)/l: 1 for linear growth of -log s,
    more for faster growth."""
    logs = [-math.log(s / shares[0]) for s in shares[1:] if s > FLOOR]
    found = [logs[i] / logs[i - 1] * i / (i + 1) for i in range(1, len(logs))
             if logs[i - 1] > 0]
    return max(found) if found else math.nan


@experiment(name="E4", title="rank collapse of pure attention", claim="Dong et al. 2021")
def rank_collapse(study):
    """Without skips the token share falls doubly exponentially (the ratio of successive
    -log shares stays above 1); with a skip -log share grows at most linearly."""
    depth, scale = study.scale.deep, study.scale
    batch, pad = study.probes[0], study.data.vocab.pad_id
    lengths = lengths_of(batch.src, pad)
    embedded = layer_streams(study.model("post-LN", depth, 0), batch)["encoder"][0]
    layers = list(range(depth + 1))
    shares = {arm: np.array([attention_stack(embedded, depth, scale.n_heads, seed, arm,
                                             lengths) for seed in range(scale.seeds)])
              for arm in ARMS}
    pure_rates = [float(np.mean(growth_ratios(row))) if growth_ratios(row) else math.nan
                  for row in shares["pure"]]
    above = [sum(s > FLOOR for s in row[1:]) for row in shares["pure"]]
    checks = [Check("pure attention: mean ratio of successive -log share", pure_rates,
                    expect="E4.pure_rate", untestable=too_few_ratios(shares["pure"])),
              Check("pure attention: layers above the float64 floor", above),
              Check("attention + skip: growth of -log share over linear",
                    [linear_excess(row) for row in shares["skip"]], expect="E4.skip_rate",
                    untestable=too_few_ratios(shares["skip"])),
              Check(f"attention + LayerNorm: share at layer {depth}", shares["layernorm"][:, -1])]
    model_shares, rows = {}, []
    for variant, init in (("post-LN", "xavier"), ("pre-LN", "xavier"), ("plain", "xavier"),
                          ("plain", "gain-1")):
        per_seed = np.array([[token_share(x, lengths) for x in
                              layer_streams(study.model(variant, depth, seed, init),
                                            batch)["encoder"]]
                             for seed in range(scale.seeds)])
        label = variant if init == "xavier" else f"{variant}, {init}"
        model_shares[label] = (layers, per_seed / per_seed[:, :1])
        kept = per_seed[:, -1] / per_seed[:, 0]
        checks.append(Check(f"{label}: token share layer {depth}/0", kept))
        if variant in ("post-LN", "pre-LN"):
            predicted = np.array([identity_path_share(study.rows(variant, depth, seed),
                                                      variant, depth)
                                  for seed in range(scale.seeds)])
            checks.append(Check(f"{label}: share layer {depth}/0 over the identity path's",
                                kept / predicted, expect=f"E4.{variant[:-3].lower()}_ln_path"))
        rows += [{"config": label, "seed": seed, "stack": "encoder", "layer": layer,
                  "quantity": "token_share", "value": value}
                 for seed, row in enumerate(per_seed) for layer, value in enumerate(row)]
    for init in ("xavier", "gain-1"):
        grad_in = study.values("plain", depth, lambda rows: [
            mean_value(rows, quantity="grad_in", stack="encoder", layer=layer,
                       sublayer="self_attn") for layer in (1, depth)], init=init)
        checks.append(Check(f"plain, {init}: ‖∂L/∂x‖ layer 1/{depth}",
                            grad_in[:, 0] / grad_in[:, 1]))
    rows += [{"config": f"attention only, {arm}", "seed": seed, "stack": "encoder",
              "layer": layer, "quantity": "token_share", "value": value}
             for arm in ARMS for seed, row in enumerate(shares[arm])
             for layer, value in enumerate(row)]
    figure = plot_depth_profiles(
        {"attention only (float64)": {arm: (layers, np.maximum(shares[arm], 1e-300))
                                      for arm in ARMS},
         "the model's encoder (init)": model_shares},
        f"E4: token share of the stream, {depth} layers", ylabel="token share",
        sharey=False)
    return Outcome("E4", "rank_collapse", "Dong et al. 2021",
                   f"token share through {depth} layers", checks, rows, figure,
                   [NOTE])


NOTE = ("post-LN's share falls far below pre-LN's: the LayerNorm after each sum divides the "
        "identity path by the sum's size, the finding Noci et al. 2022 (Fig. 1) and Shi et al. "
        "2022 (abstract) report (transformer/analysis/expectations.py); judged against the "
        "identity path's own share, not against Dong et al.")
