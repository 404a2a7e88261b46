"""F.interpolate on images (N, C, H, W): 'nearest' (a gather of the source pixel each output
pixel falls in) and 'bilinear' (four gathers weighted by the distances, align_corners=False),
both with PyTorch's source coordinates, so the gradients are the gathers' own."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import ShapeError
from ..tensor import Tensor
from .elementwise import Add, Multiply
from .indexing import GetItem
from .registry import InputSpec, op


def _scales(x_shape, size, scale_factor) -> tuple[tuple[int, int], tuple[float, float]]:
    """The output size and, per axis, the source step (PyTorch's: 1/scale_factor when given,
    else in/out)."""
    if (size is None) == (scale_factor is None):
        raise ValueError("interpolate: give exactly one of size and scale_factor")
    spatial = x_shape[2:]
    if size is not None:
        out = (size, size) if isinstance(size, int) else tuple(size)
        return out, tuple(n / m for n, m in zip(spatial, out))
    factors = (scale_factor,) * 2 if isinstance(scale_factor, (int, float)) \
        else tuple(scale_factor)
    out = tuple(int(math.floor(n * f)) for n, f in zip(spatial, factors))
    return out, tuple(1 / f for f in factors)


def _nearest(length, out, step) -> np.ndarray:
    return np.minimum(np.floor(np.arange(out) * step).astype(np.int64), length - 1)


def _linear(length, out, step) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(lower source index, upper source index, the upper's weight) per output position."""
    source = np.maximum((np.arange(out) + 0.5) * step - 0.5, 0.0)
    lower = np.minimum(np.floor(source).astype(np.int64), length - 1)
    upper = np.minimum(lower + 1, length - 1)
    return lower, upper, source - lower


def interpolate_reference(x, size=None, scale_factor=None, mode="nearest") -> np.ndarray:
    (oh, ow), (sh, sw) = _scales(x.shape, size, scale_factor)
    h, w = x.shape[2:]
    if mode == "nearest":
        return x[:, :, _nearest(h, oh, sh)][:, :, :, _nearest(w, ow, sw)]
    top, bottom, dy = _linear(h, oh, sh)
    left, right, dx = _linear(w, ow, sw)
    rows = x[:, :, top] * (1 - dy)[:, None] + x[:, :, bottom] * dy[:, None]
    return rows[..., left] * (1 - dx) + rows[..., right] * dx


@op(functions=(GetItem, Multiply, Add), reference=interpolate_reference, namespace="F",
    spec=InputSpec("interpolate"),
    summary="images resized: 'nearest' or 'bilinear' (align_corners=False)",
    pytorch="`F.interpolate` (modes 'nearest' and 'bilinear', align_corners=False only)")
def interpolate(x, size=None, scale_factor=None, mode="nearest") -> Tensor:
    """x (N, C, H, W) resized to `size` (an int or a pair) or by `scale_factor`."""
    if x.ndim != 4:
        raise ShapeError(f"interpolate: needs images (N, C, H, W), got shape {x.shape}")
    if mode not in ("nearest", "bilinear"):
        raise ValueError(f"interpolate: mode must be 'nearest' or 'bilinear', got {mode!r}")
    (oh, ow), (sh, sw) = _scales(x.shape, size, scale_factor)
    if min(oh, ow) < 1:
        raise ShapeError(f"interpolate: output size {(oh, ow)} from images {x.shape[2:]}")
    h, w = x.shape[2:]
    put = x.backend.from_host

    def rows(index: Any) -> Tensor:
        return GetItem.apply(x, index=(slice(None), slice(None), put(index)))

    def columns(t: Tensor, index: Any) -> Tensor:
        return GetItem.apply(t, index=(Ellipsis, put(index)))

    if mode == "nearest":
        return columns(rows(_nearest(h, oh, sh)), _nearest(w, ow, sw))
    top, bottom, dy = _linear(h, oh, sh)
    left, right, dx = _linear(w, ow, sw)
    weights = x.dtype if x.dtype.kind == "f" else np.float64  # integers blend as NumPy's
    dy_t, dx_t = (Tensor._make(put(d.astype(weights)), x.backend) for d in (dy, dx))
    blended = rows(top) * (1 - dy_t).reshape(-1, 1) + rows(bottom) * dy_t.reshape(-1, 1)
    return columns(blended, left) * (1 - dx_t) + columns(blended, right) * dx_t
