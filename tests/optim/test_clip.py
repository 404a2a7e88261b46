"""Gradient clipping: the norm returned, the scaling, and no change below the threshold."""

import numpy as np
import pytest

import minigrad as mg
from minigrad.optim import clip_grad_norm_, clip_grad_value_


def params_with_grads(*grads, dtype="float32"):
    params = []
    for grad in grads:
        param = mg.tensor(np.zeros(np.shape(grad)), requires_grad=True, dtype=dtype)
        param.grad = mg.tensor(np.array(grad, dtype=dtype))
        params.append(param)
    return params


def test_returns_the_total_norm_and_scales_to_max_norm():
    params = params_with_grads([3.0, 0.0], [[4.0]], dtype="float64")  # total norm 5
    norm = clip_grad_norm_(params, max_norm=1.0)
    assert isinstance(norm, mg.Tensor) and norm.shape == () and norm.item() == 5.0
    scale = 1.0 / (5.0 + 1e-6)
    np.testing.assert_allclose(params[0].grad.numpy(), [3.0 * scale, 0.0], rtol=1e-15)
    np.testing.assert_allclose(params[1].grad.numpy(), [[4.0 * scale]], rtol=1e-15)
    total = np.sqrt(sum((p.grad.numpy() ** 2).sum() for p in params))
    assert abs(total - 1.0) < 1e-6


def test_no_change_below_max_norm():
    params = params_with_grads([0.3, -0.4])
    before = params[0].grad
    assert abs(clip_grad_norm_(params, max_norm=1.0).item() - 0.5) < 1e-7
    assert params[0].grad is before


def test_norm_of_a_large_float32_gradient_matches_float64():
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal((300, 200)), rng.standard_normal(1000)]
    params = params_with_grads(*grads)
    norm = clip_grad_norm_(params, max_norm=1e9).item()
    expected = np.sqrt(sum((g.astype(np.float32).astype(np.float64) ** 2).sum() for g in grads))
    assert abs(norm - expected) / expected < 1e-5
    assert params[0].grad.dtype == np.float32


def test_parameters_without_gradients_and_shared_gradients():
    """Parameters without .grad are ignored; two parameters holding the same gradient object
    would each be scaled once; the engine gives each leaf its own gradient array."""
    a = mg.tensor(np.zeros(2), requires_grad=True)
    b = mg.tensor(np.zeros(2), requires_grad=True)
    unused = mg.tensor(np.zeros(2), requires_grad=True)
    ((a + b) * mg.tensor(np.array([3.0, 4.0]))).sum().backward()
    assert a.grad is not b.grad
    norm = clip_grad_norm_([a, b, unused], max_norm=1.0).item()
    assert abs(norm - np.sqrt(50.0)) < 1e-12
    expected = np.array([3.0, 4.0]) / (np.sqrt(50.0) + 1e-6)
    np.testing.assert_allclose(a.grad.numpy(), expected, rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), expected, rtol=1e-12)
    assert unused.grad is None
    assert clip_grad_norm_([unused], 1.0).item() == 0.0


def test_clip_grad_value():
    params = params_with_grads([-3.0, 0.5, 2.0])
    clip_grad_value_(params, 1.0)
    np.testing.assert_array_equal(params[0].grad.numpy(), np.array([-1.0, 0.5, 1.0], np.float32))
    assert params[0].grad.dtype == np.float32


@pytest.mark.gpu
def test_clipping_on_cuda_matches_the_cpu_and_reads_nothing(stand_in):
    rng = np.random.default_rng(1)
    grads = [rng.standard_normal((30, 20)), rng.standard_normal(7), rng.standard_normal((2, 3))]
    for max_norm in (1.0, 1e3):  # clipped, and left as it is
        on_cpu = params_with_grads(*grads)
        on_gpu = [p.to("cuda").detach().requires_grad_() for p in on_cpu]
        for cpu_param, gpu_param in zip(on_cpu, on_gpu):
            gpu_param.grad = cpu_param.grad.to("cuda")
        expected = clip_grad_norm_(on_cpu, max_norm).item()
        stand_in.reset()
        with stand_in.forbid_synchronize():
            norm = clip_grad_norm_(on_gpu, max_norm)
        assert stand_in.launch_count <= 7 + len(grads)  # CuPy copies each of <= 8 arrays into
        # the concatenation, nothing else per parameter
        assert norm.device == "cuda:0" and abs(norm.item() - expected) < 1e-4
        for cpu_param, gpu_param in zip(on_cpu, on_gpu):
            assert gpu_param.grad.dtype == np.float32 and gpu_param.grad.shape == cpu_param.shape
            np.testing.assert_allclose(gpu_param.grad.numpy(), cpu_param.grad.numpy(),
                                       rtol=1e-5, atol=1e-7)


def test_a_non_finite_gradient_gives_a_non_finite_norm(device):
    params = [p.to(device).detach().requires_grad_() for p in params_with_grads([1.0, 2.0])]
    params[0].grad = mg.tensor([np.nan, 1.0], device=device)
    assert np.isnan(clip_grad_norm_(params, 1.0).item())
