"""Stochastic gradient descent, with optional momentum, Nesterov momentum and weight decay."""

from ..errors import ConfigError
from .optimizer import Optimizer


class SGD(Optimizer):
    """PyTorch's SGD (dampening 0):

        d = g + weight_decay * p
        b = d at the first step, then momentum * b + d      (when momentum > 0)
        d = d + momentum * b  if nesterov  else  b
        p = p - lr * d
    """

    def __init__(self, params, lr, momentum=0.0, nesterov=False, weight_decay=0.0) -> None:
        if lr < 0 or momentum < 0 or weight_decay < 0:
            raise ConfigError(f"SGD: lr, momentum and weight_decay must be >= 0, got lr={lr}, "
                              f"momentum={momentum}, weight_decay={weight_decay}")
        if nesterov and momentum == 0:
            raise ConfigError("SGD: nesterov=True needs momentum > 0")
        super().__init__(params, {"lr": lr, "momentum": momentum, "nesterov": nesterov,
                                  "weight_decay": weight_decay})

    def _buffer_names(self, group):
        return ("momentum_buffer",) if group["momentum"] else ()

    def _update(self, param, state, group):
        xp = param.backend.xp
        lr, momentum = float(group["lr"]), float(group["momentum"])
        weight_decay, nesterov = float(group["weight_decay"]), group["nesterov"]
        first_step = state["step"] == 1

        def update(p, grad, *momentum_buffer) -> None:  # blocks of the arrays
            direction = grad
            if weight_decay:
                direction = grad + weight_decay * p
            if momentum:
                (buffer,) = momentum_buffer
                if first_step:
                    buffer[...] = direction
                else:
                    buffer *= momentum
                    buffer += direction
                direction = direction + momentum * buffer if nesterov else buffer
            p -= xp.multiply(direction, lr)

        buffers = (state["momentum_buffer"],) if momentum else ()
        return update, (param.data, param.grad.data, *buffers)
