"""A pairs run on a file with bad lines: refused with the lines named, trained without them
when asked (--skip-bad-lines), saying what was left out."""

import json

from test_examples_cli import run_example

TINY = ["--d-model", "16", "--heads", "2", "--layers", "1", "--d-ff", "32", "--no-progress",
        "--steps", "2", "--eval-every", "2"]


def test_bad_lines_are_left_out_when_asked_and_said(tmp_path):
    data = tmp_path / "corpus.tsv"
    lines = [f"satz {i}\tsentence {i}" for i in range(30)] + ["kaputt", "satz 1\tsentence 1"]
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    refused = run_example("train_translation.py", "--task", "pairs", "--data", data, *TINY,
                          "--out", tmp_path / "refused")
    assert refused.returncode == 2
    assert refused.stderr.strip() == (f"error: data file {data}: 1 bad line(s): line 31 (no "
                                      "tab, expected 'source<TAB>target': 'kaputt'); fix "
                                      "them, or leave them out with --skip-bad-lines")
    assert not (tmp_path / "refused").exists()

    out = tmp_path / "run"
    result = run_example("train_translation.py", "--task", "pairs", "--data", data, *TINY,
                         "--skip-bad-lines", "--out", out, timeout=120)
    assert result.returncode == 0, result.stderr
    assert f"data file {data}: left out 1 bad line(s): line 31 (no tab" in result.stdout
    assert (f"data file {data}: left out 1 exact duplicate pair(s) (the first of each is "
            "kept)") in result.stdout
    assert json.loads((out / "config.json").read_text())["task"]["skip_bad_lines"] is True
