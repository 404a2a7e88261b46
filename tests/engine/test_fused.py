"""The CUDA backend's fused kernels (minigrad/backend/cupy_fused.py, `cupy.fuse`), run by the
CuPy stand-in: the same values as the plain path (and the CPU), the same gradients and
gradients of gradients, stable on large and masked inputs, and fewer launches."""

import numpy as np
import pytest

import minigrad as mg
from minigrad.backend import get_backend, use_fused_kernels
from minigrad.backend.cupy_fused import FusedKernels
from minigrad.nn import functional as F

pytestmark = pytest.mark.gpu  # the cuda suite (`pytest -m gpu`): real CuPy on a GPU


@pytest.fixture
def fused():
    use_fused_kernels(True)
    assert isinstance(get_backend("cuda").kernels, FusedKernels)
    assert get_backend("cuda").kernels.fused
    yield
    use_fused_kernels(False)


def _both_paths(compute):
    """compute() on 'cuda' with the fused kernels off, then on; as NumPy arrays."""
    results = []
    for on in (False, True):
        use_fused_kernels(on)
        try:
            results.append([t.numpy() for t in compute()])
        finally:
            use_fused_kernels(False)
    return results


def _inputs(*shape, scale=1.0, seed=0, dtype="float32"):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape).astype(dtype) * scale


@pytest.mark.parametrize("scale", [1.0, 1e4])
def test_masked_softmax_and_cross_entropy_match_the_plain_path(scale):
    scores = _inputs(2, 3, 4, 5, scale=scale)
    mask = np.zeros((2, 1, 4, 5), bool)
    mask[0, :, :, 2:] = True
    mask[1, :, 1] = True  # a fully masked row: zeros, no NaN
    logits, target = _inputs(6, 7, scale=scale), np.array([0, 3, 6, 1, 1, 2])

    def compute():
        x = mg.tensor(scores, device="cuda", requires_grad=True)
        y = F.softmax(x, mask=mg.tensor(mask, device="cuda"))
        (y * mg.tensor(_inputs(2, 3, 4, 5, seed=1), device="cuda")).sum().backward()
        z = mg.tensor(logits, device="cuda", requires_grad=True)
        loss = F.cross_entropy(z, mg.tensor(target, device="cuda"), ignore_index=1,
                               label_smoothing=0.1)
        loss.backward()
        return y, x.grad, loss, z.grad, F.log_softmax(z)

    plain, fused_values = _both_paths(compute)
    for a, b in zip(plain, fused_values):
        assert np.isfinite(b).all()
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
    assert (fused_values[0][1, :, 1] == 0).all()


def test_layer_norm_matches_the_plain_path_and_the_cpu():
    x, w, b, upstream = _inputs(4, 6, 8), _inputs(8, seed=1), _inputs(8, seed=2), \
        _inputs(4, 6, 8, seed=3)

    def compute(device="cuda"):
        tensors = [mg.tensor(a, device=device, requires_grad=True) for a in (x, w, b)]
        out = F.layer_norm(tensors[0], 8, tensors[1], tensors[2])
        (out * mg.tensor(upstream, device=device)).sum().backward()
        return [out] + [t.grad for t in tensors]

    plain, fused_values = _both_paths(compute)
    on_cpu = [t.numpy() for t in compute("cpu")]
    for a, b_, c in zip(plain, fused_values, on_cpu):
        np.testing.assert_allclose(b_, a, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(b_, c, rtol=1e-5, atol=1e-5)


def test_fused_layer_norm_passes_gradcheck_and_gradgradcheck(fused):
    x = mg.tensor(_inputs(3, 5, dtype="float64"), device="cuda", requires_grad=True)
    w = mg.tensor(_inputs(5, seed=1, dtype="float64"), device="cuda", requires_grad=True)
    b = mg.tensor(_inputs(5, seed=2, dtype="float64"), device="cuda", requires_grad=True)
    mg.gradcheck(lambda *t: F.layer_norm(t[0], 5, t[1], t[2]), (x, w, b))
    mg.gradgradcheck(lambda *t: F.layer_norm(t[0], 5, t[1], t[2]), (x, w, b))


def test_fused_dropout_draws_the_plain_paths_mask():
    def compute():
        mg.manual_seed(4)
        return [F.dropout(mg.ones(50, 40, device="cuda"), 0.3)]

    plain, fused_values = _both_paths(compute)
    np.testing.assert_array_equal(fused_values[0], plain[0])


def test_the_fused_path_takes_fewer_launches(stand_in):
    x = mg.tensor(_inputs(64, 32), device="cuda", requires_grad=True)
    w, b = mg.ones(32, device="cuda", requires_grad=True), mg.zeros(32, device="cuda",
                                                                     requires_grad=True)
    counts = []
    for on in (False, True):
        use_fused_kernels(on)
        stand_in.reset()
        F.layer_norm(x, 32, w, b).sum().backward()
        F.softmax(x, mask=mg.zeros(32, dtype=bool, device="cuda"))
        counts.append(stand_in.launch_count)
    use_fused_kernels(False)
    assert counts[1] <= counts[0] - 12


def _mask(*shape, seed=5):
    mask = np.random.default_rng(seed).random(shape) < 0.4
    mask[..., 0, :] = True  # a fully masked row
    return mask


FUSED_OPS = {  # name -> (function of tensors, input shapes), float64 inputs
    "softmax": (lambda x: F.softmax(x, mask=mg.tensor(_mask(3, 4), device=x.device)), [(2, 3, 4)]),
    "log_softmax": (lambda x: F.log_softmax(x), [(3, 5)]),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, 4, w, b), [(3, 4), (4,), (4,)]),
    "layer_norm_plain": (lambda x: F.layer_norm(x, (2, 3)), [(2, 2, 3)]),
    "attention": (lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, mask=mg.tensor(_mask(3, 4), device=q.device)), [(2, 3, 5), (2, 4, 5), (2, 4, 2)]),
    "relu": (lambda x: (x * 3).relu(), [(4, 5)]),
    "cross_entropy": (lambda x: F.cross_entropy(
        x, mg.tensor([1, 0, 2, 2], device=x.device), ignore_index=0, label_smoothing=0.2),
        [(4, 3)]),
}


@pytest.mark.parametrize("name", FUSED_OPS)
def test_fused_ops_match_the_cpu_and_pass_gradcheck_and_gradgradcheck(name, fused):
    function, shapes = FUSED_OPS[name]
    arrays = [_inputs(*shape, seed=i, dtype="float64") for i, shape in enumerate(shapes)]
    cpu = function(*[mg.tensor(a) for a in arrays]).numpy()
    inputs = [mg.tensor(a, device="cuda", requires_grad=True) for a in arrays]
    np.testing.assert_allclose(function(*inputs).numpy(), cpu, rtol=1e-10, atol=1e-12)
    mg.gradcheck(function, inputs)
    if name != "relu":  # relu's second derivative is 0 almost everywhere, nothing to check
        mg.gradgradcheck(function, inputs)


def test_fused_dropout_gradients_use_the_forwards_mask(fused):
    mg.manual_seed(2)
    x = mg.ones(20, 30, dtype="float64", device="cuda", requires_grad=True)
    out = F.dropout(x, 0.4)
    (out * 2).sum().backward(retain_graph=True)
    np.testing.assert_array_equal(x.grad.numpy(), 2 * out.numpy())
    (g,) = mg.grad((out * out).sum(), [x], create_graph=True)  # recorded: the mask as a tensor
    np.testing.assert_allclose(g.numpy(), 2 * out.numpy() * out.numpy())


@pytest.mark.parametrize("dropout_p", [0.0, 0.3])
def test_fused_attention_on_split_heads_copies_each_operand_once(dropout_p, fused, stand_in):
    """q, k, v and the upstream gradient as the heads' strided views (batch, heads, len, d_head)
    of (batch, len, heads, d_head) arrays: each is copied once, into the layout its products
    take as it is, and no product copies an operand (CuPy's matmul would); the values and
    gradients are the CPU's."""
    batch, length, heads, d_head = 2, 5, 3, 4
    arrays = [_inputs(batch, length, heads * d_head, seed=i, dtype="float64") for i in range(4)]
    mask = np.triu(np.ones((length, length), dtype=bool), 1)

    def run(device):
        mg.manual_seed(3)
        q, k, v, upstream = [mg.tensor(a, device=device, requires_grad=i < 3)
                             for i, a in enumerate(arrays)]

        def heads_of(x):
            return x.reshape(batch, length, heads, d_head).transpose(0, 2, 1, 3)

        causal = mg.tensor(mask, device=device)
        stand_in.reset()
        out = F.scaled_dot_product_attention(heads_of(q), heads_of(k), heads_of(v), mask=causal,
                                             dropout_p=dropout_p, training=True)
        merged = out.transpose(0, 2, 1, 3).reshape(batch, length, heads * d_head)
        (merged * upstream).sum().backward()
        return [t.numpy() for t in (merged, q.grad, k.grad, v.grad)]

    if dropout_p:  # the stand-in's draws are not the CPU's: compared with themselves
        assert all(np.array_equal(a, b) for a, b in zip(run("cuda"), run("cuda")))
    else:
        for got, want in zip(run("cuda"), run("cpu")):
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    run("cuda")
    assert stand_in.launches["matmul (inside)"] == 0
    assert stand_in.launches["ascontiguousarray"] == 4  # q, k, v, the upstream gradient
