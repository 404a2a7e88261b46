"""What a translation rests on: the log-probability of each of its tokens given the source and
the tokens before it, the cross-attention of every decoder layer and head, and the word
alignment read from that attention (docs/conventions.md, "Translation details").

`teacher_forced` scores given outputs in one forward pass, as training does: a translation
one already has, or the hypotheses beam search returned (whose attention it records; the
decoder is causal, so each position sees what it saw while decoding)."""

from contextlib import nullcontext
from typing import Any

import numpy as np

import minigrad as mg
from minigrad.nn import functional as F

from .attention import AttentionRecorder
from .masks import padding_mask


def teacher_forced(model, src, tokens, bos_id, attention=False):
    """Score outputs `tokens` (batch, len) (ids after BOS, padded with pad_id) for sources
    `src` (batch, src_len): each token's log-probability given the ones before it,
    `(batch, len)` float64 on the host (0 at padding), and with `attention=True` also the
    cross-attention of every decoder layer, `(batch, layers, heads, len, src_len)`."""
    pad_id = model.config.pad_id
    tokens = np.asarray(tokens, dtype=np.int64)
    if tokens.shape[1] > model.config.max_len:
        raise ValueError(f"teacher_forced: outputs of {tokens.shape[1]} tokens; this model has "
                         f"{model.config.max_len} positions (its max_len)")
    tgt_in = np.concatenate([np.full((len(tokens), 1), bos_id), tokens[:, :-1]], axis=1)
    recording: Any = AttentionRecorder(model) if attention else nullcontext()
    with mg.no_grad(), recording as recorder:
        src = src.to(model.device)
        logits = model(src, mg.tensor(tgt_in, device=model.device), padding_mask(src, pad_id))
        log_probs = F.log_softmax(logits, axis=-1).numpy().astype(np.float64)
    picked = np.take_along_axis(log_probs, tokens[:, :, None], axis=2)[:, :, 0]
    picked[tokens == pad_id] = 0.0
    if not attention:
        return picked
    layers = len(model.decoder.layers)
    cross = [recorder.weights[("decoder", number, "cross_attn")][0]
             for number in range(1, layers + 1)]  # each (batch, heads, len, src_len)
    return picked, np.stack(cross, axis=1)


def check_align_layer(model, align_layer):
    """The decoder layer (from 1) whose attention aligns: `align_layer`, or the last."""
    layers = len(model.decoder.layers)
    if align_layer is None:
        return layers
    if not 1 <= align_layer <= layers:
        raise ValueError(f"align_layer must be a decoder layer, 1 to {layers}, got "
                         f"{align_layer}")
    return align_layer


def check_align_heads(model, align_heads) -> list[int]:
    """The attention heads (indices from 0) whose average aligns: `align_heads` (numbers from
    1), or all of them."""
    heads = model.config.n_heads
    if align_heads is None:
        return list(range(heads))
    wrong = [h for h in align_heads if not 1 <= h <= heads]
    if wrong or not align_heads:
        raise ValueError(f"align_heads must be head numbers, 1 to {heads}, got "
                         f"{list(align_heads)}")
    return [h - 1 for h in dict.fromkeys(align_heads)]


def line_words(tokenize, detokenize, text, tokens) -> list[int]:
    """The whitespace-separated word of `text` that each of its `tokens` (`tokenize(text)`)
    belongs to, from 0 ("queen's" is one word of two tokens). Where tokenizing word by word
    does not give `tokens` (an <unk> in a decoded text), the words of the text
    `detokenize(tokens)` writes."""
    by_word = [word for word, piece in enumerate(text.split()) for _ in tokenize(piece)]
    if len(by_word) == len(tokens):
        return by_word
    return [len(detokenize(tokens[:end + 1]).split()) - 1 for end in range(len(tokens))]


def hard_alignment(attention, source_words, target_words) -> list[tuple[int, int]]:
    """One source word per target word, from one layer's cross-attention `(heads, t, s)` of
    one translation: the heads' average, summed over the source tokens of each source word,
    averaged over the target tokens of each target word, and its largest entry taken.
    `source_words` and `target_words` name each token's word (from 0; a token with no word,
    such as EOS, is left out by giving fewer target words than rows). Returns
    (source word, target word) pairs in target order."""
    weights = attention.mean(axis=0)[:len(target_words), :len(source_words)]  # (t, s)
    if not len(target_words):
        return []
    to_source = _membership(source_words)  # (s, source words)
    to_target = _membership(target_words)
    to_target /= to_target.sum(axis=0)  # averages over each target word's tokens
    word_weights = to_target.T @ weights @ to_source  # (target words, source words)
    return [(int(source), target) for target, source in enumerate(word_weights.argmax(axis=1))]


def _membership(words):
    """(tokens, words) matrix: 1 where the token belongs to the word."""
    words = np.asarray(words)
    return (words[:, None] == np.arange(words.max() + 1)[None, :]).astype(np.float64)


def pharaoh(pairs) -> str:
    """Alignment pairs in the Pharaoh form of fast_align and fairseq: "0-0 1-2 ...",
    source index first, from 0."""
    return " ".join(f"{source}-{target}" for source, target in pairs)
