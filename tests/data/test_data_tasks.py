import pytest

from transformer.data import TASKS, Example, load_task, tasks

# Lines in the format of Debian's ding dictionaries, written for this test.
DICTIONARY = """\
# Version :: test
Hund {m} | Hunde {pl} :: dog | dogs
Der Hund schläft im Garten.; Der Hund ruht. :: The dog sleeps in the garden.; The dog rests.
Wo ist der Bahnhof? | Ich weiß es nicht. :: Where is the station? | I don’t know.
Das ist gut. :: That is good [coll.].
Er kommt (bald) nach Hause. :: He is coming home soon.
Komm! :: Come!
Sie liest ein Buch. | Sie liest. :: She reads a book.
Es regnet heute sehr stark. :: It is raining
das Haus am See :: the house by the lake
Der Hund schläft im Garten. :: The dog is asleep in the garden.
"""


def test_names():
    assert TASKS == ("toy-en-es", "copy", "reverse", "pairs", "de-en", "en-es-bible")
    with pytest.raises(ValueError, match="unknown task"):
        load_task("fr-en")


@pytest.mark.parametrize("name", ["copy", "reverse"])
def test_symbol_tasks(name):
    splits = load_task(name, seed=3)
    assert {split: len(examples) for split, examples in splits.items()} == {
        "train": 10_000, "valid": 500, "test": 500}
    sources = [e.src for examples in splits.values() for e in examples]
    assert len(set(sources)) == len(sources)
    for example in splits["train"][:500]:
        symbols = example.src.split()
        assert 1 <= len(symbols) <= 10 and set(symbols) <= {str(i) for i in range(1, 11)}
        expected = symbols[::-1] if name == "reverse" else symbols
        assert example.tgt.split() == expected and example.phenomenon == name
    assert load_task(name, seed=3) == splits and load_task(name, seed=4) != splits


def test_toy_en_es_is_the_grammar(monkeypatch):
    monkeypatch.setattr(tasks, "toy_en_es", lambda seed: f"toy-en-es with seed {seed}")
    assert load_task("toy-en-es", seed=5) == "toy-en-es with seed 5"
    with pytest.raises(ValueError, match="no data file"):
        load_task("toy-en-es", data="file.tsv")


def test_pairs(tmp_path):
    path = tmp_path / "pairs.tsv"
    lines = ["# a comment", ""] + [f"source {i}\ttarget {i}" for i in range(100)] + ["   "]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    splits = materialized(load_task("pairs", data=path, seed=1))
    assert {split: len(examples) for split, examples in splits.items()} == {
        "train": 90, "valid": 5, "test": 5}
    every = [e for examples in splits.values() for e in examples]
    assert sorted(every, key=lambda e: int(e.src.split()[1])) == [
        Example(f"source {i}", f"target {i}", "pairs") for i in range(100)]
    assert [e.src for e in every] != [f"source {i}" for i in range(100)]  # shuffled
    assert materialized(load_task("pairs", data=str(path), seed=1)) == splits
    assert materialized(load_task("pairs", data=path, seed=2)) != splits


def materialized(splits):
    return {name: list(examples) for name, examples in splits.items()}


def test_small_pairs_file_still_has_valid_and_test(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("a\tb\nc\td\ne\tf\n", encoding="utf-8")
    splits = load_task("pairs", data=path)
    assert [len(splits[name]) for name in ("train", "valid", "test")] == [1, 1, 1]


@pytest.mark.parametrize("line", ["only a source", "a\tb\tc", "\ttarget", "source\t "])
def test_malformed_pairs_name_the_file_and_line(tmp_path, line):
    path = tmp_path / "bad.tsv"
    path.write_text(f"# header\nfine\tgood\n{line}\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad\.tsv: 1 bad line\(s\): line 3 \("):
        load_task("pairs", data=path)


def test_pairs_needs_a_file_with_pairs(tmp_path):
    with pytest.raises(ValueError, match="data=PATH"):
        load_task("pairs")
    path = tmp_path / "empty.tsv"
    path.write_text("# nothing\n\n", encoding="utf-8")
    with pytest.raises(ValueError, match="no 'source<TAB>target' lines"):
        load_task("pairs", data=path)


def test_de_en_extracts_sentences(tmp_path):
    path = tmp_path / "de-en"
    path.write_text(DICTIONARY, encoding="utf-8")
    splits = load_task("de-en", data=path)
    pairs = {(e.src, e.tgt) for examples in splits.values() for e in examples}
    assert pairs == {
        ("Der Hund schläft im Garten.", "The dog sleeps in the garden."),
        ("Wo ist der Bahnhof?", "Where is the station?"),
        ("Ich weiß es nicht.", "I don’t know."),
    }
    assert all(e.phenomenon == "de-en" for examples in splits.values() for e in examples)


def test_de_en_without_the_dictionary(tmp_path):
    with pytest.raises(FileNotFoundError, match="apt-get install trans-de-en"):
        load_task("de-en", data=tmp_path / "missing")
