"""The kernel sets of minigrad/backend/kernels.py: one declared interface (`Kernels`) that
the CPU's, the plain CUDA path's and the fused path's sets implement, and each fused op's two
backwards, on arrays (`backward_arrays`, not recorded) and in Tensor ops (`backward`,
recorded), giving the same gradients."""

import inspect

import numpy as np
import pytest

import minigrad as mg
from minigrad.backend import get_backend, use_fused_kernels
from minigrad.backend.cupy_fused import FusedKernels
from minigrad.backend.kernels import ArrayKernels, CpuKernels, Kernels
from minigrad.nn import functional as F

INTERFACE = sorted(name for name, member in vars(Kernels).items()
                   if inspect.isfunction(member) and not name.startswith("_"))


@pytest.mark.parametrize("kernels", [ArrayKernels, CpuKernels, FusedKernels])
def test_every_kernel_set_implements_the_declared_interface(kernels):
    for name in INTERFACE:
        assert getattr(kernels, name) is not getattr(Kernels, name), name  # implemented
        assert list(inspect.signature(getattr(kernels, name)).parameters) == \
            list(inspect.signature(getattr(Kernels, name)).parameters), name
    assert not {name for name in vars(kernels) if not name.startswith("_") and callable(
        vars(kernels)[name])} - set(INTERFACE)  # no method outside the interface


@pytest.mark.gpu
def test_each_backends_kernels_are_a_kernel_set():
    for on in (False, True):
        use_fused_kernels(on)
        try:
            assert isinstance(get_backend("cuda").kernels, Kernels)
        finally:
            use_fused_kernels(False)
    assert isinstance(get_backend("cpu").kernels, Kernels)


@pytest.mark.gpu
def test_each_backend_has_its_kernel_set():
    assert type(get_backend("cpu").kernels) is CpuKernels
    assert type(get_backend("cuda").kernels) is ArrayKernels  # the fused path is off
    use_fused_kernels(True)
    try:
        assert type(get_backend("cuda").kernels) is FusedKernels
    finally:
        use_fused_kernels(False)


def _attention(q, k, v):
    mask = np.zeros((2, 1, 5, 5), bool)
    mask[0, :, :, 3:] = True
    mask[1, :, 2] = True  # a fully masked row
    mg.manual_seed(3)
    return F.scaled_dot_product_attention(q, k, v, mask=mg.tensor(mask, device=q.device),
                                          dropout_p=0.3, training=True)


CASES = {
    "layer_norm": (lambda x, w, b: F.layer_norm(x, 6, w, b), [(2, 5, 6), (6,), (6,)]),
    "softmax": (lambda x: F.softmax(x, -1), [(2, 5, 6)]),
    "attention": (_attention, [(2, 3, 5, 4), (2, 3, 5, 4), (2, 3, 5, 4)]),
    "dropout": (lambda x: (mg.manual_seed(5), F.dropout(x, 0.4))[1], [(4, 6)]),
    "relu": (lambda x: x.relu(), [(4, 6)]),
}


@pytest.mark.parametrize("device, fused", [
    ("cpu", False), pytest.param("cuda", False, marks=pytest.mark.gpu),
    pytest.param("cuda", True, marks=pytest.mark.gpu)], ids=["cpu", "cuda", "cuda-fused"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_backward_on_arrays_is_the_recorded_backward(case, device, fused):
    """Float64, the same forward: the gradients of backward() (on arrays) and of
    backward(create_graph=True) (in Tensor ops) agree to rounding."""
    function, shapes = CASES[case]
    rng = np.random.default_rng(0)
    use_fused_kernels(fused)
    try:
        inputs = [mg.tensor(rng.standard_normal(shape), device=device, requires_grad=True)
                  for shape in shapes]
        out = function(*inputs)
        upstream = mg.tensor(rng.standard_normal(out.shape), device=device)
        loss = (out * upstream).sum()
        on_arrays = mg.grad(loss, inputs, retain_graph=True)
        recorded = mg.grad(loss, inputs, create_graph=True)
    finally:
        use_fused_kernels(False)
    for a, b in zip(on_arrays, recorded):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)
