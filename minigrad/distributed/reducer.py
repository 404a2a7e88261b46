"""GradientReducer: the gradient every rank computes, summed over the ranks after backward.

    reducer = GradientReducer(model.named_parameters(), communicator)
    reducer.check_same_parameters()      # every rank holds the same names, shapes, dtypes
    reducer.broadcast_parameters()       # and starts from rank 0's values
    for batch in my_shard_of_each_global_batch:
        loss = summed_loss(batch) / global_token_count   # normalised by the global batch
        loss.backward()
        reducer.reduce()                 # p.grad: the sum over the ranks
        optimizer.step()

With each rank's loss divided by the token count of the *global* batch, the summed gradient
is the gradient one process would compute on the union of the shards.

Gradients travel in buckets, in the parameters' order on every rank: gradients smaller than
`bucket_bytes` are packed into flat buffers of up to that size (one collective for many
small tensors), larger ones are reduced where they lie (no copy). `rank_ordered=True` sums in
rank order, ((g0 + g1) + g2) ..., by gathering every rank's bucket: bitwise what one process
accumulating the shards in that order computes, at any world size (MPI's own allreduce may
sum in any order; for two ranks the order does not matter, a + b being b + a). GPU arrays
are summed where they lie by NCCL, or staged through host memory for MPI. Inside `no_sync()`,
`reduce()` does nothing, so gradients accumulate locally over several backward passes.
"""

import time
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from ..backend import backend_of_array
from ..creation import zeros_like
from .communicator import DistributedError

DEFAULT_BUCKET_BYTES = 4 * 1024 * 1024


class GradientReducer:
    """Sums `named_parameters`' gradients over the ranks of `communicator`."""

    def __init__(self, named_parameters, communicator, bucket_bytes=DEFAULT_BUCKET_BYTES,
                 rank_ordered=False, named_buffers=()) -> None:
        self.named = list(named_parameters)
        self.buffers = list(named_buffers)  # checked and broadcast too, never reduced
        self.communicator = communicator
        self.bucket_bytes = int(bucket_bytes)
        self.rank_ordered = rank_ordered
        self._synchronizing = True
        self.seconds = {"pack": 0.0, "transfer": 0.0, "unpack": 0.0}  # spent in reduce(), summed

    # ----- before training --------------------------------------------------------------------
    def check_same_parameters(self) -> None:
        """DistributedError, on every rank, naming the first parameter where a rank differs
        from rank 0 (a name, shape or dtype), or a different number of parameters."""
        own = [[name, list(p.shape), str(p.dtype)] for name, p in self.named + self.buffers]
        every = self.communicator.allgather_object(own, "the parameter check")
        reference = every[0]
        for rank, theirs in enumerate(every[1:], start=1):
            for index, (mine, other) in enumerate(zip(reference, theirs)):
                if mine != other:
                    raise DistributedError(
                        f"rank {rank}'s parameter {index} is {_described(other)} but rank 0's "
                        f"is {_described(mine)}: every rank must build the same model (same "
                        "options and vocabulary)")
            if len(theirs) != len(reference):
                raise DistributedError(
                    f"rank {rank} has {len(theirs)} parameters and rank 0 has "
                    f"{len(reference)}: every rank must build the same model")

    def broadcast_parameters(self, root=0) -> None:
        """Every rank's parameters and buffers (in place) become rank `root`'s."""
        for name, parameter in self.named + self.buffers:
            what = f"the broadcast of {name}"
            self._in_place(parameter.data, lambda host, what=what: self.communicator.broadcast_(
                host, root, what))

    # ----- after each backward -----------------------------------------------------------------
    @contextmanager
    def no_sync(self) -> Iterator[None]:
        """Backward passes inside accumulate locally; the next `reduce()` outside sums all."""
        self._synchronizing = False
        try:
            yield
        finally:
            self._synchronizing = True

    def reduce(self) -> None:
        """Each gradient becomes the sum over the ranks (a missing one counts as zeros)."""
        if not self._synchronizing or self.communicator.world_size == 1:
            return
        clock = time.perf_counter
        for bucket in self._buckets():
            data = bucket[0].grad.data
            if len(bucket) == 1 and data.nbytes >= self.bucket_bytes and \
                    data.flags.c_contiguous:
                started = clock()
                self._in_place(data, self._sum)  # large: reduced where it lies
                self.seconds["transfer"] += clock() - started
                continue
            started = clock()
            direct = self.communicator.takes(data)  # else: through host memory
            xp = bucket[0].grad.backend.xp if direct else np
            flat = xp.concatenate([(p.grad.data if direct else _host(p.grad.data)).ravel()
                                   for p in bucket])
            packed = clock()
            flat = self._sum(flat)
            summed = clock()
            offset = 0
            for parameter in bucket:
                data = parameter.grad.data
                piece = flat[offset:offset + data.size].reshape(data.shape)
                data[...] = piece if direct or isinstance(data, np.ndarray) else \
                    parameter.grad.backend.from_host(piece)
                offset += data.size
            self.seconds["pack"] += packed - started
            self.seconds["transfer"] += summed - packed
            self.seconds["unpack"] += clock() - summed

    def _buckets(self):
        """Parameters in order, grouped: a large gradient alone, small ones up to
        `bucket_bytes` together (of one dtype)."""
        bucket: list = []
        size = 0
        for _, parameter in self.named:
            if parameter.grad is None:  # not used by this rank's shard: contributes zeros
                parameter.grad = zeros_like(parameter)
            nbytes = parameter.grad.data.nbytes
            if bucket and (size + nbytes > self.bucket_bytes
                           or parameter.grad.dtype != bucket[0].grad.dtype):
                yield bucket
                bucket, size = [], 0
            bucket.append(parameter)
            size += nbytes
        if bucket:
            yield bucket

    def _sum(self, host):
        what = f"the gradient reduction ({host.size} values)"
        if not self.rank_ordered:
            return self.communicator.allreduce_sum_(host, what)
        gathered = self.communicator.allgather(host, what)
        total = gathered[0].copy()
        for rank_values in gathered[1:]:
            total += rank_values
        host[...] = total
        return host

    def _in_place(self, array, collective) -> None:
        """Run `collective` on `array` in place: directly where the communicator takes such
        arrays (NumPy for MPI, GPU arrays for NCCL), else through host memory."""
        if self.communicator.takes(array):
            collective(array)
            return
        backend = backend_of_array(array)
        host = np.ascontiguousarray(backend.to_host(array))
        collective(host)
        array[...] = backend.from_host(host)


def _host(array):
    return array if isinstance(array, np.ndarray) else backend_of_array(array).to_host(array)


def _described(entry) -> str:
    name, shape, dtype = entry
    return f"{name} {dtype}{tuple(shape)}"
