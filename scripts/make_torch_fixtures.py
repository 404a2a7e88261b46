"""Write tests/fixtures/torch_ops.npz: PyTorch's values and gradients for the ops whose meaning
PyTorch defines (cross_entropy, layer_norm, gelu, softmax, log_softmax, attention, and the
ops of PyTorch's vocabulary: elementwise math, activations, statistics, cumulative ops,
sorting, shape ops, gathers and scatters, losses, pad, einsum, convolution and pooling).

Needs the `bench` extra (torch); the tests read the committed file and never import torch.
Every case stores its inputs `<case>__in<i>`, a random upstream gradient `<case>__upstream`,
the output `<case>__out` and the gradient of each floating input `<case>__grad<i>` (but of
those used as constants), in float64.
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


def positive(*shape):
    return rng.uniform(0.3, 3.0, shape)


def inside(*shape):
    return rng.uniform(-0.9, 0.9, shape)


# Elementwise ops of one input that PyTorch and minigrad name alike: name -> inputs
UNARY = {
    "log2": positive(3, 4), "log10": positive(5), "log1p": positive(2, 3), "expm1": normal(4),
    "exp2": normal(2, 3), "rsqrt": positive(4), "sin": normal(3, 2, scale=2.0),
    "cos": normal(5, scale=2.0), "tan": inside(4), "asin": inside(2, 3), "acos": inside(5),
    "atan": normal(4, scale=2.0), "sinh": normal(3), "cosh": normal(3), "asinh": normal(4),
    "acosh": positive(4) + 1.0, "atanh": inside(2, 2),
}
for name, inputs in UNARY.items():
    CASES[name] = (getattr(torch, name), (inputs,))

# Activations of torch.nn.functional that minigrad's F names alike: name -> keyword arguments
ACTIVATIONS = {
    "leaky_relu": {"negative_slope": 0.2}, "elu": {"alpha": 0.7}, "celu": {"alpha": 0.5},
    "selu": {}, "silu": {}, "mish": {}, "softplus": {"beta": 2.0}, "softsign": {},
    "hardsigmoid": {}, "hardswish": {}, "hardtanh": {"min_val": -0.5, "max_val": 1.5},
    "relu6": {}, "logsigmoid": {},
}
for name, options in ACTIVATIONS.items():
    CASES[f"F_{name}"] = ((lambda f, o: lambda x: f(x, **o))(getattr(F, name), options),
                          (normal(3, 5, scale=4.0),))


def distinct(*shape):
    """Values pairwise apart (no ties for sorting and running extremes)."""
    return rng.permutation(int(np.prod(shape))).reshape(shape) * 0.37 + normal(*shape) * 0.01


def windows(*shape):
    return normal(*shape)


def scatter_index():
    return np.array([[2, 0, 1], [1, 2, 0]])  # each position once per row


CASES.update({
    "logaddexp": (torch.logaddexp, (normal(3, 1), normal(4))),
    "copysign": (torch.copysign, (normal(2, 3), normal(3))),
    "fmod": (torch.fmod, (normal(6, scale=3.0), positive(6))),
    "remainder": (torch.remainder, (normal(6, scale=3.0), positive(6))),
    "div_floor": (lambda a, b: torch.div(a, b, rounding_mode="floor"),
                  (normal(5, scale=3.0), positive(5))),
    "rounding": (lambda x: torch.floor(x) + torch.ceil(x) + torch.round(x) + torch.trunc(x)
                 + torch.sign(x), (normal(6, scale=3.0),)),
    "power_zero_base": (torch.pow, (np.array([0.0, 0.0, 0.0, 2.0]),
                                    np.array([0.0, 1.0, 2.5, 0.0]))),
    "lerp": (torch.lerp, (normal(3, 4), normal(4), normal(3, 1))),
    "softmin": (lambda x: F.softmin(x, dim=1), (normal(2, 3, 2),)),
    "normalize": (lambda x: F.normalize(x, p=2.0, dim=1), (normal(3, 4),)),
    "var_unbiased": (lambda x: torch.var(x, dim=1, correction=1), (normal(3, 5),)),
    "std_unbiased": (lambda x: torch.std(x, dim=0, correction=1, keepdim=True), (normal(4, 3),)),
    "prod": (lambda x: torch.prod(x, dim=1), (np.array([[2.0, 0.0, 3.0], [1.5, -2.0, 0.5]]),)),
    "cumsum": (lambda x: torch.cumsum(x, dim=1), (normal(2, 5),)),
    "cumprod": (lambda x: torch.cumprod(x, dim=0), (positive(4, 2),)),
    "cummax": (lambda x: torch.cummax(x, dim=1)[0], (distinct(3, 4),)),
    "cummin": (lambda x: torch.cummin(x, dim=0)[0], (distinct(4, 2),)),
    "logcumsumexp": (lambda x: torch.logcumsumexp(x, dim=1), (normal(2, 6, scale=3.0),)),
    "sort_descending": (lambda x: torch.sort(x, dim=1, descending=True)[0], (distinct(3, 4),)),
    "topk_smallest": (lambda x: torch.topk(x, 2, dim=0, largest=False)[0], (distinct(4, 3),)),
    "flip": (lambda x: torch.flip(x, dims=(0, 2)), (normal(2, 3, 2),)),
    "roll": (lambda x: torch.roll(x, shifts=(1, -2), dims=(0, 1)), (normal(3, 4),)),
    "repeat": (lambda x: x.repeat(2, 1, 3), (normal(2, 2),)),
    "repeat_interleave": (lambda x: torch.repeat_interleave(x, 2, dim=1), (normal(2, 3),)),
    "flatten": (lambda x: torch.flatten(x, 1, 2), (normal(2, 3, 2, 2),)),
    "unfold": (lambda x: x.unfold(1, 3, 2), (normal(2, 7),)),
    "gather": (lambda x, index: torch.gather(x, 1, index),
               (normal(3, 4), np.array([[0, 3], [1, 1], [2, 0]]))),
    "scatter": (lambda x, index, src: torch.scatter(x, 1, index, src),
                (normal(2, 3), scatter_index(), normal(2, 3))),
    "scatter_add": (lambda x, index, src: torch.scatter_add(x, 0, index, src),
                    (normal(3, 3), np.array([[0, 2, 0], [0, 1, 2]]), normal(2, 3))),
    "scatter_reduce_mean": (
        lambda x, index, src: torch.scatter_reduce(x, 0, index, src, "mean",
                                                   include_self=True),
        (normal(3, 3), np.array([[0, 2, 0], [0, 1, 0]]), normal(2, 3))),
    "masked_select": (lambda x, mask: torch.masked_select(x, mask),
                      (normal(2, 3), np.array([True, False, True]))),
    "diagonal": (lambda x: torch.diagonal(x, offset=1, dim1=0, dim2=2), (normal(3, 2, 4),)),
    "diag": (lambda x: torch.diag(x, -1), (normal(3),)),
    "nll_loss": (lambda x, target: F.nll_loss(x, target, ignore_index=-100),
                 (normal(4, 3), np.array([0, 2, -100, 1]))),
    "cross_entropy_probabilities": (
        lambda logits, target: F.cross_entropy(logits, target, label_smoothing=0.1),
        (normal(3, 4), rng.dirichlet(np.ones(4), 3))),
    "binary_cross_entropy": (lambda p, t: F.binary_cross_entropy(p, t),
                             (rng.uniform(0.05, 0.95, (3, 2)), rng.uniform(0, 1, (3, 2)))),
    "binary_cross_entropy_with_logits": (
        lambda x, t: F.binary_cross_entropy_with_logits(x, t, pos_weight=torch.tensor(2.5)),
        (normal(4, scale=3.0), rng.uniform(0, 1, 4))),
    "mse_loss": (lambda x, t: F.mse_loss(x, t), (normal(3, 2), normal(3, 2))),
    "l1_loss": (lambda x, t: F.l1_loss(x, t, reduction="sum"), (normal(5), normal(5))),
    "pad_constant": (lambda x: F.pad(x, (1, 2, 0, 1), value=-0.5), (normal(2, 3, 2),)),
    "pad_reflect": (lambda x: F.pad(x, (2, 1), mode="reflect"), (normal(2, 2, 4),)),
    "pad_replicate": (lambda x: F.pad(x, (1, 2, 2, 0), mode="replicate"), (normal(1, 2, 3, 3),)),
    "pad_circular": (lambda x: F.pad(x, (2, 1), mode="circular"), (normal(2, 2, 3),)),
    "einsum": (lambda a, b, c: torch.einsum("bi,ij,bj->b", a, b, c),
               (normal(2, 3), normal(3, 4), normal(2, 4))),
    "conv2d": (lambda x, w, b: F.conv2d(x, w, b, stride=(1, 2), padding=1, dilation=(2, 1)),
               (windows(2, 3, 6, 5), normal(4, 3, 3, 2), normal(4))),
    "conv_transpose2d": (
        lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1),
        (windows(2, 3, 3, 4), normal(3, 2, 3, 3), normal(2))),
    "max_pool2d": (lambda x: F.max_pool2d(x, 3, stride=2, padding=1), (distinct(2, 2, 5, 5),)),
    "avg_pool2d": (lambda x: F.avg_pool2d(x, (2, 3), stride=(2, 1), padding=(1, 1)),
                   (normal(2, 2, 4, 5),)),
    "attention_attn_mask_bool": (
        lambda q, k, v, attend: F.scaled_dot_product_attention(q, k, v, attn_mask=attend),
        (normal(2, 2, 3, 4), normal(2, 2, 4, 4), normal(2, 2, 4, 3),
         np.array([[True, True, False, True], [False, True, True, True],
                   [True, False, False, True]]))),
    "attention_float_mask_scale": (
        lambda q, k, v, bias: F.scaled_dot_product_attention(q, k, v, attn_mask=bias.detach(),
                                                             scale=0.3),
        (normal(2, 3, 4), normal(2, 5, 4), normal(2, 5, 2), normal(3, 5))),
    "attention_causal_gqa": (
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                                       enable_gqa=True),
        (normal(1, 4, 3, 2), normal(1, 2, 3, 2), normal(1, 2, 3, 3))),
    "conv2d_groups": (lambda x, w: F.conv2d(x, w, stride=2, padding=(1, 0), groups=2),
                      (windows(2, 4, 5, 5), normal(6, 2, 3, 2))),
    "conv_transpose2d_groups": (
        lambda x, w: F.conv_transpose2d(x, w, stride=(2, 1), dilation=2, groups=2),
        (windows(1, 4, 3, 3), normal(4, 3, 2, 2))),
    "interpolate_nearest": (lambda x: F.interpolate(x, size=(5, 3), mode="nearest"),
                            (normal(2, 2, 3, 4),)),
    "interpolate_bilinear": (
        lambda x: F.interpolate(x, scale_factor=(1.5, 2.0), mode="bilinear",
                                align_corners=False),
        (normal(1, 2, 4, 3),)),
    "interpolate_bilinear_down": (
        lambda x: F.interpolate(x, size=(2, 3), mode="bilinear", align_corners=False),
        (normal(1, 1, 5, 7),)),
})


def record(name, compute, inputs):
    tensors = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in inputs]
    out = compute(*tensors)
    upstream = normal(*out.shape)
    out.backward(torch.tensor(upstream))
    arrays = {f"{name}__out": out.detach().numpy(), f"{name}__upstream": upstream}
    for i, (array, tensor) in enumerate(zip(inputs, tensors)):
        arrays[f"{name}__in{i}"] = array
        if tensor.grad is not None:  # a float input used as a constant has none
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
