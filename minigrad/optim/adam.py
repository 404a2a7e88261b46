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

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0) -> None:
        beta1, beta2 = betas
        if lr < 0 or eps < 0 or weight_decay < 0 or not (0 <= beta1 < 1 and 0 <= beta2 < 1):
            raise ConfigError(f"{type(self).__name__}: needs lr, eps, weight_decay >= 0 and "
                              f"betas in [0, 1), got lr={lr}, betas={betas}, eps={eps}, "
                              f"weight_decay={weight_decay}")
        super().__init__(params, {"lr": lr, "betas": (beta1, beta2), "eps": eps,
                                  "weight_decay": weight_decay})

    decoupled_weight_decay = False  # AdamW: decay the parameter, not through the gradient

    def _buffer_names(self, group):
        return ("exp_avg", "exp_avg_sq")

    def _update(self, param, state, group):
        xp = param.backend.xp
        lr, eps, weight_decay = (float(group[name]) for name in ("lr", "eps", "weight_decay"))
        beta1, beta2 = (float(beta) for beta in group["betas"])
        step_size = lr / (1 - beta1 ** state["step"])
        root_bias_correction2 = math.sqrt(1 - beta2 ** state["step"])
        decoupled = self.decoupled_weight_decay

        def update(p, grad, exp_avg, exp_avg_sq) -> None:  # blocks of the four arrays
            if weight_decay and decoupled:
                p *= 1 - lr * weight_decay
            elif weight_decay:
                grad = grad + weight_decay * p  # the decay goes through the adaptive step
            work = xp.multiply(grad, 1 - beta1)
            exp_avg *= beta1
            exp_avg += work
            xp.multiply(grad, grad, out=work)
            work *= 1 - beta2
            exp_avg_sq *= beta2
            exp_avg_sq += work

            # m / (sqrt(v) / rb2 + eps) * step_size, rb2 = sqrt(1 - beta2^t), as
            # m / (sqrt(v) + eps * rb2) * (step_size * rb2): one pass fewer
            denom = xp.sqrt(exp_avg_sq, out=work)
            denom += eps * root_bias_correction2
            step = xp.divide(exp_avg, denom, out=work)
            step *= step_size * root_bias_correction2
            p -= step

        return update, (param.data, param.grad.data, state["exp_avg"], state["exp_avg_sq"])


class AdamW(Adam):
    """Adam with decoupled weight decay: p = p * (1 - lr * weight_decay) before the Adam step,
    so the decay is not scaled by the adaptive denominator (PyTorch's AdamW)."""

    decoupled_weight_decay = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2) -> None:
        super().__init__(params, lr, betas, eps, weight_decay)
