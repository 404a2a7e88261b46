"""The sampler against the parser: every sentence the parser's grammar can build reads back
through `parse` and `translate_known`, and every production in it is one the sampler draws.
What the sampler leaves out on purpose is a choice of words (docs/data.md), never a
production."""

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from transformer.data.derivation import BALANCED, TRAINING, derive
from transformer.data.grammar import translate_known
from transformer.data.lexicon import ADJECTIVES, NOUNS, PREPOSITIONS, TENSES, VERBS
from transformer.data.parse import parse
from transformer.data.syntax import (
    Action,
    Coordination,
    Description,
    Location,
    NounPhrase,
    Quality,
    Sentence,
    english,
    spanish,
)
from transformer.data.tokenizer import detokenize


# --- the parser's grammar, any word in any slot -------------------------------------------
@st.composite
def noun_phrases(draw, owned=True):
    noun = draw(st.sampled_from(NOUNS))
    plural = noun.countable and draw(st.booleans())
    adjective = draw(st.none() | st.sampled_from(ADJECTIVES))
    possessor = draw(st.none() | noun_phrases(owned=False)) if owned else None
    return NounPhrase(noun, plural, adjective, possessor)


def subjects():
    return noun_phrases() | st.builds(Coordination, noun_phrases(), noun_phrases())


@st.composite
def negations(draw):
    negated = draw(st.booleans())
    return negated, negated and draw(st.booleans())


@st.composite
def actions(draw):
    verb = draw(st.sampled_from(VERBS))
    complement = {"transitive": subjects(), "motion": noun_phrases(),
                  "activity": st.none() | noun_phrases()}[verb.frame]
    return Action(verb, draw(st.sampled_from(TENSES)), draw(complement), *draw(negations()))


@st.composite
def descriptions(draw):
    complement = draw(st.builds(Quality, st.sampled_from(ADJECTIVES), st.booleans())
                      | st.builds(Location, st.sampled_from(PREPOSITIONS), noun_phrases()))
    return Description(complement, draw(st.sampled_from(TENSES)), *draw(negations()))


def sentences():
    return st.builds(Sentence, subjects(), actions() | descriptions(), st.none() | descriptions())


def productions(sentence: Sentence) -> set[str]:
    """The grammar's productions that `sentence` uses, its words left aside."""
    found = set()

    def phrase(slot, node):
        if isinstance(node, Coordination):
            found.add(f"{slot} coordinated")
            phrase(slot, node.first)
            phrase(slot, node.second)
            return
        found.add(f"{slot} {'plural' if node.plural else 'singular'}")
        found.add(f"{slot} {'with' if node.adjective else 'without'} adjective")
        if node.possessor:
            owner = node.possessor
            found.add(f"{slot} owned")
            plain_plural = owner.plural and owner.noun.english_plural.endswith("s")
            found.add("owner " + ("'" if plain_plural else "'s"))  # the girls' / the men's
            phrase("owner", owner)

    def predicate(clause, node):
        found.add(f"{clause} {node.tense}")
        if node.negated:
            found.add(f"{clause} negated" + " contracted" * node.contracted)
        complement = node.complement
        if isinstance(node, Action):
            found.add(f"{clause} {node.verb.frame}")
            if complement is None:
                found.add(f"{clause} activity without a place")
            else:
                phrase({"transitive": "object", "motion": "destination",
                        "activity": "activity place"}[node.verb.frame], complement)
        elif isinstance(complement, Location):
            found.add(f"{clause} {complement.preposition.english}")
            phrase(f"{clause} place", complement.place)
        else:
            found.add(f"{clause} {complement.adjective.copula}" + " too" * complement.too)

    phrase("subject", sentence.subject)
    predicate("main", sentence.predicate)
    if sentence.reason:
        predicate("reason", sentence.reason)
        same = sentence.reason.tense == sentence.predicate.tense
        found.add(f"reason in {'the same' if same else 'another'} tense")
        found.add(f"reason after {type(sentence.predicate).__name__}")
    return found


@pytest.fixture(scope="module")
def drawn():
    """The productions of 20,000 training derivations."""
    rng = random.Random(0)
    return set().union(*(productions(derive(rng, TRAINING)) for _ in range(20_000)))


@given(sentences())
def test_the_parser_reads_back_every_sentence_of_its_grammar(sentence):
    text = detokenize(english(sentence))
    assert parse(text) == sentence
    assert translate_known(text) == detokenize(spanish(sentence))


@given(sentences())
def test_every_production_the_parser_accepts_is_drawn(drawn, sentence):
    assert productions(sentence) <= drawn


@given(st.integers(0, 2**32 - 1), st.sampled_from([TRAINING, BALANCED]))
def test_derivations_round_trip_through_the_parser(seed, weights):
    sentence = derive(random.Random(seed), weights)
    text = detokenize(english(sentence))
    assert parse(text) == sentence
    assert translate_known(text) == detokenize(spanish(sentence))


def test_derivations_keep_to_the_words_that_fit():
    """What the sampler leaves out on purpose (docs/data.md): nouns of the wrong kind,
    owners that are not people, a noun coordinated with itself."""
    rng = random.Random(1)
    for _ in range(2_000):
        sentence = derive(rng, TRAINING)
        subject, predicate = sentence.subject, sentence.predicate
        heads = [subject.first, subject.second] if isinstance(subject, Coordination) else [
            subject]
        if isinstance(subject, Coordination):
            assert subject.first.noun != subject.second.noun
        for head in heads:
            if isinstance(predicate, Action):
                assert head.noun.kinds & predicate.verb.subjects
            elif isinstance(predicate.complement, Quality):
                assert head.noun.kinds & predicate.complement.adjective.kinds
            if head.adjective:
                assert head.noun.kinds & head.adjective.kinds
            if head.possessor:
                assert "person" in head.possessor.noun.kinds
