"""Data-parallel training over several processes (one model replica per process).

    mpiexec -n 2 python -m mpi4py my_training.py

`init()` returns the communicator of this process group: an `MPICommunicator` (mpi4py and
an MPI from PyPI wheels, the `distributed` extra) when the process was started by an MPI
launcher, an `NCCLCommunicator` (nccl.py) over it for training on GPUs, a `SingleProcess`
(world size 1, every collective a no-op) otherwise. A training
loop then checks and broadcasts the parameters and sums the gradients with a
`GradientReducer` (reducer.py); docs/distributed.md has the design and its promises.

`python -m mpi4py` (rather than plain `python`) makes an exception on any rank end the whole
job, with that rank's traceback, instead of leaving the other ranks waiting.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from .communicator import DEFAULT_TIMEOUT_S, DistributedError, MPICommunicator, SingleProcess
from .reducer import GradientReducer

if TYPE_CHECKING:  # nccl.py is imported only for a 'cuda' device
    from .nccl import NCCLCommunicator

# Variables that MPI launchers set in the processes they start (MPICH / Intel MPI's hydra,
# Open MPI, PMIx-based launchers, Slurm's srun with PMI).
_LAUNCHER_VARIABLES = ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK")


def launched_by_mpi() -> bool:
    """Whether an MPI launcher (mpiexec, mpirun, srun) started this process."""
    return any(name in os.environ for name in _LAUNCHER_VARIABLES)


def init(required: bool = False, timeout_s: float = DEFAULT_TIMEOUT_S, device: str = "cpu"
         ) -> SingleProcess | MPICommunicator | NCCLCommunicator:
    """The communicator of this process: MPI when launched by mpiexec (with NCCL for the
    arrays of a `device` "cuda"), else a single process. With `required`, a process that was
    not launched by mpiexec is a DistributedError that says how to launch it; a launched one
    without mpi4py always is."""
    if not launched_by_mpi():
        if required:
            raise DistributedError(
                "distributed training needs an MPI launcher: run it as `mpiexec -n 2 python "
                "-m mpi4py SCRIPT ...` (pip install -e '.[distributed]' installs mpi4py and "
                "MPICH)")
        return SingleProcess(timeout_s)
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        raise DistributedError("this process was started by mpiexec, but mpi4py is not "
                               "installed: pip install -e '.[distributed]'") from None
    if required and "mpi4py.run" not in sys.modules:
        raise DistributedError("run it as `mpiexec -n N python -m mpi4py SCRIPT ...`: without "
                               "`-m mpi4py` an error on one rank leaves the others waiting")
    mpi = MPICommunicator(timeout_s)
    if str(device).startswith("cuda") and mpi.world_size > 1:
        from .nccl import NCCLCommunicator

        return NCCLCommunicator(mpi)
    return mpi


__all__ = ["DistributedError", "GradientReducer", "MPICommunicator", "SingleProcess", "init",
           "launched_by_mpi"]
