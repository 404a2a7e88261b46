"""The op set: one differentiable op = one `Function` subclass, declared with `@op`
(`registry.py`). Importing this package imports every op module, so declares their ops (the
fused ones are declared in `minigrad.nn.functional`, `tril`/`triu` in `minigrad.creation`)."""

from . import (
    activations,
    compare,
    convolution,
    cumulative,
    elementwise,
    exponential,
    gather,
    indexing,
    linalg,
    losses,
    nn,
    padding,
    reduce,
    resampling,
    rounding,
    shape,
    sorting,
    trigonometric,
)
