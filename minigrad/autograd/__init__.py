"""Reverse-mode automatic differentiation.

One differentiable op is one `Function` subclass: `forward` computes on backend arrays,
`backward` returns one gradient per input, written with minigrad Tensor ops (a gradient of a
broadcast shape is summed back to its input's shape by the engine). The backward pass runs
under `no_grad` (nothing is recorded, each op is a thin wrapper) unless `create_graph=True`,
in which case it is recorded like any forward pass and can itself be differentiated
(gradients of gradients). An op that also defines `backward_arrays` (the same gradients on
arrays: the fused ops) has it called instead when the pass is not recorded; the engine makes
that choice, never the op. How an op is declared and checked: docs/extending.md.

One concern a file: `grad_mode.py` (`no_grad`, `enable_grad`, `detect_anomaly`),
`function.py` (`Function`, `BuiltinFunction`, `apply`), `backward_pass.py` (the backward pass,
`grad`).
"""

from .backward_pass import backward, grad, run_backward, unbroadcast
from .function import BuiltinFunction, Function
from .grad_mode import detect_anomaly, enable_grad, is_anomaly_enabled, is_grad_enabled, no_grad

__all__ = ["BuiltinFunction", "Function", "backward", "detect_anomaly", "enable_grad", "grad",
           "is_anomaly_enabled", "is_grad_enabled", "no_grad", "run_backward", "unbroadcast"]
