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

The package: `array.py` (the arrays, the counter, devices, the rules inside a fused
function), `fusion.py` (`cupy.fuse`), `random.py` (`cupy.random`), `install.py` (the `cupy`
namespace and installing it).
"""

from .array import (
    NAMES,
    VERSION,
    CUDARuntimeError,
    Device,
    DeviceSynchronized,
    Monitor,
    _Devices,
    monitor,
    ndarray,
)
from .install import cupy, install, installed, is_stand_in, main, uninstall

__all__ = ["NAMES", "VERSION", "CUDARuntimeError", "Device", "DeviceSynchronized", "Monitor",
           "cupy", "install", "installed", "is_stand_in", "main", "monitor", "ndarray",
           "uninstall"]
