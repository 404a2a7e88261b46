"""The residual stream layer by layer, and how much of it still tells the tokens apart.

Dong et al. (2021) show that self-attention without skip connections loses rank with depth:
every token's vector tends to the same vector. `token_share` measures what is left: for one
sequence X (n tokens, d_model), ‖X − 1·x̄ᵀ‖²_F / ‖X‖²_F with x̄ the mean over its tokens, the
part of the stream's power that differs between tokens (0: all tokens alike; Dong et al.
measure the same residual in the ℓ1,∞ norm)."""

from collections.abc import Sequence
from typing import Any

import numpy as np

import minigrad as mg
from minigrad import Tensor

from ..data.batching import Batch
from ..model import Transformer
from .recorder import residual_blocks


def layer_streams(model: Transformer, batch: Batch) -> dict[str, list[np.ndarray]]:
    """{"encoder": [x_0, x_1, ..., x_L], "decoder": [...]}: each stack's stream (arrays, batch
    × len × d_model) at its embedding (x_0, positions added) and at every layer's output, for
    one forward pass on `batch` in eval mode, without gradients."""
    streams: dict[str, list] = {"encoder": [], "decoder": []}
    previous = {}
    try:
        for stack, layer, sublayer, block in residual_blocks(model):
            previous[id(block)] = block.observer
            if sublayer == "self_attn" and layer == 1:
                block.observer = lambda block, x, branch, s, out, stack=stack: \
                    streams[stack].append(x.numpy())
            if sublayer == "ffn":
                block.observer = lambda block, x, branch, s, out, stack=stack: \
                    streams[stack].append(out.numpy())
        was_training = model.training
        model.eval()
        with mg.no_grad():
            model(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask)
        model.train(was_training)
    finally:
        for *_, block in residual_blocks(model):
            block.observer = previous[id(block)]
    return streams


def token_share(stream: Any, lengths: Sequence[int] | np.ndarray) -> float:
    """The mean over sequences of ‖X − 1·x̄ᵀ‖²_F / ‖X‖²_F, X the first `lengths[i]` tokens of
    sequence i of `stream` (batch × len × d_model); sequences of fewer than two tokens or of
    zero power are left out."""
    shares = []
    for sequence, length in zip(np.asarray(stream, dtype=np.float64), lengths):
        x = sequence[:int(length)]
        power = float(np.sum(x * x))
        if len(x) >= 2 and power > 0:
            shares.append(float(np.sum(np.square(x - x.mean(axis=0)))) / power)
    if not shares:
        raise ValueError("token_share: no sequence has two or more tokens of nonzero power")
    return float(np.mean(shares))


def lengths_of(ids: Tensor, pad_id: int) -> np.ndarray:
    """The number of tokens before the padding of each row of a (batch, len) id tensor."""
    return (ids.numpy() != pad_id).sum(axis=1)
