"""Decoding: turning a trained model into output sequences, greedily or with beam search.

Both run under `mg.no_grad()` and leave the model as they find it: call `model.eval()` first
(dropout would otherwise make every step random). They return int64 ids `(batch, <= max_len)`
on the model's device: the tokens after BOS, EOS included where produced, then `pad_id`.

With `use_cache=True` (the default) each step feeds only the newest token to the decoder, which
appends its keys/values to those cached (`Transformer.new_decoder_cache`); without it each step
re-runs the decoder over the whole prefix. Both give the same tokens."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import minigrad as mg
from minigrad.nn import functional as F

from .masks import padding_mask


class _Prefixes:
    """The target prefixes being extended, one per row, and the logits of the token after each.

    The rows share `memory` row by row; beam search reorders rows only among the beams of one
    sentence, whose memory rows are equal, so the memory itself never needs reordering."""

    def __init__(self, model, memory, src_mask, bos_id, use_cache) -> None:
        self.model, self.memory, self.src_mask = model, memory, src_mask
        rows = memory.shape[0]
        self.tokens = mg.full((rows, 1), bos_id, dtype="int64", device=memory.device)  # (rows, t)
        self.cache = model.new_decoder_cache(memory) if use_cache else None

    def next_logits(self) -> mg.Tensor:
        """(rows, vocab): the logits of the next token after every prefix."""
        new = self.tokens if self.cache is None else self.tokens[:, -1:]
        hidden = self.model.decode(new, self.memory, self.src_mask, cache=self.cache)
        return self.model.generator(hidden[:, -1])

    def append(self, next_ids, parents=None) -> None:
        """Row i becomes prefix parents[i] (default: row i itself) followed by next_ids[i]."""
        if parents is not None:
            self.tokens = self.tokens[parents]
            if self.cache is not None:
                self.cache.select(parents)
        self.tokens = mg.concatenate([self.tokens, next_ids.reshape(-1, 1)], axis=1)


def default_max_len(model, source_length) -> int:
    """How many tokens to decode at most, by default, for a source of `source_length` tokens:
    twice its length plus 10, within the positions the model has after BOS (max_len - 1)."""
    return min(model.config.max_len - 1, 2 * source_length + 10)


def _encode(model, src, src_mask, max_len):
    """Checks the arguments; returns the source (on the model's device), its mask, the memory."""
    if max_len < 1:
        raise ValueError(f"decoding: max_len must be >= 1, got {max_len}")
    src = src.to(model.device)
    if src_mask is None:
        src_mask = padding_mask(src, model.config.pad_id)
    return src, src_mask, model.encode(src, src_mask)


def greedy_decode(model, src, max_len, bos_id, eos_id, use_cache=True, src_mask=None,
                  return_logits=False, stop_at_eos=True) -> Any:
    """The most probable next token at every step, for a batch of sources `(batch, src_len)`.

    A sequence that has produced EOS continues with `pad_id`; decoding stops once every sequence
    has (one host round-trip per step, for that check), or after `max_len` tokens. With
    `stop_at_eos=False` it runs exactly `max_len` steps (for timing). Returns the ids
    `(batch, steps)`, and with `return_logits=True` also every step's logits
    `(batch, steps, vocab)`."""
    with mg.no_grad():
        src, src_mask, memory = _encode(model, src, src_mask, max_len)
        prefixes = _Prefixes(model, memory, src_mask, bos_id, use_cache)
        finished = mg.zeros(src.shape[0], dtype=bool, device=memory.device)  # (batch,)
        step_logits = []
        for _ in range(max_len):
            logits = prefixes.next_logits()  # (batch, vocab)
            next_ids = mg.where(finished, model.config.pad_id, logits.argmax(axis=-1))
            prefixes.append(next_ids)
            step_logits.append(logits)
            finished = finished | (next_ids == eos_id)
            if stop_at_eos and finished.all().item():
                break
        tokens = prefixes.tokens[:, 1:]  # drop BOS
        return (tokens, mg.stack(step_logits, axis=1)) if return_logits else tokens


def _length_penalty(length, alpha):
    """GNMT's ((5 + length) / 6)^alpha (Wu et al. 2016, eq. 14): dividing a log-probability by
    it keeps beam search from favouring short outputs."""
    return ((5 + length) / 6) ** alpha


def _keep(hypotheses, hypothesis, limit) -> None:
    """Insert `hypothesis` into a best-first list holding at most `limit` of them."""
    hypotheses.append(hypothesis)
    hypotheses.sort(key=lambda kept: -kept.score)
    del hypotheses[limit:]


@dataclass(frozen=True)
class Hypothesis:
    """One output of beam search: its `tokens` (int64 ids after BOS, EOS last where produced),
    the log-probability of each token given the ones before it (`token_log_probs`, float64,
    one per token), their sum `log_prob`, and `score`, the log-probability divided by the GNMT
    penalty of its length: what beam search ranks by."""

    tokens: np.ndarray
    token_log_probs: np.ndarray
    log_prob: float
    score: float


def penalized_score(log_prob, length, alpha=0.6) -> float:
    """What beam search ranks an output of `length` tokens (EOS included) by: its
    log-probability divided by the GNMT length penalty."""
    return float(log_prob / _length_penalty(length, alpha))


def _hypothesis(tokens, token_log_probs, log_prob, alpha):
    return Hypothesis(tokens, token_log_probs, float(log_prob),
                      penalized_score(log_prob, len(tokens), alpha))


@dataclass(frozen=True)
class BeamStep:
    """What beam search did at one `step` (from 1), handed to its `on_step`: the
    log-probabilities of the next token after each open beam it started from, `log_probs`
    (batch, beam_size, vocab) float64 (at step 1 only beam 0 is open), the open beams it kept,
    their `tokens` (batch, beam_size, step) and log-probabilities `scores` (batch, beam_size;
    -inf: none), and the hypotheses `finished` so far, per sentence best first."""

    step: int
    log_probs: np.ndarray
    tokens: np.ndarray
    scores: np.ndarray
    finished: list[list[Hypothesis]]


def beam_search_n_best(model, src, beam_size, max_len, bos_id, eos_id, n_best=1,
                       length_penalty=0.6, use_cache=True, src_mask=None,
                       on_step: Callable[[BeamStep], None] | None = None
                       ) -> list[list[Hypothesis]]:
    """The `n_best` (<= beam_size) best-scoring outputs found by keeping `beam_size` open
    hypotheses per sentence: for each sentence of `src`, a best-first list of `Hypothesis`.

    All sentences decode together, as `batch × beam_size` rows. At each step every open beam's
    log-probability is extended by every token; the best 2·beam_size candidates of each sentence
    are taken (at most beam_size of them end in EOS, so beam_size open ones always remain). An
    EOS candidate ranked within the top beam_size finishes a hypothesis, scored by its
    log-probability divided by the GNMT penalty of its length (tokens generated, EOS included);
    each sentence keeps its beam_size best. The best beam_size other candidates stay open.

    A sentence is done when it holds beam_size finished hypotheses and its best open beam,
    penalized at its current length, does not beat the worst of them (Hugging Face's default
    rule: a beam that only the larger penalty of a longer output could lift is not pursued,
    which makes beam_size=1 exactly greedy decoding). Decoding stops when every sentence is
    done, or after `max_len` tokens, when the open beams compete with the finished ones.

    The bookkeeping runs on the host, on the (batch, 2·beam_size) candidates of each step: a
    token's log-probability is its candidate's total less its parent beam's, so the n-best
    list costs no work on the device. `on_step`, when given, is called with a `BeamStep` after
    each step (the step's log-probabilities then come to the host)."""
    if beam_size < 1:
        raise ValueError(f"beam_search: beam_size must be >= 1, got {beam_size}")
    if not 1 <= n_best <= beam_size:
        raise ValueError(f"beam_search: n_best must be between 1 and beam_size ({beam_size}), "
                         f"got {n_best}; widen the beam to get more hypotheses")
    with mg.no_grad():
        src, src_mask, memory = _encode(model, src, src_mask, max_len)
        batch, device = src.shape[0], memory.device
        # each sentence's beams are adjacent rows: sentence b owns rows b·k .. b·k + k-1
        rows = mg.tensor(np.repeat(np.arange(batch), beam_size), device=device)
        prefixes = _Prefixes(model, memory[rows], src_mask[rows], bos_id, use_cache)
        scores = np.full((batch, beam_size), -np.inf)  # open beams' log-probabilities
        scores[:, 0] = 0.0  # one live beam at the start, so the first step is not repeated k times
        history = np.zeros((batch, beam_size, 0), dtype=np.int64)  # their tokens, on the host
        history_log_probs = np.zeros((batch, beam_size, 0))  # and those tokens' log-probs
        finished: list[list] = [[] for _ in range(batch)]  # per sentence: Hypothesis, best first
        done = np.zeros(batch, dtype=bool)
        for step in range(1, max_len + 1):
            log_probs = F.log_softmax(prefixes.next_logits(), axis=-1)  # (batch·k, vocab)
            vocab = log_probs.shape[-1]
            totals = log_probs.reshape(batch, beam_size, vocab) + mg.tensor(
                scores[:, :, None], dtype=log_probs.dtype, device=device)
            top_values, top_indices = mg.topk(totals.reshape(batch, beam_size * vocab),
                                              2 * beam_size)
            values = top_values.numpy().astype(np.float64)  # (batch, 2k)
            indices = top_indices.numpy()
            parent, token = np.divmod(indices, vocab)
            with np.errstate(invalid="ignore"):  # -inf less -inf: a candidate never kept
                token_log_probs = values - np.take_along_axis(scores, parent, axis=1)

            is_eos = token == eos_id
            ending = is_eos[:, :beam_size] & np.isfinite(values[:, :beam_size]) & ~done[:, None]
            for b, c in zip(*np.nonzero(ending)):
                _keep(finished[b], _hypothesis(
                    np.append(history[b, parent[b, c]], eos_id),
                    np.append(history_log_probs[b, parent[b, c]], token_log_probs[b, c]),
                    values[b, c], length_penalty), beam_size)

            survivors = np.argsort(is_eos, axis=1, kind="stable")[:, :beam_size]  # best non-EOS
            scores, parent, token, token_log_probs = (
                np.take_along_axis(a, survivors, axis=1)
                for a in (values, parent, token, token_log_probs))
            history, history_log_probs = (
                np.concatenate([np.take_along_axis(kept, parent[:, :, None], axis=1),
                                new[:, :, None]], axis=2)
                for kept, new in ((history, token), (history_log_probs, token_log_probs)))
            if on_step is not None:
                on_step(BeamStep(step, log_probs.numpy().astype(np.float64).reshape(
                    batch, beam_size, vocab), history, scores, [list(f) for f in finished]))
            best_open = scores[:, 0] / _length_penalty(step, length_penalty)
            done |= np.array([len(f) == beam_size and f[-1].score >= best_open[b]
                              for b, f in enumerate(finished)])
            if done.all() or step == max_len:
                break
            parents = np.arange(batch)[:, None] * beam_size + parent  # (batch, k) row numbers
            prefixes.append(mg.tensor(token.reshape(-1), device=device),
                            mg.tensor(parents.reshape(-1), device=device))

        for b in np.nonzero(~done)[0]:  # out of steps: the open beams compete as they are
            for j in np.nonzero(np.isfinite(scores[b]))[0]:
                _keep(finished[b], _hypothesis(history[b, j], history_log_probs[b, j],
                                               scores[b, j], length_penalty), beam_size)
        return [hypotheses[:n_best] for hypotheses in finished]


def beam_search(model, src, beam_size, max_len, bos_id, eos_id, length_penalty=0.6,
                use_cache=True, src_mask=None, return_scores=False) -> Any:
    """The best output of `beam_search_n_best` for each sentence of `src`, as the ids
    `(batch, <= max_len)`, and with `return_scores=True` also their penalized scores
    `(batch,)`."""
    best = [hypotheses[0] for hypotheses in beam_search_n_best(
        model, src, beam_size, max_len, bos_id, eos_id, 1, length_penalty, use_cache, src_mask)]
    tokens = np.full((len(best), max(len(h.tokens) for h in best)), model.config.pad_id,
                     dtype=np.int64)
    for b, hypothesis in enumerate(best):
        tokens[b, :len(hypothesis.tokens)] = hypothesis.tokens
    out = mg.tensor(tokens, device=model.device)
    if return_scores:
        return out, mg.tensor(np.array([h.score for h in best]),
                              dtype=model.generator.weight.dtype, device=model.device)
    return out
