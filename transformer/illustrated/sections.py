"""The numbers of the walkthrough's nine sections. Each `section_N_*` function runs the
subject's model, checks what it explains (asserting that a hand computation equals the
module's), draws its figures, and returns a `Section`: the values the template's section N
names (Markdown text: numbers, tables, figure file names, short phrases) and the figures it
wrote."""

import math
from dataclasses import dataclass, field

import numpy as np

import minigrad as mg
from minigrad.nn import functional as F

from ..instruments.recorder import GradientFlowRecorder, select
from ..positional import sinusoidal_encoding
from . import figures, probes
from . import markdown as md
from .markdown import SHOWN_DIMS
from .steps import (
    attention_batched,
    attention_step_by_step,
    check_step_by_step,
    projection_weights,
)

# The sentences of the two articles (all three are in the toy grammar's training split).
BALL = "the ball is blue"
CAT = "the black cat drank the milk"
ANIMAL = "the animal didn't cross the street because it was too tired"
# Section 3's two-word input: the article's, or the first pair the vocabulary knows.
TWO_WORD_CANDIDATES = ("thinking machines", "black cat", "the cat", "blue ball")
RANKED = ("drank", "cat", "black")  # section 6: how "milk" should rank its attention
PE_POSITIONS = 20  # section 7: rows of the heat maps
PE_OFFSETS = 60  # section 7: offsets k of PE[pos]·PE[pos+k]
PE_STARTS = (0, 7, 30)  # section 7: positions where PE[pos]·PE[pos+k] is measured
PE_SHOWN_OFFSETS = (0, 1, 2, 5, 10, 20, 40)  # section 7: the offsets in the table
MAX_STEPS_SHOWN = 12  # section 9: decoding steps in the table and the figure
SUBLAYERS = {"self_attn": "self-attention", "cross_attn": "encoder-decoder attention",
             "ffn": "feed-forward network"}
GRADIENTS = ("grad_out", "grad_skip", "grad_branch", "grad_in")  # section 8, as recorded


@dataclass
class Section:
    """What one section function computed: the values its part of the template names, and the
    figure files it wrote."""

    fields: dict
    figures: list = field(default_factory=list)


# ----- section 1 ----------------------------------------------------------------------------------
def section_1_stacks(subject) -> Section:
    """The model as a black box (a sentence in, a sentence out), then its stacks layer by layer
    with parameter counts."""
    config, tokens = subject.model.config, subject.tokens(BALL)
    return Section({
        "sentence": md.code(BALL), "translation": md.code(probes.translation(subject, tokens)),
        "encoder_layers": config.n_encoder_layers, "decoder_layers": config.n_decoder_layers,
        "d_model": config.d_model, "heads": config.n_heads, "d_k": config.d_head,
        "d_ff": config.d_ff, "vocabulary_size": len(subject.vocab),
        "layer_norm": "pre-LN" if config.norm_first else "post-LN (as the paper)",
        "residual": config.residual, "positional": config.positional,
        "parameter_table": _parameter_table(subject.model),
        "unknown_words": subject.unknown_words(tokens)})


def _parameter_table(model):
    """Every part of the model with its parameter count, and the total (asserted to be the
    model's)."""
    shared = model.decoder.embedding.weight is model.encoder.embedding.weight
    rows = [("encoder", "embedding", "token vectors (vocabulary × d_model)",
             model.encoder.embedding.num_parameters())]
    rows += _stack_rows(model.encoder, "encoder", shared)
    rows += _stack_rows(model.decoder, "decoder", shared)
    generator = model.generator.num_parameters() - (
        model.generator.weight.size if model.generator.weight is model.encoder.embedding.weight
        else 0)
    rows.append(("output", "final linear", "to one score per vocabulary word" + (
        " (weights shared with the embedding; bias only)" if shared else ""), generator))
    total = model.num_parameters()
    assert sum(r[3] for r in rows) == total, "parameter table does not add up to the model's"
    return md.table(["stack", "part", "what it is", "parameters"],
                    [(a, b, c, f"{d:,}") for a, b, c, d in rows] +
                    [("**total**", "", "", f"**{total:,}**")])


def _stack_rows(module, stack, shared):
    """(stack, part, what it is, parameters) of one stack's parts after the encoder's
    embedding: the decoder's embedding, learned positions, each sublayer, a final norm."""
    rows = []
    if stack == "decoder":
        rows.append(("decoder", "embedding", "token vectors" + (
            " (the encoder's matrix, shared)" if shared else ""),
            0 if shared else module.embedding.num_parameters()))
    positions = module.positional.num_parameters()
    if positions:
        rows.append((stack, "positions", "learned position vectors (max_len × d_model)",
                     positions))
    for number, layer in enumerate(module.layers, start=1):
        for name in SUBLAYERS:
            if hasattr(layer, name):
                block = getattr(layer, name)
                what = "masked self-attention" if (stack, name) == ("decoder", "self_attn") \
                    else SUBLAYERS[name]
                norm = "" if block.residual == "rezero" else " + LayerNorm"
                rows.append((stack, f"layer {number}", f"{what}{norm} (`{name}`)",
                             block.num_parameters()))
    if module.final_norm is not None:
        rows.append((stack, "final", "LayerNorm (pre-LN)", module.final_norm.num_parameters()))
    return rows


# ----- section 2 ----------------------------------------------------------------------------------
def section_2_embeddings(subject) -> Section:
    """Token ids, embedding rows scaled by sqrt(d_model), positions added: the list of vectors
    that enters the first encoder layer (checked against the model's own `embed`)."""
    model = subject.model
    d_model = model.config.d_model
    tokens = subject.tokens(BALL)
    ids = subject.ids(tokens)
    table = model.encoder.embedding.weight.numpy()
    rows = table[ids.numpy()[0]]  # (len, d_model)
    scaled = rows * math.sqrt(d_model)
    positions = model.encoder.positional.table.numpy()[:len(tokens)]
    x = scaled + positions
    with mg.no_grad():
        model_x = model.encoder.embed(ids).numpy()[0]
    np.testing.assert_allclose(x, model_x, rtol=1e-5, atol=1e-5,
                               err_msg="section 2: embedding × sqrt(d_model) + positions "
                                       "differs from the model's Encoder.embed")
    norm = np.linalg.norm
    vectors = md.table(
        ["token", "id", "embedding row (first 6)", "‖row‖", "‖row·√d‖", "‖PE‖", "‖input‖"],
        [(md.code(t), i, md.vector(e, 6), md.number(norm(e), 2), md.number(norm(s), 2),
          md.number(norm(p), 2), md.number(norm(v), 2))
         for t, i, e, s, p, v in zip(tokens, ids.numpy()[0], rows, scaled, positions, x)])
    figure = figures.word_vectors(subject, tokens, scaled, positions, x)
    return Section({"d_model": d_model, "table_rows": table.shape[0],
                    "table_columns": table.shape[1], "sqrt_d_model": f"{math.sqrt(d_model):.2f}",
                    "length": len(tokens), "vector_table": vectors, "figure": figure,
                    "unknown_words": subject.unknown_words(tokens)}, [figure])


# ----- section 3: the six steps, and the check ----------------------------------------------------
def two_word_input(vocab) -> list[str]:
    """Section 3's input: the article's "thinking machines" if this vocabulary has both words,
    otherwise the first candidate pair it knows (or the first two words of its vocabulary)."""
    for candidate in TWO_WORD_CANDIDATES:
        words = candidate.split()
        if not vocab.unknown(words):
            return words
    return [t for t in vocab.tokens if not t.startswith("<")][:2]


def section_3_six_steps(subject) -> Section:
    """Self-attention of a two-word input in six steps for the first head, then checked
    (asserted) against the batched MultiHeadAttention for every head."""
    words = two_word_input(subject.vocab)
    block, x, branch = probes.first_attention(subject, words)
    attention = block.sublayer
    steps, batched = attention_step_by_step(attention, x), attention_batched(attention, x)
    differences = check_step_by_step(steps, batched)
    residual = block.residual != "rezero"  # the block's branch is F(x) itself (dropout is off)
    if residual:
        np.testing.assert_allclose(batched["output"], branch,
                                   rtol=1e-4, atol=1e-5,
                                   err_msg="section 3: the module called alone differs from "
                                           "its call inside the encoder")
    d_k = attention.d_head
    return Section({
        "which_words": ("this vocabulary has those words too, so we take"
                        if " ".join(words) == TWO_WORD_CANDIDATES[0] else
                        "this model's vocabulary does not have those words, so we take"),
        "words": " ".join(md.code(w) for w in words), "d_model": attention.d_model,
        "sublayer_input": "LN(x), the block's normalized input (pre-LN)"
        if block.norm_first and residual else "x, the embedded words themselves",
        "heads": attention.n_heads, "d_k": d_k,
        "shown_dims": f" (the first {SHOWN_DIMS} shown)" if d_k > SHOWN_DIMS else "",
        "qkv_table": _qkv_table(steps, words), "score_table": _score_table(steps, words, d_k),
        "weighted_table": _weighted_table(steps, words),
        **{f"{name}_difference": f"{value:.1e}" for name, value in differences.items()},
        "inside_encoder": "; the output also equals what this sublayer produced inside the "
                          "encoder's own forward pass" if residual else ""})


def _head_dims(steps):
    """The column headers of head 1's vectors: the first SHOWN_DIMS dimensions (and … )."""
    d_k = steps["q"].shape[-1]
    return [f"{i}" for i in range(min(d_k, SHOWN_DIMS))] + (["…"] if d_k > SHOWN_DIMS else [])


def _head_row(label, values, bold=False):
    cells = [md.number(v) for v in values[:SHOWN_DIMS]]
    cells = [f"**{cell}**" for cell in cells] if bold else cells
    return (label, *cells, *(["…"] if len(values) > SHOWN_DIMS else []))


def _qkv_table(steps, words):
    """Step 1: head 1's q, k and v of each word."""
    return md.table(["vector", *_head_dims(steps)],
                    [_head_row(f"{name}{i + 1} ({md.code(w)})", steps[name][0, i])
                     for name in "qkv" for i, w in enumerate(words)])


def _score_table(steps, words, d_k):
    """Steps 2-4: head 1's score, scaled score and weight of every pair of words."""
    rows = [(f"q{i + 1}·k{j + 1}", md.code(w), md.code(w2), md.number(steps["scores"][0, i, j]),
             md.number(steps["scaled"][0, i, j]), md.number(steps["weights"][0, i, j], 4))
            for i, w in enumerate(words) for j, w2 in enumerate(words)]
    return md.table(["pair", "query word", "key word", "step 2: score q·k",
                     f"step 3: ÷ √d_k = ÷ {math.sqrt(d_k):g}", "step 4: softmax"], rows)


def _weighted_table(steps, words):
    """Steps 5-6: head 1's weighted values of each word, and their sum z."""
    rows = []
    for i, w in enumerate(words):
        rows += [_head_row(f"{md.number(steps['weights'][0, i, j], 4)} × v{j + 1}",
                           steps["weighted"][0, i, j]) for j in range(len(words))]
        rows.append(_head_row(f"**z{i + 1}** ({md.code(w)})", steps["z"][0, i], bold=True))
    return md.table(["step 5 / step 6", *_head_dims(steps)], rows)


# ----- section 4 ----------------------------------------------------------------------------------
def section_4_matrices(subject) -> Section:
    """The six steps as matrix products, computed with minigrad ops, with their shapes."""
    words = two_word_input(subject.vocab)
    block, x, _ = probes.first_attention(subject, words)
    attention = block.sublayer
    d_model, d_k, n = attention.d_model, attention.d_head, len(words)
    steps = attention_step_by_step(attention, x)
    with mg.no_grad():
        X = subject.tensor(x[None])  # (1, len, d_model)
        Q = attention.split_heads(attention.q_proj(X))  # (1, heads, len, d_k)
        K = attention.split_heads(attention.k_proj(X))
        V = attention.split_heads(attention.v_proj(X))
        weights = F.softmax(Q @ K.mT / math.sqrt(d_k), axis=-1)  # (1, heads, len, len)
        Z = weights @ V  # (1, heads, len, d_k)
    Q0, K0, V0, W0, Z0 = (t.numpy()[0, 0] for t in (Q, K, V, weights, Z))
    np.testing.assert_allclose(Z.numpy()[0], steps["z"], rtol=1e-4, atol=1e-5,
                               err_msg="section 4: the matrix form differs from the six steps")
    np.testing.assert_allclose(W0, steps["weights"][0], rtol=1e-4, atol=1e-6)
    figure = figures.matrices(
        subject, [x, Q0, K0, V0, Q0 @ K0.T / math.sqrt(d_k), W0, Z0],
        [f"X {x.shape}", f"Q = X·W_Q {Q0.shape}", f"K = X·W_K {K0.shape}",
         f"V = X·W_V {V0.shape}", f"QKᵀ/√d_k {W0.shape}", f"softmax(…) {W0.shape}",
         f"Z = softmax(…)·V {Z0.shape}"],
        "s4_matrices.png", "head 1 of the first encoder layer, as matrices",
        row_labels=words, columns=4)
    shapes = md.table(["matrix", "shape", "what it holds"], [
        ("X", f"({n}, {d_model})", "one row per word (section 2)"),
        ("W_Q, W_K, W_V", f"({d_model}, {d_model})",
         f"learned; head 1 uses {d_k} of the output columns of each"),
        ("Q, K, V of head 1", f"({n}, {d_k})", "one row per word"),
        ("QKᵀ / √d_k", f"({n}, {n})", "row i: the scores of word i"),
        ("softmax(QKᵀ / √d_k)", f"({n}, {n})", "each row sums to 1"),
        ("Z = softmax(…)·V", f"({n}, {d_k})", "row i: z of word i"),
    ])
    return Section({"heads": attention.n_heads, "length": n, "d_k": d_k, "shape_table": shapes,
                    "figure": figure}, [figure])


# ----- section 5 ----------------------------------------------------------------------------------
def section_5_heads(subject) -> Section:
    """Z_0 … Z_{h-1}, concatenated, times W_O; then every encoder head's attention for the
    article's "it" sentence, the row of "it" outlined."""
    heads = subject.model.config.n_heads
    words = two_word_input(subject.vocab)
    block, x, _ = probes.first_attention(subject, words)
    attention = block.sublayer
    out_weight, out_bias = projection_weights(attention.out_proj)
    concatenated = np.concatenate(list(attention_step_by_step(attention, x)["z"]), axis=1)
    gap = float(np.abs(concatenated @ out_weight.T + out_bias -
                       attention_batched(attention, x)["output"]).max())
    tokens = subject.tokens(ANIMAL)
    it = tokens.index("it") if "it" in tokens else len(tokens) - 1
    _, weights = probes.encode_observed(subject, tokens, {})
    layers = range(1, len(subject.model.encoder.layers) + 1)
    maps = [weights[("encoder", layer, "self_attn")][0][0] for layer in layers]  # (heads,..)
    figure = figures.attention_of_one_word(
        subject, np.concatenate(maps), tokens, it,
        [f"layer {layer}, head {h + 1}" for layer in layers for h in range(heads)])
    labels = md.word_labels(tokens)
    rows = [(layer, h + 1, ", ".join(f"{md.code(labels[k])} {md.probability(row[k])}"
                                     for k in np.argsort(row)[::-1][:3]),
             md.probability(row[tokens.index("animal")]) if "animal" in tokens else "–")
            for layer, per_head in zip(layers, maps) for h, row in enumerate(per_head[:, it])]
    return Section({
        "heads": heads, "last_head": heads - 1, "length": len(words),
        "d_k": attention.d_head, "concatenated_width": heads * attention.d_head,
        "d_model": attention.d_model, "difference": f"{gap:.1e}", "sentence": md.code(ANIMAL),
        "word": md.code(tokens[it]), "words": len(tokens), "figure": figure,
        "top_table": md.table(["layer", "head", "top 3", "weight on `animal`"], rows),
        "animal_first": sum(1 for r in rows if r[2].startswith(md.code("animal"))),
        "head_count": len(rows),
        "untrained": "" if subject.trained else " (An untrained model spreads its attention "
                                                "almost evenly: nothing to read into it yet.)",
        "unknown_words": subject.unknown_words(tokens)}, [figure])


# ----- section 6 ----------------------------------------------------------------------------------
def section_6_factor_matrix(subject) -> Section:
    """QKᵀ before the softmax for "the black cat drank the milk", and whether "milk" attends
    drank > cat > black in each encoder layer and head."""
    heads, d_k = subject.model.config.n_heads, subject.model.config.d_head
    tokens = subject.tokens(CAT)
    labels, milk = md.word_labels(tokens), tokens.index("milk")
    factors = _factor_matrices(subject, tokens)
    rows, held, favourites = _ranking_rows(factors, tokens)
    first = next(iter(factors))
    _, _, q, k = factors[first]
    figure = figures.matrices(
        subject, [head for factor, *_ in factors.values() for head in factor],
        [f"layer {layer}, head {h + 1}" for layer in factors for h in range(heads)],
        "s6_factor_matrices.png", "QKᵀ before the softmax (the row of 'milk' outlined)",
        row_labels=labels, col_labels=labels, highlight_row=milk, columns=min(heads, 4))
    counted = sorted({w: favourites.count(w) for w in favourites}.items(),
                     key=lambda item: -item[1])
    return Section({
        "layer": first, "d_k": d_k,
        "dot_product_table": _dot_product_table(q[0, milk], {w: k[0, tokens.index(w)]
                                                              for w in RANKED}),
        "sentence": md.code(CAT), "length": len(tokens), "sqrt_d_k": f"{math.sqrt(d_k):g}",
        "figure": figure, "ranking_table": md.table(
            ["layer", "head", "w(drank)", "w(cat)", "w(black)", "q·k drank", "q·k cat",
             "q·k black", "`milk` attends most to", "drank > cat > black?"], rows),
        "trained": "trained" if subject.trained else "untrained",
        "verdict": _verdict(held), "mass": _held_mass(held), "heads": len(held),
        "favourites": ", ".join(f"{md.code(w)} in {n} head{'s' if n > 1 else ''}"
                                for w, n in counted),
        "closing": "The article's ordering is an intuition about meaning, not something "
                   "training asks for: a head's weights are whatever helped predict the "
                   "translation, and nothing requires this model's heads to rank the words by "
                   "how related they are." if subject.trained else
                   "The weights of an untrained model are random, so any ordering here is "
                   "chance.",
        "unknown_words": subject.unknown_words(tokens)}, [figure])


def _factor_matrices(subject, tokens):
    """{layer: (QKᵀ before scaling (heads, len, len), the recorded attention weights, q and k
    (heads, len, d_k))} of every encoder layer, asserting that softmax(QKᵀ/√d_k) is what the
    model recorded."""
    blocks = {layer: layer_module.self_attn
              for layer, layer_module in enumerate(subject.model.encoder.layers, start=1)}
    seen, weights = probes.encode_observed(subject, tokens, blocks)
    factors = {}
    for layer, block in blocks.items():
        attention = block.sublayer
        with mg.no_grad():
            inner = probes.sublayer_input(block, subject.tensor(seen[layer][0][0]))
            q = attention.split_heads(attention.q_proj(inner)).numpy()[0]  # (heads, len, d_k)
            k = attention.split_heads(attention.k_proj(inner)).numpy()[0]
        factor = q @ k.transpose(0, 2, 1)  # (heads, len, len): QKᵀ, before scaling
        recorded = weights[("encoder", layer, "self_attn")][0][0]
        scaled = factor / math.sqrt(attention.d_head)
        exps = np.exp(scaled - scaled.max(-1, keepdims=True))
        np.testing.assert_allclose(exps / exps.sum(-1, keepdims=True), recorded, rtol=1e-4,
                                   atol=1e-5, err_msg="section 6: softmax(QKᵀ/√d_k) differs "
                                                      "from the recorded attention weights")
        factors[layer] = (factor, recorded, q, k)
    return factors


def _ranking_rows(factors, tokens):
    """The table of how `milk` attends to drank, cat and black in every layer and head (and
    the mean of each layer's heads); per head, the weight of the three together where they
    rank drank > cat > black (None where not), and the word `milk` attends to most."""
    milk, ranked = tokens.index("milk"), [tokens.index(w) for w in RANKED]
    labels = md.word_labels(tokens)

    def row(layer, head, w, scores, top, top_weight):
        ok = bool(w[0] > w[1] > w[2])
        return (layer, head, *[md.probability(v) for v in w], *scores,
                f"{md.code(labels[top])} {md.probability(top_weight)}",
                "**yes**" if ok else "no"), ok

    rows, held, favourites = [], [], []
    for layer, (factor, recorded, _, _) in factors.items():
        for h, attended in enumerate(recorded[:, milk]):
            top = int(attended.argmax())
            cells, ok = row(layer, h + 1, attended[ranked],
                            [md.number(v, 2) for v in factor[h, milk, ranked]], top,
                            attended[top])
            rows.append(cells)
            held.append(float(attended[ranked].sum()) if ok else None)
            favourites.append(labels[top])
        mean = recorded[:, milk].mean(axis=0)
        top = int(mean.argmax())
        rows.append(row(layer, "mean of heads", mean[ranked], ["", "", ""], top,
                        recorded[:, milk, top].mean())[0])
    return rows, held, favourites


def _dot_product_table(query, keys):
    """A query·key dot product taken apart for each {word: key}: the pairs of numbers with the
    same sign, the sums of the positive and negative products, the total."""
    rows = []
    for word, key in keys.items():
        products = query * key
        rows.append((md.code(word), f"{int((products > 0).sum())} of {len(query)}",
                     md.number(products[products > 0].sum(), 2),
                     md.number(products[products < 0].sum(), 2), md.number(products.sum(), 2)))
    return md.table(["key word", "pairs with the same sign", "sum of positive products",
                     "sum of negative products", "q·k"], rows)


def _verdict(held):
    """Whether drank > cat > black holds in every head, none or some (`held`: per head, None
    where it does not)."""
    count, total = sum(mass is not None for mass in held), len(held)
    return ("holds in every head" if count == total else
            "does not hold in any head" if count == 0 else
            f"holds in {count} of {total} heads and fails in the other {total - count}")


def _held_mass(held):
    """How much of the attention of `milk` the three words get in the heads where the ranking
    holds ("" where it holds in none)."""
    masses = [mass for mass in held if mass is not None]
    if not masses:
        return ""
    if len(masses) > 1:
        mass = (f" (in those heads the three words together get {min(masses):.2g} to "
                f"{max(masses):.2g} of the attention of `milk`)")
    else:
        mass = (f" (in that head the three words together get {masses[0]:.2g} of the "
                "attention of `milk`)")
    if max(masses) < 0.1:
        mass += "; where it holds, it holds among weights too small to matter"
    return mass


# ----- section 7 ----------------------------------------------------------------------------------
def section_7_positions(subject) -> Section:
    """Sinusoidal positions: heat maps of the first 20 positions in both layouts, and
    PE[pos]·PE[pos+k] as a function of k only."""
    config = subject.model.config
    d_model = config.d_model
    length = max(PE_POSITIONS, max(PE_STARTS) + PE_OFFSETS + 1)
    tables = {"interleaved": sinusoidal_encoding(length, d_model, interleaved=True),
              "concatenated": sinusoidal_encoding(length, d_model, interleaved=False)}
    interleaved, concatenated = (t.astype(np.float64) for t in tables.values())
    dots = {s: interleaved[s:s + PE_OFFSETS + 1] @ interleaved[s] for s in PE_STARTS}
    spread = max(float(np.abs(values - dots[PE_STARTS[0]]).max()) for values in dots.values())
    layouts = max(float(np.abs(concatenated[s:s + PE_OFFSETS + 1] @ concatenated[s] - v).max())
                  for s, v in dots.items())
    if spread > 1e-3 * d_model:
        raise AssertionError(f"section 7: PE[pos]·PE[pos+k] depends on pos (spread {spread})")
    model_table = subject.model.encoder.positional.table.numpy()
    if config.positional != "learned":
        expected = tables["interleaved" if config.positional == "sinusoidal" else
                          "concatenated"][:min(len(model_table), length)]
        np.testing.assert_allclose(model_table[:len(expected)], expected, atol=1e-6)
    names = figures.positional_tables(subject, tables, PE_POSITIONS, d_model)
    names.append(figures.position_dot_products(subject, np.arange(PE_OFFSETS + 1), dots))
    rows = [(f"pos = {s}", *[md.number(dots[s][k], 2) for k in PE_SHOWN_OFFSETS])
            for s in PE_STARTS]
    return Section({
        "d_model": d_model, "positional": config.positional, "max_len": config.max_len,
        "table_used": {"sinusoidal": "the interleaved table",
                       "sinusoidal-concat": "the concatenated table",
                       "learned": "a learned table instead (these sinusoids are for "
                                  "comparison)"}[config.positional],
        "interleaved_figure": names[0], "concatenated_figure": names[1],
        "spread": f"{spread:.1e}", "layout_difference": f"{layouts:.1e}",
        "dot_product_table": md.table(["", *[f"k = {k}" for k in PE_SHOWN_OFFSETS]], rows),
        "dot_product_figure": names[2]}, names)


# ----- section 8 ----------------------------------------------------------------------------------
def section_8_residuals(subject) -> Section:
    """One sublayer's input, output, sum and normalized result; the gradient norms through the
    skip path and the branch of every block (GradientFlowRecorder)."""
    model, tokens = subject.model, subject.tokens(BALL)
    block = model.encoder.layers[0].self_attn
    seen, _ = probes.encode_observed(subject, tokens, {"block": block})
    word = tokens.index("ball") if "ball" in tokens else 0
    post_ln = not block.norm_first and block.residual != "rezero"
    names = {"x": "x (block input)",
             "branch": "F(x) (sublayer output)" if block.residual != "rezero" else "α·F(x)",
             "s": "s = x + F(x)", "out": "LN(s) (block output)" if post_ln else "block output"}
    vectors = {key: a[0][word] for key, a in zip(names, seen["block"][0])}
    vector_rows = [(names[key], md.vector(v, 6), md.number(v.mean(), 3),
                    md.number(v.std(), 3), md.number(np.linalg.norm(v), 2))
                   for key, v in vectors.items()]
    target_ids, target = _teacher_target(subject, tokens)
    loss, gradient_rows, panels = _gradient_flow(subject, tokens, target_ids)
    drawn = [figures.residual_vectors(subject, vectors, names, tokens[word]),
             figures.gradient_paths(subject, panels, max(len(model.encoder.layers),
                                                         len(model.decoder.layers)))]
    return Section({
        "word": md.code(tokens[word]), "sentence": md.code(BALL),
        "d_model": model.config.d_model, "length": len(tokens),
        "layer_norm": "LayerNorm then rescales the sum: it subtracts the vector's mean, divides "
                      "by its standard deviation (so the result has mean 0 and standard "
                      "deviation 1), and applies a learned per-dimension scale and shift (γ, "
                      "β), which is why the last row's statistics are not exactly 0 and 1"
        if post_ln else "In this pre-LN model the LayerNorm sits inside the branch (F is "
                        "applied to LN(x)) and the block's output is the sum s itself",
        "vector_table": md.table(["vector", "values (first 6)", "mean", "std", "norm"],
                                 vector_rows),
        "vector_figure": drawn[0], "target": target, "loss": f"{loss:.3f}",
        "gradient_table": md.table(["stack", "layer", "sublayer", "‖∂L/∂out‖",
                                    "‖skip‖ = ‖∂L/∂s‖", "‖branch‖", "‖∂L/∂x‖"], gradient_rows),
        "gradient_figure": drawn[1],
        "post_ln": " Under post-LN, the LayerNorm's backward sits between the block's output "
                   "and s, so ‖∂L/∂out‖ and ‖∂L/∂s‖ differ." if post_ln else "",
        "unknown_words": subject.unknown_words(tokens)}, drawn)


def _teacher_target(subject, tokens):
    """The target ids of the teacher-forced pass, and what they are: the toy grammar's
    translation of `tokens` where the vocabulary has it, else the model's own."""
    target = probes.reference(tokens)
    if target is not None and not subject.vocab.unknown(target):
        return (subject.vocab.encode(target),
                f"the toy grammar's translation {md.code(' '.join(target))}")
    produced, _, _ = probes.greedy(subject, tokens)
    return [i for i in produced if i != subject.vocab.eos_id], "the model's own translation"


def _gradient_flow(subject, tokens, target_ids):
    """One teacher-forced pass and its backward, recorded: (the loss, the table rows of every
    block's gradient norms, {stack: {"sublayer skip|branch": (layers, norms)}})."""
    model, vocab = subject.model, subject.vocab
    tgt_in = mg.tensor([[vocab.bos_id] + target_ids], dtype="int64", device=model.device)
    tgt_out = mg.tensor([target_ids + [vocab.eos_id]], dtype="int64", device=model.device)
    with GradientFlowRecorder(model, "illustrated") as recorder:
        loss = F.cross_entropy(model(subject.ids(tokens), tgt_in), tgt_out)
        loss.backward()
        recorder.end_pass()
    model.zero_grad()
    rows: list = []
    panels: dict = {}
    for stack in ("encoder", "decoder"):
        lines = panels.setdefault(stack, {})
        for layer in range(1, len(getattr(model, stack).layers) + 1):
            for sublayer in SUBLAYERS:
                values = {q: select(recorder.rows, stack=stack, layer=layer, sublayer=sublayer,
                                    quantity=q) for q in GRADIENTS}
                if not values["grad_in"]:
                    continue
                values = {q: v[0]["value"] for q, v in values.items()}
                rows.append((stack, layer, f"`{sublayer}`",
                             *[f"{values[q]:.2e}" for q in GRADIENTS]))
                for q, label in (("grad_skip", "skip"), ("grad_branch", "branch")):
                    layers, norms = lines.setdefault(f"{sublayer} {label}", ([], []))
                    layers.append(layer)
                    norms.append(values[q])
    return loss.item(), rows, panels


# ----- section 9 ----------------------------------------------------------------------------------
def section_9_decoder(subject) -> Section:
    """Greedy decoding step by step: each step's input, its cross-attention over the source and
    the top-5 words of the final linear + softmax."""
    model, vocab = subject.model, subject.vocab
    tokens = subject.tokens(CAT)
    produced, logits, weights = probes.greedy(subject, tokens, with_attention=True)
    steps = min(len(produced), MAX_STEPS_SHOWN)
    assert np.array_equal(logits.argmax(axis=-1), produced), \
        "section 9: greedy decoding did not pick the most probable word at every step"
    layers, heads = len(model.decoder.layers), model.config.n_heads
    cross = np.stack([np.concatenate([w[0, :, 0] for w in
                                      weights[("decoder", layer, "cross_attn")][:steps]])
                      .reshape(steps, heads, len(tokens)).transpose(1, 0, 2)
                      for layer in range(1, layers + 1)])  # (layers, heads, steps, src_len)
    produced_words = probes.words(vocab, produced)[:steps]
    source_labels = md.word_labels(tokens)
    figure = figures.cross_attention(
        subject, cross.reshape(layers * heads, steps, len(tokens)), produced_words,
        source_labels, [f"layer {layer}, head {h}" for layer in range(1, layers + 1)
                        for h in range(1, heads + 1)])
    rows = [_decoding_row(vocab, t, produced, logits[t], cross[-1, :, t].mean(axis=0),
                          source_labels) for t in range(steps)]
    return Section({
        "sentence": md.code(CAT), "length": len(tokens), "d_model": model.config.d_model,
        "vocabulary_size": model.config.tgt_vocab_size,
        "translation": md.code(" ".join(vocab.decode(produced))),
        "steps_shown": f" ({len(produced)} steps; the first {steps} are shown)"
        if steps < len(produced) else "",
        "step_table": md.table(["step", "decoder input so far", "top 5 of softmax(linear(·))",
                                "chosen", f"most attended source word (layer {layers}, mean "
                                          "of heads)"], rows),
        "figure": figure, "unknown_words": subject.unknown_words(tokens)}, [figure])


def _decoding_row(vocab, t, produced, logits, attended, source_labels):
    """Step t+1 of greedy decoding: the input so far, the 5 most probable words, the one
    chosen, and the source word its cross-attention (`attended`, over the source) favours."""
    shifted = logits - logits.max()
    probabilities = np.exp(shifted) / np.exp(shifted).sum()
    prefix_words = probes.words(vocab, [vocab.bos_id] + produced[:t])
    prefix = " ".join(prefix_words if len(prefix_words) <= 6 else ["…"] + prefix_words[-5:])
    top = np.argsort(probabilities)[::-1][:5]
    return (t + 1, md.code(prefix),
            ", ".join(f"{md.code(vocab.id_to_token(int(i)))} {md.probability(probabilities[i])}"
                      for i in top),
            f"**{md.code(vocab.id_to_token(produced[t]))}**",
            f"{md.code(source_labels[int(attended.argmax())])} {attended.max():.2f}")


SECTIONS = (section_1_stacks, section_2_embeddings, section_3_six_steps, section_4_matrices,
            section_5_heads, section_6_factor_matrix, section_7_positions, section_8_residuals,
            section_9_decoder)
