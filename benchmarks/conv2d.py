"""A convolution's forward + backward: images (32, 3, 32, 32) through a (16, 3, 3, 3) kernel
with padding 1, then backward from the output's sum (the gradients of the images, the
weight and the bias), float32 on the CPU.

    python benchmarks/conv2d.py --framework minigrad|torch [--json] [--repeats 30]
    python benchmarks/compare.py --benchmark conv2d --frameworks minigrad,torch --pairs 5
"""

import json
import resource
import statistics

import numpy as np

from benchmarks.op_overhead import measure
from transformer import cli

IMAGES, WEIGHT = (32, 3, 32, 32), (16, 3, 3, 3)


def initial_arrays():
    rng = np.random.default_rng(0)
    return (rng.standard_normal(IMAGES).astype(np.float32),
            rng.standard_normal(WEIGHT).astype(np.float32),
            rng.standard_normal(WEIGHT[0]).astype(np.float32))


def minigrad_step():
    import minigrad as mg
    from minigrad.nn import functional as F

    x, weight, bias = (mg.tensor(a, requires_grad=True) for a in initial_arrays())

    def step():
        x.grad = weight.grad = bias.grad = None
        F.conv2d(x, weight, bias, padding=1).sum().backward()
        return x.grad, weight.grad, bias.grad

    return step


def torch_step():
    import torch

    x, weight, bias = (torch.tensor(a, requires_grad=True) for a in initial_arrays())

    def step():
        x.grad = weight.grad = bias.grad = None
        torch.nn.functional.conv2d(x, weight, bias, padding=1).sum().backward()
        return x.grad, weight.grad, bias.grad

    return step


FRAMEWORKS = {"minigrad": minigrad_step, "torch": torch_step}


def main():
    parser = cli.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--framework", choices=sorted(FRAMEWORKS), default="minigrad")
    parser.add_argument("--repeats", type=cli.positive_int, default=30,
                        help="timed forward+backward runs")
    parser.add_argument("--json", action="store_true", help="print one JSON record")
    args = parser.parse_args()
    times, cpu_times = measure(FRAMEWORKS[args.framework](), args.repeats, warmup=3)
    median = statistics.median(times)
    record = {
        "benchmark": "conv2d", "config": f"{IMAGES} * {WEIGHT}, padding 1, float32",
        "framework": args.framework, "device": "cpu", "figure": "median_ms",
        "median_ms": median, "min_ms": min(times), "max_ms": max(times),
        "cpu_median_ms": statistics.median(cpu_times), "repeats": args.repeats,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    if args.json:
        print(json.dumps(record))
    else:
        print(f"{args.framework}: median {median:.2f} ms per forward+backward "
              f"(min {record['min_ms']:.2f}, max {record['max_ms']:.2f})")


if __name__ == "__main__":
    cli.run(main)
