"""toy-en-es: a synthetic English→Spanish translation data set, deterministic from a seed.

Sentences come from eight phenomenon generators (phenomena.py) over a hand-written
lexicon (lexicon.py), are said in both languages by syntax.py, and are split into:

- train / valid / test: i.i.d. draws from the same distribution, distinct by source;
- compositional: sentences that contain a held-out combination (an adjective with a
  noun, or a verb negated in a tense) never seen in the other splits, although each of
  its words is.

The three sentences quoted in the articles are always in train.
"""

import random

from .example import Example
from .parse import parse
from .phenomena import PHENOMENA
from .syntax import (
    Coordination,
    Description,
    Location,
    NounPhrase,
    Quality,
    Sentence,
    english,
    spanish,
)
from .tokenizer import detokenize

ARTICLE_EXAMPLES = (
    ("the ball is blue", "ser_estar"),
    ("the black cat drank the milk", "adjective_order"),
    ("the animal didn't cross the street because it was too tired", "because_clause"),
)

# (adjective, noun): never together, attributively ("the white horse") or predicatively
# ("the horse is white"), outside the compositional split.
HELD_OUT_ADJECTIVE_NOUNS = frozenset({
    ("white", "horse"), ("red", "car"), ("hungry", "dog"), ("tired", "cow"),
    ("broken", "cup"), ("cold", "milk"), ("big", "house"), ("old", "man"),
    ("happy", "cat"), ("open", "door"), ("blue", "book"), ("sad", "boy"),
    ("small", "bird"), ("heavy", "box"), ("clean", "kitchen"), ("sweet", "cake"),
    ("expensive", "coffee"), ("young", "queen"), ("strong", "bear"), ("angry", "mother"),
    ("wet", "shoe"), ("empty", "bottle"), ("yellow", "hat"), ("scared", "mouse"),
})
# (verb, tense): never negated in that tense outside the compositional split. The tense is
# the future: "won't bring" → "no traerá" asks for the negation rule on a verb whose future
# form ("will bring" → "traerá") is seen with the same English word. (Holding out a negated
# past, "didn't bring" → "no trajo", would ask the model to link "bring" to "brought" — two
# unrelated tokens — which a word-level model cannot infer: measured at about 55% exact
# match, while unseen adjective–noun pairs reached 100%.)
HELD_OUT_NEGATED_VERBS = frozenset({
    ("bring", "future"), ("have", "future"), ("write", "future"), ("drink", "future"),
    ("open", "future"), ("swim", "future"), ("go", "future"), ("see", "future"),
})
_MAX_MISSES = 10_000  # draws in a row that add nothing before generation gives up


def translate_known(text: str) -> str:
    """The Spanish translation of an English sentence of the grammar (else ValueError)."""
    return detokenize(spanish(parse(text)))


def held_out_combinations(sentence: Sentence) -> set[tuple[str, str]]:
    """The held-out combinations `sentence` contains; empty for a sentence fit for train."""
    return ((_adjective_nouns(sentence) & HELD_OUT_ADJECTIVE_NOUNS)
            | (_negated_verbs(sentence) & HELD_OUT_NEGATED_VERBS))


def _adjective_nouns(sentence: Sentence) -> set[tuple[str, str]]:
    """Every (adjective, noun) said together, attributively or of the subject."""
    phrases = list(_noun_phrases(sentence.subject))
    complement = sentence.predicate.complement
    if isinstance(complement, Location):
        complement = complement.place
    if isinstance(complement, (NounPhrase, Coordination)):
        phrases += _noun_phrases(complement)
    pairs = {(p.adjective.english, p.noun.english) for p in phrases if p.adjective}
    for description in (sentence.predicate, sentence.reason):
        if isinstance(description, Description) and isinstance(description.complement, Quality):
            adjective = description.complement.adjective.english
            pairs |= {(adjective, head.noun.english) for head in _heads(sentence.subject)}
    return pairs


def _heads(phrase: NounPhrase | Coordination) -> list[NounPhrase]:
    """The noun phrases a subject consists of: both sides of a coordination, no owners."""
    return [phrase.first, phrase.second] if isinstance(phrase, Coordination) else [phrase]


def _noun_phrases(phrase: NounPhrase | Coordination):
    """Every noun phrase inside `phrase`, owners included."""
    for head in _heads(phrase):
        yield head
        if head.possessor:
            yield from _noun_phrases(head.possessor)


def _negated_verbs(sentence: Sentence) -> set[tuple[str, str]]:
    predicate = sentence.predicate
    if isinstance(predicate, Description) or not predicate.negated:
        return set()
    return {(predicate.verb.english[0], predicate.tense)}


def toy_en_es(seed: int = 0, *, n_train: int = 50_000, n_valid: int = 1_000,
              n_test: int = 2_000, n_compositional: int = 1_000) -> dict[str, list[Example]]:
    """The toy-en-es splits, {"train", "valid", "test", "compositional"}, from `seed`.

    Each draw picks a phenomenon uniformly, then a sentence from its generator; sources
    are distinct across all splits. The article examples count towards `n_train`.
    """
    rng = random.Random(seed)
    articles = [Example(text, translate_known(text), name) for text, name in ARTICLE_EXAMPLES]
    n_iid = n_train - len(articles) + n_valid + n_test
    iid, compositional = [], []
    seen = {example.src for example in articles}
    names = sorted(PHENOMENA)
    misses = 0  # draws in a row that added nothing
    while len(iid) < n_iid or len(compositional) < n_compositional:
        if misses == _MAX_MISSES:
            raise ValueError("the grammar ran out of distinct sentences; ask for fewer")
        name = rng.choice(names)
        sentence = PHENOMENA[name](rng)
        pool, size = ((compositional, n_compositional) if held_out_combinations(sentence)
                      else (iid, n_iid))
        source = detokenize(english(sentence))
        if len(pool) < size and source not in seen:
            seen.add(source)
            pool.append(Example(source, detokenize(spanish(sentence)), name))
            misses = 0
        else:
            misses += 1
    train = iid[n_valid + n_test:] + articles
    rng.shuffle(train)
    return {"train": train, "valid": iid[:n_valid], "test": iid[n_valid:n_valid + n_test],
            "compositional": compositional}
