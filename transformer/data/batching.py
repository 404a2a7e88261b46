"""Batches for training and evaluation: length-bucketed, padded, with masks; seeded shuffling
whose position is part of the checkpoint."""

from dataclasses import dataclass

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
    `tokenizer` (word-level by default, or a SubwordTokenizer)."""
    return [(vocab.encode(tokenizer.source(e.src)), vocab.encode(tokenizer.target(e.tgt)))
            for e in examples]


def _pad(sequences, pad_id):
    out = np.full((len(sequences), max(len(s) for s in sequences)), pad_id, dtype=np.int64)
    for row, sequence in enumerate(sequences):
        out[row, :len(sequence)] = sequence
    return out


def make_batch(pairs, rows, vocab, device=None):
    """A padded Batch of the pairs at `rows` (target sides may be empty for decoding)."""
    src = _pad([pairs[r][0] or [vocab.pad_id] for r in rows], vocab.pad_id)
    tgt_in = _pad([[vocab.bos_id] + pairs[r][1] for r in rows], vocab.pad_id)
    tgt_out = _pad([pairs[r][1] + [vocab.eos_id] for r in rows], vocab.pad_id)
    src_t = mg.tensor(src, device=device)
    return Batch(src=src_t, tgt_in=mg.tensor(tgt_in, device=device),
                 tgt_out=mg.tensor(tgt_out, device=device),
                 src_mask=padding_mask(src_t, vocab.pad_id),
                 tgt_mask=causal_mask(tgt_in.shape[1], device=device),
                 n_tokens=int((tgt_out != vocab.pad_id).sum()), rows=list(rows))


def batches_in_order(pairs, vocab, batch_size, device=None):
    """Every pair once, in length-sorted batches (evaluation); `rows` say where each came from."""
    order = sorted(range(len(pairs)), key=lambda r: (len(pairs[r][0]), r))
    for start in range(0, len(order), batch_size):
        yield make_batch(pairs, order[start:start + batch_size], vocab, device)


class BatchIterator:
    """Endless training batches: each epoch a seeded permutation, cut into pools of 50 batches,
    each pool sorted by length (little padding) and cut into batches, then the batch order
    shuffled. The position (epoch, batch) is all that is needed to resume exactly."""

    pool_batches = 50

    def __init__(self, pairs, vocab, batch_size, seed=0, device=None):
        self.pairs, self.vocab, self.batch_size = pairs, vocab, batch_size
        self.seed, self.device = seed, device
        self.epoch, self.position = 0, 0
        self._plan = None

    def _epoch_plan(self):
        rng = np.random.default_rng([self.seed, self.epoch])
        order = rng.permutation(len(self.pairs))
        pool = self.batch_size * self.pool_batches
        plan = []
        for start in range(0, len(order), pool):
            chunk = sorted(order[start:start + pool].tolist(),
                           key=lambda r: (len(self.pairs[r][0]), len(self.pairs[r][1])))
            plan += [chunk[i:i + self.batch_size] for i in range(0, len(chunk), self.batch_size)]
        return [plan[i] for i in rng.permutation(len(plan))]

    def next_batch(self):
        if self._plan is None:
            self._plan = self._epoch_plan()
        if self.position >= len(self._plan):
            self.epoch, self.position, self._plan = self.epoch + 1, 0, None
            return self.next_batch()
        rows = self._plan[self.position]
        self.position += 1
        return make_batch(self.pairs, rows, self.vocab, self.device)

    def state_dict(self):
        return {"epoch": self.epoch, "position": self.position}

    def load_state_dict(self, state):
        self.epoch, self.position, self._plan = int(state["epoch"]), int(state["position"]), None
