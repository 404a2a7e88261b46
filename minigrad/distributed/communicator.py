"""Communicators: the few collectives data-parallel training needs, on one process or many.

- `SingleProcess`: world size 1; every collective returns its input (what the Trainer sees
  when it is not launched by mpiexec, so that it has no special cases).
- `MPICommunicator`: MPI through mpi4py, on host (NumPy) arrays.

Every collective of `MPICommunicator` is started non-blocking and waited for by polling, with
short sleeps once it takes longer than a few milliseconds, so that a waiting rank leaves its
core to others instead of spinning (MPI's blocking calls busy-wait), and so that it has a
deadline: a rank that waits longer than `timeout_s` prints
which collective it was in and at which step, and aborts the whole job (MPI jobs otherwise
hang for ever when one rank dies or takes another path).
"""

import json
import sys
import time
from typing import Any

import numpy as np

from ..errors import MinigradError

SPIN_S = 0.02  # polling without a pause this long first
SHORTEST_PAUSE_S = 5e-5
LONGEST_PAUSE_S = 0.001
DEFAULT_TIMEOUT_S = 600.0  # a collective's deadline unless the caller gives one
# A rank's output travels to mpiexec through its launcher, and MPI_Abort ends the launchers
# too: an aborting rank waits this long after printing so that its message is not lost.
ABORT_DELIVERY_S = 1.0


def wait_until(done, timeout_s, expired) -> None:
    """Call `done()` until it returns true: without a pause for the first SPIN_S (MPI moves a
    message on only while it is asked, and a large one takes many steps), then with sleeps of
    SHORTEST_PAUSE_S doubling to LONGEST_PAUSE_S, so that a long wait leaves the core to others.
    `expired(seconds)` is called once the wait passes `timeout_s` (it is expected to end the
    job)."""
    started = time.monotonic()
    pause = 0.0
    while not done():
        waited = time.monotonic() - started
        if waited > timeout_s:
            expired(waited)
        if waited > SPIN_S:
            time.sleep(pause)
            pause = min(max(2 * pause, SHORTEST_PAUSE_S), LONGEST_PAUSE_S)


class DistributedError(MinigradError, RuntimeError):
    """Ranks that disagree (parameters, steps), a launcher or library that is missing."""


class SingleProcess:
    """The communicator of a process that trains alone: rank 0 of 1. `timeout_s` bounds a
    wait for the device (an NCCLCommunicator over it); `abort` raises the message."""

    rank, world_size, local_rank = 0, 1, 0
    name = "single process"

    def __init__(self, timeout_s: float = DEFAULT_TIMEOUT_S) -> None:
        self.context = ""
        self.timeout_s = float(timeout_s)

    def takes(self, array) -> bool:
        return True

    def synchronize(self, what="the device") -> None:
        pass

    def allreduce_sum_(self, array, what="allreduce") -> Any:
        return array

    def allgather(self, array, what="allgather") -> np.ndarray:
        return np.asarray(array)[None]

    def broadcast_(self, array, root=0, what="broadcast") -> Any:
        return array

    def allgather_object(self, value, what="allgather") -> list[Any]:
        return [value]

    def broadcast_bytes(self, data, root=0, what="broadcast") -> bytes:
        return data

    def broadcast_object(self, value, root=0, what="broadcast") -> Any:
        return value

    def barrier(self, what="barrier") -> None:
        pass

    def abort(self, message) -> None:
        """No other rank to end: `message` as a DistributedError."""
        raise DistributedError(message)


class MPICommunicator:
    """MPI_COMM_WORLD of mpi4py; `timeout_s` is every collective's deadline."""

    name = "MPI"

    def __init__(self, timeout_s=DEFAULT_TIMEOUT_S, comm=None) -> None:
        from mpi4py import MPI

        self.MPI = MPI
        self.comm = MPI.COMM_WORLD if comm is None else comm
        self.rank, self.world_size = self.comm.Get_rank(), self.comm.Get_size()
        self.local_rank = self.comm.Split_type(MPI.COMM_TYPE_SHARED).Get_rank()
        self.timeout_s = float(timeout_s)
        self.context = ""  # e.g. "step 12": named in a deadline's message

    def takes(self, array) -> bool:
        """Whether the collectives take `array` as it is: host (NumPy) arrays."""
        return isinstance(array, np.ndarray)

    def synchronize(self, what="the device") -> None:
        """Nothing to wait for: MPI's collectives are complete when they return."""

    # ----- the collectives -----------------------------------------------------------------------
    def allreduce_sum_(self, array, what="allreduce") -> Any:
        """Sum `array` (contiguous NumPy) over the ranks, in place."""
        self._wait(self.comm.Iallreduce(self.MPI.IN_PLACE, array, op=self.MPI.SUM), what)
        return array

    def allgather(self, array, what="allgather") -> np.ndarray:
        """(world_size, *array.shape): every rank's `array`, in rank order."""
        array = np.ascontiguousarray(array)
        gathered = np.empty((self.world_size, *array.shape), array.dtype)
        self._wait(self.comm.Iallgather(array, gathered), what)
        return gathered

    def broadcast_(self, array, root=0, what="broadcast") -> Any:
        """Rank `root`'s `array` into every rank's `array`, in place."""
        self._wait(self.comm.Ibcast(array, root=root), what)
        return array

    def allgather_object(self, value, what="allgather") -> list[Any]:
        """Every rank's JSON-able `value`, in rank order (sent as JSON, never pickled)."""
        data = np.frombuffer(json.dumps(value).encode("utf-8"), np.uint8)
        sizes = self.allgather(np.array([data.size], np.int64), what)[:, 0]
        gathered = np.empty(int(sizes.sum()), np.uint8)
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]])
        self._wait(self.comm.Iallgatherv(data, [gathered, sizes, offsets, self.MPI.BYTE]), what)
        return [json.loads(bytes(gathered[o:o + s]).decode("utf-8"))
                for o, s in zip(offsets, sizes)]

    def broadcast_bytes(self, data, root=0, what="broadcast") -> bytes:
        """Rank `root`'s `data` (bytes; ignored elsewhere) on every rank."""
        size = np.array([len(data) if self.rank == root else 0], np.int64)
        self.broadcast_(size, root, what)
        buffer = (np.frombuffer(data, np.uint8).copy() if self.rank == root else
                  np.empty(int(size[0]), np.uint8))
        self.broadcast_(buffer, root, what)
        return buffer.tobytes()

    def broadcast_object(self, value, root=0, what="broadcast") -> Any:
        """Rank `root`'s JSON-able `value` on every rank (as JSON, never pickled)."""
        data = json.dumps(value).encode("utf-8") if self.rank == root else b""
        return json.loads(self.broadcast_bytes(data, root, what).decode("utf-8"))

    def barrier(self, what="barrier") -> None:
        self._wait(self.comm.Ibarrier(), what)

    # ----- waiting with a deadline ----------------------------------------------------------------
    def _wait(self, request, what) -> None:
        def expired(waited) -> None:
            self.abort(
                f"rank {self.rank} of {self.world_size} waited {waited:.0f} s for "
                f"{what}{' at ' + self.context if self.context else ''}; the other ranks "
                "never joined it. Usually one rank died or hangs, or the ranks took "
                "different paths (a different number of steps or batches); raise the "
                "deadline (--collective-timeout) if a step is simply slow")

        wait_until(request.Test, self.timeout_s, expired)

    def abort(self, message) -> None:
        """Print `message` on this rank's stderr and end every rank of the job."""
        print(f"error: {message}", file=sys.stderr, flush=True)
        time.sleep(ABORT_DELIVERY_S)
        self.comm.Abort(1)
