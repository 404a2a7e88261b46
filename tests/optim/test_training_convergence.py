"""End to end: small MLPs learn XOR and two spirals with SGD and Adam, and a checkpointed run
resumes bit for bit."""

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.nn import functional as F
from minigrad.optim import SGD, Adam


class Tanh(nn.Module):
    def forward(self, x):
        return x.tanh()


def xor():
    x = np.array([[0, 0], [0, 1], [1, 0], [1, 1]], np.float32)
    return x, np.array([0, 1, 1, 0])


def spirals(points_per_class=100):
    """Two interleaved spirals of 1.5 turns, a classic problem no linear model solves."""
    rng = np.random.default_rng(0)
    t = np.sqrt(rng.uniform(0.05, 1, points_per_class)) * 3 * np.pi
    arm = np.stack([t * np.cos(t), t * np.sin(t)], axis=1) / (3 * np.pi)
    x = np.concatenate([arm, -arm]) + rng.normal(0, 0.02, (2 * points_per_class, 2))
    return x.astype(np.float32), np.repeat([0, 1], points_per_class)


def train_to_full_accuracy(model, optimizer, x, y, max_steps):
    """Full-batch training; the number of steps until every point is classified right."""
    inputs, targets = mg.tensor(x), mg.tensor(y)
    for step in range(1, max_steps + 1):
        optimizer.zero_grad()
        logits = model(inputs)
        F.cross_entropy(logits, targets).backward()
        optimizer.step()
        if step % 25 == 0 and (logits.numpy().argmax(axis=1) == y).all():
            return step
    raise AssertionError(f"not at 100% training accuracy after {max_steps} steps")


@pytest.mark.parametrize("method", ["sgd", "adam"])
def test_mlp_learns_xor(method):
    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 8), Tanh(), nn.Linear(8, 2))
    optimizer = SGD(model.parameters(), lr=0.2, momentum=0.9) if method == "sgd" \
        else Adam(model.parameters(), lr=0.05)
    train_to_full_accuracy(model, optimizer, *xor(), max_steps=500)


@pytest.mark.parametrize("method", ["sgd", "adam"])
def test_mlp_learns_two_spirals(method):
    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(2, 32), nn.ReLU(), nn.Linear(32, 32), nn.ReLU(),
                          nn.Linear(32, 2))
    optimizer = SGD(model.parameters(), lr=0.2, momentum=0.9) if method == "sgd" \
        else Adam(model.parameters(), lr=0.01)
    train_to_full_accuracy(model, optimizer, *spirals(), max_steps=1000)


def dropout_model():
    return nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Dropout(0.3), nn.Linear(16, 2))


def train(model, optimizer, x, y, steps):
    for _ in range(steps):
        optimizer.zero_grad()
        F.cross_entropy(model(mg.tensor(x)), mg.tensor(y)).backward()
        optimizer.step()


def test_resume_from_checkpoint_is_bitwise_identical(tmp_path):
    """N steps, checkpoint (model, optimizer, RNG), M more steps in a fresh model and optimizer:
    the same float32 weights, bit for bit, as N + M steps straight (dropout draws included)."""
    x, y = spirals(32)
    n, m = 7, 5

    mg.manual_seed(1)
    straight = dropout_model()
    straight_optimizer = Adam(straight.parameters(), lr=0.01)
    train(straight, straight_optimizer, x, y, n + m)

    mg.manual_seed(1)
    first = dropout_model()
    first_optimizer = Adam(first.parameters(), lr=0.01)
    train(first, first_optimizer, x, y, n)
    mg.save({"model": first.state_dict(), "optimizer": first_optimizer.state_dict(),
             "rng": mg.get_rng_state(), "step": n}, tmp_path / "last.npz")

    mg.manual_seed(999)  # a fresh process: other weights, another random state
    resumed = dropout_model()
    resumed_optimizer = Adam(resumed.parameters(), lr=0.5)
    checkpoint = mg.load(tmp_path / "last.npz")
    resumed.load_state_dict(checkpoint["model"])
    resumed_optimizer.load_state_dict(checkpoint["optimizer"])
    mg.set_rng_state(checkpoint["rng"])
    assert checkpoint["step"] == n
    train(resumed, resumed_optimizer, x, y, m)

    for (name, expected), actual in zip(straight.state_dict().items(),
                                        resumed.state_dict().values()):
        assert expected.dtype == np.float32
        assert np.array_equal(expected.numpy(), actual.numpy()), name
