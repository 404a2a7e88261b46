"""Batches for training and evaluation: length-bucketed, padded, with masks; seeded shuffling
whose position is part of the checkpoint."""

from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial

import numpy as np

import minigrad as mg

from ..masks import causal_mask, padding_mask
from .tokenizer import WORDS


@dataclass
class Batch:
    """One batch. src (batch, src_len); tgt_in = BOS + target and tgt_out = target + EOS
    (batch, tgt_len); src_mask (batch, 1, 1, src_len); tgt_mask (1, 1, tgt_len, tgt_len);
    n_tokens = non-pad target tokens; `rows` = the examples' indices in their data set."""

    src: mg.Tensor
    tgt_in: mg.Tensor
    tgt_out: mg.Tensor
    src_mask: mg.Tensor
    tgt_mask: mg.Tensor
    n_tokens: int
    rows: list


def encode_pairs(examples, vocab, tokenizer=WORDS):
    """Examples -> list of (source ids, target ids) without BOS/EOS, split into tokens by
    `tokenizer` (word-level by default, or a SubwordTokenizer). A corpus file's split
    (`corpus.PairsSplit`) gives a sequence that encodes each pair when a batch asks for it."""
    if hasattr(examples, "encoded"):
        return examples.encoded(vocab, tokenizer)
    return [(vocab.encode(tokenizer.source(e.src)), vocab.encode(tokenizer.target(e.tgt)))
            for e in examples]


def _pad(sequences, pad_id):
    out = np.full((len(sequences), max(len(s) for s in sequences)), pad_id, dtype=np.int64)
    for row, sequence in enumerate(sequences):
        out[row, :len(sequence)] = sequence
    return out


def make_batch(pairs, rows, vocab, device=None, target_dropout=0.0, rng=None) -> Batch:
    """A padded Batch of the pairs at `rows` (target sides may be empty for decoding). With
    `target_dropout` p, each target token of the decoder's input (tgt_in, BOS aside) is
    replaced by `<unk>` with probability p (drawn from `rng`); tgt_out keeps every token."""
    src = _pad([pairs[r][0] or [vocab.pad_id] for r in rows], vocab.pad_id)
    tgt_in = _pad([[vocab.bos_id] + pairs[r][1] for r in rows], vocab.pad_id)
    if target_dropout:
        dropped = rng.random(tgt_in.shape) < target_dropout
        dropped[:, 0] = False
        tgt_in[dropped & (tgt_in != vocab.pad_id)] = vocab.unk_id
    tgt_out = _pad([pairs[r][1] + [vocab.eos_id] for r in rows], vocab.pad_id)
    _check_ids(src, tgt_in, tgt_out, vocab, rows)
    src_t = mg.tensor(src, device=device)
    return Batch(src=src_t, tgt_in=mg.tensor(tgt_in, device=device),
                 tgt_out=mg.tensor(tgt_out, device=device),
                 src_mask=padding_mask(src_t, vocab.pad_id),
                 tgt_mask=causal_mask(tgt_in.shape[1], device=device),
                 n_tokens=int((tgt_out != vocab.pad_id).sum()), rows=list(rows))


def _check_ids(src, tgt_in, tgt_out, vocab, rows):
    """Every id in [0, len(vocab)), checked here on the host: a GPU would wrap an id out of
    range into another row of the embedding table rather than fail."""
    low = min(int(a.min()) for a in (src, tgt_in, tgt_out))
    high = max(int(a.max()) for a in (src, tgt_in, tgt_out))
    if low < 0 or high >= len(vocab):
        raise IndexError(f"make_batch: token ids must be in [0, {len(vocab)}) (the vocabulary's "
                         f"size), got values in [{low}, {high}] in the examples at rows "
                         f"{list(rows)[:5]}...; were the pairs encoded with this vocabulary?")


def batches_in_order(pairs, vocab, batch_size, device=None) -> Iterator[Batch]:
    """Every pair once, in length-sorted batches (evaluation); `rows` say where each came from."""
    order = sorted(range(len(pairs)), key=lambda r: (len(pairs[r][0]), r))
    for start in range(0, len(order), batch_size):
        yield make_batch(pairs, order[start:start + batch_size], vocab, device)


def token_lengths(pairs, rows) -> tuple[np.ndarray, np.ndarray]:
    """(source lengths, target lengths) of the encoded pairs at `rows`."""
    return (np.array([len(pairs[r][0]) for r in rows], np.int64),
            np.array([len(pairs[r][1]) for r in rows], np.int64))


class BatchIterator:
    """Endless training batches: each epoch a seeded permutation, cut into pools of 50 batches,
    each pool sorted by length (little padding) and cut into batches, then the batch order
    shuffled. The position (epoch, batch) is all that is needed to resume exactly.

    `pairs` is a sequence of (source ids, target ids); one with a `lengths(rows)` method
    (a corpus file's) gives the lengths to sort by without being encoded. An epoch's plan is
    two integer arrays, whatever the corpus size. Data-parallel ranks all build the same plan
    and each takes its shards of every global batch (`next_shards`), so that all ranks run
    the same number of steps on the same global batches.

    `target_dropout` (target-side word dropout) replaces that share of the decoder's input
    tokens by `<unk>` (make_batch), so that the decoder learns to rely on the source rather
    than on its own prefix. Which tokens follow from (seed, epoch, batch) alone: the same on
    every rank, and after a resume."""

    pool_batches = 50

    def __init__(self, pairs, vocab, batch_size, seed=0, device=None, target_dropout=0.0) -> None:
        self.pairs, self.vocab, self.batch_size = pairs, vocab, batch_size
        self.seed, self.device = seed, device
        self.target_dropout = target_dropout
        self.epoch, self.position = 0, 0
        self._plan: tuple[np.ndarray, np.ndarray] | None = None

    def epoch_plan(self, epoch) -> tuple[np.ndarray, np.ndarray]:
        """(rows, starts) of the global plan of `epoch`: batch i is rows[starts[i]:
        starts[i] + batch_size] (the last batch of a pool may be shorter)."""
        rng = np.random.default_rng([self.seed, epoch])
        rows = rng.permutation(len(self.pairs))
        pool = self.batch_size * self.pool_batches
        lengths = getattr(self.pairs, "lengths", None) or partial(token_lengths, self.pairs)
        for start in range(0, len(rows), pool):
            chunk = rows[start:start + pool]
            source, target = lengths(chunk)
            rows[start:start + pool] = chunk[np.lexsort((target, source))]  # stable
        starts = np.concatenate([np.arange(start, min(start + pool, len(rows)),
                                           self.batch_size)
                                 for start in range(0, len(rows), pool)])
        return rows, starts[rng.permutation(len(starts))]

    def __len__(self) -> int:
        """Batches in one epoch."""
        return len(self._epoch()[1])

    def _epoch(self):
        if self._plan is None:
            self._plan = self.epoch_plan(self.epoch)
        return self._plan

    def batch_rows(self, rows, start) -> list[int]:
        pool_end = (start // (self.batch_size * self.pool_batches) + 1) * \
            self.batch_size * self.pool_batches
        return rows[start:min(start + self.batch_size, pool_end)].tolist()

    def next_batch(self) -> Batch:
        """The next global batch, whole."""
        rows = self._next_rows()
        return make_batch(self.pairs, rows, self.vocab, self.device, *self._dropout())

    def next_shards(self, parts, mine) -> tuple[list[Batch], int]:
        """The next global batch cut into `parts` shards of consecutive rows, as
        (the Batches of the shards numbered `mine` (a range), the global batch's target token
        count). Every rank draws the same global batch and builds only its own shards."""
        rows = self._next_rows()
        if len(rows) < parts:
            raise ValueError(f"a global batch of {len(rows)} sentences cannot be cut into "
                             f"{parts} shards (ranks × accumulation steps); raise the batch "
                             "size or use fewer ranks")
        tokens = sum(len(self.pairs[r][1]) + 1 for r in rows)  # + EOS, as make_batch counts
        shards = np.array_split(np.array(rows), parts)
        return [make_batch(self.pairs, shards[i].tolist(), self.vocab, self.device,
                           *self._dropout(part=i))
                for i in mine], tokens

    def _dropout(self, part=0):
        """(target_dropout, its generator) for the batch just taken (or its shard `part`):
        a generator of (seed, epoch, batch, part), so that resuming draws the same tokens."""
        if not self.target_dropout:
            return 0.0, None
        key = [self.seed, self.epoch, self.position, part, 0x7D]  # position: after this batch
        return self.target_dropout, np.random.default_rng(key)

    def _next_rows(self):
        rows, starts = self._epoch()
        if self.position >= len(starts):
            self.epoch, self.position, self._plan = self.epoch + 1, 0, None
            return self._next_rows()
        batch = self.batch_rows(rows, int(starts[self.position]))
        self.position += 1
        return batch

    def state_dict(self) -> dict[str, int]:
        return {"epoch": self.epoch, "position": self.position}

    def load_state_dict(self, state) -> None:
        self.epoch, self.position, self._plan = int(state["epoch"]), int(state["position"]), None
