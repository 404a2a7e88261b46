"""The benchmark model written plainly in PyTorch: the same encoder-decoder Transformer as
`transformer.Transformer` (post-LN, sinusoidal positions), with explicit modules and the
attention written out, so that a comparison measures the engines and not the model code.

What it shares with ours, on purpose:
- token embedding × sqrt(d_model) + the paper's sinusoids (interleaved: sin at even
  dimensions, cos at odd ones, as `transformer.positional.sinusoidal_encoding`), dropout;
- post-LN blocks: x -> LayerNorm(x + dropout(F(x))) around every sublayer;
- multi-head attention with separate q/k/v/out projections, heads as a batch axis,
  softmax(q kᵀ / sqrt(d_head)) v with masked scores set to -inf (masks are boolean, True =
  masked out, as ours), optional dropout on the weights (0 by default);
- one embedding matrix for source, target and output when `share_embeddings` (the output
  projection then has no bias), as ours;
- initialization: Xavier-uniform for every weight matrix and embedding, zero biases,
  LayerNorm ones/zeros;
- greedy decoding with or without a key/value cache, as `transformer.decoding`.

It uses neither `torch.nn.Transformer` nor `F.scaled_dot_product_attention`: those are fused
kernels, and the point is the same computation, op for op. `torch_name`
(and `load_minigrad_weights`) map our parameter names to these, so the two models can be given
identical weights.
"""

import math
import re

import torch
from torch import nn


def sinusoidal_encoding(max_len, d_model):
    """The paper's table (max_len, d_model), float32: PE[pos, 2i] = sin(pos / 10000^(2i/d)),
    PE[pos, 2i+1] = cos(pos / 10000^(2i/d)); computed in float64, as ours."""
    positions = torch.arange(max_len, dtype=torch.float64)[:, None]
    frequencies = 1.0 / 10000 ** (torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = positions * frequencies  # (max_len, d_model / 2)
    table = torch.empty(max_len, d_model, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angles)
    table[:, 1::2] = torch.cos(angles)
    return table.float()


def padding_mask(ids, pad_id):
    """(batch, len) ids -> (batch, 1, 1, len): True at padding positions (keys to ignore)."""
    return (ids == pad_id)[:, None, None, :]


def causal_mask(length, offset=0, device=None):
    """(1, 1, length, offset + length): True where query i (at position offset + i) would see
    a later position."""
    queries = torch.arange(offset, offset + length, device=device)[:, None]
    keys = torch.arange(offset + length, device=device)[None, :]
    return (keys > queries)[None, None]


class MultiHeadAttention(nn.Module):
    """softmax(Q Kᵀ / sqrt(d_head)) V over `n_heads` heads, each a slice of d_model.

    Self-attention: forward(x, mask=...); cross-attention: forward(x, memory, mask=...).
    With a `cache` dict (incremental decoding), self-attention appends the new keys and values
    to those cached, and cross-attention computes its keys and values once."""

    def __init__(self, d_model, n_heads, attention_dropout=0.0):
        super().__init__()
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(attention_dropout)

    def split_heads(self, x):
        """(batch, len, d_model) -> (batch, heads, len, d_head)."""
        batch, length, _ = x.shape
        return x.reshape(batch, length, self.n_heads, self.d_head).transpose(1, 2)

    def keys_values(self, source):
        return self.split_heads(self.k_proj(source)), self.split_heads(self.v_proj(source))

    def forward(self, x, memory=None, mask=None, cache=None):
        q = self.split_heads(self.q_proj(x))  # (batch, heads, q_len, d_head)
        if memory is not None and cache is not None and "k" in cache:
            k, v = cache["k"], cache["v"]  # cross-attention: computed once per source
        else:
            k, v = self.keys_values(x if memory is None else memory)
            if cache is not None:
                if memory is None and "k" in cache:  # self-attention: append the new positions
                    k = torch.cat([cache["k"], k], dim=2)
                    v = torch.cat([cache["v"], v], dim=2)
                cache["k"], cache["v"] = k, v

        scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.d_head)  # (batch, heads, q, k)
        if mask is not None:
            scores = scores.masked_fill(mask, float("-inf"))
        weights = self.dropout(torch.softmax(scores, dim=-1))
        out = weights @ v  # (batch, heads, q_len, d_head)

        batch, _, length, _ = out.shape
        out = out.transpose(1, 2).reshape(batch, length, self.d_model)  # heads concatenated
        return self.out_proj(out)


class FeedForward(nn.Module):
    """max(0, x W1 + b1) W2 + b2 at every position."""

    def __init__(self, d_model, d_ff):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.linear2(torch.relu(self.linear1(x)))


class EncoderLayer(nn.Module):
    """x -> LN(x + dropout(SelfAttention(x))) -> LN(x + dropout(FFN(x)))."""

    def __init__(self, d_model, n_heads, d_ff, dropout, attention_dropout):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, n_heads, attention_dropout)
        self.self_attn_norm = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)
        self.ffn_norm = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, src_mask):
        x = self.self_attn_norm(x + self.dropout(self.self_attn(x, mask=src_mask)))
        return self.ffn_norm(x + self.dropout(self.ffn(x)))


class DecoderLayer(nn.Module):
    """Masked self-attention, attention over the encoder output, feed-forward; each post-LN."""

    def __init__(self, d_model, n_heads, d_ff, dropout, attention_dropout):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, n_heads, attention_dropout)
        self.self_attn_norm = nn.LayerNorm(d_model)
        self.cross_attn = MultiHeadAttention(d_model, n_heads, attention_dropout)
        self.cross_attn_norm = nn.LayerNorm(d_model)
        self.ffn = FeedForward(d_model, d_ff)
        self.ffn_norm = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, memory, src_mask, tgt_mask, cache=None):
        self_cache = None if cache is None else cache["self"]
        cross_cache = None if cache is None else cache["cross"]
        attended = self.self_attn(x, mask=tgt_mask, cache=self_cache)
        x = self.self_attn_norm(x + self.dropout(attended))
        attended = self.cross_attn(x, memory, mask=src_mask, cache=cross_cache)
        x = self.cross_attn_norm(x + self.dropout(attended))
        return self.ffn_norm(x + self.dropout(self.ffn(x)))


class Embedder(nn.Module):
    """ids -> embedding × sqrt(d_model) + position vectors, then dropout."""

    def __init__(self, vocab_size, d_model, max_len, dropout):
        super().__init__()
        self.scale = math.sqrt(d_model)
        self.embedding = nn.Embedding(vocab_size, d_model)
        self.register_buffer("positions", sinusoidal_encoding(max_len, d_model),
                             persistent=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, ids, offset=0):
        length = ids.shape[1]
        x = self.embedding(ids) * self.scale + self.positions[offset:offset + length]
        return self.dropout(x)


class DecoderCache:
    """Per decoder layer, the self-attention keys/values so far and the cross-attention
    keys/values (computed once); the position of the next token."""

    def __init__(self, n_layers):
        self.layers = [{"self": {}, "cross": {}} for _ in range(n_layers)]
        self.offset = 0


class Transformer(nn.Module):
    """The encoder-decoder of `transformer.Transformer` (post-LN, sinusoidal positions).

    The keyword arguments are `transformer.TransformerConfig`'s names; only what this plain
    model implements is accepted."""

    def __init__(self, src_vocab_size, tgt_vocab_size, d_model=512, n_heads=8,
                 n_encoder_layers=6, n_decoder_layers=6, d_ff=2048, dropout=0.1,
                 attention_dropout=0.0, max_len=512, share_embeddings=False, pad_id=0):
        super().__init__()
        if share_embeddings and src_vocab_size != tgt_vocab_size:
            raise ValueError("share_embeddings needs src_vocab_size == tgt_vocab_size")
        self.pad_id = pad_id
        layer_sizes = (d_model, n_heads, d_ff, dropout, attention_dropout)
        self.src_embed = Embedder(src_vocab_size, d_model, max_len, dropout)
        self.tgt_embed = Embedder(tgt_vocab_size, d_model, max_len, dropout)
        self.encoder_layers = nn.ModuleList(
            EncoderLayer(*layer_sizes) for _ in range(n_encoder_layers))
        self.decoder_layers = nn.ModuleList(
            DecoderLayer(*layer_sizes) for _ in range(n_decoder_layers))
        self.generator = nn.Linear(d_model, tgt_vocab_size, bias=not share_embeddings)
        self.reset_parameters()
        if share_embeddings:  # one matrix for source, target and output (paper §3.4)
            self.tgt_embed.embedding.weight = self.src_embed.embedding.weight
            self.generator.weight = self.src_embed.embedding.weight

    def reset_parameters(self):
        """Xavier-uniform weight matrices and embeddings, zero biases, LayerNorm ones/zeros."""
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.xavier_uniform_(module.weight)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)
            if isinstance(module, nn.LayerNorm):
                nn.init.ones_(module.weight)
                nn.init.zeros_(module.bias)

    def encode(self, src, src_mask):
        """(batch, src_len) ids -> memory (batch, src_len, d_model)."""
        x = self.src_embed(src)
        for layer in self.encoder_layers:
            x = layer(x, src_mask)
        return x

    def decode(self, tgt_in, memory, src_mask, cache=None):
        """(batch, tgt_len) ids -> hidden states (batch, tgt_len, d_model); with a cache, only
        the new positions are given."""
        offset = 0 if cache is None else cache.offset
        length = tgt_in.shape[1]
        tgt_mask = causal_mask(length, offset, tgt_in.device) if length > 1 else None
        x = self.tgt_embed(tgt_in, offset)
        for i, layer in enumerate(self.decoder_layers):
            x = layer(x, memory, src_mask, tgt_mask, None if cache is None else cache.layers[i])
        if cache is not None:
            cache.offset += length
        return x

    def forward(self, src, tgt_in):
        """Logits (batch, tgt_len, tgt_vocab) of every next target token."""
        src_mask = padding_mask(src, self.pad_id)
        memory = self.encode(src, src_mask)
        return self.generator(self.decode(tgt_in, memory, src_mask))

    def new_decoder_cache(self, memory):
        cache = DecoderCache(len(self.decoder_layers))
        for layer, entry in zip(self.decoder_layers, cache.layers):
            entry["cross"]["k"], entry["cross"]["v"] = layer.cross_attn.keys_values(memory)
        return cache


@torch.no_grad()
def greedy_decode(model, src, max_len, bos_id, eos_id, use_cache=True, stop_at_eos=True):
    """The most probable next token at every step, as `transformer.greedy_decode`: ids
    (batch, steps) after BOS; a sentence that produced EOS continues with padding; with
    `stop_at_eos=False` exactly `max_len` steps. Call `model.eval()` first."""
    src_mask = padding_mask(src, model.pad_id)
    memory = model.encode(src, src_mask)
    tokens = torch.full((src.shape[0], 1), bos_id, dtype=torch.int64, device=src.device)
    cache = model.new_decoder_cache(memory) if use_cache else None
    finished = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
    for _ in range(max_len):
        new = tokens if cache is None else tokens[:, -1:]
        logits = model.generator(model.decode(new, memory, src_mask, cache)[:, -1])
        next_ids = torch.where(finished, model.pad_id, logits.argmax(dim=-1))
        tokens = torch.cat([tokens, next_ids[:, None]], dim=1)
        finished |= next_ids == eos_id
        if stop_at_eos and bool(finished.all()):
            break
    return tokens[:, 1:]


# ----- our names -> these names -------------------------------------------------------------
_RENAMES = [
    (r"^encoder\.embedding\.", "src_embed.embedding."),
    (r"^decoder\.embedding\.", "tgt_embed.embedding."),
    (r"^encoder\.layers\.", "encoder_layers."),
    (r"^decoder\.layers\.", "decoder_layers."),
    (r"\.(self_attn|cross_attn|ffn)\.sublayer\.", r".\1."),  # the block's inner module
    (r"\.(self_attn|cross_attn|ffn)\.norm\.", r".\1_norm."),  # the block's LayerNorm
]


def torch_name(minigrad_name):
    """`encoder.layers.0.self_attn.sublayer.q_proj.weight` (a `transformer.Transformer`
    parameter) -> `encoder_layers.0.self_attn.q_proj.weight` (this model's)."""
    name = minigrad_name
    for pattern, replacement in _RENAMES:
        name = re.sub(pattern, replacement, name)
    return name


def load_minigrad_weights(model, state):
    """Copy the weights of a `transformer.Transformer` into `model`, given its `state_dict()`
    (name -> Tensor or NumPy array). Every parameter of `model` must be covered and every
    entry used: a shared matrix appears once on both sides, under its first name."""
    arrays = {torch_name(name): value.numpy() if hasattr(value, "numpy") else value
              for name, value in state.items()}
    with torch.no_grad():
        for name, parameter in model.named_parameters():  # a shared one once, as ours
            if name not in arrays:
                raise KeyError(f"load_minigrad_weights: no weights for {name}")
            parameter.copy_(torch.as_tensor(arrays.pop(name)))
    if arrays:
        raise KeyError(f"load_minigrad_weights: unused weights {sorted(arrays)}")


def parameter_count(model):
    """Parameters counted once each (a shared matrix once), as `Module.num_parameters`."""
    return sum(p.numel() for p in model.parameters())
