"""`cupy.fuse`, run eagerly: the function as one launch, its scalar arguments computing as
the fusion's (the rules inside it are `array._Fusion`'s)."""

import functools
from collections.abc import Callable

import numpy as np

from .array import _FusedScalar, _Fusion, monitor, ndarray


def _fused_result(result):
    """What a fused function returns, as CuPy's fusion does: its arrays C-contiguous (new
    arrays of the kernel's output shape), its fusion scalars as values."""
    if isinstance(result, tuple):
        return tuple(_fused_result(item) for item in result)
    if isinstance(result, _FusedScalar):
        return result.value
    if isinstance(result, ndarray) and not result._a.flags.c_contiguous:
        return ndarray._make(np.ascontiguousarray(result._a), result._device)
    return result


def fuse(*args, **kwargs) -> Callable:
    """cupy.fuse, run eagerly: `@fuse` or `@fuse(kernel_name=...)`; one launch per call.
    As in CuPy (`_core/fusion.pyx` `Fusion.__call__`), a call without an array argument runs
    the function as plain Python; with one, its scalar arguments compute as the fusion's."""
    def decorate(function):
        @functools.wraps(function)
        def fused(*call_args):
            if not any(isinstance(arg, ndarray) for arg in call_args):
                return function(*call_args)
            monitor._quiet += 1
            _Fusion.active += 1
            outer = _Fusion.reduced, _Fusion.after
            _Fusion.reduced, _Fusion.after = False, {}
            try:
                result = function(*[arg if isinstance(arg, ndarray) or arg is None
                                    else _FusedScalar(arg) for arg in call_args])
                return _fused_result(result)
            finally:
                _Fusion.reduced, _Fusion.after = outer
                _Fusion.active -= 1
                monitor._quiet -= 1
                monitor.launch(f"fuse:{kwargs.get('kernel_name') or function.__name__}")
        return fused

    if len(args) == 1 and callable(args[0]) and not kwargs:
        return decorate(args[0])
    return decorate


def gpu_only(name) -> type:
    class Kernel:
        def __init__(self, *args, **kwargs) -> None:
            self.source = args

        def __call__(self, *args, **kwargs):
            raise NotImplementedError(f"cupy.{name}: CUDA source runs on a GPU only; the CuPy "
                                      "stand-in cannot run it (write it with cupy.fuse, or test "
                                      "it on a GPU)")
    Kernel.__name__ = name
    return Kernel
