"""NCCLCommunicator: the collectives of GPU arrays by NCCL (through CuPy), on the device, with
no copy through the host; everything else (host arrays, objects, bytes) by MPI.

One GPU per rank: rank r uses `cuda.Device(local_rank)` (its index among the ranks of its
machine). NCCL's unique id (128 bytes) is made on rank 0 and sent to the others over MPI.
`cupy.cuda.nccl` is imported by name: `import cupy` does not load it. A collective of
device arrays is enqueued on the current stream and returns at once: the kernels after it
(the optimizer's) wait for it on the device, not on the host. Where the host must read the
device anyway (the Trainer's read steps), `synchronize(what)` waits for the stream by polling
(communicator.wait_until) under the MPI communicator's deadline, so that a rank whose peer died
ends the job with a message instead of hanging in NCCL for ever. Over a `SingleProcess` (one
GPU, no launcher) the same calls run on a communicator of one rank.
`cupy.cuda.nccl` imports without libnccl and sets `available` false: checked here.
"""

import importlib
from typing import Any

import numpy as np

from ..backend.cupy_backend import INSTALL_CUPY
from .communicator import DistributedError, wait_until


class NCCLCommunicator:
    """NCCL for `cupy` arrays, the MPI communicator `mpi` for the rest."""

    name = "NCCL"

    def __init__(self, mpi, cupy=None) -> None:
        try:
            if cupy is None:
                import cupy  # type: ignore[no-redef]
            nccl = importlib.import_module(f"{cupy.__name__}.cuda.nccl")
        except ImportError as error:
            raise DistributedError(f"NCCL needs CuPy 14 and its NCCL runtime ({error}): "
                                   f"{INSTALL_CUPY}") from None
        if not nccl.available:  # CuPy imports without libnccl, only warns and says so here
            raise DistributedError(
                f"NCCL: CuPy {cupy.__version__} found no NCCL library (libnccl) on this "
                "machine: pip install 'nvidia-nccl-cu12' (CUDA 12) or 'nvidia-nccl-cu13' "
                "(CUDA 13), or train on one GPU without mpiexec")
        self.mpi, self.cupy = mpi, cupy
        self.rank, self.world_size, self.local_rank = mpi.rank, mpi.world_size, mpi.local_rank
        self.device = cupy.cuda.Device(self.local_rank)
        self.device.use()
        unique_id = nccl.get_unique_id() if self.rank == 0 else None
        unique_id = mpi.broadcast_bytes(unique_id, what="the broadcast of NCCL's id")
        self.comm = nccl.NcclCommunicator(self.world_size, unique_id, self.rank)
        self._sum = nccl.NCCL_SUM
        self._types = {"float16": nccl.NCCL_FLOAT16, "float32": nccl.NCCL_FLOAT32,
                       "float64": nccl.NCCL_FLOAT64, "int32": nccl.NCCL_INT32,
                       "int64": nccl.NCCL_INT64, "uint8": nccl.NCCL_UINT8}

    @property
    def context(self) -> str:
        return self.mpi.context

    @context.setter
    def context(self, value: str) -> None:
        self.mpi.context = value

    def takes(self, array: Any) -> bool:
        """Both kinds: GPU arrays go through NCCL, host arrays through MPI."""
        return isinstance(array, (self.cupy.ndarray, np.ndarray))

    # ----- the collectives -----------------------------------------------------------------------
    def allreduce_sum_(self, array: Any, what: str = "allreduce") -> Any:
        if isinstance(array, np.ndarray):
            return self.mpi.allreduce_sum_(array, what)
        self.comm.allReduce(array.data.ptr, array.data.ptr, array.size, self._type(array, what),
                            self._sum, self._stream())
        return array

    def allgather(self, array: Any, what: str = "allgather") -> Any:
        if isinstance(array, np.ndarray):
            return self.mpi.allgather(array, what)
        array = self.cupy.ascontiguousarray(array)
        gathered = self.cupy.empty((self.world_size, *array.shape), array.dtype)
        self.comm.allGather(array.data.ptr, gathered.data.ptr, array.size,
                            self._type(array, what), self._stream())
        return gathered

    def broadcast_(self, array: Any, root: int = 0, what: str = "broadcast") -> Any:
        if isinstance(array, np.ndarray):
            return self.mpi.broadcast_(array, root, what)
        self.comm.bcast(array.data.ptr, array.size, self._type(array, what), root,
                        self._stream())
        return array

    def allgather_object(self, value: Any, what: str = "allgather") -> list[Any]:
        return self.mpi.allgather_object(value, what)

    def broadcast_bytes(self, data: bytes | None, root: int = 0, what: str = "broadcast"
                        ) -> bytes:
        return self.mpi.broadcast_bytes(data, root, what)

    def broadcast_object(self, value: Any, root: int = 0, what: str = "broadcast") -> Any:
        return self.mpi.broadcast_object(value, root, what)

    def barrier(self, what="barrier") -> None:
        self.synchronize(what)
        self.mpi.barrier(what)

    def synchronize(self, what="the device") -> None:
        """Wait for this rank's stream (its NCCL calls included), under the deadline."""
        stream = self.cupy.cuda.get_current_stream()

        def expired(waited) -> None:
            self.mpi.abort(
                f"rank {self.rank} of {self.world_size} waited {waited:.0f} s for the GPU "
                f"to finish {what}{' at ' + self.context if self.context else ''}; an NCCL "
                "collective never completed: usually another rank died or hangs, or the "
                "ranks took different paths")

        wait_until(lambda: stream.done, self.mpi.timeout_s, expired)

    # ----- helpers --------------------------------------------------------------------------------
    def _type(self, array, what):
        try:
            return self._types[array.dtype.name]
        except KeyError:
            raise DistributedError(f"{what}: NCCL cannot reduce {array.dtype.name} arrays; "
                                   f"use one of {', '.join(self._types)}") from None

    def _stream(self):
        return self.cupy.cuda.get_current_stream().ptr
