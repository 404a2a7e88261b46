"""Subword tokenization: SentencePiece models per language, trained on the given sentences,
whose pieces join back into the text; a rare word is read as pieces, not as one unknown."""

import pytest

from transformer.data import Vocab, tokenize
from transformer.data.subword import MARK, SubwordTokenizer

GERMAN = ["Der Hund schläft im Garten.", "Die Katze trinkt Milch.", "Ich habe keine Zeit.",
          "Wir fahren morgen nach Hamburg.", "Das Wetter ist heute schön!",
          "Kannst du mir bitte helfen?", "Er liest ein Buch über Schiffe.",
          "Sie kauft frisches Brot beim Bäcker."] * 5
ENGLISH = ["The dog sleeps in the garden.", "The cat drinks milk.", "I have no time.",
           "We are driving to Hamburg tomorrow.", "The weather is nice today!",
           "Can you help me, please?", "He is reading a book about ships.",
           "She buys fresh bread at the baker's."] * 5


@pytest.fixture(scope="module")
def tokenizer():
    return SubwordTokenizer.train(GERMAN, ENGLISH, pieces=120)


@pytest.mark.parametrize("text", [
    "Der Hund schläft im Garten.", "Wir fahren nach Köln, nicht nach Hamburg!",
    "Ein Donaudampfschifffahrtskapitän?", "Zahlen wie 1984 und 3,5 bleiben.",
    "„Anführungszeichen“ und (Klammern) auch."])
def test_detokenize_undoes_the_pieces_of_normal_text(tokenizer, text):
    pieces = tokenizer.source(text)
    assert pieces[0].startswith(MARK)
    assert tokenizer.detokenize(pieces) == text


def test_both_sides_round_trip_and_keep_case(tokenizer):
    for side, text in (("source", "Die Katze trinkt Milch."), ("target", "The cat drinks milk.")):
        assert tokenizer.detokenize(getattr(tokenizer, side)(text)) == text


def test_a_word_never_seen_is_pieces_of_the_vocabulary_where_word_level_has_none(tokenizer):
    words = Vocab.build([tokenize(s) for s in GERMAN])
    pieces = Vocab.build([tokenizer.source(s) for s in GERMAN] + [tokenizer.pieces("source")])
    unseen = "Hundegarten"
    assert words.unknown(tokenize(unseen)) == ["hundegarten"]
    assert pieces.unknown(tokenizer.source(unseen)) == []
    assert pieces.unknown(tokenizer.source("Zoë")) == ["ë"]  # a character never seen


def test_training_is_deterministic_and_the_size_an_upper_bound(tokenizer):
    again = SubwordTokenizer.train(GERMAN, ENGLISH, pieces=120)
    assert again.models == tokenizer.models and again.digest() == tokenizer.digest()
    assert 0 < len(tokenizer.pieces("source")) <= 120
    assert SubwordTokenizer(*tokenizer.models.values()).source("Hund") == tokenizer.source("Hund")


def test_a_damaged_model_is_a_value_error_naming_the_side(tokenizer):
    with pytest.raises(ValueError, match="the target tokenizer model is not a SentencePiece"):
        SubwordTokenizer(tokenizer.models["source"], b"not a model")
