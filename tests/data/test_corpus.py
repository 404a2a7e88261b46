"""The pairs TSV reader: bad lines named by number (a few, then a count) and left out only
when asked, exact duplicates left out, a split drawn from the seed by source sentence, text
read from the file when used."""

import random

import pytest

from transformer.data.corpus import SHOWN_BAD_LINES, BadLinesError, PairsFile


def write(path, lines, newline="\n"):
    path.write_bytes(newline.join(lines).encode("utf-8") + newline.encode())
    return path


def every_pair(splits):
    return [(e.src, e.tgt) for name in ("train", "valid", "test") for e in splits[name]]


def test_pairs_are_read_from_the_file_stripped(tmp_path):
    path = write(tmp_path / "p.tsv", ["# header", " Guten Tag. \t Good day. ", "", "Ja\tYes"],
                 newline="\r\n")
    corpus = PairsFile(path)
    assert len(corpus) == 2
    assert [corpus.pair(row) for row in range(2)] == [("Guten Tag.", "Good day."),
                                                      ("Ja", "Yes")]


def test_bad_lines_are_named_by_number_a_few_then_a_count(tmp_path):
    lines = ["ok\tfine"] * 3 + ["no tab here", "a\tb\tc", "\tempty source", "empty target\t ",
                                "x\ty"] + ["again no tab"] * 4
    path = write(tmp_path / "bad.tsv", lines)
    path.write_bytes(path.read_bytes() + b"caf\xe9\tcoffee\n")  # Latin-1, not UTF-8
    with pytest.raises(BadLinesError) as error:
        PairsFile(path)
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(f"data file {path}: 9 bad line(s): line 4 (no tab, expected "
                              "'source<TAB>target': 'no tab here'), line 5 (2 tabs, ")
    assert "line 6 (empty source), line 7 (empty target), line 9 (no tab" in message
    assert message.endswith(f"and {9 - SHOWN_BAD_LINES} more; fix them, or leave them out "
                            "with --skip-bad-lines")


def test_bad_lines_are_left_out_only_when_asked(tmp_path):
    path = write(tmp_path / "bad.tsv", ["a\tb", "broken", "c\td", "e\tf"])
    corpus = PairsFile(path, skip_bad_lines=True)
    assert len(corpus) == 3
    assert corpus.notes() == [f"data file {path}: left out 1 bad line(s): line 2 (no tab, "
                              "expected 'source<TAB>target': 'broken')"]


def test_not_utf8_is_a_bad_line_with_its_byte(tmp_path):
    path = tmp_path / "latin1.tsv"
    path.write_bytes(b"ok\tfine\ncaf\xe9\tcoffee\n")
    with pytest.raises(BadLinesError, match=r"line 2 \(not UTF-8: invalid continuation byte "
                                            r"at byte 3\)"):
        PairsFile(path)


def test_exact_duplicates_are_left_out_other_translations_kept(tmp_path):
    lines = [f"s{i}\tt{i}" for i in range(40)] + ["s1\tt1", "s2\tanother", "s1\tt1"]
    corpus = PairsFile(write(tmp_path / "d.tsv", lines))
    pairs = every_pair(corpus.split(seed=0))
    assert len(pairs) == 41 and pairs.count(("s1", "t1")) == 1 and ("s2", "another") in pairs
    assert corpus.notes() == [f"data file {tmp_path / 'd.tsv'}: left out 2 exact duplicate "
                              "pair(s) (the first of each is kept)"]


def test_the_split_is_the_seeds_whatever_the_order_of_the_lines(tmp_path):
    lines = [f"source {i}\ttarget {i}" for i in range(400)]
    shuffled = lines[:]
    random.Random(5).shuffle(shuffled)

    def split_sets(name, seed, ordered):
        splits = PairsFile(write(tmp_path / name, ordered)).split(seed)
        return {part: {(e.src, e.tgt) for e in splits[part]} for part in splits}

    first = split_sets("a.tsv", 3, lines)
    assert split_sets("b.tsv", 3, shuffled) == first
    assert split_sets("c.tsv", 4, lines) != first
    assert [len(first[part]) for part in ("train", "valid", "test")] == [360, 20, 20]


def test_every_pair_of_one_source_is_in_one_split(tmp_path):
    lines = [f"source {i // 3}\ttarget {i}" for i in range(300)]  # 3 translations each
    splits = PairsFile(write(tmp_path / "m.tsv", lines)).split(seed=1)
    sources = {part: {e.src for e in splits[part]} for part in splits}
    assert not sources["train"] & sources["valid"] and not sources["train"] & sources["test"]
    assert not sources["valid"] & sources["test"]
    assert len(every_pair(splits)) == 300


def test_the_train_split_reads_its_pairs_when_used(tmp_path):
    lines = [f"source {i}\ttarget {i}" for i in range(100)]
    train = PairsFile(write(tmp_path / "t.tsv", lines)).split(seed=0)["train"]
    assert len(train) == 90 and list(train)[:2] == train[:2]
    assert train[-1].tgt == "target " + train[-1].src.split()[1]


def test_a_file_is_split_again_only_with_its_seed(tmp_path):
    corpus = PairsFile(write(tmp_path / "s.tsv", [f"s{i}\tt{i}" for i in range(10)]))
    assert every_pair(corpus.split(2)) == every_pair(corpus.split(2))
    with pytest.raises(ValueError, match="was split with seed 2"):
        corpus.split(3)
