"""Translation tasks by name: `load_task(name)` returns {"train", "valid", "test", ...}.

- toy-en-es: the synthetic English→Spanish grammar, with a compositional split too;
- copy, reverse: random sequences of the symbols "1".."10" (1 to 10 of them), the target
  the same sequence or reversed (the first example of the Annotated Transformer);
- pairs: a user's TSV file, one "source<TAB>target" per line, of any size (read by
  `corpus.PairsFile`, which keeps only compact arrays per line), split 90/5/5 by the seed;
- de-en: German→English example sentences of Debian's trans-de-en dictionary
  (`apt-get install trans-de-en`), split 90/5/5;
- en-es-bible: English→Spanish Bible verses, the King James Version with the Reina-Valera
  of 1909 (`apt-get install sword-text-kjv sword-text-sparv`), split 90/5/5.
The data of the last two stays on the machine.
"""

import random
from pathlib import Path

from .corpus import PairsFile
from .example import Example
from .grammar import toy_en_es
from .sword import SWORD_MODULES, aligned_verses

TASKS = ("toy-en-es", "copy", "reverse", "pairs", "de-en", "en-es-bible")
DATA_TASKS = ("pairs", "de-en", "en-es-bible")  # the tasks that read data (`data` a path)
DE_EN_DICTIONARY = Path("/usr/share/trans/de-en")
BIBLE_MODULES = ("engKJV2006eb", "spaRV1909eb")  # source, target: both in KJV versification
MAX_VERSE_WORDS = 40  # longer verses (one in ten) are left out: they would set the step cost
_N_SYMBOLS, _MAX_LENGTH = 10, 10
_N_SYMBOL_TRAIN, _N_SYMBOL_HELD = 10_000, 500  # train; valid and test each
_NOT_IN_SENTENCES = frozenset("[]{}()/<>|~…=+")  # dictionary markup and alternatives


def load_task(name: str, data=None, seed: int = 0,
              skip_bad_lines: bool = False) -> dict[str, list[Example]]:
    """The splits of task `name`; `data` is the TSV file of "pairs" (or another path to
    the dictionary of "de-en", or to the folder of SWORD modules of "en-es-bible"). A pairs
    file's bad lines are refused (ValueError naming them) unless `skip_bad_lines`; its train
    split is a `corpus.PairsSplit`, read from the file as it is used."""
    if name not in TASKS:
        raise ValueError(f"unknown task {name!r}; the tasks are {', '.join(TASKS)}")
    if name == "pairs":
        if data is None:
            raise ValueError("the pairs task needs data=PATH of a 'source<TAB>target' file")
        return PairsFile(data, skip_bad_lines).split(seed)
    if name == "de-en":
        return _split(_read_dictionary(Path(data or DE_EN_DICTIONARY)), seed)
    if name == "en-es-bible":
        return _split(_bible_verses(Path(data or SWORD_MODULES)), seed)
    if data is not None:
        raise ValueError(f"the {name} task takes no data file")
    if name == "toy-en-es":
        return toy_en_es(seed)
    return _symbol_task(name, seed)


def _symbol_task(name: str, seed: int) -> dict[str, list[Example]]:
    """Distinct random symbol sequences; the target is the source, or reversed."""
    rng = random.Random(seed)
    sources: dict = {}  # a dict keeps the order of drawing
    while len(sources) < _N_SYMBOL_TRAIN + 2 * _N_SYMBOL_HELD:
        symbols = [str(rng.randint(1, _N_SYMBOLS)) for _ in range(rng.randint(1, _MAX_LENGTH))]
        sources.setdefault(" ".join(symbols), symbols)
    examples = [Example(source, " ".join(symbols[::-1] if name == "reverse" else symbols), name)
                for source, symbols in sources.items()]
    return _three_way(examples, _N_SYMBOL_HELD)


def _split(examples: list[Example], seed: int) -> dict[str, list[Example]]:
    """Shuffle with `seed` and split 90/5/5; valid and test get at least one example each
    once there are three."""
    examples = examples[:]
    random.Random(seed).shuffle(examples)
    return _three_way(examples, max(round(0.05 * len(examples)), int(len(examples) >= 3)))


def _three_way(examples: list[Example], n_held: int) -> dict[str, list[Example]]:
    """The first `n_held` examples for valid, the next `n_held` for test, the rest train."""
    return {"train": examples[2 * n_held:], "valid": examples[:n_held],
            "test": examples[n_held:2 * n_held]}


def _read_dictionary(path: Path) -> list[Example]:
    """The sentence pairs of a ding dictionary ("German :: English", alternatives split by
    " | " on both sides in step, synonyms by "; "); the first synonym of each side is kept
    when both are sentences. Distinct by German side."""
    if not path.exists():
        raise FileNotFoundError(f"{path} not found: the de-en task reads Debian's German–"
                                "English dictionary; install it with "
                                "`apt-get install trans-de-en`")
    examples, seen = [], set()
    with path.open(encoding="utf-8") as file:
        for line in file:
            if line.startswith("#") or " :: " not in line:
                continue
            german, english = line.rstrip("\n").split(" :: ", 1)
            german_parts, english_parts = german.split(" | "), english.split(" | ")
            if len(german_parts) != len(english_parts):
                continue
            for german_part, english_part in zip(german_parts, english_parts):
                source = german_part.split("; ")[0].strip()
                target = english_part.split("; ")[0].strip()
                if _is_sentence(source) and _is_sentence(target) and source not in seen:
                    seen.add(source)
                    examples.append(Example(source, target, "de-en"))
    return examples


def _bible_verses(root: Path) -> list[Example]:
    """The verses that both Bibles have, of at most MAX_VERSE_WORDS words on each side;
    distinct by English side (a repeated verse stays in one split)."""
    examples, seen = [], set()
    for source, target in aligned_verses(*BIBLE_MODULES, root=root):
        if (max(len(source.split()), len(target.split())) <= MAX_VERSE_WORDS
                and source not in seen):
            seen.add(source)
            examples.append(Example(source, target, "en-es-bible"))
    return examples


def _is_sentence(text: str) -> bool:
    """3–15 words, a capital first, . ! or ? last, and no dictionary markup."""
    return (3 <= len(text.split()) <= 15 and text[0].isupper() and text[-1] in ".!?"
            and "..." not in text and not _NOT_IN_SENTENCES & set(text))
