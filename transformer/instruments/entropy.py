"""Attention entropy per head, from the weights an AttentionRecorder kept: how spread each
head's attention is, from 0 (one key) to ln(number of keys it may attend to) (uniform)."""

from typing import Any

import numpy as np


def attention_entropy(weights: Any, query_valid: Any = None) -> np.ndarray:
    """The mean entropy (nats) per head of attention weights (batch, heads, q_len, k_len) whose
    rows sum to 1, over the query positions where `query_valid` (batch, q_len) is True (every
    position when None); 0·ln 0 counts as 0. Returns an array (heads,)."""
    p = np.asarray(weights, dtype=np.float64)
    if p.ndim != 4:
        raise ValueError(f"attention_entropy: weights must be (batch, heads, q_len, k_len), "
                         f"got shape {p.shape}")
    terms = np.where(p > 0, -p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    per_query = terms.sum(axis=-1)  # (batch, heads, q_len)
    valid = np.ones((p.shape[0], p.shape[2]), bool) if query_valid is None else \
        np.asarray(query_valid, bool)
    if valid.shape != (p.shape[0], p.shape[2]):
        raise ValueError(f"attention_entropy: query_valid must be (batch, q_len) = "
                         f"{(p.shape[0], p.shape[2])}, got {valid.shape}")
    if not valid.any():
        raise ValueError("attention_entropy: query_valid selects no query position")
    return per_query.transpose(1, 0, 2)[:, valid].mean(axis=1)


def entropy_rows(recorder: Any, query_valid: dict[str, Any], config_label: str = "",
                 step: int = 0) -> list[dict]:
    """Rows (the recorder's fields, `head` added from 1) of `attention_entropy` for every
    attention call an AttentionRecorder kept: {(stack, layer, sublayer): [weights, ...]}, the
    last call of each; `query_valid` = {"encoder": (batch, src_len), "decoder": (batch,
    tgt_len)} booleans (a cross-attention's queries are the decoder's)."""
    rows = []
    for (stack, layer, sublayer), calls in recorder.weights.items():
        entropies = attention_entropy(calls[-1], query_valid[stack])
        rows += [{"step": step, "config": config_label, "stack": stack, "layer": layer,
                  "sublayer": sublayer, "param": None, "head": head,
                  "quantity": "attention_entropy", "value": float(value)}
                 for head, value in enumerate(entropies, start=1)]
    return rows
