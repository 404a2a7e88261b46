"""Position information added to the embeddings (paper §3.5): fixed sinusoids or learned."""

from __future__ import annotations

import numpy as np

import minigrad as mg
from minigrad import Tensor, nn
from minigrad.errors import ShapeError


def sinusoidal_encoding(max_len, d_model, interleaved=True) -> np.ndarray:
    """The paper's table (max_len, d_model), float32: PE[pos, 2i] = sin(pos / 10000^(2i/d)),
    PE[pos, 2i+1] = cos(pos / 10000^(2i/d)).

    `interleaved=False` puts all the sines first, then all the cosines, with the same
    frequencies (the layout of the Illustrated Transformer's figure; tensor2tensor's
    `get_timing_signal_1d` spaces its frequencies slightly differently, 1/10000^(i/(d/2-1)))."""
    positions = mg.arange(max_len, dtype="float64").reshape(max_len, 1)
    frequencies = 1.0 / 10000 ** (mg.arange(0, d_model, 2, dtype="float64") / d_model)
    angles = positions * frequencies  # (max_len, d_model / 2)
    sines, cosines = mg.sin(angles), mg.cos(angles)
    if interleaved:  # sin, cos, sin, cos, ...
        table = mg.stack([sines, cosines], axis=-1).reshape(max_len, d_model)
    else:
        table = mg.concatenate([sines, cosines], axis=-1)
    return table.numpy().astype(np.float32)


class PositionalEncoding(nn.Module):
    """Adds the position vector of each position to a sequence of embeddings (batch, len, d)."""

    def __init__(self, kind, max_len, d_model) -> None:
        super().__init__()
        self.kind, self.max_len = kind, max_len
        if kind == "learned":
            self.table = nn.init.xavier_uniform_(nn.Parameter(mg.zeros(max_len, d_model)))
        else:
            table = sinusoidal_encoding(max_len, d_model, interleaved=kind == "sinusoidal")
            self.register_buffer("table", mg.tensor(table, device=mg.default_device()),
                                 persistent=False)

    def forward(self, x, offset=0) -> Tensor:
        length = x.shape[1]
        if offset + length > self.max_len:
            raise ShapeError(
                f"positional encoding: a sequence of length {offset + length} is longer than "
                f"max_len={self.max_len}; raise TransformerConfig.max_len or shorten the input")
        return x + self.table[offset:offset + length]

    def extra_repr(self) -> str:
        return f"kind={self.kind!r}, max_len={self.max_len}"
