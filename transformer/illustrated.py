"""An executable Illustrated Transformer: the explanations of "The Illustrated Transformer"
(J. Alammar) and "Transformers Explained Visually", part 4 (K. Doshi), section by section,
with every number and picture computed on the spot by a real model.

    subject = load_subject("runs/toy-en-es", out="docs/illustrated")   # or checkpoint=None
    path, sections = write_walkthrough(subject)

`load_subject` loads a training run folder's model, or (without a checkpoint) builds the
toy-en-es vocabulary and the main job's model configuration and initializes a model from a
seed. Each `section_N_*` function returns a `Section` (Markdown text + the PNG figures it
wrote); `write_walkthrough` writes them all into `out/walkthrough.md`.

Section 3 recomputes one attention head vector by vector, as the article's six steps do, and
`check_step_by_step` asserts that the result equals what `MultiHeadAttention` computes in
one batched call (weights, the z vectors before W_O, and the output after it).

matplotlib (the `examples` extra) is imported when a figure is drawn, on the Agg canvas.
"""

import math
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import minigrad as mg
from minigrad.nn import functional as F

from .analysis.plots import (
    new_figure,
    plot_attention,
    plot_curves,
    plot_depth_profiles,
    plot_positional_encoding,
)
from .analysis.recorder import GradientFlowRecorder, select
from .attention import AttentionRecorder
from .data.tokenizer import tokenize
from .decoding import default_max_len, greedy_decode
from .model import Transformer
from .pipeline import fresh_setup
from .positional import sinusoidal_encoding
from .run_folder import RunFolder

# The sentences of the two articles (all three are in the toy grammar's training split).
BALL = "the ball is blue"
CAT = "the black cat drank the milk"
ANIMAL = "the animal didn't cross the street because it was too tired"
# Section 3's two-word input: the article's, or the first pair the vocabulary knows.
TWO_WORD_CANDIDATES = ("thinking machines", "black cat", "the cat", "blue ball")
PE_POSITIONS = 20  # section 7: rows of the heat maps
PE_OFFSETS = 60  # section 7: offsets k of PE[pos]·PE[pos+k]
PE_STARTS = (0, 7, 30)  # section 7: positions where PE[pos]·PE[pos+k] is measured
SHOWN_DIMS = 8  # columns of a vector printed in a table
MAX_STEPS_SHOWN = 12  # section 9: decoding steps in the table and the figure


# ----- what the walkthrough is about ----------------------------------------------------------
@dataclass
class Subject:
    """The model (eval mode), its vocabulary, a Markdown sentence saying where it came from, the
    output folder of the figures, and their resolution."""

    model: object
    vocab: object
    origin: str
    out: Path
    trained: bool
    dpi: int = 72
    command: str = ""

    def tokens(self, sentence):
        return tokenize(sentence)

    def tensor(self, array):
        """A float32 tensor on the model's device."""
        return mg.tensor(np.asarray(array, dtype=np.float32), device=self.model.device)

    def ids(self, tokens):
        """(1, len) int64 ids of `tokens` (unknown words as <unk>)."""
        return mg.tensor([self.vocab.encode(tokens)], dtype="int64", device=self.model.device)

    def unknown_note(self, tokens):
        unknown = self.vocab.unknown(tokens)
        return (f"\n\n*Not in this vocabulary, read as `<unk>`: {', '.join(unknown)}.*"
                if unknown else "")


@dataclass
class Section:
    """One section of the walkthrough: its number, title, Markdown body and figure files."""

    number: int
    title: str
    text: str
    figures: list = field(default_factory=list)

    def markdown(self):
        return f"## {self.number}. {self.title}\n\n{self.text.strip()}\n"


def load_subject(checkpoint=None, which="best", out="runs/illustrated", model_options=None,
                 seed=0, dpi=72, device=None):
    """The model to illustrate: run folder `checkpoint`'s `which` checkpoint, or, without one,
    a model freshly initialized from `seed` on the toy-en-es vocabulary with the main job's
    configuration (`model_options` override its fields, e.g. a tiny model for tests)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if checkpoint is not None:
        folder = RunFolder(checkpoint)
        model, vocab = folder.load_model(which, device), folder.vocab()
        step = mg.load(folder.checkpoint(which)).get("step")
        origin = (f"This walkthrough uses the trained model of the run folder `{checkpoint}` "
                  f"(its `{which}.npz` checkpoint" +
                  (f", saved at training step {step})" if step is not None else ")"))
        task = folder.read_json("config.json").get("task", {}).get("name")
        if task:
            origin += f", trained on the `{task}` task"
        if folder.file("metrics.json").exists():
            metrics = folder.read_json("metrics.json")
            if "test_exact_match" in metrics:
                origin += (f"; it translates {metrics['test_exact_match']:.1%} of the test "
                           f"sentences exactly (BLEU {metrics.get('test_bleu', float('nan')):.1f})")
        origin += "."
        command = f"python examples/illustrated.py --checkpoint {checkpoint}" + \
            (f" --which {which}" if which != "best" else "")
        trained = True
    else:
        vocab, config = fresh_setup("toy-en-es", model_options, seed=seed)
        mg.manual_seed(seed)
        model = Transformer(config)
        if device is not None:
            model.to(device)
        model.eval()
        origin = (f"**No checkpoint was given: this walkthrough uses a freshly initialized, "
                  f"untrained model** (seed {seed}), on the `toy-en-es` vocabulary built with "
                  "the default settings and the main job's model configuration. Every number "
                  "below is real, but the weights are random: expect nearly uniform attention "
                  "and nonsense translations. Run with `--checkpoint runs/toy-en-es` to see "
                  "the trained model.")
        command = "python examples/illustrated.py" + (f" --seed {seed}" if seed else "")
        trained = False
    command += f" --out {out}"
    return Subject(model.eval(), vocab, origin, out, trained, dpi, command)


# ----- small helpers ----------------------------------------------------------------------------
def _num(value, digits=3):
    return f"{value:.{digits}f}"


def _vector(values, limit=SHOWN_DIMS, digits=3):
    """The first `limit` values of a vector, as text."""
    values = np.asarray(values).ravel()
    shown = ", ".join(_num(v, digits) for v in values[:limit])
    return f"[{shown}{', …' if len(values) > limit else ''}]"


def _table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _code(token):
    return "`" + token.replace("`", "'") + "`"


def _save(subject, figure, name):
    """Save a figure as `out/name` at the subject's resolution, as a 256-colour PNG (a third
    of the size of a full-colour one, no visible change for these plots); returns the name."""
    path = subject.out / name
    figure.savefig(path, dpi=subject.dpi)
    try:
        from PIL import Image  # Pillow: a dependency of matplotlib
    except ImportError:
        return name
    with Image.open(path) as image:
        palette = image.convert("RGB").quantize(colors=256)
    palette.save(path, optimize=True)
    return name


def _image(name, alt):
    return f"![{alt}]({name})"


def _outline_row(ax, row, columns, color="red"):
    """A rectangle around row `row` of a heat map of `columns` columns."""
    from matplotlib.patches import Rectangle

    ax.add_patch(Rectangle((-0.5, row - 0.5), columns, 1, fill=False, edgecolor=color,
                           linewidth=2))


def _plot_matrices(subject, matrices, titles, name, suptitle, row_labels=None,
                   col_labels=None, highlight_row=None, signed=True, columns=None):
    """Heat maps of several matrices (one panel each, numbers in the cells when small): a
    signed colour scale centred on 0 (`signed`) or 0..max. Saves `name`; returns it."""
    count = len(matrices)
    columns = columns or min(count, 4)
    rows = math.ceil(count / columns)
    figure, axes = new_figure(rows, columns, (3.0, 2.7))
    for ax in axes.flat[count:]:
        ax.set_axis_off()
    for ax, matrix, title in zip(axes.flat, matrices, titles):
        matrix = np.atleast_2d(np.asarray(matrix, dtype=float))
        limit = float(np.abs(matrix).max()) or 1.0
        image = ax.imshow(matrix, cmap="RdBu_r" if signed else "viridis",
                          vmin=-limit if signed else 0.0, vmax=limit, aspect="auto",
                          interpolation="nearest")
        if matrix.shape[1] <= 8 and matrix.size <= 64:  # small enough to print the numbers
            for (i, j), value in np.ndenumerate(matrix):
                ax.text(j, i, f"{value:.1f}" if abs(value) >= 10 else f"{value:.2f}",
                        ha="center", va="center", fontsize=6.5,
                        color="white" if abs(value) > 0.6 * limit else "black")
        ax.set_title(title, fontsize=9)
        if row_labels is not None and len(row_labels) == matrix.shape[0]:
            ax.set_yticks(range(matrix.shape[0]), row_labels, fontsize=8)
        else:
            ax.set_yticks([])
        if col_labels is not None and len(col_labels) == matrix.shape[1]:
            ax.set_xticks(range(matrix.shape[1]), col_labels, rotation=90, fontsize=8)
        elif matrix.shape[1] > 16:
            ax.tick_params(labelsize=7)
        else:
            ax.set_xticks([])
        if highlight_row is not None:
            _outline_row(ax, highlight_row, matrix.shape[1])
        figure.colorbar(image, ax=ax, shrink=0.8)
    figure.suptitle(suptitle)
    return _save(subject, figure, name)


@contextmanager
def _observing(blocks):
    """Within the block, every call of the ResidualBlocks `blocks` ({key: block}) appends
    (x, branch, s, out) as NumPy arrays to `seen[key]`; their observers are restored after."""
    seen = {key: [] for key in blocks}
    previous = {key: block.observer for key, block in blocks.items()}

    def observer_of(key):
        def observe(block, x, branch, s, out):
            seen[key].append(tuple(t.numpy() for t in (x, branch, s, out)))
        return observe

    for key, block in blocks.items():
        block.observer = observer_of(key)
    try:
        yield seen
    finally:
        for key, block in blocks.items():
            block.observer = previous[key]


def _sublayer_input(block, x):
    """What a ResidualBlock feeds its sublayer: LN(x) under pre-LN, x itself otherwise."""
    if block.norm_first and block.residual != "rezero":
        return block.norm(x)
    return x


def _encode_observed(subject, tokens, blocks):
    """Run the encoder on `tokens` (no gradient), observing `blocks`; returns what they saw and
    the attention weights recorded: ({key: [(x, branch, s, out)]}, {record key: [weights]})."""
    with mg.no_grad(), _observing(blocks) as seen, AttentionRecorder(subject.model) as recorder:
        subject.model.encode(subject.ids(tokens))
    return seen, recorder.weights


def _greedy(subject, tokens, with_attention=False):
    """Greedy decoding of a source: (produced ids up to EOS included, logits (steps, vocab),
    recorded attention weights or None)."""
    model, vocab = subject.model, subject.vocab
    src = subject.ids(tokens)
    max_len = default_max_len(model, len(tokens))
    recorder = AttentionRecorder(model) if with_attention else None
    with recorder if recorder is not None else nullcontext():
        ids, logits = greedy_decode(model, src, max_len, vocab.bos_id, vocab.eos_id,
                                    return_logits=True)
    produced = ids.numpy()[0].tolist()
    if vocab.eos_id in produced:
        produced = produced[:produced.index(vocab.eos_id) + 1]
    return produced, logits.numpy()[0, :len(produced)], recorder.weights if recorder else None


def _labels(tokens):
    """Tokens as labels, a word that occurs more than once numbered by its position (the_1,
    the_5), so that tables and maps say which one is meant."""
    return [f"{t}_{i + 1}" if tokens.count(t) > 1 else t for i, t in enumerate(tokens)]


def _weight(value):
    """An attention weight or probability: 3 decimals, or 2 significant digits when tiny."""
    return f"{value:.3f}" if value >= 0.001 or value == 0 else f"{value:.1e}"


def _words(vocab, ids):
    return [vocab.id_to_token(i) for i in ids]


# ----- section 1 ----------------------------------------------------------------------------------
def section_1_stacks(subject):
    """The model as a black box (a sentence in, a sentence out), then its stacks layer by layer
    with parameter counts."""
    model, vocab, config = subject.model, subject.vocab, subject.model.config
    tokens = subject.tokens(BALL)
    produced, _, _ = _greedy(subject, tokens)
    translation = " ".join(vocab.decode(produced))
    shared = model.decoder.embedding.weight is model.encoder.embedding.weight
    rows = [("encoder", "embedding", "token vectors (vocabulary × d_model)",
             model.encoder.embedding.num_parameters())]
    for stack in ("encoder", "decoder"):
        layers = getattr(model, stack).layers
        if stack == "decoder":
            rows.append(("decoder", "embedding", "token vectors" + (
                " (the encoder's matrix, shared)" if shared else ""),
                0 if shared else model.decoder.embedding.num_parameters()))
        positions = getattr(model, stack).positional.num_parameters()
        if positions:
            rows.append((stack, "positions", "learned position vectors (max_len × d_model)",
                         positions))
        for number, layer in enumerate(layers, start=1):
            for name in ("self_attn", "cross_attn", "ffn"):
                if hasattr(layer, name):
                    block = getattr(layer, name)
                    what = {"self_attn": "masked self-attention" if stack == "decoder" else
                            "self-attention", "cross_attn": "encoder-decoder attention",
                            "ffn": "feed-forward network"}[name]
                    norm = "" if block.residual == "rezero" else " + LayerNorm"
                    rows.append((stack, f"layer {number}", f"{what}{norm} (`{name}`)",
                                 block.num_parameters()))
        final = getattr(model, stack).final_norm
        if final is not None:
            rows.append((stack, "final", "LayerNorm (pre-LN)", final.num_parameters()))
    generator_params = model.generator.num_parameters() - (
        model.generator.weight.size if model.generator.weight is model.encoder.embedding.weight
        else 0)
    rows.append(("output", "final linear", "to one score per vocabulary word" + (
        " (weights shared with the embedding; bias only)" if shared else ""), generator_params))
    total = model.num_parameters()
    assert sum(r[3] for r in rows) == total, "parameter table does not add up to the model's"
    table = _table(["stack", "part", "what it is", "parameters"],
                   [(a, b, c, f"{d:,}") for a, b, c, d in rows] +
                   [("**total**", "", "", f"**{total:,}**")])
    text = f"""
Seen from outside, the model is one function: an English sentence goes in, a Spanish one
comes out. Greedy decoding of {_code(BALL)} gives **{_code(translation)}**.

Opening the box shows two stacks. The **encoder** reads the whole source sentence at once; each
of its {config.n_encoder_layers} layers has a self-attention sublayer followed by a
position-wise feed-forward network. The **decoder** writes the translation one word at a time;
each of its {config.n_decoder_layers} layers has a masked self-attention sublayer (it may only
look at the words already written), an encoder-decoder ("cross") attention sublayer that reads
the encoder's output, and a feed-forward network. A final linear layer and a softmax turn the
decoder's last vector into a probability for every word of the vocabulary. The layers of a
stack share their structure, not their weights.

This model: d_model = {config.d_model}, {config.n_heads} heads of d_k = {config.d_head},
d_ff = {config.d_ff}, {config.n_encoder_layers} + {config.n_decoder_layers} layers, a
vocabulary of {len(vocab)} tokens, {"pre-LN" if config.norm_first else "post-LN (as the paper)"}
with residual mode `{config.residual}`, `{config.positional}` positions. Every count below is
read from the loaded modules:

{table}
"""
    return Section(1, "The black box and the stacks", text + subject.unknown_note(tokens))


# ----- section 2 ----------------------------------------------------------------------------------
def section_2_embeddings(subject):
    """Token ids, embedding rows scaled by sqrt(d_model), positions added: the list of vectors
    that enters the first encoder layer (checked against the model's own `embed`)."""
    model = subject.model
    d_model = model.config.d_model
    tokens = subject.tokens(BALL)
    ids = subject.ids(tokens)
    table = model.encoder.embedding.weight.numpy()
    rows_e = table[ids.numpy()[0]]  # (len, d_model)
    scaled = rows_e * math.sqrt(d_model)
    positions = model.encoder.positional.table.numpy()[:len(tokens)]
    x = scaled + positions
    with mg.no_grad():
        model_x = model.encoder.embed(ids).numpy()[0]
    np.testing.assert_allclose(x, model_x, rtol=1e-5, atol=1e-5,
                               err_msg="section 2: embedding × sqrt(d_model) + positions "
                                       "differs from the model's Encoder.embed")
    rows = [(_code(t), i, _vector(e, 6), _num(np.linalg.norm(e), 2),
             _num(np.linalg.norm(s), 2), _num(np.linalg.norm(p), 2), _num(np.linalg.norm(v), 2))
            for t, i, e, s, p, v in zip(tokens, ids.numpy()[0], rows_e, scaled, positions, x)]
    figure, axes = new_figure(3, 1, (7.0, 1.1 + 0.28 * len(tokens)))
    for ax, (matrix, title) in zip(axes[:, 0], (
            (scaled, "embedding × √d_model"), (positions, "positional encoding"),
            (x, "sum: what the first encoder layer receives"))):
        limit = float(np.abs(matrix).max()) or 1.0
        image = ax.imshow(matrix, cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto",
                          interpolation="nearest")
        ax.set_yticks(range(len(tokens)), tokens, fontsize=8)
        ax.set_title(title, fontsize=9)
        figure.colorbar(image, ax=ax)
    axes[-1, 0].set_xlabel("dimension")
    name = _save(subject, figure, "s2_word_vectors.png")
    text = f"""
A sentence becomes numbers in three moves. The tokenizer splits it into words, the vocabulary
turns each word into an id, and the embedding table (one learned row of d_model = {d_model}
numbers per vocabulary entry, {table.shape[0]} × {table.shape[1]} here) gives each id a
vector. The model multiplies those rows by √d_model = {math.sqrt(d_model):.2f} and adds the
position vector of each place in the sentence (section 7).

From then on every layer works on a *list of vectors*: one vector of size {d_model} per word,
here a `(batch, len, d_model)` = `(1, {len(tokens)}, {d_model})` tensor. Only the bottom of
each stack embeds words; every higher layer receives the list produced by the one below.

{_table(["token", "id", "embedding row (first 6)", "‖row‖", "‖row·√d‖", "‖PE‖", "‖input‖"],
        rows)}

Recomputed by hand, `embedding[id] × √d_model + PE[pos]` equals the model's `Encoder.embed`
for every word (checked).

{_image(name, "the list of vectors of 'the ball is blue'")}
"""
    return Section(2, "From words to vectors", text + subject.unknown_note(tokens), [name])


# ----- section 3: the six steps, and the check ----------------------------------------------------
def two_word_input(vocab):
    """Section 3's input: the article's "thinking machines" if this vocabulary has both words,
    otherwise the first candidate pair it knows (or the first two words of its vocabulary)."""
    for candidate in TWO_WORD_CANDIDATES:
        words = candidate.split()
        if not vocab.unknown(words):
            return words
    return [t for t in vocab.tokens if not t.startswith("<")][:2]


def _weights_of(linear):
    weight = linear.weight.numpy().astype(np.float64)
    bias = linear.bias.numpy().astype(np.float64) if linear.bias is not None else \
        np.zeros(weight.shape[0])
    return weight, bias


def attention_step_by_step(attention, x):
    """Self-attention over the rows of `x` (len, d_model), computed the article's way: for each
    head and each word, its q, k, v vectors, the scores q·k, divided by sqrt(d_k), softmax, the
    weighted values and their sum z; one vector and one dot product at a time, in float64.

    Uses the projections of `attention` (a MultiHeadAttention); head h owns columns
    h·d_k .. (h+1)·d_k of each projection (its split_heads). Returns a dict of arrays: q, k, v
    (heads, len, d_k); scores, scaled, weights (heads, len, len); weighted (heads, len, len,
    d_k), z (heads, len, d_k); concat (len, d_model); output (len, d_model) = concat·W_Oᵀ + b."""
    x = np.asarray(x, dtype=np.float64)
    length, heads, d_k = x.shape[0], attention.n_heads, attention.d_head
    projections = {name: _weights_of(getattr(attention, f"{name}_proj")) for name in "qkv"}
    result = {name: np.zeros((heads, length, d_k)) for name in "qkvz"}
    for name in ("scores", "scaled", "weights"):
        result[name] = np.zeros((heads, length, length))
    result["weighted"] = np.zeros((heads, length, length, d_k))
    for h in range(heads):
        columns = slice(h * d_k, (h + 1) * d_k)
        for name, (weight, bias) in projections.items():  # step 1: q, k, v of every word
            for i in range(length):
                result[name][h, i] = weight[columns] @ x[i] + bias[columns]
        for i in range(length):  # the word whose new vector is being computed
            q = result["q"][h, i]
            for j in range(length):
                result["scores"][h, i, j] = float(np.dot(q, result["k"][h, j]))  # step 2
            result["scaled"][h, i] = result["scores"][h, i] / math.sqrt(d_k)  # step 3
            exps = np.exp(result["scaled"][h, i] - result["scaled"][h, i].max())  # step 4
            result["weights"][h, i] = exps / exps.sum()
            for j in range(length):  # step 5: each value vector times its weight
                result["weighted"][h, i, j] = result["weights"][h, i, j] * result["v"][h, j]
            result["z"][h, i] = result["weighted"][h, i].sum(axis=0)  # step 6
    result["concat"] = result["z"].transpose(1, 0, 2).reshape(length, heads * d_k)
    out_weight, out_bias = _weights_of(attention.out_proj)
    result["output"] = result["concat"] @ out_weight.T + out_bias
    return result


def attention_batched(attention, x, mask=None):
    """What `attention` (a MultiHeadAttention) computes in one batched call on `x` (len,
    d_model): weights (heads, len, len) from an AttentionRecorder, z (heads, len, d_k) read at
    the input of its output projection W_O by a forward hook, and the output (len, d_model)."""
    captured = []
    handle = attention.out_proj.register_forward_hook(
        lambda module, inputs, output: captured.append(inputs[0].numpy()))
    try:
        with mg.no_grad(), AttentionRecorder(attention) as recorder:
            output = attention(mg.tensor(np.asarray(x, dtype=np.float32)[None],
                                         device=attention.q_proj.weight.device), mask=mask)
    finally:
        handle.remove()
    length, heads, d_k = x.shape[0], attention.n_heads, attention.d_head
    (weights,) = recorder.weights[attention.record_key]
    z = captured[0][0].reshape(length, heads, d_k).transpose(1, 0, 2)
    return {"weights": weights[0], "z": z, "output": output.numpy()[0]}


def check_step_by_step(stepwise, batched, rtol=1e-4, atol=1e-5):
    """Assert that the step-by-step attention equals the batched module's: the weights, the z
    vectors of every head (before W_O) and the output (after W_O), to float32 tolerance
    (atol scaled by each quantity's largest magnitude). Raises AssertionError naming the
    quantity, the place and size of the largest difference; returns {quantity: max |diff|}."""
    differences = {}
    for name, what in (("weights", "attention weights softmax(q·k/√d_k)"),
                       ("z", "z vectors (before W_O)"), ("output", "output (after W_O)")):
        mine, theirs = (np.asarray(d[name], dtype=np.float64) for d in (stepwise, batched))
        if mine.shape != theirs.shape:
            raise AssertionError(f"step-by-step {what}: shape {mine.shape}, but "
                                 f"MultiHeadAttention's batched call gives {theirs.shape}")
        gap = np.abs(mine - theirs)
        scale = max(1.0, float(np.abs(theirs).max()))
        allowed = atol * scale + rtol * np.abs(theirs)
        if not np.all(gap <= allowed):
            worst = np.unravel_index(np.argmax(gap - allowed), gap.shape)
            raise AssertionError(
                f"step-by-step {what} differ from MultiHeadAttention's batched call: at index "
                f"{tuple(int(i) for i in worst)} the step-by-step value is {mine[worst]:.6g} "
                f"and the module's {theirs[worst]:.6g} (|difference| {gap[worst]:.3g}, "
                f"allowed {allowed[worst]:.3g}); largest |difference| {gap.max():.3g}")
        differences[name] = float(gap.max())
    return differences


def _first_attention(subject, tokens):
    """The first encoder layer's self-attention block, the input its sublayer received when
    the model encoded `tokens`, and what the block saw."""
    block = subject.model.encoder.layers[0].self_attn
    seen, _ = _encode_observed(subject, tokens, {"block": block})
    x, branch, _, _ = seen["block"][0]
    with mg.no_grad():
        inner = _sublayer_input(block, subject.tensor(x)).numpy()[0]
    return block, inner, branch[0]


def section_3_six_steps(subject):
    """Self-attention of a two-word input in six steps for the first head, then checked
    (asserted) against the batched MultiHeadAttention for every head."""
    words = two_word_input(subject.vocab)
    block, x, branch = _first_attention(subject, words)
    attention = block.sublayer
    steps = attention_step_by_step(attention, x)
    batched = attention_batched(attention, x)
    differences = check_step_by_step(steps, batched)
    if block.residual != "rezero":  # the block's branch is F(x) itself (dropout is off)
        np.testing.assert_allclose(batched["output"], branch, rtol=1e-4, atol=1e-5,
                                   err_msg="section 3: the module called alone differs from "
                                           "its call inside the encoder")
    d_k = attention.d_head
    a, b = words
    dims = [f"{i}" for i in range(min(d_k, SHOWN_DIMS))] + (["…"] if d_k > SHOWN_DIMS else [])

    def vector_rows(name):
        return [(f"{name}{i + 1} ({_code(w)})",
                 *[_num(v) for v in steps[name][0, i, :SHOWN_DIMS]],
                 *(["…"] if d_k > SHOWN_DIMS else [])) for i, w in enumerate(words)]

    qkv = _table(["vector", *dims], vector_rows("q") + vector_rows("k") + vector_rows("v"))
    score_rows = []
    for i, w in enumerate(words):
        for j, w2 in enumerate(words):
            score_rows.append((f"q{i + 1}·k{j + 1}", _code(w), _code(w2),
                               _num(steps["scores"][0, i, j]), _num(steps["scaled"][0, i, j]),
                               _num(steps["weights"][0, i, j], 4)))
    scores = _table(["pair", "query word", "key word", "step 2: score q·k",
                     f"step 3: ÷ √d_k = ÷ {math.sqrt(d_k):g}", "step 4: softmax"], score_rows)
    weighted_rows = []
    for i, w in enumerate(words):
        for j in range(2):
            weighted_rows.append((f"{_num(steps['weights'][0, i, j], 4)} × v{j + 1}",
                                  *[_num(v) for v in steps["weighted"][0, i, j, :SHOWN_DIMS]],
                                  *(["…"] if d_k > SHOWN_DIMS else [])))
        weighted_rows.append((f"**z{i + 1}** ({_code(w)})",
                              *[f"**{_num(v)}**" for v in steps["z"][0, i, :SHOWN_DIMS]],
                              *(["…"] if d_k > SHOWN_DIMS else [])))
    weighted = _table(["step 5 / step 6", *dims], weighted_rows)
    position = "LN(x), the block's normalized input (pre-LN)" if \
        block.norm_first and block.residual != "rezero" else "x, the embedded words themselves"
    choice = ("this vocabulary has those words too, so we take"
              if " ".join(words) == TWO_WORD_CANDIDATES[0]
              else "this model's vocabulary does not have those words, so we take")
    text = f"""
The articles take "Thinking Machines"; {choice}
**{_code(a)} {_code(b)}**. Its two vectors x1, x2 (section 2: embedding × √d_model + position,
shape `(2, {attention.d_model})`) enter the first encoder layer's self-attention; its sublayer
sees {position}. We follow **head 1** of {attention.n_heads}.

**Step 1: a query, a key and a value for every word.** Each is the word's vector times a learned
matrix (plus a bias): q = x·W_Qᵀ + b_Q, and the same with W_K, W_V. In this implementation one
`d_model × d_model` projection serves all heads; head h owns {d_k} consecutive columns of its
output, so each of q, k, v has d_k = {d_k} numbers per head{
" (the first " + str(SHOWN_DIMS) + " shown)" if d_k > SHOWN_DIMS else ""}:

{qkv}

**Steps 2-4: scores, scaling, softmax.** The score of word i for word j is the dot product
qi·kj: how well what i is looking for matches what j offers. Dividing by √d_k keeps the scores
from growing with the vector size (large scores would push the softmax into a corner where
its gradient vanishes), and the softmax turns each query word's scores into weights that are
positive and add up to 1:

{scores}

**Steps 5-6: weigh the values, add them up.** Each value vector is multiplied by its weight, and
the sum of the weighted values is the word's output of this head, z:

{weighted}

**The same numbers from the real module.** The tables above were computed one vector at a
time in float64. `MultiHeadAttention` does all heads and words at once, in float32, with one
fused `scaled_dot_product_attention`. The walkthrough *asserts* that the two agree
(`check_step_by_step`): largest differences {differences["weights"]:.1e} for the attention
weights of all {attention.n_heads} heads, {differences["z"]:.1e} for their z vectors (read
with a hook at the input of W_O) and {differences["output"]:.1e} for the output after W_O{
"; the output also equals what this sublayer produced inside the encoder's own forward pass"
if block.residual != "rezero" else ""}.
"""
    return Section(3, "Self-attention in six steps", text)


# ----- section 4 ----------------------------------------------------------------------------------
def section_4_matrices(subject):
    """The six steps as matrix products, computed with minigrad ops, with their shapes."""
    words = two_word_input(subject.vocab)
    block, x, _ = _first_attention(subject, words)
    attention = block.sublayer
    d_model, d_k = attention.d_model, attention.d_head
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
    name = _plot_matrices(
        subject, [x, Q0, K0, V0, Q0 @ K0.T / math.sqrt(d_k), W0, Z0],
        [f"X {x.shape}", f"Q = X·W_Q {Q0.shape}", f"K = X·W_K {K0.shape}",
         f"V = X·W_V {V0.shape}", f"QKᵀ/√d_k {W0.shape}", f"softmax(…) {W0.shape}",
         f"Z = softmax(…)·V {Z0.shape}"],
        "s4_matrices.png", "head 1 of the first encoder layer, as matrices",
        row_labels=words, columns=4)
    shapes = _table(["matrix", "shape", "what it holds"], [
        ("X", f"({len(words)}, {d_model})", "one row per word (section 2)"),
        ("W_Q, W_K, W_V", f"({d_model}, {d_model})",
         f"learned; head 1 uses {d_k} of the output columns of each"),
        ("Q, K, V of head 1", f"({len(words)}, {d_k})", "one row per word"),
        ("QKᵀ / √d_k", f"({len(words)}, {len(words)})", "row i: the scores of word i"),
        ("softmax(QKᵀ / √d_k)", f"({len(words)}, {len(words)})", "each row sums to 1"),
        ("Z = softmax(…)·V", f"({len(words)}, {d_k})", "row i: z of word i"),
    ])
    text = f"""
Packing the word vectors as the rows of a matrix X turns the six steps into two lines:

    Q = X·W_Q,   K = X·W_K,   V = X·W_V
    Z = softmax(Q·Kᵀ / √d_k)·V

The code does exactly this with minigrad ops (`q_proj(X)`, `split_heads`, `Q @ K.mT`,
`F.softmax`, `@ V`), for all heads at once with the heads as an extra batch axis:
`(batch, heads, len, d_k)` = `(1, {attention.n_heads}, {len(words)}, {d_k})`. Row i of Z equals
the z of word i in section 3 (checked).

{shapes}

{_image(name, "the matrices of one attention head")}
"""
    return Section(4, "The same thing as matrices", text, [name])


# ----- section 5 ----------------------------------------------------------------------------------
def section_5_heads(subject):
    """Z_0 … Z_{h-1}, concatenated, times W_O; then every encoder head's attention for the
    article's "it" sentence, the row of "it" outlined."""
    model, vocab = subject.model, subject.vocab
    heads = model.config.n_heads
    words = two_word_input(vocab)
    block, x, _ = _first_attention(subject, words)
    attention = block.sublayer
    steps = attention_step_by_step(attention, x)
    out_weight, out_bias = _weights_of(attention.out_proj)
    parts = np.concatenate(list(steps["z"]), axis=1)  # [Z_0 | Z_1 | …]
    batched = attention_batched(attention, x)
    gap = float(np.abs(parts @ out_weight.T + out_bias - batched["output"]).max())

    tokens = subject.tokens(ANIMAL)
    _, weights = _encode_observed(subject, tokens, {})
    rows = []
    it = tokens.index("it") if "it" in tokens else len(tokens) - 1

    layers = range(1, len(model.encoder.layers) + 1)
    maps = np.concatenate([weights[("encoder", layer, "self_attn")][0][0] for layer in layers])
    labels = _labels(tokens)
    figure = plot_attention(maps, labels, labels, "encoder self-attention, every layer and head "
                            f"(the row of '{tokens[it]}' outlined)",
                            panel_titles=[f"layer {layer}, head {h + 1}" for layer in layers
                                          for h in range(heads)])
    for ax in figure.axes[:len(maps)]:
        _outline_row(ax, it, len(tokens))
    figures = [_save(subject, figure, "s5_attention_of_it.png")]
    for layer in layers:
        per_head = weights[("encoder", layer, "self_attn")][0][0]  # (heads, len, len)
        for h in range(heads):
            row = per_head[h, it]
            top = np.argsort(row)[::-1][:3]
            rows.append((layer, h + 1, ", ".join(f"{_code(labels[k])} {_weight(row[k])}"
                                                 for k in top),
                         _weight(row[tokens.index("animal")]) if "animal" in tokens else "–"))
    top_animal = sum(1 for r in rows if r[2].startswith(_code("animal")))
    images = _image(figures[0], "encoder self-attention of every layer and head")
    text = f"""
One head gives each word one way of looking at the others. The layer runs {heads} heads side by
side, each with its own slice of W_Q, W_K, W_V, so it produces {heads} matrices Z_0 … Z_{heads - 1},
each `({len(words)}, {attention.d_head})` for the two-word input. The next sublayer expects one
vector of size d_model per word, so the Z are concatenated side by side into a
`({len(words)}, {heads * attention.d_head})` matrix and multiplied by one more learned matrix,
W_O `({attention.d_model}, {attention.d_model})`. Doing this with the Z of section 3 reproduces
the module's output (largest difference {gap:.1e}).

Now the article's sentence {_code(ANIMAL)}: what does {_code(tokens[it])} attend to? Below is
one map per encoder layer and head (the weights recorded by `AttentionRecorder`, shape
`(1, {heads}, {len(tokens)}, {len(tokens)})` per layer); row i shows how word i spreads its
attention over the sentence, and the outlined row is {_code(tokens[it])}. The article's figure
shows a
trained model's head putting much of "it"'s attention on "the animal".

{images}

Where {_code(tokens[it])} attends most, per layer and head (top 3 words, with weights):

{_table(["layer", "head", "top 3", "weight on `animal`"], rows)}

In this model, {_code("animal")} is the word {_code(tokens[it])} attends to most in
{top_animal} of {len(rows)} heads.{"" if subject.trained else
" (An untrained model spreads its attention almost evenly: nothing to read into it yet.)"}
"""
    return Section(5, "Many heads", text + subject.unknown_note(tokens), figures)


# ----- section 6 ----------------------------------------------------------------------------------
def section_6_factor_matrix(subject):
    """QKᵀ before the softmax for "the black cat drank the milk", and whether "milk" attends
    drank > cat > black in each encoder layer and head."""
    model = subject.model
    heads, d_k = model.config.n_heads, model.config.d_head
    tokens = subject.tokens(CAT)
    blocks = {layer: layer_module.self_attn
              for layer, layer_module in enumerate(model.encoder.layers, start=1)}
    seen, weights = _encode_observed(subject, tokens, blocks)
    needed = ("milk", "drank", "cat", "black")
    if any(w not in tokens for w in needed):
        return Section(6, "The factor matrix: dot products as similarity",
                       f"The sentence {_code(CAT)} does not tokenize to the expected words.")
    milk, targets = tokens.index("milk"), [tokens.index(w) for w in needed[1:]]
    labels = _labels(tokens)
    factors, rows, holds, favourites, held_mass = [], [], [], [], []
    similarity = None
    for layer, block in blocks.items():
        x = seen[layer][0][0]
        with mg.no_grad():
            inner = _sublayer_input(block, subject.tensor(x))
            attention = block.sublayer
            q = attention.split_heads(attention.q_proj(inner)).numpy()[0]  # (heads, len, d_k)
            k = attention.split_heads(attention.k_proj(inner)).numpy()[0]
        factor = q @ k.transpose(0, 2, 1)  # (heads, len, len): QKᵀ, before scaling
        recorded = weights[("encoder", layer, "self_attn")][0][0]
        exps = np.exp(factor / math.sqrt(d_k) - (factor / math.sqrt(d_k)).max(-1, keepdims=True))
        np.testing.assert_allclose(exps / exps.sum(-1, keepdims=True), recorded, rtol=1e-4,
                                   atol=1e-5, err_msg="section 6: softmax(QKᵀ/√d_k) differs "
                                                      "from the recorded attention weights")
        factors += list(factor)
        for h in range(heads):
            w = recorded[h, milk, targets]
            ok = bool(w[0] > w[1] > w[2])
            holds.append(ok)
            if ok:
                held_mass.append(float(w.sum()))
            top = int(recorded[h, milk].argmax())
            favourites.append(labels[top])
            rows.append((layer, h + 1, *[_weight(v) for v in w],
                         *[_num(v, 2) for v in factor[h, milk, targets]],
                         f"{_code(labels[top])} {_weight(recorded[h, milk, top])}",
                         "**yes**" if ok else "no"))
        mean = recorded[:, milk, targets].mean(axis=0)
        top = int(recorded[:, milk].mean(axis=0).argmax())
        rows.append((layer, "mean of heads", *[_weight(v) for v in mean], "", "", "",
                     f"{_code(labels[top])} {_weight(recorded[:, milk, top].mean())}",
                     "**yes**" if mean[0] > mean[1] > mean[2] else "no"))
        if similarity is None:
            similarity = (layer, q[0, milk], {w: k[0, tokens.index(w)] for w in needed[1:]})
    layer, q_milk, keys = similarity
    sim_rows = []
    for word, key in keys.items():
        products = q_milk * key
        sim_rows.append((_code(word), f"{int((products > 0).sum())} of {d_k}",
                         _num(products[products > 0].sum(), 2),
                         _num(products[products < 0].sum(), 2), _num(products.sum(), 2)))
    name = _plot_matrices(
        subject, factors,
        [f"layer {layer}, head {h + 1}" for layer in blocks for h in range(heads)],
        "s6_factor_matrices.png", "QKᵀ before the softmax (the row of 'milk' outlined)",
        row_labels=labels, col_labels=labels, highlight_row=milk, columns=min(heads, 4))
    count, total = sum(holds), len(holds)
    counted = sorted({w: favourites.count(w) for w in favourites}.items(),
                     key=lambda item: -item[1])
    favourite_text = ", ".join(f"{_code(w)} in {n} head{'s' if n > 1 else ''}"
                               for w, n in counted)
    verdict = ("holds in every head" if count == total else
               "does not hold in any head" if count == 0 else
               f"holds in {count} of {total} heads and fails in the other {total - count}")
    mass = ""
    if len(held_mass) > 1:
        mass = (f" (in those heads the three words together get {min(held_mass):.2g} to "
                f"{max(held_mass):.2g} of the attention of `milk`)")
    elif held_mass:
        mass = (f" (in that head the three words together get {held_mass[0]:.2g} of the "
                "attention of `milk`)")
    if held_mass and max(held_mass) < 0.1:
        mass += "; where it holds, it holds among weights too small to matter"
    closing = ("The article's ordering is an intuition about meaning, not something training "
               "asks for: a head's weights are whatever helped predict the translation, and "
               "nothing requires this model's heads to rank the words by how related they are."
               if subject.trained else
               "The weights of an untrained model are random, so any ordering here is chance.")
    text = f"""
The second article looks at the matrix QKᵀ *before* the softmax, its "factor matrix": one row
per query word, one column per key word, each cell the dot product of a query vector with a key
vector. A dot product multiplies the two vectors number by number and adds the products: pairs
with the same sign push the sum up, pairs with opposite signs pull it down, and big numbers
count more. So the score is high when the two vectors point the same way. Training moves the
embeddings and the projection matrices so that words that matter to each other get aligned
vectors.

Here is that dot product taken apart for the query of {_code("milk")} against three keys, in
encoder layer {layer}, head 1 (d_k = {d_k} pairs of numbers each):

{_table(["key word", "pairs with the same sign", "sum of positive products",
         "sum of negative products", "q·k"], sim_rows)}

The factor matrices of every encoder layer and head for {_code(CAT)} (shape
`({len(tokens)}, {len(tokens)})` each; the softmax of these rows divided by
√d_k = {math.sqrt(d_k):g}
is exactly the attention the model records, checked):

{_image(name, "factor matrices QK^T")}

**Does the article's expectation hold?** The article argues that in this sentence "milk" should
attend most to "drank", less to "cat" and least to "black". The attention weights of the
{_code("milk")} row, per layer and head (the scores before the softmax in the middle columns):

{_table(["layer", "head", "w(drank)", "w(cat)", "w(black)", "q·k drank", "q·k cat",
         "q·k black", "`milk` attends most to", "drank > cat > black?"], rows)}

In this {"trained" if subject.trained else "untrained"} model the ordering **{verdict}**{mass}.
Across the {total} heads, the word {_code("milk")} attends to most is {favourite_text}.
{closing}
"""
    return Section(6, "The factor matrix: dot products as similarity",
                   text + subject.unknown_note(tokens), [name])


# ----- section 7 ----------------------------------------------------------------------------------
def section_7_positions(subject):
    """Sinusoidal positions: heat maps of the first 20 positions in both layouts, and
    PE[pos]·PE[pos+k] as a function of k only."""

    config = subject.model.config
    d_model = config.d_model
    length = max(PE_POSITIONS, max(PE_STARTS) + PE_OFFSETS + 1)
    tables = {"interleaved": sinusoidal_encoding(length, d_model, interleaved=True),
              "concatenated": sinusoidal_encoding(length, d_model, interleaved=False)}
    figures = []
    for layout, table in tables.items():
        figure = plot_positional_encoding(
            table[:PE_POSITIONS], f"first {PE_POSITIONS} positions, {layout} sin/cos "
                                  f"(d_model {d_model})")
        figures.append(_save(subject, figure, f"s7_positions_{layout}.png"))
    offsets = np.arange(PE_OFFSETS + 1)
    table = tables["interleaved"].astype(np.float64)
    dots = {start: table[start:start + PE_OFFSETS + 1] @ table[start] for start in PE_STARTS}
    spread = max(float(np.abs(values - dots[PE_STARTS[0]]).max()) for values in dots.values())
    concatenated = tables["concatenated"].astype(np.float64)
    layouts = max(float(np.abs(concatenated[s:s + PE_OFFSETS + 1] @ concatenated[s] - v).max())
                  for s, v in dots.items())
    if spread > 1e-3 * d_model:
        raise AssertionError(f"section 7: PE[pos]·PE[pos+k] depends on pos (spread {spread})")
    figure = plot_curves({f"pos = {s}": (offsets, v) for s, v in dots.items()},
                         "PE[pos]·PE[pos+k] depends on the offset k only", "offset k",
                         "PE[pos]·PE[pos+k]")
    figures.append(_save(subject, figure, "s7_position_dot_products.png"))
    shown = (0, 1, 2, 5, 10, 20, 40)
    rows = [(f"pos = {s}", *[_num(dots[s][k], 2) for k in shown]) for s in PE_STARTS]
    used = {"sinusoidal": "the interleaved table",
            "sinusoidal-concat": "the concatenated table",
            "learned": "a learned table instead (these sinusoids are for comparison)"}
    model_table = subject.model.encoder.positional.table.numpy()
    if config.positional != "learned":
        expected = tables["interleaved" if config.positional == "sinusoidal" else
                          "concatenated"][:min(len(model_table), length)]
        np.testing.assert_allclose(model_table[:len(expected)], expected, atol=1e-6)
    text = f"""
Attention by itself does not see word order: shuffle the words and each word gets the same
output, shuffled. The model therefore adds to each word's embedding a vector that depends only
on its position. The paper's vectors are sines and cosines of the position at frequencies
1/10000^(2i/d_model): PE[pos, 2i] = sin(pos·ωᵢ) and PE[pos, 2i+1] = cos(pos·ωᵢ). Each row of the
maps below is the vector added at one position (d_model = {d_model} numbers, each in [-1, 1]);
left columns oscillate fast, right ones slowly. The paper interleaves sines and cosines; the
Illustrated Transformer's figure (from tensor2tensor) puts all sines first, then all cosines.
Both layouts hold the same numbers in another order. This model (`positional =
"{config.positional}"`) uses {used[config.positional]}, a `({config.max_len}, {d_model})` buffer
(its first rows equal the table drawn here: checked).

{_image(figures[0], "interleaved positional encoding")}

{_image(figures[1], "concatenated positional encoding")}

Why sines and cosines? Because sin(a)·sin(b) + cos(a)·cos(b) = cos(a − b), the dot product of
two position vectors is PE[pos]·PE[pos+k] = Σᵢ cos(k·ωᵢ): it depends only on the distance k,
never on where the pair sits. Measured (float64; the curves for different pos lie on top of each
other, largest gap {spread:.1e}; the concatenated layout gives the same values, gap
{layouts:.1e}):

{_table(["", *[f"k = {k}" for k in shown]], rows)}

{_image(figures[2], "PE dot products against the offset")}
"""
    return Section(7, "Positional encoding", text, figures)


# ----- section 8 ----------------------------------------------------------------------------------
def _reference(subject, tokens):
    """The toy grammar's Spanish for an English sentence of its language (None otherwise)."""
    try:
        from .data.parse import parse
        from .data.syntax import spanish

        return spanish(parse(" ".join(tokens)))
    except (ValueError, KeyError):  # outside the grammar: the caller uses the model's output
        return None


def section_8_residuals(subject):
    """One sublayer's input, output, sum and normalized result; the gradient norms through the
    skip path and the branch of every block (GradientFlowRecorder)."""

    model, vocab = subject.model, subject.vocab
    d_model = model.config.d_model
    tokens = subject.tokens(BALL)
    block = model.encoder.layers[0].self_attn
    seen, _ = _encode_observed(subject, tokens, {"block": block})
    x, branch, s, out = (a[0] for a in seen["block"][0])
    word = tokens.index("ball") if "ball" in tokens else 0
    post_ln = not block.norm_first and block.residual != "rezero"
    names = {"x": "x (block input)", "branch": "F(x) (sublayer output)" if block.residual !=
             "rezero" else "α·F(x)", "s": "s = x + F(x)", "out": "LN(s) (block output)"
             if post_ln else "block output"}
    vectors = {"x": x[word], "branch": branch[word], "s": s[word], "out": out[word]}
    rows = [(names[key], _vector(v, 6), _num(v.mean(), 3), _num(v.std(), 3),
             _num(np.linalg.norm(v), 2)) for key, v in vectors.items()]
    figure, axes = new_figure(4, 1, (7.0, 1.3))
    limit = max(float(np.abs(v).max()) for v in vectors.values())
    for ax, (key, v) in zip(axes[:, 0], vectors.items()):
        ax.bar(np.arange(d_model), v, width=0.8,
               color=np.where(v >= 0, "tab:red", "tab:blue"))
        ax.set_ylim(-1.05 * limit, 1.05 * limit)
        ax.set_title(f"{names[key]}: mean {v.mean():.2f}, std {v.std():.2f}", fontsize=9)
        ax.tick_params(labelsize=7)
    axes[-1, 0].set_xlabel("dimension")
    figure.suptitle(f"encoder layer 1, self-attention block: the vectors of '{tokens[word]}'",
                    fontsize=10)
    figures = [_save(subject, figure, "s8_residual_vectors.png")]

    # gradients: one teacher-forced pass on the sentence and its translation
    target = _reference(subject, tokens)
    if target is not None and not vocab.unknown(target):
        target_note = f"the toy grammar's translation {_code(' '.join(target))}"
        target_ids = vocab.encode(target)
    else:
        produced, _, _ = _greedy(subject, tokens)
        target_ids = [i for i in produced if i != vocab.eos_id]
        target_note = "the model's own translation"
    tgt_in = mg.tensor([[vocab.bos_id] + target_ids], dtype="int64", device=model.device)
    tgt_out = mg.tensor([target_ids + [vocab.eos_id]], dtype="int64", device=model.device)
    with GradientFlowRecorder(model, "illustrated") as recorder:
        loss = F.cross_entropy(model(subject.ids(tokens), tgt_in), tgt_out)
        loss.backward()
        recorder.end_pass()
    model.zero_grad()
    table_rows, panels = [], {}
    for stack in ("encoder", "decoder"):
        lines = {}
        for layer in range(1, len(getattr(model, stack).layers) + 1):
            for sublayer in ("self_attn", "cross_attn", "ffn"):
                values = {q: select(recorder.rows, stack=stack, layer=layer, sublayer=sublayer,
                                    quantity=q) for q in ("grad_out", "grad_skip",
                                                          "grad_branch", "grad_in")}
                if not values["grad_in"]:
                    continue
                values = {q: v[0]["value"] for q, v in values.items()}
                table_rows.append((stack, layer, f"`{sublayer}`",
                                   *[f"{values[q]:.2e}" for q in ("grad_out", "grad_skip",
                                                                  "grad_branch", "grad_in")]))
                for q, label in (("grad_skip", "skip"), ("grad_branch", "branch")):
                    xs, ys = lines.setdefault(f"{sublayer} {label}", ([], []))
                    xs.append(layer)
                    ys.append(values[q])
        panels[stack] = lines
    positive = all(v > 0 for lines in panels.values() for _, ys in lines.values() for v in ys)
    figure = plot_depth_profiles(panels, "gradient norm through the skip path and the branch",
                                 log_y=positive)
    for ax in figure.axes:
        if ax.get_xlabel() == "layer":
            ax.set_xticks(list(range(1, max(len(model.encoder.layers),
                                            len(model.decoder.layers)) + 1)))
    figures.append(_save(subject, figure, "s8_gradient_paths.png"))
    explain_norm = ("LayerNorm then rescales the sum: it subtracts the vector's mean, divides by "
                    "its standard deviation (so the result has mean 0 and standard deviation 1), "
                    "and applies a learned per-dimension scale and shift (γ, β), which is why "
                    "the last row's statistics are not exactly 0 and 1"
                    if post_ln else "In this pre-LN model the LayerNorm sits inside the branch "
                    "(F is applied to LN(x)) and the block's output is the sum s itself")
    post_ln_note = (" Under post-LN, the LayerNorm's backward sits between the block's output "
                    "and s, so ‖∂L/∂out‖ and ‖∂L/∂s‖ differ." if post_ln else "")
    text = f"""
Every sublayer sits inside a residual connection: the block adds the sublayer's output to its
own input, s = x + F(x), so a layer only has to learn a correction to what it receives. The
paper then normalizes the sum, LN(s) (post-LN). Here are the four vectors of
{_code(tokens[word])} in the first encoder layer's self-attention block, for {_code(BALL)}
(each of shape `({d_model},)`; the block works on `(1, {len(tokens)}, {d_model})`). {explain_norm}.

{_table(["vector", "values (first 6)", "mean", "std", "norm"], rows)}

{_image(figures[0], "residual vectors")}

The skip path matters most for the gradient. Backpropagating through s = x + F(x) sends
∂L/∂s to x twice: unchanged through the identity (the "skip" path), and multiplied by the
sublayer's Jacobian through F (the "branch"); ∂L/∂x is their sum. The study tools'
`GradientFlowRecorder` measured both, for every block, in one teacher-forced pass on
{_code(BALL)} with {target_note} as the target (cross-entropy {loss.item():.3f}; norms over the
whole pass):

{_table(["stack", "layer", "sublayer", "‖∂L/∂out‖", "‖skip‖ = ‖∂L/∂s‖", "‖branch‖",
         "‖∂L/∂x‖"], table_rows)}

{_image(figures[1], "gradient norms through skip and branch")}

The skip path hands ∂L/∂s to x unchanged, so the gradient at x always contains it in full,
whatever the sublayer's weights do; this is what lets deep stacks train. The branch adds a
contribution of its own, whose size depends on the sublayer's weights (it can point against the
skip's, which is why ‖∂L/∂x‖ is not the sum of the two norms).{post_ln_note}
"""
    return Section(8, "Residual connections and LayerNorm", text + subject.unknown_note(tokens),
                   figures)


# ----- section 9 ----------------------------------------------------------------------------------
def section_9_decoder(subject):
    """Greedy decoding step by step: each step's input, its cross-attention over the source and
    the top-5 words of the final linear + softmax."""

    model, vocab = subject.model, subject.vocab
    tokens = subject.tokens(CAT)
    produced, logits, weights = _greedy(subject, tokens, with_attention=True)
    steps = min(len(produced), MAX_STEPS_SHOWN)
    assert np.array_equal(logits.argmax(axis=-1), produced), \
        "section 9: greedy decoding did not pick the most probable word at every step"
    layers = len(model.decoder.layers)
    cross = np.stack([np.concatenate([w[0, :, 0] for w in
                                      weights[("decoder", layer, "cross_attn")][:steps]])
                      .reshape(steps, model.config.n_heads, len(tokens)).transpose(1, 0, 2)
                      for layer in range(1, layers + 1)])  # (layers, heads, steps, src_len)
    produced_words = _words(vocab, produced)[:steps]
    source_labels = _labels(tokens)
    rows = []
    for t in range(steps):
        shifted = logits[t] - logits[t].max()
        probabilities = np.exp(shifted) / np.exp(shifted).sum()
        top = np.argsort(probabilities)[::-1][:5]
        prefix = _words(vocab, [vocab.bos_id] + produced[:t])
        prefix = " ".join(prefix if len(prefix) <= 6 else ["…"] + prefix[-5:])
        attended = cross[-1, :, t].mean(axis=0)
        rows.append((t + 1, _code(prefix),
                     ", ".join(f"{_code(vocab.id_to_token(int(i)))} {_weight(probabilities[i])}"
                               for i in top),
                     f"**{_code(produced_words[t])}**",
                     f"{_code(source_labels[int(attended.argmax())])} {attended.max():.2f}"))
    heads = model.config.n_heads
    figure = plot_attention(cross.reshape(layers * heads, steps, len(tokens)), produced_words,
                            source_labels, "cross-attention at each decoding step",
                            panel_titles=[f"layer {layer}, head {h}"
                                          for layer in range(1, layers + 1)
                                          for h in range(1, heads + 1)],
                            xlabel="source word", ylabel="word produced at that step")
    name = _save(subject, figure, "s9_cross_attention.png")
    translation = " ".join(vocab.decode(produced))
    text = f"""
The encoder runs once: {_code(CAT)} becomes a `(1, {len(tokens)}, {model.config.d_model})`
memory. Each decoder layer's cross-attention projects that memory into its own keys and values
(computed once and cached) and queries it with the decoder's own vectors. The decoder then
writes the translation one word per step. It starts from `<bos>`; at each step its masked
self-attention sees only the words written so far, and its last vector goes through the final
linear layer (`({model.config.d_model}, {model.config.tgt_vocab_size})`: one score, or logit,
per vocabulary word) and a softmax. Greedy decoding keeps the most probable word, feeds it back
as the next input, and stops at `<eos>`. (With the cache, only the newest word is fed to the
decoder; the keys and values of the earlier ones are kept from the steps before.)

Result: **{_code(translation)}**{
f" ({len(produced)} steps; the first {steps} are shown)" if steps < len(produced) else ""}.

{_table(["step", "decoder input so far", "top 5 of softmax(linear(·))", "chosen",
         f"most attended source word (layer {layers}, mean of heads)"], rows)}

Each row of the maps below is one step: where the query of the word being produced looked in
the source, per decoder layer and head.

{_image(name, "cross-attention per decoding step")}
"""
    return Section(9, "The decoder, one step at a time", text + subject.unknown_note(tokens),
                   [name])


SECTIONS = (section_1_stacks, section_2_embeddings, section_3_six_steps, section_4_matrices,
            section_5_heads, section_6_factor_matrix, section_7_positions, section_8_residuals,
            section_9_decoder)


def write_walkthrough(subject):
    """Run every section and write `subject.out/walkthrough.md`; returns (path, sections)."""
    sections = [make(subject) for make in SECTIONS]
    contents = "\n".join(f"{s.number}. [{s.title}](#{_anchor(s)})" for s in sections)
    header = f"""# The Illustrated Transformer, computed

The two articles this project grew from, Jay Alammar's "The Illustrated Transformer" and Ketan
Doshi's "Transformers Explained Visually" (part 4), explain the Transformer with pictures of
made-up numbers. This page follows their sections with real numbers: every table and figure
below was computed by `minigrad`/`transformer` when the page was generated.

{subject.origin}

Regenerate it with `{subject.command}`.

{contents}
"""
    path = subject.out / "walkthrough.md"
    path.write_text(header + "\n" + "\n".join(s.markdown() for s in sections), encoding="utf-8")
    produced = {name for section in sections for name in section.figures}
    for stale in subject.out.glob("s[1-9]_*.png"):  # figures of an older version of this page
        if stale.name not in produced:
            stale.unlink()
    return path, sections


def _anchor(section):
    """GitHub's anchor of a section heading."""
    text = f"{section.number}. {section.title}".lower()
    return "".join(c for c in text if c.isalnum() or c in " -_").replace(" ", "-")
