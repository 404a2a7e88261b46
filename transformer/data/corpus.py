"""A parallel corpus in a TSV file ("source<TAB>target" per line) of any size, indexed without
holding its text: per pair only where its line starts (8 bytes), where its tab is and where
it ends (4 bytes each). A pair's text is read from the file when it is used (`os.pread`, so
the file's pages are not kept in the process's memory).

- Blank lines and lines starting with "#" are skipped.
- A line that is not UTF-8, has no tab or more than one, or an empty side is bad: the first
  few are reported by line number, then a count; they are left out only when asked
  (`skip_bad_lines`), else the file is refused (ValueError).
- An exact duplicate of an earlier pair is left out (and counted); the same source with
  another target is kept.
- The split is drawn from the seed by a keyed hash of the source side, so it does not
  depend on the order of the lines, is the same in every process, and puts every pair of
  one source sentence in the same split: valid and test hold 5% of the pairs each (at most
  MAX_HELD_OUT, at least one once there are three), train the rest.
"""

from __future__ import annotations

import hashlib
import os
from array import array
from typing import Any

import numpy as np

from .example import Example

MAX_HELD_OUT = 5000  # pairs in each of valid and test
SHOWN_BAD_LINES = 5
_LINE_LIMIT = 2**32 - 1  # bytes of one line (its offsets are uint32)


class BadLinesError(ValueError):
    """The file has bad lines and `skip_bad_lines` was not given."""


class PairsFile:
    """The index of a pairs TSV file; `split(seed)` gives its train/valid/test splits."""

    def __init__(self, path, skip_bad_lines=False) -> None:
        self.path = os.fspath(path)
        if not os.path.exists(self.path):
            raise FileNotFoundError(f"data file {self.path} does not exist")
        if not os.path.isfile(self.path):
            raise ValueError(f"data file {self.path} is not a file; give a "
                             "'source<TAB>target' TSV file")
        self.bad: list = []  # (line number, what is wrong) of the first SHOWN_BAD_LINES
        self.n_bad = 0
        self._scan()
        if self.n_bad and not skip_bad_lines:
            raise BadLinesError(f"data file {self.path}: {self.n_bad} bad line(s): "
                                f"{self._bad_lines()}; fix them, or leave them out with "
                                "--skip-bad-lines")
        if len(self) == 0:
            raise ValueError(f"data file {self.path} has no 'source<TAB>target' lines")

    def _scan(self) -> None:
        starts, tabs, ends = array("q"), array("I"), array("I")
        source_keys, pair_keys = array("Q"), array("Q")
        offset = 0
        with open(self.path, "rb") as file:
            for number, raw in enumerate(file, start=1):
                start, offset = offset, offset + len(raw)
                line = raw.rstrip(b"\r\n")
                if not line.strip() or line.lstrip().startswith(b"#"):
                    continue
                problem, fields = _check(line)
                if problem:
                    self.n_bad += 1
                    if len(self.bad) < SHOWN_BAD_LINES:
                        self.bad.append((number, problem))
                    continue
                source, target = (field.strip() for field in fields)
                starts.append(start)
                tabs.append(len(fields[0]))
                ends.append(len(line))
                source_keys.append(_key(source))
                pair_keys.append(_key(source + b"\t" + target))
        self._starts = np.frombuffer(starts, np.int64)
        self._tabs = np.frombuffer(tabs, np.uint32)
        self._ends = np.frombuffer(ends, np.uint32)
        self._source_keys: Any = np.frombuffer(source_keys, np.uint64)  # None once drawn
        self._pair_keys: Any = np.frombuffer(pair_keys, np.uint64)
        self.n_lines = len(starts)  # good lines, duplicates included
        self.n_duplicates = 0  # known once split
        self._split: Any = None  # (seed, the splits) once split

    def _bad_lines(self):
        shown = ", ".join(f"line {number} ({problem})" for number, problem in self.bad)
        more = self.n_bad - len(self.bad)
        return shown + (f" and {more} more" if more else "")

    def notes(self) -> list[str]:
        """What was left out, one line each (none when nothing was)."""
        notes = []
        if self.n_bad:
            notes.append(f"data file {self.path}: left out {self.n_bad} bad line(s): "
                         f"{self._bad_lines()}")
        if self.n_duplicates:
            notes.append(f"data file {self.path}: left out {self.n_duplicates} exact "
                         "duplicate pair(s) (the first of each is kept)")
        return notes

    def __len__(self) -> int:
        return self.n_lines

    def pair(self, row: int) -> tuple[str, str]:
        """(source, target) text of pair `row`, read from the file."""
        start, tab, end = int(self._starts[row]), int(self._tabs[row]), int(self._ends[row])
        fd = os.open(self.path, os.O_RDONLY)
        try:
            line = os.pread(fd, end, start)
        finally:
            os.close(fd)
        return (line[:tab].decode("utf-8").strip(), line[tab + 1:].decode("utf-8").strip())

    def byte_lengths(self, rows) -> tuple[np.ndarray, np.ndarray]:
        """(source bytes, target bytes) of `rows`: the batcher's stand-in for their lengths."""
        tabs = self._tabs[rows].astype(np.int64)
        return tabs, self._ends[rows] - tabs - 1

    def split(self, seed=0) -> dict[str, Any]:
        """{"train": PairsSplit, "valid": [Example], "test": [Example]}, drawn from `seed`
        (see the module's docstring); exact duplicates are left out here. A file is split
        once (its hash keys are then freed): again only with the same seed."""
        if self._split is None:
            order, valid_end, test_end = self._draw(seed)
            rows = np.sort(order[test_end:]).astype(np.int32 if len(order) < 2**31 else np.int64)
            self._split = seed, {
                "train": PairsSplit(self, rows),
                "valid": [self.example(row) for row in order[:valid_end]],
                "test": [self.example(row) for row in order[valid_end:test_end]]}
        elif self._split[0] != seed:
            raise ValueError(f"{self.path} was split with seed {self._split[0]}; read it again "
                             f"for seed {seed}")
        return dict(self._split[1])

    def _draw(self, seed):
        """(the pairs in the order of the seeded hash of their sources, where valid
        ends, where test ends): a source's pairs together, in file order, duplicates dropped,
        each split ending where a source does."""
        keys = _mix(self._source_keys, seed)
        self._source_keys = None
        order = np.lexsort((self._pair_keys, keys))  # stable: ties keep file order
        keys = keys[order]
        pair_keys = self._pair_keys
        self._pair_keys = None
        pair_keys = pair_keys[order]
        keep = np.ones(len(order), bool)
        keep[1:] = (keys[1:] != keys[:-1]) | (pair_keys[1:] != pair_keys[:-1])
        del pair_keys
        self.n_duplicates = int(len(keep) - keep.sum())
        order, keys = order[keep], keys[keep]
        n_held = min(MAX_HELD_OUT, max(round(0.05 * len(order)), int(len(order) >= 3)))

        def source_end(position):  # the first position at or after it where a source begins
            if position <= 0 or position >= len(keys):
                return min(max(position, 0), len(keys))
            return int(np.searchsorted(keys, keys[position - 1], "right"))

        valid_end = source_end(n_held)
        return order, valid_end, source_end(valid_end + n_held)

    def example(self, row) -> Example:
        return Example(*self.pair(row), "pairs")


class PairsSplit:
    """The pairs of a PairsFile at `rows`, as a read-only sequence of Examples (each read from
    the file when asked for)."""

    def __init__(self, file, rows) -> None:
        self.file, self.rows = file, rows

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        return self.file.example(int(self.rows[index]))

    def __iter__(self):
        for row in self.rows:
            yield self.file.example(int(row))

    def notes(self) -> list[str]:
        return self.file.notes()

    def encoded(self, vocab, tokenizer) -> EncodedPairs:
        return EncodedPairs(self, vocab, tokenizer)


class EncodedPairs:
    """Token ids of a PairsSplit's pairs, made when a batch asks for them."""

    def __init__(self, split, vocab, tokenizer) -> None:
        self.split, self.vocab, self.tokenizer = split, vocab, tokenizer

    def __len__(self) -> int:
        return len(self.split)

    def __getitem__(self, index):
        example = self.split[index]
        return (self.vocab.encode(self.tokenizer.source(example.src)),
                self.vocab.encode(self.tokenizer.target(example.tgt)))

    def lengths(self, rows) -> tuple[np.ndarray, np.ndarray]:
        return self.split.file.byte_lengths(self.split.rows[rows])


def _check(line):
    """(what is wrong with `line`, or None; its two fields)."""
    if len(line) > _LINE_LIMIT:
        return f"{len(line)} bytes long", None
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as error:
        return f"not UTF-8: {error.reason} at byte {error.start}", None
    fields = line.split(b"\t")
    if len(fields) != 2:
        shown = line[:60].decode("utf-8")
        return (f"{len(fields) - 1} tabs, expected 'source<TAB>target': {shown!r}"
                if len(fields) > 2 else f"no tab, expected 'source<TAB>target': {shown!r}"), None
    if not fields[0].strip():
        return "empty source", None
    if not fields[1].strip():
        return "empty target", None
    return None, fields


def _key(text):
    return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "little")


def _mix(keys, seed):
    """A seeded permutation of 64-bit keys (splitmix64's finalizer over key ^ a seed's hash):
    the same keys give the same order for one seed, another order for another."""
    with np.errstate(over="ignore"):
        mixed = keys ^ np.uint64(_key(f"split seed {seed}".encode()))
        mixed ^= mixed >> np.uint64(30)
        mixed *= np.uint64(0xBF58476D1CE4E5B9)
        mixed ^= mixed >> np.uint64(27)
        mixed *= np.uint64(0x94D049BB133111EB)
        mixed ^= mixed >> np.uint64(31)
    return mixed
