"""Backend conformance on every device (`device` fixture: cpu, and cuda on a GPU or on the CuPy
stand-in), and the CuPy backend's own parts."""

import json

import numpy as np
import pytest

import minigrad as mg
from minigrad.backend import get_backend, normalize_device
from minigrad.backend.numpy_backend import NumpyBackend

# ----- creation and dtypes --------------------------------------------------------------------

def test_creation_functions(device):
    cases = {
        "zeros": (mg.zeros(2, 3, device=device), np.zeros((2, 3))),
        "ones": (mg.ones((2, 3), device=device), np.ones((2, 3))),
        "full": (mg.full((2,), 1.5, device=device), np.full(2, 1.5)),
        "arange": (mg.arange(1, 7, 2, device=device), np.arange(1, 7, 2)),
    }
    for name, (tensor, expected) in cases.items():
        assert tensor.device == normalize_device(device), name
        np.testing.assert_array_equal(tensor.numpy(), expected, err_msg=name)
    assert mg.zeros(2, device=device).dtype == np.float32
    assert mg.arange(3, device=device).dtype == np.int64
    assert mg.arange(0.0, 1.0, 0.5, device=device).dtype == np.float32
    x = mg.randn(3, 4, device=device)
    assert x.shape == (3, 4) and x.dtype == np.float32
    u = mg.rand(1000, device=device).numpy()
    assert (u >= 0).all() and (u < 1).all()
    like = mg.zeros_like(mg.ones(2, 2, dtype="float64", device=device))
    assert like.dtype == np.float64 and like.device == x.device
    assert mg.ones_like(x).shape == (3, 4)


def test_tril_and_triu(device):
    x = mg.ones(3, 3, device=device)
    np.testing.assert_array_equal(mg.tril(x).numpy(), np.tril(np.ones((3, 3))))
    np.testing.assert_array_equal(mg.triu(x, 1).numpy(), np.triu(np.ones((3, 3)), 1))


def test_dtype_rules(device):
    x32 = mg.ones(2, device=device)
    assert (x32 * 2.0).dtype == np.float32  # Python scalars are weak (NEP 50)
    assert (2 + x32).dtype == np.float32
    assert (x32 + mg.ones(2, dtype="float64", device=device)).dtype == np.float64
    assert mg.tensor([1, 2], device=device).dtype == np.int64
    assert mg.tensor([1.0, 2.0], device=device).dtype == np.float32
    assert mg.tensor([True], device=device).dtype == np.bool_
    assert mg.tensor(np.ones(2, dtype=np.float64), device=device).dtype == np.float64
    assert mg.tensor(np.ones(2, dtype=np.int32), device=device).dtype == np.int32
    assert (mg.tensor([1, 2], device=device) * 1.5).dtype == np.float64
    assert x32.astype("float16").dtype == np.float16


def test_to_and_from_the_host(device):
    host = np.arange(6.0).reshape(2, 3)
    x = mg.tensor(host, device=device)
    copy = x.numpy()
    copy[0, 0] = 100.0
    host[0, 1] = 100.0
    np.testing.assert_array_equal(x.numpy(), np.arange(6.0).reshape(2, 3))
    assert x.to("cpu").device == "cpu"
    assert mg.tensor([2.5], device=device).item() == 2.5
    assert x.tolist() == np.arange(6.0).reshape(2, 3).tolist()


def test_grads_live_on_the_tensors_device(device):
    x = mg.randn(3, device=device, requires_grad=True)
    (x * x).sum().backward()
    assert x.grad.device == x.device


# ----- scatter-add ----------------------------------------------------------------------------

def _scatter_inputs():
    rng = np.random.default_rng(0)
    indices = rng.integers(0, 5, 200)
    values = rng.standard_normal((200, 3)).astype(np.float32)
    return indices, values


def test_scatter_add_sums_repeated_indices_deterministically(device):
    backend = get_backend(device)
    indices, values = _scatter_inputs()
    runs = [backend.to_host(backend.scatter_add(backend.from_host(indices),
                                                backend.from_host(values), 6))
            for _ in range(3)]
    expected = np.zeros((6, 3))
    np.add.at(expected, indices, values.astype(np.float64))
    np.testing.assert_allclose(runs[0], expected, rtol=1e-5, atol=1e-5)
    for run in runs[1:]:
        assert run.tobytes() == runs[0].tobytes()


def _reinterleave(indices, rng):
    """A permutation of positions that shuffles the groups of equal indices among each other
    but keeps each group's positions in their original order."""
    order = rng.permutation(len(indices))
    for value in np.unique(indices):
        order[np.flatnonzero(indices[order] == value)] = np.flatnonzero(indices == value)
    return order


def test_cpu_scatter_add_depends_only_on_each_index_own_values_in_order():
    """The sorted segment sum adds each index's values in their order, whatever other indices
    sit between them (the GPU's one-hot product makes no such promise)."""
    backend = get_backend("cpu")
    indices, values = _scatter_inputs()
    order = _reinterleave(indices, np.random.default_rng(1))
    assert not np.array_equal(order, np.arange(len(order)))
    shuffled = backend.scatter_add(indices[order], values[order], 6)
    assert shuffled.tobytes() == backend.scatter_add(indices, values, 6).tobytes()


# ----- random generators ----------------------------------------------------------------------

def test_manual_seed_repeats_the_draws(device):
    mg.manual_seed(123)
    first = (mg.randn(5, device=device).numpy(), mg.rand(5, device=device).numpy())
    mg.manual_seed(123)
    second = (mg.randn(5, device=device).numpy(), mg.rand(5, device=device).numpy())
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    mg.manual_seed(124)
    assert not np.array_equal(mg.randn(5, device=device).numpy(), first[0])


def test_rng_state_round_trips_through_json(device):
    mg.manual_seed(7)
    mg.randn(3, device=device)
    state = json.loads(json.dumps(mg.get_rng_state()))
    expected = mg.randn(4, device=device).numpy()
    mg.randn(10, device=device)
    mg.set_rng_state(state)
    np.testing.assert_array_equal(mg.randn(4, device=device).numpy(), expected)


def test_dropout_repeats_with_the_seed(device):
    x = mg.ones(50, device=device)
    mg.manual_seed(3)
    first = mg.nn.functional.dropout(x, 0.5).numpy()
    mg.manual_seed(3)
    np.testing.assert_array_equal(mg.nn.functional.dropout(x, 0.5).numpy(), first)


@pytest.mark.parametrize("device_name", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_bernoulli_draws_true_with_the_probability_and_repeats_from_the_state(device_name):
    generator = get_backend(device_name).generator
    generator.seed(11)
    for probability in (0.1, 0.5, 0.9):
        draws = generator.bernoulli((1001, 999), probability)  # an odd count of draws
        assert draws.shape == (1001, 999) and draws.dtype == bool
        assert abs(float(draws.mean()) - probability) < 0.003  # 6 standard deviations
    assert not bool(generator.bernoulli((5,), 0.0).any())
    assert bool(generator.bernoulli((2, 3), 1.0).all())
    state = json.loads(json.dumps(generator.state()))
    to_host = get_backend(device_name).to_host
    expected = to_host(generator.bernoulli((7, 3), 0.3))
    generator.bernoulli((9,), 0.5)
    generator.set_state(state)
    np.testing.assert_array_equal(to_host(generator.bernoulli((7, 3), 0.3)), expected)


# ----- the CuPy backend's own parts ----------------------------------------------------------

def test_cuda_scatter_add_matches_the_cpu(device):
    backend = get_backend(device)
    indices, values = _scatter_inputs()
    ours = backend.to_host(backend.scatter_add(backend.from_host(indices),
                                               backend.from_host(values), 6))
    reference = NumpyBackend().scatter_add(indices, values, 6)
    np.testing.assert_allclose(ours, reference, rtol=1e-5, atol=1e-5)
    assert ours.dtype == values.dtype and ours.shape == (6, 3)
    nothing = backend.scatter_add(backend.from_host(np.zeros(0, dtype=np.int64)),
                                  backend.from_host(np.zeros((0, 2))), 3)
    np.testing.assert_array_equal(backend.to_host(nothing), np.zeros((3, 2)))


@pytest.mark.gpu
def test_cuda_scatter_add_is_linear_in_the_tokens(stand_in):
    """The GPU's scatter-add makes no (vocabulary x tokens) array: a 32k vocabulary at 16k
    tokens would need 2 GB for the one-hot matrix."""
    backend = get_backend("cuda")
    indices = backend.from_host(np.arange(0, 64_000, 4))  # 16k tokens
    values = backend.from_host(np.ones((16_000, 1), np.float32))
    out = backend.scatter_add(indices, values, 64_000)
    assert stand_in.largest_array <= 2 * 64_000
    assert float(out.sum()) == 16_000


def test_cuda_generator_state_round_trips(device):
    generator = get_backend(device).generator
    to_host = get_backend(device).to_host
    generator.seed(5)
    first = to_host(generator.normal((3,), np.float32))
    assert first.dtype == np.float32
    generator.seed(5)
    np.testing.assert_array_equal(to_host(generator.normal((3,), np.float32)), first)
    state = generator.state()
    expected = [to_host(a) for a in (generator.normal((2,), np.float64),
                                      generator.uniform((4,), np.float32),
                                      generator.permutation(6))]
    generator.uniform((9,), np.float64)
    generator.set_state(json.loads(json.dumps(state)))
    again = [to_host(a) for a in (generator.normal((2,), np.float64),
                                   generator.uniform((4,), np.float32),
                                   generator.permutation(6))]
    for a, b in zip(expected, again):
        np.testing.assert_array_equal(a, b)
    assert sorted(again[2].tolist()) == list(range(6))
    assert ((again[1] >= 0) & (again[1] < 1)).all()


@pytest.mark.gpu
def test_cuda_blockwise_updates_run_once_on_whole_arrays():
    backend = get_backend("cuda")
    seen = []

    def add_into(out, source):
        seen.append(out.shape)
        out += source

    out = backend.xp.zeros((3, 5), np.float32)
    backend.run_blockwise([(add_into, (out, backend.xp.ones((3, 5), np.float32))),
                           (add_into, (out[:1], backend.xp.ones((1, 5), np.float32)))])
    assert seen == [(3, 5), (1, 5)]
    np.testing.assert_array_equal(backend.to_host(out), [[2] * 5, [1] * 5, [1] * 5])
