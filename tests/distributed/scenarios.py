"""Data-parallel scenarios for the distributed tests, run by each rank:

    mpiexec -n 2 python -m mpi4py tests/distributed/scenarios.py train --shards 2
    python tests/distributed/scenarios.py train --shards 2      # one process, both shards

`train`: a small model takes `--steps` steps on global batches of 12 rows cut into `--shards`
shards; rank r computes the shards r, r + world, ... (one process accumulates all of them, in
order), each shard's summed loss divided by the global batch's row count, then the gradients
are summed over the ranks and the optimizer steps. Every rank starts from a different
initialisation, which the broadcast replaces by rank 0's. After each step the ranks compare
their parameters' digests. Rank 0 prints one JSON line: the final parameters' digest, the
first step's gradients, and whether the ranks always agreed.

The other scenarios break something on purpose: `raise` (an exception on the last rank),
`kill` (the last rank killed), `extra-step` (rank 0 takes one step more while the others have
gone on to other work), `mismatch` (the last rank builds a different model).
"""

import argparse
import hashlib
import json
import os
import signal
import sys
import time

import numpy as np

import minigrad as mg
from minigrad import distributed, nn
from minigrad.nn import functional as F

GLOBAL_ROWS, FEATURES, CLASSES = 12, 8, 5


def model_of(seed, hidden=16):
    mg.manual_seed(seed)
    return nn.Sequential(nn.Linear(FEATURES, hidden), nn.ReLU(), nn.Linear(hidden, CLASSES))


def global_batch(step):
    """The global batch of `step`: the same on every rank."""
    rng = np.random.default_rng(1000 + step)
    return (rng.standard_normal((GLOBAL_ROWS, FEATURES)).astype(np.float32),
            rng.integers(0, CLASSES, GLOBAL_ROWS))


def digest(model):
    return hashlib.sha256(b"".join(p.numpy().tobytes() for p in model.parameters())).hexdigest()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("scenario", choices=("train", "raise", "kill", "extra-step", "mismatch",
                                             "nccl"))
    parser.add_argument("--shards", type=int, default=2)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--optimizer", choices=("sgd", "adam"), default="adam")
    parser.add_argument("--rank-ordered", action="store_true")
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args()

    communicator = distributed.init(timeout_s=args.timeout)
    if args.scenario == "nccl":
        return nccl_collectives(communicator)
    rank, world, last = communicator.rank, communicator.world_size, \
        communicator.world_size - 1
    broken = args.scenario == "mismatch" and rank == last
    model = model_of(seed=rank, hidden=17 if broken else 16)
    reducer = distributed.GradientReducer(model.named_parameters(), communicator,
                                          bucket_bytes=256, rank_ordered=args.rank_ordered)
    try:
        reducer.check_same_parameters()
    except distributed.DistributedError as error:
        print(f"error: rank {rank}: {error}", file=sys.stderr, flush=True)
        sys.exit(1)
    reducer.broadcast_parameters()
    optimizer = (mg.optim.SGD(model.parameters(), lr=0.1) if args.optimizer == "sgd" else
                 mg.optim.Adam(model.parameters(), lr=0.01))

    agreed, first_gradients = True, None
    steps = args.steps + (1 if args.scenario == "extra-step" and rank == 0 else 0)
    for step in range(1, steps + 1):
        communicator.context = f"step {step}"
        if step == 2 and rank == last and args.scenario == "raise":
            raise RuntimeError(f"a failure on rank {rank} at step {step}")
        if step == 2 and rank == last and args.scenario == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        inputs, targets = global_batch(step)
        shards = np.array_split(np.arange(GLOBAL_ROWS), args.shards)
        optimizer.zero_grad()
        for shard in shards[rank::world]:
            logits = model(mg.tensor(inputs[shard]))
            loss = F.cross_entropy(logits, mg.tensor(targets[shard]), reduction="sum")
            (loss / GLOBAL_ROWS).backward()
        reducer.reduce()
        if step == 1:
            first_gradients = [p.grad.numpy().tolist() for p in model.parameters()]
        optimizer.step()
        agreed &= len(set(communicator.allgather_object(digest(model), "the digests"))) == 1
    if args.scenario == "extra-step" and rank > 0:
        # Busy elsewhere, not gone: a rank that exits finalizes MPI, and what then happens to
        # a rank still waiting on it is the MPI's business (MPICH may end it before its
        # deadline, with nothing said), not the deadline's.
        time.sleep(10 * args.timeout)
    if rank == 0:
        print(json.dumps({"digest": digest(model), "agreed": agreed, "world": world,
                          "first_gradients": first_gradients}), flush=True)


def nccl_collectives(mpi):
    """NCCLCommunicator over the stand-in CuPy: each kind of collective, device and host."""
    import fake_nccl

    from minigrad.distributed.nccl import NCCLCommunicator

    communicator = NCCLCommunicator(mpi, cupy=fake_nccl)
    rank = communicator.rank
    summed = communicator.allreduce_sum_(fake_nccl.ndarray(np.full(3, rank + 1.0, np.float32)))
    gathered = communicator.allgather(fake_nccl.ndarray(np.array([rank, 10 * rank], np.int64)))
    shared = communicator.broadcast_(fake_nccl.ndarray(np.arange(4.0) * (rank + 1)), root=1)
    host = communicator.allreduce_sum_(np.array([rank], np.float64))
    ids = communicator.allgather_object(list(communicator.comm.unique_id))
    devices = communicator.allgather_object(fake_nccl.cuda.Device.used)
    if rank == 0:
        print(json.dumps({"sum": summed.get().tolist(), "gathered": gathered.get().tolist(),
                          "broadcast": shared.get().tolist(), "host": host.tolist(),
                          "same_id": all(i == ids[0] for i in ids),
                          "devices": devices}), flush=True)


if __name__ == "__main__":
    main()
