"""Random sentences of the toy grammar, drawn by derivation over the whole grammar.

`derive(rng, weights)` expands the grammar top down: a predicate (an action, a quality or
a location), a subject it fits, then every optional part (an adjective, an owner, a second
coordinated noun phrase, a negation, a because-clause, ...) by a coin of `weights`. Every
production the parser accepts can be chosen, with the agreement rules of syntax.py; what
is left out on purpose (nonsense like "the table eats the dog") is listed in docs/data.md.

Three weightings: TRAINING draws train, valid, test and compositional; BALANCED draws the
cross-construction split: every choice between kinds (of predicate, number, negation,
"too", ...) is a fair coin there, the optional noun phrase parts and the because-clause are
less frequent than in training (so that its sentences, each holding a held-out pair, are not
much longer than training's). LONGEST takes nearly every optional part: it draws the long
split and a share of train, the sentences at the grammar's longest.
"""

import random
from dataclasses import dataclass
from functools import cache

from .lexicon import ADJECTIVES, NOUNS, PREPOSITIONS, TENSES, VERBS, Adjective, Noun
from .syntax import Action, Coordination, Description, Location, NounPhrase, Quality, Sentence

PREDICATES = ("action", "quality", "location")
OWNERS = frozenset({"person"})  # "the girl's book", "the boy's dog", "the king's mother"
LOCATABLE = frozenset({"person", "animal", "portable"})  # what "is in the house"


@dataclass(frozen=True)
class Weights:
    """How often each choice of a derivation is taken: a probability for each optional part,
    and relative weights of the predicates (action, quality, location)."""

    predicates: tuple[float, float, float]
    coordination: float    # a subject or object is two noun phrases: "the cat and the girl"
    adjective: float       # a noun phrase has an adjective: "the black cat"
    possessor: float       # a noun phrase has an owner: "the girl's book"
    plural: float          # a countable noun is plural
    negated: float         # a predicate is negated: "did not eat", "isn't"
    contracted: float      # a negation is contracted: "didn't" rather than "did not"
    too: float             # a quality takes "too": "is too tired"
    reason: float          # a because-clause follows: "because it was tired"
    other_tense: float     # the because-clause is in another tense: "is sad because it was sick"
    activity_place: float  # an activity says where: "sleeps in the house"


TRAINING = Weights(predicates=(0.5, 0.3, 0.2), coordination=0.3, adjective=0.35,
                   possessor=0.3, plural=0.4, negated=0.45, contracted=0.5, too=0.3,
                   reason=0.3, other_tense=0.2, activity_place=0.7)
BALANCED = Weights(predicates=(1, 1, 1), coordination=0.25, adjective=0.35, possessor=0.2,
                   plural=0.5, negated=0.5, contracted=0.5, too=0.5, reason=0.2,
                   other_tense=0.5, activity_place=0.5)
# Coordination below 1: a coordinated subject is never negated outside the cross-construction
# split, so a single subject is what lets a long sentence hold a negation.
LONGEST = Weights(predicates=(0.6, 0.2, 0.2), coordination=0.7, adjective=0.8, possessor=0.8,
                  plural=0.5, negated=0.5, contracted=0.5, too=0.5, reason=0.5,
                  other_tense=0.5, activity_place=1.0)


@cache
def nouns(kinds: frozenset[str]) -> tuple[Noun, ...]:
    """The nouns of one of `kinds`."""
    return tuple(noun for noun in NOUNS if noun.kinds & kinds)


@cache
def adjectives(kinds: frozenset[str]) -> tuple[Adjective, ...]:
    """Adjectives that can describe a noun of `kinds`."""
    return tuple(adjective for adjective in ADJECTIVES if adjective.kinds & kinds)


@cache
def adjectives_of_all(kinds: tuple[frozenset[str], ...]) -> tuple[Adjective, ...]:
    """Adjectives that can describe a noun of each of `kinds` (a quality said of a whole
    subject)."""
    return tuple(adjective for adjective in ADJECTIVES
                 if all(adjective.kinds & noun_kinds for noun_kinds in kinds))


def derive(rng: random.Random, weights: Weights = TRAINING) -> Sentence:
    """A random sentence of the grammar, each choice taken as `weights` say."""
    tense = rng.choice(TENSES)
    negated, contracted = _negation(rng, weights)
    kind = rng.choices(PREDICATES, weights.predicates)[0]
    if kind == "action":
        verb = rng.choice(VERBS)
        subject = _noun_phrases(rng, verb.subjects, weights)
        predicate: Action | Description = Action(verb, tense, _complement(rng, verb, weights),
                                                 negated, contracted)
    elif kind == "quality":
        adjective = rng.choice(ADJECTIVES)
        subject = _noun_phrases(rng, adjective.kinds, weights)
        quality = Quality(adjective, rng.random() < weights.too)
        predicate = Description(quality, tense, negated, contracted)
    else:
        preposition = rng.choice(PREPOSITIONS)
        subject = _noun_phrases(rng, LOCATABLE, weights)
        place = _noun_phrase(rng, preposition.kinds, weights)
        predicate = Description(Location(preposition, place), tense, negated, contracted)
    reason = _reason(rng, subject, tense, weights) if rng.random() < weights.reason else None
    return Sentence(subject, predicate, reason)


def _negation(rng: random.Random, weights: Weights) -> tuple[bool, bool]:
    """(negated, contracted)."""
    negated = rng.random() < weights.negated
    return negated, negated and rng.random() < weights.contracted


def _noun_phrase(rng: random.Random, kinds: frozenset[str], weights: Weights,
                 owned: bool = True) -> NounPhrase:
    """'the [adjective] noun' of one of `kinds`, maybe plural, maybe owned (if `owned`)."""
    noun = rng.choice(nouns(kinds))
    plural = noun.countable and rng.random() < weights.plural
    fitting = adjectives(noun.kinds)
    adjective = rng.choice(fitting) if fitting and rng.random() < weights.adjective else None
    possessor = None
    if owned and rng.random() < weights.possessor:  # an owner has no owner of its own
        possessor = _noun_phrase(rng, OWNERS, weights, owned=False)
    return NounPhrase(noun, plural, adjective, possessor)


def _noun_phrases(rng: random.Random, kinds: frozenset[str],
                  weights: Weights) -> NounPhrase | Coordination:
    """A noun phrase, or two of different nouns coordinated (a subject or an object)."""
    first = _noun_phrase(rng, kinds, weights)
    if rng.random() >= weights.coordination:
        return first
    while (second := _noun_phrase(rng, kinds, weights)).noun == first.noun:
        pass
    return Coordination(first, second)


def _complement(rng: random.Random, verb, weights: Weights):
    """What `verb`'s frame asks for: an object, a destination, or (maybe) a place."""
    if verb.frame == "transitive":
        return _noun_phrases(rng, verb.objects, weights)
    if verb.frame == "motion" or rng.random() < weights.activity_place:
        return _noun_phrase(rng, verb.objects, weights)
    return None


def _reason(rng: random.Random, subject, tense: str, weights: Weights) -> Description | None:
    """'because it was [too] tired', 'because it is in the house': a quality that fits every
    noun of the subject, or a place if they are all locatable; mostly in the tense of the
    sentence. None when no quality fits them all."""
    heads = [subject.first, subject.second] if isinstance(subject, Coordination) else [subject]
    if rng.random() < weights.other_tense:
        tense = rng.choice([other for other in TENSES if other != tense])
    locatable = all(head.noun.kinds & LOCATABLE for head in heads)
    if locatable and rng.choices(PREDICATES[1:], weights.predicates[1:])[0] == "location":
        preposition = rng.choice(PREPOSITIONS)
        complement: Location | Quality = Location(
            preposition, _noun_phrase(rng, preposition.kinds, weights))
    else:
        fitting = adjectives_of_all(tuple(head.noun.kinds for head in heads))
        if not fitting:
            return None
        complement = Quality(rng.choice(fitting), rng.random() < weights.too)
    return Description(complement, tense, *_negation(rng, weights))
