"""Sentences of the toy grammar as small trees, and how each language says them.

A `Sentence` is built once (by a phenomenon generator, or by parsing English) and then
realised twice: `english(sentence)` and `spanish(sentence)` return its tokens.
"""

from dataclasses import dataclass

from .lexicon import ANIMATE, ARTICLES, COPULAS, Adjective, Noun, Preposition, Verb, tensed

NEGATIVE_CONTRACTIONS = {"do": "don't", "does": "doesn't", "did": "didn't", "will": "won't",
                         "is": "isn't", "are": "aren't", "was": "wasn't", "were": "weren't"}
_SPANISH_CONTRACTIONS = {("de", "el"): "del", ("a", "el"): "al"}


@dataclass(frozen=True)
class NounPhrase:
    """'the [adjective] noun', possibly owned: 'the girl's red book'."""

    noun: Noun
    plural: bool = False
    adjective: Adjective | None = None
    possessor: "NounPhrase | None" = None

    @property
    def gender(self) -> str:
        return self.noun.gender


@dataclass(frozen=True)
class Coordination:
    """'the cat and the girl': plural, and masculine unless both nouns are feminine."""

    first: NounPhrase
    second: NounPhrase
    plural = True

    @property
    def gender(self) -> str:
        return "f" if self.first.gender == self.second.gender == "f" else "m"


@dataclass(frozen=True)
class Quality:
    """An adjective said of the subject, optionally with 'too': 'is (too) tired'."""

    adjective: Adjective
    too: bool = False


@dataclass(frozen=True)
class Location:
    """Where the subject is: 'is under the table'."""

    preposition: Preposition
    place: NounPhrase


@dataclass(frozen=True)
class Action:
    """A verb in a tense with the complement its frame asks for (object, destination, place).

    `contracted` chooses the English negation "didn't" over "did not"; Spanish has one.
    """

    verb: Verb
    tense: str
    complement: NounPhrase | Coordination | None = None
    negated: bool = False
    contracted: bool = False


@dataclass(frozen=True)
class Description:
    """The copula with a quality or a location: 'is blue', 'was in the house'."""

    complement: Quality | Location
    tense: str
    negated: bool = False
    contracted: bool = False

    @property
    def copula(self) -> str:
        """estar for states and places, ser for lasting properties."""
        if isinstance(self.complement, Location):
            return "estar"
        return self.complement.adjective.copula


@dataclass(frozen=True)
class Sentence:
    """Subject and predicate, and optionally a reason said of the subject ('because ...')."""

    subject: NounPhrase | Coordination
    predicate: Action | Description
    reason: Description | None = None


def is_animate(phrase) -> bool:
    """Whether `phrase` is a person or an animal (which takes the Spanish personal 'a')."""
    return isinstance(phrase, NounPhrase) and bool(phrase.noun.kinds & ANIMATE)


def pronoun(subject: NounPhrase | Coordination) -> str:
    """The English pronoun that refers back to `subject`."""
    if isinstance(subject, Coordination) or subject.plural:
        return "they"
    if "person" in subject.noun.kinds:
        return "he" if subject.gender == "m" else "she"
    return "it"


def english(sentence: Sentence) -> list[str]:
    """The English tokens of `sentence`."""
    subject = sentence.subject
    words = _english_phrase(subject) + _english_predicate(sentence.predicate, subject.plural)
    if sentence.reason:
        words += ["because", pronoun(subject)]
        words += _english_predicate(sentence.reason, subject.plural)
    return words


def _english_noun(phrase: NounPhrase) -> str:
    plural = phrase.noun.english_plural
    return plural if phrase.plural and plural is not None else phrase.noun.english


def _english_phrase(phrase: NounPhrase | Coordination) -> list[str]:
    if isinstance(phrase, Coordination):
        return _english_phrase(phrase.first) + ["and"] + _english_phrase(phrase.second)
    words = ["the"]
    if phrase.possessor:  # "the girl's book", "the girls' book", "the men's book"
        owner = phrase.possessor
        plain_plural = owner.plural and _english_noun(owner).endswith("s")
        words = _english_phrase(owner) + ["'" if plain_plural else "'s"]
    if phrase.adjective:
        words.append(phrase.adjective.english)
    return words + [_english_noun(phrase)]


def _english_predicate(predicate: Action | Description, plural: bool) -> list[str]:
    words = _english_verb(predicate, plural)
    if predicate.negated:  # "not" follows the first auxiliary, or contracts with it
        auxiliary, rest = words[0], words[1:]
        if predicate.contracted:
            words = [NEGATIVE_CONTRACTIONS[auxiliary], *rest]
        else:
            words = [auxiliary, "not", *rest]
    complement = predicate.complement
    if isinstance(complement, Quality):
        return words + ["too"] * complement.too + [complement.adjective.english]
    if isinstance(complement, Location):
        return words + [complement.preposition.english] + _english_phrase(complement.place)
    if complement is None or isinstance(predicate, Description):
        return words
    preposition = {"transitive": [], "motion": ["to"], "activity": ["in"]}
    return words + preposition[predicate.verb.frame] + _english_phrase(complement)


def _english_verb(predicate: Action | Description, plural: bool) -> list[str]:
    """The verb group before negation: 'is', 'will be', 'ate', 'will eat', 'does eat'."""
    if predicate.tense == "future":
        head = "be" if isinstance(predicate, Description) else predicate.verb.english[0]
        return ["will", head]
    if isinstance(predicate, Description):
        return [tensed(("is", "are", "was", "were"), predicate.tense, plural)]
    base, third_person, past = predicate.verb.english
    if predicate.negated:  # do-support
        return [tensed(("does", "do", "did", "did"), predicate.tense, plural), base]
    return [tensed((third_person, base, past, past), predicate.tense, plural)]


def spanish(sentence: Sentence) -> list[str]:
    """The Spanish tokens of `sentence`; the reason clause drops its pronoun."""
    subject = sentence.subject
    words = _spanish_phrase(subject) + _spanish_predicate(sentence.predicate, subject)
    if sentence.reason:
        words += ["porque"] + _spanish_predicate(sentence.reason, subject)
    return _contract(words)


def _spanish_phrase(phrase: NounPhrase | Coordination) -> list[str]:
    """'el libro rojo de la niña': article, noun, adjective, then the owner."""
    if isinstance(phrase, Coordination):
        return _spanish_phrase(phrase.first) + ["y"] + _spanish_phrase(phrase.second)
    plural = phrase.noun.spanish_plural
    noun = plural if phrase.plural and plural is not None else phrase.noun.spanish
    words = [ARTICLES[phrase.gender, phrase.plural], noun]
    if phrase.adjective:
        words.append(phrase.adjective.spanish(phrase.gender, phrase.plural))
    if phrase.possessor:
        words += ["de"] + _spanish_phrase(phrase.possessor)
    return words


def _spanish_object(phrase: NounPhrase | Coordination) -> list[str]:
    """A direct object; a person or animal takes the personal 'a': 've a la niña'."""
    if isinstance(phrase, Coordination):
        return _spanish_object(phrase.first) + ["y"] + _spanish_object(phrase.second)
    return ["a"] * is_animate(phrase) + _spanish_phrase(phrase)


def _spanish_predicate(predicate: Action | Description, subject) -> list[str]:
    """'no' before the verb; verbs, copulas and adjectives agree with the subject."""
    words = ["no"] * predicate.negated
    if isinstance(predicate, Description):
        words.append(tensed(COPULAS[predicate.copula], predicate.tense, subject.plural))
        described = predicate.complement
        if isinstance(described, Quality):
            adjective = described.adjective.spanish(subject.gender, subject.plural)
            return words + ["demasiado"] * described.too + [adjective]
        return words + list(described.preposition.spanish) + _spanish_phrase(described.place)
    words.append(predicate.verb.spanish_form(predicate.tense, subject.plural))
    complement = predicate.complement
    if complement is None:
        return words
    if predicate.verb.frame == "transitive":
        return words + _spanish_object(complement)
    preposition = {"motion": "a", "activity": "en"}[predicate.verb.frame]
    return words + [preposition] + _spanish_phrase(complement)


def _contract(words: list[str]) -> list[str]:
    """Spanish spelling: de + el → del, a + el → al."""
    contracted: list[str] = []
    for word in words:
        if contracted and (contracted[-1], word) in _SPANISH_CONTRACTIONS:
            contracted[-1] = _SPANISH_CONTRACTIONS[contracted[-1], word]
        else:
            contracted.append(word)
    return contracted
