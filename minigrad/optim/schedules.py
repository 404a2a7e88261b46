"""Learning-rate schedules: each sets every group's lr from the group's initial lr and the
number of `step()` calls so far. Call `scheduler.step()` after `optimizer.step()`."""

import math
from typing import Any

from ..errors import ConfigError


class LRScheduler:
    """The common part: `initial_lr` kept in each group (the group's lr when the first schedule
    was attached), the step count, `get_last_lr()` and checkpoints. A subclass defines
    `lr_at(initial_lr, step_count)`, where `step_count` is the number of `step()` calls made
    before this lr is used (0 for the optimizer's first update)."""

    def __init__(self, optimizer) -> None:
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group.setdefault("initial_lr", group["lr"])
        self.step_count = 0
        self._apply()

    def lr_at(self, initial_lr: float, step_count: int) -> float:
        raise NotImplementedError

    def step(self) -> None:
        """Move to the lr of the next optimizer update."""
        self.step_count += 1
        self._apply()

    def get_last_lr(self) -> list[float]:
        """The lr of each group, as this schedule last set it."""
        return list(self._last_lr)

    def _apply(self) -> None:
        self._last_lr = []
        for group in self.optimizer.param_groups:
            group["lr"] = self.lr_at(group["initial_lr"], self.step_count)
            self._last_lr.append(group["lr"])

    def state_dict(self) -> dict[str, Any]:
        return {"step_count": self.step_count}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Continue from a saved step count (load the optimizer's state first or after: the
        lr set here depends only on `initial_lr` and the step count)."""
        self.step_count = int(state_dict["step_count"])
        self._apply()


class LambdaLR(LRScheduler):
    """lr = initial_lr * lr_lambda(step_count), as PyTorch's LambdaLR (step_count from 0)."""

    def __init__(self, optimizer, lr_lambda) -> None:
        self.lr_lambda = lr_lambda
        super().__init__(optimizer)

    def lr_at(self, initial_lr: float, step_count: int) -> float:
        return initial_lr * self.lr_lambda(step_count)


class NoamSchedule(LRScheduler):
    """The Transformer's schedule (Vaswani et al., 2017, §5.3): linear warmup, then decay as
    the inverse square root of the step number s (counted from 1 for the first update):

        lr(s) = initial_lr * factor * d_model^-0.5 * min(s^-0.5, s * warmup_steps^-1.5)

    It peaks at s = warmup_steps. The paper's schedule is initial_lr = 1, factor = 1."""

    def __init__(self, optimizer, d_model, warmup_steps, factor=1.0) -> None:
        if d_model < 1 or warmup_steps < 1 or factor <= 0:
            raise ConfigError(f"NoamSchedule: needs d_model >= 1, warmup_steps >= 1 and factor "
                              f"> 0, got d_model={d_model}, warmup_steps={warmup_steps}, "
                              f"factor={factor}")
        self.d_model, self.warmup_steps, self.factor = d_model, warmup_steps, factor
        super().__init__(optimizer)

    @staticmethod
    def peak(d_model: int, warmup_steps: int, factor: float = 1.0) -> float:
        """The schedule's highest rate for initial_lr 1, at s = warmup_steps:
        factor / sqrt(d_model * warmup_steps)."""
        return factor * (d_model * warmup_steps) ** -0.5

    def lr_at(self, initial_lr: float, step_count: int) -> float:
        s = step_count + 1
        return (initial_lr * self.factor * self.d_model ** -0.5
                * min(s ** -0.5, s * self.warmup_steps ** -1.5))


class WarmupCosine(LRScheduler):
    """Linear warmup to the peak initial_lr * factor over `warmup_steps` updates, then a half
    cosine down to `min_lr` at update `total_steps`, then `min_lr`. Updates s are counted
    from 1:

        lr(s) = peak * s / warmup_steps                                     s <= warmup_steps
        lr(s) = min_lr + (peak - min_lr) * (1 + cos(pi * progress)) / 2
                with progress = (s - warmup_steps) / (total_steps - warmup_steps)

    A run of at most `warmup_steps` updates ends inside the warmup: its rate only rises.
    """

    def __init__(self, optimizer, warmup_steps, total_steps, min_lr=0.0, factor=1.0) -> None:
        if warmup_steps < 0 or total_steps < 1 or min_lr < 0 or factor <= 0:
            raise ConfigError(f"WarmupCosine: needs warmup_steps >= 0, total_steps >= 1, "
                              f"min_lr >= 0 and factor > 0, got warmup_steps="
                              f"{warmup_steps}, total_steps={total_steps}, min_lr={min_lr}, "
                              f"factor={factor}")
        self.warmup_steps, self.total_steps, self.min_lr = warmup_steps, total_steps, min_lr
        self.factor = factor
        super().__init__(optimizer)

    def lr_at(self, initial_lr: float, step_count: int) -> float:
        s, peak = step_count + 1, initial_lr * self.factor
        if s <= self.warmup_steps:
            return peak * s / self.warmup_steps
        if s >= self.total_steps:
            return self.min_lr
        progress = (s - self.warmup_steps) / (self.total_steps - self.warmup_steps)
        return self.min_lr + (peak - self.min_lr) * (1 + math.cos(math.pi * progress)) / 2
