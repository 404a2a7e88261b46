"""Write the files generated from the op table of the checkout this script is in: docs/ops.md
(the op list), minigrad/ops/functions.py (each op's public function) and
minigrad/tensor_methods.py (Tensor's methods and operators).

Run after adding or changing an op:  python scripts/make_ops_doc.py
`--check` writes nothing and exits 1 when a file differs from what the table gives.
The script imports minigrad, which imports the two Python files: after removing or renaming
an op, take its lines out of them by hand first.
"""

import argparse
import inspect
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # document this checkout, whatever minigrad is installed

from minigrad.ops.registry import (  # noqa: E402  (after the path)
    ALIASES,
    REFLECTED,
    SHAPE_RULES,
    InputSpec,
    forward_parameters,
    ops,
)

OUTPUT = ROOT / "docs" / "ops.md"
FUNCTIONS = ROOT / "minigrad" / "ops" / "functions.py"
METHODS = ROOT / "minigrad" / "tensor_methods.py"

# The table's sections: the module an op is declared in.
SECTIONS = {
    "minigrad.ops.elementwise": "Elementwise",
    "minigrad.ops.exponential": "Elementwise",
    "minigrad.ops.rounding": "Elementwise",
    "minigrad.ops.trigonometric": "Elementwise",
    "minigrad.creation": "Elementwise",
    "minigrad.ops.reduce": "Reductions",
    "minigrad.ops.cumulative": "Cumulative",
    "minigrad.ops.sorting": "Sorting",
    "minigrad.ops.linalg": "Products",
    "minigrad.ops.shape": "Shape",
    "minigrad.ops.indexing": "Indexing",
    "minigrad.ops.gather": "Indexing",
    "minigrad.ops.activations": "Activations (minigrad.nn.functional as F)",
    "minigrad.ops.padding": "Shape",
    "minigrad.ops.convolution": "Convolution and pooling (minigrad.nn.functional as F)",
    "minigrad.ops.resampling": "Convolution and pooling (minigrad.nn.functional as F)",
    "minigrad.ops.losses": "Losses (minigrad.nn.functional as F)",
    "minigrad.ops.nn": "Fused neural-network ops (minigrad.nn.functional as F)",
    "minigrad.nn.functional": "Fused neural-network ops (minigrad.nn.functional as F)",
    "minigrad.ops.compare": "Without gradient",
}


def declared_in(op):
    """The module of the op's declaration (its class's or its function's)."""
    return (op.function or op.functions[0]).__module__


def parameters(op):
    """The parameters of the op's public function, read from its declaration."""
    if op.function is None:
        return forward_parameters(op.functions[0])
    return list(inspect.signature(op.function).parameters.values())


def call_text(op):
    """The op's function as users reach it: mg.exp(x), F.softmax(...), Tensor.astype(...)."""
    signature = str(inspect.Signature(parameters(op)))
    if op.namespace is not None:
        return f"{op.namespace}.{op.name}{signature}"
    if op.method is not None:
        return f"Tensor.{op.method}{signature}"
    return f"{declared_in(op)}.{op.name}{signature}"


# How a Tensor operator reads (the reflected ones, `2 - x`, read the same).
OPERATOR_SYMBOLS = {
    "__add__": "a + b", "__sub__": "a - b", "__mul__": "a * b", "__truediv__": "a / b",
    "__pow__": "a ** b", "__matmul__": "a @ b", "__neg__": "-x", "__eq__": "a == b",
    "__ne__": "a != b", "__lt__": "a < b", "__le__": "a <= b", "__gt__": "a > b",
    "__ge__": "a >= b", "__and__": "a & b", "__or__": "a \\| b", "__invert__": "~x",
    "__getitem__": "x[index]", "__mod__": "a % b", "__floordiv__": "a // b",
    "__xor__": "a ^ b", "__lshift__": "a << b", "__rshift__": "a >> b",
}


def on_tensor(op):
    """The op's Tensor method and operators, as users write them."""
    forms = []
    if op.method is not None:
        takes = (list(inspect.signature(op.method_function).parameters)
                 if op.method_function is not None else parameters(op))[1:]
        forms.append(f"`x.{op.method}({'...' if takes else ''})`")
    forms += [f"`{OPERATOR_SYMBOLS[name]}`" for name in op.operators if name in OPERATOR_SYMBOLS]
    return ", ".join(forms)


def _inputs(spec):
    text = spec.rule_name
    if spec.min_ndim:
        text += f", >= {spec.min_ndim} dims"
    if spec.dtype != "float":
        text += f", {spec.dtype}"
    elif (spec.low, spec.high) != (InputSpec.low, InputSpec.high):
        text += f", values in [{spec.low:g}, {spec.high:g}]"
    if spec.kinks:
        text += ", away from " + ", ".join(f"{k:g}" for k in spec.kinks)
    if spec.distinct:
        text += ", no ties"
    return text


def _flags(op):
    flags = [flag for flag, on in (("no gradient", not op.differentiable),
                                   ("float only", op.float_only), ("random", op.random),
                                   ("no grad-of-grad", op.differentiable and not op.gradgrad))
             if on]
    return ", ".join(flags)


def ops_markdown():
    """docs/ops.md: the public ops of the table as Markdown (internal helpers left out)."""
    lines = [
        "# minigrad ops",
        "",
        "Generated from the op declarations (`minigrad/ops/registry.py`) by "
        "`scripts/make_ops_doc.py`; do not edit.",
        "Each op is checked by the generated tests in `tests/engine/test_ops_generated.py`:",
        "values against the NumPy reference, gradients and gradients of gradients against",
        "finite differences (float64, random upstream gradients), dtypes, unmodified inputs.",
        "The PyTorch column names each op's counterpart and, in brackets, where the two "
        "differ (a bare name: alike).",
        "Adding an op: [extending.md](extending.md).",
        "",
        "Axes are named as in NumPy and as in PyTorch: every function and Tensor method below "
        "that takes",
        "`axis` or `keepdims` also takes `dim` or `keepdim`, keyword-only (`x.sum(dim=1, "
        "keepdim=True)` is",
        "`x.sum(axis=1, keepdims=True)`); giving both spellings with different values is "
        "refused, naming",
        "the op and both values. Where `axis` has no default (`gather`, `scatter`, `unfold`, "
        "...) it is shown",
        "here as the op declares it, and the public function takes `dim=` in its place. The "
        "signatures below",
        "are the declarations', without the aliases.",
    ]
    public = [op for op in ops() if not op.internal]
    for section in dict.fromkeys(SECTIONS.values()):
        rows = [op for op in public if SECTIONS.get(declared_in(op)) == section]
        if not rows:
            continue
        lines += ["", f"## {section}", "",
                  "| op | call | on Tensor | summary | PyTorch | Function classes | inputs | "
                  "flags |",
                  "|---|---|---|---|---|---|---|---|"]
        for op in rows:
            classes = ", ".join(fn.__name__ for fn in op.functions) or "-"
            summary = op.summary.replace("|", "\\|")
            pytorch = (op.pytorch or f"`torch.{op.name}`").replace("|", "\\|")
            lines.append(f"| {op.name} | `{call_text(op)}` | {on_tensor(op)} | {summary} | "
                         f"{pytorch} | {classes} | {_inputs(op.spec)} | {_flags(op)} |")
    used = {op.spec.rule for op in public}
    lines += ["", "## Shape rules", "", "| rule | inputs |", "|---|---|"]
    lines += [f"| {rule} | {text} |" for rule, text in SHAPE_RULES.items() if rule in used]
    return "\n".join(lines) + "\n"


# ----- minigrad/ops/functions.py and minigrad/tensor_methods.py ------------------------------

GENERATED = "Generated from the op declarations by scripts/make_ops_doc.py; do not edit."


def _default(parameter):
    value = parameter.default
    if value is not None and type(value) not in (bool, int, float, str):
        raise SystemExit(f"error: {parameter.name}={value!r}: only None, bools, numbers and "
                         "strings can be written as a default; make the default None")
    return repr(value)


def _header(parameters, annotate):
    """The parameter list as source; `annotate(parameter)` gives a tensor input's annotation."""
    parts, keyword_only = [], False
    for p in parameters:
        if p.kind is p.VAR_POSITIONAL:
            parts.append(f"*{p.name}{annotate(p)}")
            keyword_only = True
        elif p.kind is p.VAR_KEYWORD:
            parts.append(f"**{p.name}")
        else:
            if p.kind is p.KEYWORD_ONLY and not keyword_only:
                parts.append("*")
                keyword_only = True
            if p.default is p.empty:
                parts.append(f"{p.name}{annotate(p) if p.kind is not p.KEYWORD_ONLY else ''}")
            else:
                parts.append(f"{p.name}={_default(p)}")
    return ", ".join(parts)


def _arguments(parameters, positional_defaults=False):
    """The call's arguments: tensors (no default) positionally, the others by keyword."""
    arguments = []
    for p in parameters:
        if p.kind is p.VAR_POSITIONAL:
            arguments.append(f"*{p.name}")
        elif p.kind is p.VAR_KEYWORD:
            arguments.append(f"**{p.name}")
        elif (p.default is p.empty or positional_defaults) and p.kind is not p.KEYWORD_ONLY:
            arguments.append(p.name)
        else:
            arguments.append(f"{p.name}={p.name}")
    return ", ".join(arguments)


def _with_aliases(parameters):
    """The parameters of a generated function or method: the op's own and, keyword-only,
    PyTorch's spellings (`ALIASES`: `dim` for `axis`); an `axis` without a default gets None
    as one, with the parameters after it that have none, so that `dim=` can stand for it. Also
    the aliased parameters and those needed (refused when left out)."""
    aliased = [p for p in parameters if p.name in ALIASES and p.kind is not p.KEYWORD_ONLY]
    if not aliased:
        return parameters, [], []
    first = parameters.index(aliased[0])
    needed = [p.name for p in parameters[first:] if p.default is p.empty and p.kind is
              p.POSITIONAL_OR_KEYWORD] if aliased[0].default is aliased[0].empty else []
    public = [p.replace(default=None) if p.name in needed else p for p in parameters]
    at = next((i for i, p in enumerate(public) if p.kind is p.VAR_KEYWORD), len(public))
    keyword_only = [inspect.Parameter(ALIASES[p.name], inspect.Parameter.KEYWORD_ONLY,
                                      default=None) for p in aliased]
    return public[:at] + keyword_only + public[at:], aliased, needed


def _alias_lines(name, aliased, needed, indent, helpers):
    """`axis = aliased(...)` where `dim` is given (one `is not None` test where it is not),
    then `missing(...)` where a needed parameter is None."""
    lines = []
    for p in aliased:
        alias = ALIASES[p.name]
        default = "None" if p.name in needed else _default(p)
        lines += [f"{indent}if {alias} is not None:",
                  f'{indent}    {p.name} = {helpers}aliased("{name}", "{p.name}", {p.name}, '
                  f"{default}, {alias})"]
    if needed:
        lines += [f"{indent}if {' or '.join(f'{n} is None' for n in needed)}:",
                  f'{indent}    {helpers}missing("{name}", '
                  f"{', '.join(f'{n}={n}' for n in needed)})"]
    return lines


def _def_line(indent, name, header, returns, suffix=""):
    """`def name(header) -> returns:`, its parameters on lines of their own past 100 columns."""
    line = f"{indent}def {name}({header}) -> {returns}:{suffix}"
    if len(line) <= 100:
        return [line]
    return [f"{indent}def {name}(", *(f"{indent}    {part}," for part in header.split(", ")),
            f"{indent}) -> {returns}:{suffix}"]


def _docstring(text, indent):
    lines = inspect.cleandoc(text).split("\n")
    body = "\n".join((indent + line) if line else "" for line in lines)
    return f'{indent}"""{body.lstrip()}"""' if len(lines) == 1 else \
        f'{indent}"""{body.lstrip()}\n{indent}"""'


def _tensor_annotation(cls):
    """A tensor input's annotation: an op of several inputs takes numbers and arrays too."""
    inputs = [p for p in forward_parameters(cls) if p.default is p.empty]
    several = len(inputs) > 1 or any(p.kind is p.VAR_POSITIONAL for p in inputs)
    return ": Operand" if several else ": Tensor"


def _relative(module):
    """The import path of a minigrad module from minigrad/ops/functions.py."""
    if module.startswith("minigrad.ops."):
        return "." + module[len("minigrad.ops."):]
    return ".." + module[len("minigrad."):]


def _isort_key(name):
    """isort's order of imported names: classes first, numbers within names by value (Log2
    before Log10)."""
    return (not name[0].isupper(), [int(part) if part.isdigit() else part
                                    for part in re.split(r"(\d+)", name)])


def _aliased_function(entry):
    """An op declared on a function that has `axis` or `keepdims`: its public function is
    written here, settling `dim`/`keepdim` and calling the declared one (`_<name>`)."""
    return entry.function is not None and bool(_with_aliases(parameters(entry))[1])


def functions_source():
    """minigrad/ops/functions.py: a function for each op declared on its class, and the `mg`
    namespace (`__all__`): those functions and the ops declared on functions (written out too
    where they take `dim`/`keepdim`)."""
    imports, definitions, exported = {}, [], []
    for entry in ops():
        if entry.function is None:
            cls = entry.functions[0]
            imports.setdefault(_relative(cls.__module__), set()).add(cls.__name__)
            inputs = forward_parameters(cls)
            annotation = _tensor_annotation(cls)
            public, aliased, needed = _with_aliases(inputs)
            header = _header(public, lambda p, a=annotation: a)
            definitions += ["", "", *_def_line("", entry.name, header, "Tensor"),
                            _docstring(cls.__doc__ or entry.summary, "    "),
                            *_alias_lines(entry.name, aliased, needed, "    ", ""),
                            *_return_line("    ", f"{cls.__name__}.apply", _arguments(inputs))]
        elif _aliased_function(entry):
            imports.setdefault(_relative(entry.function.__module__), set()).add(
                f"{entry.name} as _{entry.name}")
            inputs = parameters(entry)
            public, aliased, needed = _with_aliases(inputs)
            definitions += ["", "", *_def_line("", entry.name, _header(public, lambda p: ""),
                                               _return_annotation(entry)),
                            _docstring(entry.function.__doc__ or entry.summary, "    "),
                            *_alias_lines(entry.name, aliased, needed, "    ", ""),
                            *_return_line("    ", f"_{entry.name}", _arguments(inputs))]
        elif entry.namespace == "mg" or entry.method is not None or entry.operators:
            names = [entry.name] if entry.method_function is None or entry.namespace == "mg" \
                else []
            if entry.method_function is not None:
                names.append(entry.method_function.__name__)
            imports.setdefault(_relative(entry.function.__module__), set()).update(names)
        if entry.namespace == "mg":
            exported.append(entry.name)
    lines = ['"""Every op\'s public function: `mg.<name>` for those in `__all__`.', "",
             GENERATED,
             "An op declared on a function (`where`, `matmul`, ...) is that function, imported "
             "here; one",
             "declared on its Function class is written out below, with the class's docstring, "
             "and so is",
             "each function with `axis`/`keepdims`: it takes PyTorch's `dim`/`keepdim` too "
             "(`aliased`)."
             '"""', ""]
    imports["..tensor"] = {"Operand", "Tensor"}
    imports[".registry"] = {"aliased", "missing"}  # the methods' too: `_ops.aliased`
    used = set(exported) | {"Operand", "Tensor", "aliased", "missing"} | {
        entry.functions[0].__name__ for entry in ops() if entry.function is None}
    for module in sorted(imports):  # as isort: `..` before `.`, `x as _x` each on its own
        names = sorted((n for n in imports[module] if " as " not in n), key=_isort_key)
        renamed = sorted((n for n in imports[module] if " as " in n), key=_isort_key)
        groups = ([names] if names else []) + [[name] for name in renamed]
        for group in sorted(groups, key=lambda group: _isort_key(group[0])):
            lines += [f"from {module} import (",
                      *(f"    {name}," + ("" if name in used or " as " in name
                                          else "  # noqa: F401  (a Tensor method's)")
                        for name in group), ")"]
    lines += ["", "__all__ = [", *(f'    "{name}",' for name in exported), "]"]
    lines += definitions
    lines += [""]
    return "\n".join(lines)


def _method_target(entry):
    """What a generated method calls, through minigrad/ops/functions.py (`_ops`)."""
    if entry.function is None:
        return f"_ops.{entry.functions[0].__name__}.apply"
    return f"_ops._{entry.name}" if _aliased_function(entry) else f"_ops.{entry.name}"


def _method(entry):
    aliased, needed = [], []
    if entry.method_function is not None:
        own = list(inspect.signature(entry.method_function).parameters.values())
        target = f"_ops.{entry.method_function.__name__}"
        arguments = _arguments(own, positional_defaults=True)
        doc = entry.method_function.__doc__
    else:
        own = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
               *parameters(entry)[1:]]
        target = _method_target(entry)
        arguments = _arguments(own)
        own, aliased, needed = _with_aliases(own)  # settled here, then the op is called
        doc = (entry.functions[0].__doc__ if entry.function is None else entry.function.__doc__)
    returns = _return_annotation(entry)
    header = _header(own, lambda p: ": Tensor" if p.name == "self" else "")
    return ["", *_def_line("    ", entry.method, header, returns),
            _docstring(doc or entry.summary, "        "),
            *_alias_lines(entry.name, aliased, needed, "        ", "_ops."),
            *_return_line("        ", target, arguments)]


def _return_line(indent, target, arguments):
    """`return target(arguments)`, the arguments on lines of their own past 100 columns."""
    line = f"{indent}return {target}({arguments})"
    if len(line) <= 100:
        return [line]
    return [f"{indent}return {target}(", *(f"{indent}    {part}," for part in
                                            arguments.split(", ")), f"{indent})"]


def _return_annotation(entry):
    if entry.function is None:
        return "Tensor"
    annotation = inspect.signature(entry.function).return_annotation
    if annotation is inspect.Parameter.empty:
        return "Tensor"
    if isinstance(annotation, str):
        return annotation
    return inspect.formatannotation(annotation, "minigrad.tensor")  # Tensor, not the module's


def _operator(entry, name):
    binary = len([p for p in parameters(entry)
                  if p.default is p.empty]) > 1
    other = "index" if name == "__getitem__" else "other"
    operands = (f"{other}, self" if name in REFLECTED else f"self, {other}") if binary else "self"
    header = f"self: Tensor, {other}: Operand" if binary and other == "other" else \
        (f"self: Tensor, {other}" if binary else "self: Tensor")
    ignore = "  # type: ignore[override]" if name in ("__eq__", "__ne__") else ""
    return ["", f"    def {name}({header}) -> Tensor:{ignore}",
            f'        """{entry.summary.split(";")[0]} (`{entry.name}`)."""',
            f"        return {_method_target(entry)}({operands})"]


def methods_source():
    """minigrad/tensor_methods.py: `TensorMethods`, the ops' methods and operators, which
    `Tensor` inherits."""
    body = []
    for entry in ops():
        if entry.method is not None:
            body += _method(entry)
        for name in entry.operators:
            body += _operator(entry, name)
    lines = ['"""Tensor\'s methods and operators, one per declared op: `TensorMethods`, which '
             '`Tensor`', "inherits.", "", GENERATED,
             "Each calls the op's function or Function class in minigrad/ops/functions.py "
             "(`_ops`, bound", "by minigrad/__init__.py); `self` is a Tensor, the one class "
             "that inherits these."
             '"""', "", "from __future__ import annotations", "",
             "from typing import TYPE_CHECKING", "",
             "if TYPE_CHECKING:", "    from .ops import functions as _ops",
             "    from .tensor import Operand, Tensor", "else:",
             "    _ops = None  # minigrad.ops.functions, bound by minigrad/__init__.py", "", "",
             "class TensorMethods:",
             '    """The methods and operators of `Tensor` that run an op."""', "",
             "    __slots__ = ()", *body, ""]
    return "\n".join(lines)


GENERATED_FILES = {OUTPUT: ops_markdown, FUNCTIONS: functions_source, METHODS: methods_source}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if a generated file is not what the table gives")
    parser.add_argument("--output", type=Path, default=None,
                        help="write into this folder instead (docs/ops.md, functions.py, "
                             "tensor_methods.py)")
    args = parser.parse_args(argv)
    status = 0
    for path, make in GENERATED_FILES.items():
        text = make()
        target = path if args.output is None else args.output / path.name
        if args.check:
            if not target.exists() or target.read_text(encoding="utf-8") != text:
                print(f"{target} is out of date: run python scripts/make_ops_doc.py")
                status = 1
            continue
        target.write_text(text, encoding="utf-8")
        print(f"wrote {target}")
    return status


if __name__ == "__main__":
    sys.exit(main())
