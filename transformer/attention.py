"""Multi-head attention (paper §3.2.2) and the recorder that keeps its weights when asked."""

from __future__ import annotations

from typing import Any

import minigrad as mg
from minigrad import Tensor, nn
from minigrad.nn import functional as F


class MultiHeadAttention(nn.Module):
    """Q, K, V projections, `n_heads` heads as a batch axis, scaled dot-product attention in one
    fused op, heads concatenated, output projection W_O.

    Self-attention: `forward(x, mask=mask)`; cross-attention: `forward(x, memory, mask)`, keys
    and values from the encoder output. With a `cache` dict (incremental decoding),
    self-attention appends the new keys/values to those cached, and cross-attention computes
    its keys/values once and reuses them."""

    def __init__(self, d_model, n_heads, attention_dropout=0.0) -> None:
        super().__init__()
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.attention_dropout = attention_dropout
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.record_key = None  # (stack, layer, sublayer), set by the model
        self.recorder: Any = None  # an AttentionRecorder while one is active

    def split_heads(self, x) -> Tensor:
        """(batch, len, d_model) -> (batch, heads, len, d_head)."""
        batch, length, _ = x.shape
        return x.reshape(batch, length, self.n_heads, self.d_head).transpose(0, 2, 1, 3)

    def keys_values(self, source) -> tuple[Tensor, Tensor]:
        """The keys and values of a source sequence, split into heads."""
        return self.split_heads(self.k_proj(source)), self.split_heads(self.v_proj(source))

    def forward(self, x, memory=None, mask=None, cache=None) -> Tensor:
        q = self.split_heads(self.q_proj(x))  # (batch, heads, q_len, d_head)
        if memory is not None and cache is not None and "k" in cache:
            k, v = cache["k"], cache["v"]  # cross-attention: computed once per source
        else:
            k, v = self.keys_values(x if memory is None else memory)
            if cache is not None:
                if memory is None and "k" in cache:  # self-attention: append the new positions
                    k = mg.concatenate([cache["k"], k], axis=2)
                    v = mg.concatenate([cache["v"], v], axis=2)
                cache["k"], cache["v"] = k, v
        # (batch, heads, q_len, d_head)
        out = F.scaled_dot_product_attention(
            q, k, v, mask=mask, dropout_p=self.attention_dropout, training=self.training,
            return_weights=self.recorder is not None)
        if self.recorder is not None:
            out, weights = out
            self.recorder.record(self.record_key, weights)
        batch, _, length, _ = out.shape
        out = out.transpose(0, 2, 1, 3).reshape(batch, length, self.d_model)
        return self.out_proj(out)

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, n_heads={self.n_heads}"


class AttentionRecorder:
    """`with AttentionRecorder(model) as rec:` keeps every attention call's weights, detached,
    in `rec.weights[(stack, layer, sublayer)]`: a list of arrays (batch, heads, q_len, k_len).

    Outside the block nothing is kept."""

    def __init__(self, model) -> None:
        self.modules = [m for m in model.modules() if isinstance(m, MultiHeadAttention)]
        self.weights: dict = {}

    def record(self, key, weights) -> None:
        self.weights.setdefault(key, []).append(weights.numpy())

    def __enter__(self) -> AttentionRecorder:
        for module in self.modules:
            module.recorder = self
        return self

    def __exit__(self, *exc) -> None:
        for module in self.modules:
            module.recorder = None
