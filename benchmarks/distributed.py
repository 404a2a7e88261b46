"""Data-parallel training steps on 1, 2 and 4 ranks (MPI through mpi4py), where the time goes,
the allreduce's bandwidth, and a model of the step at 8 and 64 ranks on real interconnects.

    python benchmarks/distributed.py [--configs tiny,small] [--ranks 1,2,4] [--steps 10]

For each benchmark config and rank count, `mpiexec -n R python -m mpi4py` runs this script as
a worker: every rank takes its 1/R of the config's global batch (`configs.py`), runs forward
and backward (the loss over the global batch's token count), waits at a barrier for the
slowest rank, sums the gradients with `minigrad.distributed.GradientReducer` (pack into
buckets / transfer / unpack, timed inside the reducer) and takes the Adam step. BLAS gets
cores // R threads per rank (threadpoolctl), so more ranks than cores are oversubscribed.
Rank 0 prints one JSON record of medians. Then two ranks time allreduces of 1 KiB .. 64 MiB.

The model of a larger job takes the measured one-rank compute time per sentence and the
measured per-byte cost of packing, and replaces the transfer by a ring allreduce,
2 (n - 1) / n · bytes / bandwidth + 2 (n - 1) · latency, for each named interconnect; its
assumptions are printed with it (docs/distributed.md discusses them).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from configs import (
    ADAM_BETAS,
    ADAM_EPS,
    CONFIGS,
    LABEL_SMOOTHING,
    LEARNING_RATE,
    PAD_ID,
    SEED,
    random_batch,
)

from transformer import cli

HERE = Path(__file__).resolve().parent
INTERCONNECTS = {"25 Gb/s Ethernet": (25e9 / 8, 25e-6), "200 Gb/s InfiniBand": (200e9 / 8, 2e-6)}
MODEL_RANKS = (8, 64)
MESSAGE_SIZES = [2 ** k for k in range(10, 27, 2)]  # bytes: 1 KiB .. 64 MiB


# ----- the worker (one rank) ------------------------------------------------------------------
def step_worker(config, steps, warmup):
    import minigrad as mg
    from minigrad import distributed
    from minigrad.nn import functional as F
    from transformer import Transformer

    communicator = distributed.init(required=True)
    rank, world = communicator.rank, communicator.world_size
    _limit_blas_threads(world)
    mg.manual_seed(SEED)
    model = Transformer(config.model_kwargs())
    reducer = distributed.GradientReducer(model.named_parameters(), communicator)
    reducer.check_same_parameters()
    reducer.broadcast_parameters()
    optimizer = mg.optim.Adam(model.parameters(), lr=LEARNING_RATE, betas=ADAM_BETAS,
                              eps=ADAM_EPS)
    src, tgt_in, tgt_out = random_batch(config)
    tokens = int((tgt_out != PAD_ID).sum())
    mine = np.array_split(np.arange(config.batch), world)[rank]
    src, tgt_in, tgt_out = (mg.tensor(a[mine]) for a in (src, tgt_in, tgt_out))
    phases = {name: [] for name in ("step", "compute", "wait", "pack", "transfer", "unpack",
                                    "optimizer")}
    for index in range(warmup + steps):
        before = dict(reducer.seconds)
        started = time.perf_counter()
        optimizer.zero_grad()
        logits = model(src, tgt_in)
        loss = F.cross_entropy(logits, tgt_out, ignore_index=PAD_ID,
                               label_smoothing=LABEL_SMOOTHING, reduction="sum") / tokens
        loss.backward()
        computed = time.perf_counter()
        communicator.barrier("the benchmark's barrier")
        waited = time.perf_counter()
        reducer.reduce()
        reduced = time.perf_counter()
        optimizer.step()
        done = time.perf_counter()
        if index >= warmup:
            phases["step"].append(done - started)
            phases["compute"].append(computed - started)
            phases["wait"].append(waited - computed)
            phases["optimizer"].append(done - reduced)
            for name in ("pack", "transfer", "unpack"):
                phases[name].append(reducer.seconds[name] - before[name])
    gradient_bytes = sum(p.data.nbytes for p in model.parameters())
    if rank == 0:
        print(json.dumps({"config": config.name, "ranks": world, "steps": steps,
                          "gradient_bytes": gradient_bytes,
                          **{f"{name}_ms": 1e3 * statistics.median(values)
                             for name, values in phases.items()}}), flush=True)


def bandwidth_worker(repeats):
    from minigrad import distributed

    communicator = distributed.init(required=True)
    rows = []
    for size in MESSAGE_SIZES:
        values = np.ones(size // 4, np.float32)
        communicator.allreduce_sum_(values)  # warm up the path
        times = []
        for _ in range(repeats):
            communicator.barrier()
            started = time.perf_counter()
            communicator.allreduce_sum_(values)
            times.append(time.perf_counter() - started)
        seconds = statistics.median(times)
        rows.append({"bytes": size, "ms": 1e3 * seconds, "gb_per_s": size / seconds / 1e9})
    if communicator.rank == 0:
        print(json.dumps({"allreduce": rows, "ranks": communicator.world_size}), flush=True)


def _limit_blas_threads(world):
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return
    threadpool_limits(max(1, (os.cpu_count() or 1) // world))


# ----- the driver -----------------------------------------------------------------------------
def launch(ranks, *arguments):
    mpiexec = Path(sys.executable).with_name("mpiexec")
    command = [str(mpiexec) if mpiexec.exists() else "mpiexec", "-n", str(ranks),
               sys.executable, "-m", "mpi4py", str(Path(__file__).resolve()),
               *map(str, arguments)]
    result = subprocess.run(command, capture_output=True, text=True, check=False,
                            env={**os.environ, "PYTHONPATH": str(HERE.parent)})
    if result.returncode != 0:
        last = (result.stderr.strip().splitlines() or ["(no output)"])[-1]
        sys.exit(f"error: {ranks} rank(s) of {' '.join(map(str, arguments))} failed: {last}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def modelled_step_ms(one_rank, record, ranks, bandwidth, latency):
    """A step at `ranks` ranks of the one-rank record's global batch: forward and backward
    shrink with the per-rank batch, every rank runs the whole optimizer, packing costs what
    `record` measured, the transfer is a ring allreduce."""
    compute = one_rank["compute_ms"] / ranks + one_rank["optimizer_ms"]
    transfer = 1e3 * (2 * (ranks - 1) / ranks * record["gradient_bytes"] / bandwidth
                      + 2 * (ranks - 1) * latency)
    return compute + record["pack_ms"] + record["unpack_ms"] + transfer


def report(records, bandwidth):
    lines = ["| config | ranks | ms/step | compute | wait | pack | transfer | unpack | "
             "optimizer | reduction share | efficiency |", "|---" * 11 + "|"]
    for record in records:
        one = next(r for r in records if r["config"] == record["config"] and r["ranks"] == 1)
        reduction = record["pack_ms"] + record["transfer_ms"] + record["unpack_ms"]
        efficiency = one["step_ms"] / (record["ranks"] * record["step_ms"])
        lines.append(f"| {record['config']} | {record['ranks']} | {record['step_ms']:.1f} | "
                     f"{record['compute_ms']:.1f} | {record['wait_ms']:.1f} | "
                     f"{record['pack_ms']:.2f} | {record['transfer_ms']:.2f} | "
                     f"{record['unpack_ms']:.2f} | {record['optimizer_ms']:.1f} | "
                     f"{reduction / record['step_ms']:.0%} | {efficiency:.0%} |")
    lines += ["", "allreduce, 2 ranks: | bytes | ms | GB/s |", "|---|---|---|"]
    lines += [f"| {row['bytes']:,} | {row['ms']:.3f} | {row['gb_per_s']:.2f} |"
              for row in bandwidth["allreduce"]]
    lines += ["", "model (ring allreduce; compute per sentence as measured on 1 rank; "
              "the whole optimizer on every rank; pack/unpack as measured at 2 ranks):",
              "| config | interconnect | " + " | ".join(f"{n} ranks ms/step (eff.)"
                                                      for n in MODEL_RANKS) + " |",
              "|---|---|" + "---|" * len(MODEL_RANKS)]
    for config in dict.fromkeys(r["config"] for r in records):
        one = next(r for r in records if r["config"] == config and r["ranks"] == 1)
        two = next((r for r in records if r["config"] == config and r["ranks"] == 2), one)
        for name, (bandwidth_bps, latency) in INTERCONNECTS.items():
            cells = []
            for n in MODEL_RANKS:
                ms = modelled_step_ms(one, two, n, bandwidth_bps, latency)
                cells.append(f"{ms:.1f} ({one['step_ms'] / (n * ms):.0%})")
            lines.append(f"| {config} | {name} | " + " | ".join(cells) + " |")
    return lines


def main():
    parser = cli.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", default="tiny,small", help="comma-separated")
    parser.add_argument("--ranks", default="1,2,4", help="comma-separated rank counts")
    parser.add_argument("--steps", type=cli.positive_int, default=10, help="timed steps")
    parser.add_argument("--warmup", type=cli.non_negative_int, default=2)
    parser.add_argument("--repeats", type=cli.positive_int, default=20,
                        help="allreduces timed per message size")
    parser.add_argument("--json", action="store_true", help="the records, one JSON per line")
    parser.add_argument("--worker", choices=("step", "bandwidth"), help=argparse.SUPPRESS)
    parser.add_argument("--config", choices=list(CONFIGS), default="tiny",
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker == "step":
        return step_worker(CONFIGS[args.config], args.steps, args.warmup)
    if args.worker == "bandwidth":
        return bandwidth_worker(args.repeats)
    configs = [c.strip() for c in args.configs.split(",")]
    unknown = [c for c in configs if c not in CONFIGS]
    if unknown:
        parser.error(f"--configs: unknown {', '.join(unknown)}; choose from "
                     f"{', '.join(CONFIGS)}")
    try:
        ranks = sorted({int(r) for r in args.ranks.split(",")} | {1})
    except ValueError:
        parser.error(f"--ranks {args.ranks!r}: give comma-separated positive integers")
    if min(ranks) < 1:
        parser.error(f"--ranks {args.ranks!r}: give comma-separated positive integers")
    records = [launch(n, "--worker", "step", "--config", config, "--steps", args.steps,
                      "--warmup", args.warmup) for config in configs for n in ranks]
    bandwidth = launch(2, "--worker", "bandwidth", "--repeats", args.repeats)
    if args.json:
        for record in records + [bandwidth]:
            print(json.dumps(record))
    print("\n".join(report(records, bandwidth)))
    return 0


if __name__ == "__main__":
    cli.run(main)
