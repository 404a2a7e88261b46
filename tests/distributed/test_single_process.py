"""Without an MPI launcher the distributed API is a single process: world size 1, every
collective returns its input, and asking for distributed training says how to launch it."""

import numpy as np
import pytest

import minigrad as mg
from minigrad import distributed, nn


@pytest.fixture
def not_launched(monkeypatch):
    for name in ("PMI_RANK", "PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_RANK"):
        monkeypatch.delenv(name, raising=False)


def test_a_process_not_started_by_mpiexec_trains_alone(not_launched):
    communicator = distributed.init()
    assert isinstance(communicator, distributed.SingleProcess)
    assert (communicator.rank, communicator.world_size, communicator.local_rank) == (0, 1, 0)
    values = np.arange(3.0)
    assert communicator.allreduce_sum_(values) is values
    assert communicator.allgather(values).shape == (1, 3)
    assert communicator.allgather_object({"a": 1}) == [{"a": 1}]


def test_asking_for_distributed_training_without_a_launcher_says_how(not_launched):
    with pytest.raises(distributed.DistributedError, match=r"mpiexec -n 2 python -m mpi4py"):
        distributed.init(required=True)


def test_a_launched_process_without_mpi4py_says_what_to_install(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def without_mpi4py(name, *args, **kwargs):
        if name.startswith("mpi4py"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setenv("PMI_RANK", "0")
    monkeypatch.setattr(builtins, "__import__", without_mpi4py)
    with pytest.raises(distributed.DistributedError, match=r"\.\[distributed\]"):
        distributed.init()


class TwinRank(distributed.SingleProcess):
    """A stand-in for two ranks holding the same gradients: a sum doubles, and is counted."""

    world_size = 2

    def __init__(self):
        super().__init__()
        self.sums = 0

    def allreduce_sum_(self, array, what="allreduce"):
        self.sums += 1
        array *= 2
        return array


def test_no_sync_accumulates_locally_and_the_next_reduce_sums_everything():
    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2))
    twin = TwinRank()
    reducer = distributed.GradientReducer(model.named_parameters(), twin, bucket_bytes=40)
    x = mg.randn(5, 3)
    with reducer.no_sync():
        model(x).sum().backward()
        reducer.reduce()
    assert twin.sums == 0
    model(x).sum().backward()
    accumulated = [p.grad.numpy().copy() for p in model.parameters()]
    reducer.reduce()
    # buckets of <= 40 bytes: the 48-byte weight alone, the 16-byte bias, the 32-byte weight
    # with the 8-byte bias
    assert twin.sums == 3
    for parameter, local in zip(model.parameters(), accumulated):
        assert np.array_equal(parameter.grad.numpy(), 2 * local)


def test_nccl_over_a_single_process_allreduces_and_synchronizes():
    """One GPU without a launcher (the GPU smoke's case): NCCL's calls on a communicator of
    one rank, against the NCCL double (fake_nccl.py), and the wait for the stream."""
    import fake_nccl

    from minigrad.distributed.nccl import NCCLCommunicator

    communicator = NCCLCommunicator(distributed.SingleProcess(), cupy=fake_nccl)
    summed = communicator.allreduce_sum_(fake_nccl.ndarray(np.ones(4, np.float32)))
    communicator.synchronize("the allreduce")
    assert summed.get().tolist() == [1.0] * 4
    assert fake_nccl.cuda.Device.used == 0


def test_a_single_process_waiting_past_its_deadline_for_nccl_gets_one_line(monkeypatch):
    import fake_nccl

    from minigrad.distributed.nccl import NCCLCommunicator

    communicator = NCCLCommunicator(distributed.SingleProcess(timeout_s=0.05), cupy=fake_nccl)
    monkeypatch.setattr(fake_nccl._Stream, "done", False)
    with pytest.raises(distributed.DistributedError,
                       match=r"rank 0 of 1 waited 0 s for the GPU to finish the allreduce; an "
                             r"NCCL collective never completed"):
        communicator.synchronize("the allreduce")


def test_cupy_without_libnccl_gets_one_line(monkeypatch):
    """CuPy imports cupy.cuda.nccl on a machine without libnccl, with `available` false."""
    import fake_nccl

    from minigrad.distributed.nccl import NCCLCommunicator

    monkeypatch.setattr(fake_nccl.nccl, "available", False)
    with pytest.raises(distributed.DistributedError,
                       match=r"^NCCL: CuPy 14.2.0 found no NCCL library \(libnccl\) on this "
                             r"machine: pip install 'nvidia-nccl-cu12'"):
        NCCLCommunicator(distributed.SingleProcess(), cupy=fake_nccl)
