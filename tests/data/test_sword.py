"""The SWORD zText reader of the en-es-bible task, on small modules written here in the same
format (the real ones come from Debian's sword-text-kjv and sword-text-sparv)."""

import struct
import zlib

import pytest

from transformer.data import load_task
from transformer.data.sword import SwordModule, aligned_verses, verse_text

ENGLISH = [  # one testament's positions: module and testament headings, a book, a chapter
    "", '<milestone type="x-importer"/>',
    '<div type="book"/> <title type="main">The First Book</title>', '<chapter n="1"/> ',
    'In the <w lemma="strong:H7225">beginning</w> <w lemma="strong:H0430">God</w> created.',
    'And <transChange type="added">it was</transChange> good.<note placement="foot">'
    '<reference>1.2 </reference>Heb. <divineName>LORD\\+nd*</divineName></note> ',
    "", "And the evening &amp; the morning.<lb/>The end.",
]
SPANISH = [
    "", '<milestone type="x-importer"/>',
    '<div type="book"/> <title type="main">Primer libro</title>', '<chapter n="1"/>',
    '<w lemma="strong:H7225">EN el principio</w> <w lemma="strong:H0430">Dios</w> creó.',
    "Y era bueno.", "Un verso sin el inglés.", "Y la tarde y la mañana. El fin.",
]


def write_module(root, name, testaments, block_size=3):
    """A zText module `name` under `root` holding {testament: positions}, `block_size`
    positions per compressed block."""
    folder = root / name
    folder.mkdir(parents=True)
    for testament, texts in testaments.items():
        blocks, verses, compressed = bytearray(), bytearray(), bytearray()
        for first in range(0, len(texts), block_size):
            raw = b""
            for text in texts[first:first + block_size]:
                data = text.encode("utf-8")
                verses += struct.pack("<IIH", first // block_size, len(raw), len(data))
                raw += data
            packed = zlib.compress(raw)
            blocks += struct.pack("<III", len(compressed), len(packed), len(raw))
            compressed += packed
        for kind, content in (("bzs", blocks), ("bzv", verses), ("bzz", compressed)):
            (folder / f"{testament}.{kind}").write_bytes(bytes(content))
    return root


@pytest.fixture
def bibles(tmp_path):
    write_module(tmp_path, "engKJV2006eb", {"ot": ENGLISH, "nt": ENGLISH[:5]})
    write_module(tmp_path, "spaRV1909eb", {"ot": SPANISH, "nt": SPANISH[:5]})
    return tmp_path


def test_positions_read_back_whole(bibles):
    assert SwordModule("spaRV1909eb", bibles).positions() == SPANISH + SPANISH[:5]


def test_verse_text_keeps_the_words_only():
    assert verse_text(ENGLISH[4]) == "In the beginning God created."
    assert verse_text(ENGLISH[5]) == "And it was good."  # the footnote and its markup go
    assert verse_text(ENGLISH[7]) == "And the evening & the morning. The end."
    assert verse_text(ENGLISH[2]) == verse_text(ENGLISH[3]) == ""  # headings only
    assert verse_text("by my name \\nd <w>JEHOVAH</w></divineName> was") == \
        "by my name JEHOVAH was"  # a mark a conversion left behind


def test_verses_pair_by_position_where_both_have_words(bibles):
    assert aligned_verses("engKJV2006eb", "spaRV1909eb", bibles) == [
        ("In the beginning God created.", "EN el principio Dios creó."),
        ("And it was good.", "Y era bueno."),
        ("And the evening & the morning. The end.", "Y la tarde y la mañana. El fin."),
        ("In the beginning God created.", "EN el principio Dios creó."),  # the nt's
    ]


def test_the_task_splits_distinct_verses(bibles):
    splits = load_task("en-es-bible", data=bibles)
    examples = [e for split in ("train", "valid", "test") for e in splits[split]]
    assert sorted(e.src for e in examples) == sorted({  # the repeated verse once
        "In the beginning God created.", "And it was good.",
        "And the evening & the morning. The end."})
    assert all(e.phenomenon == "en-es-bible" and e.tgt for e in examples)
    assert all(len(splits[split]) == 1 for split in ("train", "valid", "test"))


def test_a_missing_module_names_its_package(tmp_path):
    write_module(tmp_path, "engKJV2006eb", {"ot": ENGLISH, "nt": ENGLISH})
    with pytest.raises(FileNotFoundError, match="apt-get install sword-text-sparv"):
        load_task("en-es-bible", data=tmp_path)


def test_modules_of_other_versifications_are_refused(tmp_path):
    write_module(tmp_path, "engKJV2006eb", {"ot": ENGLISH, "nt": ENGLISH})
    write_module(tmp_path, "spaRV1909eb", {"ot": SPANISH, "nt": SPANISH[:6]})
    with pytest.raises(ValueError, match="different versification schemes"):
        aligned_verses("engKJV2006eb", "spaRV1909eb", tmp_path)


def test_a_damaged_block_is_named(bibles):
    path = bibles / "spaRV1909eb" / "ot.bzz"
    path.write_bytes(b"\0" * len(path.read_bytes()))
    with pytest.raises(ValueError, match="block 0 of ot.bzz is damaged"):
        SwordModule("spaRV1909eb", bibles).positions()
