"""Attention masks: boolean, True = masked out, broadcasting to (batch, heads, q_len, k_len)."""

from __future__ import annotations

import minigrad as mg
from minigrad import Tensor


def padding_mask(ids, pad_id) -> Tensor:
    """(batch, len) ids -> (batch, 1, 1, len): True at padding positions (keys to ignore)."""
    batch, length = ids.shape
    return (ids == pad_id).reshape(batch, 1, 1, length)


def causal_mask(length, device=None, offset=0) -> Tensor:
    """(1, 1, length, offset + length): True where a query would see a later position.

    `offset` counts positions already decoded (their keys are in a cache): query i sits at
    position offset + i and may attend to keys 0 .. offset + i."""
    queries = mg.arange(offset, offset + length, device=device).reshape(length, 1)
    keys = mg.arange(offset + length, device=device).reshape(1, offset + length)
    return (keys > queries).reshape(1, 1, length, offset + length)


def combine(*masks) -> Tensor | None:
    """Logical OR of masks (None entries ignored); None when there is nothing to mask."""
    present = [m for m in masks if m is not None]
    if not present:
        return None
    combined = present[0]
    for mask in present[1:]:
        combined = combined | mask
    return combined
