"""The blocks of the stacks: ResidualBlock (norm placement + residual mode around one
sublayer), the position-wise feed-forward network, EncoderLayer and DecoderLayer."""

from __future__ import annotations

from collections.abc import Callable

import minigrad as mg
from minigrad import Tensor, nn

from .attention import MultiHeadAttention
from .recording import Recorded


class ResidualBlock(Recorded, nn.Module):
    """One sublayer F with its residual connection, dropout and LayerNorm (paper §5.4).

    residual="standard": post-LN LN(x + F(x)) (the paper) or pre-LN x + F(LN(x));
    residual="none": LN(F(x)) or F(LN(x)), no skip but still normalized;
    residual="plain": F(x), neither skip nor LayerNorm (a plain network; norm_first has no
    effect on the block); residual="rezero": x + α·F(x), α learned from 0, no LayerNorm;
    residual="skip": x + F(x), no LayerNorm (T-Fixup's block). `skip_scale` (1 unless a
    residual scheme of transformer/residual.py sets it) multiplies the skip: ω·x + F(x).
    The one place the study tools observe (x, F(x), s, output): set
    `observer(block, x, branch, s, out)` to see them. It names (`seen`) its `input` x, what
    its sublayer reads (`inner`: LN(x) pre-LN, else x), the `branch` F, the `sum` s and the
    `output`."""

    def __init__(self, sublayer, d_model, dropout, norm_first=False, residual="standard") -> None:
        super().__init__()
        self.sublayer = sublayer
        self.norm_first, self.residual = norm_first, residual
        self.dropout = nn.Dropout(dropout)
        if residual == "rezero":
            self.alpha = nn.Parameter(mg.zeros(()))
        if self.has_norm:
            self.norm = nn.LayerNorm(d_model)
        self.skip_scale = 1.0
        self.observer: Callable[[ResidualBlock, Tensor, Tensor, Tensor, Tensor], None] | None = None

    @property
    def has_skip(self) -> bool:
        """Whether the block adds its input to the branch (s = x + branch)."""
        return self.residual in ("standard", "rezero", "skip")

    @property
    def has_norm(self) -> bool:
        """Whether the block has a LayerNorm (before the sublayer pre-LN, after it post-LN)."""
        return self.residual in ("standard", "none")

    def forward(self, x, *args, **kwargs) -> Tensor:
        x = self.seen("input", x)
        inner = self.seen("inner", self.norm(x) if self.has_norm and self.norm_first else x)
        branch = self.dropout(self.sublayer(inner, *args, **kwargs))
        if self.residual == "rezero":
            branch = self.alpha * branch
        branch = self.seen("branch", branch)
        skip = x if self.skip_scale == 1.0 else x * self.skip_scale
        s = self.seen("sum", skip + branch if self.has_skip else branch)
        out = self.seen("output", self.norm(s) if self.has_norm and not self.norm_first else s)
        if self.observer is not None:
            self.observer(self, x, branch, s, out)
        return out

    def extra_repr(self) -> str:
        scale = f", skip_scale={self.skip_scale:.4g}" if self.skip_scale != 1.0 else ""
        return f"norm_first={self.norm_first}, residual={self.residual!r}{scale}"


class FeedForward(Recorded, nn.Module):
    """FFN(x) = max(0, x W1 + b1) W2 + b2, applied to each position alike (paper §3.3); it
    names (`seen`) the `hidden` layer max(0, x W1 + b1) and its `output`."""

    def __init__(self, d_model, d_ff, activation="relu") -> None:
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.activation = nn.ReLU() if activation == "relu" else nn.GELU()
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x) -> Tensor:
        hidden = self.seen("hidden", self.activation(self.linear1(x)))
        return self.seen("output", self.linear2(hidden))


def _block(config, sublayer):
    return ResidualBlock(sublayer, config.d_model, config.dropout, config.norm_first,
                         config.residual)


class EncoderLayer(nn.Module):
    """Self-attention over the source, then the feed-forward network."""

    def __init__(self, config) -> None:
        super().__init__()
        attention = MultiHeadAttention(config.d_model, config.n_heads, config.attention_dropout)
        self.self_attn = _block(config, attention)
        self.ffn = _block(config, FeedForward(config.d_model, config.d_ff, config.activation))

    def forward(self, x, src_mask=None) -> Tensor:
        x = self.self_attn(x, mask=src_mask)
        return self.ffn(x)


class DecoderLayer(nn.Module):
    """Masked self-attention over the target so far, attention over the encoder output
    (keys and values from the memory), then the feed-forward network."""

    def __init__(self, config) -> None:
        super().__init__()
        self.self_attn = _block(config, MultiHeadAttention(
            config.d_model, config.n_heads, config.attention_dropout))
        self.cross_attn = _block(config, MultiHeadAttention(
            config.d_model, config.n_heads, config.attention_dropout))
        self.ffn = _block(config, FeedForward(config.d_model, config.d_ff, config.activation))

    def forward(self, x, memory, src_mask=None, tgt_mask=None, cache=None) -> Tensor:
        x = self.self_attn(x, mask=tgt_mask, cache=None if cache is None else cache["self"])
        x = self.cross_attn(x, memory, mask=src_mask,
                            cache=None if cache is None else cache["cross"])
        return self.ffn(x)
