"""The main job as a user runs it (`python examples/train_translation.py`, its defaults), once
for this module (3 to 7 minutes by machine: the slowest, a 2-core AMD EPYC without AVX-512,
about 6.5 with its data and evaluation): its quality targets on every held-out split
(docs/data.md), and the figures the README and the committed walkthrough
(docs/illustrated/walkthrough.md) print, against what it prints now.

Targets: test >= 0.99, compositional >= 0.95, cross-construction >= 0.95 overall and >= 0.9
for each held-out feature pair, long >= 0.97, and no greedy output longer than twice its
reference on test, compositional and cross-construction (the long split's loops are counted
among its repeated clauses, not bounded). Four seeds of the default configuration meet every
target, with the margins docs/data.md shows ("What the main job reaches"); the longest-output
target has the least (a rare loop on the longest sentences), so it is the one another float
path would miss first. Quality figures only: how long training takes is a benchmark's
business, not a test's.

Figures: tolerances survive another CPU (a different BLAS kernel, or another number of BLAS
threads, takes training down another float path, which flips a few sentences): exact match
±0.01 on test and compositional (2,000 and 1,000 sentences), ±0.03 on cross-construction and
on the long split (whose errors are the rarest and the likeliest to move), ±0.05 on each
construction of the test split and each held-out pair (55 to 398 sentences each: one
sentence of 87 is 0.011), BLEU ±0.5 (±1 on the long split), timings and the
long split's error counts ignored; translations, counts and sizes exact. The walkthrough's
per-weight numbers (attention weights, vector entries) depend on that float path and are not
compared; its structure is (the same sections, the same count of numbers).

Under pytest-xdist (`--dist loadfile`) the module runs in one worker, last (tests/conftest.py),
so that its training has the cores to itself.
"""

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from transformer.data.grammar import HELD_OUT_FEATURE_PAIRS

REPO = Path(__file__).resolve().parents[1]
SCORE = re.compile(r"^\s*(test|compositional|cross_construction|long): exact match ([\d.]+)\s+BLEU "
                   r"([\d.]+)\s+chrF [\d.]+\s+token accuracy ([\d.]+)")
PHENOMENON = re.compile(r"^    (\S+)\s+exact match ([\d.]+)$")
SHOWCASE = re.compile(r"^  (.+)  ->  (.+)$")
NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:e[-+]?\d+)?")  # 1.2e-04 is one number

EXACT_MATCH_TOLERANCE = {"test": 0.01, "compositional": 0.01, "cross_construction": 0.03,
                         "long": 0.03}
BLEU_TOLERANCE = {"long": 1.0}  # else 0.5

SPLITS = ("test", "compositional", "cross_construction", "long")
BOUNDED = ("test", "compositional", "cross_construction")  # no output over twice its reference

pytestmark = pytest.mark.acceptance


@dataclass
class MainJobRun:
    """The README's main job as a user runs it: its run folder, what it printed, its metrics."""

    folder: Path
    stdout: str
    metrics: dict


@pytest.fixture(scope="module")
def main_job_run(tmp_path_factory):
    """One run of `python examples/train_translation.py` with its default flags, shared by
    the tests of this module; timed out at 20 minutes."""
    folder = tmp_path_factory.mktemp("main_job") / "toy-en-es"
    result = subprocess.run(
        [sys.executable, str(REPO / "examples" / "train_translation.py"), "--out", str(folder),
         "--no-progress"],
        capture_output=True, text=True, timeout=1200, check=False,
        env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == 0, result.stderr[-2000:]
    metrics = json.loads((folder / "metrics.json").read_text())
    return MainJobRun(folder, result.stdout, metrics)


def readme_output():
    """The lines of the README's "What the main job prints" block."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("### What the main job prints", 1)[1]
    return section.split("```", 2)[1].strip("\n").splitlines()


def figures(lines):
    """{split: (exact match, BLEU, token accuracy)}, {phenomenon: exact match}, [(sentence,
    translation)] of main-job output lines."""
    scores, phenomena, showcase = {}, {}, []
    for line in lines:
        if match := SCORE.match(line):
            scores[match[1]] = tuple(map(float, match.groups()[1:]))
        elif match := PHENOMENON.match(line):
            phenomena[match[1]] = float(match[2])
        elif match := SHOWCASE.match(line):
            showcase.append((match[1], match[2]))
    return scores, phenomena, showcase


def test_the_readme_prints_what_the_main_job_prints(main_job_run):
    committed = figures(readme_output())
    fresh = figures(main_job_run.stdout.splitlines())
    (scores, phenomena, showcase), (fresh_scores, fresh_phenomena, fresh_showcase) = \
        committed, fresh
    assert scores.keys() == fresh_scores.keys() and "test" in scores
    for split, (exact, bleu, accuracy) in scores.items():
        fresh_exact, fresh_bleu, fresh_accuracy = fresh_scores[split]
        assert abs(exact - fresh_exact) <= EXACT_MATCH_TOLERANCE[split], (split, exact,
                                                                            fresh_exact)
        assert abs(bleu - fresh_bleu) <= BLEU_TOLERANCE.get(split, 0.5), (split, bleu,
                                                                           fresh_bleu)
        assert abs(accuracy - fresh_accuracy) <= 0.01, (split, accuracy, fresh_accuracy)
    assert phenomena.keys() == fresh_phenomena.keys()
    for name, exact in phenomena.items():
        assert abs(exact - fresh_phenomena[name]) <= 0.05, (name, exact, fresh_phenomena[name])
    assert showcase == fresh_showcase
    report = re.compile(r"^trained (\d+) steps in .*; best checkpoint: step (\d+)",
                        flags=re.MULTILINE)
    (steps, best), = report.findall("\n".join(readme_output()))
    (fresh_steps, fresh_best), = report.findall(main_job_run.stdout)
    assert steps == fresh_steps
    validated = {r["step"] for r in map(json.loads, (main_job_run.folder / "metrics.jsonl")
                                        .read_text().splitlines()) if r["split"] == "valid"}
    assert int(best) in validated and int(fresh_best) == main_job_run.metrics["best_step"]


def walkthrough_numbers(text, *paths):
    """The numbers of the walkthrough's text, its paths (run folder, output folder), image
    links and code spans (tokens such as `the_5`, which the model's attention picks) left
    out."""
    for path in paths:
        text = text.replace(path, "PATH")
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", text)
    text = re.sub(r"`[^`\n]*`", "", text)
    return [n.replace(",", "") for n in NUMBER.findall(text)]


def test_the_committed_walkthrough_has_the_figures_of_a_fresh_run(main_job_run, tmp_path):
    out = tmp_path / "illustrated"
    result = subprocess.run(
        [sys.executable, str(REPO / "examples" / "illustrated.py"), "--checkpoint",
         str(main_job_run.folder), "--out", str(out)],
        capture_output=True, text=True, timeout=600, check=False,
        env={**os.environ, "PYTHONPATH": str(REPO)})
    assert result.returncode == 0, result.stderr
    committed_text = (REPO / "docs" / "illustrated" / "walkthrough.md").read_text()
    fresh_text = (out / "walkthrough.md").read_text()
    heading = re.compile(r"^## .+$", flags=re.MULTILINE)
    assert heading.findall(committed_text) == heading.findall(fresh_text)
    committed = walkthrough_numbers(committed_text, "runs/toy-en-es", "docs/illustrated")
    fresh = walkthrough_numbers(fresh_text, str(main_job_run.folder), str(out))
    assert len(committed) == len(fresh)

    intro = re.compile(r"translates ([\d.]+)% of the test sentences exactly \(BLEU ([\d.]+)\)")
    (exact, bleu), = intro.findall(committed_text)
    (fresh_exact, fresh_bleu), = intro.findall(fresh_text)
    assert abs(float(exact) - float(fresh_exact)) <= 1.0  # percent: ±0.01
    assert abs(float(bleu) - float(fresh_bleu)) <= 0.5
    first = re.compile(r"Greedy decoding of `([^`]+)` gives \*\*`([^`]+)`\*\*")
    assert first.findall(committed_text) == first.findall(fresh_text)
    counts = re.compile(r"^\|[^|]*\|[^|]*\|[^|]*\| \**([\d,]+)\** \|$", flags=re.MULTILINE)
    assert counts.findall(committed_text) == counts.findall(fresh_text)  # parameter table
    vocabulary = re.compile(r"vocabulary of (\d+) tokens")
    assert vocabulary.findall(committed_text) == vocabulary.findall(fresh_text)


def test_test_and_compositional_splits_reach_their_targets(main_job_run):
    assert main_job_run.metrics["test_exact_match"] >= 0.99
    assert main_job_run.metrics["compositional_exact_match"] >= 0.95


def test_cross_construction_reaches_its_overall_target(main_job_run):
    assert main_job_run.metrics["cross_construction_exact_match"] >= 0.95


def test_the_long_split_reaches_its_target(main_job_run):
    assert main_job_run.metrics["long_exact_match"] >= 0.97


def test_every_held_out_pair_reaches_its_target(main_job_run):
    pairs = main_job_run.metrics["cross_construction_pairs"]
    assert set(pairs) == HELD_OUT_FEATURE_PAIRS
    assert {pair: figure for pair, figure in pairs.items() if figure < 0.9} == {}


def test_no_output_is_longer_than_twice_its_reference(main_job_run):
    ratios = {split: main_job_run.metrics[f"{split}_max_length_ratio"] for split in BOUNDED}
    assert {split: ratio for split, ratio in ratios.items() if ratio > 2} == {}


def test_the_main_job_prints_each_split_and_each_held_out_pair(main_job_run):
    lines = main_job_run.stdout.splitlines()
    for split in SPLITS:
        line = metrics_line(lines, f"{split}:")
        assert f"exact match {main_job_run.metrics[split + '_exact_match']:.4f}" in line
    pairs = main_job_run.metrics["cross_construction_pairs"]
    assert set(pairs) == HELD_OUT_FEATURE_PAIRS
    for pair, value in pairs.items():
        assert f"exact match {value:.4f}" in metrics_line(lines, pair)
    assert (f"wrong: {main_job_run.metrics['long_agreement_errors']} with an agreement error "
            f"only, {main_job_run.metrics['long_repeated_clauses']} with a repeated clause, of "
            "1000 sentences") in metrics_line(lines, "wrong:")


def metrics_line(lines, label):
    """The one printed line that starts with `label` (after its indentation)."""
    found = [line for line in lines if line.strip().startswith(label)]
    assert len(found) == 1, (label, found)
    return found[0]
