"""Initializers: each writes into the tensor's existing array, drawing from minigrad's seeded
generator (`mg.manual_seed`)."""

from __future__ import annotations

import math

from ..tensor import Tensor


def _fans(tensor):
    """(fan_in, fan_out) as PyTorch computes them: a weight (out, in, *kernel)."""
    if tensor.ndim < 2:
        raise ValueError(f"fan in/out needs a tensor of at least 2 dimensions, got shape "
                         f"{tensor.shape}")
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _write(tensor, array):
    tensor.data[...] = array
    return tensor


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    draw = tensor.backend.generator.uniform(tensor.shape, tensor.dtype)
    return _write(tensor, a + (b - a) * draw)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    draw = tensor.backend.generator.normal(tensor.shape, tensor.dtype)
    return _write(tensor, mean + std * draw)


def zeros_(tensor: Tensor) -> Tensor:
    return _write(tensor, 0)


def ones_(tensor: Tensor) -> Tensor:
    return _write(tensor, 1)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """U(-a, a) with a = gain·sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _fans(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """N(0, std²) with std = gain·sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _fans(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))
