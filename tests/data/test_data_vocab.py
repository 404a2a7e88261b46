import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from transformer.data import Vocab

CORPUS = [["the", "cat", "eats"], ["the", "dog", "eats"], ["a", "cat"], ["the", "bird"]]


def test_build_order_specials_then_frequency_then_alphabet():
    vocab = Vocab.build(CORPUS)
    assert vocab.tokens == ("<pad>", "<bos>", "<eos>", "<unk>",
                            "the", "cat", "eats", "a", "bird", "dog")
    assert (vocab.pad_id, vocab.bos_id, vocab.eos_id, vocab.unk_id) == (0, 1, 2, 3)
    assert len(vocab) == 10


def test_min_freq():
    assert Vocab.build(CORPUS, min_freq=2).tokens[4:] == ("the", "cat", "eats")


def test_build_ignores_special_tokens_in_the_data():
    assert Vocab.build([["<unk>", "<pad>", "x"]]).tokens[4:] == ("x",)


def test_encode_decode():
    vocab = Vocab.build(CORPUS)
    ids = vocab.encode(["the", "zebra", "eats"], add_bos=True, add_eos=True)
    assert ids == [1, 4, vocab.unk_id, 6, 2]
    assert vocab.decode(ids) == ["the", "<unk>", "eats"]
    assert vocab.decode(ids + [0, 0]) == ["the", "<unk>", "eats"]
    assert vocab.decode([4, 2, 5, 0]) == ["the"]  # stops at the first <eos>
    assert vocab.decode([1, 4, 2, 5, 0], strip_special=False) == [
        "<bos>", "the", "<eos>", "cat", "<pad>"]


def test_lookups_and_unknown_words():
    vocab = Vocab.build(CORPUS)
    assert vocab.token_to_id("cat") == 5 and vocab.id_to_token(5) == "cat"
    assert vocab.token_to_id("zebra") == vocab.unk_id
    assert "cat" in vocab and "zebra" not in vocab
    assert vocab.unknown(["zebra", "cat", "lion", "zebra"]) == ["zebra", "lion"]
    with pytest.raises(IndexError):
        vocab.id_to_token(len(vocab))


_tokens = st.lists(st.text("abcñé'.", min_size=1, max_size=4), max_size=8)


@given(st.lists(_tokens, max_size=8), _tokens)
def test_encode_decode_round_trip(token_lists, other):
    vocab = Vocab.build(token_lists)
    for tokens in token_lists:
        assert vocab.decode(vocab.encode(tokens, add_bos=True, add_eos=True)) == tokens
    assert vocab.decode(vocab.encode(other)) == [t if t in vocab else "<unk>" for t in other]


def test_save_load(tmp_path):
    vocab = Vocab.build(CORPUS + [["niño", "está"]])
    path = tmp_path / "vocab.json"
    vocab.save(path)
    record = json.loads(path.read_text(encoding="utf-8"))
    assert record["format"] == "minigrad-vocab" and record["version"] == 1
    assert record["tokens"] == list(vocab.tokens)
    assert Vocab.load(path) == vocab


@pytest.mark.parametrize("content, message", [
    ("not json", "invalid JSON"),
    ("[1, 2]", "format"),
    ('{"format": "other", "version": 1, "tokens": []}', "format"),
    ('{"format": "minigrad-vocab", "version": 2, "tokens": []}', "version"),
    ('{"format": "minigrad-vocab", "version": 1, "tokens": "abc"}', "list of tokens"),
    ('{"format": "minigrad-vocab", "version": 1}', "list of tokens"),
    ('{"format": "minigrad-vocab", "version": 1, "tokens": ["a", "b"]}', "must start with"),
    ('{"format": "minigrad-vocab", "version": 1, "tokens": [SPECIALS, 7]}', "strings"),
    ('{"format": "minigrad-vocab", "version": 1, "tokens": [SPECIALS, "a", "a"]}', "twice"),
])
def test_load_rejects_malformed_files(tmp_path, content, message):
    path = tmp_path / "vocab.json"
    specials = '"<pad>", "<bos>", "<eos>", "<unk>"'
    path.write_text(content.replace("SPECIALS", specials), encoding="utf-8")
    with pytest.raises(ValueError, match=message) as error:
        Vocab.load(path)
    assert str(path) in str(error.value)
