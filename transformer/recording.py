"""Recording what the model computes, on the line that computes it.

A module that mixes in `Recorded` names what its forward materializes:
`q = self.seen("q", self.split_heads(self.q_proj(x)))` returns its value unchanged, and while
a `Recorder` watches the module it is also handed `(module, name, value, frame)`, `frame` the
caller's (its function and line: where the value was computed). Nothing watches by default,
and then `seen` is one attribute test.

    with SomeRecorder(model) as recorder:   # a Recorder subclass: what to keep
        model(src, tgt_in)
"""

from __future__ import annotations

import sys
from abc import ABC, abstractmethod
from types import FrameType
from typing import Any, TypeVar

Value = TypeVar("Value")


class Recorded:
    """A module whose forward names what it computes with `seen`; `recorder` is the Recorder
    watching it, or None."""

    recorder: Any = None

    @property
    def watched(self) -> bool:
        """Whether a Recorder is watching (for work done only then, such as the attention
        weights the fused op otherwise never keeps)."""
        return self.recorder is not None

    def seen(self, name: str, value: Value) -> Value:
        """`value`, handed first (with the caller's frame) to the watching Recorder, if any."""
        if self.recorder is not None:
            self.recorder.record(self, name, value, sys._getframe(1))
        return value


class Recorder(ABC):
    """Watches the `Recorded` modules of `model` of the types in `watches` (all by default)
    within a `with` block; the recorders watching them before are back after it.
    Subclasses say what to keep in `record`."""

    watches: tuple[type, ...] = (Recorded,)

    def __init__(self, model: Any) -> None:
        self.modules: list[Any] = [m for m in model.modules() if isinstance(m, self.watches)]
        self._before: list = []

    @abstractmethod
    def record(self, module: Any, name: str, value: Any, frame: FrameType) -> None:
        """Keep what is wanted of `value`, named `name` by `module` in `frame`."""

    def __enter__(self) -> Any:
        self._before = [module.recorder for module in self.modules]
        for module in self.modules:
            module.recorder = self
        return self

    def __exit__(self, *exc: object) -> None:
        for module, before in zip(self.modules, self._before):
            module.recorder = before
