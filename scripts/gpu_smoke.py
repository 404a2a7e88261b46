"""A smoke run of the CUDA backend against the CPU, for a machine with a GPU (scripts/gpu_check.sh
runs it first: its calls also pay CuPy's first-use compilation of each kernel).

Each check computes the same thing on 'cpu' and on 'cuda' and prints the largest difference:
backward through a small network, cross-entropy with label smoothing and ignored targets,
masked softmax with a fully masked row, LayerNorm forward and backward, embedding backward
with repeated ids, and three Trainer steps without dropout. The checks run in float32, the
Trainer's dtype, but cross-entropy, in float64 (to 1e-9), so that on a cold kernel cache
few of CuPy's kernels are compiled for two dtypes (its box is 65 s). Then the same checks
with the fused kernels on. Then NCCL on one GPU: an allreduce of ones(4) over a communicator
of one rank. Under MINIGRAD_REQUIRE_CUDA=1 (scripts/gpu_check.sh) it first checks that
'cuda' is a real GPU, not the CuPy stand-in. Then, where PyTorch
with CUDA is installed, the kernel launches of one tiny training step counted by its profiler
(CUPTI sees CuPy's kernels too) beside the CuPy stand-in's count of the same step.

    PYTHONPATH=. python3 scripts/gpu_smoke.py        # exit status 1 if a check fails
    PYTHONPATH=. python3 -m minigrad.testing.fake_cupy scripts/gpu_smoke.py --quick
                        # on the CuPy stand-in; --quick: the checks but the Trainer steps
"""

import os
import sys
import time

import numpy as np

import minigrad as mg
from minigrad.backend import use_fused_kernels
from minigrad.errors import MinigradError
from minigrad.nn import functional as F

failures = []


def check(name, compute, dtype, tolerance):
    started = time.perf_counter()
    try:
        cpu, cuda = compute("cpu", dtype), compute("cuda", dtype)
        worst = max(float(np.max(np.abs(a.numpy() - b.numpy()), initial=0.0))
                    for a, b in zip(cpu, cuda))
        finite = all(np.isfinite(b.numpy()).all() for b in cuda)
        ok = worst <= tolerance and finite
        verdict = "ok" if ok else "FAILED"
        print(f"{verdict:>6}  {name + ', ' + dtype:<43} max |cpu - cuda| {worst:.2e} "
              f"(tolerance {tolerance:.0e})"
              f"{'' if finite else ', non-finite values'}  {time.perf_counter() - started:.1f}s",
              flush=True)
    except Exception as error:  # a smoke run reports every check, then fails
        ok = False
        print(f"FAILED  {name + ', ' + dtype:<43} {type(error).__name__}: {error}", flush=True)
    if not ok:
        failures.append(name)


def _arrays(*shapes, seed=0, dtype="float64"):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(shape).astype(dtype) for shape in shapes]


def backward(device, dtype):
    x, w1, w2 = (mg.tensor(a, device=device, requires_grad=True)
                 for a in _arrays((8, 5), (5, 6), (6, 3), dtype=dtype))
    ((x @ w1).tanh() @ w2).relu().sum().backward()
    return [x.grad, w1.grad, w2.grad]


def cross_entropy(device, dtype):
    (logits,) = _arrays((4, 6, 11), seed=1, dtype=dtype)
    logits = mg.tensor(logits, device=device, requires_grad=True)
    target = mg.tensor(np.random.default_rng(2).integers(0, 11, (4, 6)), device=device)
    loss = F.cross_entropy(logits, target, ignore_index=0, label_smoothing=0.1)
    loss.backward()
    return [loss, logits.grad]


def masked_softmax(device, dtype):
    (scores,) = _arrays((2, 3, 4, 5), seed=3, dtype=dtype)
    mask = np.random.default_rng(4).random((2, 1, 4, 5)) < 0.3
    mask[0, :, 1] = True  # a fully masked row: zeros, no NaN
    x = mg.tensor(scores * 100, device=device, requires_grad=True)
    y = F.softmax(x, mask=mg.tensor(mask, device=device))
    (y * y).sum().backward()
    return [y, x.grad]


def layer_norm(device, dtype):
    x, w, b = (mg.tensor(a, device=device, requires_grad=True)
               for a in _arrays((6, 7, 16), (16,), (16,), seed=5, dtype=dtype))
    out = F.layer_norm(x, 16, w, b)
    (out * out.detach()).sum().backward()
    return [out, x.grad, w.grad, b.grad]


def embedding(device, dtype):
    (table,) = _arrays((50, 8), seed=6, dtype=dtype)
    weight = mg.tensor(table, device=device, requires_grad=True)
    ids = mg.tensor(np.random.default_rng(7).integers(0, 10, (16, 9)), device=device)
    out = F.embedding(ids, weight, padding_idx=0)
    (out * 3).sum().backward()
    return [out, weight.grad]


def trainer_steps(device, dtype):  # the model's own dtype, float32
    from transformer import Transformer
    from transformer.builders import build_model_config, build_vocab
    from transformer.data import load_task
    from transformer.data.batching import BatchIterator, encode_pairs
    from transformer.training import Trainer
    from transformer.training_config import TrainingConfig

    config = TrainingConfig(steps=3, batch_size=16, warmup_steps=2, log_every=1,
                            eval_every=1000, checkpoint_every=1000, progress=False)
    mg.manual_seed(0)
    splits = load_task("copy")
    vocab = build_vocab(splits)
    model = Transformer(build_model_config(vocab, splits, {
        "d_model": 32, "n_heads": 2, "n_encoder_layers": 1, "n_decoder_layers": 1,
        "d_ff": 64, "dropout": 0.0}))
    batches = BatchIterator(encode_pairs(splits["train"], vocab), vocab, 16, device=device)
    trainer = Trainer(model.to(device), batches, splits["valid"], vocab, config)
    losses = []
    for _ in range(3):
        trainer.train_step(trainer.data.next_batch())
        losses.append(trainer.read()["loss"])
    return [mg.tensor(losses)] + [p.cpu() for p in list(trainer.model.parameters())[:3]]


# name, computation, dtype, tolerance (three Trainer steps: the parameters move by about the
# learning rate, float32's rounding of which the CPU and the GPU take differently)
CHECKS = [("backward", backward, "float32", 1e-4),
          ("cross-entropy", cross_entropy, "float64", 1e-9),
          ("masked softmax", masked_softmax, "float32", 1e-4),
          ("LayerNorm", layer_norm, "float32", 1e-4),
          ("embedding", embedding, "float32", 1e-4),
          ("three Trainer steps", trainer_steps, "float32", 1e-3)]


def on_a_gpu():
    """Under MINIGRAD_REQUIRE_CUDA=1, whether 'cuda' is real CuPy on a GPU (not the
    stand-in); always true without it."""
    if os.environ.get("MINIGRAD_REQUIRE_CUDA") != "1":
        return True
    from minigrad.backend import get_backend
    from minigrad.testing.fake_cupy import is_stand_in

    try:
        xp = get_backend("cuda").xp
    except MinigradError as error:  # the backend's own one-line error: no CuPy, no GPU
        print(f"!! MINIGRAD_REQUIRE_CUDA=1 but 'cuda' cannot run here: {error}")
        return False
    if is_stand_in(xp):
        print("!! MINIGRAD_REQUIRE_CUDA=1 but 'cuda' runs on the CuPy stand-in")
        return False
    print(f"CuPy {xp.__version__} on {xp.cuda.runtime.getDeviceCount()} GPU(s)", flush=True)
    return True


def nccl_allreduce():
    """NCCL's allreduce of ones(4) on one GPU, a communicator of one rank: ones back."""
    from minigrad.backend import get_backend
    from minigrad.distributed.communicator import SingleProcess
    from minigrad.distributed.nccl import NCCLCommunicator
    from minigrad.testing.fake_cupy import is_stand_in

    xp = get_backend("cuda").xp
    if is_stand_in(xp):
        print("  skipped: the CuPy stand-in has no NCCL (tests/distributed checks the calls)")
        return
    communicator = NCCLCommunicator(SingleProcess(), cupy=xp)
    summed = communicator.allreduce_sum_(xp.ones(4, dtype=xp.float32))
    communicator.synchronize("the allreduce")
    ok = bool((summed == 1).all())
    print(f"  allreduce of ones(4) on one GPU: {summed.get().tolist()}", "ok" if ok else "FAILED")
    if not ok:
        failures.append("NCCL allreduce")


def launches_by_profiler():
    """One tiny training step's CUDA kernels counted by torch.profiler, beside the stand-in's
    count (the counting rule of minigrad/testing/fake_cupy/)."""
    try:
        import torch
        from torch.profiler import ProfilerActivity, profile
    except ImportError:
        print("  no PyTorch: the launch count is not checked against a profiler")
        return
    if not torch.cuda.is_available():
        print("  PyTorch sees no GPU: the launch count is not checked against a profiler")
        return
    sys.path.insert(0, "benchmarks")
    from configs import CONFIGS
    from train_step import EMA_DECAY, MinigradStep, count, trainer_step_phases

    runner = MinigradStep(CONFIGS["tiny"], "cuda", EMA_DECAY)
    for _ in trainer_step_phases(runner):  # builds the optimizer's flat arrays, compiles
        pass
    runner.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as profiler:
        for _ in trainer_step_phases(runner):
            pass
        runner.synchronize()
    kernels = [e for e in profiler.events() if e.device_type.name == "CUDA"]
    counted = count(CONFIGS["tiny"], steps=1, warmup=1)["launches_per_step"]
    print(f"  tiny step: {len(kernels)} CUDA kernels and copies by torch.profiler, "
          f"{counted:.0f} launches by the CuPy stand-in's rule")


def main():
    checks = CHECKS[:-1] if "--quick" in sys.argv[1:] else CHECKS
    if not on_a_gpu():
        sys.exit(1)
    print("== smoke: cpu against cuda (plain kernels)", flush=True)
    for name, compute, dtype, tolerance in checks:
        check(name, compute, dtype, tolerance)
    print("== smoke: cpu against cuda (fused kernels)", flush=True)
    use_fused_kernels(True)
    for name, compute, dtype, tolerance in checks:
        check(f"{name}, fused", compute, dtype, tolerance)
    use_fused_kernels(False)
    print("== NCCL on one GPU", flush=True)
    try:
        nccl_allreduce()
    except Exception as error:
        print(f"  FAILED: {type(error).__name__}: {error}")
        failures.append("NCCL allreduce")
    print("== kernel launches: the stand-in's rule against a profiler", flush=True)
    try:
        launches_by_profiler()
    except Exception as error:
        print(f"  not checked: {type(error).__name__}: {error}")
    if failures:
        print(f"!! {len(failures)} check(s) failed: {', '.join(failures)}")
        sys.exit(1)
    print("all smoke checks passed")


if __name__ == "__main__":
    main()
