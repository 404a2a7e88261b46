"""Checkpoints: `save(state, path)` and `load(path, device=None)`, safe to load from anyone.

A checkpoint is one uncompressed `.npz` (zip) file. Each array or tensor of the state is an
entry `a0`, `a1`, ...; the entry `__minigrad__` holds UTF-8 JSON:

    {"format": "minigrad-checkpoint", "version": 1, "structure": ...}

`structure` mirrors the state: dicts (str keys), lists and JSON scalars as they are; an
array or tensor as {"__array__": "a3", "dtype": "float32", "shape": [2, 3], "tensor": true};
a tuple as {"__tuple__": [...]}; a NaN or infinite float as {"__float__": "nan" | "inf" |
"-inf"}. Loading reads arrays with `allow_pickle=False` and the rest with `json`, so it never
runs code, and checks every entry against the structure.
"""

from __future__ import annotations

import json
import math
import os
import secrets
import zipfile
import zlib
from typing import Any

import numpy as np

from .backend import backend_of_array, get_backend
from .errors import CheckpointError
from .tensor import Tensor

FORMAT = "minigrad-checkpoint"
VERSION = 1
HEADER = "__minigrad__"
_MARKERS = ("__array__", "__tuple__", "__float__")


def save(state, path) -> None:
    """Write `state` (nested dicts, lists, tuples of tensors, arrays and JSON scalars) to
    exactly `path`, atomically: a crash mid-write leaves any previous file as it was."""
    path = os.fspath(path)
    arrays: dict = {}
    stored: dict = {}
    structure = _encode(state, arrays, stored, "state")
    header = json.dumps({"format": FORMAT, "version": VERSION, "structure": structure},
                        allow_nan=False)
    folder, name = os.path.split(os.path.abspath(path))
    temporary = os.path.join(folder, f".{name}.{secrets.token_hex(8)}.tmp")
    try:
        with open(temporary, "xb") as file:
            entries: dict[str, Any] = {
                HEADER: np.frombuffer(header.encode("utf-8"), np.uint8), **arrays}
            np.savez(file, **entries)
            file.flush()
            os.fsync(file.fileno())
        os.replace(temporary, path)
    finally:
        if os.path.exists(temporary):
            os.remove(temporary)


def _encode(value, arrays, stored, where):
    """The JSON structure of `value`; its arrays go into `arrays` (an object met twice is
    stored once, so tied weights stay tied after loading)."""
    if isinstance(value, Tensor) or _is_array(value):
        if id(value) not in stored:
            host = value.numpy() if isinstance(value, Tensor) else \
                backend_of_array(value).to_host(value)
            if host.dtype.kind not in "biufc":
                raise CheckpointError(f"save: {where} is an array of dtype {host.dtype}; only "
                                      "numeric and boolean arrays can be saved")
            stored[id(value)] = {"__array__": f"a{len(arrays)}", "dtype": host.dtype.name,
                                 "shape": list(host.shape),
                                 "tensor": isinstance(value, Tensor)}
            arrays[f"a{len(arrays)}"] = host
        return stored[id(value)]
    if isinstance(value, dict):
        for key in value:
            if not isinstance(key, str):
                raise CheckpointError(f"save: {where} has the key {key!r} of type "
                                      f"{type(key).__name__}; checkpoint dict keys must be str")
            if key in _MARKERS:
                raise CheckpointError(f"save: {where} has the key {key!r}, reserved by the "
                                      "checkpoint format")
        return {key: _encode(item, arrays, stored, f"{where}[{key!r}]")
                for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_encode(item, arrays, stored, f"{where}[{i}]") for i, item in enumerate(value)]
        return {"__tuple__": items} if isinstance(value, tuple) else items
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return {"__float__": repr(value)}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise CheckpointError(f"save: {where} is a {type(value).__name__}; a checkpoint holds "
                          "dicts, lists, tuples, tensors, arrays, numbers, strings and None")


def _is_array(value):
    return hasattr(value, "shape") and hasattr(value, "dtype") and not isinstance(value,
                                                                                  np.generic)


def load(path, device=None) -> Any:
    """Read a checkpoint written by `save`. Tensors come back as `Tensor`s on `device` (default:
    the default device), arrays as NumPy arrays. Anything truncated, corrupt, of another
    format or version, or that disagrees with its own structure raises `CheckpointError`."""
    path = os.fspath(path)
    backend = get_backend(device)
    if not os.path.exists(path):
        raise FileNotFoundError(f"load: no checkpoint at {path}")
    try:
        archive = np.load(path, allow_pickle=False)
        if not isinstance(archive, np.lib.npyio.NpzFile):
            raise CheckpointError(f"load: {path} is a single .npy array, not a minigrad "
                                  "checkpoint")
        with archive:
            return _read(archive, path, backend)
    except CheckpointError:
        raise
    except ValueError as error:
        if "pickle" in str(error):
            raise CheckpointError(
                f"load: {path} holds pickled data or is not an .npz file at all ({error}); "
                "checkpoints never contain pickles (object arrays), and loading them is "
                "refused because unpickling can run arbitrary code") from error
        raise CheckpointError(f"load: {path} is corrupt ({error})") from error
    except (OSError, EOFError, KeyError, TypeError, UnicodeDecodeError, zipfile.BadZipFile,
            zlib.error) as error:
        raise CheckpointError(f"load: {path} is truncated or corrupt "
                              f"({type(error).__name__}: {error})") from error


def _read(archive, path, backend):
    if HEADER not in archive.files:
        raise CheckpointError(f"load: {path} is an .npz file but not a minigrad checkpoint (no "
                              f"'{HEADER}' entry; its entries are {sorted(archive.files)[:10]})")
    header = json.loads(bytes(archive[HEADER]).decode("utf-8"))
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise CheckpointError(f"load: {path} has a '{HEADER}' entry but not the format marker "
                              f"'{FORMAT}'")
    if header.get("version") != VERSION:
        raise CheckpointError(f"load: {path} is a checkpoint of format version "
                              f"{header.get('version')!r}; this minigrad reads version "
                              f"{VERSION} only (saved by another minigrad version?)")
    if "structure" not in header:
        raise CheckpointError(f"load: {path} has no 'structure' in its '{HEADER}' entry")
    loaded: dict = {}
    state = _decode(header["structure"], archive, path, backend, loaded)
    unexpected = sorted(set(archive.files) - set(loaded) - {HEADER})
    if unexpected:
        raise CheckpointError(f"load: {path} has entries its structure does not use: "
                              f"{unexpected[:10]}")
    return state


def _decode(node, archive, path, backend, loaded):
    """The value that `_encode` turned into `node`; arrays read once each, in `loaded`."""
    if isinstance(node, list):
        return [_decode(item, archive, path, backend, loaded) for item in node]
    if not isinstance(node, dict):
        return node
    if "__array__" in node:
        return _decode_array(node, archive, path, backend, loaded)
    if "__tuple__" in node:
        return tuple(_decode(item, archive, path, backend, loaded) for item in node["__tuple__"])
    if "__float__" in node:
        if node["__float__"] not in ("nan", "inf", "-inf"):
            raise CheckpointError(f"load: {path}: unknown float {node['__float__']!r}")
        return float(node["__float__"])
    return {key: _decode(item, archive, path, backend, loaded) for key, item in node.items()}


def _decode_array(node, archive, path, backend, loaded):
    name = node["__array__"]
    if name not in loaded:
        if name not in archive.files:
            raise CheckpointError(f"load: {path} lacks the array entry {name!r} that its "
                                  "structure refers to (truncated or edited?)")
        array = archive[name]
        if array.dtype.name != node["dtype"] or list(array.shape) != node["shape"]:
            raise CheckpointError(
                f"load: {path}: entry {name!r} is {array.dtype.name} of shape "
                f"{list(array.shape)}, the structure says {node['dtype']} of shape "
                f"{node['shape']}")
        loaded[name] = array
        if node["tensor"]:
            loaded[name] = Tensor._make(backend.from_host(array), backend)
    return loaded[name]
