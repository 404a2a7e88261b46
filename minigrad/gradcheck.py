"""Finite-difference checks of gradients (float64, central differences, random upstream
gradients: checking only `.sum()` would miss errors that sum to zero)."""

from __future__ import annotations

import numpy as np

from .autograd import grad
from .errors import GradcheckError
from .tensor import Tensor


def _as_tuple(outputs):
    return (outputs,) if isinstance(outputs, Tensor) else tuple(outputs)


def _float64_inputs(inputs):
    cast = []
    for t in inputs:
        if isinstance(t, Tensor) and t.dtype.kind == "f":
            copy = Tensor._make(t.data.astype(np.float64), t.backend)
            cast.append(copy.requires_grad_(t.requires_grad))
        else:
            cast.append(t)
    return cast


def _check_close(name, index, analytic, numeric, atol, rtol):
    error = np.abs(analytic - numeric) - (atol + rtol * np.abs(numeric))
    if error.size and error.max() > 0:
        worst = np.unravel_index(int(np.argmax(error)), error.shape)
        raise GradcheckError(
            f"{name}: gradient of input {index} is wrong at element {tuple(map(int, worst))}: "
            f"analytical {analytic[worst]!r}, numerical {numeric[worst]!r} "
            f"(atol={atol}, rtol={rtol})")


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, seed=0, name="gradcheck") -> bool:
    """Check d(fn)/d(inputs that require grad) against central differences, in float64.

    `fn(*inputs)` returns a Tensor or a tuple of Tensors; the check contracts them with random
    upstream gradients. Returns True, or raises GradcheckError naming the input, the worst
    element, and both values."""
    inputs = _float64_inputs(inputs)
    checked = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    outputs = _as_tuple(fn(*inputs))
    rng = np.random.default_rng(seed)
    upstream = [rng.standard_normal(o.shape) for o in outputs]
    differentiable = [o for o in outputs if o.requires_grad]
    if differentiable:
        seeds = [Tensor._make(o.backend.from_host(u.astype(o.dtype)), o.backend)
                 for o, u in zip(outputs, upstream) if o.requires_grad]
        analytic: tuple[Tensor | None, ...] = grad(
            differentiable, [inputs[i] for i in checked], seeds, allow_unused=True)
    else:
        analytic = (None,) * len(checked)

    def objective() -> float:  # recorded like any call: fn may itself differentiate (gradgradcheck)
        values = _as_tuple(fn(*inputs))
        return sum(float((v.numpy().astype(np.float64) * u).sum())
                   for v, u in zip(values, upstream))

    for position, i in enumerate(checked):
        tensor = inputs[i]
        host = tensor.numpy()
        numeric = np.zeros(host.shape)
        flat = host.reshape(-1)
        for j in range(flat.size):
            original = flat[j]
            flat[j] = original + eps
            tensor.data = tensor.backend.from_host(host.copy())
            plus = objective()
            flat[j] = original - eps
            tensor.data = tensor.backend.from_host(host.copy())
            minus = objective()
            flat[j] = original
            numeric.reshape(-1)[j] = (plus - minus) / (2 * eps)
        tensor.data = tensor.backend.from_host(host)
        found = analytic[position]
        computed = np.zeros(host.shape) if found is None else found.numpy()
        _check_close(name, i, computed, numeric, atol, rtol)
    return True


def gradgradcheck(fn, inputs, grad_outputs=None, eps=1e-6, atol=1e-5, rtol=1e-3, seed=0) -> bool:
    """Check second derivatives: gradcheck of the function (inputs, v) -> vᵀ·∂fn/∂inputs,
    whose gradient is only right if every op's backward is itself differentiable."""
    inputs = _float64_inputs(inputs)
    checked = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    outputs = _as_tuple(fn(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(seed + 1)
        grad_outputs = [Tensor._make(o.backend.from_host(rng.standard_normal(o.shape)), o.backend)
                        for o in outputs]
    grad_outputs = [g.astype(np.float64).detach().requires_grad_() for g in _as_tuple(
        grad_outputs)]
    n = len(inputs)

    def first_derivative(*args: Tensor) -> tuple[Tensor, ...]:
        values, vs = list(args[:n]), list(args[n:])
        outs = _as_tuple(fn(*values))
        pairs = [(o, v) for o, v in zip(outs, vs) if o.requires_grad]
        grads = grad([o for o, _ in pairs], [values[i] for i in checked], [v for _, v in pairs],
                     create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None and g.requires_grad)

    return gradcheck(first_derivative, inputs + grad_outputs, eps, atol, rtol, seed,
                     name="gradgradcheck")
