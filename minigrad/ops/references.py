"""NumPy references of the ops: straightforward formulas the generated tests compare against
(small values, so no stability tricks are needed)."""

import math

import numpy as np

erf_reference = np.vectorize(math.erf, otypes=[np.float64])


def masked_fill_reference(x, mask, value) -> np.ndarray:
    return np.where(mask, np.array(value).astype(x.dtype), x)


def logsumexp_reference(x, axis=None, keepdims=False) -> np.ndarray | np.floating:
    return np.log(np.sum(np.exp(x), axis=axis, keepdims=keepdims))


def softmax_reference(x, axis=-1, mask=None) -> np.ndarray:
    """exp(x) / sum(exp(x)) with masked entries left out; a row left empty is all zeros."""
    e = np.exp(x) if mask is None else np.where(mask, 0.0, np.exp(x))
    total = e.sum(axis=axis, keepdims=True)
    return e / np.where(total == 0, 1, total)


def log_softmax_reference(x, axis=-1) -> np.ndarray:
    return x - logsumexp_reference(x, axis=axis, keepdims=True)


def layer_norm_reference(x, normalized_shape, weight=None, bias=None, eps=1e-5) -> np.ndarray:
    axes = tuple(range(-len(normalized_shape), 0))
    out = (x - x.mean(axis=axes, keepdims=True)) / np.sqrt(x.var(axis=axes, keepdims=True) + eps)
    if weight is not None:
        out = out * weight
    return out if bias is None else out + bias


def cross_entropy_reference(logits, target, ignore_index=None, label_smoothing=0.0,
                            reduction="mean") -> np.ndarray | np.floating:
    """-sum(q · log p) with q = (1 - ε)·onehot(target) + ε/C, as PyTorch defines smoothing."""
    classes = logits.shape[-1]
    valid = np.ones(target.shape, bool) if ignore_index is None else target != ignore_index
    q = (1 - label_smoothing) * np.eye(classes)[np.where(valid, target, 0)] + (
        label_smoothing / classes)
    losses = np.where(valid, -(q * log_softmax_reference(logits)).sum(axis=-1), 0.0)
    if reduction == "none":
        return losses
    return losses.sum() / (max(valid.sum(), 1) if reduction == "mean" else 1)


def attention_reference(q, k, v, mask=None) -> np.ndarray:
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
    return softmax_reference(scores, axis=-1, mask=mask) @ v


def linear_reference(x, weight, bias=None) -> np.ndarray:
    out = x @ weight.T
    return out if bias is None else out + bias


def topk_reference(x, k, axis=-1, largest=True) -> tuple[np.ndarray, np.ndarray]:
    key = -x if largest else x
    indices = np.take(np.argsort(key, axis=axis, kind="stable"), np.arange(k), axis=axis)
    return np.take_along_axis(x, indices, axis=axis), indices


def index_add_reference(values, index, shape) -> np.ndarray:
    out = np.zeros(shape, values.dtype)
    positions = np.arange(out.size).reshape(shape)[index]
    np.add.at(out.reshape(-1), positions, values)
    return out


def layer_norm_input_gradient_reference(g, normalized, rstd, n_axes=1) -> np.ndarray:
    axes = tuple(range(-n_axes, 0))

    def mean(t):
        return t.mean(axis=axes, keepdims=True)

    return rstd * (g - mean(g) - normalized * mean(g * normalized))


def cross_entropy_backward_reference(probabilities, scale, target, smoothing=0.0) -> np.ndarray:
    classes = probabilities.shape[-1]
    return (probabilities - (1 - smoothing) * np.eye(classes)[target] - smoothing / classes
            ) * scale


def normalize_reference(x, p=2.0, axis=1, eps=1e-12) -> np.ndarray:
    norm = (np.abs(x) ** p).sum(axis=axis, keepdims=True) ** (1 / p)
    return x / np.maximum(norm, eps)
