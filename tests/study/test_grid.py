"""The grid runner's verdicts: Xiong et al.'s two factors judged at each peak on crafted rows
(each check held at one peak and NOT held at the other), a grid without both placements only
reported, and a diverging run on the copy task marked, with its exact match."""

import math

import pytest

from transformer.data import Example, Vocab, tokenize
from transformer.data.batching import encode_pairs
from transformer.study.expectations import expectation
from transformer.study.grid import PRESETS, Grid, judge_grid, run_grid
from transformer.study.toolkit import Scale, TaskData

XIONG = PRESETS["xiong"]  # peaks (1e-2, 5e-3), post-LN warmups (0, 30, 120) and pre-LN
JUDGED = ("E5.warmup_never_hurts", "E5.longest_beats_none", "E5.no_warmup_fails",
          "E5.pre_ln_solves")


def cell(held):
    """{(norm, warmup): (validation loss, exact match)} of one peak: every check of JUDGED
    held, or every one NOT held, each a margin from the bound read from expectations.py."""
    hurts = expectation("E5.warmup_never_hurts").bound("high")
    beats = expectation("E5.longest_beats_none").bound("low")
    fails = expectation("E5.no_warmup_fails").bound("high")
    solves = expectation("E5.pre_ln_solves").bound("low")
    if held:
        return {("post-LN", 0): (3.0, fails - 0.2), ("post-LN", 30): (2.9, 0.5),
                ("post-LN", 120): (3.0 - beats - 0.2, 1.0), ("pre-LN", 0): (2.0, 1.0)}
    return {("post-LN", 0): (3.0, fails + 0.2), ("post-LN", 30): (3.0 + hurts + 0.2, 0.5),
            ("post-LN", 120): (3.0 - beats + 0.05, 0.0), ("pre-LN", 0): (2.0, solves - 0.2)}


def crafted_rows(good_peak, decode=True):
    rows = []
    for lr in XIONG.lrs:
        values = cell(lr == good_peak)
        for norm in XIONG.norms:
            for warmup in XIONG.warmups:
                loss, match = values.get((norm, warmup), (2.5, 0.5))
                rows += [{"task": "copy", "norm": norm, "init": "xavier", "depth": 6, "lr": lr,
                          "warmup": warmup, "seed": seed, "steps": XIONG.steps,
                          "train_loss": loss, "valid_loss": loss + 0.01 * seed,
                          "exact_match": match if decode else math.nan, "diverged": False}
                         for seed in range(XIONG.seeds)]
    return rows


@pytest.mark.parametrize("good_peak", XIONG.lrs)
def test_judging_crafted_rows_flips_each_check_at_both_peaks(good_peak):
    outcomes = judge_grid(crafted_rows(good_peak), XIONG)
    assert [outcome.id for outcome in outcomes] == [f"lr {lr:g}" for lr in XIONG.lrs]
    for lr, outcome in zip(XIONG.lrs, outcomes):
        verdicts = {check.expect: check.verdict for check in outcome.checks if check.expect}
        expected = "held" if lr == good_peak else "NOT held"
        assert verdicts == {key: expected for key in JUDGED}, lr
        assert outcome.verdict == expected
        solved = next(c for c in outcome.checks if c.label == "post-LN, warmup 120: solved runs")
        assert solved.verdict == "reported" and solved.mean == (lr == good_peak)
        assert "post-LN, warmup 30: diverged seeds (share)" in [c.label for c in outcome.checks]


def test_without_exact_match_only_the_loss_is_judged_and_one_placement_is_only_reported():
    outcomes = judge_grid(crafted_rows(XIONG.lrs[0], decode=False), XIONG)
    assert {c.expect for c in outcomes[0].checks if c.expect} == set(JUDGED[:2])
    assert not any("exact match" in c.label for c in outcomes[0].checks)
    post_only = Grid(lrs=XIONG.lrs, warmups=XIONG.warmups, norms=("post-LN",), seeds=3)
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
