"""Regenerate minigrad/testing/cupy_names.json, the API surface of CuPy that the CuPy
stand-in (minigrad/testing/fake_cupy.py) offers: a name missing from this list raises
AttributeError there, as it would in CuPy.

    pip install -e ".[gpu-cuda12]"      # or gpu-cuda13; imports without a GPU
    python scripts/make_cupy_names.py
"""

import json
from pathlib import Path

import cupy

OUT = Path(__file__).resolve().parents[1] / "minigrad" / "testing" / "cupy_names.json"
NAMESPACES = {
    "cupy": cupy,
    "cupy.ndarray": cupy.ndarray,
    "cupy.random": cupy.random,
    "cupy.linalg": cupy.linalg,
    "cupy.cuda": cupy.cuda,
}


def public_names(namespace):
    return sorted(name for name in dir(namespace) if not name.startswith("_"))


def main():
    names = {"version": cupy.__version__,
             **{label: public_names(namespace) for label, namespace in NAMESPACES.items()}}
    OUT.write_text(json.dumps(names, indent=1) + "\n")
    print(f"wrote {OUT} (CuPy {cupy.__version__}: "
          + ", ".join(f"{len(names[label])} in {label}" for label in NAMESPACES) + ")")


if __name__ == "__main__":
    main()
