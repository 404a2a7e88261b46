"""Evaluation: teacher-forced loss and token accuracy, decoded exact match, corpus BLEU
(sacrebleu over our tokens), overall and per grammar phenomenon."""

import math
from collections import defaultdict

import minigrad as mg
from minigrad.nn import functional as F

from .data.batching import batches_in_order, encode_pairs
from .decoding import beam_search, greedy_decode


def corpus_bleu(hypotheses, references):
    """Corpus BLEU (0-100) of token lists, by sacrebleu with tokenize="none" (our tokens are
    already split)."""
    try:
        import sacrebleu
    except ImportError as error:
        raise ImportError("BLEU needs sacrebleu: pip install -e '.[examples]'") from error
    return sacrebleu.corpus_bleu([" ".join(h) for h in hypotheses],
                                 [[" ".join(r) for r in references]], tokenize="none").score


def translate_ids(model, src, vocab, beam_size=1, max_len=None, src_mask=None):
    """Decode a batch of source ids; returns one list of target ids per row (EOS removed)."""
    max_len = max_len or min(model.config.max_len - 1, 2 * src.shape[1] + 10)
    if beam_size > 1:
        out = beam_search(model, src, beam_size, max_len, vocab.bos_id, vocab.eos_id,
                          src_mask=src_mask)
    else:
        out = greedy_decode(model, src, max_len, vocab.bos_id, vocab.eos_id, src_mask=src_mask)
    results = []
    for row in out.numpy().tolist():
        if vocab.eos_id in row:
            row = row[:row.index(vocab.eos_id)]
        results.append([t for t in row if t != vocab.pad_id])
    return results


def evaluate(model, examples, vocab, batch_size=256, beam_size=1, device=None,
             decode=True):
    """Metrics of `model` on `examples`: loss, token_accuracy (teacher forced), and when
    `decode`: exact_match, bleu, phenomena {name: exact match}, max_length_ratio (the longest
    output over its reference's length, in tokens). The model is put in eval mode."""
    model.eval()
    pairs = encode_pairs(examples, vocab)
    total_loss, correct, tokens = 0.0, 0, 0
    predictions = [None] * len(pairs)
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
    metrics = {"loss": total_loss / max(tokens, 1),
               "token_accuracy": correct / max(tokens, 1)}
    if decode:
        metrics.update(_decoded_metrics(examples, pairs, predictions, vocab))
    return metrics


def _decoded_metrics(examples, pairs, predictions, vocab):
    hits, per_phenomenon = [], defaultdict(list)
    for example, (_, target), predicted in zip(examples, pairs, predictions):
        hit = predicted == target
        hits.append(hit)
        per_phenomenon[example.phenomenon].append(hit)
    references = [vocab.decode(target) for _, target in pairs]
    hypotheses = [vocab.decode(p) for p in predictions]
    ratios = [len(p) / max(len(target), 1) for (_, target), p in zip(pairs, predictions)]
    return {
        "exact_match": sum(hits) / max(len(hits), 1),
        "bleu": corpus_bleu(hypotheses, references) if hits else math.nan,
        "phenomena": {name: sum(h) / len(h) for name, h in sorted(per_phenomenon.items())},
        "max_length_ratio": max(ratios, default=math.nan),
    }
