"""GPU-only code: the fused elementwise chains of the CUDA backend, written with `cupy.fuse`.

A chain of elementwise ops costs one kernel launch per op on a GPU, a fixed cost each
whatever the size: LayerNorm's forward was eleven launches, its input gradient eight, a masked
softmax twelve. Each function here is one kernel (an elementwise chain, or one ending in a
reduction along the last axis, then elementwise work on the reduced values and constants
only: CuPy's fusion refuses the function's arguments after its reduction, `_core/fusion.pyx`
`_get_fusion_var`), so LayerNorm's forward takes five launches and a softmax four. Each is
written once at module level, the array namespace `xp` (CuPy or the stand-in) its first
argument, and fused on a given `xp` by `fused_functions`.

`FusedKernels` is the kernel set of `kernels.py` (its interface, and `ArrayKernels`' chains
of array ops where no fused function does better) that the CUDA backend uses when the fused
path is on (`minigrad.backend.use_fused_kernels(True)`, or MINIGRAD_FUSED=1). The CuPy
stand-in runs `cupy.fuse` eagerly, so every function is tested on the CPU against the plain
path; until the path has run on a GPU (where CuPy compiles each kernel at its first call) it
stays off by default.
"""

import functools
import math
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from .kernels import ArrayKernels, DropoutState, rows_of

_FUSED: list[Callable[..., Any]] = []  # the functions `fused_functions` fuses, in order


def _fused(function: Callable[..., Any]) -> Callable[..., Any]:
    """Mark `function(xp, *arguments)` as one fused kernel on `xp` (`fused_functions`)."""
    _FUSED.append(function)
    return function


# a row's mean is given as its sum and n, divided where it is used: CuPy's mean is two
# launches, and a fused reduction cannot divide by an argument after it
@_fused
def squared_deviation_sum(xp, x, total, n) -> Any:  # (R, N), (R, 1) -> (R,)
    return xp.sum((x - total / n) * (x - total / n), axis=-1)


@_fused
def product_sum(xp, a, b) -> Any:  # (R, N), (R, N) -> (R,)
    return xp.sum(a * b, axis=-1)


@_fused
def reciprocal_std(xp, squares, n, eps) -> Any:
    return 1 / xp.sqrt(squares / n + eps)


@_fused
def normalize(xp, x, total, n, rstd) -> Any:
    return (x - total / n) * rstd


@_fused
def scale_shift(xp, x, weight, bias) -> Any:
    return x * weight + bias


@_fused
def layer_norm_input_gradient(xp, g, normalized, g_total, n, gn_mean, rstd) -> Any:
    return rstd * (g - g_total / n - normalized * gn_mean)


@_fused
def capped_peak(xp, x, ceiling) -> Any:  # (R, N), (R, N) -> (R,): the row maxima, NaN/Inf made 0
    peak = xp.amax(xp.minimum(x, ceiling), axis=-1)
    return xp.where(xp.isfinite(peak), peak, 0)


@_fused
def shifted_exp(xp, x, ceiling, peak) -> Any:
    return xp.exp(xp.minimum(x, ceiling) - peak)


@_fused
def nonzero_sum(xp, x) -> Any:  # (..., N) -> (...): the row sums, 0 made 1
    total = xp.sum(x, axis=-1)
    return xp.where(total == 0, 1, total)


@_fused
def dropout_keep(xp, uniform, probability, scale) -> Any:
    return (uniform < probability) * scale


@_fused
def dropout(xp, x, uniform, probability, scale) -> Any:
    return x * ((uniform < probability) * scale)


@_fused
def triple_product_sum(xp, a, b, c) -> Any:  # (R, N) x3, broadcasting -> (R,)
    return xp.sum(a * b * c, axis=-1)


@_fused
def column_product_sum(xp, a, b) -> Any:  # (R, N), (R, N) -> (N,)
    return xp.sum(a * b, axis=0)


@_fused
def layer_norm_backward(xp, grad, weight, normalized, g_sum, gn_sum, rstd, n) -> Any:
    return rstd * (grad * weight - (g_sum + normalized * gn_sum) / n)


@_fused
def scaled_masked_peak(xp, x, mask, scale) -> Any:  # (..., N) -> (...): as capped_peak
    peak = xp.amax(xp.where(mask, -xp.inf, x * scale), axis=-1)
    return xp.where(xp.isfinite(peak), peak, 0)


@_fused
def scaled_masked_exp(xp, x, mask, scale, peak) -> Any:
    return xp.exp(xp.where(mask, -xp.inf, x * scale) - peak)


@_fused
def smoothed_loss(xp, log_normalizer, picked, row_mean, keep, smoothing) -> Any:
    return keep * (log_normalizer - picked) - smoothing * (row_mean - log_normalizer)


@_fused
def clip_scale(xp, norm, max_norm) -> Any:
    return xp.minimum(max_norm / (norm + 1e-6), 1)


@_fused
def relu_backward(xp, grad, x) -> Any:
    return xp.where(x > 0, grad, 0)


@_fused
def softmax_backward(xp, weights, grad_attended, keep, row_sum, scale) -> Any:
    return weights * (grad_attended * keep - row_sum) * scale


@_fused
def moving_average(xp, average, value, weight) -> None:  # in place: the weights' moving average
    xp.add(average, (value - average) * weight, out=average)


def fused_functions(xp: Any) -> SimpleNamespace:
    """The fused functions on `xp` (real CuPy or the stand-in), each one kernel named after
    its function."""
    return SimpleNamespace(**{
        function.__name__: xp.fuse(kernel_name=function.__name__)(functools.partial(function, xp))
        for function in _FUSED})


class FusedKernels(ArrayKernels):
    """The kernel set whose work is done by the fused functions (`fused_functions`)."""

    fused = True

    def __init__(self, backend) -> None:
        super().__init__(backend)
        self.f = fused_functions(self.xp)

    def layer_norm(self, rows, eps) -> tuple[Any, Any]:
        """(R, N) rows -> their normalized values (R, N) and 1/std (R, 1): four launches."""
        n = rows.dtype.type(rows.shape[1])
        total = self.xp.sum(rows, axis=-1, keepdims=True)
        squares = self.f.squared_deviation_sum(rows, total, n)[:, None]
        rstd = self.f.reciprocal_std(squares, n, rows.dtype.type(eps))
        return self.f.normalize(rows, total, n, rstd), rstd

    def smoothed_loss(self, log_normalizer, picked, row_mean, smoothing) -> Any:
        """Label-smoothed cross-entropy per row: one launch. The coefficients are computed
        here, in the logits' dtype: inside a fused function `1 - smoothing` of two Python
        scalars would be computed in float16 (CuPy's fusion picks the first loop they fit)."""
        dtype = log_normalizer.dtype.type
        return self.f.smoothed_loss(log_normalizer, picked, row_mean, dtype(1 - smoothing),
                                   dtype(smoothing))

    def affine(self, normalized, weight, bias) -> Any:
        """One launch where both are given in the normalized values' dtype."""
        if weight is None or bias is None or not weight.dtype == bias.dtype == normalized.dtype:
            return super().affine(normalized, weight, bias)
        return self.f.scale_shift(normalized, weight, bias)

    def layer_norm_input_gradient(self, g_rows, normalized_rows, rstd_rows) -> Any:
        """rstd · (g - mean(g) - normalized · mean(g · normalized)) over rows: three launches."""
        n = g_rows.dtype.type(g_rows.shape[1])
        g_total = self.xp.sum(g_rows, axis=-1, keepdims=True)
        gn_mean = (self.f.product_sum(g_rows, normalized_rows) / n)[:, None]
        return self.f.layer_norm_input_gradient(g_rows, normalized_rows, g_total, n, gn_mean,
                                                rstd_rows)

    def softmax_rows_into(self, x, out, ceiling=None) -> tuple[Any, Any]:
        """out = softmax(x) along the last axis, x capped by `ceiling` (-inf at masked
        entries); returns the shift and the sum of exponentials (..., 1): four launches."""
        if ceiling is None:
            ceiling = x.dtype.type(math.inf)
        peak = self.f.capped_peak(x, ceiling)[..., None]
        exponentials = self.f.shifted_exp(x, ceiling, peak)
        total = self.f.nonzero_sum(exponentials)[..., None]
        self.xp.divide(exponentials, total, out=out)
        return peak, total

    def layer_norm_backward(self, grad, weight, normalized, rstd, n_axes) -> tuple[Any, Any, Any]:
        """For the input: three launches, g = grad · weight never made; for weight and bias,
        one launch each, kept as they are where already in the normalized shape (a reshaped
        view is no array of its own, and a `.grad` would copy it: `Backend.owns`)."""
        grad_rows, normalized_rows = rows_of(grad, n_axes), rows_of(normalized, n_axes)
        n = grad_rows.dtype.type(grad_rows.shape[1])
        scale = 1 if weight is None else weight.reshape(-1)
        g_sum = self.f.product_sum(grad_rows, scale)[:, None]
        gn_sum = self.f.triple_product_sum(grad_rows, scale, normalized_rows)[:, None]
        grad_input = self.f.layer_norm_backward(grad_rows, scale, normalized_rows, g_sum,
                                               gn_sum, rstd.reshape(-1, 1), n)
        shape = grad.shape[grad.ndim - n_axes:]
        return (grad_input.reshape(grad.shape),
                _shaped(self.f.column_product_sum(grad_rows, normalized_rows), shape),
                _shaped(grad_rows.sum(axis=0), shape))

    def dropout_keep(self, shape, dtype, p) -> Any:
        """From uniform draws compared and scaled in one launch."""
        uniform = self.generator.uniform(shape, self.xp.float32)
        return self.f.dropout_keep(uniform, 1 - p, dtype.type(1 / (1 - p) if p < 1 else 0))

    def dropout(self, x, p) -> tuple[Any, DropoutState]:
        """One launch besides the draws, which are kept (not the multiplier): backward
        applies them again in one launch."""
        state = DropoutState(uniform=self.generator.uniform(x.shape, self.xp.float32),
                             threshold=1 - p, scale=x.dtype.type(1 / (1 - p) if p < 1 else 0))
        return self.f.dropout(x, state.uniform, state.threshold, state.scale), state

    def dropout_backward(self, grad, state) -> Any:
        return self.f.dropout(grad, state.uniform, state.threshold, state.scale)

    def dropout_mask(self, state) -> Any:
        return self.f.dropout_keep(state.uniform, state.threshold, state.scale)

    def relu_backward(self, grad, x) -> Any:
        return self.f.relu_backward(grad, x)

    def clip_scale(self, norm, max_norm, dtype) -> Any:
        return self.f.clip_scale(norm, dtype.type(max_norm))

    def moving_average(self, average, value, weight) -> None:
        self.f.moving_average(average, value, weight)

    def softmax_backward(self, weights, grad_weights, keep, scale) -> Any:
        """Two launches, the dropout and the scale inside them."""
        keep = 1 if keep is None else keep
        row_sum = self.f.triple_product_sum(grad_weights, keep, weights)[..., None]
        return self.f.softmax_backward(weights, grad_weights, keep, row_sum, scale)

    def scaled_masked_softmax(self, scores, mask, scale) -> Any:
        """softmax(scores · scale, masked) along the last axis, `mask` True where excluded
        (None: nothing is): four launches, the scaling and the mask inside them."""
        mask = False if mask is None else mask
        peak = self.f.scaled_masked_peak(scores, mask, scale)[..., None]
        exponentials = self.f.scaled_masked_exp(scores, mask, scale, peak)
        total = self.f.nonzero_sum(exponentials)[..., None]
        # C-contiguous whatever the layout of `scores` (a product's transpose, `matmul`): the
        # weights are the first operand of the products that follow
        return self.xp.divide(exponentials, total, out=self.xp.empty(scores.shape, scores.dtype))


def _shaped(array, shape):
    """`array` in `shape`, itself when it has that shape already."""
    return array if array.shape == shape else array.reshape(shape)
