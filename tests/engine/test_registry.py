"""The op table itself: every Function is declared, entries are consistent with the callables
they describe and with the namespaces and Tensor methods they put them in, and the files
generated from the table (docs/ops.md, minigrad/ops/functions.py, minigrad/tensor_methods.py)
are what the checkout's own script writes."""

import importlib
import inspect
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import minigrad
from minigrad.autograd import BuiltinFunction, Function
from minigrad.errors import OpDefinitionError
from minigrad.nn import functional as F
from minigrad.ops.activations import _Activation
from minigrad.ops.convolution import _Convolution
from minigrad.ops.elementwise import BinaryFunction, _PairExtremum
from minigrad.ops.reduce import Reduction, _Extremum
from minigrad.ops.registry import SHAPE_RULES, ops, registered_functions
from minigrad.ops.rounding import _Rounding, _Step
from minigrad.tensor_methods import TensorMethods
from minigrad.testing.op_checks import public_function

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "make_ops_doc.py"

# Shared bases that are never applied themselves: not expected in the table.
ABSTRACT_FUNCTIONS = (Function, BuiltinFunction, BinaryFunction, _PairExtremum, Reduction,
                      _Extremum, _Step, _Rounding, _Activation, _Convolution)


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


def test_every_function_of_minigrad_is_a_builtin_function():
    """The op set's treatment (numbers as inputs, no per-call checks) is declared by the base
    class, never read from the module an op is defined in."""
    outside = sorted(cls.__qualname__ for cls in _minigrad_function_classes()
                     if not issubclass(cls, BuiltinFunction) and cls is not BuiltinFunction)
    assert not outside, f"subclass BuiltinFunction: {', '.join(outside)}"


def test_every_function_is_declared():
    missing = _minigrad_function_classes() - registered_functions() - set(ABSTRACT_FUNCTIONS)
    names = sorted(f"{cls.__module__}.{cls.__qualname__}" for cls in missing)
    assert not names, f"declare these with @op (minigrad/ops/registry.py): {', '.join(names)}"


def _public_functions(namespace, defined_in):
    return [(name, value) for name, value in vars(namespace).items()
            if inspect.isfunction(value) and value.__module__.startswith(defined_in)
            and not name.startswith("_")]


def test_every_public_op_function_is_declared():
    """mg.* functions from minigrad.ops and F.* functions: each is some entry's callable
    (`mg.op`, the declaration itself, aside)."""
    calls = {public_function(op) for op in ops()} | {minigrad.op}
    public = (_public_functions(minigrad, "minigrad.ops.")
              + _public_functions(F, "minigrad.nn.functional"))
    missing = [name for name, value in public if value not in calls]
    assert not missing, f"public ops without a declaration: {missing}"


def test_declarations_put_each_op_where_they_say():
    namespaces = {"mg": minigrad, "F": F}
    for op in ops():
        if op.namespace is not None:
            assert getattr(namespaces[op.namespace], op.name) is public_function(op), op.name
        if op.method is not None:
            assert op.method in vars(TensorMethods), op.name
        for name in op.operators:
            assert name in vars(TensorMethods), f"{op.name}: {name}"
        assert (op.function or op.functions[0]).op is op


def test_entries_are_consistent():
    names = [op.name for op in ops()]
    assert len(names) == len(set(names)), "op names must be unique"
    for op in ops():
        assert op.spec.rule in SHAPE_RULES, op.name
        assert all(issubclass(fn, Function) and fn not in ABSTRACT_FUNCTIONS
                   for fn in op.functions), op.name
        assert bool(op.functions) == op.differentiable, op.name
        assert (op.reference is None) == op.random, op.name
        assert op.summary, op.name
        parameters = inspect.signature(public_function(op)).parameters
        for option in op.spec.options:
            assert option in parameters, f"{op.name}: no parameter {option!r}"


def test_internal_helpers_are_left_out_of_the_doc():
    doc = (ROOT / "docs" / "ops.md").read_text(encoding="utf-8")
    internal = [op.name for op in ops() if op.internal]
    assert {"tanh_backward", "sigmoid_backward"} <= set(internal)
    assert not [name for name in internal if f"| {name} |" in doc]


def _run_script(*args, env=None, cwd=None):
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=120, check=False)


def test_generated_files_are_up_to_date():
    result = _run_script("--check")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_doc_script_documents_its_own_checkout(tmp_path):
    """Run from elsewhere with another `minigrad` first on the path (as an installed package
    of a second checkout would be), it still writes this checkout's table."""
    impostor = tmp_path / "site" / "minigrad"
    impostor.mkdir(parents=True)
    (impostor / "__init__.py").write_text("raise ImportError('the wrong minigrad')\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    output = tmp_path / "out"
    output.mkdir()
    result = _run_script("--output", str(output), env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    for written in ("docs/ops.md", "minigrad/ops/functions.py", "minigrad/tensor_methods.py"):
        assert (output / Path(written).name).read_text(encoding="utf-8") == (
            ROOT / written).read_text(encoding="utf-8"), written


def test_the_surface_has_no_generated_code():
    """The op functions and methods are source in files: no exec, no namespace filled in."""
    source = (ROOT / "minigrad" / "ops" / "registry.py").read_text(encoding="utf-8")
    assert "exec(" not in source and "globals()" not in source
    assert "globals()" not in (ROOT / "minigrad" / "__init__.py").read_text(encoding="utf-8")
    assert inspect.getsourcefile(minigrad.exp).endswith("functions.py")
    assert inspect.getsourcefile(minigrad.Tensor.sum).endswith("tensor_methods.py")
    assert "e ** x" in minigrad.exp.__doc__


def test_a_builtin_ops_record_sends_to_its_generated_function():
    (exp,) = [entry for entry in ops() if entry.name == "exp"]
    with pytest.raises(OpDefinitionError, match="'exp': a built-in op declared on its class; "
                                                 "its function is minigrad.ops.functions.exp"):
        exp.call  # noqa: B018
    assert public_function(exp) is minigrad.exp
