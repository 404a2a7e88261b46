"""The study scripts end to end: attention_maps.py on a tiny run folder trained here for a few
steps, positional_encoding.py, every experiment of gradient_flow.py at a toy scale (its
figures checked as objects), and `gradient_flow.py --quick` itself (minutes); the last two in
the acceptance tier."""

import csv
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import transformer.study.experiments  # noqa: F401  (registers E1-E9)
from transformer.data import Example, Vocab, tokenize
from transformer.data.batching import encode_pairs
from transformer.pipeline import start_run
from transformer.run_spec import RunSpec, TaskSpec
from transformer.study.toolkit import EXPERIMENTS, Scale, Study, TaskData, summary_figure
from transformer.training_config import TrainingConfig

ROOT = Path(__file__).resolve().parents[2]
SENTENCE = "the animal didn't cross the street because it was too tired"
PAIRS = [(SENTENCE, "el animal no cruzó la calle porque estaba demasiado cansado")] * 5 + [
    ("the animal was tired", "el animal estaba cansado"),
    ("it was too tired", "estaba demasiado cansado"),
    ("the street was wide", "la calle era ancha"),
    ("the cat didn't cross the street", "el gato no cruzó la calle"),
    ("the dog crossed the street", "el perro cruzó la calle"),
    ("it was tired because it was late", "estaba cansado porque era tarde"),
    ("the animal crossed the street", "el animal cruzó la calle"),
] * 2
VERDICT = re.compile(r" -> (held|NOT held|inconclusive|not testable|reported)$")


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("attention")
    folder, data = root / "run", root / "pairs.tsv"
    data.write_text("".join(f"{src}\t{tgt}\n" for src, tgt in PAIRS))
    start_run(RunSpec(TaskSpec("pairs", str(data)),
                      model=dict(d_model=16, n_heads=2, n_encoder_layers=2, n_decoder_layers=2,
                                 d_ff=32, dropout=0.0),
                      training=TrainingConfig(steps=4, batch_size=4, warmup_steps=2,
                                              eval_every=4, checkpoint_every=4,
                                              progress=False)), folder)
    return folder


def test_attention_maps(run_folder, tmp_path, capsys, example_script):
    example_script("attention_maps").main(["--checkpoint", str(run_folder), "--out", str(tmp_path)])
    printed = capsys.readouterr().out
    assert f"source:      {' '.join(tokenize(SENTENCE))}" in printed
    for layer in (1, 2):
        assert (tmp_path / f"cross_attention_{layer}.png").stat().st_size > 0
        assert (tmp_path / f"encoder_self_attention_{layer}.png").stat().st_size > 0
        for head in (1, 2):
            assert re.search(rf"layer {layer} head {head}: \S+ \d\.\d\d", printed)
    assert (tmp_path / "encoder_attention_of_it.png").stat().st_size > 0
    with open(tmp_path / "attention.csv", newline="") as file:
        rows = list(csv.DictReader(file))
    assert {(r["stack"], r["sublayer"]) for r in rows} == \
        {("encoder", "self_attn"), ("decoder", "self_attn"), ("decoder", "cross_attn")}
    it = [r for r in rows if r["stack"] == "encoder" and r["query_token"] == "it"
          and r["layer"] == "1" and r["head"] == "1"]
    assert sum(float(r["weight"]) for r in it) == pytest.approx(1.0, abs=1e-5)


def test_positional_encoding(tmp_path, capsys, example_script):
    example_script("positional_encoding").main(["--d-model", "32", "--out", str(tmp_path)])
    printed = capsys.readouterr().out
    assert "at k = 0: 16.00 (d_model / 2 = 16)" in printed
    for name in ("pe_interleaved.png", "pe_concatenated.png", "pe_dot_products.png",
                 "pe_table.csv", "pe_dot_products.csv"):
        assert (tmp_path / name).stat().st_size > 0


@pytest.mark.acceptance  # trains every experiment: a sweep
def test_every_experiment_at_a_toy_scale(tmp_path):
    """The experiments' logic, figures and files, on a tiny made-up task in seconds."""
    sentences = ["a b c", "b c d", "c d a", "d a b", "a c d", "b d a", "c a", "d b"]
    examples = [Example(s, s, "copy") for s in sentences]
    vocab = Vocab.build([tokenize(s) for s in sentences])
    data = TaskData(vocab, encode_pairs(examples, vocab), examples, examples)
    scale = Scale(seeds=2, train_seeds=2, d_model=8, n_heads=2, d_ff=16, probe_batches=2,
                  probe_batch_size=4, depth=2, deep=3, depths=(1, 2), perturbation_depths=(1, 2),
                  quick=True, extra=dict(translation_steps=3, translation_warmups=(0, 1, 2),
                                         copy_steps=3, copy_depth=1, copy_warmup=1,
                                         rezero_steps=2, perturbation_draws=2,
                                         figure3_warmup=1))
    study = Study(scale, data, tasks={"copy": data})
    names = [f"E{number}" for number in range(1, 10)] + ["F3"]
    outcomes = [EXPERIMENTS[name].run(study) for name in names]
    for name, outcome in zip(names, outcomes):
        assert outcome.summary().startswith(f"{name}: ")
        assert VERDICT.search(outcome.summary())
        assert outcome.rows and outcome.checks and outcome.claim
        figure = outcome.figure
        assert figure.get_suptitle() or figure.axes[0].get_title()
        for ax in (ax for ax in figure.axes if ax.axison):  # not a grid's unused cell
            assert ax.get_title() and ax.get_xlabel() and ax.get_ylabel()
            if len(ax.get_legend_handles_labels()[1]) > 1:
                assert ax.get_legend() is not None
        outcome.save(tmp_path)
        stem = "xiong_figure3" if name == "F3" else f"{name}_*"
        assert len(list(tmp_path.glob(f"{stem}.png"))) == 1
    assert outcomes[6].mechanism and outcomes[6].record()["mechanism"] is True
    figure3 = outcomes[-1]  # Figure 3's data: per stack, 3 lines × seeds × layers, then depths
    for stack in ("encoder", "decoder"):
        by_layer = [row for row in figure3.rows if row["stack"] == stack and "depth" not in row]
        assert {(row["config"], row["seed"], row["layer"]) for row in by_layer} == {
            (config, seed, layer) for config in ("post-LN, init", "pre-LN, init",
                                                 "post-LN, after 1 warm-up steps")
            for seed in range(scale.seeds) for layer in range(1, scale.depth + 1)}
        by_depth = [row for row in figure3.rows if row["stack"] == stack and "depth" in row]
        assert {(row["config"], row["seed"], row["depth"]) for row in by_depth} == {
            (config, seed, depth) for config in ("post-LN, init", "pre-LN, init")
            for seed in range(scale.seeds) for depth in scale.depths}
    assert len(figure3.figure.axes) == 4 and any(
        "caption is not available" in text.get_text() for text in figure3.figure.texts)
    summary = summary_figure(outcomes, quick=True)
    judged = sum(check.judged for outcome in outcomes for check in outcome.checks)
    assert len(summary.axes) == judged
    assert summary.get_suptitle().startswith("smoke run, not the study")


@pytest.mark.acceptance
def test_gradient_flow_quick(tmp_path):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [
        str(ROOT), os.environ.get("PYTHONPATH")])))
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "gradient_flow.py"), "--quick", "--out",
         str(tmp_path)], capture_output=True, text=True, env=env, timeout=900)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("--quick: a smoke run") and lines[-1] == lines[0]
    for number in range(1, 10):
        line = next(line for line in lines if line.startswith(f"E{number}: "))
        assert VERDICT.search(line), line
        assert len(list(tmp_path.glob(f"E{number}_*.png"))) == 1
        assert len(list(tmp_path.glob(f"E{number}_*.csv"))) == 1
    assert (tmp_path / "xiong_figure3.png").stat().st_size > 0
    assert (tmp_path / "summary.png").stat().st_size > 0
    assert (tmp_path / "verdicts.json").stat().st_size > 0
