"""toy-en-es: a synthetic English→Spanish translation data set, deterministic from a seed.

Sentences are random derivations of the whole grammar (derivation.py) over a hand-written
lexicon (lexicon.py), said in both languages by syntax.py, and split into:

- train / valid / test: i.i.d. draws from the same distribution, distinct by source;
- compositional: sentences that contain a held-out combination (an adjective with a
  noun, or a verb negated in a tense) never seen in the other splits, although each of
  its words is;
- cross_construction: sentences with a held-out feature pair (two grammar choices, as
  features.py names them, such as a coordinated subject with a negation) that never occur
  together in the other splits, drawn by a sampler weighted differently;
- long: sentences at the grammar's longest (LONG_WORDS English tokens or more), drawn by the
  LONGEST sampler as train's long share is, with no held-out pair or combination.

The three sentences quoted in the articles are always in train.
"""

import random

from .derivation import BALANCED, LONGEST, TRAINING, derive
from .example import Example
from .features import construction, features
from .parse import parse
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

ARTICLE_EXAMPLES = ("the ball is blue", "the black cat drank the milk",
                    "the animal didn't cross the street because it was too tired")

# Feature pairs (features.py) that never occur together outside the cross_construction
# split, fixed before any model was trained on them: each slot, tense and negation in turn.
HELD_OUT_FEATURE_PAIRS = frozenset({
    "subject:coordination+negated",         # the girl and the boy didn't eat the bread
    "subject:adjective+predicate:ser",      # the blue balls are black
    "subject:possessor+because",            # the girl's dog slept because it was tired
    "object:adjective+tense:future",        # the boy will eat the red apple
    "object:coordination+tense:past",       # the cat saw the dog and the bird
    "object:possessor+negated",             # the girl doesn't see the boy's dog
    "place:adjective+predicate:location",   # the book is on the big table
    "place:possessor+tense:past",           # the boy walked to the girl's house
    "possessor:adjective+predicate:estar",  # the old man's dog is tired
})

_HELD_OUT_PAIRS_SPLIT = tuple((pair, tuple(pair.split("+"))) for pair in HELD_OUT_FEATURE_PAIRS)

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
# The long split's floor: 20 English tokens ("'s" counts as one) is longer than 99.7% of
# TRAINING derivations (the longest reach 24) and than about 3 in 4 of LONGEST's.
LONG_WORDS = 20
LONG_SHARE = 0.2  # of train, drawn by LONGEST: the long shapes TRAINING almost never draws
LONG_SHARE_WORDS = 18  # the least English tokens of a sentence of train's long share
_MAX_MISSES = 10_000  # draws in a row that add nothing before generation gives up


def translate_known(text: str) -> str:
    """The Spanish translation of an English sentence of the grammar (else ValueError)."""
    return detokenize(spanish(parse(text)))


def held_out_feature_pairs(sentence: Sentence) -> set[str]:
    """The held-out feature pairs of `sentence` (features.feature_pairs(sentence) &
    HELD_OUT_FEATURE_PAIRS, without writing out its every pair); empty for one fit for train."""
    found = features(sentence)
    return {pair for pair, (a, b) in _HELD_OUT_PAIRS_SPLIT if a in found and b in found}


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
              n_test: int = 2_000, n_compositional: int = 1_000, n_cross: int = 1_000,
              n_long: int = 1_000, long_share: float = LONG_SHARE) -> dict[str, list[Example]]:
    """The toy-en-es splits, {"train", "valid", "test", "compositional", "cross_construction",
    "long"}, from `seed`.

    Train, valid, test and compositional are derivations weighted as `derivation.TRAINING`,
    without a held-out feature pair, but for `long_share` of train: `derivation.LONGEST`
    derivations of at least LONG_SHARE_WORDS tokens. Cross_construction is drawn by
    `derivation.BALANCED`, each sentence with exactly one held-out feature pair, the pairs in
    turn; long by LONGEST, sentences of at least LONG_WORDS tokens fit for train. Each of
    these three draws from random numbers of its own. Sources are distinct across all splits;
    the article examples count towards `n_train`. An example's phenomenon is its
    construction, or in cross_construction its held-out pair.
    """
    rng = random.Random(seed)
    articles = [Example(text, translate_known(text), construction(parse(text)))
                for text in ARTICLE_EXAMPLES]
    seen = {example.src for example in articles}
    n_longest = round(long_share * n_train)
    n_iid = n_train - len(articles) - n_longest + n_valid + n_test
    iid: list = []
    compositional: list = []
    misses = _Misses()
    while len(iid) < n_iid or len(compositional) < n_compositional:
        sentence = derive(rng, TRAINING)
        pool, size = ((compositional, n_compositional) if held_out_combinations(sentence)
                      else (iid, n_iid))
        fits = len(pool) < size and not held_out_feature_pairs(sentence)
        misses.count(fits and _add(pool, sentence, construction(sentence), seen))
    longest = random.Random(f"longest {seed}")
    train = (iid[n_valid + n_test:] + articles
             + _fit_for_train(longest, n_longest, seen, min_words=LONG_SHARE_WORDS))
    rng.shuffle(train)
    return {"train": train, "valid": iid[:n_valid], "test": iid[n_valid:n_valid + n_test],
            "compositional": compositional,
            "cross_construction": _cross_construction(seed, n_cross, seen),
            "long": _fit_for_train(random.Random(f"long {seed}"), n_long, seen,
                                   min_words=LONG_WORDS)}


def _fit_for_train(rng: random.Random, size: int, seen: set[str],
                   min_words: int = 0) -> list[Example]:
    """`size` LONGEST derivations of at least `min_words` English tokens, with no held-out
    feature pair or combination."""
    examples: list = []
    misses = _Misses()
    while len(examples) < size:
        sentence = derive(rng, LONGEST)
        fits = (len(english(sentence)) >= min_words
                and not held_out_feature_pairs(sentence)
                and not held_out_combinations(sentence))
        misses.count(fits and _add(examples, sentence, construction(sentence), seen))
    return examples


def _cross_construction(seed: int, size: int, seen: set[str]) -> list[Example]:
    """`size` sentences of BALANCED derivations, each with one held-out feature pair (the pairs
    in turn, its label) and no held-out combination."""
    rng = random.Random(f"cross-construction {seed}")
    pairs = sorted(HELD_OUT_FEATURE_PAIRS)
    examples: list = []
    misses = _Misses()
    while len(examples) < size:
        pair = pairs[len(examples) % len(pairs)]
        sentence = derive(rng, BALANCED)
        fits = (held_out_feature_pairs(sentence) == {pair}
                and not held_out_combinations(sentence))
        misses.count(fits and _add(examples, sentence, pair, seen))
    return examples


def _add(pool: list[Example], sentence: Sentence, phenomenon: str, seen: set[str]) -> bool:
    """Append `sentence` to `pool` unless its source is in `seen`; whether it was added."""
    source = detokenize(english(sentence))
    if source in seen:
        return False
    seen.add(source)
    pool.append(Example(source, detokenize(spanish(sentence)), phenomenon))
    return True


class _Misses:
    """Counts draws in a row that added nothing, and gives up after _MAX_MISSES."""

    def __init__(self) -> None:
        self.in_a_row = 0

    def count(self, added: bool) -> None:
        self.in_a_row = 0 if added else self.in_a_row + 1
        if self.in_a_row == _MAX_MISSES:
            raise ValueError("the grammar ran out of distinct sentences; ask for fewer")
