"""Losses with PyTorch's names and arguments (`F.<name>`), written in ops (each gradient the
ops' own, differentiable again): nll_loss, binary_cross_entropy and its with-logits form,
mse_loss, l1_loss, and cross_entropy's class-probability targets. The class axis is last, as
in `F.cross_entropy` (PyTorch's is axis 1)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import DTypeError, ShapeError
from ..tensor import Tensor
from .activations import Logsigmoid
from .elementwise import Abs, Add, Clip, Divide, Log, Multiply, Subtract
from .indexing import GetItem
from .nn import LogSoftmax
from .reduce import Mean, Sum
from .references import log_softmax_reference
from .registry import InputSpec, op

REDUCTIONS = ("mean", "sum", "none")
SMALLEST = math.exp(-100)  # binary_cross_entropy's logs are at least log(SMALLEST) = -100


def _reduced(name, losses: Tensor, reduction) -> Tensor:
    if reduction not in REDUCTIONS:
        raise ValueError(f"{name}: reduction must be 'mean', 'sum' or 'none', got {reduction!r}")
    if reduction == "none":
        return losses
    return losses.mean() if reduction == "mean" else losses.sum()


def _floating(name, *values) -> None:
    for value in values:
        if isinstance(value, Tensor) and value.dtype.kind != "f":
            raise DTypeError(f"{name}: needs floating-point inputs, got {value.dtype}; convert "
                             "with .astype('float32')")


def _reduced_reference(losses, reduction) -> Any:
    return losses if reduction == "none" else losses.mean() if reduction == "mean" \
        else losses.sum()


def nll_loss_reference(log_probabilities, target, ignore_index=-100, reduction="mean") -> Any:
    valid = target != ignore_index
    picked = np.take_along_axis(log_probabilities, np.where(valid, target, 0)[..., None],
                                axis=-1)[..., 0]
    losses = np.where(valid, -picked, 0.0)
    if reduction == "none":
        return losses
    return losses.sum() / (max(valid.sum(), 1) if reduction == "mean" else 1)


@op(functions=(GetItem, Multiply, Sum, Divide), reference=nll_loss_reference, namespace="F",
    spec=InputSpec("cross_entropy", options={"reduction": REDUCTIONS}),
    summary="-log_probabilities[target], averaged over targets not ignored",
    pytorch="`F.nll_loss` (the class axis last; no class weights)")
def nll_loss(log_probabilities, target, ignore_index=-100, reduction="mean") -> Tensor:
    """The negative log-likelihood of int targets (...) under log-probabilities (..., C)."""
    if reduction not in REDUCTIONS:
        raise ValueError(f"nll_loss: reduction must be 'mean', 'sum' or 'none', got "
                         f"{reduction!r}")
    xp = log_probabilities.backend.xp
    ids = target.data if isinstance(target, Tensor) else xp.asarray(target)
    if ids.dtype.kind not in "iu":
        raise DTypeError(f"nll_loss: targets must be integers, got {ids.dtype}")
    if ids.shape != log_probabilities.shape[:-1]:
        raise ShapeError(f"nll_loss: log-probabilities of shape {log_probabilities.shape} need "
                         f"targets of shape {log_probabilities.shape[:-1]} (the class axis is "
                         f"last), got {ids.shape}")
    valid = ids != ignore_index if ignore_index is not None else xp.ones(ids.shape, bool)
    classes = log_probabilities.shape[-1]
    considered = ids[valid]
    if considered.size and log_probabilities.backend.activate is None and (
            int(considered.min()) < 0 or int(considered.max()) >= classes):
        raise IndexError(f"nll_loss: targets must be in [0, {classes}) (or ignore_index), got "
                         f"values in [{int(considered.min())}, {int(considered.max())}]")
    grid = list(xp.meshgrid(*[xp.arange(n) for n in ids.shape], indexing="ij", sparse=True))
    picked = GetItem.apply(log_probabilities, index=(*grid, xp.where(valid, ids, 0)))
    weight = Tensor._make(valid.astype(log_probabilities.dtype), log_probabilities.backend)
    losses = picked * weight * -1.0
    if reduction == "none":
        return losses
    total = losses.sum()
    if reduction == "sum":
        return total
    count = Tensor._make(xp.maximum(valid.sum(), 1).astype(log_probabilities.dtype),
                         log_probabilities.backend)
    return total / count


def soft_cross_entropy(logits: Tensor, target: Tensor, label_smoothing=0.0,
                       reduction="mean") -> Tensor:
    """Cross-entropy against class probabilities (..., C) of the logits' shape: -sum(q ·
    log_softmax(logits)) per row, q = (1 - ε)·target + ε/C (PyTorch's); mean over rows."""
    if target.shape != logits.shape:
        raise ShapeError(f"cross_entropy: class-probability targets of shape {target.shape} "
                         f"for logits of shape {logits.shape}; they must match")
    if label_smoothing:
        target = target * (1 - label_smoothing) + label_smoothing / logits.shape[-1]
    losses = (target * LogSoftmax.apply(logits, axis=-1)).sum(axis=-1) * -1.0
    return _reduced("cross_entropy", losses, reduction)


def soft_cross_entropy_reference(logits, target, label_smoothing=0.0, reduction="mean") -> Any:
    q = target * (1 - label_smoothing) + label_smoothing / logits.shape[-1]
    return _reduced_reference(-(q * log_softmax_reference(logits)).sum(axis=-1), reduction)


def binary_cross_entropy_reference(probabilities, target, reduction="mean") -> Any:
    losses = -(target * np.maximum(np.log(probabilities), -100)
               + (1 - target) * np.maximum(np.log(1 - probabilities), -100))
    return _reduced_reference(losses, reduction)


@op(functions=(Log, Clip, Multiply, Subtract, Add, Mean, Sum),
    reference=binary_cross_entropy_reference, namespace="F",
    spec=InputSpec("elementwise", low=0.05, high=0.95, options={"reduction": REDUCTIONS}),
    summary="-(t · log p + (1 - t) · log(1 - p)), each log at least -100",
    pytorch="`F.binary_cross_entropy` (no weight; the shapes may broadcast)")
def binary_cross_entropy(probabilities, target, reduction="mean") -> Tensor:
    """Binary cross-entropy of probabilities in [0, 1]; each log is at least -100, as
    PyTorch's, so p = 0 or 1 gives a finite loss (and a finite gradient: the probabilities
    are clipped at e^-100 before the log)."""
    _floating("binary_cross_entropy", probabilities, target)
    log_p = probabilities.clip(min=SMALLEST).log()
    log_not_p = (1 - probabilities).clip(min=SMALLEST).log()
    losses = (target * log_p + (1 - target) * log_not_p) * -1.0
    return _reduced("binary_cross_entropy", losses, reduction)


def binary_cross_entropy_with_logits_reference(logits, target, pos_weight=None,
                                               reduction="mean") -> Any:
    log_sigmoid = -np.logaddexp(0, -logits)
    weight = 1 if pos_weight is None else 1 + (pos_weight - 1) * target
    return _reduced_reference((1 - target) * logits - weight * log_sigmoid, reduction)


@op(functions=(Logsigmoid, Multiply, Subtract, Add, Mean, Sum),
    reference=binary_cross_entropy_with_logits_reference, namespace="F",
    spec=InputSpec("elementwise", low=-3.0, high=3.0, options={"reduction": REDUCTIONS}),
    summary="binary cross-entropy of sigmoid(logits), stable; pos_weight on positives",
    pytorch="`F.binary_cross_entropy_with_logits` (no weight; the shapes may broadcast)")
def binary_cross_entropy_with_logits(logits, target, pos_weight=None,
                                     reduction="mean") -> Tensor:
    """(1 - t)·x - (1 + (pos_weight - 1)·t)·log sigmoid(x): log sigmoid without overflow."""
    weight = 1.0 if pos_weight is None else 1 + (pos_weight - 1) * target
    losses = (1 - target) * logits - weight * Logsigmoid.apply(logits)
    return _reduced("binary_cross_entropy_with_logits", losses, reduction)


@op(functions=(Subtract, Multiply, Mean, Sum),
    reference=lambda x, target, reduction="mean": _reduced_reference((x - target) ** 2,
                                                                    reduction),
    namespace="F", spec=InputSpec("elementwise", options={"reduction": REDUCTIONS}),
    summary="(x - target)², averaged", pytorch="`F.mse_loss` (the shapes may broadcast)")
def mse_loss(x, target, reduction="mean") -> Tensor:
    _floating("mse_loss", x, target)
    difference = x - target
    return _reduced("mse_loss", difference * difference, reduction)


@op(functions=(Subtract, Abs, Mean, Sum),
    reference=lambda x, target, reduction="mean": _reduced_reference(np.abs(x - target),
                                                                    reduction),
    namespace="F",
    spec=InputSpec("elementwise", distinct=True, options={"reduction": REDUCTIONS}),
    summary="|x - target|, averaged", pytorch="`F.l1_loss` (the shapes may broadcast)")
def l1_loss(x, target, reduction="mean") -> Tensor:
    _floating("l1_loss", x, target)
    return _reduced("l1_loss", (x - target).abs(), reduction)
