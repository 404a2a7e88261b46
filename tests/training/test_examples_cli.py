"""The example scripts as a user runs them: `translate.py` on a trained run folder, and short
runs of `train_translation.py` (Ctrl-C and --resume included) and `copy_task.py`."""

import json
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg

REPO = Path(__file__).resolve().parents[2]
TINY_FLAGS = ["--d-model", "16", "--heads", "2", "--layers", "1", "--d-ff", "32",
              "--no-progress"]


def example(script, *args):
    """The command line of examples/`script`, and the environment it runs in from a checkout."""
    command = [sys.executable, str(REPO / "examples" / script), *map(str, args)]
    return command, {**os.environ, "PYTHONPATH": str(REPO)}


def run_example(script, *args, stdin="", timeout=60, cwd=None):
    command, env = example(script, *args)
    return subprocess.run(command, input=stdin, capture_output=True, text=True, env=env,
                          timeout=timeout, cwd=cwd, check=False)  # tests read the status


def read_records(folder):
    with open(folder / "metrics.jsonl") as file:
        return [json.loads(line) for line in file]


# ----- translate.py ---------------------------------------------------------------------------

def test_translate_prints_one_line_per_sentence_argument_in_order(memorized_run):
    sources = [e.src for e in memorized_run.train][:6]
    result = run_example("translate.py", "--checkpoint", memorized_run.path, *sources)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [memorized_run.target(s) for s in sources]
    assert result.stderr == ""


def test_translate_reads_one_sentence_per_line_from_stdin(memorized_run):
    sources = [e.src for e in memorized_run.train][-6:]
    stdin = "\n".join(sources[:3]) + "\n\n" + "\n".join(sources[3:]) + "\n"  # a blank line
    result = run_example("translate.py", "--checkpoint", memorized_run.path, stdin=stdin)
    assert result.returncode == 0, result.stderr
    targets = [memorized_run.target(s) for s in sources]
    assert result.stdout.splitlines() == targets[:3] + [""] + targets[3:]
    assert result.stderr.splitlines() == ["translate: line 4 of stdin is blank; not translated, "
                                          "an empty line in its place"]


def test_translate_prints_each_line_before_the_next_arrives(memorized_run):
    """Through a pipe, as `paste` or a line-by-line caller uses it: the translation of a line
    comes back while stdin stays open, before the next line is written."""
    command, env = example("translate.py", "--checkpoint", memorized_run.path)
    with subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env) as process:
        try:
            for source in ["the ball is blue", "", "the black cat drank the milk"]:
                process.stdin.write(source + "\n")
                process.stdin.flush()
                answer = read_line_within(process.stdout, seconds=20)
                assert answer == (memorized_run.target(source) if source else "") + "\n"
            process.stdin.close()
            assert process.wait(timeout=20) == 0
        finally:
            process.kill()


def read_line_within(stream, seconds):
    """One line of `stream`, or a failed test after `seconds`."""
    found = []
    reader = threading.Thread(target=lambda: found.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(seconds)
    assert found, f"no line within {seconds} s"
    return found[0]


def test_translate_takes_a_checkpoint_file_of_a_run_folder(memorized_run):
    for name, which in (("best.npz", "best"), ("last.npz", "last")):
        by_file = run_example("translate.py", "--checkpoint", memorized_run.path / name,
                              "--scores", "the ball is blue")
        by_folder = run_example("translate.py", "--checkpoint", memorized_run.path, "--which",
                                which, "--scores", "the ball is blue")
        assert by_file.returncode == 0, by_file.stderr
        assert by_file.stdout == by_folder.stdout
        assert by_file.stdout.startswith("la bola es azul\t")


def test_translate_reports_unknown_words_on_stderr(memorized_run):
    result = run_example("translate.py", "--checkpoint", memorized_run.path,
                         "the zebra is blue", "the ball is blue")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2 and lines[1] == "la bola es azul"
    assert "unknown word(s) zebra in 'the zebra is blue'" in result.stderr


def test_translate_with_beam_search_and_the_last_checkpoint(memorized_run):
    sources = ["the ball is blue", "the black cat drank the milk"]
    result = run_example("translate.py", "--checkpoint", memorized_run.path, "--beam", 2,
                         "--which", "last", *sources)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["la bola es azul", "el gato negro bebió la leche"]


def test_translate_without_sentences_is_a_usage_error(memorized_run):
    result = run_example("translate.py", "--checkpoint", memorized_run.path, stdin="\n")
    assert result.returncode == 2
    assert "no sentences given" in result.stderr


PHARAOH = re.compile(r"^\d+-\d+( \d+-\d+)*$")


def test_translate_n_best_with_scores_and_alignments(memorized_run):
    """`N<TAB>translation<TAB>score<TAB>log-probability<TAB>token log-probabilities<TAB>
    alignment`, the n best of each sentence in a row, best first."""
    sources = ["the ball is blue", "the black cat drank the milk"]
    result = run_example("translate.py", "--checkpoint", memorized_run.path, "--beam", 3,
                         "--n-best", 2, "--scores", "--align", *sources)
    assert result.returncode == 0, result.stderr
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert [row[0] for row in rows] == ["1", "1", "2", "2"]
    assert [rows[0][1], rows[2][1]] == [memorized_run.target(s) for s in sources]
    for first, second in (rows[:2], rows[2:]):
        assert float(first[2]) >= float(second[2])
    for _, text, score, log_prob, token_log_probs, alignment in rows:
        words = text.split()
        token_log_probs = [float(p) for p in token_log_probs.split()]
        assert len(token_log_probs) == len(words) + 1  # and EOS
        assert float(log_prob) == pytest.approx(sum(token_log_probs), abs=5e-4)
        assert float(score) == pytest.approx(float(log_prob) / ((6 + len(words)) / 6) ** 0.6,
                                             abs=1e-4)
        assert PHARAOH.match(alignment) and len(alignment.split()) == len(words)
        assert [int(pair.split("-")[1]) for pair in alignment.split()] == list(range(len(words)))


def test_translate_length_penalty_zero_scores_by_the_log_probability(memorized_run):
    result = run_example("translate.py", "--checkpoint", memorized_run.path, "--beam", 2,
                         "--scores", "--length-penalty", 0, "the black cat drank the milk")
    assert result.returncode == 0, result.stderr
    text, score, log_prob, _ = result.stdout.rstrip("\n").split("\t")
    assert text == "el gato negro bebió la leche" and score == log_prob


def test_translate_aligns_tokens_or_the_lines_words_from_chosen_heads(memorized_run):
    """"blue." is one word of two tokens: --align counts the tokens, --align-words the
    words; --align-heads 1,2 is the average of both heads, the default."""
    def alignment(*flags):
        result = run_example("translate.py", "--checkpoint", memorized_run.path, *flags,
                             "the ball is blue.")
        assert result.returncode == 0, result.stderr
        text, pairs = result.stdout.rstrip("\n").split("\t")
        assert text == "la bola es azul" and PHARAOH.match(pairs)
        return [tuple(map(int, pair.split("-"))) for pair in pairs.split()]

    tokens, words = alignment("--align"), alignment("--align-words")
    assert [t for _, t in tokens] == [t for _, t in words] == [0, 1, 2, 3]
    assert all(s <= 4 for s, _ in tokens) and all(s <= 3 for s, _ in words)
    assert alignment("--align", "--align-heads", "1,2") == tokens
    assert all(s <= 4 for s, _ in alignment("--align", "--align-heads", "2"))


def test_translate_json_has_one_object_per_line_in_the_documented_order(memorized_run):
    too_long = " ".join(["the ball is blue"] * 40)
    stdin = f"the ball is blue\n\n{too_long}\n"
    result = run_example("translate.py", "--checkpoint", memorized_run.path, "--json",
                         "--align", "--attention", stdin=stdin)
    assert result.returncode == 1
    first, blank, second = [json.loads(line) for line in result.stdout.splitlines()]
    assert blank == {"line": 2, "source": "", "error": "the sentence is blank"}
    assert list(first) == ["line", "source", "source_tokens", "translations"]
    assert first["line"] == 1 and first["source_tokens"] == ["the", "ball", "is", "blue"]
    [translation] = first["translations"]
    assert list(translation) == ["translation", "tokens", "token_log_probs", "log_prob",
                                 "score", "alignment", "attention"]
    assert translation["translation"] == "la bola es azul"
    assert translation["tokens"] == ["la", "bola", "es", "azul", "<eos>"]
    heads = memorized_run_heads(memorized_run)
    assert np.array(translation["attention"]).shape == (1, heads, 5, 4)
    assert list(second) == ["line", "source", "error"] and second["line"] == 3
    assert "160 tokens" in second["error"]


def memorized_run_heads(run):
    return json.loads((run.path / "config.json").read_text())["model"]["n_heads"]


def test_translate_scores_given_translations(memorized_run, tmp_path):
    sources = ["the ball is blue", "the black cat drank the milk", "the ball is blue"]
    targets = tmp_path / "targets.txt"
    targets.write_text("la bola es azul\nel gato negro bebió la leche\nla bola es roja\n",
                       encoding="utf-8")
    result = run_example("translate.py", "--checkpoint", memorized_run.path, "--score-target",
                         targets, "--align", *sources)
    assert result.returncode == 0, result.stderr
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert [row[0] for row in rows] == targets.read_text(encoding="utf-8").splitlines()
    assert float(rows[0][2]) > float(rows[2][2])  # the memorized translation is likelier
    assert all(len(row) == 5 and PHARAOH.match(row[4]) for row in rows)
    tokens = sum(len(row[3].split()) for row in rows)
    average = sum(float(row[2]) for row in rows) / tokens
    assert result.stderr.splitlines()[-1] == (
        f"scored 3 sentence(s), {tokens} tokens (EOS included): average log-probability per "
        f"token {average:.4f}, perplexity {np.exp(-average):.4f}")


def test_alignment_layers_measures_each_layer_against_the_lexicon(memorized_run):
    data = memorized_run.path.parent / "pairs.tsv"
    result = run_example("alignment_layers.py", "--checkpoint", memorized_run.path, "--data",
                         data, "--sentences", 6)
    assert result.returncode == 0, result.stderr
    header, columns, *rows = result.stdout.splitlines()
    assert "6 sentence pairs" in header
    assert columns.split() == ["layer", "words", "heads", "average", "head", "1", "head", "2"]
    assert [row.split()[:2] for row in rows] == [["content", "1"], ["articles", "1"]]
    for row in rows:
        words, *shares = row.split()[2:]
        assert int(words) > 0 and all(0 <= float(share) <= 1 for share in shares)


# ----- train_translation.py -------------------------------------------------------------------

@pytest.mark.acceptance
def test_train_translation_leaves_a_complete_run_folder(tmp_path):
    out = tmp_path / "run"
    result = run_example("train_translation.py", "--steps", 20, "--eval-every", 10, "--out",
                         out, *TINY_FLAGS, timeout=240)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "best.npz", "config.json", "curves.png", "last.npz", "metrics.json", "metrics.jsonl",
        "samples.jsonl", "vocab.json"]
    metrics = json.loads((out / "metrics.json").read_text())
    assert {"test_exact_match", "test_bleu", "compositional_exact_match",
            "compositional_bleu", "phenomena", "train_seconds"} <= metrics.keys()
    assert [r["step"] for r in read_records(out) if r["split"] == "valid"] == [10, 20]
    assert mg.load(out / "last.npz")["step"] == 20
    assert "test: exact match" in result.stdout
    assert "the ball is blue  ->  " in result.stdout  # the showcase translations


@pytest.mark.acceptance
def test_ctrl_c_saves_exits_130_and_resume_finishes_the_run(tmp_path):
    """The documented behaviour: Ctrl-C stops after the current step, saves last.npz, says how
    to continue and exits with status 130; --resume then appends to metrics.jsonl."""
    out = tmp_path / "run"
    command, env = example("train_translation.py", "--task", "copy", "--steps", 100,
                           "--eval-every", 50, "--out", out, *TINY_FLAGS)
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=env) as process:
        for line in process.stdout:  # the validation record at step 50: training is under way
            if "  valid  " in line:
                process.send_signal(signal.SIGINT)
                break
        stdout, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "continue with --resume" in stdout
    stopped_at = mg.load(out / "last.npz")["step"]
    assert 50 <= stopped_at < 100
    assert f"interrupted at step {stopped_at}: saved {out / 'last.npz'}" in stdout
    before = read_records(out)

    result = run_example("train_translation.py", "--out", out, "--resume", timeout=240)
    assert result.returncode == 0, result.stderr
    records = read_records(out)
    assert records[:len(before)] == before  # appended to, not truncated
    assert [r["step"] for r in records if r["split"] == "valid"] == [50, 100]
    assert mg.load(out / "last.npz")["step"] == 100
    assert (out / "metrics.json").exists()


# ----- copy_task.py ---------------------------------------------------------------------------

@pytest.mark.acceptance
def test_copy_task_runs_and_reports_held_out_exact_match(tmp_path):
    result = run_example("copy_task.py", "--steps", 30, "--out", tmp_path / "copy",
                         timeout=300)
    assert result.returncode == 0, result.stderr
    assert "held-out exact match: " in result.stdout
    assert mg.load(tmp_path / "copy" / "last.npz")["step"] == 30
    assert "test_exact_match" in json.loads((tmp_path / "copy" / "metrics.json").read_text())
