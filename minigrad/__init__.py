"""minigrad: a from-scratch tensor engine with reverse-mode automatic differentiation,
on NumPy (CPU) or CuPy (NVIDIA GPUs).

Every op is declared once, beside its `Function` class (`minigrad/ops/registry.py`); this
namespace's ops (`mg.exp`, `mg.matmul`, ...) are those of `minigrad/ops/functions.py`, and
`Tensor`'s methods and operators those of `minigrad/tensor_methods.py`, both generated from the
declarations; the fused ones are in `minigrad.nn.functional`. `mg.Function` and `mg.op`
define an op in user code (docs/extending.md)."""

__version__ = "0.1.0"

from . import autograd, creation, errors, nn, ops, optim, tensor_methods, testing, viz
from .autograd import Function, detect_anomaly, enable_grad, grad, is_grad_enabled, no_grad
from .backend import default_device, set_default_device
from .creation import (
    arange,
    empty,
    eye,
    full,
    full_like,
    linspace,
    ones,
    ones_like,
    rand,
    randint,
    randn,
    zeros,
    zeros_like,
)
from .gradcheck import gradcheck, gradgradcheck
from .ops.functions import *  # noqa: F403  mg.add, mg.exp, mg.sum, ..., mg.tril: the ops
from .ops.registry import InputSpec, op
from .random import get_rng_state, manual_seed, set_rng_state
from .serialization import load, save
from .tensor import Tensor, get_default_dtype, set_default_dtype, tensor

# Tensor completed, here only: its generated methods call the generated op functions, and its
# backward is the engine's
tensor_methods._ops = ops.functions
Tensor.backward = autograd.backward
