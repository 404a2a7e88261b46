"""The grammar choices a sentence makes (its features), and its sentence pattern.

A feature is a string: for each noun phrase slot, "subject:", "object:", "place:" (the
noun phrase after a preposition: "in the house", "to the park") and "possessor:" (an owner),
whether it has an "adjective", a "possessor" or a "coordination" (as far as the slot can:
a place is never coordinated, an owner has only an adjective); the predicate,
"predicate:action", "predicate:ser" or "predicate:estar" (a quality) or
"predicate:location"; "tense:present", "tense:past" or "tense:future"; "negated" and
"contracted" (a negation anywhere, contracted); "because". A feature pair is two features
of one sentence, written "a+b" with a before b in FEATURES' order.
"""

from itertools import combinations

from .syntax import Action, Coordination, Description, Location, NounPhrase, Sentence, is_animate

FEATURES = (
    "subject:adjective", "subject:possessor", "subject:coordination",
    "object:adjective", "object:possessor", "object:coordination",
    "place:adjective", "place:possessor", "possessor:adjective",
    "predicate:action", "predicate:ser", "predicate:estar", "predicate:location",
    "tense:present", "tense:past", "tense:future", "negated", "contracted", "because",
)
CONSTRUCTIONS = ("transitive", "personal_object", "coordinated_object", "motion", "activity",
                 "intransitive", "quality", "location", "coordinated_subject", "because")


def features(sentence: Sentence) -> frozenset[str]:
    """The features of `sentence` (a subset of FEATURES)."""
    found = set(_phrase_features("subject", sentence.subject))
    predicate = sentence.predicate
    complement = predicate.complement
    if isinstance(predicate, Action):
        found.add("predicate:action")
        if predicate.complement is not None:
            slot = "object" if predicate.verb.frame == "transitive" else "place"
            found |= _phrase_features(slot, predicate.complement)
    elif isinstance(complement, Location):
        found.add("predicate:location")
        found |= _phrase_features("place", complement.place)
    else:
        found.add(f"predicate:{predicate.copula}")
    found.add(f"tense:{predicate.tense}")
    predicates = [predicate] + ([sentence.reason] if sentence.reason is not None else [])
    if any(p.negated for p in predicates):
        found.add("negated")
    if any(p.contracted for p in predicates):
        found.add("contracted")
    if sentence.reason:
        found.add("because")
    return frozenset(found)


def feature_pairs(sentence: Sentence) -> set[str]:
    """Every feature pair of `sentence`, as "a+b"."""
    ordered = sorted(features(sentence), key=FEATURES.index)
    return {f"{a}+{b}" for a, b in combinations(ordered, 2)}


def _phrase_features(slot: str, phrase: NounPhrase | Coordination) -> set[str]:
    if isinstance(phrase, Coordination):
        return ({f"{slot}:coordination"} | _phrase_features(slot, phrase.first)
                | _phrase_features(slot, phrase.second))
    found = {f"{slot}:adjective"} if phrase.adjective else set()
    if phrase.possessor:
        found.add(f"{slot}:possessor")
        found |= _phrase_features("possessor", phrase.possessor)
    return found


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
