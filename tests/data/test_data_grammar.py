"""toy-en-es, checked on the Spanish side by rules of Spanish written here, independently
of the grammar's word tables: article, noun and adjective agree by their endings; the
verb ends in -n exactly when its subject is plural; "no" comes right before the verb;
"de" phrases follow the noun; "del"/"al" replace "de el"/"a el"."""

import random
from collections import Counter
from itertools import combinations, pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from transformer.data import Example, detokenize, grammar, tokenize, toy_en_es
from transformer.data.derivation import BALANCED, LONGEST, TRAINING, derive
from transformer.data.features import (
    CONSTRUCTIONS,
    FEATURES,
    construction,
    feature_pairs,
    features,
)
from transformer.data.grammar import (
    ARTICLE_EXAMPLES,
    HELD_OUT_ADJECTIVE_NOUNS,
    HELD_OUT_FEATURE_PAIRS,
    HELD_OUT_NEGATED_VERBS,
    LONG_SHARE,
    LONG_WORDS,
    held_out_combinations,
    held_out_feature_pairs,
    translate_known,
)
from transformer.data.lexicon import ADJECTIVES, NOUNS, VERBS
from transformer.data.parse import parse
from transformer.data.syntax import english, spanish

# --- Spanish, written down independently -------------------------------------------------
ARTICLES = {"el": ("m", False), "la": ("f", False), "los": ("m", True), "las": ("f", True),
            "del": ("m", False), "al": ("m", False)}
COPULAS = {"es", "son", "era", "eran", "será", "serán",
           "está", "están", "estaba", "estaban", "estará", "estarán"}
ESTAR = {"está", "están", "estaba", "estaban", "estará", "estarán"}
PLACE_PREPOSITIONS = {"en", "sobre", "debajo", "cerca"}
FUNCTION_WORDS = set(ARTICLES) | COPULAS | PLACE_PREPOSITIONS | {
    "de", "a", "y", "no", "porque", "demasiado"}
MASCULINE_IN_A = {"mapa", "mapas", "día", "días", "problema", "problemas"}
FEMININE_IN_O = {"mano", "manos", "foto", "fotos"}
IRREGULAR_PRETERITES = {"fue", "vio", "tuvo", "hizo", "trajo", "vino", "dio", "puso"}
# English adjectives whose Spanish copula is known: states take estar, properties ser.
STATES = {"tired", "happy", "sad", "hungry", "sick", "angry", "open", "broken", "cold", "wet"}
PROPERTIES = {"blue", "red", "black", "white", "green", "big", "small", "old", "young", "tall"}


def noun_gender(noun):
    """The gender a Spanish noun's ending shows, or None when the ending does not tell."""
    if noun in MASCULINE_IN_A or noun in FEMININE_IN_O:
        return "m" if noun in MASCULINE_IN_A else "f"
    if noun.endswith(("ión", "iones", "dad", "dades", "triz", "trices", "a", "as")):
        return "f"
    return "m" if noun.endswith(("o", "os")) else None


def adjective_gender(adjective):
    """-o/-os masculine, -a/-as feminine; other endings (-e, consonant) show no gender."""
    return {"o": "m", "a": "f"}.get(adjective.rstrip("s")[-1:])


def predicate_words(examples, copulas, skip):
    """Words right after a copula (past `skip` words): the adjectives of a language."""
    words = set()
    for sentence in examples:
        tokens = tokenize(sentence)
        for i, token in enumerate(tokens[:-1]):
            if token in copulas:
                j = i + 1
                while j < len(tokens) - 1 and tokens[j] in skip:
                    j += 1
                words.add(tokens[j])
    return words - FUNCTION_WORDS - PLACE_PREPOSITIONS - {"in", "on", "under", "near"}


class Checker:
    """Checks a (source, target) pair by rules of Spanish, English used only for counts."""

    def __init__(self, examples):
        self.adjectives = predicate_words([e.tgt for e in examples], COPULAS, {"no", "demasiado"})
        self.english_adjectives = predicate_words(
            [e.src for e in examples], {"is", "are", "was", "were", "be", "isn't", "aren't",
                                        "wasn't", "weren't"}, {"not", "too"})

    def phrase_end(self, tokens, i):
        """End of the noun phrase whose article is at i: noun, adjective, 'de' owner."""
        j = i + 2
        if j < len(tokens) and tokens[j] in self.adjectives:
            j += 1
        if j < len(tokens) and tokens[j] == "de":
            return self.phrase_end(tokens, j + 1)
        if j < len(tokens) and tokens[j] == "del":
            return self.phrase_end(tokens, j)
        return j

    def check(self, source, target):
        en, es = tokenize(source), tokenize(target)
        assert detokenize(en) == source and detokenize(es) == target
        assert len(en) - en.count("'s") - en.count("'") >= 3
        self.check_noun_phrases(en, es)
        subject_gender, plural, end = self.check_subject(es)
        self.check_predicate(en, es, end, subject_gender, plural)
        self.check_negation(en, es, end)
        self.check_possessives(en, es)
        assert not {("de", "el"), ("a", "el")} & set(pairwise(es)), es
        if "because" in en:
            self.check_reason(en, es, subject_gender, plural)
        else:
            assert "porque" not in es

    def check_noun_phrases(self, en, es):
        """Article, noun and adjective agree; the adjective follows the noun."""
        spanish_adjectives = 0
        for i, token in enumerate(es):
            if token not in ARTICLES:
                continue
            gender, plural = ARTICLES[token]
            noun = es[i + 1]
            assert noun not in FUNCTION_WORDS and noun not in self.adjectives, (es, noun)
            assert noun.endswith("s") == plural, (es, noun)
            assert noun_gender(noun) in (None, gender), (es, noun)
            if i + 2 < len(es) and es[i + 2] in self.adjectives:
                spanish_adjectives += 1
                adjective = es[i + 2]
                assert adjective.endswith("s") == plural, (es, adjective)
                assert adjective_gender(adjective) in (None, gender), (es, adjective)
        english_adjectives = sum(word in self.english_adjectives and before in ("the", "'s", "'")
                                 for before, word in pairwise(en))
        assert spanish_adjectives == english_adjectives, (en, es)

    def check_subject(self, es):
        """The subject's gender and number (a coordination is plural, feminine only if
        all of it is), and where it ends."""
        assert es[0] in ARTICLES
        heads, end = [0], self.phrase_end(es, 0)
        if end < len(es) and es[end] == "y":
            heads.append(end + 1)
            end = self.phrase_end(es, end + 1)
        genders = {ARTICLES[es[i]][0] for i in heads}
        plural = len(heads) > 1 or ARTICLES[es[0]][1]
        return ("f" if genders == {"f"} else "m"), plural, end

    def check_predicate(self, en, es, end, gender, plural):
        verb_at = end + (es[end] == "no")
        verb = es[verb_at]
        self.check_verb(en, verb, plural)
        if verb in COPULAS:
            main = en[:en.index("because")] if "because" in en else en
            self.check_description(main, es, verb_at, gender, plural)

    def check_verb(self, en, verb, plural):
        """Number by the -n ending; the future by -rá/-rán; do-support past → preterite."""
        assert verb not in FUNCTION_WORDS - COPULAS and verb not in self.adjectives, verb
        assert verb.endswith("n") == plural, (en, verb)
        main = en[:en.index("because")] if "because" in en else en
        is_future = "will" in main or "won't" in main
        assert verb.endswith(("rá", "rán")) == is_future, (en, verb)
        if "did" in main or "didn't" in main:
            assert verb.endswith(("ó", "ron")) or verb in IRREGULAR_PRETERITES, (en, verb)
        if {"do", "does", "don't", "doesn't"} & set(main):
            assert not verb.endswith(("ó", "ron", "rá", "rán")), (en, verb)
        if {"was", "were", "wasn't", "weren't"} & set(main):
            assert verb in {"era", "eran", "estaba", "estaban"}, (en, verb)

    def check_description(self, en, es, copula_at, gender, plural):
        """ser/estar by meaning; a predicate adjective agrees with the subject (`en`: the
        English clause that says it)."""
        after = es[copula_at + 1:]
        if after[0] in PLACE_PREPOSITIONS:
            assert es[copula_at] in ESTAR, es
            return
        adjective = after[1] if after[0] == "demasiado" else after[0]
        assert adjective in self.adjectives, es
        assert adjective.endswith("s") == plural, es
        assert adjective_gender(adjective) in (None, gender), es
        if en[-1] in STATES:  # the clause ends with its adjective
            assert es[copula_at] in ESTAR, (en, es)
        if en[-1] in PROPERTIES:
            assert es[copula_at] not in ESTAR, (en, es)

    def check_negation(self, en, es, end):
        """One "no" per English negation, right after the subject (or "porque"), right
        before the verb."""
        negations = sum(word == "not" or word.endswith("n't") for word in en)
        positions = [i for i, word in enumerate(es) if word == "no"]
        assert len(positions) == negations, (en, es)
        for i in positions:
            assert i == end or es[i - 1] == "porque", es
            assert es[i + 1] not in FUNCTION_WORDS - COPULAS, es

    def check_possessives(self, en, es):
        """One "de" phrase per English possessive, right after a noun (or its adjective)."""
        owners = [i for i, word in enumerate(es)
                  if word in ("de", "del") and es[i - 1] not in ("debajo", "cerca")]
        assert len(owners) == en.count("'s") + en.count("'"), (en, es)
        for i in owners:
            assert es[i - 2] in ARTICLES or (es[i - 3] in ARTICLES and es[i - 1]
                                             in self.adjectives), es

    def check_reason(self, en, es, gender, plural):
        """'porque' + [no] copula + [demasiado] adjective, agreeing with the subject; the
        English pronoun refers to the subject."""
        pronoun = en[en.index("because") + 1]
        assert (pronoun == "they") == plural
        assert pronoun not in ("he", "she") or {"he": "m", "she": "f"}[pronoun] == gender
        at = es.index("porque")
        copula_at = at + 1 + (es[at + 1] == "no")
        assert es[copula_at] in COPULAS and es[copula_at].endswith("n") == plural, es
        reason = en[en.index("because"):]
        assert ("demasiado" in es[at:]) == ("too" in reason)
        self.check_description(reason, es, copula_at, gender, plural)


# --- the data set ------------------------------------------------------------------------
@pytest.fixture(scope="module")
def data():
    return toy_en_es(0)


@pytest.fixture(scope="module")
def checker(data):
    return Checker([e for split in data.values() for e in split])


def test_default_sizes(data):
    assert {name: len(split) for name, split in data.items()} == {
        "train": 50_000, "valid": 1_000, "test": 2_000, "compositional": 1_000,
        "cross_construction": 1_000, "long": 1_000}
    assert all(isinstance(e, Example) for split in data.values() for e in split)
    assert len({e.src for e in data["train"]}) == 50_000


def test_article_examples_are_reproduced_and_in_train(data):
    assert translate_known("the ball is blue") == "la bola es azul"
    assert translate_known("the black cat drank the milk") == "el gato negro bebió la leche"
    assert (translate_known("the animal didn't cross the street because it was too tired")
            == "el animal no cruzó la calle porque estaba demasiado cansado")
    train = {(e.src, e.tgt) for e in data["train"]}
    for source in ARTICLE_EXAMPLES:
        assert (source, translate_known(source)) in train
        assert held_out_combinations(parse(source)) == set()


@pytest.mark.parametrize("english_text, spanish_text", [
    ("the boy had the ball", "el niño tuvo la bola"),
    ("the girls made the cake", "las niñas hicieron el pastel"),
    ("the boy went to the park", "el niño fue al parque"),
    ("the dogs ate the bread", "los perros comieron el pan"),
    ("the dog eats the bread", "el perro come el pan"),
    ("the dogs eat the bread", "los perros comen el pan"),
    ("the dog was tired", "el perro estaba cansado"),
    ("the dog does not eat the bread", "el perro no come el pan"),
    ("the dogs don't drink the milk", "los perros no beben la leche"),
    ("the girl doesn't see the boy", "la niña no ve al niño"),
    ("the women won't walk to the park", "las mujeres no caminarán al parque"),
    ("the girl's red book is on the table", "el libro rojo de la niña está sobre la mesa"),
    ("the boy's dog is hungry", "el perro del niño está hambriento"),
    ("the girls' dogs are happy", "los perros de las niñas están felices"),
    ("the girl walks to the park", "la niña camina al parque"),
    ("the cat is tired", "el gato está cansado"),
    ("the book is in the house", "el libro está en la casa"),
    ("the balls are green", "las bolas son verdes"),
    ("the girl and the woman were happy", "la niña y la mujer estaban felices"),
    ("the girl and the boy will be tired", "la niña y el niño estarán cansados"),
    ("the mice are under the bed", "los ratones están debajo de la cama"),
    ("the girl didn't eat the bread because she was too tired",
     "la niña no comió el pan porque estaba demasiado cansada"),
    ("the girls will not eat the bread because they will be too tired",
     "las niñas no comerán el pan porque estarán demasiado cansadas"),
])
def test_translations(english_text, spanish_text):
    assert translate_known(english_text) == spanish_text


@pytest.mark.parametrize("text", [
    "the dog eat the bread", "the dogs eats the bread", "the dog eats the", "hello world",
    "the dog is tired because he was tired", "the dog does not eats the bread",
    "the dog is tired because it ate the bread", "the girls's book is red",
])
def test_sentences_outside_the_grammar_are_rejected(text):
    with pytest.raises(ValueError):
        translate_known(text)


def test_every_pair_is_well_formed(data, checker):
    for split in data.values():
        for example in split:
            checker.check(example.src, example.tgt)


@pytest.mark.parametrize("source, wrong", [
    ("the black cat drank the milk", "el negro gato bebió la leche"),
    ("the black cat drank the milk", "el gato negra bebió la leche"),
    ("the black cat drank the milk", "los gato negro bebió la leche"),
    ("the black cat drank the milk", "el gato negro bebieron la leche"),
    ("the dog does not eat the bread", "el perro come no el pan"),
    ("the dog does not eat the bread", "el perro come el pan"),
    ("the dog didn't eat the bread", "el perro no come el pan"),
    ("the dog won't eat the bread", "el perro no comió el pan"),
    ("the boy's dog is hungry", "el perro de el niño está hambriento"),
    ("the boy's dog is hungry", "el perro del niño está hambrienta"),
    ("the girl's dog is hungry", "de la niña el perro está hambriento"),
    ("the girl walks to the park", "la niña camina a el parque"),
    ("the cat is tired", "el gato es cansado"),
    ("the ball is blue", "la bola está azul"),
    ("the book is in the house", "el libro es en la casa"),
    ("the girls were tired", "las niñas era cansadas"),
    ("the girl and the boy are tired", "la niña y el niño están cansadas"),
    ("the dog was tired", "el perro es cansado"),
    ("the girl didn't eat the bread because she was too tired",
     "la niña no comió el pan porque estaba demasiado cansado"),
    ("the girl didn't eat the bread because she was too tired",
     "la niña no comió el pan porque ella estaba demasiado cansada"),
    ("the girl didn't eat the bread because she was too tired",
     "la niña no comió el pan porque estaba cansada"),
])
def test_checker_catches_mistakes(checker, source, wrong):
    with pytest.raises(AssertionError):
        checker.check(source, wrong)


@given(st.integers(0, 2**32 - 1), st.sampled_from([TRAINING, BALANCED, LONGEST]))
def test_derived_sentences_translate_and_are_well_formed(checker, seed, weights):
    sentence = derive(random.Random(seed), weights)
    assert parse(detokenize(english(sentence))) == sentence
    source, target = detokenize(english(sentence)), detokenize(spanish(sentence))
    assert translate_known(source) == target
    checker.check(source, target)


def test_translation_function_agrees_with_the_data(data):
    for example in (data["valid"] + data["test"] + data["compositional"]
                    + data["cross_construction"] + data["long"]):
        assert translate_known(example.src) == example.tgt


def test_splits_are_disjoint_by_source(data):
    sources = [e.src for split in data.values() for e in split]
    assert len(sources) == len(set(sources))


def test_compositional_split(data):
    combinations = [held_out_combinations(parse(e.src)) for e in data["compositional"]]
    assert all(combinations)
    seen = set().union(*combinations)
    assert seen == HELD_OUT_ADJECTIVE_NOUNS | HELD_OUT_NEGATED_VERBS
    for split in ("train", "valid", "test", "cross_construction", "long"):
        assert not any(held_out_combinations(parse(e.src)) for e in data[split])
    train_words = {w for e in data["train"] for w in tokenize(e.src) + tokenize(e.tgt)}
    for example in data["compositional"]:
        assert set(tokenize(example.src) + tokenize(example.tgt)) <= train_words, example


def test_phenomena_are_constructions(data):
    for split in ("train", "valid", "test", "compositional", "long"):
        assert all(e.phenomenon == construction(parse(e.src)) for e in data[split])
    assert len(CONSTRUCTIONS) >= 10
    assert {e.phenomenon for e in data["test"]} == set(CONSTRUCTIONS)


def test_lexicon_size():
    assert len({n.english for n in NOUNS}) >= 60
    assert len({a.english for a in ADJECTIVES}) >= 30
    assert len({v.english[0] for v in VERBS}) >= 20
    assert all(n.countable for n in NOUNS if n.kinds & {"person", "animal", "place"})


def test_no_spanish_verb_form_is_an_adjective_or_noun():
    """What lets the checker above tell verbs from adjectives by position alone."""
    verb_forms = {form for verb in VERBS for form in verb.spanish}
    adjective_forms = {form for adjective in ADJECTIVES for form in adjective.forms}
    noun_forms = {form for noun in NOUNS for form in (noun.spanish, noun.spanish_plural)}
    assert not verb_forms & (adjective_forms | noun_forms)


def test_deterministic_from_the_seed():
    sizes = {"n_train": 300, "n_valid": 30, "n_test": 30, "n_compositional": 30,
             "n_cross": 27, "n_long": 20}
    first, again, other = toy_en_es(7, **sizes), toy_en_es(7, **sizes), toy_en_es(8, **sizes)
    assert first == again
    assert first["train"] != other["train"]
    assert {name: len(split) for name, split in first.items()} == {
        "train": 300, "valid": 30, "test": 30, "compositional": 30, "cross_construction": 27,
        "long": 20}


def test_running_out_of_sentences(monkeypatch):
    only = parse("the ball is blue")
    monkeypatch.setattr(grammar, "derive", lambda rng, weights: only)
    with pytest.raises(ValueError, match="ran out"):
        toy_en_es(0, n_train=10, n_valid=0, n_test=0, n_compositional=0, n_cross=0, n_long=0)


# --- the long split ----------------------------------------------------------------------
def test_the_long_split_is_the_grammars_longest(data):
    """At least LONG_WORDS English tokens each, longer than all but a few in a thousand of
    the TRAINING derivations (valid and test: train holds the long share besides)."""
    lengths = sorted(len(tokenize(e.src)) for e in data["valid"] + data["test"])
    assert all(len(tokenize(e.src)) >= LONG_WORDS for e in data["long"])
    assert sum(length >= LONG_WORDS for length in lengths) <= 0.005 * len(lengths)
    assert max(len(tokenize(e.src)) for e in data["long"]) > lengths[-1]


def test_the_long_split_holds_the_shapes_it_promises(data):
    """Two owned noun phrases with adjectives coordinated as subject and as object; and
    negations, because-clauses and every tense among its sentences."""
    counts = Counter(f for e in data["long"] for f in features(parse(e.src)))
    both_owned = [e for e in data["long"] if {
        "subject:coordination", "subject:possessor", "subject:adjective", "possessor:adjective",
        "object:coordination", "object:possessor", "object:adjective"} <= features(parse(e.src))]
    assert len(both_owned) >= 50
    for feature in ("negated", "contracted", "because", "tense:present", "tense:past",
                    "tense:future", "place:possessor", "predicate:location"):
        assert counts[feature] >= 5, feature


def test_train_draws_its_long_share_of_long_sentences(data):
    """Train holds LONG_SHARE of LONGEST derivations, long sentences that TRAINING almost never
    draws; the share takes the place of TRAINING sentences of train, never of valid or test."""
    long_in_train = sum(len(tokenize(e.src)) >= LONG_WORDS for e in data["train"])
    assert long_in_train >= 0.3 * LONG_SHARE * len(data["train"])
    sizes = {"n_train": 2000, "n_valid": 50, "n_test": 50, "n_compositional": 10,
             "n_cross": 9, "n_long": 0}
    without, with_share = toy_en_es(0, long_share=0, **sizes), toy_en_es(0, **sizes)
    assert without["valid"] == with_share["valid"] and without["test"] == with_share["test"]
    assert len(with_share["train"]) == len(without["train"]) == 2000
    assert set(e.src for e in with_share["train"]) - set(e.src for e in without["train"])


# --- features and the cross-construction split -------------------------------------------
def possible_pairs():
    """Every feature pair a sentence can have: not two values of one choice, an object only
    with an action, a place only with an action or a location, not an object and a place."""
    exclusive = [{f for f in FEATURES if f.startswith(prefix)} for prefix in ("predicate:",
                                                                            "tense:")]
    exclusive += [{f for f in FEATURES if f.startswith(("object:", "place:"))}]
    objects = {f for f in FEATURES if f.startswith("object:")}
    places = {f for f in FEATURES if f.startswith("place:")}
    pairs = set()
    for a, b in combinations(FEATURES, 2):
        both = {a, b}
        if any(len(both & group) == 2 for group in exclusive[:2]):
            continue
        if both & objects and both & places:
            continue
        if both & objects and both & {"predicate:ser", "predicate:estar", "predicate:location"}:
            continue
        if both & places and both & {"predicate:ser", "predicate:estar"}:
            continue
        pairs.add(f"{a}+{b}")
    return pairs


@pytest.fixture(scope="module")
def pairs_by_split(data):
    return {name: [feature_pairs(parse(e.src)) for e in split] for name, split in data.items()}


def test_every_feature_pair_is_in_train_unless_held_out(pairs_by_split):
    seen = set().union(*pairs_by_split["train"])
    # a contraction is a negation: "x+contracted" is held out with "x+negated"
    held_out = HELD_OUT_FEATURE_PAIRS | {pair.replace("negated", "contracted")
                                         for pair in HELD_OUT_FEATURE_PAIRS}
    assert seen == possible_pairs() - held_out


def test_held_out_pairs_are_possible_and_span_the_slots():
    assert len(HELD_OUT_FEATURE_PAIRS) >= 8
    assert HELD_OUT_FEATURE_PAIRS <= possible_pairs()
    features_held_out = {f for pair in HELD_OUT_FEATURE_PAIRS for f in pair.split("+")}
    for prefix in ("subject:", "object:", "place:", "tense:", "negated"):
        assert any(f.startswith(prefix) for f in features_held_out), prefix


def test_held_out_pairs_only_in_the_cross_construction_split(data, pairs_by_split):
    for name in ("train", "valid", "test", "compositional", "long"):
        assert not any(pairs & HELD_OUT_FEATURE_PAIRS for pairs in pairs_by_split[name]), name
    for example, pairs in zip(data["cross_construction"], pairs_by_split["cross_construction"]):
        assert pairs & HELD_OUT_FEATURE_PAIRS == {example.phenomenon}
    counts = Counter(e.phenomenon for e in data["cross_construction"])
    assert set(counts) == HELD_OUT_FEATURE_PAIRS
    assert max(counts.values()) - min(counts.values()) <= 1


def test_cross_construction_words_are_known(data):
    train_words = {w for e in data["train"] for w in tokenize(e.src) + tokenize(e.tgt)}
    for example in data["cross_construction"]:
        assert set(tokenize(example.src) + tokenize(example.tgt)) <= train_words, example


@pytest.mark.parametrize("text, expected", [
    ("the ball is blue", {"predicate:ser", "tense:present"}),
    ("the girl and the boy didn't eat the bread",
     {"subject:coordination", "predicate:action", "tense:past", "negated", "contracted"}),
    ("the old man's dog will walk to the girls' big house because it is tired",
     {"subject:possessor", "possessor:adjective", "place:possessor", "place:adjective",
      "predicate:action", "tense:future", "because"}),
    ("the cat saw the dog and the red bird", {"object:coordination", "object:adjective",
                                              "predicate:action", "tense:past"}),
    ("the books are not on the table because they weren't open",
     {"predicate:location", "tense:present", "negated", "contracted", "because"}),
    ("the cup was too cold", {"predicate:estar", "tense:past"}),
])
def test_features(text, expected):
    assert features(parse(text)) == expected
    ordered = sorted(expected, key=FEATURES.index)
    assert feature_pairs(parse(text)) == {f"{a}+{b}" for a, b in combinations(ordered, 2)}


@pytest.mark.parametrize("weights", [TRAINING, BALANCED, LONGEST])
def test_held_out_feature_pairs_are_those_among_all_pairs(weights):
    rng = random.Random(7)
    for _ in range(300):
        sentence = derive(rng, weights)
        assert held_out_feature_pairs(sentence) == feature_pairs(sentence) & HELD_OUT_FEATURE_PAIRS
