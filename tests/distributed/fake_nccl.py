"""A stand-in for the part of CuPy that NCCLCommunicator uses, on any machine: "device" arrays
are NumPy arrays behind a pointer, and NCCL's collectives are done by MPI on them, in the
call protocol NCCL has (a unique id from rank 0, pointers, element counts, NCCL data types,
a stream). It checks that the communicator calls NCCL as NCCL must be called, as CuPy 14
has it (`cupy_backends/cuda/libs/nccl.pyx`): the id is 128 bytes, and `cuda.nccl` is there
only once `fake_nccl.cuda.nccl` is imported by name (`import cupy` does not load
`cupy.cuda.nccl`), and `cuda.nccl.available` says whether CuPy found libnccl (CuPy imports
without it and sets the flag false). The GPU run itself needs a GPU."""

import itertools
import sys
import types

import numpy as np
from mpi4py import MPI

_arrays = {}  # pointer -> the NumPy array behind a stand-in device array
_pointers = itertools.count(4096, 4096)
__version__ = "14.2.0"
TYPES = {1: np.float16, 2: np.float32, 3: np.float64, 4: np.int32, 5: np.int64, 6: np.uint8}


class ndarray:  # noqa: N801 (CuPy's name)
    """A device array: its data, and `.data.ptr` as CuPy has it."""

    def __init__(self, values):
        self.values = np.ascontiguousarray(values)
        self.data = types.SimpleNamespace(ptr=next(_pointers))
        _arrays[self.data.ptr] = self.values

    shape = property(lambda self: self.values.shape)
    dtype = property(lambda self: self.values.dtype)
    size = property(lambda self: self.values.size)

    def get(self):
        return self.values.copy()


def ascontiguousarray(array):
    return array


def empty(shape, dtype):
    return ndarray(np.empty(shape, dtype))


class _Stream:
    ptr, done = 7, True


class _Device:
    used = None

    def __init__(self, index):
        self.index = index

    def use(self):
        _Device.used = self.index


def _buffer(pointer, count, datatype):
    values = _arrays[pointer].reshape(-1)
    assert values.size == count and values.dtype == TYPES[datatype], "count or type wrong"
    return values


class NcclCommunicator:
    def __init__(self, ndev, unique_id, rank):
        assert isinstance(unique_id, bytes) and len(unique_id) == 128, "commId: 128 bytes"
        self.ndev, self.unique_id, self.rank = ndev, unique_id, rank
        assert MPI.COMM_WORLD.Get_size() == ndev and MPI.COMM_WORLD.Get_rank() == rank

    def allReduce(self, send, receive, count, datatype, op, stream):  # noqa: N802
        assert op == nccl.NCCL_SUM and stream == _Stream.ptr
        values = _buffer(receive, count, datatype)
        MPI.COMM_WORLD.Allreduce(_buffer(send, count, datatype).copy(), values)

    def allGather(self, send, receive, count, datatype, stream):  # noqa: N802
        assert stream == _Stream.ptr
        gathered = _arrays[receive].reshape(-1)
        MPI.COMM_WORLD.Allgather(_buffer(send, count, datatype), gathered)

    def bcast(self, pointer, count, datatype, root, stream):
        assert stream == _Stream.ptr
        MPI.COMM_WORLD.Bcast(_buffer(pointer, count, datatype), root=root)


def _unique_id():
    return np.random.default_rng().integers(0, 256, 128, dtype=np.uint8).tobytes()


nccl = types.ModuleType(f"{__name__}.cuda.nccl")
vars(nccl).update(
    available=True, get_unique_id=_unique_id, NcclCommunicator=NcclCommunicator, NCCL_SUM=0,
    NCCL_FLOAT16=1, NCCL_FLOAT32=2, NCCL_FLOAT64=3, NCCL_INT32=4, NCCL_INT64=5, NCCL_UINT8=6)
cuda = types.ModuleType(f"{__name__}.cuda")
vars(cuda).update(Device=_Device, get_current_stream=lambda: _Stream())
sys.modules[cuda.__name__], sys.modules[nccl.__name__] = cuda, nccl  # importable by name
