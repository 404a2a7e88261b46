"""The `cupy` namespace of the stand-in (the names CuPy 14 has, each computing on the current
device), cupy.cuda, and installing it as minigrad's CuPy (`install`, `installed`, `main`)."""

import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from . import array
from .array import (
    NAMES,
    VERSION,
    CUDARuntimeError,
    Device,
    _call,
    _current,
    _Devices,
    asarray,
    asnumpy,
    get_array_module,
    monitor,
    ndarray,
    put_along_axis,
    take,
    take_along_axis,
    ufunc_type,
)
from .array import array as array_function
from .fusion import fuse, gpu_only
from .random import BitGenerator, bit_generator, default_rng


class _Stream:
    def synchronize(self) -> None:
        monitor.sync("Stream.synchronize")


class _Runtime:
    CUDARuntimeError = CUDARuntimeError

    @staticmethod
    def getDeviceCount():  # noqa: N802  (CuPy's name)
        if _Devices.count == 0:
            raise CUDARuntimeError("cudaErrorNoDevice: no CUDA-capable device is detected")
        return _Devices.count

    @staticmethod
    def getDevice():  # noqa: N802
        return _Devices.current

    @staticmethod
    def setDevice(device) -> None:  # noqa: N802
        Device(device).use()

    @staticmethod
    def deviceSynchronize() -> None:  # noqa: N802
        monitor.sync("deviceSynchronize")


def _module(label, members):
    """A namespace holding `members` under the names CuPy 14 has for `label`; any other name
    raises AttributeError saying whether CuPy has it."""
    names = set(NAMES[label])

    class Namespace(types.ModuleType):
        def __getattr__(self, name):
            if name in names:
                raise AttributeError(f"'{label}.{name}' exists in CuPy {VERSION} but the CuPy "
                                     "stand-in does not implement it")
            raise AttributeError(f"module '{label}' has no attribute '{name}' (CuPy {VERSION} "
                                 "lacks it)")

    module = Namespace(label)
    for name, value in members.items():
        if name in names or name.startswith("__"):
            setattr(module, name, value)
    return module


def _numpy_members(label, numpycupy):
    """The CuPy names of `label` that NumPy's namespace also has, wrapped to compute on the
    current device (ufuncs, functions) or shared (dtypes, scalar types, constants)."""
    members = {}
    for name in NAMES[label]:
        value = getattr(numpycupy, name, None)
        if value is None or isinstance(value, types.ModuleType):
            continue
        if isinstance(value, np.ufunc):
            members[name] = ufunc_type(value)
        elif callable(value) and not isinstance(value, type):
            members[name] = _function(name, value)
        else:
            members[name] = value
    return members


def _function(name, numpy_function):
    def function(*args, **kwargs):
        return _call(name, numpy_function, args, kwargs)
    function.__name__ = name
    return function


def _empty(shape, dtype=float, order="C"):
    return ndarray._make(np.empty(shape, dtype, order), _Devices.current)


def _empty_like(a, dtype=None, order="K", subok=None, shape=None):
    return ndarray._make(np.empty_like(a._a, dtype, order, shape=shape), _Devices.current)


def _makecupy():
    random = _module("cupy.random", {
        "default_rng": default_rng, "XORWOW": bit_generator("XORWOW"),
        "Philox4x3210": bit_generator("Philox4x3210"), "MRG32k3a": bit_generator("MRG32k3a"),
        "BitGenerator": BitGenerator})
    cuda = _module("cupy.cuda", {
        "Device": Device, "runtime": _Runtime, "is_available": lambda: _Devices.count > 0,
        "get_device_id": _current, "Stream": type("Stream", (), {"null": _Stream()}),
        "get_current_stream": _Stream})
    linalg = _module("cupy.linalg", _numpy_members("cupy.linalg", np.linalg))
    members = _numpy_members("cupy", np)
    members.update({
        "__version__": VERSION, "ndarray": ndarray, "asarray": asarray, "array": array_function,
        "asanyarray": asarray, "asnumpy": asnumpy, "get_array_module": get_array_module,
        "take": take, "take_along_axis": take_along_axis, "put_along_axis": put_along_axis,
        "fuse": fuse, "empty": _empty, "empty_like": _empty_like,
        "random": random, "cuda": cuda, "linalg": linalg,
        "is_available": lambda: _Devices.count > 0,
        **{name: gpu_only(name) for name in ("ElementwiseKernel", "ReductionKernel",
                                              "RawKernel", "RawModule")}})
    return _module("cupy", members)


cupy = array.namespace = _makecupy()  # the stand-in, to use as `xp`


def install(devices=2) -> types.ModuleType:
    """Make minigrad's 'cuda' devices run on the stand-in, with `devices` GPUs (0: none, as on
    a machine whose driver finds no GPU); returns it. Backends made before are forgotten."""
    from ...backend import use_cupy

    _Devices.count, _Devices.current = devices, 0
    use_cupy(cupy)
    return cupy


def uninstall() -> None:
    """Back to the real CuPy (imported at the next 'cuda' device asked for)."""
    from ...backend import use_cupy

    use_cupy(None)


@contextmanager
def installed(devices=2) -> Iterator[types.ModuleType]:
    """`install(devices)` inside the block; afterwards whatever CuPy was in use before (the
    real one, or the stand-in with its device count)."""
    from ...backend import cupy_backend, use_cupy

    previous, count, current = cupy_backend._stand_in, _Devices.count, _Devices.current
    try:
        yield install(devices)
    finally:
        _Devices.count, _Devices.current = count, current
        use_cupy(previous)


def is_stand_in(xp) -> bool:
    return xp is cupy


def main(argv) -> None:
    """`python -m minigrad.testing.fake_cupy SCRIPT [ARGS]`: run SCRIPT with the stand-in as
    CuPy (one device), as `python SCRIPT ARGS` would: a dry run of a GPU script here."""
    import runpy
    import sys

    if not argv:
        raise SystemExit("usage: python -m minigrad.testing.fake_cupy SCRIPT [ARGS]")
    install(devices=1)
    sys.argv = list(argv)
    sys.path.insert(0, str(Path(argv[0]).resolve().parent))
    runpy.run_path(argv[0], run_name="__main__")
