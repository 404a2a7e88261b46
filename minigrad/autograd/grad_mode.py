"""Grad mode: whether ops record the graph (`no_grad`, `enable_grad`), and anomaly detection
(`detect_anomaly`); read on every op, so kept as the two slots of one object, `switches`."""

from __future__ import annotations

from collections.abc import Callable
from typing import ParamSpec, TypeVar

_P = ParamSpec("_P")  # a function decorated with no_grad / enable_grad: its parameters
_R = TypeVar("_R")  # and its result


class _GradMode:
    """The global switches every op reads: an instance's slots, the cheapest attributes to
    read (a class attribute is looked up through the class's dictionaries each time)."""

    __slots__ = ("enabled", "anomaly")

    def __init__(self) -> None:
        self.enabled = True
        self.anomaly = False


switches = _GradMode()


def is_grad_enabled() -> bool:
    return switches.enabled


def is_anomaly_enabled() -> bool:
    """Whether `detect_anomaly` is on: also the mode in which checks that would make a GPU
    wait (ids in range) run on the GPU."""
    return switches.anomaly


class _GradModeContext:
    """Base of `no_grad` / `enable_grad`: a context manager that is also a decorator."""

    mode = True

    def __enter__(self) -> None:
        self.previous = switches.enabled
        switches.enabled = self.mode

    def __exit__(self, *exc) -> None:
        switches.enabled = self.previous

    def __call__(self, function: Callable[_P, _R]) -> Callable[_P, _R]:
        def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
            with type(self)():
                return function(*args, **kwargs)

        wrapper.__name__ = function.__name__
        wrapper.__doc__ = function.__doc__
        return wrapper


class no_grad(_GradModeContext):
    """Record nothing inside this block: no graph, no saved arrays (inference, updates)."""

    mode = False


class enable_grad(_GradModeContext):
    """Record the graph inside this block even within `no_grad`."""

    mode = True


class detect_anomaly:
    """Inside this block, the first op whose forward or backward makes a NaN/Inf raises
    `AnomalyError`, naming the op and the line of user code that created it; and on a GPU,
    ids of embeddings and targets of cross-entropy are checked to be in range (a read by the
    host each, which a GPU step otherwise never makes)."""

    def __enter__(self) -> None:
        self.previous = switches.anomaly
        switches.anomaly = True

    def __exit__(self, *exc) -> None:
        switches.anomaly = self.previous
