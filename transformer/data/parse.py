"""Read an English sentence of the toy grammar back into its `Sentence` tree.

A small recursive-descent parser; the tree it builds must say the sentence again word for
word, so anything outside the grammar (a wrong agreement, an unknown word) is rejected.
"""

from .lexicon import ADJECTIVES, NOUNS, PREPOSITIONS, VERBS
from .syntax import (
    NEGATIVE_CONTRACTIONS,
    Action,
    Coordination,
    Description,
    Location,
    NounPhrase,
    Quality,
    Sentence,
    english,
)
from .tokenizer import tokenize

_NOUNS = {form: (noun, form == noun.english_plural)
          for noun in NOUNS for form in (noun.english, noun.english_plural) if form}
_ADJECTIVES = {adjective.english: adjective for adjective in ADJECTIVES}
_VERBS = {form: verb for verb in VERBS for form in verb.english}
_PREPOSITIONS = {preposition.english: preposition for preposition in PREPOSITIONS}
_AUXILIARY_TENSES = {"does": "present", "do": "present", "did": "past", "will": "future",
                     "is": "present", "are": "present", "was": "past", "were": "past"}
_UNCONTRACTED = {contraction: word for word, contraction in NEGATIVE_CONTRACTIONS.items()}


class _Reader:
    """The tokens of a sentence, read left to right."""

    def __init__(self, tokens: list[str]) -> None:
        self.tokens, self.position = tokens, 0

    def peek(self) -> str | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        word = self.peek()
        if word is None:
            raise ValueError("the sentence ends too early")
        if expected is not None and word != expected:
            raise ValueError(f"expected {expected!r}, found {word!r}")
        self.position += 1
        return word

    def accept(self, word: str) -> bool:
        if self.peek() == word:
            self.position += 1
            return True
        return False


def parse(text: str) -> Sentence:
    """The tree of `text`; ValueError if `text` is not a sentence of the toy grammar."""
    tokens = tokenize(text)
    reader = _Reader(tokens)
    subject = _noun_phrases(reader)
    predicate = _predicate(reader)
    reason = None
    if reader.accept("because"):
        reader.take()  # the pronoun, checked by the round trip below
        described = _predicate(reader)
        if not isinstance(described, Description):
            raise ValueError("a reason must describe the subject ('because it was ...')")
        reason = described
    if reader.peek() is not None:
        raise ValueError(f"unexpected {reader.peek()!r}")
    sentence = Sentence(subject, predicate, reason)
    if english(sentence) != tokens:
        raise ValueError(f"{text!r} is not a sentence of the toy grammar")
    return sentence


def _noun_phrases(reader: _Reader) -> NounPhrase | Coordination:
    first = _noun_phrase(reader)
    return Coordination(first, _noun_phrase(reader)) if reader.accept("and") else first


def _noun_phrase(reader: _Reader) -> NounPhrase:
    """'the [adjective] noun', or an owner then what it owns: 'the girl's red book'."""
    reader.take("the")
    phrase = _modified_noun(reader, possessor=None)
    if reader.accept("'s") or reader.accept("'"):
        phrase = _modified_noun(reader, possessor=phrase)
    return phrase


def _modified_noun(reader: _Reader, possessor: NounPhrase | None) -> NounPhrase:
    adjective = _ADJECTIVES.get(reader.peek() or "")
    if adjective:
        reader.take()
    word = reader.take()
    if word not in _NOUNS:
        raise ValueError(f"expected a noun, found {word!r}")
    noun, plural = _NOUNS[word]
    return NounPhrase(noun, plural, adjective, possessor)


def _predicate(reader: _Reader) -> Action | Description:
    word = reader.take()
    auxiliary = _UNCONTRACTED.get(word, word)
    if auxiliary not in _AUXILIARY_TENSES:  # a bare verb: "eats", "ate"
        verb = _verb(word)
        tense = "past" if word == verb.english[2] else "present"
        return Action(verb, tense, _action_complement(reader, verb))
    tense = _AUXILIARY_TENSES[auxiliary]
    contracted = word != auxiliary
    negated = contracted or reader.accept("not")
    is_copula = auxiliary in ("is", "are", "was", "were")
    head = "be" if is_copula else reader.take()
    if head == "be":
        return Description(_description_complement(reader), tense, negated, contracted)
    verb = _verb(head)
    return Action(verb, tense, _action_complement(reader, verb), negated, contracted)


def _verb(word: str):
    if word not in _VERBS:
        raise ValueError(f"expected a verb, found {word!r}")
    return _VERBS[word]


def _action_complement(reader: _Reader, verb) -> NounPhrase | Coordination | None:
    if verb.frame == "transitive":
        return _noun_phrases(reader)
    if verb.frame == "motion":
        reader.take("to")
        return _noun_phrase(reader)
    return _noun_phrase(reader) if reader.accept("in") else None


def _description_complement(reader: _Reader) -> Quality | Location:
    preposition = _PREPOSITIONS.get(reader.peek() or "")
    if preposition:
        reader.take()
        return Location(preposition, _noun_phrase(reader))
    too = reader.accept("too")
    word = reader.take()
    if word not in _ADJECTIVES:
        raise ValueError(f"expected an adjective or a place, found {word!r}")
    return Quality(_ADJECTIVES[word], too)
