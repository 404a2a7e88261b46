"""Every command-line tool answers a mistake as a person would want: one line on stderr,
`error: ...`, naming the flag or file and the value, no traceback; exit status 2 for a usage
error, 1 for a failure; and nothing a user saved is changed.

Each case runs the real script as a subprocess (about a second each: the scripts stop at the
check, before any training)."""

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from test_examples_cli import run_example

TINY = ["--d-model", "16", "--heads", "2", "--layers", "1", "--d-ff", "32", "--no-progress"]


def folder_digest(folder):
    """{file name: sha256} of every file below `folder` (what must stay unchanged)."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(Path(folder).rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """Files a user might wrongly pass: missing, a folder, binary, malformed, too small."""
    root = tmp_path_factory.mktemp("inputs")
    (root / "folder").mkdir()
    (root / "binary.tsv").write_bytes(bytes(range(256)) * 4)
    (root / "malformed.tsv").write_text("the cat\tel gato\nno tab on this line\n")
    (root / "one_pair.tsv").write_text("the cat\tel gato\n")
    (root / "a_file").write_text("not a folder\n")
    return root


@pytest.fixture
def damaged(memorized_run, tmp_path):
    """damage(file, change) -> a copy of the trained run folder with `file` changed."""
    def damage(name, change):
        copy = tmp_path / "run"
        shutil.copytree(memorized_run.path, copy)
        change(copy / name)
        return copy

    return damage


def assert_one_error_line(result, status, *fragments):
    lines = result.stderr.strip().splitlines()
    assert result.returncode == status, result.stderr
    assert "Traceback" not in result.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


TRAIN_USAGE_ERRORS = [  # (arguments, what the line must name)
    (["--steps", "0"], ["--steps", "'0'", "positive integer"]),
    (["--steps", "-3"], ["--steps", "'-3'"]),
    (["--batch-size", "0"], ["--batch-size"]),
    (["--eval-every", "0"], ["--eval-every"]),
    (["--warmup", "0"], ["--warmup"]),
    (["--lr-factor", "-1"], ["--lr-factor"]),
    (["--time-limit", "nan"], ["--time-limit"]),
    (["--dropout", "1.5"], ["--dropout", "[0, 1)"]),
    (["--target-dropout", "1"], ["--target-dropout", "[0, 1)"]),
    (["--ema-decay", "1"], ["--ema-decay", "[0, 1)"]),
    (["--d-model", "63", "--heads", "4"], ["--d-model 63", "even"]),
    (["--d-model", "30", "--heads", "4"],
     ["--d-model 30 --heads 4: ", "d_model (30) must be divisible by n_heads (4)"]),
    (["--heads", "3"], ["--d-model 16 --heads 3: ", "d_model (16) must be divisible by n_heads"]),
    (["--task", "nonsense"], ["--task", "nonsense"]),
    (["--task", "pairs"], ["--task pairs: ", "needs data"]),
    (["--data", "{inputs}/one_pair.tsv"], ["--data ", "only the tasks pairs, de-en"]),
    (["--task", "pairs", "--data", "{inputs}/missing.tsv"], ["missing.tsv", "does not exist"]),
    (["--task", "pairs", "--data", "{inputs}/folder"], ["folder", "not a file"]),
    (["--task", "pairs", "--data", "{inputs}/binary.tsv"], ["binary.tsv", "not UTF-8"]),
    (["--task", "pairs", "--data", "{inputs}/malformed.tsv"],
     ["malformed.tsv: 1 bad line(s): line 2 (no tab", "--skip-bad-lines"]),
    (["--task", "copy", "--skip-bad-lines"],
     ["--task copy --skip-bad-lines: ", "only the task pairs reads"]),
    (["--task", "pairs", "--data", "{inputs}/one_pair.tsv"], ["one_pair.tsv", "at least 3"]),
    (["--task", "en-es-bible", "--data", "{inputs}/folder"],
     ["SWORD module engKJV2006eb", "folder", "apt-get install sword-text-kjv"]),
    (["--out", "{inputs}/a_file"], ["a_file", "is a file"]),
    (["--out", "{inputs}/no_run", "--resume"], ["no_run", "no training run", "to resume"]),
    (["--resume", "--overwrite"], ["--overwrite", "--resume"]),
    (["--device", "tpu"], ["--device", "'tpu'"]),
    (["--no-such-flag"], ["--no-such-flag"]),
]


@pytest.mark.parametrize("arguments, fragments", TRAIN_USAGE_ERRORS,
                         ids=[" ".join(a) for a, _ in TRAIN_USAGE_ERRORS])
def test_train_translation_usage_errors(inputs, tmp_path, arguments, fragments):
    before = folder_digest(inputs)
    arguments = [a.format(inputs=inputs) for a in arguments]
    result = run_example("train_translation.py", *TINY, "--steps", "5", *arguments,
                         cwd=tmp_path)  # a later --steps wins
    assert_one_error_line(result, 2, *fragments)
    assert folder_digest(inputs) == before  # nothing written, nothing removed
    assert list(tmp_path.iterdir()) == []  # not even an empty runs/


def test_resume_refuses_another_ema_decay_and_changes_nothing(memorized_run):
    before = folder_digest(memorized_run.path)
    result = run_example("train_translation.py", "--out", memorized_run.path, "--resume",
                         "--ema-decay", "0.5")
    assert_one_error_line(result, 2, "--ema-decay 0.5 (the run has 0.0)", "--overwrite")
    assert folder_digest(memorized_run.path) == before


@pytest.mark.gpu
def test_a_device_without_cupy_or_gpu_is_one_line(tmp_path):
    if shutil.which("nvidia-smi"):
        pytest.skip("this machine has a GPU: the cuda device is there")
    result = run_example("train_translation.py", *TINY, "--steps", "2", "--device", "cuda",
                         "--out", tmp_path / "run")
    assert_one_error_line(result, 1, "cuda")
    assert not (tmp_path / "run").exists()


def test_debug_shows_the_traceback():
    result = run_example("train_translation.py", "--d-model", "62", "--heads", "4", "--steps",
                         "1", "--layers", "1", "--debug")
    assert result.returncode == 2
    assert "Traceback" in result.stderr and result.stderr.strip().endswith(
        "(see train_translation.py --help)")


def edit_json(change):
    def edit(path):
        value = json.loads(path.read_text())
        change(value)
        path.write_text(json.dumps(value))
    return edit


DAMAGES = [  # (file, change, what the line must name)
    ("vocab.json", lambda p: p.write_text("{not json"), ["vocab.json", "not a vocabulary"]),
    ("config.json", lambda p: p.write_text("[1, 2"), ["config.json", "not valid JSON"]),
    ("config.json", edit_json(lambda c: c["model"].update(n_heads=1)),
     ["n_heads 2 in the checkpoint, 1 in config.json", "do not belong together"]),
    ("config.json", edit_json(lambda c: c["model"].update(d_model=8, n_heads=1, d_ff=16,
                                                          dropout=0.2)),
     ["d_ff 64 in the checkpoint, 16 in config.json", "and 1 more"]),
    ("config.json", edit_json(lambda c: c["model"].update(colour="blue")),
     ["config.json", "unknown keys ['colour']"]),
    ("vocab.json", edit_json(lambda v: v["tokens"].append("zebra")),
     ["another vocabulary", "vocab.json"]),
    ("best.npz", lambda p: p.write_bytes(p.read_bytes()[:1000]), ["best.npz", "truncated"]),
]


@pytest.mark.parametrize("name, change, fragments", DAMAGES,
                         ids=[f"{name}-{i}" for i, (name, _, _) in enumerate(DAMAGES)])
def test_translate_refuses_a_damaged_run_folder_in_one_line(damaged, name, change, fragments):
    folder = damaged(name, change)
    result = run_example("translate.py", "--checkpoint", folder, "the ball is blue")
    assert_one_error_line(result, 1, *fragments)
    assert result.stdout == ""


TRANSLATE_USAGE_ERRORS = [
    (["--beam", "0", "the ball is blue"], ["--beam", "'0'"]),
    (["the ball is blue", "  "], ["sentence argument(s) 2", "blank"]),
    (["--which", "first", "the ball is blue"], ["--which", "first"]),
    (["--device", "gpu", "the ball is blue"], ["--device", "'gpu'"]),
    (["--beam", "2", "--n-best", "3", "the ball is blue"],
     ["--n-best 3 is larger than --beam 2", "give --beam 3 or more"]),
    (["--n-best", "2", "the ball is blue"],
     ["--n-best 2", "greedy decoding (--beam 1) gives one translation"]),
    (["--attention", "the ball is blue"], ["--attention", "add --json"]),
    (["--align-layer", "1", "the ball is blue"], ["--align-layer 1", "add --align"]),
    (["--align-heads", "1", "the ball is blue"], ["--align-heads 1", "add --align"]),
    (["--align", "--align-heads", "1,3", "the ball is blue"],
     ["--align-heads 1,3", "this model has 2 heads"]),
    (["--align", "--align-heads", "0", "the ball is blue"], ["--align-heads", "'0'"]),
    (["--length-penalty", "-1", "the ball is blue"], ["--length-penalty", "'-1'"]),
    (["--align", "--align-layer", "2", "the ball is blue"],
     ["--align-layer 2", "this model has 1 decoder layers"]),
    (["--score-target", "nowhere.txt", "the ball is blue"],
     ["--score-target nowhere.txt is not a file"]),
]


@pytest.mark.parametrize("arguments, fragments", TRANSLATE_USAGE_ERRORS,
                         ids=[" ".join(a) for a, _ in TRANSLATE_USAGE_ERRORS])
def test_translate_usage_errors(memorized_run, arguments, fragments):
    result = run_example("translate.py", "--checkpoint", memorized_run.path, *arguments)
    assert_one_error_line(result, 2, *fragments)


def test_translate_score_target_errors(memorized_run, tmp_path):
    targets = tmp_path / "targets.txt"
    targets.write_text("la bola es azul\nel gato\n", encoding="utf-8")
    result = run_example("translate.py", "--checkpoint", memorized_run.path, "--score-target",
                         targets, stdin="the ball is blue\n")
    assert_one_error_line(result, 2, f"--score-target {targets} has 2 line(s) but the input "
                                     "has 1", "one translation per input line")
    result = run_example("translate.py", "--checkpoint", memorized_run.path, "--score-target",
                         targets, "--beam", "2", "the ball is blue", "the cat")
    assert_one_error_line(result, 2, "--score-target", "--beam and --n-best do not apply")


def test_blank_lines_of_a_score_target_keep_their_lines(memorized_run, tmp_path):
    targets = tmp_path / "targets.txt"
    targets.write_text("la bola es azul\n\nel gato\nel gato negro bebió la leche\n",
                       encoding="utf-8")
    stdin = "the ball is blue\nthe ball is blue\n\nthe black cat drank the milk\n"
    result = run_example("translate.py", "--checkpoint", memorized_run.path, "--score-target",
                         targets, stdin=stdin)
    assert result.returncode == 0, result.stderr
    assert [line.split("\t")[0] for line in result.stdout.splitlines()] == \
        ["la bola es azul", "", "", "el gato negro bebió la leche"]
    notes = result.stderr.splitlines()
    assert notes[:2] == [f"translate: line 2 of {targets} (the translation of line 2 of stdin) "
                         "is blank; not scored, an empty line in its place",
                         "translate: line 3 of stdin is blank; not scored, an empty line in its "
                         "place"]
    assert notes[2].startswith("scored 2 sentence(s)")


def test_alignment_layers_refuses_a_line_that_is_not_a_pair(memorized_run, tmp_path):
    data = tmp_path / "pairs.tsv"
    data.write_text("the ball is blue\tla bola es azul\nthe ball is blue\n", encoding="utf-8")
    result = run_example("alignment_layers.py", "--checkpoint", memorized_run.path, "--data",
                         data)
    assert_one_error_line(result, 2, f"--data {data} line 2", "source<TAB>target")


def test_translate_a_missing_run_folder_is_one_line(tmp_path):
    result = run_example("translate.py", "--checkpoint", tmp_path / "nowhere", "the ball")
    assert_one_error_line(result, 2, f"--checkpoint {tmp_path / 'nowhere'} does not exist",
                          "give a training run folder", "RUN/best.npz")


def test_an_over_long_line_gets_its_own_error_and_the_others_are_translated(memorized_run):
    too_long = " ".join(["the ball is blue"] * 40)  # 160 tokens, max_len is 64
    stdin = f"the ball is blue\n{too_long}\n\nthe black cat drank the milk\n"
    result = run_example("translate.py", "--checkpoint", memorized_run.path, stdin=stdin)
    assert result.returncode == 1
    assert result.stdout.splitlines() == ["la bola es azul", "", "",
                                          "el gato negro bebió la leche"]
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and "line 2 of stdin" in errors[0] and "160 tokens" in errors[0]
    assert "translate: line 3 of stdin is blank" in result.stderr


def test_translate_warns_of_words_seen_only_on_the_target_side(memorized_run):
    result = run_example("translate.py", "--checkpoint", memorized_run.path, "la bola es azul")
    assert result.returncode == 0
    assert "appeared only in translations" in result.stderr
    assert "la, bola, es, azul" in result.stderr


OTHER_SCRIPTS = [  # (script, arguments, status, what the line must name)
    ("copy_task.py", ["--steps", "0"], 2, ["--steps"]),
    ("copy_task.py", ["--seed", "-1"], 2, ["--seed"]),
    ("illustrated.py", ["--dpi", "0"], 2, ["--dpi"]),
    ("illustrated.py", ["--out", "{inputs}/a_file"], 2, ["--out", "a_file", "is a file"]),
    ("attention_maps.py", ["--checkpoint", "{run}", "--word", "zebra"], 2,
     ["--word 'zebra'", "choose one of"]),
    ("attention_maps.py", ["--checkpoint", "{run}", "--sentence", " "], 2,
     ["--sentence", "blank"]),
    ("attention_maps.py", ["--checkpoint", "{run}", "--out", "{inputs}/a_file"], 2,
     ["a_file"]),
    ("positional_encoding.py", ["--d-model", "7"], 2, ["--d-model 7", "even"]),
    ("positional_encoding.py", ["--positions", "0"], 2, ["--positions"]),
    ("positional_encoding.py", ["--max-offset", "-1"], 2, ["--max-offset"]),
    ("../benchmarks/compare.py", ["--benchmark", "train_step", "--pairs", "2"], 2,
     ["--pairs 2"]),
    ("../benchmarks/compare.py", ["--benchmark", "nope"], 2, ["--benchmark nope", "train_step"]),
    ("../benchmarks/compare.py", ["--benchmark", "train_step", "--setting", "RELEASE=1"], 2,
     ["--setting RELEASE=1", "NAME=A,B"]),
    ("../benchmarks/compare.py", ["--benchmark", "train_step", "--setting", "R=1,0",
                                  "--frameworks", "minigrad,torch"], 2,
     ["--setting", "one framework", "--frameworks minigrad,torch"]),
    ("../benchmarks/train_step.py", ["--steps", "0"], 2, ["--steps"]),
    ("../benchmarks/train_step.py", ["--config", "huge"], 2, ["--config", "huge"]),
    ("../benchmarks/train_step.py", ["--device", "gpu0"], 2, ["--device"]),
    ("../benchmarks/decode.py", ["--repeats", "0"], 2, ["--repeats"]),
    ("../benchmarks/op_overhead.py", ["--ops", "-5"], 2, ["--ops"]),
]


@pytest.mark.parametrize("script, arguments, status, fragments", OTHER_SCRIPTS,
                         ids=[f"{s.split('/')[-1]} {' '.join(a)}" for s, a, _, _ in OTHER_SCRIPTS])
def test_the_other_tools_answer_mistakes_in_one_line(memorized_run, inputs, script, arguments,
                                                     status, fragments):
    arguments = [a.format(inputs=inputs, run=memorized_run.path) for a in arguments]
    result = run_example(script, *arguments)
    assert_one_error_line(result, status, *fragments)


# ----- --checkpoint, alike in every tool that reads a run ---------------------------------------

RUN_READERS = {  # the tool, and the arguments it needs besides --checkpoint ({out}: a new path)
    "translate.py": ["the ball is blue"],
    "report.py": ["--out", "{out}"],
    "illustrated.py": ["--out", "{out}"],
    "attention_maps.py": ["--out", "{out}"],
    "export_weights.py": ["--out", "{out}.safetensors"],
    "alignment_layers.py": [],
}
WRONG_CHECKPOINTS = [  # (--checkpoint given, what the one line must name)
    ("{inputs}/nowhere", ["--checkpoint {inputs}/nowhere does not exist",
                          "give a training run folder", "RUN/best.npz or RUN/last.npz"]),
    ("{inputs}/folder", ["--checkpoint {inputs}/folder: no training run there (config.json is "
                         "missing)", "give a training run folder"]),
    ("{unvalidated}/config.json", ["is a file but not a run's best.npz or last.npz"]),
    ("{unvalidated}", ["best.npz does not exist (the run has not validated yet)",
                       "give --which last (last.npz is there)"]),
]


@pytest.fixture
def unvalidated(memorized_run, tmp_path):
    """A run folder without best.npz, as before its first validation."""
    folder = tmp_path.parent / f"{tmp_path.name}-unvalidated"
    shutil.copytree(memorized_run.path, folder)
    (folder / "best.npz").unlink()
    return folder


@pytest.mark.parametrize("given, fragments", WRONG_CHECKPOINTS,
                         ids=[g.split("}")[0][1:] + g.split("}")[1] for g, _ in WRONG_CHECKPOINTS])
@pytest.mark.parametrize("script", RUN_READERS)
def test_every_tool_words_a_wrong_checkpoint_alike(inputs, unvalidated, tmp_path, script,
                                                   given, fragments):
    paths = {"inputs": inputs, "unvalidated": unvalidated}
    out = tmp_path / "out"
    arguments = [a.format(out=out) for a in RUN_READERS[script]]
    result = run_example(script, "--checkpoint", given.format(**paths), *arguments)
    assert_one_error_line(result, 2, *[f.format(**paths) for f in fragments])
    assert result.stdout == "" and list(tmp_path.iterdir()) == []  # nothing written


def test_a_checkpoint_file_and_which_must_agree(memorized_run):
    result = run_example("translate.py", "--checkpoint", memorized_run.path / "best.npz",
                         "--which", "last", "the ball is blue")
    assert_one_error_line(result, 2, "best.npz and --which last name different checkpoints")


def test_export_weights_takes_a_checkpoint_file(memorized_run, tmp_path):
    out = tmp_path / "last.safetensors"
    result = run_example("export_weights.py", "--checkpoint", memorized_run.path / "last.npz",
                         "--out", out)
    assert result.returncode == 0, result.stderr
    assert f"of {memorized_run.path / 'last.npz'}" in result.stdout and out.exists()


def test_report_curves_only_without_metrics_is_an_error(unvalidated, tmp_path):
    (unvalidated / "metrics.jsonl").write_text("")
    out = tmp_path / "out"
    result = run_example("report.py", "--checkpoint", unvalidated / "last.npz", "--curves-only",
                         "--out", out)
    assert_one_error_line(result, 2, "--curves-only", "metrics.jsonl holds no metrics yet")
    assert not out.exists()
