"""The phenomena of toy-en-es: one generator of random sentences per phenomenon.

Each generator takes a `random.Random` and returns a `Sentence` that exercises its
phenomenon; `PHENOMENA` maps the phenomenon's name to it. `construction` names the
sentence pattern a tree follows (one of `CONSTRUCTIONS`), for analysis by pattern.
"""

import random
from functools import cache

from .lexicon import ADJECTIVES, ANIMATE, NOUNS, PREPOSITIONS, TENSES, VERBS, Adjective, Noun, Verb
from .syntax import (
    Action,
    Coordination,
    Description,
    Location,
    NounPhrase,
    Quality,
    Sentence,
    is_animate,
)

CONSTRUCTIONS = ("transitive", "personal_object", "coordinated_object", "motion", "activity",
                 "intransitive", "quality", "location", "coordinated_subject", "because")

_PERSON = frozenset({"person"})
_OWNABLE = frozenset({"object", "portable", "animal"})
_ANY_NOUN = frozenset().union(*(noun.kinds for noun in NOUNS))
_LOCATABLE = frozenset({"person", "animal", "portable"})


@cache
def _nouns(kinds: frozenset[str], gender: str | None, countable: bool) -> tuple[Noun, ...]:
    """Nouns of one of `kinds` (of `gender` if given; with a plural if `countable`)."""
    return tuple(noun for noun in NOUNS if noun.kinds & kinds and gender in (None, noun.gender)
                 and (noun.countable or not countable))


@cache
def _adjectives(noun: Noun, copula: str | None = None) -> tuple[Adjective, ...]:
    """Adjectives that can describe `noun` (only those taking `copula`, if given)."""
    return tuple(adjective for adjective in ADJECTIVES
                 if adjective.kinds & noun.kinds and copula in (None, adjective.copula))


def _verbs(frame: str, objects: frozenset[str] = _ANY_NOUN) -> tuple[Verb, ...]:
    """Verbs of `frame` that take a complement of one of `objects`."""
    return tuple(verb for verb in VERBS if verb.frame == frame and verb.objects & objects)


_ANIMATE_ADJECTIVES = tuple(adjective for adjective in ADJECTIVES if adjective.kinds & ANIMATE)
_TRANSITIVE = _verbs("transitive")
_MOTION = _verbs("motion")
_PERSONAL = _verbs("transitive", ANIMATE)
_OWNED_OBJECT = _verbs("transitive", _OWNABLE)


def _noun_phrase(rng: random.Random, kinds: frozenset[str], *, adjective: bool = False,
                 plural: bool | None = None, gender: str | None = None,
                 possessor: NounPhrase | None = None) -> NounPhrase:
    """A random 'the [adjective] noun' with a noun of one of `kinds`.

    The number is random unless given (mass nouns stay singular).
    """
    noun = rng.choice(_nouns(kinds, gender, plural is True))
    if plural is None:
        plural = noun.countable and rng.random() < 0.4
    chosen = rng.choice(_adjectives(noun)) if adjective else None
    return NounPhrase(noun, plural, chosen, possessor)


def _other_noun_phrase(rng: random.Random, kinds: frozenset[str],
                       first: NounPhrase) -> NounPhrase:
    """A noun phrase whose noun differs from `first`'s, to coordinate with it."""
    while True:
        phrase = _noun_phrase(rng, kinds)
        if phrase.noun != first.noun:
            return phrase


def _complement(rng: random.Random, verb: Verb, adjective: bool = False):
    """An object, a destination or a place for `verb`, as its frame asks (a place is optional)."""
    if verb.frame == "transitive":
        return _noun_phrase(rng, verb.objects, adjective=adjective)
    if verb.frame == "motion" or rng.random() < 0.7:
        return _noun_phrase(rng, verb.objects, adjective=adjective, plural=False)
    return None


def _action(rng: random.Random, verb: Verb, complement, negated: bool = False) -> Action:
    """`verb` in a random tense; a negation is contracted ("didn't") half the time."""
    return Action(verb, rng.choice(TENSES), complement, negated,
                  negated and rng.random() < 0.5)


def _description(rng: random.Random, complement, negated: bool = False) -> Description:
    return Description(complement, rng.choice(TENSES), negated, negated and rng.random() < 0.5)


def adjective_order(rng: random.Random) -> Sentence:
    """The adjective follows its noun: "the black cat drank the milk" → "el gato negro bebió
    la leche"."""
    verb = rng.choice(_TRANSITIVE)
    subject = _noun_phrase(rng, verb.subjects, adjective=True, plural=False)
    return Sentence(subject, _action(rng, verb, _complement(rng, verb, rng.random() < 0.5)))


def agreement(rng: random.Random) -> Sentence:
    """Articles and adjectives agree with the noun in gender and number: "the happy girls ate
    the green apples" → "las niñas felices comieron las manzanas verdes", "the girl and the
    woman are tired" → "la niña y la mujer están cansadas"."""
    if rng.random() < 0.5:
        adjective = rng.choice(_ANIMATE_ADJECTIVES)
        first = _noun_phrase(rng, adjective.kinds & ANIMATE)
        subject = Coordination(first, _other_noun_phrase(rng, adjective.kinds & ANIMATE, first))
        return Sentence(subject, _description(rng, Quality(adjective)))
    verb = rng.choice(_TRANSITIVE)
    subject = _noun_phrase(rng, verb.subjects, adjective=True, plural=True)
    return Sentence(subject, _action(rng, verb, _complement(rng, verb, adjective=True)))


def tense(rng: random.Random) -> Sentence:
    """The verb agrees with a singular or plural subject in the present, preterite or
    future: "the boys had the ball" → "los niños tuvieron la bola"."""
    verb = rng.choice(VERBS)
    subject = _noun_phrase(rng, verb.subjects)
    complement = _complement(rng, verb)
    if verb.frame == "transitive" and rng.random() < 0.25:
        complement = Coordination(complement, _other_noun_phrase(rng, verb.objects, complement))
    return Sentence(subject, _action(rng, verb, complement))


def negation(rng: random.Random) -> Sentence:
    """do-support and "not" become "no" before the verb: "the dog does not eat the bread" →
    "el perro no come el pan", "didn't cross" → "no cruzó"."""
    verb = rng.choice(VERBS)
    subject = _noun_phrase(rng, verb.subjects)
    return Sentence(subject, _action(rng, verb, _complement(rng, verb), negated=True))


def possessive(rng: random.Random) -> Sentence:
    """The owner follows what it owns as a "de" phrase: "the girl's red book" → "el libro
    rojo de la niña"."""
    return _owned(rng, _noun_phrase(rng, _PERSON))


def contraction(rng: random.Random) -> Sentence:
    """de + el → del, a + el → al: "the boy's dog" → "el perro del niño", "the girl walks to
    the park" → "la niña camina al parque", "sees the boy" → "ve al niño"."""
    masculine = {"gender": "m", "plural": False}
    case = rng.randrange(3)
    if case == 0:
        return _owned(rng, _noun_phrase(rng, _PERSON, **masculine))
    if case == 1:
        verb = rng.choice(_MOTION)
        target = _noun_phrase(rng, verb.objects, **masculine)
    else:
        verb = rng.choice(_PERSONAL)
        target = _noun_phrase(rng, verb.objects & ANIMATE, **masculine)
    return Sentence(_noun_phrase(rng, verb.subjects), _action(rng, verb, target))


def _owned(rng: random.Random, owner: NounPhrase) -> Sentence:
    """A sentence about something `owner` owns, as subject or as object."""
    if rng.random() < 0.5:
        verb = rng.choice(_OWNED_OBJECT)
        owned = _noun_phrase(rng, verb.objects & _OWNABLE, adjective=rng.random() < 0.5,
                             possessor=owner)
        return Sentence(_noun_phrase(rng, verb.subjects), _action(rng, verb, owned))
    owned = _noun_phrase(rng, _OWNABLE, possessor=owner)
    return Sentence(owned, _description(rng, Quality(rng.choice(_adjectives(owned.noun)))))


def ser_estar(rng: random.Random) -> Sentence:
    """ser for lasting properties, estar for states and places: "the ball is blue" → "la
    bola es azul", "the cat is tired" → "el gato está cansado", "the book is in the house"
    → "el libro está en la casa"."""
    negated = rng.random() < 0.25
    if rng.random() < 0.6:
        subject = _noun_phrase(rng, _ANY_NOUN)
        quality = Quality(rng.choice(_adjectives(subject.noun)))
        return Sentence(subject, _description(rng, quality, negated))
    preposition = rng.choice(PREPOSITIONS)
    subject = _noun_phrase(rng, _LOCATABLE)
    place = _noun_phrase(rng, preposition.kinds, plural=False)
    return Sentence(subject, _description(rng, Location(preposition, place), negated))


def because_clause(rng: random.Random) -> Sentence:
    """The reason drops its pronoun and its adjective agrees with the subject: "the animal
    didn't cross the street because it was too tired" → "el animal no cruzó la calle porque
    estaba demasiado cansado"."""
    verb = rng.choice(VERBS)
    subject = _noun_phrase(rng, verb.subjects)
    negated = rng.random() < 0.5
    action = _action(rng, verb, _complement(rng, verb), negated)
    state = Quality(rng.choice(_adjectives(subject.noun, "estar")), too=negated)
    return Sentence(subject, action, Description(state, action.tense))


PHENOMENA = {generator.__name__: generator for generator in (
    adjective_order, agreement, tense, negation, possessive, contraction, ser_estar,
    because_clause)}


def construction(sentence: Sentence) -> str:
    """The sentence pattern of `sentence`, one of CONSTRUCTIONS."""
    predicate = sentence.predicate
    if sentence.reason:
        return "because"
    if isinstance(predicate, Description):
        if isinstance(predicate.complement, Location):
            return "location"
        return "coordinated_subject" if isinstance(sentence.subject, Coordination) else "quality"
    if predicate.verb.frame == "transitive":
        if isinstance(predicate.complement, Coordination):
            return "coordinated_object"
        return "personal_object" if is_animate(predicate.complement) else "transitive"
    if predicate.verb.frame == "motion":
        return "motion"
    return "activity" if predicate.complement else "intransitive"
