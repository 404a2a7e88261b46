"""Neither minigrad nor transformer has an import circle: the graph of a package's imports
(at module level or inside a function, read from the source; those under `if TYPE_CHECKING:`
aside, which only the type checker follows) has no cycle, so every module can be read, and
imported, after what it uses."""

import ast
from pathlib import Path

import pytest

import minigrad
import transformer


def _modules(package):
    """module name -> (path, whether it is a package's __init__), for every module of the
    package `package` (a module object)."""
    root = Path(package.__file__).resolve().parent
    modules = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return modules


def _is_type_checking(node):
    test = node.test
    return getattr(test, "id", getattr(test, "attr", None)) == "TYPE_CHECKING"


def _imported(name, path, is_package, modules):
    """The modules of `modules` that `name` imports (a package imported for its submodule aside)."""
    package = name if is_package else name.rpartition(".")[0]
    found = set()

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for other in child.orelse:
                    visit(ast.Module(body=[other], type_ignores=[]))
                continue
            if isinstance(child, ast.Import):
                found.update(alias.name for alias in child.names if alias.name in modules)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")[:len(package.split(".")) - child.level + 1]
                    target = ".".join(base + ([child.module] if child.module else []))
                else:
                    target = child.module or ""
                submodules = {f"{target}.{alias.name}" for alias in child.names} & set(modules)
                found.update(submodules)
                if target in modules and (child.module or len(submodules) < len(child.names)):
                    found.add(target)
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    found.discard(name)
    return found


def _cycle(graph):
    """One cycle of `graph` (a list of names, its first repeated last), or None."""
    state: dict = {}  # name -> "open" while on the path, "done" after

    def walk(name, path):
        state[name] = "open"
        for target in sorted(graph[name]):
            if state.get(target) == "open":
                return path[path.index(target):] + [target]
            if target not in state:
                found = walk(target, path + [target])
                if found:
                    return found
        state[name] = "done"
        return None

    for name in sorted(graph):
        if name not in state:
            found = walk(name, [name])
            if found:
                return found
    return None


@pytest.mark.parametrize("package", [minigrad, transformer], ids=lambda p: p.__name__)
def test_the_package_has_no_import_circle(package):
    modules = _modules(package)
    graph = {name: _imported(name, path, is_package, modules)
             for name, (path, is_package) in modules.items()}
    cycle = _cycle(graph)
    assert cycle is None, f"an import circle: {' -> '.join(cycle)}"


def test_the_graph_sees_an_import_inside_a_function_and_finds_a_circle(tmp_path):
    modules = {"p": (None, True), "p.a": (None, False), "p.b": (None, False)}
    path = tmp_path / "a.py"
    path.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from . import a\n"
                    "def f():\n    from . import b\n", encoding="utf-8")
    assert _imported("p.a", path, False, modules) == {"p.b"}
    assert _cycle({"p.a": {"p.b"}, "p.b": {"p.a"}}) == ["p.a", "p.b", "p.a"]
