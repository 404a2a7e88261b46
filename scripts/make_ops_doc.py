"""Write docs/ops.md, the op list, from the op table of the checkout this script is in.

Run after adding or changing an op:  python scripts/make_ops_doc.py
`--check` writes nothing and exits 1 when docs/ops.md differs from the table.
"""

import argparse
import inspect
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # document this checkout, whatever minigrad is installed

from minigrad.ops.registry import SHAPE_RULES, InputSpec, ops  # noqa: E402  (after the path)
from minigrad.tensor import Tensor  # noqa: E402

OUTPUT = ROOT / "docs" / "ops.md"

# The table's sections: the module an op is declared in.
SECTIONS = {
    "minigrad.ops.elementwise": "Elementwise",
    "minigrad.creation": "Elementwise",
    "minigrad.ops.reduce": "Reductions",
    "minigrad.ops.linalg": "Products",
    "minigrad.ops.shape": "Shape",
    "minigrad.ops.indexing": "Indexing",
    "minigrad.nn.functional": "Fused neural-network ops (minigrad.nn.functional as F)",
    "minigrad.ops.compare": "Without gradient",
}


def call_text(op):
    """The op's function as users reach it: mg.exp(x), F.softmax(...), Tensor.astype(...)."""
    try:
        signature = str(inspect.signature(op.call))
    except ValueError:
        signature = "(...)"
    if op.namespace is not None:
        return f"{op.namespace}.{op.name}{signature}"
    if op.method is not None:
        return f"Tensor.{op.method}{signature}"
    return f"{op.call.__module__}.{op.name}{signature}"


# How a Tensor operator reads (the reflected ones, `2 - x`, read the same).
OPERATOR_SYMBOLS = {
    "__add__": "a + b", "__sub__": "a - b", "__mul__": "a * b", "__truediv__": "a / b",
    "__pow__": "a ** b", "__matmul__": "a @ b", "__neg__": "-x", "__eq__": "a == b",
    "__ne__": "a != b", "__lt__": "a < b", "__le__": "a <= b", "__gt__": "a > b",
    "__ge__": "a >= b", "__and__": "a & b", "__or__": "a \\| b", "__invert__": "~x",
    "__getitem__": "x[index]",
}


def on_tensor(op):
    """The op's Tensor method and operators, as users write them."""
    forms = []
    if op.method is not None:
        takes = list(inspect.signature(getattr(Tensor, op.method)).parameters)[1:]
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
        "Adding an op: [extending.md](extending.md).",
    ]
    public = [op for op in ops() if not op.internal]
    for section in dict.fromkeys(SECTIONS.values()):
        rows = [op for op in public if SECTIONS.get(op.call.__module__) == section]
        if not rows:
            continue
        lines += ["", f"## {section}", "",
                  "| op | call | on Tensor | summary | Function classes | inputs | flags |",
                  "|---|---|---|---|---|---|---|"]
        for op in rows:
            classes = ", ".join(fn.__name__ for fn in op.functions) or "-"
            summary = op.summary.replace("|", "\\|")
            lines.append(f"| {op.name} | `{call_text(op)}` | {on_tensor(op)} | {summary} | "
                         f"{classes} | {_inputs(op.spec)} | {_flags(op)} |")
    used = {op.spec.rule for op in public}
    lines += ["", "## Shape rules", "", "| rule | inputs |", "|---|---|"]
    lines += [f"| {rule} | {text} |" for rule, text in SHAPE_RULES.items() if rule in used]
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 if docs/ops.md is not what the table gives")
    parser.add_argument("--output", type=Path, default=OUTPUT, help="where to write")
    args = parser.parse_args(argv)
    text = ops_markdown()
    if args.check:
        if args.output.read_text(encoding="utf-8") != text:
            print(f"{args.output} is out of date: run python scripts/make_ops_doc.py")
            return 1
        return 0
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
