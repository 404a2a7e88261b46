"""The default main job on toy-en-es reaches its quality targets on every held-out split
(docs/data.md): test >= 0.99, compositional >= 0.95, cross-construction >= 0.95 overall and
>= 0.9 for each held-out feature pair, and no greedy output longer than twice its reference.
Quality figures only: how long training takes is a benchmark's business, not a test's."""

import pytest

from transformer.data.grammar import HELD_OUT_FEATURE_PAIRS

SPLITS = ("test", "compositional", "cross_construction")


@pytest.mark.slow
def test_the_main_job_translates_every_split_of_the_grammar(main_job_run):
    metrics = main_job_run.metrics
    assert metrics["test_exact_match"] >= 0.99
    assert metrics["compositional_exact_match"] >= 0.95
    assert metrics["cross_construction_exact_match"] >= 0.95
    pairs = metrics["cross_construction_pairs"]
    assert set(pairs) == HELD_OUT_FEATURE_PAIRS
    assert {pair: figure for pair, figure in pairs.items() if figure < 0.9} == {}
    assert {split: metrics[f"{split}_max_length_ratio"] for split in SPLITS
            if metrics[f"{split}_max_length_ratio"] > 2} == {}


@pytest.mark.slow
def test_the_main_job_prints_each_split_and_each_held_out_pair(main_job_run):
    lines = main_job_run.stdout.splitlines()
    for split in SPLITS:
        line = metrics_line(lines, f"{split}:")
        assert f"exact match {main_job_run.metrics[split + '_exact_match']:.4f}" in line
    for pair, value in main_job_run.metrics["cross_construction_pairs"].items():
        assert f"exact match {value:.4f}" in metrics_line(lines, pair)


def metrics_line(lines, label):
    """The one printed line that starts with `label` (after its indentation)."""
    found = [line for line in lines if line.strip().startswith(label)]
    assert len(found) == 1, (label, found)
    return found[0]
