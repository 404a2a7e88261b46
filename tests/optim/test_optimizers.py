"""SGD, Adam and AdamW: step by step against PyTorch (committed fixtures), against the formulas,
and through state_dict round trips."""

import json
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
from minigrad.errors import CheckpointError, ConfigError
from minigrad.optim import SGD, Adam, AdamW

FIXTURE = np.load(Path(__file__).parent.parent / "fixtures" / "optim.npz")
SHAPES = [tuple(shape) for shape in json.loads(str(FIXTURE["shapes"]))]
CASES = json.loads(str(FIXTURE["cases"]))
OPTIMIZERS = {"SGD": SGD, "Adam": Adam, "AdamW": AdamW}


def unflatten(flat):
    arrays, start = [], 0
    for shape in SHAPES:
        size = int(np.prod(shape))
        arrays.append(flat[start:start + size].reshape(shape))
        start += size
    return arrays


def build(case, device="cpu"):
    """The fixture's parameters (float64) and the case's optimizer over them."""
    params = [mg.tensor(array, requires_grad=True, device=device)
              for array in unflatten(FIXTURE["initial"])]
    options = dict(case["options"])
    if "betas" in options:
        options["betas"] = tuple(options["betas"])
    groups = [{**g, "params": [params[i] for i in g["params"]]}
              for g in case.get("groups", [{"params": list(range(len(params)))}])]
    return params, OPTIMIZERS[case["optimizer"]](groups, **options)


def set_grads(case, params, step):
    skip = {tuple(s) for s in case.get("skip", [])}
    for i, (param, grad) in enumerate(zip(params, unflatten(FIXTURE["grads"][step]))):
        param.grad = None if (step, i) in skip else mg.tensor(grad, device=param.device)


def flat(params):
    return np.concatenate([p.numpy().ravel() for p in params])


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_pytorch_step_by_step(name, device):
    case = CASES[name]
    params, optimizer = build(case, device)
    expected = FIXTURE[f"case/{name}"]
    for step in range(len(expected)):
        set_grads(case, params, step)
        optimizer.step()
        np.testing.assert_allclose(flat(params), expected[step], rtol=1e-10, atol=1e-12,
                                   err_msg=f"{name}, step {step + 1}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_state_dict_round_trip_continues_identically(name, tmp_path):
    """Train 2 steps, checkpoint through mg.save/mg.load, continue 3 steps in a fresh optimizer:
    bitwise the same as 5 steps straight."""
    case = CASES[name]
    params, optimizer = build(case)
    for step in range(2):
        set_grads(case, params, step)
        optimizer.step()
    mg.save({"params": [p.detach() for p in params], "optimizer": optimizer.state_dict()},
            tmp_path / "ckpt.npz")
    for step in range(2, 5):
        set_grads(case, params, step)
        optimizer.step()

    restored = mg.load(tmp_path / "ckpt.npz")
    params2, optimizer2 = build({**case, "options": {**case["options"], "lr": 123.0}})
    for param, saved in zip(params2, restored["params"]):
        param.data[...] = saved.data
    optimizer2.load_state_dict(restored["optimizer"])
    for step in range(2, 5):
        set_grads(case, params2, step)
        optimizer2.step()
    assert np.array_equal(flat(params2), flat(params))
    assert [g["lr"] for g in optimizer2.param_groups] == [g["lr"] for g in optimizer.param_groups]


def one_param(values, grad, dtype="float64"):
    param = mg.tensor(np.array(values, dtype=dtype), requires_grad=True)
    param.grad = mg.tensor(np.array(grad, dtype=dtype))
    return param


def test_sgd_momentum_formula():
    param = one_param([1.0, -2.0], [0.5, 0.25])
    optimizer = SGD([param], lr=0.1, momentum=0.9)
    optimizer.step()  # buffer = g
    np.testing.assert_allclose(param.numpy(), [1.0 - 0.05, -2.0 - 0.025])
    optimizer.step()  # buffer = 0.9 g + g
    np.testing.assert_allclose(param.numpy(), [1.0 - 0.05 * 2.9, -2.0 - 0.025 * 2.9])


def test_adam_first_step_moves_each_weight_by_lr():
    """After one step m̂ = g and v̂ = g², so the update is lr * g / (|g| + eps)."""
    param = one_param([1.0, 2.0, 3.0], [0.5, -4.0, 1e-3])
    Adam([param], lr=0.01, eps=1e-8).step()
    g = np.array([0.5, -4.0, 1e-3])
    np.testing.assert_allclose(param.numpy(), [1.0, 2.0, 3.0] - 0.01 * g / (np.abs(g) + 1e-8),
                               rtol=1e-14)


def test_adam_two_steps_formula():
    g1, g2, lr, (b1, b2), eps = np.array([0.3, -1.0]), np.array([-0.2, 0.5]), 0.1, (0.8, 0.9), 1e-6
    param = one_param([0.0, 0.0], g1)
    optimizer = Adam([param], lr=lr, betas=(b1, b2), eps=eps)
    optimizer.step()
    param.grad = mg.tensor(g2)
    optimizer.step()
    m1, v1 = (1 - b1) * g1, (1 - b2) * g1 ** 2
    m2, v2 = b1 * m1 + (1 - b1) * g2, b2 * v1 + (1 - b2) * g2 ** 2
    p1 = -lr / (1 - b1) * m1 / (np.sqrt(v1) / np.sqrt(1 - b2) + eps)
    p2 = p1 - lr / (1 - b1 ** 2) * m2 / (np.sqrt(v2) / np.sqrt(1 - b2 ** 2) + eps)
    np.testing.assert_allclose(param.numpy(), p2, rtol=1e-13)


def test_adam_l2_decay_is_normalized_but_adamw_decay_is_not():
    """With a zero gradient, Adam's L2 term becomes the whole gradient and is divided by its own
    magnitude (a step of about lr, whatever the decay); AdamW only shrinks p by lr * wd."""
    values = [4.0, -0.5]
    adam = one_param(values, [0.0, 0.0])
    adamw = one_param(values, [0.0, 0.0])
    Adam([adam], lr=0.01, weight_decay=0.1).step()
    AdamW([adamw], lr=0.01, weight_decay=0.1).step()
    l2_grad = 0.1 * np.array(values)
    np.testing.assert_allclose(adam.numpy(), values - 0.01 * l2_grad / (np.abs(l2_grad) + 1e-8),
                               rtol=1e-14)
    np.testing.assert_allclose(adamw.numpy(), np.array(values) * (1 - 0.01 * 0.1), rtol=1e-15)


def test_float32_parameters_stay_float32_and_in_place():
    param = one_param(np.ones((3, 4)), np.full((3, 4), 0.5), dtype="float32")
    array = param.data
    for optimizer in (SGD([param], lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01),
                      Adam([param], weight_decay=0.1), AdamW([param])):
        optimizer.step()
        optimizer.step()
        assert param.data is array and param.dtype == np.float32
        assert all(a.dtype == np.float32 for s in optimizer.state.values() for a in s.values()
                   if hasattr(a, "dtype"))


def test_shared_gradient_is_not_modified():
    """The engine may give two parameters one gradient object: updates must only read it."""
    a = mg.tensor(np.ones(3), requires_grad=True)
    b = mg.tensor(np.ones(3), requires_grad=True)
    (a + b).sum().backward()
    grad_before = a.grad.numpy()
    SGD([a, b], lr=0.1, momentum=0.9, weight_decay=0.5).step()
    np.testing.assert_array_equal(a.grad.numpy(), grad_before)
    np.testing.assert_array_equal(b.grad.numpy(), grad_before)
    np.testing.assert_allclose(a.numpy(), 1 - 0.1 * 1.5)


def test_parameters_without_grad_are_skipped_and_zero_grad_clears():
    used, unused = one_param([1.0], [1.0]), mg.tensor([2.0], requires_grad=True)
    optimizer = Adam([used, unused], lr=0.1)
    optimizer.step()
    assert unused.numpy()[0] == 2.0 and unused not in optimizer.state
    assert optimizer.state[used]["step"] == 1
    optimizer.zero_grad()
    assert used.grad is None
    assert optimizer.state_dict()["state"][1] == {}


def test_groups_take_defaults_and_own_values():
    a, b = mg.tensor([1.0], requires_grad=True), mg.tensor([1.0], requires_grad=True)
    optimizer = SGD([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in optimizer.param_groups] == [0.1, 0.5]
    assert optimizer.param_groups[1]["momentum"] == 0.9
    assert optimizer.state_dict()["param_groups"][1]["params"] == [1]


def test_bad_configurations_are_refused():
    p = mg.tensor([1.0], requires_grad=True)
    with pytest.raises(ConfigError, match="empty"):
        Adam([])
    with pytest.raises(ConfigError, match="nesterov"):
        SGD([p], lr=0.1, nesterov=True)
    with pytest.raises(ConfigError, match="betas"):
        Adam([p], betas=(0.9, 1.0))
    with pytest.raises(ConfigError, match="twice"):
        SGD([{"params": [p]}, {"params": [p]}], lr=0.1)


def test_load_state_dict_refuses_another_optimizer_or_model():
    p, q = one_param([1.0], [1.0]), one_param([1.0, 2.0], [1.0, 1.0])
    sgd = SGD([p], lr=0.1, momentum=0.9)
    sgd.step()
    with pytest.raises(CheckpointError, match="another optimizer kind"):
        Adam([p]).load_state_dict(sgd.state_dict())
    with pytest.raises(CheckpointError, match="shape"):
        SGD([q], lr=0.1, momentum=0.9).load_state_dict(sgd.state_dict())
    with pytest.raises(CheckpointError, match="sizes"):
        SGD([p, q], lr=0.1, momentum=0.9).load_state_dict(sgd.state_dict())


# ----- the GPU's multi-tensor path, and skipped steps ------------------------------------------

@pytest.mark.parametrize("name", sorted(CASES))
def test_a_skipped_step_changes_nothing_and_the_next_one_matches(name, device):
    """`step(skip=...)` with True leaves parameters and state as they were (on a GPU decided
    on the device, where only the step count advances); with False it is an ordinary step."""
    case = CASES[name]
    params, optimizer = build(case, device)
    reference, reference_optimizer = build(case, device)
    set_grads(case, params, 0)
    set_grads(case, reference, 0)
    optimizer.step(skip=mg.tensor(False, device=device))
    reference_optimizer.step()
    before = flat(params)
    set_grads(case, params, 1)
    params[0].grad = params[0].grad * np.nan  # a bad gradient: its step is skipped
    optimizer.step(skip=mg.tensor(True, device=device))
    np.testing.assert_array_equal(flat(params), before)
    if device == "cuda":
        for state in reference_optimizer.state.values():
            state["step"] += 1
    set_grads(case, params, 1)
    set_grads(case, reference, 1)
    optimizer.step(skip=mg.tensor(False, device=device))
    reference_optimizer.step()
    np.testing.assert_allclose(flat(params), flat(reference), rtol=1e-12, atol=1e-14)


@pytest.mark.gpu
@pytest.mark.parametrize("optimizer_class", [SGD, Adam, AdamW])
def test_on_a_gpu_a_group_updates_in_a_few_launches_and_reads_nothing(optimizer_class,
                                                                       stand_in):
    params = [mg.randn(*shape, device="cuda", requires_grad=True)
              for shape in [(8, 4), (4,), (3, 3, 2)] * 10]
    optimizer = optimizer_class(params, lr=0.1, **({"momentum": 0.9} if optimizer_class is SGD
                                                   else {}))
    for param in params:
        param.grad = mg.randn(*param.shape, device="cuda")
    optimizer.step()  # the first step builds the flat arrays
    stand_in.reset()
    with stand_in.forbid_synchronize():
        optimizer.step(skip=mg.tensor(False, device="cuda"))
    assert stand_in.launch_count <= 25  # per parameter it would be 30 x 8-12
    assert all(param.data.base is not None for param in params)  # views of the flat array
