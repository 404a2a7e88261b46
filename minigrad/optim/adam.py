"""Adam (Kingma & Ba, 2015) and AdamW (Loshchilov & Hutter, 2019): adaptive moment estimation."""

import math

from ..errors import ConfigError
from .optimizer import Optimizer


class Adam(Optimizer):
    """PyTorch's Adam, weight decay as an L2 term added to the gradient:

        g = g + weight_decay * p
        m = beta1 * m + (1 - beta1) * g                 v = beta2 * v + (1 - beta2) * g²
        p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        beta1, beta2 = betas
        if lr < 0 or eps < 0 or weight_decay < 0 or not (0 <= beta1 < 1 and 0 <= beta2 < 1):
            raise ConfigError(f"{type(self).__name__}: needs lr, eps, weight_decay >= 0 and "
                              f"betas in [0, 1), got lr={lr}, betas={betas}, eps={eps}, "
                              f"weight_decay={weight_decay}")
        super().__init__(params, {"lr": lr, "betas": (beta1, beta2), "eps": eps,
                                  "weight_decay": weight_decay})

    def _buffer_names(self, group):
        return ("exp_avg", "exp_avg_sq")

    def _update(self, param, state, group):
        grad = param.grad.data
        weight_decay = float(group["weight_decay"])
        if weight_decay:
            grad = grad + weight_decay * param.data  # the decay goes through the adaptive step
        self._adaptive_step(param, grad, state, group)

    def _adaptive_step(self, param, grad, state, group):
        """The Adam update of `param.data` from `grad`, in place, with one work array."""
        p, xp, work = param.data, param.backend.xp, self._scratch(param)
        beta1, beta2 = (float(beta) for beta in group["betas"])
        exp_avg, exp_avg_sq = state["exp_avg"], state["exp_avg_sq"]
        bias_correction1 = 1 - beta1 ** state["step"]
        bias_correction2 = 1 - beta2 ** state["step"]

        exp_avg *= beta1
        exp_avg += xp.multiply(grad, 1 - beta1, out=work)
        exp_avg_sq *= beta2
        xp.multiply(grad, grad, out=work)
        work *= 1 - beta2
        exp_avg_sq += work

        denom = xp.sqrt(exp_avg_sq, out=work)
        denom /= math.sqrt(bias_correction2)
        denom += float(group["eps"])
        step = xp.divide(exp_avg, denom, out=work)
        step *= float(group["lr"]) / bias_correction1
        p -= step


class AdamW(Adam):
    """Adam with decoupled weight decay: p = p * (1 - lr * weight_decay) before the Adam step,
    so the decay is not scaled by the adaptive denominator (PyTorch's AdamW)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr, betas, eps, weight_decay)

    def _update(self, param, state, group):
        weight_decay = float(group["weight_decay"])
        if weight_decay:
            param.data *= 1 - float(group["lr"]) * weight_decay
        self._adaptive_step(param, param.grad.data, state, group)
