"""Regenerate minigrad/testing/fake_cupy/cupy_names.json, the API surface of CuPy that the CuPy
stand-in (minigrad/testing/fake_cupy/) offers: a name missing from this list raises
AttributeError there, as it would in CuPy. It also holds each CuPy ufunc's loops
(`cupy.add.types`: "ff->f", ...), by which the stand-in types the ufuncs of a fused function.

    pip install -e ".[gpu-cuda12]"      # or gpu-cuda13; imports without a GPU
    python scripts/make_cupy_names.py
"""

import json
from pathlib import Path

import cupy

OUT = Path(__file__).resolve().parents[1] / "minigrad" / "testing" / "fake_cupy" / "cupy_names.json"
NAMESPACES = {
    "cupy": cupy,
    "cupy.ndarray": cupy.ndarray,
    "cupy.random": cupy.random,
    "cupy.linalg": cupy.linalg,
    "cupy.cuda": cupy.cuda,
}


def public_names(namespace):
    return sorted(name for name in dir(namespace) if not name.startswith("_"))


def ufunc_loops():
    """Each CuPy ufunc's loops, in CuPy's order (the first that fits is taken), by name."""
    return {name: list(getattr(cupy, name).types) for name in public_names(cupy)
            if isinstance(getattr(cupy, name), cupy.ufunc)}


def main():
    names = {"version": cupy.__version__,
             **{label: public_names(namespace) for label, namespace in NAMESPACES.items()},
             "ufunc loops": ufunc_loops()}
    OUT.write_text(json.dumps(names, indent=1) + "\n")
    print(f"wrote {OUT} (CuPy {cupy.__version__}: "
          + ", ".join(f"{len(names[label])} in {label}" for label in NAMESPACES)
          + f", the loops of {len(names['ufunc loops'])} ufuncs)")


if __name__ == "__main__":
    main()
