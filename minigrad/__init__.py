"""minigrad: a from-scratch tensor engine with reverse-mode automatic differentiation,
on NumPy (CPU) or CuPy (NVIDIA GPUs)."""

__version__ = "0.1.0"

from . import (  # noqa: F401
                       errors,  # noqa: F401
                       nn,
                       optim,
                       viz,
)
from .autograd import detect_anomaly, enable_grad, grad, is_grad_enabled, no_grad
from .backend import default_device, set_default_device
from .creation import arange, full, ones, ones_like, rand, randn, tril, triu, zeros, zeros_like
from .gradcheck import gradcheck, gradgradcheck
from .ops.compare import (
                       all,
                       any,
                       argmax,
                       equal,
                       greater,
                       greater_equal,
                       isfinite,
                       less,
                       less_equal,
                       logical_and,
                       logical_not,
                       logical_or,
                       not_equal,
)
from .ops.elementwise import (
                       abs,
                       add,
                       clip,
                       divide,
                       erf,
                       exp,
                       log,
                       masked_fill,
                       maximum,
                       minimum,
                       multiply,
                       negative,
                       power,
                       relu,
                       sigmoid,
                       sqrt,
                       subtract,
                       tanh,
                       where,
)
from .ops.indexing import index_add, topk
from .ops.linalg import matmul
from .ops.reduce import logsumexp, max, mean, min, sum, var
from .ops.shape import (
                       broadcast_to,
                       concatenate,
                       expand_dims,
                       reshape,
                       split,
                       squeeze,
                       stack,
                       swapaxes,
                       transpose,
)
from .random import get_rng_state, manual_seed, set_rng_state
from .serialization import load, save
from .tensor import Tensor, get_default_dtype, set_default_dtype, tensor
