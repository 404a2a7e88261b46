"""F.pad: a tensor padded on its trailing axes with a constant (an op of its own, whose
gradient is the middle of the incoming one) or with its own edge values (reflect, replicate,
circular: a gather along each padded axis, so the gradient sums the copies back)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd import BuiltinFunction
from ..errors import ShapeError
from ..tensor import Tensor
from .indexing import GetItem
from .registry import InputSpec, op

# PyTorch's modes and NumPy's names for them (np.pad of the positions gives the gather index)
MODES: dict[str, Any] = {"constant": "constant", "reflect": "reflect", "replicate": "edge",
                         "circular": "wrap"}


class Pad(BuiltinFunction):
    """x with `value` around it: widths ((before, after) per axis)."""

    name = "pad"

    def forward(self, x, widths=(), value=0.0) -> Any:
        self.inside = tuple(slice(before, before + n) for (before, _), n in zip(widths, x.shape))
        return self.xp.pad(x, widths, constant_values=value)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return (GetItem.apply(grad, index=self.inside),)


def pad_reference(x, pad, mode="constant", value=0.0) -> np.ndarray:
    widths = _widths(x.ndim, pad)
    if mode == "constant":
        return np.pad(x, widths, constant_values=value)
    return np.pad(x, widths, mode=MODES[mode])


def _widths(ndim, pad) -> list[tuple[int, int]]:
    """PyTorch's flat pad (last axis first: left, right, then the axis before, ...) as
    NumPy's (before, after) for every axis."""
    pairs = [(pad[i], pad[i + 1]) for i in range(0, len(pad), 2)]
    return [(0, 0)] * (ndim - len(pairs)) + pairs[::-1]


@op(functions=(Pad, GetItem), reference=pad_reference, spec=InputSpec("pad"), namespace="F",
    summary="padded on the trailing axes: constant, reflect, replicate or circular",
    pytorch="`F.pad` (no negative widths: crop with x[...] instead)")
def pad(x, pad, mode="constant", value=0.0) -> Tensor:
    """`pad` = (left, right) of the last axis, then of the one before, ... as PyTorch."""
    pad = tuple(pad)
    if len(pad) % 2 or len(pad) // 2 > x.ndim:
        raise ShapeError(f"pad: {len(pad)} widths for a tensor of shape {x.shape}; give a "
                         f"(before, after) pair for each of at most {x.ndim} trailing axes")
    if any(width < 0 for width in pad):
        raise ShapeError(f"pad: negative widths {pad}; crop with x[...] instead")
    if mode not in MODES:
        raise ValueError(f"pad: mode must be one of {', '.join(MODES)}, got {mode!r}")
    widths = _widths(x.ndim, pad)
    if mode == "constant":
        return Pad.apply(x, widths=tuple(widths), value=value)
    out = x
    for axis, (before, after) in enumerate(widths):
        if before or after:
            n = x.shape[axis]
            if mode == "reflect" and max(before, after) >= n:
                raise ShapeError(f"pad: reflect widths {before, after} for axis {axis} of "
                                 f"size {n}; they must be smaller than the axis")
            positions = np.pad(np.arange(n), (before, after), mode=MODES[mode])
            out = GetItem.apply(out, index=(slice(None),) * axis
                                + (x.backend.from_host(positions),))
    return out if out is not x else GetItem.apply(x, index=())
