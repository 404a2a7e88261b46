"""minigrad.nn.functional: the fused neural-network ops, with PyTorch's names and arguments
(differences are documented in docs/conventions.md: fully masked rows and all-ignored targets give
zeros, never NaN)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..autograd import is_anomaly_enabled
from ..errors import DeviceError, DTypeError, ShapeError
from ..ops import nn as ops
from ..ops import references
from ..ops.convolution import avg_pool2d as avg_pool2d
from ..ops.convolution import conv2d as conv2d
from ..ops.convolution import conv_transpose2d as conv_transpose2d
from ..ops.convolution import max_pool2d as max_pool2d
from ..ops.elementwise import mask_array
from ..ops.functions import (  # the activations (minigrad/ops/activations.py); mg.relu
    celu as celu,
)
from ..ops.functions import (
    elu as elu,
)
from ..ops.functions import (
    hardsigmoid as hardsigmoid,
)
from ..ops.functions import (
    hardswish as hardswish,
)
from ..ops.functions import (
    hardtanh as hardtanh,
)
from ..ops.functions import (
    leaky_relu as leaky_relu,
)
from ..ops.functions import (  # softmax and its kin: minigrad/ops/nn.py
    log_softmax as log_softmax,
)
from ..ops.functions import (
    logsigmoid as logsigmoid,
)
from ..ops.functions import (
    mish as mish,
)
from ..ops.functions import (
    normalize as normalize,
)
from ..ops.functions import (
    relu as relu,
)
from ..ops.functions import (
    relu6 as relu6,
)
from ..ops.functions import (
    selu as selu,
)
from ..ops.functions import (
    silu as silu,
)
from ..ops.functions import (
    softmax as softmax,
)
from ..ops.functions import (
    softmin as softmin,
)
from ..ops.functions import (
    softplus as softplus,
)
from ..ops.functions import (
    softsign as softsign,
)
from ..ops.gather import one_hot as one_hot
from ..ops.losses import binary_cross_entropy as binary_cross_entropy
from ..ops.losses import binary_cross_entropy_with_logits as binary_cross_entropy_with_logits
from ..ops.losses import l1_loss as l1_loss
from ..ops.losses import mse_loss as mse_loss
from ..ops.losses import nll_loss as nll_loss
from ..ops.losses import soft_cross_entropy
from ..ops.padding import pad as pad
from ..ops.registry import InputSpec, op
from ..ops.resampling import interpolate as interpolate
from ..tensor import Tensor


@op(functions=(ops.LayerNorm, ops.LayerNormInputGradient), namespace="F",
    reference=references.layer_norm_reference, spec=InputSpec("layer_norm", distinct=True),
    summary="normalized over trailing axes, then affine")
def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5) -> Tensor:
    """Normalize over the trailing `normalized_shape` axes, then scale and shift."""
    normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) \
        else tuple(normalized_shape)
    if x.shape[x.ndim - len(normalized_shape):] != normalized_shape:
        raise ShapeError(f"layer_norm: normalized_shape {normalized_shape} does not match the "
                         f"last axes of an input of shape {x.shape}")
    for name, value in (("weight", weight), ("bias", bias)):
        if value is not None and value.shape != normalized_shape:
            raise ShapeError(f"layer_norm: {name} of shape {value.shape}, expected "
                             f"{normalized_shape}")
    affine = [t for t in (weight, bias) if t is not None]
    return ops.LayerNorm.apply(x, *affine, n_axes=len(normalized_shape), eps=eps,
                               has_weight=weight is not None, has_bias=bias is not None)


@op(functions=(ops.Gelu,), reference=ops.gelu_reference, namespace="F", accuracy=3e-7,
    spec=InputSpec("unary", low=-3.0, high=3.0, options={"approximate": ("none", "tanh")}),
    summary="x·Φ(x), exact or with the tanh approximation",
    pytorch="`F.gelu` (erf approximated to 1.5e-7)")
def gelu(x, approximate="none") -> Tensor:
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    return ops.Gelu.apply(x, approximate=approximate)


@op(functions=(ops.Dropout,), reference=None, namespace="F", random=True,
    spec=InputSpec("unary", kinks=(0.0,), options={"p": (0.25, 0.5)}),
    summary="inverted dropout from the device's seeded generator",
    pytorch="`F.dropout` (minigrad's own generator: other draws than PyTorch's)")
def dropout(x, p=0.5, training=True) -> Tensor:
    """Inverted dropout drawn from the device's seeded generator; identity when not training."""
    if not 0 <= p <= 1:
        raise ValueError(f"dropout: p must be in [0, 1], got {p}")
    if not training or p == 0:
        return x
    return ops.Dropout.apply(x, p=p)


def _ids(name, ids, like):
    array = ids.data if isinstance(ids, Tensor) else like.backend.xp.asarray(ids)
    if array.dtype.kind not in "iu":
        raise DTypeError(f"{name}: ids must be integers, got {array.dtype}; token ids are "
                         "int64 (mg.tensor(ids, dtype='int64'))")
    if isinstance(ids, Tensor) and ids.backend is not like.backend:
        raise DeviceError(f"{name}: ids on {ids.device}, weight on {like.device}")
    return array


def _checked_here(like):
    """Whether ids are range-checked: always on the CPU (free), on a GPU only under
    `detect_anomaly` (the check is a read that makes the host wait; a GPU wraps an index out
    of range, so check ids where batches are built)."""
    return like.backend.activate is None or is_anomaly_enabled()


@op(functions=(ops.Embedding, ops.IndexAdd), reference=lambda ids, weight: weight[ids],
    namespace="F", spec=InputSpec("embedding"), summary="rows of weight picked by ids",
    pytorch="`F.embedding` (no max_norm, no sparse gradient)")
def embedding(ids, weight, padding_idx=None) -> Tensor:
    """weight[ids]: (..., ) int ids -> (..., dim); the padding row receives no gradient."""
    array = _ids("embedding", ids, weight)
    rows = weight.shape[0]
    if array.size and _checked_here(weight):
        low, high = int(array.min()), int(array.max())
        if low < 0 or high >= rows:
            raise IndexError(f"embedding: ids must be in [0, {rows}), got values in "
                             f"[{low}, {high}]; is the vocabulary larger than the embedding "
                             "table?")
    return ops.Embedding.apply(weight, ids=array, padding_idx=padding_idx)


@op(functions=(ops.Linear,), reference=references.linear_reference, namespace="F",
    spec=InputSpec("linear"), summary="x @ weight.T + bias, weight (out, in)")
def linear(x, weight, bias=None) -> Tensor:
    """x @ weight.T + bias, weight (out_features, in_features) as PyTorch."""
    return ops.Linear.apply(x, weight, *(() if bias is None else (bias,)))


@op(functions=(ops.CrossEntropy, ops.CrossEntropyBackward, ops.Softmax), namespace="F",
    reference=references.cross_entropy_reference,
    spec=InputSpec("cross_entropy", low=-3.0, high=3.0,
                   options={"label_smoothing": (0.0, 0.1), "reduction": ("mean", "sum", "none")}),
    summary="loss from logits (class axis last), label smoothing, ignore_index",
    pytorch="`F.cross_entropy` (the class axis last, PyTorch's is 1; ignore_index None by "
            "default; no class weights)")
def cross_entropy(logits, target, ignore_index=None, label_smoothing=0.0,
                  reduction="mean") -> Tensor:
    """Cross-entropy of logits (..., C) (class axis last) against int targets (...), or
    against class probabilities (..., C) (a float target of the logits' shape)."""
    if isinstance(target, Tensor) and target.dtype.kind == "f":
        return soft_cross_entropy(logits, target, label_smoothing, reduction)
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"cross_entropy: reduction must be 'mean', 'sum' or 'none', got "
                         f"{reduction!r}")
    if not 0 <= label_smoothing <= 1:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got "
                         f"{label_smoothing}")
    target_array = _ids("cross_entropy", target, logits)
    if logits.shape[:-1] != target_array.shape:
        raise ShapeError(f"cross_entropy: logits of shape {logits.shape} need targets of shape "
                         f"{logits.shape[:-1]} (the class axis is last), got "
                         f"{target_array.shape}")
    if _checked_here(logits):
        _check_targets(target_array, logits.shape[-1], ignore_index)
    return ops.CrossEntropy.apply(logits, target=target_array, ignore_index=ignore_index,
                                  label_smoothing=label_smoothing, reduction=reduction)


def _check_targets(targets, classes, ignore_index):
    considered = targets if ignore_index is None else targets[targets != ignore_index]
    if considered.size and (int(considered.min()) < 0 or int(considered.max()) >= classes):
        raise IndexError(f"cross_entropy: targets must be in [0, {classes}) (or ignore_index), "
                         f"got values in [{int(considered.min())}, {int(considered.max())}]")


@op(functions=(ops.ScaledDotProductAttention, ops.Softmax), namespace="F",
    reference=references.attention_reference, spec=InputSpec("attention", mask=True),
    summary="softmax(q kᵀ · scale + attn_mask) v as PyTorch's (attn_mask True = attend); "
            "`mask=` True = excluded; one fused op",
    pytorch="`F.scaled_dot_product_attention` (a row attending to nothing gives zeros, not "
            "NaN; a float attn_mask is a constant; dropout only while `training`)")
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False, *, mask=None,
                                 training=True, return_weights=False) -> Any:
    """softmax(query keyᵀ · scale + attn_mask) value, PyTorch's function and arguments:
    `attn_mask` boolean True = attended (or a float mask added to the scores, a constant),
    `is_causal` the top-left causal mask, `scale` 1/sqrt(d) unless given, `enable_gqa` key
    and value heads (axis -3) shared by groups of query heads. `mask` (keyword only) is
    minigrad's own convention, True = excluded, combined with the others. A row that attends
    to nothing gives zeros, not PyTorch's NaN. Dropout when `training` (PyTorch's: whenever
    dropout_p > 0).

    query (..., Lq, d), key (..., Lk, d), value (..., Lk, dv) -> (..., Lq, dv); with
    `return_weights=True` also the attention weights (..., Lq, Lk), detached."""
    name = "scaled_dot_product_attention"
    if enable_gqa:
        key, value = _shared_heads(name, query, key), _shared_heads(name, query, value)
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise ShapeError(f"{name}: q {query.shape}, k {key.shape}, v {value.shape} do not "
                         "fit: q and k need the same last axis, k and v the same second-to-last "
                         "axis (the key length)")
    scores_shape = np.broadcast_shapes(query.shape[:-2], key.shape[:-2]) + (query.shape[-2],
                                                                            key.shape[-2])
    if is_causal and attn_mask is not None:
        raise ValueError(f"{name}: pass attn_mask or is_causal=True, not both (as PyTorch); "
                         "put the causal mask into attn_mask")
    excluded, bias = None, None
    if mask is not None:
        excluded = _attention_mask(name, "mask", mask_array(name, mask, query), scores_shape)
    if attn_mask is not None:
        array = attn_mask.data if isinstance(attn_mask, Tensor) else \
            query.backend.xp.asarray(attn_mask)
        _attention_mask(name, "attn_mask", array, scores_shape)
        if array.dtype == np.bool_:
            excluded = ~array if excluded is None else excluded | ~array
        elif array.dtype.kind == "f":
            bias = array.astype(query.dtype, copy=False)
        else:
            raise DTypeError(f"{name}: attn_mask must be boolean (True = attend) or floating "
                             f"(added to the scores), got {array.dtype}")
    if is_causal:
        lq, lk = scores_shape[-2:]
        above = query.backend.xp.asarray(np.triu(np.ones((lq, lk), bool), 1))
        excluded = above if excluded is None else excluded | above
    out = ops.ScaledDotProductAttention.apply(query, key, value, mask=excluded, bias=bias,
                                              scale=scale,
                                              dropout_p=dropout_p if training else 0.0)
    if return_weights:
        applied = 1 / math.sqrt(query.shape[-1]) if scale is None else scale
        weights = query.backend.kernels.attention_weights(query.data, key.data, excluded,
                                                          applied, bias)
        return out, Tensor._make(weights, query.backend)
    return out


def _attention_mask(name, argument, array, scores_shape):
    """`array`, checked to broadcast to the scores' shape."""
    try:
        np.broadcast_shapes(scores_shape, array.shape)
    except ValueError:
        raise ShapeError(f"{name}: {argument} of shape {array.shape} does not broadcast to the "
                         f"scores' shape {scores_shape} (batch, heads, q_len, k_len)") from None
    return array


def _shared_heads(name, query, x):
    """x (..., Hk, L, d) with each head repeated for its group of query heads (..., Hq, L, d)
    (PyTorch's enable_gqa: Hq a multiple of Hk)."""
    if query.ndim < 3 or x.ndim < 3:
        raise ShapeError(f"{name}: enable_gqa needs heads on axis -3, got q {query.shape} and "
                         f"{x.shape}")
    query_heads, heads = query.shape[-3], x.shape[-3]
    if query_heads == heads:
        return x
    if query_heads % heads:
        raise ShapeError(f"{name}: enable_gqa needs the query's heads ({query_heads}) to be a "
                         f"multiple of the key's and value's ({heads})")
    group = query_heads // heads
    grouped = x.expand_dims(-3).broadcast_to(x.shape[:-2] + (group,) + x.shape[-2:])
    return grouped.reshape(x.shape[:-3] + (query_heads,) + x.shape[-2:])
