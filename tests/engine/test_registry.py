"""The op registry itself: every Function is registered, entries are consistent with the
callables they describe, and docs/ops.md is generated from the current table."""

import importlib
import inspect
import pkgutil
from pathlib import Path

import minigrad
from minigrad.autograd import Function
from minigrad.nn import functional as F
from minigrad.ops.registry import (
    ABSTRACT_FUNCTIONS,
    OPS,
    SHAPE_RULES,
    ops_markdown,
    registered_functions,
)

ROOT = Path(__file__).resolve().parents[2]


def _minigrad_function_classes():
    """Every Function subclass defined in minigrad, after importing every minigrad module."""
    for module in pkgutil.walk_packages(minigrad.__path__, "minigrad."):
        importlib.import_module(module.name)
    found, pending = set(), [Function]
    while pending:
        for subclass in pending.pop().__subclasses__():
            if subclass not in found:
                found.add(subclass)
                pending.append(subclass)
    return {cls for cls in found if cls.__module__.startswith("minigrad.")}


def test_every_function_is_registered():
    missing = _minigrad_function_classes() - registered_functions() - set(ABSTRACT_FUNCTIONS)
    names = sorted(f"{cls.__module__}.{cls.__qualname__}" for cls in missing)
    assert not names, f"add an entry to OPS in minigrad/ops/registry.py for: {', '.join(names)}"


def _public_functions(prefix, namespace, defined_in):
    return [(f"{prefix}.{name}", value) for name, value in vars(namespace).items()
            if inspect.isfunction(value) and value.__module__.startswith(defined_in)
            and not name.startswith("_")]


def test_every_public_op_function_is_registered():
    """mg.* functions from minigrad.ops and F.* functions: each is some entry's callable."""
    calls = {op.call for op in OPS}
    public = (_public_functions("mg", minigrad, "minigrad.ops.")
              + _public_functions("F", F, "minigrad.nn.functional"))
    missing = [name for name, value in public if value not in calls]
    assert not missing, f"public ops without a registry entry: {missing}"


def test_entries_are_consistent():
    names = [op.name for op in OPS]
    assert len(names) == len(set(names)), "op names must be unique"
    for op in OPS:
        assert op.spec.rule in SHAPE_RULES, op.name
        assert all(issubclass(fn, Function) and fn not in ABSTRACT_FUNCTIONS
                   for fn in op.functions), op.name
        assert bool(op.functions) == op.differentiable, op.name
        assert (op.reference is None) == op.random, op.name
        assert op.summary, op.name
        try:
            parameters = inspect.signature(op.call).parameters
        except ValueError:  # builtins (operator.getitem)
            continue
        for option in op.spec.options:
            assert option in parameters, f"{op.name}: no parameter {option!r}"


def test_ops_doc_is_up_to_date():
    committed = (ROOT / "docs" / "ops.md").read_text(encoding="utf-8")
    assert committed == ops_markdown(), "run: python scripts/make_ops_doc.py"
