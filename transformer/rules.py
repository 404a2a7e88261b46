"""What a field of a configuration allows, declared once on the field and checked by one
helper for every configuration (TransformerConfig, TrainingConfig, the RunSpec's parts):

    @dataclass(frozen=True)
    class TrainingConfig:
        steps: Annotated[int, at_least(1)] = 5000
        ...
        def __post_init__(self):
            rules.check(self)

`check` names every field that breaks its rule in one ConfigError line, with the rules
across fields that the configuration adds; `from_dict` refuses keys that are no field."""

from __future__ import annotations

import dataclasses
import math
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from .errors import ConfigError

T = TypeVar("T")


@dataclass(frozen=True)
class Rule:
    """`allows(value)`; `text` completes "must be ...": "an integer >= 1"."""

    allows: Callable[[Any], bool]
    text: str


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_real(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and \
        math.isfinite(value)


def at_least(least: int) -> Rule:
    """An integer >= `least`."""
    return Rule(lambda v: _is_int(v) and v >= least, f"an integer >= {least}")


def positive() -> Rule:
    """A finite number > 0."""
    return Rule(lambda v: _is_real(v) and v > 0, "a number > 0")


def non_negative(note: str = "") -> Rule:
    """A finite number >= 0; `note` says what 0 means."""
    return Rule(lambda v: _is_real(v) and v >= 0, f"a number >= 0{note}")


def rate(note: str = "") -> Rule:
    """A number in [0, 1) (a dropout rate, a decay); `note` says what 0 means."""
    return Rule(lambda v: _is_real(v) and 0 <= v < 1, f"a number in [0, 1){note}")


def one_of(*choices: str) -> Rule:
    return Rule(lambda v: v in choices, f"one of {', '.join(choices)}")


def optional(rule: Rule, meaning: str) -> Rule:
    """`rule`, or None (which means `meaning`)."""
    return Rule(lambda v: v is None or rule.allows(v), f"{rule.text}, or None ({meaning})")


BOOLEAN = Rule(lambda v: isinstance(v, bool), "true or false")
TEXT = Rule(lambda v: isinstance(v, str) and v != "", "a non-empty string")


def field_rules(cls: type) -> dict[str, Rule]:
    """{field name: its Rule} of the dataclass `cls` (the fields declared with one)."""
    if cls not in _RULES:
        hints = typing.get_type_hints(cls, include_extras=True)
        _RULES[cls] = {field.name: rule for field in dataclasses.fields(cls)
                       for rule in getattr(hints[field.name], "__metadata__", ())
                       if isinstance(rule, Rule)}
    return _RULES[cls]


_RULES: dict[type, dict[str, Rule]] = {}  # field_rules of each class, read once


def problems(config: Any) -> list[str]:
    """"NAME must be ..., got VALUE" for each field of `config` that breaks its rule."""
    return [f"{name} must be {rule.text}, got {getattr(config, name)!r}"
            for name, rule in field_rules(type(config)).items()
            if not rule.allows(getattr(config, name))]


def check(config: Any, across: Callable[[], list[str]] | None = None) -> None:
    """ConfigError naming every broken field rule of `config` and, when those hold, what
    `across()` (the rules across fields) finds; nothing when all hold."""
    found = problems(config)
    if not found and across is not None:
        found = across()
    if found:
        raise ConfigError(f"{type(config).__name__}: " + "; ".join(found))


def from_dict(cls: type[T], values: Mapping[str, Any]) -> T:
    """`cls(**values)`, a ConfigError naming keys of `values` that are no field of `cls`."""
    if not isinstance(values, Mapping):
        raise ConfigError(f"{cls.__name__}: expected a mapping of its fields, got "
                          f"{type(values).__name__}")
    known = [field.name for field in dataclasses.fields(cls)]  # type: ignore[arg-type]
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ConfigError(f"{cls.__name__}: unknown keys {unknown}; known: {known}")
    return cls(**values)
