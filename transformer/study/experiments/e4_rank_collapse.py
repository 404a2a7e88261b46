"""E4: rank collapse (Dong et al. 2021). Self-attention-only stacks in float64: pure
attention, attention + skip, attention + LayerNorm (no FFN in any). The pure stack is carried
as each sequence's token mean and its residual (the rows minus that mean) apart, so that its
share is measured down to 1e-280, far below where x − x̄ rounds to nothing in one array
(about 1e-32): its per-layer rate of -log(token share) is judged where at least MIN_RATIOS
layer-to-layer ratios lie above the floor (else "not testable at this scale"). With a skip,
the per-layer growth of -log share over linear growth is judged on its median over layers.
Beside them the full model's arms at init: post-LN and pre-LN judged against the share their
identity path alone keeps (a prediction from each block's LayerNorm input and branch sizes,
which the recorder has), and the plain stack (no skip, no LayerNorm) under Xavier and under
gain-1 init (init against depth), reported."""

import math
from collections.abc import Sequence

import numpy as np

from ...instruments.plots import Series, plot_depth_profiles
from ...instruments.streams import layer_streams, lengths_of, token_share
from ..toolkit import Check, Outcome, Study, experiment, mean_value

FLOOR = 1e-24  # a share below this, computed as x − x̄ in one array, is float64 rounding
EXACT_FLOOR = 1e-280  # the same for the pure stack carried as mean and residual apart
MIN_RATIOS = 3  # a rate is judged on at least this many layer-to-layer ratios above the floor
ARMS = ("pure", "skip", "layernorm")


def attention_weights(d: int, depth: int, seed: int) -> list[tuple[np.ndarray, ...]]:
    """[(W_q, W_k, W_v, W_o) per layer]: Xavier-uniform d × d matrices drawn from `seed`."""
    rng = np.random.default_rng(seed)
    bound = math.sqrt(6.0 / (d + d))
    return [tuple(rng.uniform(-bound, bound, (d, d)) for _ in range(4)) for _ in range(depth)]


def attention_stack(x: np.ndarray, depth: int, n_heads: int, seed: int, arm: str,
                    lengths: Sequence[int] | np.ndarray) -> list[float]:
    """[token share of x_0, ..., x_depth] through `depth` self-attention layers in float64
    (the matrices of `attention_weights(d, depth, seed)`, keys masked past each sequence's
    length): x_{l+1} = SA(x_l) ("pure"), x_l + SA(x_l) ("skip") or LN(SA(x_l))
    ("layernorm")."""
    x = np.asarray(x, dtype=np.float64)
    batch, length, d = x.shape
    d_head = d // n_heads
    mask = np.arange(length)[None, :] < np.asarray(lengths)[:, None]  # (batch, keys)
    shares = [token_share(x, lengths)]
    for wq, wk, wv, wo in attention_weights(d, depth, seed):

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


def pure_attention_exact(x: np.ndarray, depth: int, n_heads: int, seed: int,
                         lengths: Sequence[int] | np.ndarray) -> list[float]:
    """The "pure" arm of `attention_stack` (the same matrices), each sequence X = 1·mᵀ + R
    carried as its token mean m and residual R apart, so that the share ‖R‖²/‖X‖² keeps its
    relative precision down to EXACT_FLOOR. Per head, with A = W_q·W_kᵀ/√d_head, the scores
    x_iᵀA x_j split into terms of the query alone (which the softmax drops), b_j = mᵀA r_j and
    S_ij = r_iᵀA r_j; with q = softmax(b) and E = expm1(S) the attention is
    P = 1·qᵀ + D, D_ij = q_j·(E_ij − Σ_k q_k E_ik)/(1 + Σ_k q_k E_ik), whose rows sum to 1
    (D's to 0), so P·X = 1·(m + Rᵀq)ᵀ + D·R: the mean and the residual of SA(X) follow from m
    and R without subtracting two nearly equal arrays. Returns [share of x_0, ..., x_depth],
    the mean over sequences."""
    x = np.asarray(x, dtype=np.float64)
    d = x.shape[-1]
    d_head = d // n_heads
    layers = attention_weights(d, depth, seed)
    per_sequence = []
    for sequence, length in zip(x, lengths):
        if int(length) < 2:  # no residual to measure (as token_share leaves it out)
            continue
        tokens = sequence[:int(length)]
        mean = tokens.mean(axis=0)
        residual = tokens - mean
        shares = [float(np.sum(residual ** 2) / np.sum(tokens ** 2))]
        for wq, wk, wv, wo in layers:
            next_mean, next_residual = np.zeros(d), np.zeros_like(residual)
            for head in range(n_heads):
                columns = slice(head * d_head, (head + 1) * d_head)
                a = wq[:, columns] @ wk[:, columns].T / math.sqrt(d_head)
                bias = residual @ (a.T @ mean)
                q = np.exp(bias - bias.max())
                q /= q.sum()
                e = np.expm1(residual @ a @ residual.T)
                qe = e @ q
                varying = q[None, :] * (e - qe[:, None]) / (1.0 + qe)[:, None]
                value_output = wv[:, columns] @ wo[columns, :]
                out = varying @ residual @ value_output
                out_mean = out.mean(axis=0)
                next_mean += (mean + q @ residual) @ value_output + out_mean
                next_residual += out - out_mean
            mean, residual = next_mean, next_residual
            power = float(np.sum(residual ** 2))
            shares.append(power / (len(residual) * float(np.sum(mean ** 2)) + power))
        per_sequence.append(shares)
    return [float(v) for v in np.mean(per_sequence, axis=0)]


def growth_ratios(shares: Sequence[float], floor: float = FLOOR) -> list[float]:
    """(-log s_{l+1}) / (-log s_l), s_l the share at layer l over layer 0's, over the layers
    whose share lies above `floor`."""
    logs = [-math.log(s / shares[0]) for s in shares[1:] if s > floor]
    return [b / a for a, b in zip(logs, logs[1:]) if a > 0]


def median_rate(shares: Sequence[float], floor: float = FLOOR) -> float:
    """The median of `growth_ratios`: 3 for Dong et al.'s cubic rate, 1 for no growth; NaN
    without a ratio."""
    ratios = growth_ratios(shares, floor)
    return float(np.median(ratios)) if ratios else math.nan


def too_few_ratios(table: Sequence[Sequence[float]] | np.ndarray,
                   floor: float = FLOOR) -> str | None:
    """None if every seed's row of shares (`table`) has MIN_RATIOS layer-to-layer ratios above
    `floor`, else the reason it is not testable at this scale."""
    fewest = min(len(growth_ratios(row, floor)) for row in table)
    if fewest >= MIN_RATIOS:
        return None
    return (f"{fewest} layer-to-layer ratio(s) above the float64 floor {floor:g}, "
            f"{MIN_RATIOS} needed")


def identity_path_share(rows: list[dict], variant: str, depth: int) -> float:
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


def layer_excesses(shares: Sequence[float]) -> list[float]:
    """Per layer l >= 2: (-log s_l)/(-log s_{l-1}) × (l-1)/l, s_l the share at layer l over
    layer 0's above FLOOR: 1 where -log s grows linearly, more where faster."""
    logs = [-math.log(s / shares[0]) for s in shares[1:] if s > FLOOR]
    return [logs[i] / logs[i - 1] * i / (i + 1) for i in range(1, len(logs))
            if logs[i - 1] > 0]


def linear_excess(shares: Sequence[float]) -> float:
    """The median over layers of `layer_excesses`: at most the bound where most layers grow
    -log s at most linearly. (The largest one, judged before, follows one layer: a first
    layer that barely moves the share makes the second's ratio large whatever the depth does,
    as the crafted records of tests/study/test_experiments.py show.)"""
    found = layer_excesses(shares)
    return float(np.median(found)) if found else math.nan


@experiment(name="E4", title="rank collapse of pure attention",
            claim="Dong et al. 2021, abstract and §1")
def rank_collapse(study: Study) -> Outcome:
    """Without skips the token share falls doubly exponentially (successive -log shares in a
    ratio near Dong et al.'s cubic rate, well above 1); with a skip the share at the last layer
    stays above a floor. The median growth of -log share over linear growth is reported."""
    depth, scale = study.scale.deep, study.scale
    study.measure(("post-LN", "pre-LN"), [depth])
    study.measure(("plain",), [depth], inits=("xavier", "gain-1"))
    batch, pad = study.probes[0], study.data.vocab.pad_id
    lengths = lengths_of(batch.src, pad)
    embedded = layer_streams(study.model("post-LN", depth, 0), batch)["encoder"][0]
    layers = list(range(depth + 1))
    shares = {arm: np.array([attention_stack(embedded, depth, scale.n_heads, seed, arm,
                                             lengths) for seed in range(scale.seeds)])
              for arm in ARMS}
    one_array = [sum(s > FLOOR for s in row[1:]) for row in shares["pure"]]
    shares["pure"] = np.array([pure_attention_exact(embedded, depth, scale.n_heads, seed,
                                                    lengths) for seed in range(scale.seeds)])
    above = [sum(s > EXACT_FLOOR for s in row[1:]) for row in shares["pure"]]
    checks = [Check("pure attention: median ratio of successive -log share",
                    [median_rate(row, EXACT_FLOOR) for row in shares["pure"]],
                    expect="E4.pure_rate",
                    untestable=too_few_ratios(shares["pure"], EXACT_FLOOR)),
              Check(f"pure attention: layers above {EXACT_FLOOR:g} (mean and residual apart)",
                    above),
              Check(f"pure attention: layers above {FLOOR:g} (one array)", one_array),
              Check(f"attention + skip: token share layer {depth}/0",
                    shares["skip"][:, -1] / shares["skip"][:, 0], expect="E4.skip_floor"),
              Check("attention + skip: growth of -log share over linear, median over layers",
                    [linear_excess(row) for row in shares["skip"]]),
              Check(f"attention + LayerNorm: share at layer {depth}", shares["layernorm"][:, -1])]
    model_shares: dict[str, Series] = {}
    rows: list[dict] = []
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
                                kept / predicted))
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
    return Outcome("E4", "rank_collapse", "Dong et al. 2021, abstract and §1",
                   f"token share through {depth} layers", checks, rows, figure,
                   [NOTE])


NOTE = ("the model's arms are reported: their share over the identity path's own (this "
        "study's derivation, at least 1 where x and the branch are uncorrelated at init) is not "
        "Dong et al.'s claim")
