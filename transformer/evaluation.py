"""Evaluation: teacher-forced loss and token accuracy; decoded exact match, corpus BLEU and
chrF (sacrebleu on the detokenised text against the examples' own target text), overall and
per grammar phenomenon."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import minigrad as mg
from minigrad.nn import functional as F

from .data.batching import batches_in_order, encode_pairs
from .data.tokenizer import WORDS
from .decoding import beam_search, default_max_len, greedy_decode


def corpus_scores(hypotheses, references) -> dict[str, float]:
    """{"bleu", "chrf"} (0-100) of plain-text translations against one reference each, by
    sacrebleu with its standard settings (BLEU's 13a tokenization), case-insensitive: the
    word-level vocabulary lower-cases, so that word-level and subword runs compare."""
    try:
        import sacrebleu
    except ImportError as error:
        raise ImportError("BLEU needs sacrebleu: pip install -e '.[examples]'") from error
    metrics = {"bleu": sacrebleu.metrics.BLEU(lowercase=True),
               "chrf": sacrebleu.metrics.CHRF(lowercase=True)}
    return {name: metric.corpus_score(hypotheses, [references]).score
            for name, metric in metrics.items()}


def same_text(hypothesis, reference) -> bool:
    """Exact match of two texts, case and spacing aside."""
    return hypothesis.lower().split() == reference.lower().split()


def translate_ids(model, src, vocab, beam_size=1, max_len=None, src_mask=None,
                  length_penalty=0.6) -> list[list[int]]:
    """Decode a batch of source ids; returns one list of target ids per row (EOS removed).
    `length_penalty` is beam search's GNMT alpha (0: none)."""
    max_len = max_len or default_max_len(model, src.shape[1])
    if beam_size > 1:
        out = beam_search(model, src, beam_size, max_len, vocab.bos_id, vocab.eos_id,
                          length_penalty=length_penalty, src_mask=src_mask)
    else:
        out = greedy_decode(model, src, max_len, vocab.bos_id, vocab.eos_id, src_mask=src_mask)
    results = []
    for row in out.numpy().tolist():
        if vocab.eos_id in row:
            row = row[:row.index(vocab.eos_id)]
        results.append([t for t in row if t != vocab.pad_id])
    return results


def evaluate(model, examples, vocab, batch_size=256, beam_size=1, device=None,
             decode=True, tokenizer=WORDS, outputs=False) -> dict[str, Any]:
    """Metrics of `model` on `examples` (split into tokens by `tokenizer`): loss,
    token_accuracy (teacher forced), and when `decode`: exact_match, bleu, chrf and phenomena
    {name: exact match} of the detokenised output against each example's target text,
    max_length_ratio (the longest output over its reference's length, in tokens), and with
    `outputs` the detokenised translations themselves, in the examples' order. The model is
    put in eval mode."""
    model.eval()
    pairs = encode_pairs(examples, vocab, tokenizer)
    total_loss, correct, tokens = 0.0, 0, 0
    predictions: list[list[int] | None] = [None] * len(pairs)
    with mg.no_grad():
        for batch in batches_in_order(pairs, vocab, batch_size, device):
            logits = model(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask)
            loss = F.cross_entropy(logits, batch.tgt_out, ignore_index=vocab.pad_id,
                                   reduction="sum")
            total_loss += loss.item()
            real = batch.tgt_out != vocab.pad_id
            correct += int(((logits.argmax(axis=-1) == batch.tgt_out) & real).sum().item())
            tokens += batch.n_tokens
            if decode:
                decoded = translate_ids(model, batch.src, vocab, beam_size,
                                        src_mask=batch.src_mask)
                for row, ids in zip(batch.rows, decoded):
                    predictions[row] = ids
    metrics: dict[str, Any] = {"loss": total_loss / max(tokens, 1),
                               "token_accuracy": correct / max(tokens, 1)}
    if decode:
        hypotheses = [tokenizer.detokenize(vocab.decode(p)) for p in predictions]
        metrics.update(_decoded_metrics(examples, predictions, hypotheses, tokenizer))
        if outputs:
            metrics["outputs"] = hypotheses
    return metrics


def _decoded_metrics(examples, predictions, hypotheses, tokenizer):
    references = [e.tgt for e in examples]
    hits, per_phenomenon = [], defaultdict(list)
    for example, hypothesis in zip(examples, hypotheses):
        hit = same_text(hypothesis, example.tgt)
        hits.append(hit)
        per_phenomenon[example.phenomenon].append(hit)
    ratios = [len(p) / max(len(tokenizer.target(e.tgt)), 1)
              for e, p in zip(examples, predictions)]
    scores = corpus_scores(hypotheses, references) if hits else {"bleu": math.nan,
                                                                 "chrf": math.nan}
    return {
        "exact_match": sum(hits) / max(len(hits), 1), **scores,
        "phenomena": {name: sum(h) / len(h) for name, h in sorted(per_phenomenon.items())},
        "max_length_ratio": max(ratios, default=math.nan),
    }
