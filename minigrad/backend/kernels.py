"""The array work of the fused ops, behind one interface: one kernel set a backend.

The fused ops of `minigrad/ops/nn.py` (softmax, log_softmax, layer_norm, cross_entropy,
scaled_dot_product_attention, dropout), ReLU's backward, gradient clipping and the weights'
moving average read as their math: forward calls `backend.kernels`, backward calls it on
arrays when it is not recorded, and is written in Tensor ops when it is (a gradient of a
gradient). How the arrays are computed is the kernels' business:

- `ArrayKernels`: chains of array ops on the backend's `xp`; the reference, and the CUDA
  backend's kernels with the fused path off (plain CuPy);
- `CpuKernels`: the same on NumPy, with what is faster on a CPU (ReLU against a row of
  zeros, which takes NumPy's SIMD loop where a scalar does not);
- `FusedKernels` (`cupy_fused.py`): the same interface in fewer GPU launches (`cupy.fuse`).

`Kernels` is the interface every set implements: each kernel with its formula. Every method
takes and returns arrays of its backend. Rows are (R, N) arrays: the leading axes of an array
flattened, its last (normalized) axes flattened.
"""

import math
from functools import partial
from typing import Any, NamedTuple, Protocol, runtime_checkable


class DropoutState(NamedTuple):
    """What dropout's backward needs to apply forward's mask again: the multiplier `keep`
    (0, or 1 / (1 - p) where kept), or, where a kernel set makes the multiplier inside the
    kernel that applies it (`FusedKernels`), the `uniform` draws it comes from: kept where
    uniform < `threshold` (1 - p), times `scale`."""

    keep: Any = None
    uniform: Any = None
    threshold: float = 1.0
    scale: Any = None


class AttentionState(NamedTuple):
    """What attention's backward needs: the operands as the products take them (q with its
    last two axes swapped in memory), the attention weights before dropout, dropout's
    multiplier (None: no dropout) and the scale of the scores."""

    q: Any
    k: Any
    v: Any
    weights: Any
    keep: Any
    scale: float


@runtime_checkable
class Kernels(Protocol):
    """The array work of the fused ops, each kernel with its formula. `fused`: whether the
    GPU's fused functions compute them."""

    fused: bool

    def softmax(self, x: Any, axis: int = -1, mask: Any = None) -> Any:
        """exp(x - max) / Σ exp(x - max) along `axis`; masked (True) entries 0; a row with
        nothing left all zeros."""

    def softmax_rows_into(self, x: Any, out: Any, ceiling: Any = None) -> tuple[Any, Any]:
        """out = softmax(min(x, ceiling)) along the last axis; returns (peak, total), each
        (..., 1): softmax = exp(x - peak) / total."""

    def log_softmax(self, x: Any, axis: int = -1) -> Any:
        """x - max - log Σ exp(x - max) along `axis`; a row of -inf stays -inf."""

    def softmax_statistics(self, rows: Any, probabilities: Any, log_normalizer: Any,
                           row_mean: Any = None) -> None:
        """Logits rows (N, C) -> softmax into `probabilities`, log Σ exp into
        `log_normalizer` (N, 1), the rows' means into `row_mean` (N, 1) when given."""

    def smoothed_loss(self, log_normalizer: Any, picked: Any, row_mean: Any,
                      smoothing: float) -> Any:
        """(1 - ε) · (log Σ exp - x[target]) - ε · (mean(x) - log Σ exp) per row."""

    def cross_entropy_backward(self, probabilities: Any, scale: Any, target: Any,
                               smoothing: float) -> Any:
        """(probabilities - ((1 - ε) · onehot(target) + ε / C)) · scale."""

    def softmax_backward(self, weights: Any, grad_weights: Any, keep: Any,
                         scale: Any) -> Any:
        """w · (g' - Σ g' · w) · scale along the last axis, g' = g · keep (keep None: g)."""

    def scaled_masked_softmax(self, scores: Any, mask: Any, scale: Any) -> Any:
        """softmax(scores · scale, masked) along the last axis; `scores` is overwritten."""

    def attention_weights(self, q: Any, k: Any, mask: Any, scale: float,
                          bias: Any = None) -> Any:
        """softmax(q kᵀ · scale + bias, masked) along the last axis."""

    def attention(self, q: Any, k: Any, v: Any, mask: Any, bias: Any, scale: float,
                  dropout_p: float) -> tuple[Any, AttentionState]:
        """(dropout(softmax(q kᵀ · scale + bias, masked)) · v, what the backward needs)."""

    def attention_backward(self, grad: Any, state: AttentionState) -> tuple[Any, Any, Any]:
        """With P the weights, P' = P · keep, dS = softmax_backward(P, grad vᵀ, keep, scale):
        (dS k, dSᵀ q, P'ᵀ grad), the gradients of q, k and v."""

    def layer_norm(self, rows: Any, eps: float) -> tuple[Any, Any]:
        """Rows (R, N) -> ((x - mean) · rstd, rstd (R, 1)), rstd = 1 / sqrt(var + eps),
        two-pass variance."""

    def affine(self, normalized: Any, weight: Any, bias: Any) -> Any:
        """normalized · weight + bias, either None (left out)."""

    def layer_norm_input_gradient(self, g_rows: Any, normalized_rows: Any,
                                  rstd_rows: Any) -> Any:
        """rstd · (g - mean(g) - normalized · mean(g · normalized)) along rows."""

    def layer_norm_backward(self, grad: Any, weight: Any, normalized: Any, rstd: Any,
                            n_axes: int) -> tuple[Any, Any, Any]:
        """(layer_norm_input_gradient(grad · weight), Σ grad · normalized, Σ grad), the sums
        over the leading axes: the gradients of the input, weight and bias."""

    def dropout_keep(self, shape: tuple[int, ...], dtype: Any, p: float) -> Any:
        """The multiplier: 0 with probability p, else 1 / (1 - p)."""

    def dropout(self, x: Any, p: float) -> tuple[Any, DropoutState]:
        """(x · multiplier, the state that gives the multiplier again)."""

    def dropout_backward(self, grad: Any, state: DropoutState) -> Any:
        """grad · the multiplier of the forward that gave `state`."""

    def dropout_mask(self, state: DropoutState) -> Any:
        """The multiplier of the forward that gave `state`."""

    def relu(self, x: Any) -> Any:
        """max(x, 0)."""

    def relu_backward(self, grad: Any, x: Any) -> Any:
        """grad · (x > 0)."""

    def clip_scale(self, norm: Any, max_norm: float, dtype: Any) -> Any:
        """min(max_norm / (norm + 1e-6), 1) in `dtype`."""

    def moving_average(self, average: Any, value: Any, weight: Any) -> None:
        """average += (value - average) · weight, in place."""


class ArrayKernels(Kernels):
    """The kernels as chains of array ops. `backend` gives `xp`, `run_blockwise` (blocks of
    rows on every CPU core; the whole arrays on a GPU), `generator` (dropout's draws),
    `matmul` and `batched_operand` (the layouts of attention's products)."""

    fused = False

    def __init__(self, backend: Any) -> None:
        self.xp = backend.xp
        self.run_blockwise = backend.run_blockwise
        self.generator = backend.generator
        self.matmul = backend.matmul
        self.batched_operand = backend.batched_operand

    # ----- softmax ------------------------------------------------------------------------

    def softmax(self, x, axis=-1, mask=None) -> Any:
        """Softmax along `axis`; masked entries (True) get 0 (a NaN input stays NaN, masked or
        not), and a row with nothing left (all masked, or all -inf) is all zeros, not NaN."""
        xp = self.xp
        out = xp.empty_like(x)
        arrays: tuple = (x, out)
        if mask is not None:  # -inf where masked, +inf elsewhere, in the mask's (small) shape
            ceiling = xp.where(mask, x.dtype.type(-xp.inf), x.dtype.type(xp.inf))
            arrays += (xp.broadcast_to(ceiling, x.shape),)
        if axis not in (-1, x.ndim - 1):
            _softmax_into(xp, axis, *arrays)
        elif x.ndim == 1:
            self.softmax_rows_into(*arrays)
        else:
            self.run_blockwise([(self.softmax_rows_into, arrays)])
        return out

    def softmax_rows_into(self, x, out, ceiling=None) -> tuple[Any, Any]:
        """out = softmax(x) along the last axis, x first capped by `ceiling` (-inf at masked
        entries); returns the shift and the sum of exponentials (softmax = exp(x - peak) /
        total), each (..., 1)."""
        return _softmax_into(self.xp, -1, x, out, ceiling)

    def log_softmax(self, x, axis=-1) -> Any:
        """log softmax along `axis`: a row of -inf stays -inf rather than becoming NaN."""
        xp = self.xp
        peak = _finite_or_zero(xp, x.max(axis=axis, keepdims=True))
        shifted = x - peak
        total = _one_where_zero(xp, xp.exp(shifted).sum(axis=axis, keepdims=True))
        shifted -= xp.log(total)
        return shifted

    def softmax_statistics(self, rows, probabilities, log_normalizer, row_mean=None) -> None:
        """For logits rows (N, C): their softmax into `probabilities` (N, C), log Σ exp into
        `log_normalizer` (N, 1) and, when given, their means into `row_mean` (N, 1)."""
        arrays = (rows, probabilities, log_normalizer) + (() if row_mean is None else (row_mean,))
        self.run_blockwise([(partial(_softmax_statistics, self.xp, self.softmax_rows_into),
                             arrays)])

    def smoothed_loss(self, log_normalizer, picked, row_mean, smoothing) -> Any:
        """Label-smoothed cross-entropy per row from log Σ exp, the target's logit and the
        row's mean logit: (1 - ε) · -log p(target) - ε · mean(log p)."""
        return (1 - smoothing) * (log_normalizer - picked) \
            - smoothing * (row_mean - log_normalizer)

    def cross_entropy_backward(self, probabilities, scale, target, smoothing) -> Any:
        """(probabilities - target distribution) · scale, cross-entropy's gradient for its
        logits (..., C), from `scale` (..., 1) and `target` ids (..., 1): the distribution
        (1 - ε at the target, plus ε / C everywhere) never made."""
        out = self.xp.empty_like(probabilities)
        rows = [rows_of(array)  # (N, C), (N, 1), (N, 1), (N, C)
                for array in (probabilities, scale, target, out)]
        self.run_blockwise([(partial(_smoothed_difference, self.xp, smoothing), rows)])
        return out

    def softmax_backward(self, weights, grad_weights, keep, scale) -> Any:
        """The gradient of the scores (..., Lq, Lk), times `scale`, whose softmax is `weights`,
        from the gradient of the weights as used: after the dropout `keep` (None: none)."""
        if keep is not None:
            grad_weights = grad_weights * keep
        grad_scores = weights * (grad_weights - (grad_weights * weights).sum(axis=-1,
                                                                            keepdims=True))
        return grad_scores * scale

    def scaled_masked_softmax(self, scores, mask, scale) -> Any:
        """softmax(scores · scale, masked) along the last axis, `mask` True where excluded
        (None: nothing is); `scores` is overwritten."""
        scores *= scale
        return self.softmax(scores, -1, mask)

    def attention_weights(self, q, k, mask, scale, bias=None) -> Any:
        """softmax(q kᵀ · scale + bias, masked): (..., Lq, d), (..., Lk, d) -> (..., Lq, Lk)."""
        scores = self.matmul(q, self.xp.swapaxes(k, -1, -2))
        scale = scores.dtype.type(scale)
        if bias is not None:
            scores *= scale
            scores += bias
            scale = scores.dtype.type(1)
        return self.scaled_masked_softmax(scores, mask, scale)

    def attention(self, q, k, v, mask, bias, scale, dropout_p) -> tuple[Any, AttentionState]:
        """q, k, v are often strided views (heads split from (B, L, H, d)): copied once (on a
        GPU) into the layouts in which every product of forward and backward takes them as
        they are (`Backend.matmul`): q with its last two axes swapped (its products are
        computed as their transposes: k qᵀ, qᵀ dS), k and v as they are."""
        batched = self.batched_operand
        q, k, v = batched(q, transposed=True), batched(k), batched(v)
        weights = self.attention_weights(q, k, mask, scale, bias)
        keep = None
        attended = weights
        if dropout_p > 0:
            keep = self.dropout_keep(attended.shape, attended.dtype, dropout_p)
            attended = attended * keep
        return self.matmul(attended, v), AttentionState(q, k, v, weights, keep, scale)

    def attention_backward(self, grad, state) -> tuple[Any, Any, Any]:
        """`grad` is often strided (the heads' merge): copied once, its axes swapped (its
        products are computed as their transposes: dOᵀ P, v dOᵀ)."""
        swap, matmul = partial(self.xp.swapaxes, axis1=-1, axis2=-2), self.matmul
        q, k, v, weights, keep, scale = state
        grad = self.batched_operand(grad, transposed=True)
        attended = weights if keep is None else weights * keep
        grad_v = matmul(swap(attended), grad)
        grad_attended = matmul(grad, swap(v))
        grad_scores = self.softmax_backward(weights, grad_attended, keep, q.dtype.type(scale))
        return matmul(grad_scores, k), matmul(swap(grad_scores), q), grad_v

    # ----- layer_norm -----------------------------------------------------------------------

    def layer_norm(self, rows, eps) -> tuple[Any, Any]:
        """(R, N) rows -> their normalized values (R, N) and 1/std (R, 1): two-pass variance,
        eps inside the square root."""
        xp = self.xp
        centered = rows - _row_mean(xp, rows)  # a new array: updated in place
        rstd = 1 / xp.sqrt(_row_mean_of_product(xp, centered, centered) + eps)  # (R, 1)
        centered *= rstd
        return centered, rstd

    def affine(self, normalized, weight, bias) -> Any:
        """normalized · weight + bias, either of them None (left out); mixed dtypes promote as
        NumPy does, never cast down."""
        if weight is None and bias is None:
            return normalized
        out = normalized * weight if weight is not None else normalized + bias
        if weight is not None and bias is not None:
            if bias.dtype == out.dtype:
                out += bias
            else:
                out = out + bias
        return out

    def layer_norm_input_gradient(self, g_rows, normalized_rows, rstd_rows) -> Any:
        """rstd · (g - mean(g) - normalized · mean(g · normalized)) along rows (R, N), from
        g = grad · weight, the normalized rows and 1/std (R, 1)."""
        xp = self.xp
        out = normalized_rows * _row_mean_of_product(xp, g_rows, normalized_rows)
        out += _row_mean(xp, g_rows)
        xp.subtract(g_rows, out, out=out)
        out *= rstd_rows
        return out

    def layer_norm_backward(self, grad, weight, normalized, rstd, n_axes) -> tuple[Any, Any, Any]:
        """LayerNorm's gradients, not recorded: for its input (grad's shape), and for weight
        and bias (the normalized shape). `weight` None: the layer has none. `rstd` has size 1
        on the last `n_axes` axes."""
        g = grad if weight is None else grad * weight
        grad_input = self.layer_norm_input_gradient(
            rows_of(g, n_axes), rows_of(normalized, n_axes), rstd.reshape(-1, 1))
        leading = tuple(range(grad.ndim - n_axes))
        shape = grad.shape[grad.ndim - n_axes:]
        return (grad_input.reshape(grad.shape),
                (grad * normalized).sum(axis=leading, keepdims=True).reshape(shape),
                grad.sum(axis=leading, keepdims=True).reshape(shape))

    # ----- dropout, relu ------------------------------------------------------------------

    def dropout_keep(self, shape, dtype, p) -> Any:
        """Inverted dropout's multiplier from the device's generator: 0 where an element is
        dropped (probability p), 1 / (1 - p) where it is kept."""
        scale = dtype.type(1 / (1 - p) if p < 1 else 0)
        return self.generator.bernoulli(shape, 1 - p) * scale

    def dropout(self, x, p) -> tuple[Any, DropoutState]:
        keep = self.dropout_keep(x.shape, x.dtype, p)
        return x * keep, DropoutState(keep)

    def dropout_backward(self, grad, state) -> Any:
        return grad * state.keep

    def dropout_mask(self, state) -> Any:
        return state.keep

    def relu(self, x) -> Any:
        return self.xp.maximum(x, x.dtype.type(0))

    def relu_backward(self, grad, x) -> Any:
        return grad * (x > 0)  # float × bool stays float

    # ----- optimizers ---------------------------------------------------------------------

    def clip_scale(self, norm, max_norm, dtype) -> Any:
        """min(max_norm / (norm + 1e-6), 1) in `dtype`: what clipping multiplies by."""
        return self.xp.minimum(max_norm / (norm + 1e-6), 1).astype(dtype)

    def moving_average(self, average, value, weight) -> None:
        """average += (value - average) · weight, in place."""
        step = value - average
        step *= weight
        average += step


class CpuKernels(ArrayKernels):
    """ArrayKernels on NumPy, with what is faster on a CPU."""

    def relu(self, x) -> Any:  # against a row of zeros: NumPy's SIMD loop, not a scalar's
        return self.xp.maximum(x, self.xp.zeros(x.shape[-1:], x.dtype))


def rows_of(array, n_axes=1) -> Any:
    """An array (..., *C) as rows (N, prod(C)) over its last `n_axes` axes: a view when it is
    contiguous."""
    return array.reshape(math.prod(array.shape[:-n_axes]), math.prod(array.shape[-n_axes:]))


def _softmax_into(xp, axis, x, out, ceiling=None):
    """out = softmax(x, axis), x first capped by `ceiling` (NumPy's minimum is faster than its
    where); returns the shift and the sum of exponentials."""
    if ceiling is not None:
        x = xp.minimum(x, ceiling, out=out)
    peak = _finite_or_zero(xp, x.max(axis=axis, keepdims=True))
    xp.subtract(x, peak, out=out)
    xp.exp(out, out=out)
    total = _one_where_zero(xp, out.sum(axis=axis, keepdims=True))
    out /= total
    return peak, total


def _softmax_statistics(xp, softmax_rows_into, logits, probabilities, log_normalizer,
                        row_mean=None):
    """For a block of rows (n, C): their softmax, log Σ exp (n, 1) and, when asked, their mean
    (n, 1)."""
    peak, total = softmax_rows_into(logits, probabilities)
    xp.add(peak, xp.log(total), out=log_normalizer)
    if row_mean is not None:
        xp.mean(logits, axis=-1, keepdims=True, out=row_mean)


def _smoothed_difference(xp, smoothing, probabilities, scale, target, out):
    """out = (probabilities - target distribution) · scale for a block of rows."""
    xp.multiply(probabilities, scale, out=out)
    if smoothing:
        out -= scale * out.dtype.type(smoothing / probabilities.shape[-1])
    at_target = xp.take_along_axis(out, target, axis=-1)
    at_target -= scale * out.dtype.type(1 - smoothing)
    xp.put_along_axis(out, target, at_target, axis=-1)


def _finite_or_zero(xp, peak):
    """The row maxima with NaN/Inf made 0 (a row with nothing left subtracts nothing), by
    `copyto` with a mask: no boolean-mask assignment, which makes a GPU wait for the count."""
    xp.copyto(peak, 0, where=~xp.isfinite(peak))
    return peak


def _one_where_zero(xp, total):
    """Sums of exponentials with 0 made 1 (an empty row stays all zeros, never NaN)."""
    xp.copyto(total, 1, where=total == 0)
    return total


def _row_mean(xp, rows):
    """(R, N) -> (R, 1) means, as a matrix-vector product: BLAS is faster than a NumPy
    reduction along rows a few hundred long."""
    return rows @ xp.full((rows.shape[1], 1), 1 / rows.shape[1], dtype=rows.dtype)


def _row_mean_of_product(xp, a, b):
    """(R, N), (R, N) -> (R, 1): the mean of a · b along each row, in one pass."""
    return xp.einsum("ij,ij->i", a, b)[:, None] / a.dtype.type(a.shape[1])
