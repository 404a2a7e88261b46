"""The pieces of a run, built from its task: the splits, the tokenizer, the joint vocabulary
and the model's configuration. The run orchestration (`pipeline.py`), the study tools
(`study/`, `illustrated/`), the benchmarks and the examples build them here, the same way."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .config import TransformerConfig
from .data import WORDS, Vocab, load_task
from .data.tokenizer import WordTokenizer
from .errors import ConfigError
from .main_job import MAIN_JOB

if TYPE_CHECKING:
    from .data.subword import SubwordTokenizer


def build_tokenizer(splits, subword=None) -> WordTokenizer | SubwordTokenizer:
    """The word-level tokenizer, or with `subword` (pieces per language) a SentencePiece
    model for each side trained on the train split."""
    if subword is None:
        return WORDS
    from .data.subword import SubwordTokenizer

    train = splits["train"]
    try:
        return SubwordTokenizer.train((e.src for e in train), (e.tgt for e in train), subword)
    except ValueError as error:
        raise ConfigError(f"--subword {subword}: {error}") from None


def build_vocab(splits, tokenizer=WORDS) -> Vocab:
    """The joint vocabulary of a task, from the source and target tokens of its train split
    (and, for subwords, every piece of both models); it knows which tokens it saw on the
    source side."""
    counts: Counter[str] = Counter()
    source: Counter[str] = Counter()
    for example in splits["train"]:  # one pass: a corpus file's train split is read from it
        source.update(tokenizer.source(example.src))
        counts.update(tokenizer.target(example.tgt))
    if tokenizer.kind == "subword":
        source.update(tokenizer.pieces("source"))
        counts.update(tokenizer.pieces("target"))
    counts.update(source)
    return Vocab.from_counts(counts, source_tokens=source)


def unknown_rate(examples, vocab, tokenizer=WORDS) -> float:
    """The share of the tokens of `examples` (both sides) that `vocab` reads as <unk>."""
    tokens = [t for e in examples for t in tokenizer.source(e.src) + tokenizer.target(e.tgt)]
    return sum(t not in vocab for t in tokens) / max(len(tokens), 1)


def build_model_config(vocab, splits, model: Mapping[str, Any] = MAIN_JOB.model,
                       tokenizer=WORDS) -> TransformerConfig:
    """The TransformerConfig of a run on `splits`: `model` (TransformerConfig fields; by
    default the main job's sizes) with one joint vocabulary, `vocab`, and shared embeddings,
    and unless `model` gives one a max_len fitting the longest pair."""
    longest = max(len(tokenizer.source(e.src)) + len(tokenizer.target(e.tgt))
                  for s in splits.values() for e in s)
    return TransformerConfig.from_dict({
        "share_embeddings": True, "max_len": max(64, 2 * longest + 16), **model,
        "src_vocab_size": len(vocab), "tgt_vocab_size": len(vocab)})


def fresh_setup(task=MAIN_JOB.task.name, model_options=None, seed=0,
                data=None) -> tuple[Vocab, TransformerConfig]:
    """(vocab, model config) of a new word-level run of `task`, as start_run builds them
    (the main job's model, MAIN_JOB.model, with `model_options` on top); no model, no
    folder."""
    splits = load_splits(task, data, seed)
    vocab = build_vocab(splits)
    return vocab, build_model_config(vocab, splits, {**MAIN_JOB.model, **(model_options or {})})


def load_splits(task, data=None, seed=0, skip_bad_lines=False) -> dict[str, Any]:
    """The splits of `task`, or ConfigError (one line, naming the data file) when its data
    cannot be read or is too small to train and validate on. What a corpus file's reader left
    out (bad lines with `skip_bad_lines`, duplicates) is printed."""
    try:
        splits = load_task(task, data=data, seed=seed, skip_bad_lines=skip_bad_lines)
    except (OSError, ValueError) as error:
        raise ConfigError(" ".join(str(error).split())) from None
    for note in getattr(splits["train"], "notes", list)():
        print(note)
    sizes = {name: len(splits.get(name, ())) for name in ("train", "valid", "test")}
    if not all(sizes.values()):
        source = f"data file {data}" if data is not None else f"task {task}"
        raise ConfigError(f"{source} gives {sum(sizes.values())} sentence pair(s) (train "
                          f"{sizes['train']}, valid {sizes['valid']}, test {sizes['test']}); a "
                          "run needs at least 3 distinct pairs, one for each split")
    return splits
