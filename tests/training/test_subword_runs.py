"""A subword run: its SentencePiece models are saved beside the model and reloaded with it
(Translator.from_checkpoint, translate.py), and on a corpus with rare words it reads far fewer
unknown tokens than the word-level vocabulary."""

import json
import random

import numpy as np
import pytest
from test_examples_cli import run_example
from test_trainer import tiny_spec

from transformer import Translator
from transformer.errors import CheckpointError, ResumeConflict
from transformer.pipeline import resume_run, start_run
from transformer.run_folder import RunFolder

SYLLABLES = ["ka", "lo", "mi", "ner", "sta", "vu", "ber", "tin", "gro", "del", "sch", "ö"]
PAIRS = [("Der Lehrer sieht {}.", "The teacher sees {}."),
         ("Wir besuchen {} morgen.", "We visit {} tomorrow."),
         ("Hast du {} gesehen?", "Have you seen {}?"),
         ("{} wohnt in der Stadt.", "{} lives in the city.")]


def rare_word_corpus(path, lines=160, seed=0):
    """A TSV where nearly every line has a name of its own: rare words, as in real text."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as file:
        for number in range(lines):
            name = "".join(rng.choice(SYLLABLES) for _ in range(3)).capitalize()
            german, english = PAIRS[number % len(PAIRS)]
            file.write(f"{german.format(name)}\t{english.format(name)}\n")
    return path


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    return rare_word_corpus(tmp_path_factory.mktemp("corpus") / "names.tsv")


@pytest.fixture(scope="module")
def subword_run(tmp_path_factory, corpus):
    out = tmp_path_factory.mktemp("subword") / "run"
    metrics = start_run(tiny_spec("pairs", corpus, steps=4).with_changes(
        {"tokenizer.subword": 60}), out)
    return out, metrics


def test_the_tokenizer_is_saved_beside_the_model_and_reloaded_with_it(subword_run):
    out, _ = subword_run
    folder = RunFolder(out)
    described = folder.spec().tokenizer
    assert described.kind == "subword" and described.subword == 60
    assert {"tokenizer-source.model", "tokenizer-target.model"} <= {p.name for p in
                                                                  out.iterdir()}
    tokenizer, vocab = folder.tokenizer(), folder.vocab()
    assert tokenizer.digest() == described.digest
    assert dict(described.pieces) == {side: len(tokenizer.pieces(side))
                                      for side in ("source", "target")}
    assert set(tokenizer.pieces("source")) <= set(vocab.tokens)
    translator = Translator.from_checkpoint(out)
    assert translator.tokenizer.models == tokenizer.models
    assert isinstance(translator.translate("Der Lehrer sieht Kalomi."), str)


def test_translate_py_reads_a_subword_run_unchanged(subword_run):
    out, _ = subword_run
    result = run_example("translate.py", "--checkpoint", out, "Wir besuchen Anna morgen.")
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) == 1


def test_a_subword_run_aligns_words_and_pieces(subword_run):
    """Pieces are gathered into the whitespace-separated words: a word's source weight is
    the sum over its pieces, its target row the average over its pieces."""
    out, _ = subword_run
    translator = Translator.from_checkpoint(out)
    source, target = "Der Lehrer sieht Kalomi.", "The teacher sees Kalomi."
    result = translator.score(source, target, attention=True, align=True)
    [translation] = result.translations
    pieces = translation.tokens[:-1]  # EOS aside
    assert "".join(pieces).replace("▁", " ").strip() == target
    assert len(translation.token_alignment) == len(pieces)
    weights = translation.attention[-1].mean(axis=0)[:len(pieces)]  # (pieces, source pieces)
    source_word = np.array(translator.tokenizer.word_index(result.source_tokens))
    target_word = np.array(translator.tokenizer.word_index(pieces))
    expected = [int(np.argmax([weights[target_word == t][:, source_word == s].sum(axis=1)
                                .mean() for s in range(len(source.split()))]))
                for t in range(len(target.split()))]
    assert translation.alignment == [(s, t) for t, s in enumerate(expected)]
    record = result.as_dict()["translations"][0]
    assert list(record)[-3:] == ["alignment", "token_alignment", "attention"]


def test_rare_words_are_pieces_not_unknown_tokens(tmp_path, corpus, subword_run):
    _, subword = subword_run
    words = start_run(tiny_spec("pairs", corpus, steps=4), tmp_path / "words")
    assert words["test_unknown_rate"] > 0.1  # the test split's names are not in train
    assert subword["test_unknown_rate"] < words["test_unknown_rate"] / 5
    assert {"test_bleu", "test_chrf", "test_exact_match"} <= subword.keys()


def test_damaged_or_swapped_tokenizer_models_are_refused(tmp_path, subword_run):
    out, _ = subword_run
    copy = tmp_path / "copy"
    copy.mkdir()
    for path in out.iterdir():
        (copy / path.name).write_bytes(path.read_bytes())
    (copy / "tokenizer-target.model").write_bytes((copy / "tokenizer-source.model")
                                                  .read_bytes())
    with pytest.raises(CheckpointError, match="are not the run's"):
        Translator.from_checkpoint(copy)
    (copy / "tokenizer-target.model").unlink()
    with pytest.raises(CheckpointError, match="tokenizer-target.model missing"):
        Translator.from_checkpoint(copy)


def test_a_run_folder_from_before_subwords_is_word_level(tmp_path):
    folder = RunFolder(tmp_path)
    folder.write_json("config.json", {"task": {"name": "copy"}})
    assert folder.tokenizer().kind == "word"


def test_resume_keeps_the_runs_tokenizer(subword_run):
    out, _ = subword_run
    with pytest.raises(ResumeConflict, match="--subword 80 \\(the run has 60\\)"):
        resume_run(out, {"training.steps": 8, "tokenizer.subword": 80})


def test_subword_flag_errors_are_one_line(tmp_path, corpus):
    result = run_example("train_translation.py", "--task", "pairs", "--data", corpus,
                         "--subword", "0", "--out", tmp_path / "run")
    assert result.returncode == 2
    assert result.stderr.startswith("error: argument --subword: '0' is not")
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "run").exists()


def test_metrics_json_records_the_tokenizer_figures(subword_run):
    out, metrics = subword_run
    assert json.loads((out / "metrics.json").read_text()) == metrics


def test_vocabularies_py_compares_word_level_and_subword(corpus):
    result = run_example("vocabularies.py", "--task", "pairs", "--data", corpus, "--subword",
                         "60")
    assert result.returncode == 0, result.stderr
    word, subword = result.stdout.splitlines()
    assert word.startswith("word-level") and subword.startswith("--subword 60")
    rates = [float(line.split("unknown")[1].split("%")[0]) for line in (word, subword)]
    assert rates[0] > 10 > rates[1]
