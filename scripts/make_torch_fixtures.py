"""Write tests/fixtures/torch_ops.npz: PyTorch's values and gradients for the ops whose meaning
PyTorch defines (cross_entropy, layer_norm, gelu, softmax, log_softmax, attention).

Needs the `bench` extra (torch); the tests read the committed file and never import torch.
Every case stores its inputs `<case>__in<i>`, a random upstream gradient `<case>__upstream`,
the output `<case>__out` and the gradient of each floating input `<case>__grad<i>`, in float64.
Run: python scripts/make_torch_fixtures.py
"""

from pathlib import Path

import numpy as np
import torch
from torch.nn import functional as F

OUTPUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "torch_ops.npz"
rng = np.random.default_rng(2024)


def normal(*shape, scale=1.0):
    return rng.standard_normal(shape) * scale


def cross_entropy_inputs(shape, classes, ignored):
    """Logits (..., classes) with the class axis last (minigrad's layout) and int64 targets
    in which the positions `ignored` hold -100."""
    target = rng.integers(0, classes, shape)
    target.reshape(-1)[list(ignored)] = -100
    return normal(*shape, classes, scale=2.0), target


def attention_inputs():
    """q (2, 1, 3, 4), k (2, 1, 4, 4), v (2, 1, 4, 2) and a boolean mask, True = masked out
    (minigrad's convention): padding of the second sequence's last key, plus random masking
    that leaves the first key visible to every query (no fully masked row)."""
    padding = np.zeros((2, 1, 1, 4), dtype=bool)
    padding[1, ..., 3:] = True
    scattered = rng.random((1, 1, 3, 4)) < 0.3
    scattered[..., 0] = False
    return normal(2, 1, 3, 4), normal(2, 1, 4, 4), normal(2, 1, 4, 2), padding | scattered


# name -> (PyTorch computation, inputs); PyTorch's class axis is 1 and its boolean attention
# mask means True = attend, so both are converted here.
CASES = {
    "cross_entropy_smoothing": (
        lambda logits, target: F.cross_entropy(logits.permute(0, 2, 1), target,
                                               ignore_index=-100, label_smoothing=0.1),
        cross_entropy_inputs((2, 3), 5, ignored=(1, 4))),
    "cross_entropy_ignore_class_sum": (
        lambda logits, target: F.cross_entropy(logits, target, ignore_index=2,
                                               label_smoothing=0.2, reduction="sum"),
        (normal(5, 4), np.array([0, 2, 1, 3, 2]))),
    "cross_entropy_none": (
        lambda logits, target: F.cross_entropy(logits.permute(0, 2, 1), target,
                                               ignore_index=-100, label_smoothing=0.1,
                                               reduction="none"),
        cross_entropy_inputs((2, 2), 4, ignored=(2,))),
    "layer_norm": (
        lambda x, weight, bias: F.layer_norm(x, (6,), weight, bias, eps=1e-5),
        (normal(3, 6, scale=3.0) + 1.0, normal(6), normal(6))),
    "layer_norm_2d": (
        lambda x, weight, bias: F.layer_norm(x, (2, 3), weight, bias, eps=1e-5),
        (normal(2, 2, 3), normal(2, 3), normal(2, 3))),
    "gelu_exact": (lambda x: F.gelu(x), (normal(12, scale=2.0),)),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), (normal(12, scale=2.0),)),
    "softmax": (lambda x: F.softmax(x, dim=-1), (normal(2, 4, scale=2.0),)),
    "softmax_axis1": (lambda x: F.softmax(x, dim=1), (normal(2, 3, 2, scale=2.0),)),
    "log_softmax": (lambda x: F.log_softmax(x, dim=-1), (normal(2, 4, scale=2.0),)),
    "attention": (
        lambda q, k, v, mask: F.scaled_dot_product_attention(q, k, v, attn_mask=~mask),
        attention_inputs()),
}


def record(name, compute, inputs):
    tensors = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in inputs]
    out = compute(*tensors)
    upstream = normal(*out.shape)
    out.backward(torch.tensor(upstream))
    arrays = {f"{name}__out": out.detach().numpy(), f"{name}__upstream": upstream}
    for i, (array, tensor) in enumerate(zip(inputs, tensors)):
        arrays[f"{name}__in{i}"] = array
        if tensor.requires_grad:
            arrays[f"{name}__grad{i}"] = tensor.grad.numpy()
    return arrays


if __name__ == "__main__":
    torch.set_default_dtype(torch.float64)
    arrays = {}
    for name, (compute, inputs) in CASES.items():
        arrays.update(record(name, compute, inputs))
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(OUTPUT, **arrays)
    print(f"wrote {OUTPUT} ({OUTPUT.stat().st_size} bytes, torch {torch.__version__})")
