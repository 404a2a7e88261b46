"""The study's statistics on crafted data: the t interval against a worked example, each
outcome reached at a low and at a high bound, the paired rule, and an experiment's outcome."""

import math

import numpy as np
import pytest

from transformer.study import Check, Outcome
from transformer.study.statistics import (
    HELD,
    INCONCLUSIVE,
    NORMAL_FROM,
    NOT_HELD,
    NOT_TESTABLE,
    REPORTED,
    experiment_outcome,
    judge,
    mean_interval,
    paired_differences,
    quantile,
    sample_sd,
)


def test_the_t_interval_against_a_worked_example():
    """1, 2, 3, 4, 5: mean 3, s = √(10/4) = 1.5811, s/√5 = 0.70711, t(0.975, 4) = 2.7764:
    3 ± 1.9632."""
    assert sample_sd([1, 2, 3, 4, 5]) == pytest.approx(math.sqrt(2.5))
    low, high = mean_interval([1, 2, 3, 4, 5])
    assert (low, high) == pytest.approx((1.0368, 4.9632), abs=1e-4)
    assert quantile(2) == pytest.approx(12.7062) and quantile(10) == pytest.approx(2.2622)
    assert quantile(NORMAL_FROM) == pytest.approx(1.96, abs=1e-3)
    assert Check("x", [1, 2, 3, 4, 5]).method == "t interval, 95%"
    assert Check("x", list(range(NORMAL_FROM))).method == "normal interval, 95%"


def test_an_interval_needs_two_finite_values():
    with pytest.raises(ValueError, match="two or more seeds, got n = 1"):
        mean_interval([1.0])
    with pytest.raises(ValueError, match="finite values"):
        mean_interval([1.0, math.nan])


@pytest.mark.parametrize("side", ["low", "high"])
def test_each_outcome_at_each_bound(side):
    """A claim `>= 1` (low) or `<= 1` (high): an interval wholly on the claimed side is held,
    wholly on the other NOT held, across the bound inconclusive; a reason makes it not
    testable whatever the values."""
    sign = 1 if side == "low" else -1
    bounds = {side: 1.0}
    claimed, other, across = (1 + sign * np.array([1.0, 1.2, 1.4]),
                              1 - sign * np.array([1.0, 1.2, 1.4]),
                              np.array([0.5, 1.0, 1.5]))
    assert Check("c", claimed, **bounds).verdict == HELD
    assert Check("c", other, **bounds).verdict == NOT_HELD
    assert Check("c", across, **bounds).verdict == INCONCLUSIVE
    assert judge((1.0, 1.0), **{"low": None, "high": None, **bounds}) == HELD  # on the bound
    untestable = Check("c", claimed, untestable="the floor is reached", **bounds)
    assert untestable.verdict == NOT_TESTABLE
    assert untestable.record()["reason"] == "the floor is reached"
    assert Check("c", [2.0], **bounds).verdict == NOT_TESTABLE  # one seed: no interval


def test_a_band_is_judged_on_both_sides():
    band = dict(low=0.8, high=1.25)
    assert Check("b", [0.95, 1.0, 1.05], **band).verdict == HELD
    assert Check("b", [1.5, 1.6, 1.7], **band).verdict == NOT_HELD
    assert Check("b", [0.5, 0.6, 0.55], **band).verdict == NOT_HELD
    assert Check("b", [0.2, 1.0, 1.8], **band).verdict == INCONCLUSIVE  # wider than the band


def test_the_paired_rule_judges_the_per_seed_differences():
    """Two arms whose seeds vary far more than their difference: unpaired, the intervals
    overlap; paired by seed, the difference 0.1 ± 0.01 is held against a bound 0."""
    base = np.array([1.0, 3.0, 5.0, 7.0, 9.0])
    a, b = base + 0.1 + np.array([0.0, 0.01, -0.01, 0.005, -0.005]), base
    differences = paired_differences(a, b)
    paired = Check("a - b", differences, low=0.0, paired=True)
    assert paired.verdict == HELD and paired.method.endswith("on the per-seed differences")
    assert mean_interval(a)[0] < mean_interval(b)[1]  # unpaired, the arms' intervals overlap
    shuffled = paired_differences(a[::-1], b, seeds_a=[4, 3, 2, 1, 0], seeds_b=[0, 1, 2, 3, 4])
    assert shuffled == pytest.approx(differences[::-1])  # matched by seed, not by position
    with pytest.raises(ValueError, match="same seeds once in each arm"):
        paired_differences(a, b, seeds_a=[0, 1, 2, 3, 4], seeds_b=[0, 1, 2, 3, 5])
    with pytest.raises(ValueError, match="one value per seed in each arm"):
        paired_differences(a, b[:4])


def test_the_experiment_outcome_rule():
    assert experiment_outcome([HELD, NOT_HELD, INCONCLUSIVE]) == NOT_HELD
    assert experiment_outcome([HELD, INCONCLUSIVE, NOT_TESTABLE]) == INCONCLUSIVE
    assert experiment_outcome([HELD, NOT_TESTABLE, REPORTED]) == HELD
    assert experiment_outcome([NOT_TESTABLE, REPORTED]) == NOT_TESTABLE
    assert experiment_outcome([REPORTED]) == REPORTED


def test_a_check_records_what_verdicts_json_holds():
    record = Check("x", [1.0, 2.0, 3.0], low=0.0, expect=None).record()
    assert set(record) >= {"values", "n", "mean", "sd", "interval", "method", "low", "high",
                           "outcome"}
    assert record["n"] == 3 and record["sd"] == pytest.approx(1.0)
    assert record["interval"] == pytest.approx([2 - 4.3027 / math.sqrt(3),
                                                2 + 4.3027 / math.sqrt(3)], abs=1e-4)
    outcome = Outcome("E7", "m", "c", "h", [Check("x", [1.0, 1.1], low=0.0)], [],
                      mechanism=True)
    assert outcome.record()["mechanism"] is True and outcome.summary().endswith("-> held")
