"""Bible texts of the SWORD project (Debian's `sword-text-*` packages), verse-aligned.

A SWORD "zText" module keeps a testament in three files: `ot.bzz` (or `nt.bzz`), blocks of
text compressed with zlib one after another; `ot.bzs`, per block its offset, compressed
size and uncompressed size (three little-endian uint32); `ot.bzv`, per verse position the
block, the offset in the uncompressed block and the size (uint32, uint32, uint16; size 0
for an empty position). The positions follow the module's versification scheme — the same
list of books, chapters and verses, with a heading position before each book and chapter —
so two modules of one scheme (KJV for both `engKJV2006eb` and `spaRV1909eb`) are aligned
position by position, and no book or verse names are needed to pair them.

The text is OSIS markup: words wrapped in `<w lemma="strong:...">` (Strong's numbers),
translators' additions in `<transChange>`, footnotes in `<note>`, headings in `<title>`.
`verse_text` keeps the words of the verse and drops notes, headings and markup. Reading
only decompresses and slices: nothing in a module is run.
"""

import html
import re
import struct
import zlib
from pathlib import Path

SWORD_MODULES = Path("/usr/share/sword/modules/texts/ztext")
TESTAMENTS = ("ot", "nt")
_BLOCK = struct.Struct("<III")  # offset, compressed size, uncompressed size
_VERSE = struct.Struct("<IIH")  # block, offset in the block, size
_LEFT_OUT = re.compile(r"<note\b.*?</note>|<title\b.*?</title>", re.DOTALL)
_INLINE_TAG = re.compile(r"</?(?:w|transChange|divineName|q|seg|foreign|reference)\b[^>]*>")
_TAG = re.compile(r"<[^>]*>")  # the others (line, paragraph and chapter marks): a space
_USFM_MARK = re.compile(r"\\\+?[a-z]+\d?\*?")  # a stray "\nd", "\+nd*" left by a conversion


# The Debian package that installs each module the project reads.
PACKAGES = {"engKJV2006eb": "sword-text-kjv", "spaRV1909eb": "sword-text-sparv"}


class SwordModule:
    """One zText module, e.g. `SwordModule("spaRV1909eb")` from SWORD_MODULES (or `root`)."""

    def __init__(self, name, root=SWORD_MODULES) -> None:
        self.name, self.folder = name, Path(root) / name
        missing = [f"{t}.{kind}" for t in TESTAMENTS for kind in ("bzs", "bzv", "bzz")
                   if not (self.folder / f"{t}.{kind}").is_file()]
        if missing:
            package = PACKAGES.get(name, "the sword-text package that holds it")
            raise FileNotFoundError(f"SWORD module {name}: {self.folder} lacks "
                                    f"{', '.join(missing)}; install it with "
                                    f"`apt-get install {package}`")

    def positions(self) -> list[str]:
        """The raw OSIS text of every verse position, both testaments, in order ('' where
        the module has nothing)."""
        texts = []
        for testament in TESTAMENTS:
            texts.extend(self._testament(testament))
        return texts

    def _testament(self, testament):
        blocks = (self.folder / f"{testament}.bzs").read_bytes()
        verses = (self.folder / f"{testament}.bzv").read_bytes()
        compressed = (self.folder / f"{testament}.bzz").read_bytes()
        unpacked = {}
        for block, offset, size in _VERSE.iter_unpack(verses[:len(verses) // 10 * 10]):
            if size == 0:
                yield ""
                continue
            if block not in unpacked:
                start, length, _ = _BLOCK.unpack_from(blocks, _BLOCK.size * block)
                try:
                    unpacked[block] = zlib.decompress(compressed[start:start + length])
                except (zlib.error, struct.error) as error:
                    raise ValueError(f"SWORD module {self.name}: block {block} of "
                                     f"{testament}.bzz is damaged ({error})") from None
            yield unpacked[block][offset:offset + size].decode("utf-8", errors="replace")


def verse_text(osis) -> str:
    """The words of one verse position's OSIS text, on one line with single spaces."""
    text = _LEFT_OUT.sub(" ", osis)
    text = _TAG.sub(" ", _INLINE_TAG.sub("", text))
    return " ".join(_USFM_MARK.sub("", html.unescape(text)).split())


def aligned_verses(source, target, root=SWORD_MODULES) -> list[tuple[str, str]]:
    """(source text, target text) of every verse position where both modules have words;
    the two must share a versification scheme (they must have as many positions)."""
    sources, targets = SwordModule(source, root).positions(), SwordModule(target, root).positions()
    if len(sources) != len(targets):
        raise ValueError(f"SWORD modules {source} and {target} have {len(sources)} and "
                         f"{len(targets)} verse positions: they follow different versification "
                         "schemes, so their verses cannot be paired by position")
    pairs = ((verse_text(s), verse_text(t)) for s, t in zip(sources, targets))
    return [(s, t) for s, t in pairs if s and t]
