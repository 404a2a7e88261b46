"""The grid runner's verdicts: Xiong et al.'s findings judged at each peak on crafted rows
(each check held at one peak and NOT held at the others), not testable where the baseline does
not train or the seeds are too few, a grid without both placements only reported, and a
diverging run on the copy task marked, with its exact match."""

import math

import pytest

from transformer.data import Example, Vocab, tokenize
from transformer.data.batching import encode_pairs
from transformer.study.expectations import expectation
from transformer.study.grid import PRESETS, Grid, judge_grid, run_grid
from transformer.study.toolkit import Scale, TaskData

XIONG = PRESETS["xiong"]  # peaks (2e-3, 4e-3, 1e-2), post-LN warmups (0, 30, 120) and pre-LN
JUDGED = ("E5.warmup_essential", "E6.comparable")


def cell(held):
    """{(norm, warmup): (validation loss, exact match)} of one peak: every check of JUDGED
    held, or every one NOT held, each a margin from the bound read from expectations.py
    (seeds spread by 0.01: the intervals stay narrow)."""
    essential = expectation("E5.warmup_essential").bound("low")
    comparable = expectation("E6.comparable").bound("low")
    if held:
        return {("post-LN", 0): (3.0, 0.2), ("post-LN", 120): (3.0 - essential - 0.2, 0.9),
                ("pre-LN", 0): (2.0, 0.9 + comparable + 0.1)}
    return {("post-LN", 0): (3.0, 0.2), ("post-LN", 120): (3.0 - essential + 0.2, 0.9),
            ("pre-LN", 0): (2.0, 0.9 + comparable - 0.2)}


def crafted_rows(good_peak, decode=True, baseline_trains=True):
    rows = []
    for lr in XIONG.lrs:
        values = cell(lr == good_peak)
        for norm in XIONG.norms:
            for warmup in XIONG.warmups:
                loss, match = values.get((norm, warmup), (2.5, 0.5))
                if not baseline_trains and (norm, warmup) == ("post-LN", 120):
                    match = 0.1
                rows += [{"task": "copy", "norm": norm, "init": "xavier", "depth": 6, "lr": lr,
                          "warmup": warmup, "seed": seed, "steps": XIONG.steps,
                          "train_loss": loss, "valid_loss": loss + 0.01 * seed,
                          "exact_match": match + 0.001 * seed if decode else math.nan,
                          "diverged": False}
                         for seed in range(XIONG.seeds)]
    return rows


@pytest.mark.parametrize("good_peak", XIONG.lrs)
def test_judging_crafted_rows_flips_each_check_at_every_peak(good_peak):
    outcomes = judge_grid(crafted_rows(good_peak), XIONG)
    assert [outcome.id for outcome in outcomes] == [f"lr {lr:g}" for lr in XIONG.lrs]
    for lr, outcome in zip(XIONG.lrs, outcomes):
        verdicts = {check.expect: check.verdict for check in outcome.checks if check.expect}
        expected = "held" if lr == good_peak else "NOT held"
        assert verdicts == {key: expected for key in JUDGED}, lr
        assert outcome.verdict == expected
        assert all(check.paired for check in outcome.checks if check.expect)
        assert "post-LN, warmup 30: diverged seeds (share)" in [c.label for c in outcome.checks]


def test_a_baseline_that_does_not_train_or_too_few_seeds_are_not_testable():
    outcome = judge_grid(crafted_rows(XIONG.lrs[0], baseline_trains=False), XIONG)[0]
    comparable = next(c for c in outcome.checks if c.expect == "E6.comparable")
    assert comparable.verdict == "not testable" and "does not train" in comparable.reason
    few = Grid(lrs=XIONG.lrs, warmups=XIONG.warmups, norms=XIONG.norms, seeds=3)
    rows = [row for row in crafted_rows(XIONG.lrs[0]) if row["seed"] < 3]
    for outcome in judge_grid(rows, few):
        assert {c.verdict for c in outcome.checks if c.expect} == {"not testable"}


def test_without_exact_match_only_the_loss_is_judged_and_one_placement_is_only_reported():
    outcomes = judge_grid(crafted_rows(XIONG.lrs[0], decode=False), XIONG)
    assert {c.expect for c in outcomes[0].checks if c.expect} == set(JUDGED[:1])
    assert not any("exact match" in c.label for c in outcomes[0].checks)
    post_only = Grid(lrs=XIONG.lrs, warmups=XIONG.warmups, norms=("post-LN",), seeds=5)
    rows = [row for row in crafted_rows(XIONG.lrs[0]) if row["norm"] == "post-LN"]
    for outcome in judge_grid(rows, post_only):
        assert outcome.verdict == "reported" and outcome.claim == "reported only"
        assert all(check.verdict == "reported" for check in outcome.checks)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # the diverging run overflows
def test_a_diverging_run_on_the_copy_task_is_marked_and_carries_exact_match():
    sentences = ["a b c", "b c d", "c d a", "d a b"]
    examples = [Example(s, s, "copy") for s in sentences]
    vocab = Vocab.build([tokenize(s) for s in sentences])
    data = TaskData(vocab, encode_pairs(examples, vocab), examples, examples)
    # 1e30: the first update overflows float32 (1e3 still trains at this size for a few steps)
    grid = Grid(lrs=(1e-3, 1e30), warmups=(0,), norms=("post-LN",), depths=(1,), steps=2,
                decode=True)
    rows = run_grid(grid, data, Scale(d_model=8, n_heads=2, d_ff=16, batch_size=4), "copy")
    calm, wild = rows
    assert not calm["diverged"] and 0.0 <= calm["exact_match"] <= 1.0
    assert wild["diverged"] and wild["exact_match"] == 0.0
    assert wild["valid_loss"] == pytest.approx(math.log(len(vocab)))
    assert math.isnan(wild["train_loss"])
