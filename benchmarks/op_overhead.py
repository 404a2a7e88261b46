"""The engine's own cost per op: forward + backward of a chain of small ops.

A (16, 16) tensor goes through `--ops` ops cycling y * a, y + b, tanh(y) (a and b are
(16, 16) parameters; tanh keeps the values bounded), then backward from y.sum(). The arrays
are so small that the arithmetic is nearly free: what is measured is what each framework
adds around it. `--framework numpy` is the floor: the same arithmetic, with the backward
written by hand on arrays.

    python benchmarks/op_overhead.py --framework minigrad|numpy|torch [--json]
        [--ops 1000] [--repeats 20] [--device cpu|cuda]
"""

import json
import resource
import statistics
import time

import numpy as np

from transformer import cli

SIDE = 16


def initial_arrays():
    rng = np.random.default_rng(0)
    x, a, b = (rng.standard_normal((SIDE, SIDE)).astype(np.float32) for _ in range(3))
    return x, a, b


def chain_step(i):
    """Which op the i-th link of the chain is: 0 multiply, 1 add, 2 tanh."""
    return i % 3


def minigrad_step(ops, device):
    """A closure running one forward + backward of the chain with minigrad; it returns the
    gradients of a and b (as every framework's step does)."""
    import minigrad as mg

    x, a, b = (mg.tensor(array, device=device) for array in initial_arrays())
    a.requires_grad_()
    b.requires_grad_()
    backend = x.backend

    def step():
        a.grad = b.grad = None
        y = x
        for i in range(ops):
            kind = chain_step(i)
            y = y * a if kind == 0 else y + b if kind == 1 else y.tanh()
        y.sum().backward()
        backend.synchronize()
        return a.grad, b.grad

    return step


def torch_step(ops, device):
    import torch

    x, a, b = (torch.tensor(array, device=device) for array in initial_arrays())
    a.requires_grad_()
    b.requires_grad_()

    def step():
        a.grad = b.grad = None
        y = x
        for i in range(ops):
            kind = chain_step(i)
            y = y * a if kind == 0 else y + b if kind == 1 else torch.tanh(y)
        y.sum().backward()
        if device != "cpu":
            torch.cuda.synchronize()
        return a.grad, b.grad

    return step


def numpy_step(ops, device):
    """The floor: the same forward arithmetic, and backward by hand (no graph, no checks)."""
    if device != "cpu":
        raise SystemExit("op_overhead: the numpy framework runs on the cpu only")
    x, a, b = initial_arrays()

    def step():
        saved = []  # what each link's backward needs: y before * a, tanh's output
        y = x
        for i in range(ops):
            kind = chain_step(i)
            if kind == 0:
                saved.append(y)
                y = y * a
            elif kind == 1:
                y = y + b
            else:
                y = np.tanh(y)
                saved.append(y)
        grad = np.ones_like(y)
        grad_a, grad_b = np.zeros_like(a), np.zeros_like(b)
        for i in reversed(range(ops)):
            kind = chain_step(i)
            if kind == 0:
                grad_a += grad * saved.pop()
                grad = grad * a
            elif kind == 1:
                grad_b += grad
            else:
                out = saved.pop()
                grad = grad - grad * out * out  # grad · (1 - out²), as minigrad computes it
        return grad_a, grad_b

    return step


FRAMEWORKS = {"minigrad": minigrad_step, "torch": torch_step, "numpy": numpy_step}


def measure(step, repeats, warmup=2):
    """Milliseconds of each of `repeats` calls after `warmup` untimed calls: wall-clock, and
    the process's CPU time (steadier on a shared machine, which takes the CPU away at times:
    the chain runs on one thread in every framework, so both measure the same work)."""
    for _ in range(warmup):
        step()
    wall, cpu = [], []
    for _ in range(repeats):
        start, start_cpu = time.perf_counter(), time.process_time()
        step()
        wall.append((time.perf_counter() - start) * 1e3)
        cpu.append((time.process_time() - start_cpu) * 1e3)
    return wall, cpu


def main():
    parser = cli.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--framework", choices=sorted(FRAMEWORKS), default="minigrad")
    parser.add_argument("--ops", type=cli.positive_int, default=1000, help="length of the chain")
    parser.add_argument("--repeats", type=cli.positive_int, default=20,
                        help="timed forward+backward runs")
    parser.add_argument("--device", type=cli.device, default="cpu",
                        help="cpu or cuda (minigrad, torch)")
    parser.add_argument("--json", action="store_true", help="print one JSON record")
    args = parser.parse_args()

    times, cpu_times = measure(FRAMEWORKS[args.framework](args.ops, args.device), args.repeats)
    median = statistics.median(times)
    record = {
        "benchmark": "op_overhead",
        "config": f"{args.ops} ops on ({SIDE}, {SIDE}) float32",
        "framework": args.framework,
        "device": args.device,
        "figure": "us_per_op",
        "us_per_op": median * 1e3 / args.ops,
        "median_ms": median,
        "min_ms": min(times),
        "max_ms": max(times),
        "cpu_median_ms": statistics.median(cpu_times),
        "repeats": args.repeats,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    if args.json:
        print(json.dumps(record))
    else:
        print(f"{args.framework} on {args.device}: {record['us_per_op']:.2f} us/op "
              f"(median {median:.1f} ms per forward+backward of {args.ops} ops, "
              f"min {record['min_ms']:.1f}, max {record['max_ms']:.1f})")


if __name__ == "__main__":
    cli.run(main)
