"""One forward pass kept whole: every value the model names (`transformer.recording`), each
with the function, file and line that computed it, found at run time.

    with Recording(model) as recording:
        model(src, tgt_in)
    q = recording.value("encoder.layers.0.self_attn.sublayer", "q")    # a NumPy array
    where = recording.code("encoder.layers.0.self_attn.sublayer", "q")  # a Code

`code_at(function, text)` finds, with `inspect`, the line of a function that holds `text`:
where a value the model does not keep (the scores inside the fused attention op) is computed.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

import numpy as np

import transformer

from ..recording import Recorder

ROOT = Path(transformer.__file__).resolve().parent.parent  # where the packages sit


@dataclass(frozen=True)
class Code:
    """A line of code and the function holding it: `function` (qualified name), `file` (from
    the folder holding the packages), `line`, the function's `first_line` and its `source`."""

    function: str
    file: str
    line: int
    first_line: int
    source: str

    @property
    def key(self) -> str:
        """A name for this line, unique within a program: "function:line"."""
        return f"{self.function}:{self.line}"

    def as_dict(self) -> dict:
        return {"function": self.function, "file": self.file, "line": self.line,
                "first_line": self.first_line, "source": self.source}


@cache
def _function(code: CodeType) -> tuple[str, int, str]:
    """(file from ROOT, first line, source text) of the function whose code object is `code`."""
    lines, first = inspect.getsourcelines(code)
    path = Path(code.co_filename).resolve()
    file = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
    return file, first, "".join(lines)


def code_of(frame: FrameType) -> Code:
    """The Code of the line `frame` is running."""
    code = frame.f_code
    file, first, source = _function(code)
    return Code(_qualified_name(frame), file, frame.f_lineno, first, source)


def _qualified_name(frame: FrameType) -> str:
    """The qualified name of the function `frame` runs ("MultiHeadAttention.forward"): the
    code object's own (Python 3.11+), else the class of `self` (or a base) defining it."""
    code = frame.f_code
    if hasattr(code, "co_qualname"):
        return code.co_qualname
    owner = frame.f_locals.get("self")
    for cls in type(owner).__mro__ if owner is not None else ():
        if getattr(cls.__dict__.get(code.co_name), "__code__", None) is code:
            return f"{cls.__qualname__}.{code.co_name}"
    return code.co_name


def code_at(function: Any, text: str) -> Code:
    """The Code of the first line of `function` holding `text`; ValueError if none does."""
    function = inspect.unwrap(function)
    file, first, source = _function(function.__code__)
    for offset, line in enumerate(source.splitlines()):
        if text in line:
            return Code(function.__qualname__, file, first + offset, first, source)
    raise ValueError(f"code_at: no line of {function.__qualname__} ({file}) holds {text!r}")


class Recording(Recorder):
    """Within its `with` block, keeps every value the model's Recorded modules name, as a
    NumPy array per call, under (the module's dotted name in the model, the value's name),
    and the Code of the line that computed it."""

    def __init__(self, model: Any) -> None:
        super().__init__(model)
        self.names = {id(module): name for name, module in model.named_modules()}
        self.values: dict[tuple[str, str], list[np.ndarray]] = {}
        self.codes: dict[tuple[str, str], Code] = {}

    def record(self, module: Any, name: str, value: Any, frame: FrameType) -> None:
        key = (self.names[id(module)], name)
        self.values.setdefault(key, []).append(value.numpy())
        if key not in self.codes:
            self.codes[key] = code_of(frame)

    def value(self, module: str, name: str, call: int = 0) -> np.ndarray:
        """What `module` (dotted name) named `name` at its `call`-th call (from 0)."""
        try:
            return self.values[(module, name)][call]
        except (KeyError, IndexError):
            raise KeyError(f"Recording: {module!r} did not name {name!r} "
                           f"(call {call}) in this pass") from None

    def code(self, module: str, name: str) -> Code:
        """Where `module` computed `name`."""
        return self.codes[(module, name)]
