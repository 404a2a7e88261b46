"""docs/write_your_own_experiment.md: its example experiment, taken from the page, registered
and run on a tiny task, then run through the command line's registry."""

import re
from pathlib import Path

import transformer.study.experiments  # noqa: F401
from transformer.data import Example, Vocab, tokenize
from transformer.data.batching import encode_pairs
from transformer.study.statistics import OUTCOMES
from transformer.study.toolkit import EXPERIMENTS, Scale, Study, TaskData, run_experiments

PAGE = Path(__file__).resolve().parents[2] / "docs" / "write_your_own_experiment.md"


def test_the_pages_example_registers_and_runs():
    code = re.findall(r"```python\n(.*?)```", PAGE.read_text(), re.S)[0]
    EXPERIMENTS.pop("rezero-vs-post-ln", None)
    exec(compile(code, str(PAGE), "exec"), {})
    assert "rezero-vs-post-ln" in EXPERIMENTS
    sentences = ["a b c", "b c d", "c d a", "d a b", "a c d", "b d a"]
    examples = [Example(s, s, "copy") for s in sentences]
    vocab = Vocab.build([tokenize(s) for s in sentences])
    data = TaskData(vocab, encode_pairs(examples, vocab), examples, examples)
    scale = Scale(seeds=2, train_seeds=2, d_model=8, n_heads=2, d_ff=16, probe_batches=1,
                  probe_batch_size=4,
                  depth=1, batch_size=4, extra={"steps": 2})
    outcome, = run_experiments(["rezero-vs-post-ln"], scale, Study(scale, data))
    assert outcome.checks[0].paired and outcome.checks[0].n == 2
    assert outcome.id == "U1" and outcome.verdict in OUTCOMES
    assert outcome.summary().startswith("U1: last training loss after 2 steps")
    EXPERIMENTS.pop("rezero-vs-post-ln")
