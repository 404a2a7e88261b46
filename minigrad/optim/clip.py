"""Gradient clipping, between `backward()` and `optimizer.step()`, in place (the engine gives
every parameter a gradient array of its own)."""

from __future__ import annotations

from ..tensor import Tensor


def _gradients(params):
    params = [params] if isinstance(params, Tensor) else list(params)
    return [param for param in params if param.grad is not None]


def clip_grad_norm_(params, max_norm) -> Tensor:
    """Scale all gradients by max_norm / (norm + 1e-6) when that is below 1, where norm is
    the L2 norm of all gradients together (as PyTorch). Returns the norm before clipping, a
    0-d tensor on the gradients' device (NaN or Inf if a gradient is not finite).

    On the CPU the norm is read to decide whether to scale at all. On a GPU nothing is read:
    the gradients are gathered into one array (one launch), its norm taken and every element
    scaled by min(1, max_norm / (norm + 1e-6)) there, and each parameter's `.grad` becomes
    its view of that array, a handful of launches in all (one per parameter otherwise)."""
    params = _gradients(params)
    if not params:
        return Tensor(0.0)
    backend = params[0].backend
    xp = backend.xp
    if backend.activate is None:  # the CPU: a read is free, and most steps need no scaling
        squares = sum(xp.vdot(param.grad.data, param.grad.data) for param in params)
        norm = float(xp.sqrt(squares))
        scale = max_norm / (norm + 1e-6)
        if scale < 1:
            for param in params:
                param.grad.data *= param.grad.dtype.type(scale)
        return Tensor._make(xp.asarray(norm), backend)
    backend.activate()
    if len({param.grad.dtype for param in params}) > 1:  # mixed dtypes: one by one
        norm = xp.sqrt(sum(xp.vdot(param.grad.data, param.grad.data) for param in params))
        scale = xp.minimum(max_norm / (norm + 1e-6), 1)
        for param in params:
            param.grad.data *= scale.astype(param.grad.dtype)
        return Tensor._make(norm, backend)
    flat = xp.concatenate([param.grad.data.reshape(-1) for param in params])
    norm = xp.sqrt(xp.vdot(flat, flat))
    flat *= backend.kernels.clip_scale(norm, max_norm, flat.dtype)
    offset = 0
    for param in params:
        size = param.grad.size
        param.grad = Tensor._make(flat[offset:offset + size].reshape(param.grad.shape), backend)
        offset += size
    return Tensor._make(norm, backend)


def clip_grad_value_(params, clip_value) -> None:
    """Clip every gradient element to [-clip_value, clip_value]."""
    for param in _gradients(params):
        param.backend.xp.clip(param.grad.data, -clip_value, clip_value, out=param.grad.data)
