"""A strict CuPy stand-in: NumPy underneath, CuPy 14's behaviour on top, so that minigrad's
CUDA backend runs, and is tested, on a machine without a GPU.

`install(devices=2)` makes minigrad's 'cuda' devices use it (tests/conftest.py does so when
no GPU is present), `with installed(devices):` for a block (`benchmarks/train_step.py --count`
counts inside one). Where CuPy and NumPy differ,
it behaves as CuPy does:

- API surface: only the names CuPy 14 has (`cupy_names.json`, written from an installed CuPy
  by `scripts/make_cupy_names.py`); a name CuPy lacks raises AttributeError, and so does a
  CuPy name the stand-in does not implement (the message says which of the two it is).
- `ndarray.flags` has `c_contiguous`, `f_contiguous` and `owndata` only.
- No implicit conversion to NumPy: `numpy.asarray(x)` raises TypeError (use `x.get()` or
  `cupy.asnumpy(x)`), and a NumPy array as an operand of an op raises TypeError.
- Reductions return 0-d arrays, never NumPy scalars.
- Results are laid out as CuPy lays them out: a ufunc's (an operator's, a matrix product's), a
  reduction's and a fused function's output is a new C-contiguous array (`_core/_kernel.pyx`
  makes it with `_ndarray_init(out_shape)`), where NumPy follows its inputs' order; `astype`
  and `copy(order=)` keep the order they are given.
- Integer array indices wrap around (`x[[5]]` of 3 elements is `x[[2]]`), in indexing,
  `take`, `take_along_axis` and `put_along_axis`; integer scalars out of range raise.
- Devices: `cuda.Device(n)` (a context manager, or `.use()`), `n` below the device count
  given to `install`; arrays are made on the current device and know it (`x.device.id`); an
  op on an array of another device raises ValueError, as CuPy does where peer access is
  unavailable. A random generator computes on the device where it was made.
- No `__index__`: a 0-d array is not an index (`range(x)`, `list[x]` raise TypeError).
- `cupy.fuse` runs the function eagerly, as one launch; inside it only ufuncs, operators,
  `astype`, `copy` and reductions (no `mean`, no `keepdims`) are allowed, as in CuPy's fusion
  (`_core/fusion.pyx`), one reduction at most, after which only its result, values made
  from it and constants may be used (an argument there raises, as in CuPy). An argument has
  what CuPy's fusion variables have (`_FusionVarArray`: dtype, ndim, operators, `astype`,
  `copy`, `x[...] = y`): a method, an index, `shape` or `T` raises (CuPy would fall back for
  good to its slower new fusion). Each ufunc is computed in the loop CuPy's fusion picks
  from CuPy's own loops of that ufunc (`cupy_names.json`'s "ufunc loops", from
  `cupy.<ufunc>.types`): the first that the arrays cast to safely and the weak scalars fit
  (`1 - 0.1` of two Python scalars gives float16 0.89990234).
  `ElementwiseKernel`, `ReductionKernel` and `RawKernel` raise: CUDA source runs on a GPU only.

Counting, in `monitor` (`reset()`; `launches`, `syncs`, Counters by name; `largest_array`):

- one kernel launch per call that reads or writes element data on the device: each ufunc
  (in place or not), reduction, copy (`copy`, `astype` to another dtype, a host-to-device
  copy such as `asarray` of NumPy data or of a Python scalar), fill (`zeros`, `ones`,
  `full`, `fill`), fancy-index gather or scatter (indexing with an integer or boolean array,
  assignment into an index other than a plain view), matrix product (`matmul`, `dot`,
  `einsum`, `vdot`: one BLAS call), sort, random draw, fused function; none for views
  (basic slicing, `reshape` of a contiguous array, `transpose`, `broadcast_to`, ...),
  shape queries and `empty`. Besides, the launches CuPy 14's composite functions make
  (`_extra_launches`, read from its source):
  `matmul` with more than 2 dimensions copies each operand that is not C-contiguous
  (`ascontiguousarray`), float16 ones to float32 and the result back, and makes 3 pointer
  arrays of ndim - 2 launches each where it broadcasts a batch axis
  (`_core/_routines_linalg.pyx` `matmul`, `_mat_ptrs`); on 2 dimensions it copies an operand
  neither C- nor F-contiguous (`_mat_to_cublas_contiguous`); `mean` is a CUB sum and a
  division (`_core/_routines_statistics.pyx` `_ndarray_mean`, CUB being CuPy's default
  accelerator); n-d `take_along_axis` / `put_along_axis` build n - 1 `arange` index arrays
  and combine the n indices before the gather or scatter: 2n + 1 (`_indexing/indexing.py`,
  `_core/_routines_indexing.pyx`); `concatenate` copies each array into the result, or, for
  more than 8 small arrays of one dtype, one kernel and the copy of their pointers
  (`_core/_routines_manipulation.pyx` `_concatenate`). This is the rule the targets are
  counted by; check it against `cupyx.profiler` on a GPU before relying on figures to the
  last launch.
- one synchronization per read of device data by the host: `int()`, `float()`, `bool()`,
  `.item()`, `.tolist()`, `.get()`, `asnumpy`, `repr`, indexing or assigning with a boolean
  mask (CuPy needs the count of True), `nonzero` / `flatnonzero` / `argwhere` / `unique`,
  and an explicit `synchronize()`. With `monitor.forbid_synchronize()` active, each of these
  raises `DeviceSynchronized` (as `cupyx.allow_synchronize(False)` does).
"""

import builtins
import functools
import json
import numbers
import types
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import numpy as np

NAMES = json.loads((Path(__file__).with_name("cupy_names.json")).read_text())
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
    def launch_count(self):
        return sum(self.launches.values())

    @property
    def sync_count(self):
        return sum(self.syncs.values())

    def launch(self, what, count=1) -> None:
        if not self._quiet:
            self.launches[what] += count

    def sync(self, what):
        if self._forbidden:
            raise DeviceSynchronized(f"{what} synchronizes the device, and synchronization is "
                                     "forbidden here")
        self.syncs[what] += 1

    @contextmanager
    def forbid_synchronize(self):
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

    def __enter__(self):
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

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
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

    def __getitem__(self, name):
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

    def __iter__(self):
        _outside_fusion("iteration")
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    # ----- reads by the host --------------------------------------------------------------
    def __array__(self, *args, **kwargs):
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

    def get(self, stream=None, order="C", out=None):
        monitor.sync("get")
        return np.array(self._a, order=order, copy=True)

    def set(self, array, stream=None):
        if not isinstance(array, np.ndarray) or array.shape != self.shape:
            raise ValueError("set: needs a NumPy array of the same shape")
        monitor.launch("set")
        self._a[...] = array

    # ----- NumPy's protocols: dispatched to the stand-in (CuPy's own behaviour) -----------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        ours = globals()["_namespace"].__dict__.get(ufunc.__name__)
        if not isinstance(ours, ufunc_type):
            return NotImplemented
        return getattr(ours, method)(*inputs, **kwargs)

    def __array_function__(self, function, types, args, kwargs):
        ours = globals()["_namespace"].__dict__.get(function.__name__)
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

    def __getitem__(self, index):
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
    def astype(self, dtype, order="K", casting=None, subok=None, copy=True):
        if np.dtype(dtype) == self.dtype and not copy:
            return self
        return _call("astype", lambda a: a.astype(dtype, order=order), (self,), {})

    def reshape(self, *shape, order="C"):
        _outside_fusion("reshape")
        return _call("reshape", lambda a: a.reshape(*shape, order=order), (self,), {})

    def take(self, indices, axis=None, out=None):
        _outside_fusion("take")
        return _namespace.take(self, indices, axis=axis, out=out)

    def copy(self, order="C"):
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

    def __call__(self, *args, **kwargs):
        return _call(self.__name__, self._u, args, kwargs)

    def reduce(self, *args, **kwargs):
        return _call(f"{self.__name__}.reduce", self._u.reduce, args, kwargs)

    def accumulate(self, *args, **kwargs):
        return _call(f"{self.__name__}.accumulate", self._u.accumulate, args, kwargs)

    def reduceat(self, *args, **kwargs):
        return _call(f"{self.__name__}.reduceat", self._u.reduceat, args, kwargs)

    def outer(self, *args, **kwargs):
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
        return _namespace.stack([_to_device(item) for item in data]).astype(
            dtype or np.result_type(*[getattr(item, "dtype", type(item)) for item in data]))
    monitor.launch("host to device copy")
    return ndarray._make(np.array(data, dtype=dtype, copy=True), _Devices.current)


def asarray(a, dtype=None, order=None, blocking=False):
    return _to_device(a, dtype)


def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, blocking=False):
    result = _to_device(obj, dtype, copy=copy)
    return result.reshape((1,) * (ndmin - result.ndim) + result.shape) if ndmin else result


def asnumpy(a, stream=None, order="C", out=None, blocking=True):
    if isinstance(a, ndarray):
        return a.get()
    return np.asarray(a)


def get_array_module(*args):
    return _namespace if any(isinstance(arg, ndarray) for arg in args) else np


def take(a, indices, axis=None, out=None):
    return _call("take", lambda x, i, o: np.take(x, i, axis=axis, out=o, mode="wrap"),
                 (a, indices, out), {})


def take_along_axis(a, indices, axis):
    return _call("take_along_axis",
                 lambda x, i: np.take_along_axis(x, i % x.shape[axis], axis=axis),
                 (a, indices), {})


def put_along_axis(a, indices, values, axis):
    return _call("put_along_axis",
                 lambda x, i, v: np.put_along_axis(x, i % x.shape[axis], v, axis=axis),
                 (a, indices, values), {})


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


def fuse(*args, **kwargs):
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


def _gpu_only(name):
    class Kernel:
        def __init__(self, *args, **kwargs) -> None:
            self.source = args

        def __call__(self, *args, **kwargs):
            raise NotImplementedError(f"cupy.{name}: CUDA source runs on a GPU only; the CuPy "
                                      "stand-in cannot run it (write it with cupy.fuse, or test "
                                      "it on a GPU)")
    Kernel.__name__ = name
    return Kernel


# ----- cupy.random ---------------------------------------------------------------------------
class _BitGenerator:
    """A bit generator of `size` states (by default 8 · 256 · the GPU's SM count, as CuPy's
    `_cuRANDGenerator`, `random/_bit_generator.pyx`): its draws depend on the seed and on
    `size`, as CuPy's do; making it fills the states (two launches: zeros, cuRAND's init)."""

    kind = "BitGenerator"

    def __init__(self, seed=None, *, size=-1) -> None:
        self.seed = seed
        self.size = 8 * 256 * _Devices.multiprocessors if size < 0 else size
        self.device = _Devices.current
        monitor.bit_generators[self.kind] += 1
        monitor.launch(f"{self.kind} init", 2)


def _bit_generator(kind):
    return type(kind, (_BitGenerator,), {"kind": kind})


class _Generator:
    """cupy.random.Generator over a bit generator; it computes on the device it was made on."""

    def __init__(self, bit_generator) -> None:
        self.bit_generator = bit_generator
        seed = bit_generator.seed
        self._rng = np.random.default_rng(
            None if seed is None else [int(seed) & (2 ** 64 - 1), bit_generator.size])

    def _draw(self, name, make):
        if self.bit_generator.device != _Devices.current:
            raise ValueError(f"The device where the array resides ({self.bit_generator.device}) "
                             f"is different from the current device ({_Devices.current}). Peer "
                             "access is unavailable between these devices. (random generator)")
        monitor.launch(f"random.{name}")
        return ndarray._make(np.asarray(make()), _Devices.current)

    def random(self, size=None, dtype=np.float64, out=None):
        return self._draw("random", lambda: self._rng.random(size, dtype=dtype))

    def standard_normal(self, size=None, dtype=np.float64, out=None):
        return self._draw("standard_normal", lambda: self._rng.standard_normal(size, dtype=dtype))

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        return self._draw("integers", lambda: self._rng.integers(low, high, size, dtype=dtype,
                                                                 endpoint=endpoint))

    def uniform(self, low=0.0, high=1.0, size=None, dtype=np.float64):
        return self._draw("uniform", lambda: self._rng.uniform(low, high, size).astype(dtype))


def default_rng(seed=None):
    """A Generator; an int seed (or None) makes an XORWOW bit generator, as CuPy's does."""
    if not isinstance(seed, _BitGenerator):
        seed = _bit_generator("XORWOW")(seed)
    return _Generator(seed)


# ----- cupy.cuda -------------------------------------------------------------------------------
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


def _numpy_members(label, numpy_namespace):
    """The CuPy names of `label` that NumPy's namespace also has, wrapped to compute on the
    current device (ufuncs, functions) or shared (dtypes, scalar types, constants)."""
    members = {}
    for name in NAMES[label]:
        value = getattr(numpy_namespace, name, None)
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


def _make_namespace():
    random = _module("cupy.random", {
        "default_rng": default_rng, "XORWOW": _bit_generator("XORWOW"),
        "Philox4x3210": _bit_generator("Philox4x3210"), "MRG32k3a": _bit_generator("MRG32k3a"),
        "BitGenerator": _BitGenerator})
    cuda = _module("cupy.cuda", {
        "Device": Device, "runtime": _Runtime, "is_available": lambda: _Devices.count > 0,
        "get_device_id": _current, "Stream": type("Stream", (), {"null": _Stream()}),
        "get_current_stream": _Stream})
    linalg = _module("cupy.linalg", _numpy_members("cupy.linalg", np.linalg))
    members = _numpy_members("cupy", np)
    members.update({
        "__version__": VERSION, "ndarray": ndarray, "asarray": asarray, "array": array,
        "asanyarray": asarray, "asnumpy": asnumpy, "get_array_module": get_array_module,
        "take": take, "take_along_axis": take_along_axis, "put_along_axis": put_along_axis,
        "fuse": fuse, "empty": _empty, "empty_like": _empty_like,
        "random": random, "cuda": cuda, "linalg": linalg,
        "is_available": lambda: _Devices.count > 0,
        **{name: _gpu_only(name) for name in ("ElementwiseKernel", "ReductionKernel",
                                              "RawKernel", "RawModule")}})
    return _module("cupy", members)


_namespace = _make_namespace()
cupy = _namespace  # the stand-in, to use as `xp`


def install(devices=2):
    """Make minigrad's 'cuda' devices run on the stand-in, with `devices` GPUs (0: none, as on
    a machine whose driver finds no GPU); returns it. Backends made before are forgotten."""
    from ..backend import use_cupy

    _Devices.count, _Devices.current = devices, 0
    use_cupy(_namespace)
    return _namespace


def uninstall() -> None:
    """Back to the real CuPy (imported at the next 'cuda' device asked for)."""
    from ..backend import use_cupy

    use_cupy(None)


@contextmanager
def installed(devices=2):
    """`install(devices)` inside the block; afterwards whatever CuPy was in use before (the
    real one, or the stand-in with its device count)."""
    from ..backend import cupy_backend, use_cupy

    previous, count, current = cupy_backend._stand_in, _Devices.count, _Devices.current
    try:
        yield install(devices)
    finally:
        _Devices.count, _Devices.current = count, current
        use_cupy(previous)


def is_stand_in(xp) -> bool:
    return xp is _namespace


def main(argv):
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


if __name__ == "__main__":  # the imported module's stand-in, the one minigrad sees
    import sys

    from minigrad.testing import fake_cupy

    fake_cupy.main(sys.argv[1:])


