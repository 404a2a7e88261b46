"""Fused neural-network ops, numerically stable, each written as its math: one forward that
calls the backend's kernels (`backend/kernels.py`: how the arrays are computed on a CPU, a
GPU, fused or not), `backward_arrays` (the kernels again: the engine's choice when the
backward pass is not recorded) and one closed-form `backward` in minigrad ops, differentiable
again, reading forward's values from `recompute`."""

import math
from typing import Any

import numpy as np

from ..autograd import BuiltinFunction
from ..backend.kernels import rows_of
from ..errors import ShapeError
from ..tensor import Tensor
from .elementwise import Abs, Divide, Maximum, Negative, Power, erf_array, mask_array
from .indexing import IndexAdd
from .reduce import Sum, normalize_axes
from .references import (
    cross_entropy_backward_reference,
    erf_reference,
    layer_norm_input_gradient_reference,
    log_softmax_reference,
    normalize_reference,
    softmax_reference,
)
from .registry import InputSpec, op


class Softmax(BuiltinFunction):
    """softmax(x, axis, mask): probabilities along `axis`; mask True = excluded (probability 0)."""

    name = "softmax"
    float_only = True
    needs_output = True

    def forward(self, x, axis=-1, mask=None) -> Any:
        if mask is not None and xp_broadcast_shape(self.xp, x, mask) != x.shape:
            raise ShapeError(f"softmax: a mask of shape {mask.shape} does not broadcast to the "
                             f"input's shape {x.shape}")
        self.axis = axis
        if x.ndim == 0:  # one entry along the axis, as PyTorch: 1 (0 where masked)
            normalize_axes(self.name, axis, 0)
            return self.backend.kernels.softmax(
                x.reshape(1), -1, None if mask is None else mask.reshape(1)).reshape(())
        return self.backend.kernels.softmax(x, axis, mask)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        y = self.output()
        return (y * (grad - (grad * y).sum(axis=self.axis, keepdims=True)),)


def xp_broadcast_shape(xp, x, mask) -> tuple[int, ...] | None:
    try:
        return xp.broadcast_shapes(x.shape, mask.shape)
    except ValueError:
        return None


class LogSoftmax(BuiltinFunction):
    name = "log_softmax"
    float_only = True
    needs_output = True

    def forward(self, x, axis=-1) -> Any:
        self.axis = axis
        if x.ndim == 0:  # one entry along the axis, as PyTorch: 0
            normalize_axes(self.name, axis, 0)
            return self.backend.kernels.log_softmax(x.reshape(1), -1).reshape(())
        return self.backend.kernels.log_softmax(x, axis)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        probabilities = self.output().exp()
        return (grad - probabilities * grad.sum(axis=self.axis, keepdims=True),)


@op(functions=(Softmax,), reference=softmax_reference, namespace="F",
    spec=InputSpec("softmax-like", mask=True),
    summary="probabilities along an axis; masked entries get 0, a fully masked row is zeros",
    pytorch="`F.softmax` (`mask=` True = excluded; a fully masked row is "
            "zeros, not NaN)")
def softmax(x, axis=-1, mask=None) -> Tensor:
    """Probabilities along `axis`; entries where `mask` is True get 0. A fully masked row is all
    zeros, with zero gradient."""
    return Softmax.apply(x, axis=axis, mask=None if mask is None else mask_array(
        "softmax", mask, x))


@op(functions=(Softmax, Negative),
    reference=lambda x, axis=-1: softmax_reference(-x, axis=axis), namespace="F",
    spec=InputSpec("softmax-like"), summary="softmax(-x): probabilities, small values first",
    pytorch="`F.softmin`")
def softmin(x, axis=-1) -> Tensor:
    return Softmax.apply(-x, axis=axis)


@op(functions=(Divide, Maximum, Power, Abs,
               Sum),
    reference=normalize_reference, namespace="F",
    spec=InputSpec("softmax-like", kinks=(0.0,), options={"p": (2.0, 1.0, 3.0)}),
    summary="x / max(‖x‖_p, eps) along an axis",
    pytorch="`F.normalize`")
def normalize(x, p=2.0, axis=1, eps=1e-12) -> Tensor:
    """x divided by its p-norm along `axis` (PyTorch's `dim`, default 1), the norm at least
    eps."""
    norm = (x.abs() ** p).sum(axis=axis, keepdims=True) ** (1 / p)
    return x / norm.maximum(eps)


@op(functions=(LogSoftmax,), reference=log_softmax_reference, namespace="F",
    spec=InputSpec("softmax-like"), summary="log of softmax, stable",
    pytorch="`F.log_softmax`")
def log_softmax(x, axis=-1) -> Tensor:
    return LogSoftmax.apply(x, axis=axis)


class LayerNorm(BuiltinFunction):
    """(x - mean) / sqrt(var + eps) over the last `n_axes` axes, then * weight + bias.

    Two-pass variance (mean first), eps inside the square root, as PyTorch."""

    name = "layer_norm"
    float_only = True

    def forward(self, x, *affine, n_axes=1, eps=1e-5, has_weight=True, has_bias=True) -> Any:
        self.axes = tuple(range(-n_axes, 0))
        self.eps, self.has_weight, self.has_bias = eps, has_weight, has_bias
        # (R, N) rows normalized, (R, 1) 1/std
        normalized, rstd = self.backend.kernels.layer_norm(rows_of(x, n_axes), eps)
        self.normalized = normalized.reshape(x.shape)
        self.rstd = rstd.reshape(x.shape[:-n_axes] + (1,) * n_axes)
        return self.backend.kernels.affine(self.normalized, affine[0] if has_weight else None,
                                           affine[-1] if has_bias else None)

    def backward_arrays(self, grad) -> tuple[Any, ...]:
        weight = self.inputs[1].data if self.has_weight else None
        grad_input, grad_weight, grad_bias = self.backend.kernels.layer_norm_backward(
            grad, weight, self.normalized, self.rstd, len(self.axes))
        return (grad_input,) + (grad_weight,) * self.has_weight + (grad_bias,) * self.has_bias

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        normalized, rstd = self.recompute()
        grad_normalized = grad * self.inputs[1] if self.has_weight else grad
        grads = [LayerNormInputGradient.apply(grad_normalized, normalized, rstd,
                                              n_axes=len(self.axes))]
        if self.has_weight:
            grads.append(grad * normalized)
        if self.has_bias:
            grads.append(grad)
        return tuple(grads)

    def recompute(self) -> tuple[Tensor, Tensor]:
        """forward's normalized input and rstd, in Tensor ops."""
        x = self.inputs[0]
        centered = x - x.mean(axis=self.axes, keepdims=True)
        rstd = 1 / ((centered * centered).mean(axis=self.axes, keepdims=True) + self.eps).sqrt()
        return centered * rstd, rstd


@op(reference=layer_norm_input_gradient_reference, namespace=None, internal=True,
    spec=InputSpec("layer_norm_input_gradient", low=0.5, high=2.0),
    summary="rstd · (g - mean(g) - normalized · mean(g · normalized)): layer_norm's backward")
class LayerNormInputGradient(BuiltinFunction):
    """rstd · (g - mean(g) - normalized · mean(g · normalized)), means over the normalized
    axes: LayerNorm's gradient for its input from g = grad · weight, as one op (six passes over
    the rows where the Tensor ops took eleven). Differentiable again."""

    name = "layer_norm_input_gradient"
    float_only = True

    def forward(self, g, normalized, rstd, n_axes=1) -> Any:
        self.axes = tuple(range(-n_axes, 0))
        return self.backend.kernels.layer_norm_input_gradient(
            rows_of(g, n_axes), rows_of(normalized, n_axes), rstd.reshape(-1, 1)).reshape(g.shape)

    def backward(self, grad_of_grad: Tensor) -> tuple[Tensor | None, ...]:
        """With u = grad_of_grad and P(g) = g - mean(g) - normalized · mean(g · normalized),
        the output is rstd · P(g), P is symmetric in g, so: for g, rstd · P(u) (this op
        again); for normalized, -rstd · (u · mean(g · normalized) + g · mean(u · normalized));
        for rstd, the sum of u · P(g) over the normalized axes."""
        g, normalized, rstd = self.inputs
        axes = self.axes

        def mean(t):
            return t.mean(axis=axes, keepdims=True)

        g_mean_gn, u_mean_un = mean(g * normalized), mean(grad_of_grad * normalized)
        projected_g = g - mean(g) - normalized * g_mean_gn  # P(g)
        return (LayerNormInputGradient.apply(grad_of_grad, normalized, rstd, n_axes=len(axes)),
                -rstd * (grad_of_grad * g_mean_gn + g * u_mean_un),
                (grad_of_grad * projected_g).sum(axis=axes, keepdims=True))


_GELU_TANH_SCALE = math.sqrt(2 / math.pi)  # the tanh approximation of GELU:
_GELU_TANH_CUBIC = 0.044715  # x·Φ(x) ≈ 0.5·x·(1 + tanh(scale · (x + cubic · x³)))


def gelu_tanh_argument(x: Any) -> Any:
    """scale · (x + cubic · x³), what the tanh approximation of GELU takes the tanh of: on
    arrays and Tensors alike."""
    return _GELU_TANH_SCALE * (x + _GELU_TANH_CUBIC * x ** 3)


def gelu_reference(x, approximate="none") -> np.ndarray:
    """GELU in NumPy (float64): the formula the op is checked against."""
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(gelu_tanh_argument(x)))
    return 0.5 * x * (1 + erf_reference(x / math.sqrt(2)))


class Gelu(BuiltinFunction):
    """GELU: x·Φ(x) exactly ('none'), or with the tanh approximation ('tanh')."""

    name = "gelu"
    float_only = True

    def forward(self, x, approximate="none") -> Any:
        self.approximate = approximate
        xp = self.xp
        if approximate == "tanh":
            return 0.5 * x * (1 + xp.tanh(gelu_tanh_argument(x)))
        return 0.5 * x * (1 + erf_array(xp, x * (1 / math.sqrt(2))))

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x = self.inputs[0]
        if self.approximate == "tanh":
            t = gelu_tanh_argument(x).tanh()
            slope = 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _GELU_TANH_SCALE * (
                1 + 3 * _GELU_TANH_CUBIC * x * x)
        else:
            cdf = 0.5 * (1 + (x * (1 / math.sqrt(2))).erf())
            pdf = (-0.5 * x * x).exp() * (1 / math.sqrt(2 * math.pi))
            slope = cdf + x * pdf
        return (grad * slope,)


class Dropout(BuiltinFunction):
    """Zero each element with probability p, scale the rest by 1/(1-p) (inverted dropout)."""

    name = "dropout"
    float_only = True

    def forward(self, x, p=0.5) -> Any:
        out, self.state = self.backend.kernels.dropout(x, p)
        return out

    def backward_arrays(self, grad) -> tuple[Any, ...]:
        return (self.backend.kernels.dropout_backward(grad, self.state),)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        return (grad * self.constant(self.backend.kernels.dropout_mask(self.state)),)


class Embedding(BuiltinFunction):
    """Rows of `weight` picked by integer ids; the padding row gets no gradient."""

    name = "embedding"
    float_only = True

    def forward(self, weight, ids=None, padding_idx=None) -> Any:
        self.ids, self.padding_idx = ids, padding_idx
        return weight[ids]

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        if self.padding_idx is not None:
            keep = (self.ids != self.padding_idx)[..., None].astype(grad.dtype)
            grad = grad * self.constant(keep)
        return (IndexAdd.apply(grad, index=(self.ids,), shape=self.inputs[0].shape),)


class Linear(BuiltinFunction):
    """x @ weight.T + bias with weight (out, in) as PyTorch; x's leading axes are flattened so
    the product is one large matrix multiplication."""

    name = "linear"
    float_only = True

    def forward(self, x, weight, *bias) -> Any:
        if x.shape[-1:] != weight.shape[1:]:
            raise ShapeError(
                f"linear: an input of shape {x.shape} does not fit a weight of shape "
                f"{weight.shape} (out_features, in_features): the input's last axis must be "
                f"{weight.shape[1]}")
        out = x.reshape(-1, x.shape[-1]) @ weight.T
        if bias:
            out += bias[0]
        return out.reshape(x.shape[:-1] + (weight.shape[0],))

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        x, weight = self.inputs[0], self.inputs[1]
        grad_rows = grad.reshape(-1, weight.shape[0])  # (tokens, out)
        grads = [(grad_rows @ weight).reshape(x.shape) if x.requires_grad else None,
                 grad_rows.T @ x.reshape(-1, weight.shape[1])]
        if len(self.inputs) == 3:
            grads.append(grad_rows.sum(axis=0))
        return tuple(grads)


class CrossEntropy(BuiltinFunction):
    """Cross-entropy from logits (..., C) and int targets (...), label smoothing as PyTorch;
    mean over non-ignored targets, 0 (with zero gradient) when every target is ignored."""

    name = "cross_entropy"
    float_only = True

    def forward(self, logits, target=None, ignore_index=None, label_smoothing=0.0,
                reduction="mean") -> Any:
        xp = self.xp
        self.reduction, self.smoothing = reduction, label_smoothing
        self.valid = None if ignore_index is None else target != ignore_index
        safe_target = target if self.valid is None else xp.where(self.valid, target, 0)
        self.target = safe_target
        # log p = logits - log_normalizer: the probabilities are the only full-size array
        rows = rows_of(logits)  # (N, C)
        probabilities = xp.empty_like(rows)
        log_normalizer = xp.empty((rows.shape[0], 1), logits.dtype)
        row_mean: Any = xp.empty_like(log_normalizer) if label_smoothing else None
        self.backend.kernels.softmax_statistics(rows, probabilities, log_normalizer, row_mean)
        self.probabilities = probabilities.reshape(logits.shape)
        log_normalizer = log_normalizer.reshape(logits.shape[:-1])  # (...)
        picked = xp.take_along_axis(logits, safe_target[..., None], axis=-1)[..., 0]
        if label_smoothing:
            losses = self.backend.kernels.smoothed_loss(
                log_normalizer, picked, row_mean.reshape(logits.shape[:-1]), label_smoothing)
        else:
            losses = log_normalizer - picked
        if self.valid is not None:
            losses = xp.where(self.valid, losses, 0)
        # the count of targets not ignored (at least 1): with ignored targets a 0-d array in
        # the logits' dtype, never read by the host
        self.count = max(losses.size, 1) if self.valid is None else xp.maximum(
            self.valid.sum(), 1).astype(logits.dtype)
        if reduction == "none":
            return losses.astype(logits.dtype, copy=False)
        total = losses.sum()
        if reduction == "mean":
            total = total / self.count
        return xp.asarray(total, dtype=logits.dtype)

    def _row_weight(self) -> Any:
        """d loss / d row's loss, per row (...): 1 or 0 (ignored), / count for the mean."""
        logits = self.inputs[0]
        weight = self.xp.ones(logits.shape[:-1], dtype=logits.dtype) if self.valid is None \
            else self.valid.astype(logits.dtype)
        return weight / self.count if self.reduction == "mean" else weight

    def backward_arrays(self, grad) -> tuple[Any, ...]:
        if self.reduction == "none":
            grad = grad.reshape(grad.shape + (1,))
        scale = grad * self._row_weight()[..., None]  # (..., 1): d loss / d row
        return (self.backend.kernels.cross_entropy_backward(
            self.probabilities, scale, self.target[..., None], self.smoothing),)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        if self.reduction == "none":
            grad = grad.reshape(grad.shape + (1,))
        scale = grad * self.constant(self._row_weight()[..., None])  # (..., 1)
        return (CrossEntropyBackward.apply(self.recompute(), scale, target=self.target,
                                           smoothing=self.smoothing),)

    def recompute(self) -> Tensor:
        """forward's probabilities, in Tensor ops."""
        return Softmax.apply(self.inputs[0], axis=-1)


class CrossEntropyBackward(BuiltinFunction):
    """(probabilities - target distribution) · scale, the gradient of cross-entropy for its
    logits, without building the dense target distribution: the smoothing is a scalar and the
    target's (1 - ε) is subtracted at one entry per row. Differentiable again (its backward
    builds the dense distribution, which only gradients of gradients need)."""

    name = "cross_entropy_backward"
    float_only = True

    def forward(self, probabilities, scale, target=None, smoothing=0.0) -> Any:
        self.target, self.smoothing = target[..., None], smoothing
        return self.backend.kernels.cross_entropy_backward(probabilities, scale, self.target,
                                                           smoothing)

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        xp = self.xp
        probabilities, scale = self.inputs
        target_distribution = xp.full(probabilities.shape, self.smoothing / probabilities.shape[-1],
                                      dtype=probabilities.dtype)
        xp.put_along_axis(target_distribution, self.target,
                          1 - self.smoothing + self.smoothing / probabilities.shape[-1], axis=-1)
        difference = probabilities - self.constant(target_distribution)
        return (grad * scale,
                (grad * difference).sum(axis=-1, keepdims=True))


@op(functions=(CrossEntropyBackward,), reference=cross_entropy_backward_reference,
    namespace=None, internal=True,
    spec=InputSpec("cross_entropy_backward", options={"smoothing": (0.0, 0.1)}),
    summary="(probabilities - target distribution) · scale: cross_entropy's backward")
def cross_entropy_backward(probabilities, scale, target, smoothing=0.0) -> Tensor:
    """The op on its own (the table's form: `target` a Tensor of ints)."""
    return CrossEntropyBackward.apply(probabilities, scale, target=target.data,
                                      smoothing=smoothing)


class ScaledDotProductAttention(BuiltinFunction):
    """softmax(q kᵀ · scale + bias, masked) · v in one op (paper §3.2.1; scale 1/sqrt(d_k)
    unless given), with optional dropout on the attention weights. q (..., Lq, d),
    k (..., Lk, d), v (..., Lk, dv) -> (..., Lq, dv); `mask` (True = excluded) and the additive
    `bias` are constants broadcasting to (..., Lq, Lk)."""

    name = "scaled_dot_product_attention"
    float_only = True

    def forward(self, q, k, v, mask=None, bias=None, scale=None, dropout_p=0.0) -> Any:
        self.scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
        self.mask, self.bias = mask, bias
        out, self.state = self.backend.kernels.attention(q, k, v, mask, bias, self.scale,
                                                         dropout_p)
        return out

    def backward(self, grad: Tensor) -> tuple[Tensor | None, ...]:
        q, k, v = self.inputs
        weights = self.recompute()
        keep = None if self.state.keep is None else self.constant(self.state.keep)
        attended = weights if keep is None else weights * keep
        grad_v = attended.mT @ grad
        grad_attended = grad @ v.mT
        grad_weights = grad_attended if keep is None else grad_attended * keep
        grad_scores = weights * (grad_weights - (grad_weights * weights).sum(axis=-1,
                                                                            keepdims=True))
        grad_scores = grad_scores * self.scale
        return grad_scores @ k, grad_scores.mT @ q, grad_v

    def recompute(self) -> Tensor:
        """forward's attention weights, in Tensor ops."""
        q, k, _ = self.inputs
        scores = (q @ k.mT) * self.scale
        if self.bias is not None:
            scores = scores + self.constant(self.bias)
        return Softmax.apply(scores, axis=-1, mask=self.mask)

    def backward_arrays(self, grad) -> tuple[Any, ...]:
        return self.backend.kernels.attention_backward(grad, self.state)
