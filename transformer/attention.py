"""Multi-head attention (paper §3.2.2) and the recorder that keeps its weights when asked."""

from __future__ import annotations

import minigrad as mg
from minigrad import Tensor, nn
from minigrad.nn import functional as F

from .recording import Recorded, Recorder


class MultiHeadAttention(Recorded, nn.Module):
    """Q, K, V projections, `n_heads` heads as a batch axis, scaled dot-product attention in one
    fused op, heads concatenated, output projection W_O.

    Self-attention: `forward(x, mask=mask)`; cross-attention: `forward(x, memory, mask)`, keys
    and values from the encoder output. With a `cache` dict (incremental decoding),
    self-attention appends the new keys/values to those cached, and cross-attention computes
    its keys/values once and reuses them.

    It names (`seen`) q, k, v (batch, heads, len, d_head), the attention `weights` (batch,
    heads, q_len, k_len; computed only while watched), each head's output `z`, their
    concatenation `concat` (batch, len, d_model) and W_O's `output`."""

    def __init__(self, d_model, n_heads, attention_dropout=0.0) -> None:
        super().__init__()
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.attention_dropout = attention_dropout
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.record_key = None  # (stack, layer, sublayer), set by the model

    def split_heads(self, x) -> Tensor:
        """(batch, len, d_model) -> (batch, heads, len, d_head)."""
        batch, length, _ = x.shape
        return x.reshape(batch, length, self.n_heads, self.d_head).transpose(0, 2, 1, 3)

    def keys_values(self, source) -> tuple[Tensor, Tensor]:
        """The keys and values of a source sequence, split into heads."""
        return (self.seen("k", self.split_heads(self.k_proj(source))),
                self.seen("v", self.split_heads(self.v_proj(source))))

    def forward(self, x, memory=None, mask=None, cache=None) -> Tensor:
        q = self.seen("q", self.split_heads(self.q_proj(x)))  # (batch, heads, q_len, d_head)
        if memory is not None and cache is not None and "k" in cache:
            k, v = cache["k"], cache["v"]  # cross-attention: computed once per source
        else:
            k, v = self.keys_values(x if memory is None else memory)
            if cache is not None:
                if memory is None and "k" in cache:  # self-attention: append the new positions
                    k = mg.concatenate([cache["k"], k], axis=2)
                    v = mg.concatenate([cache["v"], v], axis=2)
                cache["k"], cache["v"] = k, v
        # (batch, heads, q_len, d_head): softmax(q kᵀ / sqrt(d_head)) v, one fused op
        z = F.scaled_dot_product_attention(
            q, k, v, mask=mask, dropout_p=self.attention_dropout, training=self.training,
            return_weights=self.watched)
        if self.watched:  # the weights too, which the fused op keeps only when asked
            z, weights = z
            self.seen("weights", weights)
        z = self.seen("z", z)
        batch, _, length, _ = z.shape
        concat = self.seen("concat", z.transpose(0, 2, 1, 3).reshape(batch, length, self.d_model))
        return self.seen("output", self.out_proj(concat))

    def extra_repr(self) -> str:
        return f"d_model={self.d_model}, n_heads={self.n_heads}"


class AttentionRecorder(Recorder):
    """`with AttentionRecorder(model) as rec:` keeps every attention call's weights, detached,
    in `rec.weights[(stack, layer, sublayer)]`: a list of arrays (batch, heads, q_len, k_len).

    Outside the block nothing is kept."""

    watches = (MultiHeadAttention,)

    def __init__(self, model) -> None:
        super().__init__(model)
        self.weights: dict = {}

    def record(self, module, name, value, frame) -> None:
        if name == "weights":
            self.weights.setdefault(module.record_key, []).append(value.numpy())
