"""The study's statistics, in one place: every check is judged here.

A check is a figure measured once per seed. It is judged on the 95% interval of its mean over
the seeds: Student's t interval below `NORMAL_FROM` seeds, mean ± t(0.975, n−1)·s/√n with s
the sample standard deviation; from `NORMAL_FROM` seeds on, the normal one, mean ± 1.96·s/√n.
A comparison paired by seed (arm A against arm B on the same seeds) is judged the same way on
its per-seed differences A − B (`paired_differences`), so that what two arms share on a seed
cancels.

Four outcomes (`judge`):

- held: the interval lies on the claimed side of every bound;
- NOT held: it lies wholly on the other side of a bound;
- inconclusive: it straddles a bound;
- not testable: this scale cannot show it (a reason is given), whatever the values.

A check without a bound is only reported. An experiment's outcome (`experiment_outcome`):
NOT held if any judged check is NOT held, else inconclusive if any is, else held; not testable
where every check that has a bound is not testable; reported where none has a bound.
"""

import math
from collections.abc import Iterable, Sequence

import numpy as np

HELD, NOT_HELD, INCONCLUSIVE, NOT_TESTABLE = "held", "NOT held", "inconclusive", "not testable"
REPORTED = "reported"
OUTCOMES = (HELD, NOT_HELD, INCONCLUSIVE, NOT_TESTABLE)
CONFIDENCE = 0.95
NORMAL_FROM = 20  # seeds from which the interval is the normal one
NORMAL_QUANTILE = 1.959964  # the standard normal's 0.975 quantile
# Student's t distribution's 0.975 quantile by degrees of freedom (1 to NORMAL_FROM − 2)
T_QUANTILES = (12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622,
               2.2281, 2.2010, 2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009)
MIN_INIT_SEEDS = 10  # the study's least number of seeds of a measurement at initialization
MIN_TRAIN_SEEDS = 5  # and of a training comparison
T_METHOD = "t interval, 95%"
NORMAL_METHOD = "normal interval, 95%"
PAIRED = "on the per-seed differences"


def interval_method(n: int) -> str:
    """How the interval of a mean over `n` seeds is taken."""
    return T_METHOD if n < NORMAL_FROM else NORMAL_METHOD


def quantile(n: int) -> float:
    """The two-sided 95% quantile for a mean over `n` seeds: t(0.975, n − 1) below
    NORMAL_FROM seeds, else the normal one."""
    if n < 2:
        raise ValueError(f"an interval needs two or more seeds, got n = {n}")
    return T_QUANTILES[n - 2] if n < NORMAL_FROM else NORMAL_QUANTILE


def sample_sd(values: Sequence[float] | np.ndarray) -> float:
    """The sample standard deviation (n − 1 in the denominator); NaN below two values."""
    values = np.asarray(values, dtype=float)
    return float(np.std(values, ddof=1)) if len(values) >= 2 else math.nan


def mean_interval(values: Sequence[float] | np.ndarray) -> tuple[float, float]:
    """The 95% interval [low, high] of the mean of `values` (one per seed, two or more):
    mean ± quantile(n)·s/√n."""
    values = np.asarray(values, dtype=float)
    if not np.all(np.isfinite(values)):
        raise ValueError(f"an interval needs finite values, got {values.tolist()}")
    half = quantile(len(values)) * sample_sd(values) / math.sqrt(len(values))
    mean = float(np.mean(values))
    return mean - half, mean + half


def paired_differences(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray,
                       seeds_a: Sequence[int] | None = None,
                       seeds_b: Sequence[int] | None = None) -> np.ndarray:
    """The per-seed differences a − b of a comparison paired by seed: `a` and `b` one value per
    seed, in the same seeds' order, or matched through `seeds_a` and `seeds_b` (the seed of
    each value); every seed must be in both."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if seeds_a is None and seeds_b is None:
        if a.shape != b.shape:
            raise ValueError(f"a paired comparison needs one value per seed in each arm, got "
                             f"{a.shape} and {b.shape}")
        return a - b
    if seeds_a is None or seeds_b is None or sorted(seeds_a) != sorted(seeds_b) or \
            len(set(seeds_a)) != len(seeds_a):
        raise ValueError(f"a paired comparison needs the same seeds once in each arm, got "
                         f"{seeds_a} and {seeds_b}")
    by_seed = dict(zip(seeds_b, b))
    return np.array([value - by_seed[seed] for seed, value in zip(seeds_a, a)])


def judge(interval: tuple[float, float], low: float | None, high: float | None) -> str:
    """held, NOT held or inconclusive: the interval [l, h] against the claimed range [low,
    high] (None: unbounded on that side). Held: low <= l and h <= high; NOT held: h < low or
    l > high; else inconclusive (it straddles a bound)."""
    if low is None and high is None:
        raise ValueError("judge: a claim needs a low or a high bound")
    bottom, top = interval
    if (low is not None and top < low) or (high is not None and bottom > high):
        return NOT_HELD
    if (low is None or bottom >= low) and (high is None or top <= high):
        return HELD
    return INCONCLUSIVE


def experiment_outcome(outcomes: Iterable[str]) -> str:
    """An experiment's outcome from its checks' outcomes: NOT held if any is, else inconclusive
    if any is, else held if any is; not testable where the only judged ones are; reported where
    none is judged."""
    found = set(outcomes)
    for outcome in (NOT_HELD, INCONCLUSIVE, HELD, NOT_TESTABLE):
        if outcome in found:
            return outcome
    return REPORTED
