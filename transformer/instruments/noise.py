"""Gradient noise: how much each parameter's gradient varies from batch to batch at fixed
weights, against its mean (the expected gradient that Xiong et al. 2020 plot).

For the gradients g_1..g_K of K batches: ḡ = (1/K) Σ g_k, the noise
σ² = (1/(K−1)) Σ ‖g_k − ḡ‖² (the trace of the batch gradient's covariance, unbiased), and the
signal-to-noise ratio ‖ḡ‖² / σ² (over 1: a step follows the expected gradient more than the
batch's chance; ‖ḡ‖² itself overestimates ‖E g‖² by σ²/K)."""

from collections.abc import Iterable

import numpy as np

from minigrad import Tensor
from minigrad.nn import functional as F

from ..data.batching import Batch
from ..model import Transformer
from .recorder import parameter_place


def probe_loss(model: Transformer, batch: Batch, pad_id: int) -> Tensor:
    """The cross-entropy of `model` on `batch` (no label smoothing): what the study tools
    differentiate."""
    logits = model(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask)
    return F.cross_entropy(logits, batch.tgt_out, ignore_index=pad_id)


def gradient_statistics(model: Transformer, batches: Iterable[Batch], pad_id: int,
                        config_label: str = "", step: int = 0) -> list[dict]:
    """Rows (the recorder's fields) per parameter over `batches` (two or more, the weights left
    as they are): `grad_mean_norm` ‖ḡ‖, `grad_noise` σ, `grad_snr` ‖ḡ‖²/σ² (absent where σ
    = 0) and `grad_mean_norm_unbiased` √max(0, ‖ḡ‖² − σ²/K): ‖ḡ‖² over K batches exceeds the
    expected gradient's squared norm by σ²/K on average. Each batch's gradient is taken from
    a fresh backward; `.grad` is left zeroed."""
    batches = list(batches)
    if len(batches) < 2:
        raise ValueError(f"gradient_statistics: the noise needs two or more batches, got "
                         f"{len(batches)}")
    named = list(model.named_parameters())
    sums = {name: 0.0 for name, _ in named}  # Σ g_k, float64
    squares = {name: 0.0 for name, _ in named}  # Σ ‖g_k‖²
    for batch in batches:
        model.zero_grad()
        probe_loss(model, batch, pad_id).backward()
        for name, param in named:
            if param.grad is not None:
                grad = param.grad.numpy().astype(np.float64)
                sums[name] = sums[name] + grad
                squares[name] += float(np.sum(grad * grad))
    model.zero_grad()
    k, rows = len(batches), []
    for name, _ in named:
        mean_sq = float(np.sum(np.square(sums[name] / k)))
        noise_sq = max(squares[name] - k * mean_sq, 0.0) / (k - 1)
        stack, layer, sublayer = parameter_place(name)
        values = {"grad_mean_norm": mean_sq ** 0.5, "grad_noise": noise_sq ** 0.5,
                  "grad_mean_norm_unbiased": max(mean_sq - noise_sq / k, 0.0) ** 0.5}
        if noise_sq > 0:
            values["grad_snr"] = mean_sq / noise_sq
        rows += [{"step": step, "config": config_label, "stack": stack, "layer": layer,
                  "sublayer": sublayer, "param": name, "quantity": quantity, "value": value}
                 for quantity, value in values.items()]
    return rows
