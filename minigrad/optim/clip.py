"""Gradient clipping, between `backward()` and `optimizer.step()`, in place (the engine gives
every parameter a gradient array of its own)."""

from ..tensor import Tensor


def _gradients(params):
    params = [params] if isinstance(params, Tensor) else list(params)
    return [param for param in params if param.grad is not None]


def clip_grad_norm_(params, max_norm):
    """Scale all gradients by max_norm / (norm + 1e-6) when that is below 1, where norm is
    the L2 norm of all gradients together (as PyTorch). Returns the norm before clipping, as a
    Python float (the only transfer to the host)."""
    params = _gradients(params)
    if not params:
        return 0.0
    xp = params[0].backend.xp
    squares = sum(xp.vdot(param.grad.data, param.grad.data) for param in params)
    norm = float(xp.sqrt(squares))
    scale = max_norm / (norm + 1e-6)
    if scale < 1:
        for param in params:
            param.grad.data *= param.grad.dtype.type(scale)
    return norm


def clip_grad_value_(params, clip_value):
    """Clip every gradient element to [-clip_value, clip_value]."""
    for param in _gradients(params):
        param.backend.xp.clip(param.grad.data, -clip_value, clip_value, out=param.grad.data)
