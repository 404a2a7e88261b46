"""The study builds on the product, never the reverse: no module of transformer/ outside
transformer/study/ imports the study."""

import ast
from pathlib import Path

import transformer

PACKAGE = Path(transformer.__file__).parent


def imported_modules(path: Path, text: str | None = None) -> list[str]:
    """The absolute names `path` (its text, or `text` in its place) imports: each module and
    each module.name of a `from` import, relative imports resolved."""
    package = ["transformer", *path.relative_to(PACKAGE).parent.parts]
    names = []
    tree = ast.parse(path.read_text() if text is None else text, str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            names += [module] + [f"{module}.{alias.name}" for alias in node.names]
    return names


def imports_the_study(name: str) -> bool:
    return name == "transformer.study" or name.startswith("transformer.study.")


def test_nothing_outside_the_study_imports_it():
    outside = [path for path in PACKAGE.rglob("*.py")
               if path.relative_to(PACKAGE).parts[0] != "study"]
    offenders = [f"{path.relative_to(PACKAGE)} imports {name}" for path in outside
                 for name in imported_modules(path) if imports_the_study(name)]
    assert len(outside) > 20 and offenders == []


def test_every_form_of_importing_the_study_is_seen():
    flow = PACKAGE / "monitoring" / "flow.py"
    for text in ("from ..study import Study", "from .. import study",
                 "import transformer.study.grid", "from transformer.study.toolkit import Check"):
        assert any(imports_the_study(name) for name in imported_modules(flow, text)), text
    assert not any(imports_the_study(name)
                   for name in imported_modules(flow, "from ..instruments import select"))
