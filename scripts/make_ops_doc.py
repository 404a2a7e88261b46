"""Write docs/ops.md, the op list, from the op registry (minigrad/ops/registry.py).

Run after adding an op: python scripts/make_ops_doc.py
"""

from pathlib import Path

from minigrad.ops.registry import ops_markdown

OUTPUT = Path(__file__).resolve().parent.parent / "docs" / "ops.md"

if __name__ == "__main__":
    OUTPUT.write_text(ops_markdown(), encoding="utf-8")
    print(f"wrote {OUTPUT}")
