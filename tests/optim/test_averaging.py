"""ExponentialMovingAverage: the averages follow their formula step by step, `applied()` swaps
them in and always gives the weights back, a checkpoint continues the average exactly, and
a checkpoint that does not fit is refused with one line naming what differs."""

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.errors import CheckpointError, ConfigError
from minigrad.optim import SGD, ExponentialMovingAverage


def small_model(seed=0):
    mg.manual_seed(seed)
    return nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))


def train_steps(model, optimizer, average, steps, first=0):
    """`steps` SGD steps on fixed random batches (batch i from seed i), each followed by an
    update of the average."""
    for step in range(first, first + steps):
        rng = np.random.default_rng(step)
        x = mg.tensor(rng.standard_normal((5, 3)).astype(np.float32))
        optimizer.zero_grad()
        (model(x) ** 2).mean().backward()
        optimizer.step()
        average.update()


def test_each_update_moves_the_average_by_its_decay_of_the_step():
    model = small_model()
    optimizer = SGD(model.parameters(), lr=0.1)
    average = ExponentialMovingAverage(model.named_parameters(), decay=0.9)
    expected = {name: p.numpy().astype(np.float64) for name, p in model.named_parameters()}
    for t in range(1, 101):
        train_steps(model, optimizer, average, 1, first=t)
        decay = min(0.9, (1 + t) / (10 + t))  # fast at first, then the decay given
        for name, p in model.named_parameters():
            expected[name] = decay * expected[name] + (1 - decay) * p.numpy()
    assert average.updates == 100 and average.current_decay() == 0.9
    for name, p in model.named_parameters():
        np.testing.assert_allclose(average.averages[name], expected[name], rtol=1e-5,
                                   atol=1e-6)
        assert average.averages[name].dtype == np.float32
        assert not np.allclose(average.averages[name], p.numpy())  # it lags the weights


def test_applied_swaps_the_averages_in_and_gives_the_weights_back_even_on_an_error():
    model = small_model()
    optimizer = SGD(model.parameters(), lr=0.5)
    average = ExponentialMovingAverage(model.named_parameters(), decay=0.99)
    train_steps(model, optimizer, average, 5)
    trained = {name: p.numpy().copy() for name, p in model.named_parameters()}
    arrays = {name: p.data for name, p in model.named_parameters()}
    with average.applied():
        for name, p in model.named_parameters():
            assert np.array_equal(p.numpy(), average.averages[name])
    with pytest.raises(RuntimeError), average.applied():
        raise RuntimeError("an evaluation that fails")
    for name, p in model.named_parameters():
        assert np.array_equal(p.numpy(), trained[name])
        assert p.data is arrays[name]  # the same arrays: modules and optimizers still hold them


def test_a_checkpointed_average_continues_exactly(tmp_path):
    straight = small_model()
    straight_average = ExponentialMovingAverage(straight.named_parameters(), decay=0.95)
    train_steps(straight, SGD(straight.parameters(), lr=0.1), straight_average, 12)

    first = small_model()
    optimizer = SGD(first.parameters(), lr=0.1)
    average = ExponentialMovingAverage(first.named_parameters(), decay=0.95)
    train_steps(first, optimizer, average, 5)
    mg.save({"model": first.state_dict(), "average": average.state_dict()}, tmp_path / "a.npz")

    state = mg.load(tmp_path / "a.npz")
    resumed = small_model(seed=7)  # other weights, replaced by the checkpoint's
    resumed.load_state_dict(state["model"])
    resumed_average = ExponentialMovingAverage(resumed.named_parameters(), decay=0.5)
    resumed_average.load_state_dict(state["average"])
    assert resumed_average.decay == 0.95 and resumed_average.updates == 5
    train_steps(resumed, SGD(resumed.parameters(), lr=0.1), resumed_average, 7, first=5)
    for name, value in straight_average.averages.items():
        assert np.array_equal(resumed_average.averages[name], value)


def test_tied_parameters_are_averaged_once():
    shared = nn.Embedding(5, 3)
    head = nn.Linear(3, 5, bias=False, weight=shared.weight)
    tied = nn.Sequential(shared, head)
    average = ExponentialMovingAverage(tied.named_parameters(), decay=0.9)
    assert list(average.averages) == ["0.weight"]


@pytest.mark.parametrize("decay", [0, 1, 1.5, -0.1])
def test_a_decay_outside_zero_one_is_refused(decay):
    with pytest.raises(ConfigError, match=f"decay must be in \\(0, 1\\), got {decay}"):
        ExponentialMovingAverage(small_model().named_parameters(), decay=decay)


def test_an_average_of_other_parameters_is_refused_naming_them():
    average = ExponentialMovingAverage(small_model().named_parameters(), decay=0.9)
    state = average.state_dict()
    wider = nn.Sequential(nn.Linear(3, 6), nn.ReLU(), nn.Linear(6, 2), nn.Linear(2, 2))
    other = ExponentialMovingAverage(wider.named_parameters(), decay=0.9)
    kept = {name: array.copy() for name, array in other.averages.items()}
    with pytest.raises(CheckpointError) as raised:
        other.load_state_dict(state)
    message = str(raised.value)
    assert "\n" not in message
    assert "missing 3.bias, 3.weight" in message
    assert "0.weight: checkpoint (4, 3), model (6, 3)" in message
    assert all(np.array_equal(other.averages[n], a) for n, a in kept.items())  # unchanged


def test_a_state_that_is_not_an_averages_is_refused_in_one_line():
    average = ExponentialMovingAverage(small_model().named_parameters(), decay=0.9)
    with pytest.raises(CheckpointError, match="expected a dict with 'decay', 'updates' and "
                                              "'averages' .*, got \\['decay'\\]"):
        average.load_state_dict({"decay": 0.9})


@pytest.mark.gpu
@pytest.mark.parametrize("fused", [False, True])
def test_on_a_gpu_the_average_is_one_flat_array_and_the_cpus_bit_for_bit(fused, stand_in,
                                                                          tmp_path):
    """On 'cuda' (the CuPy stand-in) the averages of the optimizer's flat parameters are one
    flat array, moved by one update a step (one fused launch, or three), equal bit for bit
    to the CPU's per-parameter averages after some steps and after a resume."""
    from minigrad.backend import use_fused_kernels
    from minigrad.optim import Adam

    def run(device, steps, first=0, state=None):
        model = small_model().to(device)
        optimizer = Adam(model.parameters(), lr=0.05)
        average = ExponentialMovingAverage(model.named_parameters(), decay=0.9)
        if state is not None:
            model.load_state_dict(state["model"])
            optimizer.load_state_dict(state["optimizer"])
            average.load_state_dict(state["average"])
        for step in range(first, first + steps):
            x = mg.tensor(np.random.default_rng(step).standard_normal((5, 3)).astype(np.float32),
                          device=device)
            optimizer.zero_grad()
            (model(x) ** 2).mean().backward()
            optimizer.step()
            stand_in.reset()
            average.update()
        return model, optimizer, average

    use_fused_kernels(fused)
    try:
        _, _, cpu = run("cpu", 9)
        model, optimizer, gpu = run("cuda", 5)
        assert stand_in.launch_count == (1 if fused else 3)
        assert len(gpu._flat) == 1 and all(view.base is not None for view in gpu._flat[0].views)
        mg.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                 "average": gpu.state_dict()}, tmp_path / "gpu.npz")
        _, _, resumed = run("cuda", 4, first=5, state=mg.load(tmp_path / "gpu.npz"))
    finally:
        use_fused_kernels(False)
    for name, value in cpu.averages.items():
        assert np.array_equal(resumed.averages[name].get(), value), name
