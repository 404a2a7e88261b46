"""What the CUDA backend must get right where CuPy differs from NumPy: each test here failed on
the CuPy stand-in before its fix. Also `cuda:N`, and one DeviceError line for each way a
'cuda' device can be missing."""

import sys
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
from minigrad.backend import get_backend, use_cupy
from minigrad.errors import DeviceError
from minigrad.nn import functional as F
from minigrad.testing import fake_cupy

pytestmark = pytest.mark.gpu  # the cuda suite (`pytest -m gpu`): real CuPy on a GPU

REPO = Path(__file__).resolve().parents[2]


def test_backward_fills_grads_on_cuda():
    """The engine read `flags.writeable`, which CuPy's flags lack: every backward() failed."""
    w = mg.randn(3, 2, device="cuda", requires_grad=True)
    x = mg.randn(4, 3, device="cuda")
    (x @ w).relu().sum().backward()
    assert w.grad.device == "cuda:0" and w.grad.shape == (3, 2)
    expected = x.numpy().T @ ((x.numpy() @ w.numpy()) > 0).astype(np.float32)
    np.testing.assert_allclose(w.grad.numpy(), expected, rtol=1e-5)


def test_numpy_scalars_mix_with_cuda_tensors_as_on_the_cpu():
    for device in ("cpu", "cuda"):
        x = mg.ones(2, device=device)
        assert (x * np.float32(3)).dtype == np.float32
        assert (x + np.float64(1)).dtype == np.float64  # NumPy 2: NumPy scalars are strong
        np.testing.assert_array_equal((np.float32(2) * x).numpy(), [2, 2])


@pytest.mark.parametrize("index", [[3], np.array([0, -4]), "tensor"])
def test_an_index_out_of_range_raises_on_cuda(index):
    """A GPU gather wraps an out-of-range index around; minigrad checks it first."""
    x = mg.arange(3, device="cuda").astype("float32")
    if isinstance(index, str):
        index = mg.tensor([5], device="cuda")
    with pytest.raises(IndexError, match=r"getitem: index values in .* axis 0 of size 3"):
        x[index]
    np.testing.assert_array_equal(x[[2, -1]].numpy(), [2, 2])


def test_ids_out_of_range_are_caught_on_cuda_under_detect_anomaly():
    weight = mg.randn(4, 2, device="cuda", requires_grad=True)
    ids = mg.tensor([[1, 4]], device="cuda")
    with mg.detect_anomaly(), pytest.raises(IndexError, match=r"embedding: .*\[0, 4\)"):
        F.embedding(ids, weight)
    logits = mg.randn(1, 2, 4, device="cuda")
    with mg.detect_anomaly(), pytest.raises(IndexError, match=r"cross_entropy: .*\[0, 4\)"):
        F.cross_entropy(logits, ids, ignore_index=0)


def test_cuda_n_computes_on_gpu_n():
    """Creation, forward, backward, the optimizer and the generator of cuda:1 run on GPU 1,
    interleaved with work on cuda:0 (the stand-in refuses an op on another GPU's array)."""
    if get_backend("cuda").xp.cuda.runtime.getDeviceCount() < 2:  # a machine with one GPU
        pytest.skip("needs two GPUs (the CuPy stand-in has two)")
    mg.manual_seed(0)
    layers = {device: mg.nn.Linear(3, 2).to(device) for device in ("cuda:0", "cuda:1")}
    optimizers = {device: mg.optim.Adam(layer.parameters()) for device, layer in layers.items()}
    for _ in range(2):
        for device, layer in layers.items():
            x = mg.randn(5, 3, device=device)
            loss = F.dropout(layer(x), 0.5).sum()
            loss.backward()
            mg.optim.clip_grad_norm_(layer.parameters(), 1.0)
            optimizers[device].step()
            optimizers[device].zero_grad()
            assert layer.weight.data.device.id == int(device[-1])
            assert loss.data.device.id == int(device[-1])
    moved = mg.ones(2, device="cuda:1").to("cuda:0")
    assert moved.device == "cuda:0" and moved.data.device.id == 0
    state = mg.get_rng_state()
    assert set(state) >= {"cpu", "cuda:0", "cuda:1"}
    expected = mg.randn(3, device="cuda:1").numpy()
    mg.set_rng_state(state)
    np.testing.assert_array_equal(mg.randn(3, device="cuda:1").numpy(), expected)


def test_seeding_and_rng_state_start_no_xorwow_generator(stand_in):
    """XORWOW initialises a state per thread of the whole GPU at every restart (each seed and
    each get_rng_state); Philox4x3210 is counter-based and cheap to start."""
    mg.manual_seed(1)
    mg.randn(2, device="cuda")
    mg.get_rng_state()
    assert stand_in.bit_generators["XORWOW"] == 0
    assert stand_in.bit_generators["Philox4x3210"] >= 1


def test_a_seed_draws_the_same_numbers_on_any_gpu(monkeypatch):
    """CuPy's Philox4x3210 has 8 · 256 · SM-count states by default, and its draws depend on
    them; the generator's fixed count of states makes a seed's draws the GPU's own no more."""
    draws = []
    for multiprocessors in (132, 78):
        monkeypatch.setattr(fake_cupy._Devices, "multiprocessors", multiprocessors)
        with fake_cupy.installed(devices=1):
            mg.manual_seed(5)
            draws.append(mg.randn(4, device="cuda").numpy())
            default = fake_cupy.cupy.random.default_rng(fake_cupy.cupy.random.Philox4x3210(5))
            draws.append(default.random(4).get())
    np.testing.assert_array_equal(draws[0], draws[2])
    assert not np.array_equal(draws[1], draws[3])  # CuPy's default size: the GPU's own


@pytest.fixture
def fresh_cuda(monkeypatch):
    """The CuPy stand-in with two devices (on a GPU machine too), its 'cuda' backends made
    anew: each test meets CuPy for the first time."""
    with fake_cupy.installed(devices=2):
        yield monkeypatch
        monkeypatch.undo()


def test_cuda_without_cupy_says_how_to_get_it(fresh_cuda):
    use_cupy(None)
    fresh_cuda.setitem(sys.modules, "cupy", None)  # import cupy raises ImportError
    with pytest.raises(DeviceError, match=r"needs CuPy 14: pip install -e '\.\[gpu-cuda12\]' "
                       r"\(CUDA 12\) or pip install -e '\.\[gpu-cuda13\]'") as caught:
        mg.zeros(2, device="cuda")
    assert "\n" not in str(caught.value)


def test_cuda_without_a_gpu_is_one_line(fresh_cuda):
    fresh_cuda.setattr(fake_cupy._Devices, "count", 0)
    with pytest.raises(DeviceError, match=r"no usable GPU \(cudaErrorNoDevice.*use device='cpu'"):
        mg.zeros(2, device="cuda")


def test_cupy_older_than_14_is_refused(fresh_cuda):
    fresh_cuda.setattr(fake_cupy.cupy, "__version__", "13.6.0")
    with pytest.raises(DeviceError,
                       match=r"needs CuPy >= 14, found CuPy 13.6.0.*gpu-cuda12.*gpu-cuda13"):
        mg.zeros(2, device="cuda")


def test_a_gpu_beyond_those_present_is_refused(fresh_cuda):
    with pytest.raises(DeviceError, match=r"'cuda:2' does not exist: this machine has 2 GPU"):
        mg.zeros(2, device="cuda:2")
    assert get_backend("cuda:1").device == "cuda:1"


def test_the_gpu_script_calls_python3():
    """GPU images often have only `python3`."""
    script = (REPO / "scripts" / "gpu_check.sh").read_text()
    commands = [line for line in script.splitlines() if not line.lstrip().startswith("#")]
    assert not [line for line in commands if "python " in line.replace("python3 ", "")]
