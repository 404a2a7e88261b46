"""Milliseconds per training step of the benchmark Transformer, in minigrad or in PyTorch.

A step is what a trainer does for each batch: zero_grad, forward, loss (cross-entropy, label
smoothing 0.1, padding ignored), backward, Adam(0.9, 0.98, 1e-9) step; dropout 0.1, float32,
one fixed batch of random tokens with some padding (the shapes are in `configs.py`; the
PyTorch model is `torch_reference.py`). After `--warmup` untimed steps, `--steps` steps are
timed, each split into its phases (the device is synchronized between them):

    forward    zero_grad + forward + loss
    backward   the backward pass
    optimizer  the Adam step, then the weights' moving average (`--ema-decay`, the main
               job's 0.999 by default; 0: none)

Measured in the same run: the forward alone under no-grad (eval mode); the peak RSS of the
process and its page faults per timed step (fresh memory the kernel hands out: memory freed
to the system and asked for again); and the rate of a large float32 matrix product in the
same framework, which turns the step's matrix-product FLOPs (counted from the shapes) into
the matmul-only lower limit of a step, `matmul_floor_ms`: what a step would take if
everything but the matrix products were free. `blas_share` = floor / median step: the share
of the step the products need.

    python benchmarks/train_step.py --framework minigrad|torch --config tiny|small|base
        [--device cpu|cuda] [--fused] [--ema-decay 0.999] [--steps 20] [--warmup 3] [--json]
        [--profile]
    python benchmarks/train_step.py --count --config tiny|small|base [--fused]
        [--ema-decay 0.999] [--steps 1] [--json]

`--count` times nothing: it runs the step as `Trainer.train_step` takes it (with clipping,
the optimizer step skipped on the device for a non-finite loss, and the moving average) on
'cuda' run by the CuPy stand-in (minigrad/testing/fake_cupy/, no GPU needed), and reports
the kernel launches and device-to-host synchronizations per step, by phase, by op and by
kernel, by the stand-in's counting rule.

`--profile` then prints a per-op time table over a few more steps: for minigrad, the time
spent in each op's forward (`Function.apply`: checks, forward, graph recording) and in its
backward, by op name, measured by wrapping those methods in this process only (the device is
synchronized after each op, so on a GPU the times are per op, not overlapped); for PyTorch,
torch.profiler's table.

`tokens_per_s` counts the target tokens that are not padding (what a trainer reports).
Run from the repository root with the packages importable (`pip install -e .` or
`PYTHONPATH=.`); `benchmarks/compare.py --benchmark train_step` runs it for both frameworks.
"""

import json
import os
import resource
import statistics
import time
from collections import Counter

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

GEMM_SIZE = {"cpu": 2048, "cuda": 8192}  # side of the square product that measures the rate
EMA_DECAY = 0.999  # the main job's moving average of the weights


# ----- what the step costs in matrix products ---------------------------------------------
def matmul_flops(config):
    """The FLOPs of one training step's matrix products, counted from the shapes.

    A product (m×k)·(k×n) costs 2·m·n·k forward, and twice that backward (one product for the
    gradient of each factor; every factor here needs one). Attention's two products,
    Q·Kᵀ and weights·V, cost 2·q_len·k_len·d_head each per head: 2·q_len·k_len·d_model over
    all heads. Padding positions are computed like the others; the embedding lookups are no
    products."""
    d, d_ff, vocab = config.d_model, config.d_ff, config.vocab
    rows = config.batch * config.length  # positions of a source, and of a target, batch

    def linear(d_in, d_out):  # one projection of every position
        return 2 * rows * d_in * d_out

    def attention_products(q_len, k_len):
        return 2 * (2 * config.batch * q_len * k_len * d)

    length = config.length
    feed_forward = linear(d, d_ff) + linear(d_ff, d)
    self_attention = 4 * linear(d, d) + attention_products(length, length)  # q, k, v, out
    # cross-attention: q and out from the target, k and v from the memory (as many rows)
    cross_attention = 4 * linear(d, d) + attention_products(length, length)
    encoder_layer = self_attention + feed_forward
    decoder_layer = self_attention + cross_attention + feed_forward
    generator = linear(d, vocab)
    forward = config.n_layers * (encoder_layer + decoder_layer) + generator
    return 3 * forward


# ----- the two frameworks -----------------------------------------------------------------
class _Step:
    """What a step does alike in both frameworks, on the subclass's `model`, `optimizer`,
    batch (`src`, `tgt_in`) and framework (`no_grad`)."""

    def zero_grad(self):
        self.optimizer.zero_grad()

    def backward(self, loss):
        loss.backward()

    def optimizer_step(self):
        self.optimizer.step()
        self.average_step()

    def inference(self):
        """One forward pass in eval mode without gradients; the model is left training."""
        self.model.eval()
        with self.no_grad():
            self.model(self.src, self.tgt_in)
        self.model.train()


class MinigradStep(_Step):
    """The training step in minigrad."""

    def __init__(self, config, device, ema_decay):
        import minigrad as mg
        from minigrad.backend import get_backend
        from minigrad.nn import functional as F
        from transformer import Transformer

        self.mg, self.F, self.no_grad = mg, F, mg.no_grad
        mg.manual_seed(SEED)
        self.model = Transformer(config.model_kwargs()).to(device)
        self.optimizer = mg.optim.Adam(self.model.parameters(), lr=LEARNING_RATE,
                                       betas=ADAM_BETAS, eps=ADAM_EPS)
        self.src, self.tgt_in, self.tgt_out = (mg.tensor(ids, device=device)
                                               for ids in random_batch(config))
        self.synchronize = get_backend(device).synchronize
        self.device = device
        self.average = mg.optim.ExponentialMovingAverage(
            self.model.named_parameters(), ema_decay) if ema_decay else None

    def average_step(self):
        if self.average is not None:
            self.average.update()

    def parameter_count(self):
        return self.model.num_parameters()

    def forward_loss(self):
        logits = self.model(self.src, self.tgt_in)
        return self.F.cross_entropy(logits, self.tgt_out, ignore_index=PAD_ID,
                                    label_smoothing=LABEL_SMOOTHING)

    def matmul(self, n):
        """A closure multiplying two random float32 (n, n) matrices."""
        a, b = (self.mg.randn(n, n, device=self.device) for _ in range(2))
        return lambda: self.mg.matmul(a, b)

    def profile(self, steps, run_step):
        with OpMeter(lambda: (time.perf_counter(),), self.synchronize) as times:
            start = time.perf_counter()
            for _ in range(steps):
                run_step(self)
            elapsed = time.perf_counter() - start
        return times.time_table(steps, elapsed)


class TorchStep(_Step):
    """The training step in PyTorch, on the same model (`torch_reference.Transformer`)."""

    def __init__(self, config, device, ema_decay):
        import torch
        from torch_reference import Transformer, parameter_count

        self.torch, self.parameter_count_of, self.no_grad = torch, parameter_count, torch.no_grad
        torch.manual_seed(SEED)
        self.device = torch.device(device)
        self.model = Transformer(**config.model_kwargs()).to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=LEARNING_RATE,
                                          betas=ADAM_BETAS, eps=ADAM_EPS)
        self.src, self.tgt_in, self.tgt_out = (torch.from_numpy(ids).to(self.device)
                                               for ids in random_batch(config))
        self.ema_decay = ema_decay
        self.parameters = [p for p in self.model.parameters()]
        self.averages = [p.detach().clone() for p in self.parameters]

    def average_step(self):
        """The moving average as one multi-tensor lerp (the decay without the warm-up)."""
        if self.ema_decay:
            with self.torch.no_grad():
                self.torch._foreach_lerp_(self.averages, self.parameters, 1 - self.ema_decay)

    def synchronize(self):
        if self.device.type == "cuda":
            self.torch.cuda.synchronize()

    def parameter_count(self):
        return self.parameter_count_of(self.model)

    def forward_loss(self):
        logits = self.model(self.src, self.tgt_in)
        return self.torch.nn.functional.cross_entropy(
            logits.flatten(0, 1), self.tgt_out.flatten(), ignore_index=PAD_ID,
            label_smoothing=LABEL_SMOOTHING)

    def matmul(self, n):
        a, b = (self.torch.randn(n, n, device=self.device) for _ in range(2))
        return lambda: a @ b

    def profile(self, steps, run_step):
        from torch.profiler import ProfilerActivity, profile

        on_gpu = self.device.type == "cuda"
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_gpu else [])
        with profile(activities=activities) as profiler:
            for _ in range(steps):
                run_step(self)
        sort_by = "self_device_time_total" if on_gpu else "self_cpu_time_total"
        return (f"torch.profiler over {steps} steps (totals, not per step):\n"
                + profiler.key_averages().table(sort_by=sort_by, row_limit=30))


FRAMEWORKS = {"minigrad": MinigradStep, "torch": TorchStep}


# ----- minigrad's per-op times and counts ----------------------------------------------------
def _subclasses(cls):
    for subclass in cls.__subclasses__():
        yield subclass
        yield from _subclasses(subclass)


class OpMeter:
    """While active (`with OpMeter(read, settle) as meter:`), how much `read()` (a tuple of
    numbers: the clock; or the CuPy stand-in's launch and synchronization counts) grows over
    every minigrad op, by name: its forward (its class's `apply`) and its backward (the
    `backward` or `backward_arrays` method of its Function subclass); `settle()` runs after
    each op, before the reading (the device's synchronize, for times). The engine is not
    edited: the methods are wrapped in this process and restored on exit.

    Ops called inside another op's backward (backward is written with Tensor ops) count toward
    that backward: they are how it is computed. So nothing is counted twice, and what the
    table does not cover is the rest of the step (module code, graph walk, optimizer)."""

    def __init__(self, read, settle=lambda: None):
        self.read, self.settle = read, settle
        self.totals = {"forward": {}, "backward": {}}
        self.calls = Counter()
        self.depth = 0  # > 0 inside a measured call
        self.restore = []  # (class, attribute, original value in the class's own dict)

    def measured(self, phase, name, call, *args, **kwargs):
        if self.depth:
            return call(*args, **kwargs)
        self.depth += 1
        before = self.read()
        try:
            result = call(*args, **kwargs)
            self.settle()
        finally:
            self.depth -= 1
        grown = tuple(after - start for after, start in zip(self.read(), before))
        total = self.totals[phase].get(name, (0,) * len(grown))
        self.totals[phase][name] = tuple(a + b for a, b in zip(total, grown))
        if phase == "forward":
            self.calls[name] += 1
        return result

    def __enter__(self):
        from minigrad.autograd import Function

        meter = self

        def measured_apply(name, original):
            def apply(*inputs, **params):
                return meter.measured("forward", name, original, *inputs, **params)
            return staticmethod(apply)

        def measured_backward(original):
            def backward(fn, grad):
                return meter.measured("backward", fn.name, original, fn, grad)
            return backward

        for cls in _subclasses(Function):
            self.restore.append((cls, "apply", vars(cls)["apply"]))  # bound to each class
            cls.apply = measured_apply(cls.name, vars(cls)["apply"])
            for name in ("backward", "backward_arrays"):  # the engine calls one of the two
                if name in vars(cls):  # subclasses that inherit it are measured through it
                    self.restore.append((cls, name, vars(cls)[name]))
                    setattr(cls, name, measured_backward(vars(cls)[name]))
        return self

    def __exit__(self, *exc):
        for cls, attribute, original in reversed(self.restore):
            setattr(cls, attribute, original)
        self.restore.clear()
        return False

    def names(self):
        """Op names, the largest first (by the first number of the reading)."""
        forward, backward = self.totals["forward"], self.totals["backward"]
        return sorted(set(forward) | set(backward),
                      key=lambda name: -(forward.get(name, (0,))[0]
                                         + backward.get(name, (0,))[0]))

    def time_table(self, steps, elapsed):
        """For a clock reading: the times per step, largest first, as text."""
        step_ms = 1e3 * elapsed / steps
        forward, backward = self.totals["forward"], self.totals["backward"]
        lines = [(f"minigrad per-op times, ms per step (mean over {steps} steps of "
                  f"{step_ms:.2f} ms, timers included)"),
                 (f"{'op':<32}{'calls':>7}{'forward':>10}{'backward':>10}{'total':>10}"
                  f"{'share':>8}")]
        covered = 0.0
        for name in self.names():
            f, b = forward.get(name, (0.0,))[0], backward.get(name, (0.0,))[0]
            total = 1e3 * (f + b) / steps
            covered += total
            lines.append(f"{name:<32}{self.calls[name] / steps:>7.0f}{1e3 * f / steps:>10.3f}"
                         f"{1e3 * b / steps:>10.3f}{total:>10.3f}{total / step_ms:>8.1%}")
        rest = step_ms - covered
        lines.append(f"{'(outside ops: modules, graph, optimizer)':<59}{rest:>10.3f}"
                     f"{rest / step_ms:>8.1%}")
        return "\n".join(lines)

    def by_op(self, steps):
        """For a (launches, syncs) reading: per op name and step, its calls and the launches
        and syncs of its forward and backward."""
        forward, backward = self.totals["forward"], self.totals["backward"]
        return {name: {"calls": self.calls[name] / steps,
                       "forward_launches": forward.get(name, (0, 0))[0] / steps,
                       "backward_launches": backward.get(name, (0, 0))[0] / steps,
                       "syncs": (forward.get(name, (0, 0))[1]
                                 + backward.get(name, (0, 0))[1]) / steps}
                for name in self.names()}


# ----- measuring ----------------------------------------------------------------------------
def run_step(runner):
    """One training step; its (forward, backward, optimizer) times in seconds."""
    start = time.perf_counter()
    runner.zero_grad()
    loss = runner.forward_loss()
    runner.synchronize()
    forward_done = time.perf_counter()
    runner.backward(loss)
    runner.synchronize()
    backward_done = time.perf_counter()
    runner.optimizer_step()
    runner.synchronize()
    end = time.perf_counter()
    return forward_done - start, backward_done - forward_done, end - backward_done


def milliseconds(call, synchronize, repeats):
    """Wall-clock ms of each of `repeats` calls (after one untimed call)."""
    call()
    synchronize()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        synchronize()
        times.append(1e3 * (time.perf_counter() - start))
    return times


def gemm_gflops(runner, n, repeats=3):
    """GFLOP/s of an (n, n) float32 matrix product in the framework: the best of `repeats`."""
    best_ms = min(milliseconds(runner.matmul(n), runner.synchronize, repeats))
    return 2 * n ** 3 / (best_ms * 1e-3) / 1e9


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kilobytes


def measure(framework, config, device, steps, warmup, ema_decay=EMA_DECAY):
    """One run: the runner (for profiling after it) and the JSON record."""
    runner = FRAMEWORKS[framework](config, device, ema_decay)
    for _ in range(warmup):
        run_step(runner)
    faults_before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    phases = [run_step(runner) for _ in range(steps)]
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults_before
    step_ms = [1e3 * sum(phase) for phase in phases]
    no_grad_ms = milliseconds(runner.inference, runner.synchronize, steps)
    peak = peak_rss_mb()  # before the GEMM, whose matrices are not part of training
    gflops = gemm_gflops(runner, GEMM_SIZE["cuda" if device.startswith("cuda") else "cpu"])

    median = statistics.median(step_ms)
    flops = matmul_flops(config)
    floor_ms = 1e3 * flops / (gflops * 1e9)
    _, _, tgt_out = random_batch(config)
    tokens = int((tgt_out != PAD_ID).sum())
    return runner, {
        "benchmark": "train_step",
        "config": config.name,
        "framework": framework,
        "device": device,
        "figure": "tokens_per_s",
        "tokens_per_s": tokens / (median * 1e-3),
        "median_ms": median,
        "min_ms": min(step_ms),
        "max_ms": max(step_ms),
        "steps": steps,
        "warmup": warmup,
        "ema_decay": ema_decay,
        "phases": {name: statistics.median(1e3 * phase[i] for phase in phases)
                   for i, name in enumerate(("forward_ms", "backward_ms", "optimizer_ms"))},
        "no_grad_forward_ms": statistics.median(no_grad_ms),
        "matmul_gflop": flops / 1e9,
        "gflops": gflops,
        "matmul_floor_ms": floor_ms,
        "blas_share": floor_ms / median,
        "parameters": runner.parameter_count(),
        "peak_rss_mb": peak,
        "page_faults_per_step": faults / steps,
        "threads_env": {name: os.environ[name] for name in
                        ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
                        if name in os.environ},
        "blas_release": blas_release(framework, device),
    }


# ----- counting: launches and synchronizations on the CuPy stand-in --------------------------
def trainer_step_phases(runner):
    """One step as `Trainer.train_step` takes it, yielding each phase's name when it is done:
    zero_grad + forward + loss, backward, clipping (norm 1) with the step's finite flag, and
    the optimizer step that the flag skips on the device, and the moving average, if any."""
    mg = runner.mg
    runner.zero_grad()
    loss = runner.forward_loss()
    yield "forward"
    runner.backward(loss)
    yield "backward"
    norm = mg.optim.clip_grad_norm_(runner.model.parameters(), 1.0)
    finite = loss.detach().isfinite() & norm.isfinite()
    yield "clip"
    runner.optimizer.step(skip=~finite)
    yield "optimizer"
    if runner.average is not None:
        runner.average_step()
        yield "average"


def count(config, steps, warmup, fused=False, ema_decay=EMA_DECAY):
    """The kernel launches and device-to-host synchronizations of `steps` training steps on
    'cuda' run by the CuPy stand-in (its counting rule: minigrad/testing/fake_cupy/), after
    `warmup` steps (the first builds the optimizer's flat arrays), with or without the fused
    kernels: per step, by phase, by op and by kernel."""
    from minigrad.backend import use_fused_kernels
    from minigrad.testing import fake_cupy

    with fake_cupy.installed(devices=1):
        use_fused_kernels(fused)
        try:
            return _count(fake_cupy.monitor, config, steps, warmup, ema_decay)
        finally:
            use_fused_kernels(False)


def _count(monitor, config, steps, warmup, ema_decay):
    runner = MinigradStep(config, "cuda", ema_decay)
    for _ in range(warmup):
        for _ in trainer_step_phases(runner):
            pass

    def reading():
        return monitor.launch_count, monitor.sync_count

    monitor.reset()
    phases = {}
    with OpMeter(reading) as meter:
        for _ in range(steps):
            before = reading()
            for phase in trainer_step_phases(runner):
                now = reading()
                launches, syncs = phases.get(phase, (0, 0))
                phases[phase] = (launches + now[0] - before[0], syncs + now[1] - before[1])
                before = now
    launches, syncs = reading()
    return {
        "benchmark": "train_step",
        "mode": "count",
        "config": config.name,
        "framework": "minigrad",
        "device": "cuda (CuPy stand-in)",
        "fused": runner.mg.backend.get_backend("cuda").kernels.fused,
        "figure": "launches_per_step",
        "launches_per_step": launches / steps,
        "syncs_per_step": syncs / steps,
        "steps": steps,
        "warmup": warmup,
        "ema_decay": ema_decay,
        "phases": {phase: {"launches": n / steps, "syncs": m / steps}
                   for phase, (n, m) in phases.items()},
        "by_op": meter.by_op(steps),
        "by_kernel": {name: n / steps for name, n in monitor.launches.most_common()},
        "sync_reasons": {name: n / steps for name, n in monitor.syncs.most_common()},
        "parameters": runner.parameter_count(),
    }


def describe_counts(record, rows=12):
    phases = record["phases"]
    ops = sorted(record["by_op"].items(),
                 key=lambda item: -(item[1]["forward_launches"] + item[1]["backward_launches"]))
    lines = [(f"minigrad {record['config']} on {record['device']}"
              f"{', fused kernels' if record['fused'] else ''}, Trainer.train_step with "
              f"clipping{', moving average' if record['ema_decay'] else ''}: "
              f"{record['launches_per_step']:.0f} kernel launches and "
              f"{record['syncs_per_step']:.0f} synchronizations per step"),
             "  phases: " + ", ".join(f"{name} {counts['launches']:.0f} launches / "
                                      f"{counts['syncs']:.0f} syncs"
                                      for name, counts in phases.items()),
             f"  {'op':<32}{'calls':>7}{'forward':>9}{'backward':>10}{'syncs':>7}"]
    for name, counts in ops[:rows]:
        lines.append(f"  {name:<32}{counts['calls']:>7.0f}{counts['forward_launches']:>9.0f}"
                     f"{counts['backward_launches']:>10.0f}{counts['syncs']:>7.0f}")
    kernels = list(record["by_kernel"].items())[:rows]
    lines.append("  kernels: " + ", ".join(f"{name} {n:.0f}" for name, n in kernels))
    if record["sync_reasons"]:
        lines.append("  synchronized by: " + ", ".join(
            f"{name} {n:.0f}" for name, n in record["sync_reasons"].items()))
    return "\n".join(lines)


def blas_release(framework, device):
    """Whether minigrad stops OpenBLAS's spinning workers before its blockwise work on the
    CPU (`minigrad.backend.blas_threads.release_state`), or None where it does not apply."""
    if framework != "minigrad" or device != "cpu":
        return None
    from minigrad.backend.blas_threads import release_state

    return release_state()


def describe(record):
    """The record as a few readable lines."""
    phases = record["phases"]
    return "\n".join([
        (f"{record['framework']} {record['config']} on {record['device']}: "
         f"{record['median_ms']:.2f} ms per training step (min {record['min_ms']:.2f}, "
         f"max {record['max_ms']:.2f}, {record['steps']} steps), "
         f"{record['tokens_per_s']:.0f} tokens/s"),
        (f"  phases: forward {phases['forward_ms']:.2f} ms, backward "
         f"{phases['backward_ms']:.2f} ms, optimizer {phases['optimizer_ms']:.2f} ms"),
        f"  no-grad forward: {record['no_grad_forward_ms']:.2f} ms",
        (f"  matmul floor: {record['matmul_floor_ms']:.2f} ms ({record['matmul_gflop']:.2f} "
         f"GFLOP at {record['gflops']:.0f} GFLOP/s; {record['blas_share']:.0%} of the step)"),
        (f"  parameters: {record['parameters']:,}; peak RSS {record['peak_rss_mb']:.0f} MB; "
         f"{record['page_faults_per_step']:.0f} page faults per step"),
    ] + ([f"  OpenBLAS's idle workers released: {record['blas_release']}"]
         if record["blas_release"] else []))


def main():
    parser = cli.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--framework", choices=sorted(FRAMEWORKS), default="minigrad")
    parser.add_argument("--config", choices=list(CONFIGS), default="tiny")
    parser.add_argument("--device", type=cli.device, default="cpu", help="cpu or cuda")
    parser.add_argument("--steps", type=cli.positive_int, default=20, help="timed steps")
    parser.add_argument("--warmup", type=cli.non_negative_int, default=3,
                        help="untimed steps first")
    parser.add_argument("--json", action="store_true", help="print one JSON record, last")
    parser.add_argument("--profile", action="store_true",
                        help="then print a per-op time table over a few more steps")
    parser.add_argument("--fused", action="store_true",
                        help="minigrad on cuda: the fused kernels (use_fused_kernels)")
    parser.add_argument("--ema-decay", type=float, default=EMA_DECAY,
                        help="the weights' moving average after each optimizer step, with this "
                             "decay (the main job's; 0: none)")
    parser.add_argument("--count", action="store_true",
                        help="count kernel launches and device-to-host synchronizations per "
                             "step on the CuPy stand-in (no GPU needed) instead of timing")
    args = parser.parse_args()
    if args.steps < 1 or args.warmup < 0:
        parser.error("--steps must be >= 1 and --warmup >= 0")
    if not 0 <= args.ema_decay < 1:
        parser.error(f"--ema-decay must be in [0, 1) (0: no moving average), got "
                     f"{args.ema_decay}")
    if args.count:
        if args.framework != "minigrad" or args.profile:
            parser.error("--count counts minigrad's steps: no --framework torch, no --profile")
        record = count(CONFIGS[args.config], args.steps, max(args.warmup, 1), args.fused,
                       args.ema_decay)
        print(json.dumps(record) if args.json else describe_counts(record))
        return

    if args.fused:
        from minigrad.backend import use_fused_kernels

        use_fused_kernels(True)
    runner, record = measure(args.framework, CONFIGS[args.config], args.device, args.steps,
                             args.warmup, args.ema_decay)
    record["fused"] = args.fused
    if args.profile:
        print(runner.profile(min(args.steps, 5), run_step))
    print(json.dumps(record) if args.json else describe(record))


if __name__ == "__main__":
    cli.run(main)
