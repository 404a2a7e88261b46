import random

from hypothesis import given
from hypothesis import strategies as st

from transformer.data import detokenize, tokenize
from transformer.data.derivation import derive
from transformer.data.syntax import english, spanish

SENTENCES = [
    "the ball is blue",
    "la bola es azul",
    "the black cat drank the milk",
    "el gato negro bebió la leche",
    "the animal didn't cross the street because it was too tired",
    "el animal no cruzó la calle porque estaba demasiado cansado",
    "The girl's red book is on the table.",
    "The girls' books were on the tables!",
    "Won't you come? I can't, and she doesn't want to; they weren't there: isn't it sad?",
    'She said "hello, world" (twice).',
    "¿Dónde está el niño? ¡El niño está en el jardín!",
    "Der Mann aß drei Äpfel, weißt du?",
    "It’s a well-known fact that we don’t know.",
]


def test_rules():
    assert tokenize("The Girl's red book.") == ["the", "girl", "'s", "red", "book", "."]
    assert tokenize("the girls' book") == ["the", "girls", "'", "book"]
    assert tokenize("didn't won't doesn't don't isn't wasn't weren't can't") == [
        "didn't", "won't", "doesn't", "don't", "isn't", "wasn't", "weren't", "can't"]
    assert tokenize('¿Qué? ¡Sí! (a, b; c: "d")') == [
        "¿", "qué", "?", "¡", "sí", "!", "(", "a", ",", "b", ";", "c", ":", '"', "d", '"', ")"]
    assert tokenize("Árbol ÑANDÚ pingüino") == ["árbol", "ñandú", "pingüino"]
    assert tokenize("we'll see") == ["we", "'ll", "see"]
    assert tokenize("a well-known way") == ["a", "well-known", "way"]
    assert tokenize("I don’t") == ["i", "don’t"]


def test_round_trip_of_normally_spaced_sentences():
    for sentence in SENTENCES:
        assert detokenize(tokenize(sentence)) == sentence.lower()


def test_empty():
    assert tokenize("") == [] and tokenize("  \n") == []
    assert detokenize([]) == ""


@given(st.text())
def test_tokens_cover_every_visible_character(text):
    tokens = tokenize(text)
    assert all(token and not any(c.isspace() for c in token) for token in tokens)
    assert "".join(tokens) == "".join(text.lower().split())


_letters = st.text("abcdefghijklmnopqrstuvwxyzáéíóúñü", min_size=1, max_size=8)
_word = st.one_of(
    _letters,
    st.builds(lambda w: w + "'s", _letters),
    st.builds(lambda w: w + "s'", _letters),
    st.builds(lambda w: w + "n't", _letters),
    st.builds(lambda w: f"{w}-{w}", _letters),
)
_punctuated = st.tuples(st.sampled_from(["", "(", "¿", "¡", '"']), _word,
                        st.sampled_from(["", ".", ",", "!", "?", ";", ":", ")"]))


@given(st.lists(_punctuated, min_size=1, max_size=12))
def test_round_trip_of_generated_text(words):
    pieces = []
    for opening, word, closing in words:
        closing = '"' if opening == '"' else closing  # a quote closes on the same word
        pieces.append(opening + word + closing)
    text = " ".join(pieces)
    assert detokenize(tokenize(text)) == text


@given(st.integers(0, 2**32 - 1))
def test_round_trip_of_grammar_sentences(seed):
    sentence = derive(random.Random(seed))
    for tokens in (english(sentence), spanish(sentence)):
        assert tokenize(detokenize(tokens)) == tokens
