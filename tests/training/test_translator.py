"""Translator: a run folder turned into sentences -> sentences, and its errors on bad folders."""

import shutil

import numpy as np
import pytest

from minigrad.errors import CheckpointError
from transformer import Translator

ARTICLE_SENTENCES = {"the ball is blue": "la bola es azul",
                     "the black cat drank the milk": "el gato negro bebió la leche"}


def test_the_article_sentences_are_among_the_memorized_pairs(memorized_run):
    for source, target in ARTICLE_SENTENCES.items():
        assert memorized_run.target(source) == target


def test_translate_gives_every_memorized_translation_in_order(memorized_run):
    translator = Translator.from_checkpoint(memorized_run.path)
    sources = [e.src for e in memorized_run.train]
    assert translator.translate(sources) == [e.tgt for e in memorized_run.train]
    assert translator.translate(sources[::-1]) == [e.tgt for e in memorized_run.train][::-1]


def test_a_single_string_gives_a_single_string(memorized_run):
    translator = Translator.from_checkpoint(memorized_run.path)
    assert translator.translate("the ball is blue") == "la bola es azul"


def test_beam_search_and_the_last_checkpoint_translate_too(memorized_run):
    sources = list(ARTICLE_SENTENCES)
    targets = list(ARTICLE_SENTENCES.values())
    assert Translator.from_checkpoint(memorized_run.path).translate(sources, beam_size=2) \
        == targets
    assert Translator.from_checkpoint(memorized_run.path, which="last").translate(sources) \
        == targets


def test_unknown_words_are_reported_on_stderr_and_still_translated(memorized_run, capsys):
    translator = Translator.from_checkpoint(memorized_run.path)
    result = translator.translate(["the zebra is blue", "the ball is blue"])
    assert len(result) == 2 and result[1] == "la bola es azul"
    stderr = capsys.readouterr().err
    assert "unknown word(s) zebra" in stderr and "'the zebra is blue'" in stderr
    assert "ball" not in stderr


@pytest.fixture
def run_copy(memorized_run, tmp_path):
    """A copy of the run folder that a test may damage."""
    return shutil.copytree(memorized_run.path, tmp_path / "run")


def test_a_corrupt_best_checkpoint_raises_checkpoint_error(run_copy):
    best = run_copy / "best.npz"
    best.write_bytes(best.read_bytes()[: best.stat().st_size // 2])  # cut off mid-file
    with pytest.raises(CheckpointError, match=r"truncated or corrupt") as raised:
        Translator.from_checkpoint(run_copy)
    assert str(best) in str(raised.value)
    Translator.from_checkpoint(run_copy, which="last")  # the other checkpoint still loads


def test_a_missing_best_checkpoint_names_what_is_available(run_copy):
    (run_copy / "best.npz").unlink()
    with pytest.raises(CheckpointError, match=r"best\.npz does not exist.*'last\.npz'"):
        Translator.from_checkpoint(run_copy)


def test_a_folder_that_is_not_a_run_folder_says_so(tmp_path):
    with pytest.raises(CheckpointError, match="config.json does not exist: is .* a training "
                                              "run folder"):
        Translator.from_checkpoint(tmp_path)


def test_which_must_be_best_or_last(memorized_run):
    with pytest.raises(ValueError, match="which must be 'best' or 'last'"):
        Translator.from_checkpoint(memorized_run.path, which="final")


# ----- what a translation rests on --------------------------------------------------------------

def test_n_best_lists_are_ordered_and_their_best_is_the_plain_translation(memorized_run):
    translator = Translator.from_checkpoint(memorized_run.path)
    sources = [e.src for e in memorized_run.train][:6]
    for beam_size, n_best in ((1, 1), (3, 3)):
        results = translator.translate_detailed(sources, beam_size=beam_size, n_best=n_best)
        plain = translator.translate(sources, beam_size=beam_size)
        for source, result, translation in zip(sources, results, plain):
            assert result.source == source and len(result.translations) == n_best
            assert result.translations[0].text == translation
            scores = [t.score for t in result.translations]
            assert scores == sorted(scores, reverse=True)
            assert len({t.text for t in result.translations}) == n_best


def test_a_hypothesis_scores_the_same_when_given_back_to_be_scored(memorized_run):
    translator = Translator.from_checkpoint(memorized_run.path)
    sources = list(ARTICLE_SENTENCES)
    found = translator.translate_detailed(sources, beam_size=3, n_best=3)
    for source, result in zip(sources, found):
        for hypothesis in result.translations:
            [scored] = translator.score(source, hypothesis.text).translations
            assert scored.tokens == hypothesis.tokens and scored.tokens[-1] == "<eos>"
            np.testing.assert_allclose(scored.token_log_probs, hypothesis.token_log_probs,
                                       atol=1e-5)
            assert scored.score == pytest.approx(hypothesis.score, abs=1e-5)
    assert [r.translations[0].text for r in found] == list(ARTICLE_SENTENCES.values())


def test_alignments_of_the_memorized_model_follow_the_rule(memorized_run):
    """One source word per target word, from the last layer's heads' average."""
    translator = Translator.from_checkpoint(memorized_run.path)
    [result] = translator.score(["the black cat drank the milk"],
                                ["el gato negro bebió la leche"], attention=True, align=True)
    translation = result.translations[0]
    layers = translator.model.config.n_decoder_layers
    assert translation.attention.shape == (layers, 2, 7, 6)  # six words and EOS, six words
    expected = translation.attention[-1].mean(axis=0)[:6].argmax(axis=1)
    assert translation.alignment == [(int(s), t) for t, s in enumerate(expected)]


def test_scoring_refuses_mismatched_and_too_long_translations(memorized_run):
    translator = Translator.from_checkpoint(memorized_run.path)
    with pytest.raises(ValueError, match=r"2 sentence\(s\) but 1 translation\(s\)"):
        translator.score(list(ARTICLE_SENTENCES), ["la bola es azul"])
    with pytest.raises(ValueError, match="translation 1 .* has 64 tokens; this model writes at "
                                         "most 63"):
        translator.score("the ball is blue", " ".join(["azul"] * 64))
