"""Learning-rate schedules: against PyTorch's LambdaLR (committed fixtures), the formulas, and
state_dict round trips."""

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
from minigrad.errors import ConfigError
from minigrad.optim import SGD, LambdaLR, NoamSchedule, WarmupCosine

FIXTURE = np.load(Path(__file__).parent.parent / "fixtures" / "optim.npz")
SCHEDULES = json.loads(str(FIXTURE["schedules"]))


def optimizer(lr=1.0, groups=1):
    params = [mg.tensor([0.0], requires_grad=True) for _ in range(groups)]
    return SGD([{"params": [p], "lr": lr * (i + 1)} for i, p in enumerate(params)], lr=lr)


def build(name, lr):
    spec = SCHEDULES[name]
    if name == "lambda":
        return LambdaLR(optimizer(lr), lambda step: 0.9 ** step)
    return {"NoamSchedule": NoamSchedule, "WarmupCosine": WarmupCosine}[spec["schedule"]](
        optimizer(lr), **spec["options"])


def run(scheduler, steps):
    lrs = []
    for _ in range(steps):
        lrs.append(scheduler.get_last_lr()[0])
        scheduler.optimizer.step()
        scheduler.step()
    return lrs


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_matches_pytorch_lambda_lr(name):
    expected = FIXTURE[f"schedule/{name}"]
    scheduler = build(name, SCHEDULES[name]["lr"])
    np.testing.assert_allclose(run(scheduler, len(expected)), expected, rtol=1e-12)


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_state_dict_round_trip_continues_identically(name, tmp_path):
    lr = SCHEDULES[name]["lr"]
    scheduler = build(name, lr)
    run(scheduler, 5)
    mg.save({"scheduler": scheduler.state_dict(),
             "optimizer": scheduler.optimizer.state_dict()}, tmp_path / "ckpt")
    expected = run(scheduler, 4)

    restored = mg.load(tmp_path / "ckpt")
    fresh = build(name, lr * 7)  # a different lr at construction: the checkpoint's wins
    fresh.optimizer.load_state_dict(restored["optimizer"])
    fresh.load_state_dict(restored["scheduler"])
    assert run(fresh, 4) == expected


def test_noam_formula_warmup_peak_and_decay():
    d_model, warmup = 512, 4000
    scheduler = NoamSchedule(optimizer(), d_model, warmup)
    assert scheduler.get_last_lr() == [pytest.approx(d_model ** -0.5 * warmup ** -1.5)]
    lrs = [scheduler.get_last_lr()[0]]
    for _ in range(2 * warmup):
        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])
    peak = int(np.argmax(lrs)) + 1  # lrs[i] is the lr of update i + 1
    assert peak == warmup
    assert max(lrs) == pytest.approx(d_model ** -0.5 * warmup ** -0.5)
    assert lrs[-1] == pytest.approx(d_model ** -0.5 * (2 * warmup + 1) ** -0.5)


def test_each_group_scales_its_own_initial_lr():
    opt = optimizer(lr=0.1, groups=2)
    scheduler = NoamSchedule(opt, d_model=16, warmup_steps=4, factor=2.0)
    assert [g["initial_lr"] for g in opt.param_groups] == [0.1, 0.2]
    first, second = scheduler.get_last_lr()
    assert second == pytest.approx(2 * first)
    assert first == pytest.approx(0.1 * 2.0 * 16 ** -0.5 * 4 ** -1.5)


def test_lambda_lr_counts_from_zero():
    scheduler = LambdaLR(optimizer(0.5), lambda step: step + 1)
    assert scheduler.get_last_lr() == [0.5]
    scheduler.step()
    assert scheduler.get_last_lr() == [1.0]
    assert scheduler.optimizer.param_groups[0]["lr"] == 1.0


def test_warmup_cosine_endpoints():
    scheduler = WarmupCosine(optimizer(1.0), warmup_steps=10, total_steps=30, min_lr=0.1)
    lrs = run(scheduler, 40)
    assert lrs[0] == pytest.approx(0.1) and lrs[9] == 1.0  # updates 1 and 10
    assert lrs[19] == pytest.approx(0.1 + 0.9 * (1 + math.cos(math.pi / 2)) / 2)  # halfway
    assert lrs[29:] == [0.1] * 11
    assert all(a >= b for a, b in itertools.pairwise(lrs[9:]))


def test_warmup_cosine_factor_scales_the_peak_not_the_floor():
    scheduled = run(WarmupCosine(optimizer(2.0), warmup_steps=4, total_steps=12, min_lr=0.1,
                                 factor=0.25), 14)
    assert scheduled[3] == 0.5 and scheduled[11:] == [0.1] * 3  # peak 2.0 * 0.25, then min_lr
    plain = run(WarmupCosine(optimizer(0.5), warmup_steps=4, total_steps=12, min_lr=0.1), 14)
    assert scheduled == pytest.approx(plain)


def test_a_run_shorter_than_the_warmup_only_warms_up():
    lrs = run(WarmupCosine(optimizer(1.0), warmup_steps=10, total_steps=4), 4)
    assert lrs == pytest.approx([0.1, 0.2, 0.3, 0.4])


def test_bad_schedules_are_refused():
    with pytest.raises(ConfigError, match="warmup_steps"):
        NoamSchedule(optimizer(), d_model=16, warmup_steps=0)
    with pytest.raises(ConfigError, match="total_steps=0"):
        WarmupCosine(optimizer(), warmup_steps=10, total_steps=0)
    with pytest.raises(ConfigError, match="warmup_steps=-1"):
        WarmupCosine(optimizer(), warmup_steps=-1, total_steps=5)
    with pytest.raises(ConfigError, match="factor=0"):
        WarmupCosine(optimizer(), warmup_steps=1, total_steps=5, factor=0)
