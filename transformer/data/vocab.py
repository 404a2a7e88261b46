"""Vocabulary: a fixed, saved mapping between tokens and integer ids.

The four special tokens have fixed ids: <pad> 0, <bos> 1, <eos> 2, <unk> 3. One joint
vocabulary serves source and target alike (the usual use: both sides share embeddings); it
may also know which tokens appeared on the source side in training, so that a word the model
only ever produced, never read, can be reported as unseen input.
"""

import hashlib
import json
import os
from collections import Counter
from pathlib import Path

SPECIALS = ("<pad>", "<bos>", "<eos>", "<unk>")
_FORMAT = "minigrad-vocab"
_VERSION = 1


class Vocab:
    """Tokens ↔ ids; the special tokens first, at their fixed ids."""

    pad_id, bos_id, eos_id, unk_id = range(len(SPECIALS))

    def __init__(self, tokens, source_tokens=None) -> None:
        """Build from the full token list in id order: the specials, then distinct strings;
        `source_tokens` (optional) are those of them seen on the source side in training."""
        if not isinstance(tokens, (list, tuple)):
            raise TypeError(f"a vocabulary is a list of tokens, not {type(tokens).__name__}")
        self._tokens = tuple(tokens)
        if self._tokens[:len(SPECIALS)] != SPECIALS:
            raise ValueError(f"a vocabulary must start with {list(SPECIALS)}")
        if not all(isinstance(t, str) for t in self._tokens):
            raise ValueError("vocabulary tokens must be strings")
        self._ids = {token: i for i, token in enumerate(self._tokens)}
        if len(self._ids) != len(self._tokens):
            raise ValueError("a vocabulary must not list a token twice")
        self._source = None if source_tokens is None else frozenset(source_tokens)
        if self._source is not None and not self._source <= self._ids.keys():
            strangers = sorted(self._source - self._ids.keys())[:5]
            raise ValueError(f"source tokens {strangers} are not in the vocabulary")

    @classmethod
    def build(cls, token_lists, min_freq: int = 1, source_token_lists=None) -> "Vocab":
        """Count tokens and keep those seen at least `min_freq` times; `source_token_lists`
        (a part of `token_lists`: the source sentences) marks the source-side tokens.

        Order is deterministic: specials, then by descending frequency, ties alphabetical.
        """
        counts = Counter(token for tokens in token_lists for token in tokens)
        source = None
        if source_token_lists is not None:
            source = {t for tokens in source_token_lists for t in tokens}
        return cls.from_counts(counts, min_freq, source)

    @classmethod
    def from_counts(cls, counts, min_freq: int = 1, source_tokens=None) -> "Vocab":
        """`build` from token counts (a Counter) already made, e.g. in one pass over a
        large corpus; `source_tokens`: those seen on the source side."""
        kept = [t for t, n in counts.items() if n >= min_freq and t not in SPECIALS]
        kept.sort(key=lambda token: (-counts[token], token))
        source = None if source_tokens is None else set(source_tokens) & set(kept)
        return cls(SPECIALS + tuple(kept), source)

    @property
    def tokens(self) -> tuple[str, ...]:
        """Every token, in id order."""
        return self._tokens

    def __len__(self) -> int:
        return len(self._tokens)

    def __contains__(self, token) -> bool:
        return token in self._ids

    def __eq__(self, other) -> bool:
        return (isinstance(other, Vocab) and self._tokens == other._tokens
                and self._source == other._source)

    def digest(self) -> str:
        """A fingerprint of the id mapping (the tokens in id order): a model's weights fit
        exactly the vocabularies with its digest."""
        return hashlib.sha256("\n".join(self._tokens).encode("utf-8")).hexdigest()[:16]

    def __repr__(self) -> str:
        return f"Vocab({len(self)} tokens)"

    def token_to_id(self, token: str) -> int:
        """The id of `token`; `unk_id` when the token is not in the vocabulary."""
        return self._ids.get(token, self.unk_id)

    def id_to_token(self, i: int) -> str:
        """The token with id `i`."""
        if not 0 <= i < len(self._tokens):
            raise IndexError(f"token id {i} out of range for a vocabulary of {len(self)}")
        return self._tokens[i]

    def encode(self, tokens, add_bos: bool = False, add_eos: bool = False) -> list[int]:
        """Token ids of `tokens`, unknown tokens as `unk_id`, optionally framed by <bos>/<eos>."""
        ids = [self.token_to_id(token) for token in tokens]
        return [self.bos_id] * add_bos + ids + [self.eos_id] * add_eos

    def decode(self, ids, strip_special: bool = True) -> list[str]:
        """Tokens of `ids`.

        With `strip_special`, decoding stops at the first <eos> and drops <pad> and <bos>
        (as a decoder's output needs); <unk> is kept, as it stands for a real word.
        """
        tokens = []
        for i in ids:
            i = int(i)
            if strip_special and i == self.eos_id:
                break
            if not (strip_special and i in (self.pad_id, self.bos_id)):
                tokens.append(self.id_to_token(i))
        return tokens

    def unknown(self, tokens) -> list[str]:
        """The tokens not in the vocabulary, in order of first appearance, without repeats."""
        return list(dict.fromkeys(t for t in tokens if t not in self._ids))

    def unseen_as_source(self, tokens) -> list[str]:
        """The tokens of the vocabulary never seen on the source side in training (only as
        target words), in order, without repeats; none when that is not known."""
        if self._source is None:
            return []
        return list(dict.fromkeys(t for t in tokens if t in self._ids and t not in self._source))

    def to_record(self) -> dict:
        """The JSON record of `save`: {"format", "version", "tokens"} and, when known,
        "source_tokens"."""
        record = {"format": _FORMAT, "version": _VERSION, "tokens": list(self._tokens)}
        if self._source is not None:
            record["source_tokens"] = [t for t in self._tokens if t in self._source]
        return record

    def save(self, path) -> None:
        """Write the vocabulary as JSON (`to_record`), atomically."""
        record = self.to_record()
        path = Path(path)
        temporary = path.with_name(f".{path.name}.tmp")
        temporary.write_text(json.dumps(record, ensure_ascii=False, indent=0), encoding="utf-8")
        os.replace(temporary, path)

    @classmethod
    def load(cls, path) -> "Vocab":
        """Read a vocabulary written by `save`; ValueError if the file is not one."""
        try:
            record = json.loads(Path(path).read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as error:
            raise ValueError(f"{path}: not a vocabulary file (invalid JSON: {error})") from None
        return cls.from_record(record, path)

    @classmethod
    def from_record(cls, record, path="the record") -> "Vocab":
        """The vocabulary of a `to_record` record; ValueError (naming `path`) if it is not one."""
        if not isinstance(record, dict) or record.get("format") != _FORMAT:
            raise ValueError(f"{path}: not a vocabulary file (expected format {_FORMAT!r})")
        if record.get("version") != _VERSION:
            raise ValueError(f"{path}: vocabulary version {record.get('version')!r} is not "
                             f"supported (expected {_VERSION})")
        source = record.get("source_tokens")
        if source is not None and not isinstance(source, list):
            raise ValueError(f"{path}: 'source_tokens' must be a list of tokens")
        try:
            return cls(record.get("tokens"), source)
        except (TypeError, ValueError) as error:
            raise ValueError(f"{path}: {error}") from None
