"""The stand-in's arrays and what every call on them goes through: the API names and loops of
CuPy 14 (`cupy_names.json`), the launch and synchronization counter (`monitor`), devices,
`ndarray`, the ufuncs, and the rules inside a fused function (`_Fusion`: a fused function's
ufuncs compute in CuPy's fusion loops, and what comes after its reduction is checked), which
every array operation reads."""

from __future__ import annotations

import builtins
import json
import numbers
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

NAMES = json.loads((Path(__file__).with_name("cupy_names.json")).read_text())
namespace: Any = None  # the `cupy` namespace (install.py makes it): where NumPy's protocols go
VERSION = NAMES["version"]


class DeviceSynchronized(RuntimeError):
    """A device-to-host read while synchronizing is forbidden (cupyx's DeviceSynchronized)."""


class CUDARuntimeError(RuntimeError):
    """CuPy's error for a failing CUDA runtime call (no driver, no such device)."""


class Monitor:
    """Kernel launches and synchronizations since the last `reset()` (see the module doc)."""

    def __init__(self) -> None:
        self.launches: Counter[str] = Counter()
        self.syncs: Counter[str] = Counter()
        self.bit_generators: Counter[str] = Counter()  # random bit generators created, by kind
        self.largest_array = 0  # elements of the largest array made
        self._quiet = 0  # > 0 inside a fused function: its inner calls are not launches
        self._forbidden = 0

    def reset(self) -> None:
        self.launches.clear()
        self.syncs.clear()
        self.bit_generators.clear()
        self.largest_array = 0

    @property
    def launch_count(self) -> int:
        return sum(self.launches.values())

    @property
    def sync_count(self) -> int:
        return sum(self.syncs.values())

    def launch(self, what, count=1) -> None:
        if not self._quiet:
            self.launches[what] += count

    def sync(self, what) -> None:
        if self._forbidden:
            raise DeviceSynchronized(f"{what} synchronizes the device, and synchronization is "
                                     "forbidden here")
        self.syncs[what] += 1

    @contextmanager
    def forbid_synchronize(self) -> Iterator[None]:
        """Inside this block every device-to-host read raises DeviceSynchronized."""
        self._forbidden += 1
        try:
            yield
        finally:
            self._forbidden -= 1


monitor = Monitor()


# ----- devices -----------------------------------------------------------------------------
class _Devices:
    count = 2
    current = 0
    multiprocessors = 132  # an H100's SM count: the default size of a random generator


def _current():
    return _Devices.current


class Device:
    """cupy.cuda.Device: `with Device(n):` makes n current inside the block, `.use()` for good."""

    def __init__(self, device=None) -> None:
        self.id = _current() if device is None else int(device)
        if not 0 <= self.id < _Devices.count:
            raise CUDARuntimeError("cudaErrorInvalidDevice: invalid device ordinal")
        self._previous: list = []

    def use(self) -> None:
        _Devices.current = self.id

    def __enter__(self) -> Device:
        self._previous.append(_Devices.current)
        _Devices.current = self.id
        return self

    def __exit__(self, *exc) -> None:
        _Devices.current = self._previous.pop()

    def synchronize(self) -> None:
        monitor.sync("Device.synchronize")

    @property
    def compute_capability(self) -> str:
        return "90"

    def __eq__(self, other) -> bool:
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return f"<CUDA Device {self.id}>"


def _check_device(array, where):
    if array._device != _Devices.current:
        raise ValueError(f"The device where the array resides ({array._device}) is different "
                         f"from the current device ({_Devices.current}). Peer access is "
                         f"unavailable between these devices. ({where})")


# ----- arrays ------------------------------------------------------------------------------
def _unwrap(value, where):
    """An operand as NumPy data: arrays of the current device only, never NumPy arrays."""
    if isinstance(value, ndarray):
        _check_device(value, where)
        return value._a
    if isinstance(value, np.ndarray):
        raise TypeError(f"Unsupported type {type(value)} ({where}: CuPy does not take NumPy "
                        "arrays as operands; move them with cupy.asarray first)")
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(item, where) for item in value)
    if isinstance(value, _FusedScalar):
        return value.value
    return value


def _wrap(value, device, out=None):
    if out is not None and isinstance(value, np.ndarray) and value is out._a:
        return out
    if isinstance(value, np.ndarray):
        return ndarray._make(value, device)
    if isinstance(value, np.generic):
        return ndarray._make(np.asarray(value), device)
    if isinstance(value, tuple):
        return tuple(_wrap(item, device) for item in value)
    if isinstance(value, list):
        return [_wrap(item, device) for item in value]
    return value


def _shares_memory(result, inputs):
    return isinstance(result, np.ndarray) and any(
        isinstance(a, np.ndarray) and np.may_share_memory(result, a) for a in inputs)


# names whose result can be a view (no launch) or a copy (one launch)
_MAYBE_VIEWS = {"reshape", "ravel", "squeeze", "swapaxes", "transpose", "moveaxis",
                "broadcast_to", "broadcast_arrays", "expand_dims", "atleast_1d", "atleast_2d",
                "atleast_3d", "split", "array_split", "view", "diagonal", "real", "imag",
                "ascontiguousarray", "astype", "meshgrid", "flip", "rollaxis"}
# names that only look at shapes and dtypes
_HOST_ONLY = {"shape", "ndim", "size", "result_type", "can_cast", "promote_types",
              "min_scalar_type", "broadcast_shapes", "isscalar", "iscomplexobj", "isrealobj",
              "iinfo", "finfo", "dtype", "empty", "empty_like", "common_type", "issubdtype",
              "get_array_module"}
# names whose result size depends on the data: the host must read it
_SYNCING = {"nonzero", "flatnonzero", "argwhere", "unique", "extract", "compress",
            "asnumpy", "get", "item", "tolist", "tobytes"}
# allowed inside cupy.fuse besides ufuncs and operators (CuPy's fusion has no `mean`)
_FUSABLE = {"sum", "prod", "max", "min", "amax", "amin", "where", "astype", "copy", "clip"}
_UFUNC_LOOPS = NAMES["ufunc loops"]  # CuPy's own loops of each ufunc ("ff->f", ...)
# names CuPy's reductions (and its elementwise `where`) give a new C-contiguous array
_C_ORDERED = {"sum", "prod", "max", "min", "amax", "amin", "mean", "var", "std", "any", "all",
              "argmax", "argmin", "where", "clip"}


_REDUCTIONS = {"sum", "prod", "max", "min", "amax", "amin"}


class _Fusion:
    """The fused function running now: after its one reduction, CuPy's fusion computes only
    with the reduction's result, values made from it and constants (`_core/fusion.pyx`
    `set_reduce_op`, `_get_fusion_var`): an argument of the function, or a value computed
    before the reduction, raises there."""

    active = 0
    reduced = False
    after: dict = {}  # id -> the values computed from the reduction on

    @classmethod
    def refuse_before(cls, name, args) -> None:
        if not cls.reduced:
            return
        for value in _flat(args):
            if isinstance(value, _FusedScalar) or (
                    isinstance(value, ndarray) and id(value) not in cls.after):
                raise TypeError(
                    f"cupy.fuse: '{name}' after the fused function's reduction takes one of "
                    "its arguments or a value computed before the reduction, which CuPy's "
                    "fusion refuses ('Shape mismatch'): use only the reduction's result and "
                    "constants after it")

    @classmethod
    def track(cls, name, result):
        if name in _REDUCTIONS:
            if cls.reduced:
                raise TypeError(f"cupy.fuse: a second reduction ('{name}') in one fused "
                                "function; CuPy's fusion makes one reduction a kernel")
            cls.reduced = True
        if cls.reduced:
            for value in _flat((result,)):
                cls.after[id(value)] = value
        return result


def _flat(values):
    for value in values:
        if isinstance(value, (list, tuple)):
            yield from _flat(value)
        else:
            yield value


def _fused_loop(ufunc, operands):
    """The loop CuPy's fusion picks for a ufunc: the first of CuPy's own loops of that ufunc
    (`cupy_names.json`, from an installed CuPy's `ufunc.types`) to which each operand
    casts safely or, for a scalar (every scalar is weak there), which
    `result_type(type(scalar)(0), loop type)` keeps (`_core/fusion.pyx` `call_ufunc` ->
    `_core/_kernel.pyx` `_guess_routine_from_in_types`, without the guard that eager ufuncs
    apply, `_check_should_use_weak_scalar`): `1 - 0.1` is computed in float16 there."""
    if ufunc.__name__ not in _UFUNC_LOOPS:
        raise TypeError(f"cupy.fuse: '{ufunc.__name__}' is not a CuPy ufunc and cannot be "
                        "fused")
    dtypes = [np.asarray(operand).dtype for operand in operands]
    for loop in _UFUNC_LOOPS[ufunc.__name__]:
        ins, outs = loop.split("->")
        for dtype, operand, char in zip(dtypes, operands, ins):
            if np.can_cast(dtype, char):
                continue
            if isinstance(operand, np.ndarray):
                break
            try:
                if np.result_type(type(operand)(0), char) != np.dtype(char):
                    break
            except TypeError:
                break
        else:
            return ins, outs
    raise TypeError(f"Invalid type cast in '{ufunc.__name__}': {dtypes} -> []")


def _call_fused_ufunc(ufunc, args, kwargs):
    """A ufunc inside cupy.fuse, computed in the loop CuPy's fusion picks (not a launch)."""
    if set(kwargs) - {"out"}:
        raise TypeError(f"Wrong arguments {kwargs}")
    _Fusion.refuse_before(ufunc.__name__, args)
    operands = _unwrap(args, ufunc.__name__)
    ins, outs = _fused_loop(ufunc, operands)
    cast = [np.asarray(a).astype(char, copy=False) for a, char in zip(operands, ins)]
    result = np.asarray(ufunc(*cast)).astype(outs, copy=False)  # a 1-output loop's type
    out = kwargs.get("out")
    if out is not None:
        np.copyto(_unwrap(out, ufunc.__name__), result, casting="same_kind")
        return _Fusion.track(ufunc.__name__, out)
    return _Fusion.track(ufunc.__name__, _wrap(result, _Devices.current))


class _FusedScalar:
    """A Python scalar argument of a fused function: its arithmetic is the fusion's (weak,
    by `_fused_loop`), not Python's."""

    __slots__ = ("value",)
    __hash__ = None  # type: ignore[assignment]  # unhashable, as the fusion's variables

    def __init__(self, value) -> None:
        self.value = value

    def __neg__(self):
        return _call_fused_ufunc(np.negative, (self,), {})


def _scalar_operator(ufunc, reflected=False):
    def operator(self, other):
        if not _operand(other):
            return NotImplemented
        pair = (other, self) if reflected else (self, other)
        return _call_fused_ufunc(ufunc, pair, {})
    return operator


for _name, _scalar_ufunc in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                             ("truediv", np.true_divide), ("floordiv", np.floor_divide),
                             ("mod", np.remainder), ("pow", np.power)]:
    setattr(_FusedScalar, f"__{_name}__", _scalar_operator(_scalar_ufunc))
    setattr(_FusedScalar, f"__r{_name}__", _scalar_operator(_scalar_ufunc, reflected=True))
for _name, _scalar_ufunc in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                             ("le", np.less_equal), ("gt", np.greater),
                             ("ge", np.greater_equal)]:
    setattr(_FusedScalar, f"__{_name}__", _scalar_operator(_scalar_ufunc))


def _matmul_launches(a, b):
    """The copies and pointer arrays CuPy's matmul makes besides its BLAS call."""
    if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) or min(a.ndim, b.ndim) < 1:
        return 0
    ndim = max(a.ndim, b.ndim)
    if ndim <= 2:
        return sum(1 for x in (a, b) if x.ndim == 2
                   and not (x.flags.c_contiguous or x.flags.f_contiguous))
    half = np.result_type(a, b) == np.float16
    extra = sum(1 for x in (a, b) if half or not x.flags.c_contiguous) + half
    batch_a = (1,) * (ndim - a.ndim) + a.shape[:-2] if a.ndim > 1 else (1,) * (ndim - 2)
    batch_b = (1,) * (ndim - b.ndim) + b.shape[:-2] if b.ndim > 1 else (1,) * (ndim - 2)
    if any((m == 1) != (n == 1) for m, n in zip(batch_a, batch_b)):
        extra += 3 * (ndim - 2)
    return extra


def _extra_launches(name, raw_args):
    """Launches CuPy makes inside `name` besides its one counted kernel (the module doc)."""
    if name == "matmul" and len(raw_args) >= 2:
        return _matmul_launches(raw_args[0], raw_args[1])
    if name == "mean":
        return 1
    if name in ("take_along_axis", "put_along_axis"):
        return 2 * np.ndim(raw_args[0])
    if name == "concatenate":
        arrays = raw_args[0]
        small = sum(np.size(a) for a in arrays) * np.result_type(*arrays).itemsize \
            < 2 * 1024 * 1024 * len(arrays)
        if len(arrays) > 8 and small and len({np.asarray(a).dtype for a in arrays}) == 1:
            return 1
        return len(arrays) - 1
    return 0


def _call(name, function, args, kwargs):
    """Run a NumPy function as CuPy would run `name`: operands checked and unwrapped, the
    result on the current device, launches and synchronizations counted."""
    if _Fusion.active:
        if name not in _FUSABLE and not isinstance(function, np.ufunc):
            raise TypeError(f"cupy.fuse: '{name}' is not supported inside a fused function")
        if kwargs.get("keepdims"):
            raise TypeError(f"cupy.fuse: '{name}' with keepdims is not supported inside a "
                            "fused function (CuPy's fusion drops it); add the axis outside")
        if isinstance(function, np.ufunc):
            return _call_fused_ufunc(function, args, kwargs)
        _Fusion.refuse_before(name, args)
        return _Fusion.track(name, _run(name, function, args, kwargs))
    return _run(name, function, args, kwargs)


def _run(name, function, args, kwargs):
    """`_call`'s work on the operands: computed, counted, the result wrapped."""
    device = _Devices.current
    raw_args = _unwrap(args, name)
    out = kwargs.get("out")
    raw_kwargs = {key: _unwrap(value, name) for key, value in kwargs.items()} if kwargs else {}
    if name in _SYNCING:
        monitor.sync(name)
    result = function(*raw_args, **raw_kwargs)
    if out is None and (isinstance(function, np.ufunc) or name in _C_ORDERED):
        result = _c_ordered(result)
    if name in _HOST_ONLY:
        pass
    elif name in _MAYBE_VIEWS:
        first = result[0] if isinstance(result, (tuple, list)) and result else result
        if not _shares_memory(first, raw_args[:1]):
            monitor.launch(name)
    else:
        monitor.launch(name)
        extra = _extra_launches(name, raw_args)
        if extra:
            monitor.launch(f"{name} (inside)", extra)
    return _wrap(result, device, out if isinstance(out, ndarray) else None)


def _c_ordered(result):
    """A new array as CuPy makes it: C-contiguous (`_core/_kernel.pyx`: a ufunc's, a
    reduction's outputs are `_ndarray_init(out_shape)`), not NumPy's order of the inputs."""
    if isinstance(result, tuple):
        return tuple(_c_ordered(item) for item in result)
    if isinstance(result, np.ndarray) and not result.flags.c_contiguous:
        return np.ascontiguousarray(result)
    return result


def _outside_fusion(what):
    """Refuse what CuPy's fusion variables lack (`_core/fusion.pyx` `_FusionVarArray`: dtype,
    ndim, operators, astype, copy and `x[...] = y` only): CuPy would fall back for good to
    its new fusion, silently."""
    if _Fusion.active:
        raise TypeError(f"cupy.fuse: '{what}' of an array inside a fused function; CuPy's "
                        "fusion variables have only dtype, ndim, operators, astype, copy and "
                        "`x[...] = y` (use the cupy function, or do it outside the fusion)")


class Flags:
    """CuPy's array flags: these three, nothing else (no `writeable`)."""

    __slots__ = ("c_contiguous", "f_contiguous", "owndata")

    def __init__(self, array) -> None:
        self.c_contiguous = array.flags.c_contiguous
        self.f_contiguous = array.flags.f_contiguous
        self.owndata = array.base is None

    def __getitem__(self, name) -> bool:
        return getattr(self, {"C_CONTIGUOUS": "c_contiguous", "F_CONTIGUOUS": "f_contiguous",
                              "OWNDATA": "owndata"}[name])


def _operand(value):
    return isinstance(value, (ndarray, np.ndarray, numbers.Number, np.generic, _FusedScalar))


def _binary(name, function, reflected=False, inplace=False):
    def operator(self, other):
        if not _operand(other):
            return NotImplemented
        if inplace:
            return _call(name, function, (self, other), {"out": self})
        return _call(name, function, (other, self) if reflected else (self, other), {})
    return operator


def _unary(name, function):
    def operator(self):
        return _call(name, function, (self,), {})
    return operator


def _unfused_property(name, get):
    def read(self):
        _outside_fusion(name)
        return get(self)
    return property(read)


def _read(name, convert):
    def method(self, *args):
        _outside_fusion(name)
        monitor.sync(name)
        return convert(self._a, *args)
    return method


class ndarray:  # noqa: N801  (CuPy's name)
    """cupy.ndarray over a NumPy array, on one device."""

    __slots__ = ("_a", "_device")
    __array_priority__ = 100
    __hash__ = None  # type: ignore[assignment]  # unhashable, as cupy.ndarray

    def __init__(self, shape, dtype=float) -> None:
        self._a = np.empty(shape, dtype)
        self._device = _Devices.current

    @classmethod
    def _make(cls, array, device):
        result = object.__new__(cls)
        if array.size > monitor.largest_array:
            monitor.largest_array = array.size
        result._a = array
        result._device = device
        return result

    # ----- what it is ---------------------------------------------------------------------
    dtype = property(lambda self: self._a.dtype)  # a fusion variable has these two
    ndim = property(lambda self: self._a.ndim)
    shape = _unfused_property("shape", lambda self: self._a.shape)
    size = _unfused_property("size", lambda self: self._a.size)
    itemsize = _unfused_property("itemsize", lambda self: self._a.itemsize)
    nbytes = _unfused_property("nbytes", lambda self: self._a.nbytes)
    strides = _unfused_property("strides", lambda self: self._a.strides)
    flags = _unfused_property("flags", lambda self: Flags(self._a))
    device = _unfused_property("device", lambda self: Device(self._device))
    T = _unfused_property("T", lambda self: ndarray._make(self._a.T, self._device))
    mT = _unfused_property("mT", lambda self: ndarray._make(self._a.mT, self._device))
    base = _unfused_property("base", lambda self: None if self._a.base is None
                             else ndarray._make(self._a.base, self._device))

    def __len__(self) -> int:
        _outside_fusion("len()")
        return len(self._a)

    def __iter__(self) -> Iterator[ndarray]:
        _outside_fusion("iteration")
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    # ----- reads by the host --------------------------------------------------------------
    def __array__(self, *args, **kwargs) -> NoReturn:
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use "
                        "`.get()` to construct a NumPy array explicitly.")

    __bool__ = _read("bool()", lambda a: bool(a))
    __int__ = _read("int()", lambda a: int(a))
    __float__ = _read("float()", lambda a: float(a))
    __complex__ = _read("complex()", lambda a: complex(a))
    __repr__ = _read("repr", lambda a: repr(a))
    __str__ = _read("str", lambda a: str(a))
    __format__ = _read("format", lambda a, spec: format(a, spec))
    item = _read("item", lambda a, *index: a.item(*index))
    tolist = _read("tolist", lambda a: a.tolist())
    tobytes = _read("tobytes", lambda a, order="C": a.tobytes(order))

    def get(self, stream=None, order="C", out=None) -> np.ndarray:
        monitor.sync("get")
        return np.array(self._a, order=order, copy=True)

    def set(self, array, stream=None) -> None:
        if not isinstance(array, np.ndarray) or array.shape != self.shape:
            raise ValueError("set: needs a NumPy array of the same shape")
        monitor.launch("set")
        self._a[...] = array

    # ----- NumPy's protocols: dispatched to the stand-in (CuPy's own behaviour) -----------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs) -> Any:
        ours = namespace.__dict__.get(ufunc.__name__)
        if not isinstance(ours, ufunc_type):
            return NotImplemented
        return getattr(ours, method)(*inputs, **kwargs)

    def __array_function__(self, function, types, args, kwargs) -> Any:
        ours = namespace.__dict__.get(function.__name__)
        if ours is None:
            return NotImplemented
        return ours(*args, **kwargs)

    # ----- indexing -----------------------------------------------------------------------
    def _index(self, index, name):
        """The index as NumPy parts, integer arrays wrapped into range (CuPy's rule); whether
        it is a fancy index (a launch) and whether it holds a boolean array (a read)."""
        parts = index if isinstance(index, tuple) else (index,)
        converted, fancy, boolean = [], False, False
        for part in parts:
            if isinstance(part, ndarray):
                _check_device(part, name)
                part = part._a
            elif isinstance(part, list):
                part = np.asarray(part)
            if isinstance(part, np.ndarray):
                fancy = True
                boolean = boolean or part.dtype == np.bool_
            converted.append(part)
        consumed = builtins.sum(p.ndim if isinstance(p, np.ndarray) and p.dtype == np.bool_
                                else 0 if p is None or p is Ellipsis else 1 for p in converted)
        axis = 0
        for i, part in enumerate(converted):
            if part is Ellipsis:
                axis += self.ndim - consumed
            elif part is None:
                continue
            elif isinstance(part, np.ndarray) and part.dtype == np.bool_:
                axis += part.ndim
            else:
                if isinstance(part, np.ndarray) and part.dtype.kind in "iu" and axis < self.ndim \
                        and self.shape[axis]:
                    converted[i] = part % self.shape[axis]
                axis += 1
        return tuple(converted), fancy, boolean

    def __getitem__(self, index) -> ndarray:
        _outside_fusion("indexing")
        parts, fancy, boolean = self._index(index, "getitem")
        _check_device(self, "getitem")
        if boolean:
            monitor.sync("boolean mask indexing")
        if fancy:
            monitor.launch("gather")
        return ndarray._make(self._a[parts], self._device)

    def __setitem__(self, index, value) -> None:
        # a fusion allows x[...] = y and x[:] = y only
        if not (index is Ellipsis or isinstance(index, slice) and index == slice(None)):
            _outside_fusion("indexed assignment")
        parts, fancy, boolean = self._index(index, "setitem")
        _check_device(self, "setitem")
        value = _unwrap(value, "setitem")
        if boolean:
            monitor.sync("boolean mask assignment")
        monitor.launch("scatter" if fancy else "assign")
        self._a[parts] = value

    # ----- methods ------------------------------------------------------------------------
    def astype(self, dtype, order="K", casting=None, subok=None, copy=True) -> ndarray:
        if np.dtype(dtype) == self.dtype and not copy:
            return self
        return _call("astype", lambda a: a.astype(dtype, order=order), (self,), {})

    def reshape(self, *shape, order="C") -> ndarray:
        _outside_fusion("reshape")
        return _call("reshape", lambda a: a.reshape(*shape, order=order), (self,), {})

    def take(self, indices, axis=None, out=None) -> ndarray:
        _outside_fusion("take")
        return namespace.take(self, indices, axis=axis, out=out)

    def copy(self, order="C") -> ndarray:
        return _call("copy", lambda a: a.copy(order=order), (self,), {})


def _method(name):
    def method(self, *args, **kwargs):
        _outside_fusion(name)
        return _call(name, lambda a, *rest, **kw: getattr(a, name)(*rest, **kw), (self, *args),
                     kwargs)
    method.__name__ = name
    return method


_NDARRAY_METHODS = set(NAMES["cupy.ndarray"]) & set(dir(np.ndarray)) - set(vars(ndarray))
for _name in _NDARRAY_METHODS:
    if callable(getattr(np.ndarray, _name)):
        setattr(ndarray, _name, _method(_name))

for _name, _ufunc in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                      ("truediv", np.true_divide), ("floordiv", np.floor_divide),
                      ("mod", np.remainder), ("pow", np.power), ("matmul", np.matmul),
                      ("and", np.bitwise_and), ("or", np.bitwise_or),
                      ("xor", np.bitwise_xor), ("lshift", np.left_shift),
                      ("rshift", np.right_shift)]:
    setattr(ndarray, f"__{_name}__", _binary(_ufunc.__name__, _ufunc))
    setattr(ndarray, f"__r{_name}__", _binary(_ufunc.__name__, _ufunc, reflected=True))
    setattr(ndarray, f"__i{_name}__", _binary(_ufunc.__name__, _ufunc, inplace=True))
for _name, _ufunc in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                      ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)]:
    setattr(ndarray, f"__{_name}__", _binary(_ufunc.__name__, _ufunc))
for _name, _one in [("neg", np.negative), ("pos", np.positive), ("abs", np.absolute),
                    ("invert", np.invert)]:
    setattr(ndarray, f"__{_name}__", _unary(_one.__name__, _one))


# ----- the namespace -------------------------------------------------------------------------
class ufunc_type:  # noqa: N801
    """A CuPy ufunc: called, or its reduce / accumulate / reduceat / outer / at."""

    def __init__(self, numpy_ufunc) -> None:
        self._u = numpy_ufunc
        self.__name__ = numpy_ufunc.__name__
        self.nin, self.nout = numpy_ufunc.nin, numpy_ufunc.nout

    def __call__(self, *args, **kwargs) -> Any:
        return _call(self.__name__, self._u, args, kwargs)

    def reduce(self, *args, **kwargs) -> Any:
        return _call(f"{self.__name__}.reduce", self._u.reduce, args, kwargs)

    def accumulate(self, *args, **kwargs) -> Any:
        return _call(f"{self.__name__}.accumulate", self._u.accumulate, args, kwargs)

    def reduceat(self, *args, **kwargs) -> Any:
        return _call(f"{self.__name__}.reduceat", self._u.reduceat, args, kwargs)

    def outer(self, *args, **kwargs) -> Any:
        return _call(f"{self.__name__}.outer", self._u.outer, args, kwargs)

    def at(self, a, indices, b=None) -> None:
        parts, _, _ = a._index(indices, f"{self.__name__}.at")
        args = (a._a, parts) if b is None else (a._a, parts, _unwrap(b, self.__name__))
        monitor.launch(f"{self.__name__}.at")
        self._u.at(*args)

    def __repr__(self) -> str:
        return f"<ufunc '{self.__name__}'>"


def _to_device(data, dtype=None, copy=None):
    """asarray / array: NumPy or Python data copied to the current device (one launch)."""
    if isinstance(data, ndarray):
        if dtype is not None and np.dtype(dtype) != data.dtype:
            return data.astype(dtype)
        return data.copy() if copy else data
    if isinstance(data, (list, tuple)) and any(isinstance(item, ndarray) for item in data):
        return namespace.stack([_to_device(item) for item in data]).astype(
            dtype or np.result_type(*[getattr(item, "dtype", type(item)) for item in data]))
    monitor.launch("host to device copy")
    return ndarray._make(np.array(data, dtype=dtype, copy=True), _Devices.current)


def asarray(a, dtype=None, order=None, blocking=False) -> ndarray:
    return _to_device(a, dtype)


def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, blocking=False) -> ndarray:
    result = _to_device(obj, dtype, copy=copy)
    return result.reshape((1,) * (ndmin - result.ndim) + result.shape) if ndmin else result


def asnumpy(a, stream=None, order="C", out=None, blocking=True) -> np.ndarray:
    if isinstance(a, ndarray):
        return a.get()
    return np.asarray(a)


def get_array_module(*args) -> Any:
    return namespace if any(isinstance(arg, ndarray) for arg in args) else np


def take(a, indices, axis=None, out=None) -> ndarray:
    return _call("take", lambda x, i, o: np.take(x, i, axis=axis, out=o, mode="wrap"),
                 (a, indices, out), {})


def take_along_axis(a, indices, axis) -> ndarray:
    return _call("take_along_axis",
                 lambda x, i: np.take_along_axis(x, i % x.shape[axis], axis=axis),
                 (a, indices), {})


def put_along_axis(a, indices, values, axis) -> ndarray:
    return _call("put_along_axis",
                 lambda x, i, v: np.put_along_axis(x, i % x.shape[axis], v, axis=axis),
                 (a, indices, values), {})
