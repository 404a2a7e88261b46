"""Two kinds of wrong toy-en-es translation, told apart by the lexicon's Spanish forms: an
agreement error (the reference's words in its order, some in another gender, number or
person form) and a repeated clause (a run of words said more often than the reference says
it, as a model that loops or restarts a clause does)."""

from collections import Counter, defaultdict
from functools import cache

from .lexicon import ADJECTIVES, ARTICLES, COPULAS, NOUNS, VERBS

_EXPANSIONS = {"del": ("de", "el"), "al": ("a", "el")}


@cache
def _lemmas() -> dict[str, frozenset]:
    """Each Spanish form -> what it is a form of: an article, a noun, an adjective, a verb or
    copula in one tense (so a change of tense is not an agreement error)."""
    lemmas: dict[str, set] = defaultdict(set)
    for article in ARTICLES.values():
        lemmas[article].add("article")
    for noun in NOUNS:
        for form in filter(None, (noun.spanish, noun.spanish_plural)):
            lemmas[form].add(("noun", noun.spanish))
    for adjective in ADJECTIVES:
        for form in adjective.forms:
            lemmas[form].add(("adjective", adjective.forms[0]))
    verbs = [verb.spanish for verb in VERBS] + list(COPULAS.values())
    for forms in verbs:
        for index, form in enumerate(forms):
            lemmas[form].add(("verb", forms[0], index // 2))
    return {form: frozenset(of) for form, of in lemmas.items()}


def _words(text: str) -> list[str]:
    """Lower-cased words, "del" and "al" as the two words they contract."""
    words: list[str] = []
    for word in text.lower().split():
        words.extend(_EXPANSIONS.get(word, (word,)))
    return words


def agreement_error(hypothesis: str, reference: str) -> bool:
    """Whether `hypothesis` is wrong only in forms: the reference's words in its order, one or
    more of them in another form of the same word ("no cruzó" for "no cruzaron")."""
    said, meant = _words(hypothesis), _words(reference)
    lemmas = _lemmas()
    return said != meant and len(said) == len(meant) and all(
        a == b or lemmas.get(a, frozenset()) & lemmas.get(b, frozenset())
        for a, b in zip(said, meant))


def repeated_clause(hypothesis: str, reference: str, length: int = 3) -> bool:
    """Whether `hypothesis` says a run of `length` words more often than `reference` does
    ("... porque no comió porque no comió la carne barata")."""
    def runs(words: list[str]) -> Counter:
        return Counter(tuple(words[i:i + length]) for i in range(len(words) - length + 1))
    said, meant = runs(_words(hypothesis)), runs(_words(reference))
    return any(count > max(meant[run], 1) for run, count in said.items())
