"""minigrad.optim: optimizers, learning-rate schedules, gradient clipping (PyTorch's names and
update rules) and a moving average of the weights."""

from .adam import Adam, AdamW  # noqa: F401
from .averaging import ExponentialMovingAverage  # noqa: F401
from .clip import clip_grad_norm_, clip_grad_value_  # noqa: F401
from .optimizer import Optimizer  # noqa: F401
from .schedules import LambdaLR, LRScheduler, NoamSchedule, WarmupCosine  # noqa: F401
from .sgd import SGD  # noqa: F401
