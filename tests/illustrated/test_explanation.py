"""explain(): the numbers of the live Illustrated Transformer, on small fresh models (word-level,
the copy task, subword pieces; post-LN, pre-LN, no residual, learned positions): the recomputed
scores give the recorded weights, one head equals NumPy with the model's weights, the
translation is translate.py's, every panel's line lies in its function, the JSON round-trips."""

import importlib
import importlib.util
import inspect
import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
from transformer import Transformer, TransformerConfig, Translator
from transformer.builders import fresh_setup
from transformer.data import Vocab
from transformer.data.parse import parse
from transformer.data.subword import SubwordTokenizer
from transformer.data.syntax import spanish
from transformer.data.tokenizer import WORDS
from transformer.data.vocab import SPECIALS
from transformer.illustrated import ANIMAL, BALL, CAT
from transformer.illustrated.explanation import Explanation, explain, numbers, section_titles
from transformer.illustrated.page import SECTION_HEADING, TEMPLATE

TINY = {"d_model": 16, "n_heads": 2, "d_ff": 32, "n_encoder_layers": 2, "n_decoder_layers": 2,
        "dropout": 0.0, "max_len": 64}
SOURCES = (BALL, CAT, ANIMAL)
TARGETS = tuple(" ".join(spanish(parse(s))) for s in SOURCES)


def word_translator(seed=0, **options):
    """A fresh tiny model on the words of the articles' sentences and their translations."""
    words = sorted({w for s in SOURCES + TARGETS for w in WORDS.source(s)})
    vocab = Vocab([*SPECIALS, *words])
    mg.manual_seed(seed)
    model = Transformer(TransformerConfig(src_vocab_size=len(vocab), tgt_vocab_size=len(vocab),
                                          **{**TINY, **options}))
    return Translator(model, vocab, WORDS)


def subword_translator():
    tokenizer = SubwordTokenizer.train(SOURCES * 20, TARGETS * 20, 40)
    pieces = {p for s in SOURCES for p in tokenizer.source(s)} | \
        {p for t in TARGETS for p in tokenizer.target(t)}
    vocab = Vocab([*SPECIALS, *sorted(pieces)])
    mg.manual_seed(1)
    model = Transformer(TransformerConfig(src_vocab_size=len(vocab), tgt_vocab_size=len(vocab),
                                          **TINY))
    return Translator(model, vocab, tokenizer)


def copy_translator():
    vocab, config = fresh_setup("copy", TINY)
    mg.manual_seed(2)
    return Translator(Transformer(config), vocab, WORDS)


@pytest.fixture(scope="module")
def words():
    return word_translator()


VARIANTS = {"post-LN": {}, "pre-LN": {"norm_first": True}, "no skip": {"residual": "none"},
            "plain": {"residual": "plain"}, "rezero, learned positions":
            {"residual": "rezero", "positional": "learned"}}


def panels(explanation):
    return [panel for section in explanation["sections"] for panel in section["panels"]]


def check_structure(explanation, translator):
    """Schema 1: the nine titles of the template in order, each with a panel; every panel's
    code named; cells whose values fit their labels and choosers among their axes."""
    assert explanation["schema"] == 1
    assert [s["title"] for s in explanation["sections"]] == section_titles()
    assert [s["number"] for s in explanation["sections"]] == list(range(1, 10))
    assert all(section["panels"] for section in explanation["sections"])
    ids = [panel["id"] for panel in panels(explanation)]
    assert len(ids) == len(set(ids))
    for panel in panels(explanation):
        assert panel["code"] in explanation["code"], panel["id"]
        assert panel["kind"] in ("cells", "table", "text")
        assert set(panel.get("choose", [])) <= set(panel.get("axes", panel.get("labels", {})))
        if panel["kind"] == "cells":
            assert set(panel["labels"]) == set(panel["axes"])
            assert panel["choose"] == panel["axes"][:len(panel["choose"])]
            shape = tuple(len(panel["labels"][axis]) for axis in panel["axes"])
            assert np.array(panel["values"], dtype=float).shape == shape, panel["id"]
    assert explanation["source_tokens"] == translator.tokenizer.source(explanation["sentence"])
    assert json.loads(json.dumps(explanation, allow_nan=False)) == explanation


def test_sections_are_the_templates_headings():
    text = TEMPLATE.read_text(encoding="utf-8")
    assert section_titles() == [title for _, title in SECTION_HEADING.findall(text)]
    assert len(section_titles()) == 9


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_every_variant_gives_every_section(variant):
    translator = word_translator(**VARIANTS[variant])
    explanation = explain(translator, CAT, beam=2)
    check_structure(explanation, translator)
    ids = {panel["id"] for panel in panels(explanation)}
    assert ("s8.statistics" in ids) == (VARIANTS[variant].get("residual", "standard")
                                        in ("standard", "none"))
    assert {"s9.beam", "s9.n_best", "s9.top_words"} <= ids


def test_the_copy_task_and_subword_pieces():
    copier = copy_translator()
    explanation = explain(copier, "3 1 4 1 5")
    check_structure(explanation, copier)
    assert explanation["source_tokens"] == ["3", "1", "4", "1", "5"]
    assert explanation["model"]["tokenizer"] == "words"

    pieces = subword_translator()
    explanation = explain(pieces, BALL)
    check_structure(explanation, pieces)
    assert explanation["model"]["tokenizer"] == "subword"
    assert explanation["source_tokens"][0].startswith("▁")  # pieces shown as pieces
    (tokens,) = [p for p in panels(explanation) if p["id"] == "s2.tokens"]
    assert [row[1] for row in tokens["rows"]] == explanation["source_tokens"]


@pytest.mark.parametrize("variant", ["post-LN", "pre-LN"])
def test_softmax_of_the_recomputed_scaled_scores_is_the_recorded_weights(variant):
    """Every stack, layer and head: the reference kernel's scaled scores, softmaxed in float64
    (and by the kernel), equal the weights the model recorded; the scaled scores are the
    scores / sqrt(d_k)."""
    translator = word_translator(**VARIANTS[variant])
    explanation = Explanation(translator, ANIMAL, 1, 0.6)
    for stack, sublayer in (("encoder", "self_attn"), ("decoder", "self_attn"),
                            ("decoder", "cross_attn")):
        found = explanation.attention(stack, sublayer)
        scaled = found["scaled"].astype(np.float64)
        mask = explanation.mask(stack, sublayer)
        if mask is not None:
            scaled = np.where(mask, -np.inf, scaled)
        weights = np.exp(scaled - scaled.max(axis=-1, keepdims=True))
        weights /= weights.sum(axis=-1, keepdims=True)
        np.testing.assert_allclose(weights, found["weights"], rtol=0, atol=1e-6,
                                   err_msg=f"{stack} {sublayer}")
        np.testing.assert_allclose(found["recomputed"], found["weights"], rtol=0, atol=1e-6,
                                   err_msg=f"{stack} {sublayer}: the kernel's own softmax")
        np.testing.assert_allclose(found["scaled"], found["scores"] / math.sqrt(TINY["d_model"]
                                                                                / TINY["n_heads"]),
                                   rtol=1e-6, atol=1e-7)
        assert found["weights"].shape[:2] == (2, TINY["n_heads"])


def test_one_head_equals_numpy_with_the_model_weights(words):
    """Head 2 of encoder layer 1, from the token ids up: x = embedding · sqrt(d_model) + PE,
    q, k, v = x W + b (the head's columns), z = softmax(q kᵀ / sqrt(d_k)) v, to 1e-5, against
    the panels' numbers (4 significant digits) and the recorded arrays."""
    explanation = explain(words, CAT)
    model, vocab = words.model, words.vocab
    d_model, d_k, head = TINY["d_model"], TINY["d_model"] // TINY["n_heads"], 1
    ids = vocab.encode(WORDS.source(CAT))
    table = model.encoder.embedding.weight.numpy().astype(np.float64)
    x = table[ids] * math.sqrt(d_model) + model.encoder.positional.table.numpy()[:len(ids)]
    attention = model.encoder.layers[0].self_attn.sublayer
    columns = slice(head * d_k, (head + 1) * d_k)

    def project(linear):
        return x @ linear.weight.numpy()[columns].T.astype(np.float64) + \
            linear.bias.numpy()[columns]
    q, k, v = (project(p) for p in (attention.q_proj, attention.k_proj, attention.v_proj))
    scores = q @ k.T / math.sqrt(d_k)
    weights = np.exp(scores - scores.max(axis=1, keepdims=True))
    weights /= weights.sum(axis=1, keepdims=True)
    z = weights @ v
    shown = {panel["id"]: np.array(panel["values"], dtype=float)
             for panel in panels(explanation) if panel["kind"] == "cells"}
    for name, expected in (("s4.q", q), ("s4.k", k), ("s4.v", v), ("s4.scaled", scores),
                           ("s4.softmax", weights), ("s4.z", z)):
        np.testing.assert_allclose(shown[name][0, head], expected, rtol=1e-3, atol=1e-5,
                                   err_msg=name)  # the panels round to 4 digits
    recorded = Explanation(words, CAT, 1, 0.6).attention("encoder", "self_attn")
    for name, expected in (("q", q), ("k", k), ("v", v), ("weights", weights), ("z", z)):
        np.testing.assert_allclose(recorded[name][0, head], expected, rtol=0, atol=1e-5,
                                   err_msg=name)


@pytest.mark.parametrize("beam, length_penalty", [(1, 0.6), (3, 1.0)])
def test_the_translation_is_translate_detailed_s(words, beam, length_penalty):
    explanation = explain(words, BALL, beam=beam, length_penalty=length_penalty)
    result = words.translate_detailed(BALL, beam_size=beam, n_best=beam,
                                      length_penalty=length_penalty)
    best = result.translations[0]
    found = explanation["translation"]
    assert (found["text"], found["tokens"]) == (best.text, best.tokens)
    assert found["score"] == pytest.approx(best.score, abs=1e-6)
    assert found["text"] == words.translate(BALL, beam_size=beam, length_penalty=length_penalty)
    assert [t["text"] for t in found["n_best"]] == [t.text for t in result.translations]
    assert explanation["decoding"] == {"beam": beam, "length_penalty": length_penalty,
                                       "max_len": 2 * len(WORDS.source(BALL)) + 10}
    (steps,) = [p for p in panels(explanation) if p["id"] == "s9.steps"]
    assert [row[2] for row in steps["rows"]] == best.tokens
    np.testing.assert_allclose([row[4] for row in steps["rows"]], best.token_log_probs,
                               atol=1e-4)
    if beam > 1:
        (search,) = [p for p in panels(explanation) if p["id"] == "s9.beam"]
        assert search["choose"] == ["search step"]
        assert len(search["rows"]) == len(search["labels"]["search step"])
        assert all(len(kept) >= 1 for kept in search["rows"])


def test_greedy_top_words_pick_the_word_chosen(words):
    explanation = explain(words, CAT)
    (top,) = [p for p in panels(explanation) if p["id"] == "s9.top_words"]
    assert top["choose"] == ["step"] and len(top["rows"]) == len(explanation["translation"]
                                                                 ["tokens"])
    for rows, highlight, word in zip(top["rows"], top["highlight"],
                                     explanation["translation"]["tokens"]):
        assert rows[0][1] == word and highlight == [0]  # greedy: the most probable word
        probabilities = [row[3] for row in rows]
        assert probabilities == sorted(probabilities, reverse=True)


def resolve(code):
    """The function a panel's code names, imported from its file."""
    module = importlib.import_module(code["file"].removesuffix(".py").replace("/", "."))
    found = module
    for part in code["function"].split("."):
        found = getattr(found, part)
    return inspect.unwrap(found)


@pytest.mark.parametrize("variant", ["post-LN", "pre-LN"])
def test_every_panels_line_lies_in_its_function(variant):
    translator = word_translator(**VARIANTS[variant])
    explanation = explain(translator, CAT, beam=2)
    for panel in panels(explanation):
        code = explanation["code"][panel["code"]]
        lines, first = inspect.getsourcelines(resolve(code))
        assert code["first_line"] == first, panel["id"]
        assert first <= code["line"] < first + len(lines), panel["id"]
        assert code["source"] == "".join(lines)
    hooked = {panel["id"]: explanation["code"][panel["code"]]
              for panel in panels(explanation)}
    line = hooked["s3.query"]["source"].splitlines()[hooked["s3.query"]["line"]
                                                     - hooked["s3.query"]["first_line"]]
    assert 'self.seen("q"' in line


def test_an_unknown_word_is_named(words):
    explanation = explain(words, "the zebra drank the milk")
    assert explanation["unknown"] == ["zebra"] and explanation["unseen"] == []
    (tokens,) = [p for p in panels(explanation) if p["id"] == "s2.tokens"]
    assert tokens["highlight"] == [1] and "<unk>" in tokens["rows"][1][3]


@pytest.mark.parametrize("sentence, beam, alpha, message", [
    ("   ", 1, 0.6, "explain: the sentence is blank"),
    (" ".join(["cat"] * 65), 1, 0.6, "explain: the sentence has 65 tokens; this model reads "
                                     "at most 64"),
    (CAT, 0, 0.6, "explain: beam must be 1 or more"),
    (CAT, 1, -1.0, "explain: length_penalty must be 0 or more")])
def test_bad_input_is_one_line(words, sentence, beam, alpha, message):
    with pytest.raises(ValueError) as error:
        explain(words, sentence, beam=beam, length_penalty=alpha)
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


def test_numbers_keep_four_significant_digits_and_hide():
    assert numbers([0.000123456, -98765.4, 3.14159265, 0.0, 1e-30]) == \
        [0.0001235, -98770.0, 3.142, 0.0, 1e-30]
    assert numbers([[1.0, float("nan")], [float("-inf"), 2.0]], [[False, False], [False, True]]) \
        == [[1.0, None], [None, None]]


def test_the_benchmark_prints_its_record(monkeypatch, capsys, words):
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "explain.py"
    spec = importlib.util.spec_from_file_location("explain_benchmark", path)
    benchmark = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(benchmark)
    monkeypatch.setattr(benchmark, "translator_of", lambda checkpoint, which: (words, "tiny"))
    benchmark.main(["--repeats", "2", "--beam", "2", "--json"])
    record = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert record["benchmark"] == "explain" and record["figure"] == "median_ms"
    assert 0 < record["min_ms"] <= record["median_ms"] <= record["max_ms"]
    assert record["json_bytes"] > 0 and record["beam"] == 2


def test_data_md_names_every_panel():
    """docs/illustrated/data.md's table of panels is the panels explain() makes: every id of
    a beam search on models with and without LayerNorm, and nothing else."""
    made = set()
    for variant in ("post-LN", "plain"):
        made |= {panel["id"] for panel in panels(explain(word_translator(**VARIANTS[variant]),
                                                         BALL, beam=2))}
    text = (Path(__file__).resolve().parents[2] / "docs" / "illustrated" / "data.md").read_text(
        encoding="utf-8")
    assert set(re.findall(r"`(s\d\.[a-z_]+)`", text)) == made


def test_words_seen_only_in_translations_are_named(words):
    english = {w for s in SOURCES for w in WORDS.source(s)}
    vocab = Vocab([words.vocab.id_to_token(i) for i in range(len(words.vocab))], english)
    explanation = explain(Translator(words.model, vocab, WORDS), "the gato drank the leche")
    assert explanation["unseen"] == ["gato", "leche"] and explanation["unknown"] == []


@pytest.mark.parametrize("variant", ["post-LN", "pre-LN"])
def test_layer_norm_and_the_ffn_equal_numpy(variant):
    """§8 for encoder layer 1's blocks: the mean and deviation of what LayerNorm reads, the
    normalized vector and LayerNorm's output (with its weight and bias), and the FFN's hidden
    layer max(0, x W1 + b1), from the recorded vectors and the model's weights."""
    translator = word_translator(**VARIANTS[variant])
    layer = translator.model.encoder.layers[0]
    rng = np.random.default_rng(0)
    for norm in (layer.self_attn.norm, layer.ffn.norm):  # not LayerNorm's initial 1 and 0
        norm.weight.data[...] = rng.uniform(0.5, 1.5, norm.weight.shape)
        norm.bias.data[...] = rng.uniform(-0.5, 0.5, norm.bias.shape)
    explanation = explain(translator, CAT)
    shown = {panel["id"]: np.array(panel["values"], dtype=float)
             for panel in panels(explanation) if panel["kind"] == "cells"}
    for sublayer, block in enumerate((layer.self_attn, layer.ffn)):
        read = shown["s8.x"][0, sublayer] if variant == "pre-LN" else shown["s8.sum"][0, sublayer]
        mean, deviation = read.mean(axis=-1), np.sqrt(read.var(axis=-1) + block.norm.eps)
        np.testing.assert_allclose(shown["s8.statistics"][0, sublayer],
                                   np.stack([mean, deviation], axis=-1), rtol=2e-3, atol=1e-3)
        normalized = (read - mean[:, None]) / deviation[:, None]
        np.testing.assert_allclose(shown["s8.normalized"][0, sublayer], normalized,
                                   rtol=2e-3, atol=2e-3)
        np.testing.assert_allclose(shown["s8.layer_norm"][0, sublayer],
                                   normalized * block.norm.weight.numpy()
                                   + block.norm.bias.numpy(), rtol=2e-3, atol=2e-3)
    ffn = layer.ffn.sublayer
    inner = shown["s8.layer_norm"][0, 1] if variant == "pre-LN" else shown["s8.x"][0, 1]
    hidden = np.maximum(0, inner @ ffn.linear1.weight.numpy().T + ffn.linear1.bias.numpy())
    np.testing.assert_allclose(shown["s8.ffn_hidden"][0], hidden, rtol=2e-3, atol=2e-3)
