"""Tensor: an array on a device, plus what reverse-mode autodiff needs (grad, grad_fn).

This module is the bottom layer: it imports no op. `Tensor` inherits its op methods and
operators from `TensorMethods` (`minigrad/tensor_methods.py`, generated from the op
declarations, whose calls `minigrad/__init__.py` binds to the ops), and `backward` is the
engine's (`minigrad/autograd/backward_pass.py`), set by `minigrad/__init__.py`; the methods
here are built from those.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from .backend import backend_of_array, get_backend, normalize_device
from .errors import DeviceError, DTypeError
from .hooks import HookHandle
from .tensor_methods import TensorMethods

_default_dtype = np.dtype(np.float32)
_new = object.__new__  # bound once: ops make a tensor each (`Tensor._make`)


def get_default_dtype() -> np.dtype:
    return _default_dtype


def set_default_dtype(dtype) -> None:
    """The dtype of tensors made from Python floats (float32 unless changed)."""
    global _default_dtype
    dtype = np.dtype(dtype)
    if dtype.kind != "f":
        raise DTypeError(f"set_default_dtype: {dtype} is not a floating-point dtype")
    _default_dtype = dtype


def _is_array(data):
    return hasattr(data, "shape") and hasattr(data, "dtype")


def as_array(data, dtype=None, backend=None) -> Any:
    """Python data / NumPy / CuPy array -> a new array of `backend` (docs/conventions.md, dtypes).

    An array keeps its dtype; Python floats take the default dtype, ints int64, bools bool.
    Without `backend`, an array stays where it is and Python data goes to the default device.
    """
    if isinstance(data, Tensor):
        data = data.data
    if _is_array(data):
        source = backend_of_array(data)
        backend = backend or source
        if backend.activate is not None:
            backend.activate()
        array = data if source is backend else backend.from_host(source.to_host(data))
        copied = source is not backend
    else:
        backend = backend or get_backend()
        host = np.asarray(data)
        if host.dtype.kind not in "biuf":
            raise DTypeError(f"tensor: cannot make a tensor of {type(data).__name__} data "
                             f"(dtype {host.dtype}); use numbers or booleans")
        if dtype is None and host.dtype.kind == "f":
            host = host.astype(_default_dtype)
        elif dtype is None and host.dtype.kind in "iu":
            host = host.astype(np.int64)
        array, copied = backend.from_host(host), True
    if dtype is not None and array.dtype != np.dtype(dtype):
        return array.astype(dtype)
    return array if copied else array.copy()


class Tensor(TensorMethods):
    """An n-dimensional array with reverse-mode autodiff.

    `data` is the backend array (NumPy on 'cpu', CuPy on 'cuda'); `grad_fn` is the Function
    that made this tensor (None for leaves); `grad` is filled by `backward()`."""

    __slots__ = ("data", "backend", "requires_grad", "grad", "grad_fn", "_retains_grad",
                 "_hooks", "__weakref__")
    __array_priority__ = 1000  # NumPy defers to Tensor's operators (ndarray * Tensor)
    grad_fn: Any  # the Function that made it; None for a leaf
    # autograd.backward, set by minigrad/__init__.py: backward(gradient=None,
    # retain_graph=False, create_graph=False) accumulates d(self)/d(leaf) into every leaf's
    # `.grad`
    backward: Callable[..., None]

    def __init__(self, data, requires_grad=False, dtype=None, device=None) -> None:
        self.data = as_array(data, dtype, get_backend(device) if device is not None else None)
        self.backend = backend_of_array(self.data)
        self.grad = None
        self.grad_fn = None
        self._retains_grad = False
        self._hooks: dict | None = None
        self.requires_grad = False
        if requires_grad:
            self.requires_grad_()

    @classmethod
    def _make(cls, data, backend, requires_grad=False, grad_fn=None):
        """The fast constructor ops use: `data` is already an array of `backend`."""
        tensor = _new(cls)
        tensor.data = data
        tensor.backend = backend
        tensor.requires_grad = requires_grad
        tensor.grad = None
        tensor.grad_fn = grad_fn
        tensor._retains_grad = False
        tensor._hooks = None
        return tensor

    # ----- what it is -----------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def size(self) -> int:
        return self.data.size

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    @property
    def device(self) -> str:
        return self.backend.device

    @property
    def is_leaf(self) -> bool:
        return self.grad_fn is None

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __repr__(self) -> str:
        body = np.array2string(self.numpy(), separator=", ", precision=4, threshold=20)
        extras = [f"dtype={self.dtype}"]
        if self.device != "cpu":
            extras.append(f"device='{self.device}'")
        if self.grad_fn is not None:
            extras.append(f"grad_fn={self.grad_fn.name}")
        elif self.requires_grad:
            extras.append("requires_grad=True")
        return f"tensor({body}, {', '.join(extras)})"

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(
                f"the truth value of a tensor of shape {self.shape} is ambiguous; "
                "use .any() or .all()")
        return bool(self.item())

    __hash__ = object.__hash__  # by identity (== is elementwise), so tensors key dicts and sets

    # ----- moving data ------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """A NumPy copy on the host (never a view of the tensor's storage)."""
        return np.array(self.backend.to_host(self.data), copy=True)

    def item(self) -> float | int | bool:
        if self.size != 1:
            raise ValueError(f"item: the tensor has {self.size} elements (shape {self.shape}), "
                             "not one")
        return self.backend.to_host(self.data).reshape(()).item()

    def tolist(self) -> Any:
        return self.numpy().tolist()

    def to(self, device=None, dtype=None) -> Tensor:
        """This tensor on another device and/or with another dtype (differentiable)."""
        result = self
        if device is not None and normalize_device(device) != self.device:
            result = result.to_device(device)
        if dtype is not None and np.dtype(dtype) != result.dtype:
            result = result.astype(dtype)
        return result

    def cpu(self) -> Tensor:
        return self.to("cpu")

    def detach(self) -> Tensor:
        """The same values, cut from the graph (shares storage)."""
        return Tensor._make(self.data, self.backend)

    # ----- autograd -----------------------------------------------------------------------
    def requires_grad_(self, flag: bool = True) -> Tensor:
        if flag and self.data.dtype.kind != "f":
            raise DTypeError(
                f"requires_grad: only floating-point tensors can require gradients, this one "
                f"is {self.dtype} (shape {self.shape})")
        if not self.is_leaf and not flag:
            raise ValueError("requires_grad_(False) on a non-leaf tensor: use .detach()")
        self.requires_grad = flag
        return self

    def retain_grad(self) -> Tensor:
        """Keep this non-leaf tensor's gradient in `.grad` after backward."""
        self._retains_grad = True
        return self

    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> HookHandle:
        """hook(grad) is called with the gradient flowing into this tensor during backward;
        it may return a replacement. Returns a handle whose `.remove()` unregisters it."""
        if not self.requires_grad:
            raise ValueError("register_hook: this tensor does not require grad")
        if self._hooks is None:
            self._hooks = {}
        return HookHandle(self._hooks, hook)

    # ----- built from the ops' methods ----------------------------------------------------
    @property
    def T(self) -> Tensor:
        return self.transpose()

    @property
    def mT(self) -> Tensor:
        """The last two axes swapped (NumPy 2's ndarray.mT): Kᵀ for a batch of K."""
        return self.swapaxes(-1, -2)


Operand = Tensor | float | np.ndarray | np.generic  # what an op of several inputs takes


def tensor(data, requires_grad=False, dtype=None, device=None) -> Tensor:
    """A new leaf tensor holding a copy of `data` (docs/conventions.md, dtypes)."""
    return Tensor(data, requires_grad=requires_grad, dtype=dtype, device=device)


_scalars: dict = {}  # (value, type, dtype, backend) -> a 0-d constant Tensor, reused across ops


def ensure_tensor(value, like) -> Tensor:
    """Python scalars and arrays as tensors beside `like`: a scalar is 'weak' (NumPy 2, NEP 50),
    taking `like`'s dtype when its kind fits (float32 tensor * 2.0 stays float32).

    Scalar constants are cached: `1 - y` in a backward pass makes no new array."""
    if isinstance(value, Tensor):
        return value
    backend = like.backend
    if type(value) in (float, int, bool):
        dtype = like.data.dtype
        if dtype.kind != "f":
            dtype = np.result_type(dtype, value)
        key = (value, type(value), dtype, backend)
        constant = _scalars.get(key)
        if constant is None:
            if len(_scalars) >= 1024:
                _scalars.clear()
            constant = _scalars[key] = Tensor._make(
                backend.from_host(np.asarray(value, dtype=dtype)), backend)
        return constant
    if isinstance(value, np.generic):  # a NumPy scalar keeps its dtype (NumPy 2's rule)
        return Tensor._make(backend.from_host(np.asarray(value)), backend)
    if backend_of_array(value) is not backend and backend.device != "cpu":
        raise DeviceError(
            f"an array of type {type(value).__name__} combined with a tensor on {like.device}: "
            f"make it a tensor on that device first (mg.tensor(x, device='{like.device}'))")
    return Tensor._make(as_array(value, backend=backend), backend)
