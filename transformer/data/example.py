"""The unit of every translation data set: one sentence pair."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Example:
    """A source sentence, its target translation, and the phenomenon (or task) it shows."""

    src: str
    tgt: str
    phenomenon: str
