"""The encoder-decoder Transformer (paper §3): Encoder, Decoder, Transformer."""

from __future__ import annotations

import math

import minigrad as mg
from minigrad import Tensor, nn

from .config import TransformerConfig
from .layers import DecoderLayer, EncoderLayer
from .masks import causal_mask, padding_mask
from .positional import PositionalEncoding
from .recording import Recorded


class _Stack(Recorded, nn.Module):
    """Embedding × sqrt(d_model) + positions, dropout, N layers, and (pre-LN) a final norm.
    It names (`seen`) the `embedding` rows, them `scaled` by sqrt(d_model), the sum
    `with_positions` and the stack's `output`."""

    def __init__(self, config, vocab_size, layer_type, n_layers, stack, table=None) -> None:
        super().__init__()
        self.scale = math.sqrt(config.d_model)
        self.embedding = nn.Embedding(vocab_size, config.d_model, weight=table if table is not None
                                      else embedding_table(vocab_size, config.d_model))
        self.positional = PositionalEncoding(config.positional, config.max_len, config.d_model)
        self.dropout = nn.Dropout(config.dropout)
        self.layers = nn.ModuleList(layer_type(config) for _ in range(n_layers))
        self.final_norm = nn.LayerNorm(config.d_model) if config.norm_first else None
        for number, layer in enumerate(self.layers, start=1):
            for sublayer in ("self_attn", "cross_attn"):
                if hasattr(layer, sublayer):
                    getattr(layer, sublayer).sublayer.record_key = (stack, number, sublayer)

    def embed(self, ids, offset=0) -> Tensor:
        """(batch, len) ids -> (batch, len, d_model) vectors with their positions added."""
        rows = self.seen("embedding", self.embedding(ids))
        scaled = self.seen("scaled", rows * self.scale)
        return self.dropout(self.seen("with_positions", self.positional(scaled, offset)))

    def finish(self, x) -> Tensor:
        return self.seen("output", self.final_norm(x) if self.final_norm is not None else x)


def embedding_table(vocab_size, d_model) -> Tensor:
    """A new (vocab_size, d_model) embedding Parameter, Xavier-uniform (the project's choice for
    every matrix; the paper does not say)."""
    return nn.init.xavier_uniform_(nn.Parameter(mg.zeros(vocab_size, d_model)))


class Encoder(_Stack):
    def __init__(self, config, table=None) -> None:
        super().__init__(config, config.src_vocab_size, EncoderLayer, config.n_encoder_layers,
                         "encoder", table)

    def forward(self, src, src_mask) -> Tensor:
        x = self.embed(src)  # (batch, src_len, d_model)
        for layer in self.layers:
            x = layer(x, src_mask)
        return self.finish(x)


class Decoder(_Stack):
    def __init__(self, config, table=None) -> None:
        super().__init__(config, config.tgt_vocab_size, DecoderLayer, config.n_decoder_layers,
                         "decoder", table)

    def forward(self, tgt_in, memory, src_mask, tgt_mask, cache=None) -> Tensor:
        offset = 0 if cache is None else cache.offset
        x = self.embed(tgt_in, offset)  # (batch, tgt_len, d_model)
        for i, layer in enumerate(self.layers):
            x = layer(x, memory, src_mask, tgt_mask, None if cache is None else cache.layers[i])
        if cache is not None:
            cache.offset += tgt_in.shape[1]
        return self.finish(x)


class DecoderCache:
    """What incremental decoding keeps between steps: per layer, the self-attention keys and
    values so far and the cross-attention keys and values (computed once); the position
    offset of the next token."""

    def __init__(self, n_layers) -> None:
        self.layers: list[dict[str, dict]] = [{"self": {}, "cross": {}} for _ in range(n_layers)]
        self.offset = 0

    def select(self, rows) -> None:
        """Keep batch rows `rows` (an int array/tensor), e.g. the surviving beams."""
        for layer in self.layers:
            for part in layer.values():
                for name in part:
                    part[name] = part[name][rows]


class Transformer(Recorded, nn.Module):
    """encode(src) -> memory; decode(tgt_in, memory, src_mask) -> hidden states;
    generator(hidden) -> logits over the target vocabulary; forward(src, tgt_in) -> logits
    (named `logits` for a Recorder)."""

    def __init__(self, config) -> None:
        super().__init__()
        if not isinstance(config, TransformerConfig):
            config = TransformerConfig(**config)
        self.config = config
        # With shared embeddings one matrix is the source, target and output table (§3.4).
        shared = embedding_table(config.src_vocab_size, config.d_model) \
            if config.share_embeddings else None
        self.encoder = Encoder(config, shared)
        self.decoder = Decoder(config, shared)
        self.generator = nn.Linear(config.d_model, config.tgt_vocab_size,
                                   bias=not config.share_embeddings, weight=shared)

    def encode(self, src, src_mask=None) -> Tensor:
        """(batch, src_len) ids -> memory (batch, src_len, d_model)."""
        if src_mask is None:
            src_mask = padding_mask(src, self.config.pad_id)
        return self.encoder(src, src_mask)

    def decode(self, tgt_in, memory, src_mask, tgt_mask=None, cache=None) -> Tensor:
        """(batch, tgt_len) ids -> hidden states (batch, tgt_len, d_model); with a cache, only
        the new positions are given and the earlier ones are read from the cache."""
        if tgt_mask is None:
            length = tgt_in.shape[1]
            offset = 0 if cache is None else cache.offset
            tgt_mask = causal_mask(length, tgt_in.device, offset) if length > 1 else None
        return self.decoder(tgt_in, memory, src_mask, tgt_mask, cache)

    def forward(self, src, tgt_in, src_mask=None, tgt_mask=None) -> Tensor:
        if src_mask is None:
            src_mask = padding_mask(src, self.config.pad_id)
        memory = self.encode(src, src_mask)
        return self.seen("logits", self.generator(self.decode(tgt_in, memory, src_mask, tgt_mask)))

    def new_decoder_cache(self, memory) -> DecoderCache:
        """A cache for incremental decoding, with every layer's cross-attention keys and values
        computed from `memory` now (the source mask is applied at each step, by `decode`)."""
        cache = DecoderCache(len(self.decoder.layers))
        for layer, entry in zip(self.decoder.layers, cache.layers):
            entry["cross"]["k"], entry["cross"]["v"] = \
                layer.cross_attn.sublayer.keys_values(memory)
        return cache

    @property
    def device(self) -> str:
        return next(self.parameters()).device
