"""minigrad.optim: optimizers, learning-rate schedules and gradient clipping, with PyTorch's
names and update rules."""

from .adam import Adam, AdamW  # noqa: F401
from .clip import clip_grad_norm_, clip_grad_value_  # noqa: F401
from .optimizer import Optimizer  # noqa: F401
from .schedules import LambdaLR, LRScheduler, NoamSchedule, WarmupCosine  # noqa: F401
from .sgd import SGD  # noqa: F401
