"""`explain(translator, sentence)`: every step of the walkthrough's nine sections on one
sentence, with the model's own numbers, as one JSON-able dict (schema 1, docs/illustrated/
data.md) that the explain page draws.

Where the numbers come from:

- the translation, and each decoding step's next-word probabilities and beam hypotheses:
  `Translator.translate_detailed`, the call translate.py makes, watched by its `on_step`;
- everything the model materializes (embeddings, q, k, v, attention weights, each head's z,
  their concatenation, W_O's output, the residual blocks' vectors, the FFN, the logits): one
  teacher-forced pass over the translation found (the decoder is causal: position t sees
  what it saw at step t), watched by a `Recording`, each value with the line that computed it;
- what the fused ops compute without keeping it (the attention scores q·kᵀ and their scaling;
  LayerNorm's mean and deviation): recomputed from the recorded inputs by the engine's
  reference kernels (`minigrad.backend.kernels.ArrayKernels`), their lines found by `inspect`.
"""

from __future__ import annotations

import math
import sys
from functools import cached_property
from typing import Any

import numpy as np

import minigrad as mg
from minigrad.backend import get_backend
from minigrad.backend.kernels import ArrayKernels

from ..decoding import BeamStep, beam_search_n_best, default_max_len, penalized_score
from ..model import Transformer
from ..positional import PositionalEncoding
from ..translator import Translator
from .page import SECTION_HEADING, TEMPLATE, split_template
from .recording import Code, Recording, code_at, code_of

SCHEMA = 1
SIGNIFICANT_DIGITS = 4
TOP_WORDS = 5  # §9: the most probable next words shown at each step


def section_titles() -> list[str]:
    """The nine headings of the walkthrough's template, in order (without their numbers)."""
    _, parts = split_template(TEMPLATE.read_text(encoding="utf-8"))
    return [SECTION_HEADING.match(part).group(2) for part in parts]  # type: ignore[union-attr]


def explain(translator: Translator, sentence: str, beam: int = 1,
            length_penalty: float = 0.6) -> dict:
    """The explanation of `sentence` (schema 1, docs/illustrated/data.md), decoded as
    translate.py decodes it with `--beam beam --length-penalty length_penalty`. ValueError
    (one line) for a sentence the model cannot read, a beam below 1 or a negative length
    penalty."""
    problem = translator.problem(sentence)
    if problem:
        raise ValueError(f"explain: {problem}")
    if beam < 1:
        raise ValueError(f"explain: beam must be 1 or more (1 is greedy decoding), got {beam}")
    if length_penalty < 0:
        raise ValueError(f"explain: length_penalty must be 0 or more, got {length_penalty}")
    return Explanation(translator, sentence, beam, length_penalty).as_dict()


def numbered(count: int) -> list[str]:
    """Labels of things counted from 1 (layers, heads)."""
    return [str(i) for i in range(1, count + 1)]


def indices(count: int) -> list[str]:
    """Labels of indices from 0 (a vector's numbers, positions)."""
    return [str(i) for i in range(count)]


def pick(axes: dict[str, list], *names: str) -> dict[str, list]:
    """The axes `names` of `axes`, in that order."""
    return {name: axes[name] for name in names}


def magnitude(*arrays: np.ndarray) -> float:
    """The largest |value| of `arrays`: a colour range they share."""
    return max(float(np.abs(a).max()) for a in arrays)


def numbers(array: Any, hidden: Any = None) -> list:
    """`array` as nested lists of floats rounded to SIGNIFICANT_DIGITS significant digits;
    None where `hidden` (a boolean array) is True or the value is not finite."""
    a = np.asarray(array, dtype=np.float64)
    finite = np.isfinite(a)
    exponent = np.zeros(a.shape)
    nonzero = finite & (a != 0)
    exponent[nonzero] = np.floor(np.log10(np.abs(a[nonzero])))
    decimals = (SIGNIFICANT_DIGITS - 1 - exponent).astype(np.int64)
    power = 10.0 ** np.abs(decimals)
    with np.errstate(invalid="ignore", over="ignore"):
        rounded = np.where(decimals >= 0, np.round(a * power) / power, np.round(a / power) * power)
    out = rounded.astype(object)
    out[~finite] = None
    if hidden is not None:
        out[np.broadcast_to(hidden, a.shape)] = None
    return out.tolist()


class Explanation:
    """One sentence decoded as translate.py decodes it (`translations`, best first, and each
    beam-search step in `steps`), the teacher-forced pass over the best translation recorded
    (`recording`), and the panels of the nine sections made from them (`as_dict`)."""

    def __init__(self, translator: Translator, sentence: str, beam: int,
                 length_penalty: float) -> None:
        self.translator, self.sentence = translator, sentence
        self.beam, self.length_penalty = beam, length_penalty
        self.model: Transformer = translator.model
        self.config, self.vocab = self.model.config, translator.vocab
        self.kernels = ArrayKernels(get_backend("cpu"))
        self.codes: dict[str, Code] = {}
        self.source = translator.tokenizer.source(sentence)
        self.source_ids = self.vocab.encode(self.source)
        self.max_len = default_max_len(self.model, len(self.source_ids))
        self._decode()
        self._record()

    # ----- running the model -----------------------------------------------------------------

    def _decode(self) -> None:
        """translate.py's decoding, each beam-search step kept with the line reporting it."""
        self.steps: list[BeamStep] = []
        reported: list[Code] = []

        def on_step(step: BeamStep) -> None:
            self.steps.append(step)
            reported.append(code_of(sys._getframe(1)))

        result = self.translator.translate_detailed(
            self.sentence, beam_size=self.beam, n_best=self.beam,
            length_penalty=self.length_penalty, max_len=self.max_len, on_step=on_step)
        self.step_code = reported[0]  # the line of beam search reporting its steps
        self.translations = result.translations
        best = self.translations[0]
        self.output_ids = self.vocab.encode(best.tokens)  # EOS last where produced
        self.output = best.tokens

    def _record(self) -> None:
        """The teacher-forced pass over the translation found, recorded."""
        src = mg.tensor([self.source_ids], dtype="int64", device=self.model.device)
        tgt_in = mg.tensor([[self.vocab.bos_id] + self.output_ids[:-1]], dtype="int64",
                           device=self.model.device)
        with mg.no_grad(), Recording(self.model) as recording:
            self.model(src, tgt_in)
        self.recording = recording
        self.decoder_input = [self.vocab.id_to_token(i) for i in
                              [self.vocab.bos_id] + self.output_ids[:-1]]

    def seen(self, module: str, name: str) -> np.ndarray:
        """What `module` named `name` in the recorded pass, the batch axis dropped."""
        return self.recording.value(module, name)[0]

    def code(self, where: Code) -> str:
        self.codes[where.key] = where
        return where.key

    def hook(self, module: str, name: str) -> str:
        """The code key of the line where `module` computed `name`."""
        return self.code(self.recording.code(module, name))

    # ----- attention, recomputed where the fused op keeps nothing ---------------------------

    def attention(self, stack: str, sublayer: str) -> dict[str, np.ndarray]:
        """Every layer's q, k, v, z (layers, heads, len, d_k), weights (layers, heads, len,
        k_len) as recorded, and the scores q·kᵀ and scaled scores recomputed by the reference
        kernel, with `recomputed`: the kernel's softmax of the scaled scores."""
        layers = len(getattr(self.model, stack).layers)
        found: dict[str, list] = {name: [] for name in
                                  ("q", "k", "v", "z", "weights", "scores", "scaled",
                                               "recomputed")}
        for number in range(layers):
            module = f"{stack}.layers.{number}.{sublayer}.sublayer"
            for name in ("q", "k", "v", "z", "weights"):
                found[name].append(self.seen(module, name))
            recomputed = self.scores(found["q"][-1], found["k"][-1], self.mask(stack, sublayer))
            for name, array in zip(("scores", "scaled", "recomputed"), recomputed):
                found[name].append(array)
        return {name: np.stack(arrays) for name, arrays in found.items()}

    def mask(self, stack: str, sublayer: str) -> np.ndarray | None:
        """What the pass hid from `sublayer` (True: hidden): the future, in the decoder's
        self-attention; nothing elsewhere (one sentence has no padding)."""
        if (stack, sublayer) != ("decoder", "self_attn"):
            return None
        length = len(self.output_ids)
        return np.triu(np.ones((length, length), dtype=bool), 1)

    def scores(self, q: np.ndarray, k: np.ndarray,
               mask: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(q·kᵀ, q·kᵀ/sqrt(d_k), their softmax) computed as the reference kernel does:
        `attention_weights`' product, then `scaled_masked_softmax` (which scales in place)."""
        scores = self.kernels.matmul(q, np.swapaxes(k, -1, -2))
        scaled = scores.copy()
        weights = self.kernels.scaled_masked_softmax(
            scaled, mask, scaled.dtype.type(1 / math.sqrt(q.shape[-1])))
        return scores, scaled, weights

    def kernel(self, function: Any, text: str) -> str:
        """The code key of the line of a reference kernel holding `text`."""
        return self.code(code_at(function, text))

    # ----- panels ----------------------------------------------------------------------------

    def cells(self, panel: str, title: str, caption: str, code: str, axes: dict[str, list],
              values: Any, choose: tuple[str, ...] = (), scale: str = "diverging",
              hidden: Any = None, shared: float | None = None) -> dict:
        """A "cells" panel: `axes` {name: labels} in the order of `values`' axes; `shared`: a
        magnitude whose colour range [-shared, shared] the panel shares with others."""
        values = np.asarray(values)
        shape = tuple(len(labels) for labels in axes.values())
        if values.shape != shape:
            raise AssertionError(f"panel {panel}: values {values.shape} but axes {shape}")
        found = {"id": panel, "title": title, "caption": caption, "code": code, "kind": "cells",
                 "axes": list(axes), "choose": list(choose),
                 "labels": {name: [str(label) for label in labels]
                            for name, labels in axes.items()},
                 "values": numbers(values, hidden), "scale": scale}
        if shared is not None:
            found["range"] = numbers([-shared, shared])
        return found

    @staticmethod
    def table(panel: str, title: str, caption: str, code: str, columns: list[str],
              rows: list, highlight: list | None = None,
              chosen: dict[str, list[str]] | None = None) -> dict:
        """A "table" panel; with `chosen` ({axis: labels}) `rows` and `highlight` are nested
        lists indexed by those axes, in order (one table per choice)."""
        found: dict[str, Any] = {
            "id": panel, "title": title, "caption": caption, "code": code, "kind": "table",
            "columns": columns, "rows": rows, "highlight": highlight or []}
        if chosen:
            found.update(choose=list(chosen), labels=chosen)
        return found

    @staticmethod
    def text(panel: str, title: str, caption: str, code: str, text: str) -> dict:
        return {"id": panel, "title": title, "caption": caption, "code": code, "kind": "text",
                "text": text}

    # ----- the document ----------------------------------------------------------------------

    def as_dict(self) -> dict:
        makers = (self.section_1, self.section_2, self.section_3, self.section_4,
                  self.section_5, self.section_6, self.section_7, self.section_8,
                  self.section_9)
        sections = [{"number": number, "title": title, "panels": make()}
                    for number, (title, make) in enumerate(zip(section_titles(), makers),
                                                           start=1)]
        config, best = self.config, self.translations[0]
        return {
            "schema": SCHEMA,
            "model": {"d_model": config.d_model, "n_heads": config.n_heads,
                      "d_k": config.d_head, "d_ff": config.d_ff,
                      "encoder_layers": config.n_encoder_layers,
                      "decoder_layers": config.n_decoder_layers, "vocab_size": len(self.vocab),
                      "norm_first": config.norm_first, "residual": config.residual,
                      "positional": config.positional,
                      "tokenizer": "subword" if self.translator.tokenizer.kind == "subword"
                      else "words"},
            "decoding": {"beam": self.beam, "length_penalty": self.length_penalty,
                         "max_len": self.max_len},
            "sentence": self.sentence, "source_tokens": list(self.source),
            "unknown": self.vocab.unknown(self.source),
            "unseen": self.vocab.unseen_as_source(self.source),
            "translation": {"text": best.text, "tokens": list(best.tokens),
                            "log_prob": round(best.log_prob, 6), "score": round(best.score, 6),
                            "n_best": [{"text": t.text, "tokens": list(t.tokens),
                                        "log_prob": round(t.log_prob, 6),
                                        "score": round(t.score, 6)}
                                       for t in self.translations]},
            "code": {key: code.as_dict() for key, code in self.codes.items()},
            "sections": sections}

    # ----- §1 ------------------------------------------------------------------------------

    def section_1(self) -> list[dict]:
        best, model, config = self.translations[0], self.model, self.config
        stacks = [["encoder", config.n_encoder_layers, "self-attention, feed-forward network",
                   model.encoder.num_parameters()],
                  ["decoder", config.n_decoder_layers, "masked self-attention, "
                   "encoder-decoder attention, feed-forward network",
                   model.decoder.num_parameters()],
                  ["final linear layer", 1, f"d_model {config.d_model} → {len(self.vocab)} "
                   "scores, one per word", model.generator.num_parameters()]]
        return [
            self.table("s1.translation", "The black box",
                       "The sentence in, its translation out, as translate.py gives it with the "
                       "same decoding options; the translation's log-probability and its score "
                       "(the log-probability divided by the length penalty).",
                       self.code(self.step_code),
                       ["sentence", "translation", "log-probability", "score"],
                       [[self.sentence, best.text, round(best.log_prob, 4),
                         round(best.score, 4)]]),
            self.table("s1.stacks", "The stacks",
                       f"An encoder of {config.n_encoder_layers} layers and a decoder of "
                       f"{config.n_decoder_layers}, each layer working on vectors of "
                       f"d_model = {config.d_model} numbers; parameters counted per part "
                       "(shared weights counted in each part that uses them).",
                       self.code(code_at(Transformer.__init__, "self.encoder = Encoder(")),
                       ["part", "layers", "each layer", "parameters"], stacks)]

    # ----- §2 ------------------------------------------------------------------------------

    def section_2(self) -> list[dict]:
        d_model, words = self.config.d_model, self.source
        unknown = set(self.vocab.unknown(words))
        axes = {"word": words, "dim": indices(d_model)}
        tokens = self.table(
            "s2.tokens", "Tokens and ids",
            "The sentence cut into tokens" + (" (subword pieces, ▁ marking a word's start)"
                                              if self.translator.tokenizer.kind == "subword"
                                              else "") + ", each with its row number in the "
            "embedding table; a token the vocabulary lacks is read as <unk>.",
            self.hook("encoder", "embedding"), ["position", "token", "id", "in the vocabulary"],
            [[i, t, int(n), "no: read as <unk>" if t in unknown else "yes"]
             for i, (t, n) in enumerate(zip(words, self.source_ids))],
            [i for i, t in enumerate(words) if t in unknown])
        table = self.model.encoder.positional.table.numpy()[:len(words)]
        embedding, scaled, summed = (self.seen("encoder", name)
                                     for name in ("embedding", "scaled", "with_positions"))
        shared = magnitude(embedding, scaled, table, summed)
        return [
            tokens,
            self.cells("s2.embedding", "Embeddings",
                       f"Each token's row of the embedding table: {d_model} numbers.",
                       self.hook("encoder", "embedding"), axes, embedding, shared=shared),
            self.cells("s2.scaled", "Embeddings × √d_model",
                       f"The rows multiplied by √d_model = {math.sqrt(d_model):.4g} (paper "
                       "§3.4).", self.hook("encoder", "scaled"), axes, scaled, shared=shared),
            self.cells("s2.positions", "Positional encodings",
                       "The vector added at each position (paper §3.5), the same whatever the "
                       "word.", self.code(code_at(PositionalEncoding.forward, "self.table[")),
                       axes, table, shared=shared),
            self.cells("s2.sum", "Their sum: the encoder's input",
                       "Scaled embedding plus positional encoding: the vectors that enter the "
                       "first encoder layer.", self.hook("encoder", "with_positions"), axes,
                       summed, shared=shared)]

    # ----- §3 and §4: one layer's self-attention -------------------------------------------

    @cached_property
    def encoder_attention(self) -> dict[str, np.ndarray]:
        """`attention` of the encoder's self-attention (§3 to §6 show it)."""
        return self.attention("encoder", "self_attn")

    def encoder_inner(self) -> np.ndarray:
        """(layers, words, d_model): what each encoder layer's self-attention read."""
        return np.stack([self.seen(f"encoder.layers.{n}.self_attn", "inner")
                         for n in range(self.config.n_encoder_layers)])

    def attention_axes(self) -> dict[str, list]:
        """The axes of the encoder's self-attention: layer, head, word (the query's), key (the
        word attended to), dim (of a head's vectors)."""
        return {"layer": numbered(self.config.n_encoder_layers),
                "head": numbered(self.config.n_heads), "word": self.source, "key": self.source,
                "dim": indices(self.config.d_head)}

    def section_3(self) -> list[dict]:
        a, d_k = self.encoder_attention, self.config.d_head
        module = "encoder.layers.0.self_attn.sublayer"
        axes = self.attention_axes()
        one = ("layer", "head", "word")
        scores_code = self.kernel(ArrayKernels.attention_weights, "scores = self.matmul(")
        return [
            self.cells("s3.input", "The word's vector",
                       "What the layer's self-attention reads for each word: the layer's input"
                       + (", normalized (pre-LN)" if self.config.norm_first else "") + ".",
                       self.hook("encoder.layers.0.self_attn", "inner"),
                       {"layer": axes["layer"], "word": axes["word"],
                        "dim": indices(self.config.d_model)},
                       self.encoder_inner(), ("layer", "word")),
            self.cells("s3.query", "Step 1: its query vector",
                       f"q = x W_Q for the chosen head: {d_k} numbers (d_k).",
                       self.hook(module, "q"), pick(axes, "layer", "head", "word", "dim"),
                       a["q"], one),
            self.cells("s3.key", "Step 1: every word's key",
                       "k = x W_K for every word of the sentence.", self.hook(module, "k"),
                       pick(axes, "layer", "head", "key", "dim"), a["k"],
                       ("layer", "head")),
            self.cells("s3.value", "Step 1: every word's value",
                       "v = x W_V for every word of the sentence.", self.hook(module, "v"),
                       pick(axes, "layer", "head", "key", "dim"), a["v"],
                       ("layer", "head")),
            self.cells("s3.scores", "Step 2: scores",
                       "The query's dot product with each word's key, q·k: computed inside "
                       "the fused attention op and recomputed here by its reference kernel.",
                       scores_code, pick(axes, "layer", "head", "word", "key"),
                       a["scores"], one),
            self.cells("s3.scaled", f"Step 3: divided by √d_k = {math.sqrt(d_k):.4g}",
                       "The scores scaled, so that their softmax is not too peaked (paper "
                       "§3.2.1).",
                       self.kernel(ArrayKernels.scaled_masked_softmax, "scores *= scale"),
                       pick(axes, "layer", "head", "word", "key"), a["scaled"], one),
            self.cells("s3.softmax", "Step 4: softmax",
                       "The scaled scores turned into weights that are positive and add up to "
                       "1: how much the word attends to each word (the model's recorded "
                       "attention weights).",
                       self.kernel(ArrayKernels.scaled_masked_softmax, "return self.softmax("),
                       pick(axes, "layer", "head", "word", "key"), a["weights"], one,
                       "probability"),
            self.cells("s3.weighted", "Step 5: weighted values",
                       "Each word's value vector times its weight: the fused op does this "
                       "and step 6 in one product (weights × V).",
                       self.kernel(ArrayKernels.attention, "return self.matmul(attended, v)"),
                       pick(axes, "layer", "head", "word", "key", "dim"),
                       a["weights"][..., None] * a["v"][:, :, None], one),
            self.cells("s3.z", "Step 6: their sum, z",
                       "The sum of the weighted values: the head's output for this word.",
                       self.hook(module, "z"), pick(axes, "layer", "head", "word", "dim"),
                       a["z"], one)]

    def section_4(self) -> list[dict]:
        a = self.encoder_attention
        module = "encoder.layers.0.self_attn.sublayer"
        axes = self.attention_axes()
        matrix = ("layer", "head")
        square = pick(axes, "layer", "head", "word", "key")
        rows = pick(axes, "layer", "head", "word", "dim")
        return [
            self.cells("s4.x", "X", "One row per word: the input of the layer's "
                       "self-attention.", self.hook("encoder.layers.0.self_attn", "inner"),
                       {"layer": axes["layer"], "word": axes["word"],
                        "dim": indices(self.config.d_model)},
                       self.encoder_inner(), ("layer",)),
            self.cells("s4.q", "Q = X W_Q", "Every word's query at once, for the chosen head.",
                       self.hook(module, "q"), rows, a["q"], matrix),
            self.cells("s4.k", "K = X W_K", "Every word's key.", self.hook(module, "k"), rows,
                       a["k"], matrix),
            self.cells("s4.v", "V = X W_V", "Every word's value.", self.hook(module, "v"),
                       rows, a["v"], matrix),
            self.cells("s4.scaled", "Q Kᵀ / √d_k",
                       "All the scaled scores at once: row = query word, column = key word.",
                       self.kernel(ArrayKernels.scaled_masked_softmax, "scores *= scale"),
                       square, a["scaled"], matrix),
            self.cells("s4.softmax", "softmax(Q Kᵀ / √d_k)",
                       "Each row's softmax: the attention weights.",
                       self.kernel(ArrayKernels.scaled_masked_softmax, "return self.softmax("),
                       square, a["weights"], matrix, "probability"),
            self.cells("s4.z", "Z = softmax(Q Kᵀ / √d_k) V", "Every word's z at once.",
                       self.hook(module, "z"), rows, a["z"], matrix)]

    # ----- §5 ------------------------------------------------------------------------------

    def section_5(self) -> list[dict]:
        a, config = self.encoder_attention, self.config
        module = "encoder.layers.0.self_attn.sublayer"
        axes = self.attention_axes()
        layers = config.n_encoder_layers
        both = ("layer", "word")
        wide = {"layer": axes["layer"], "word": axes["word"], "dim": indices(config.d_model)}

        def per_layer(name: str) -> np.ndarray:
            return np.stack([self.seen(f"encoder.layers.{n}.self_attn.sublayer", name)
                             for n in range(layers)])
        return [
            self.cells("s5.weights", "Every head's attention",
                       "The chosen word's attention weights in each head: each head attends "
                       "its own way.", self.hook(module, "weights"),
                       pick(axes, "layer", "word", "head", "key"),
                       a["weights"].transpose(0, 2, 1, 3), both, "probability"),
            self.cells("s5.z", "Every head's z", f"The {config.n_heads} heads' outputs for "
                       "the chosen word.", self.hook(module, "z"),
                       pick(axes, "layer", "word", "head", "dim"),
                       a["z"].transpose(0, 2, 1, 3), both),
            self.cells("s5.concat", "Concatenated",
                       f"The heads' z side by side: {config.n_heads} × {config.d_head} = "
                       f"{config.d_model} numbers.", self.hook(module, "concat"), wide,
                       per_layer("concat"), both),
            self.cells("s5.output", "× W_O",
                       "The concatenation times W_O (plus its bias): the self-attention's "
                       "output for the word.", self.hook(module, "output"), wide,
                       per_layer("output"), both)]

    # ----- §6 ------------------------------------------------------------------------------

    def section_6(self) -> list[dict]:
        a = self.encoder_attention
        axes = self.attention_axes()
        code = self.kernel(ArrayKernels.attention_weights, "scores = self.matmul(")
        products = a["q"][:, :, :, None, :] * a["k"][:, :, None, :, :]
        return [
            self.cells("s6.factor", "The factor matrix Q Kᵀ",
                       "The dot products before scaling: row = query word, column = key word; "
                       "high where the two vectors point the same way.", code,
                       pick(axes, "layer", "head", "word", "key"), a["scores"],
                       ("layer", "head")),
            self.cells("s6.products", "One dot product taken apart",
                       "q and k multiplied number by number: pairs of the same sign push the "
                       "sum (the score) up, opposite signs pull it down.", code,
                       pick(axes, "layer", "head", "word", "key", "dim"), products,
                       ("layer", "head", "word", "key"))]

    # ----- §7 ------------------------------------------------------------------------------

    def section_7(self) -> list[dict]:
        length = max(len(self.source), len(self.output_ids))
        table = self.model.encoder.positional.table.numpy()[:length].astype(np.float64)
        positions = indices(length)
        code = self.code(code_at(PositionalEncoding.forward, "self.table["))
        learned = self.config.positional == "learned"
        kind = {"sinusoidal": "sines and cosines interleaved (the paper's)",
                "sinusoidal-concat": "all sines, then all cosines (the first article's figure)",
                "learned": "learned in training (the encoder's table; the decoder has its "
                           "own)"}[self.config.positional]
        return [
            self.cells("s7.positions", "This sentence's positions",
                       f"The vector added at each position of the source and the translation, "
                       f"{self.config.d_model} numbers each: {kind}.", code,
                       {"position": positions, "dim": indices(self.config.d_model)}, table),
            self.cells("s7.similarity", "Position against position",
                       "The dot product of two positions' vectors" + (
                           ": learned vectors need not make it depend on the distance alone."
                           if learned else ": with sines and cosines it depends only on their "
                           "distance."), code,
                       {"position": positions, "other": positions}, table @ table.T)]

    # ----- §8 ------------------------------------------------------------------------------

    def section_8(self) -> list[dict]:
        config = self.config
        layers, names = config.n_encoder_layers, ("self_attn", "ffn")
        blocks = [[f"encoder.layers.{n}.{name}" for name in names] for n in range(layers)]
        first = blocks[0][0]

        def stacked(name: str) -> np.ndarray:
            return np.stack([np.stack([self.seen(b, name) for b in row]) for row in blocks])
        axes = {"layer": numbered(layers), "sublayer": ["self-attention", "feed-forward"],
                "word": self.source, "dim": indices(config.d_model)}
        chosen = ("layer", "sublayer", "word")
        block = self.model.encoder.layers[0].self_attn
        inputs, branches, sums = stacked("input"), stacked("branch"), stacked("sum")
        shared = magnitude(inputs, branches, sums)
        panels = [
            self.cells("s8.x", "x", "The block's input.", self.hook(first, "input"), axes,
                       inputs, chosen, shared=shared),
            self.cells("s8.branch", "F(x)", "The sublayer's output" +
                       (" (computed from LN(x): pre-LN)" if config.norm_first else "") +
                       (", times the learned α (ReZero)" if config.residual == "rezero"
                        else "") + ".",
                       self.hook(first, "branch"), axes, branches, chosen, shared=shared)]
        if block.has_skip:
            panels.append(self.cells("s8.sum", "x + F(x)", "The residual connection: the input "
                                     "added back.", self.hook(first, "sum"), axes, sums,
                                     chosen, shared=shared))
        if not block.has_norm:
            panels.append(self.text("s8.no_norm", "No LayerNorm",
                                    "This model's blocks normalize nothing.",
                                    self.hook(first, "output"),
                                    f"residual = {config.residual!r}: the blocks have no "
                                    "LayerNorm; the output is the sum itself."))
        else:
            normed, result = ("input", "inner") if config.norm_first else ("sum", "output")
            rows = stacked(normed)
            normalized, rstd = self.kernels.layer_norm(rows.reshape(-1, config.d_model),
                                                       block.norm.eps)
            statistics = np.stack([rows.mean(axis=-1), 1 / rstd.reshape(rows.shape[:-1])],
                                  axis=-1)
            what = "x (pre-LN: before the sublayer)" if config.norm_first else \
                "x + F(x)" if block.has_skip else "F(x)"
            panels += [
                self.cells("s8.statistics", "Its mean and deviation",
                           f"The mean and standard deviation (√(variance + ε)) of {what}, over "
                           "its d_model numbers.",
                           self.kernel(ArrayKernels.layer_norm, "rstd = 1 /"),
                           {**{k: axes[k] for k in chosen},
                            "statistic": ["mean", "deviation"]}, statistics, chosen),
                self.cells("s8.normalized", "(v − mean) / deviation",
                           "Normalized: mean 0, deviation 1.",
                           self.kernel(ArrayKernels.layer_norm, "centered *= rstd"), axes,
                           normalized.reshape(rows.shape), chosen),
                self.cells("s8.layer_norm", "LayerNorm's output",
                           "Then scaled and shifted by LayerNorm's learned weight and bias"
                           + (": what the sublayer reads." if config.norm_first
                              else ": the block's output."), self.hook(first, result), axes,
                           stacked(result), chosen)]
        ffn = [f"encoder.layers.{n}.ffn.sublayer" for n in range(layers)]
        hidden = {"layer": axes["layer"], "word": self.source, "unit": indices(config.d_ff)}
        relu = config.activation == "relu"
        return panels + [
            self.cells("s8.ffn_hidden", "Feed-forward: " + ("max(0, x W₁ + b₁)" if relu
                                                            else "GELU(x W₁ + b₁)"),
                       f"The hidden layer of the position-wise network: {config.d_ff} "
                       "numbers" + (", negative ones cut to 0." if relu else "."),
                       self.hook(ffn[0], "hidden"), hidden,
                       np.stack([self.seen(m, "hidden") for m in ffn]), ("layer", "word")),
            self.cells("s8.ffn_output", "Feed-forward: · W₂ + b₂",
                       "Back to d_model numbers: the sublayer's output F(x).",
                       self.hook(ffn[0], "output"),
                       {"layer": axes["layer"], "word": self.source, "dim": axes["dim"]},
                       np.stack([self.seen(m, "output") for m in ffn]), ("layer", "word"))]

    # ----- §9 ------------------------------------------------------------------------------

    def chosen_log_probs(self) -> list[np.ndarray]:
        """Per output position: the log-probabilities of the next word after the best
        translation's prefix, from the decoding step that extended it (among the open beams
        the step started from, the one holding that prefix)."""
        found, before = [], np.zeros((self.beam, 0), dtype=np.int64)
        for t, step in enumerate(self.steps[:len(self.output_ids)]):
            row = next(j for j in range(self.beam) if before[j].tolist() ==
                       self.output_ids[:t]) if t else 0
            found.append(step.log_probs[0, row])
            before = step.tokens[0]
        return found

    def section_9(self) -> list[dict]:
        config, vocab = self.config, self.vocab
        steps = [f"{t + 1}: {w}" for t, w in enumerate(self.output)]
        decoder_layers = numbered(config.n_decoder_layers)
        heads = numbered(config.n_heads)
        own = self.attention("decoder", "self_attn")
        cross = self.attention("decoder", "cross_attn")
        log_probs = self.chosen_log_probs()
        step_code = self.code(self.step_code)
        chosen = [float(lp[i]) for lp, i in zip(log_probs, self.output_ids)]
        table = [[t + 1, self.decoder_input[t], self.output[t], round(math.exp(p), 4),
                  round(p, 4)] for t, p in enumerate(chosen)]
        logits = self.seen("", "logits")  # (len, vocab), the recorded pass
        top, highlight = [], []
        for t, lp in enumerate(log_probs):
            order = np.argsort(-lp, kind="stable")[:TOP_WORDS]
            top.append([[rank, vocab.id_to_token(int(i)), round(float(logits[t, i]), 4),
                         round(float(np.exp(lp[i])), 4)] for rank, i in enumerate(order, 1)])
            highlight.append([r for r, i in enumerate(order) if i == self.output_ids[t]])
        panels = [
            self.table("s9.steps", "One word at a time",
                       "At each step the decoder reads the words so far (starting from <bos>) "
                       "and gives the next one; decoding stops at <eos>.", step_code,
                       ["step", "input", "word chosen", "probability", "log-probability"],
                       table),
            self.cells("s9.self_attention", "Masked self-attention",
                       "The step's attention over the output so far: later positions are "
                       "hidden (blank) and get no weight.",
                       self.hook("decoder.layers.0.self_attn.sublayer", "weights"),
                       {"layer": decoder_layers, "head": heads, "step": steps,
                        "position": self.decoder_input},
                       own["weights"], ("layer", "head", "step"), "probability",
                       self.mask("decoder", "self_attn")),
            self.cells("s9.cross_attention", "Encoder-decoder attention",
                       "The step's attention over the source words: queries from the decoder, "
                       "keys and values from the encoder's output.",
                       self.hook("decoder.layers.0.cross_attn.sublayer", "weights"),
                       {"layer": decoder_layers, "head": heads, "step": steps,
                        "word": self.source},
                       cross["weights"], ("layer", "head", "step"), "probability"),
            self.cells("s9.hidden", "The decoder's output vector",
                       "What the final linear layer reads at this step.",
                       self.hook("decoder", "output"),
                       {"step": steps, "dim": indices(config.d_model)},
                       self.seen("decoder", "output"), ("step",)),
            self.table("s9.top_words", "Final linear layer and softmax",
                       f"The {TOP_WORDS} most probable next words at this step: their score "
                       "(logit) from the final linear layer and their probability after the "
                       "softmax; the word chosen is highlighted.",
                       self.code(code_at(beam_search_n_best, "F.log_softmax(")),
                       ["rank", "word", "logit", "probability"], top, highlight,
                       {"step": steps})]
        if self.beam > 1:
            panels += self.beam_panels(step_code)
        return panels

    def beam_panels(self, step_code: str) -> list[dict]:
        """The hypotheses kept at each step of the search, then the n-best list."""
        words = self.vocab.id_to_token
        rows: list[list] = []
        highlight: list[list[int]] = []
        for step in self.steps:
            t = step.step
            kept: list[list] = []  # the table's rows at this step
            marked: list[int] = []
            for j in np.nonzero(np.isfinite(step.scores[0]))[0]:
                if step.tokens[0, j].tolist() == self.output_ids[:t]:
                    marked.append(len(kept))
                score = float(step.scores[0, j])
                kept.append(["open", " ".join(words(int(i)) for i in step.tokens[0, j]),
                             round(score, 4),
                             round(penalized_score(score, t, self.length_penalty), 4)])
            for hypothesis in (h for h in step.finished[0] if len(h.tokens) == t):  # new now
                if hypothesis.tokens.tolist() == self.output_ids:
                    marked.append(len(kept))
                kept.append(["finished", " ".join(words(int(i)) for i in hypothesis.tokens),
                             round(hypothesis.log_prob, 4), round(hypothesis.score, 4)])
            rows.append(kept)
            highlight.append(marked)
        n_best = [[rank, t.text, round(t.log_prob, 4), round(t.score, 4)]
                  for rank, t in enumerate(self.translations, start=1)]
        return [
            self.table("s9.beam", f"Beam search, {self.beam} hypotheses at a time",
                       "At each step every open hypothesis is extended by every word; the "
                       f"{self.beam} best open ones are kept, and those ending in <eos> "
                       "finish, scored by log-probability / ((5 + length) / 6)^"
                       f"{self.length_penalty:g} (GNMT's length penalty). The translation "
                       "found and its prefixes are highlighted.", step_code,
                       ["state", "hypothesis", "log-probability", "score"], rows, highlight,
                       {"search step": numbered(len(self.steps))}),
            self.table("s9.n_best", "The n-best list",
                       "The finished hypotheses, best score first: the first is the "
                       "translation.", step_code, ["rank", "translation", "log-probability",
                                                   "score"], n_best, [0])]
