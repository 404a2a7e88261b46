"""Translator: a run folder turned into sentences -> sentences, and its errors on bad folders."""

import shutil

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
