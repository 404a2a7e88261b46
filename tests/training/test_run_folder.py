"""Run folders never lose a run: a second run into the same folder is refused, --overwrite
replaces a run whole (an interrupted replacement leaves the old run or the new one, never a
mix), a resumed run repeats no step in metrics.jsonl and says where it continues, a finished
run is left alone; checkpoints know the model and vocabulary they were trained with."""

import hashlib
import json
import os

import pytest
from test_examples_cli import run_example
from test_trainer import read_records, tiny_spec, without_timing

import minigrad as mg
from transformer import run_folder as run_folder_module
from transformer.errors import CheckpointError, ConfigError, ResumeConflict
from transformer.pipeline import resume_run, start_run
from transformer.run_folder import RunFolder

TINY_FLAGS = ["--task", "copy", "--d-model", "16", "--heads", "2", "--layers", "1", "--d-ff",
              "32", "--no-progress", "--steps", "8", "--eval-every", "4"]


def digest(folder):
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """A finished 12-step copy-task run (checkpoints every 4 steps): its folder."""
    out = tmp_path_factory.mktemp("finished") / "run"
    start_run(tiny_spec(), out, showcase=())
    return out


def copy_of(folder, tmp_path):
    copy = tmp_path / "copy"
    copy.mkdir()
    for path in folder.iterdir():
        (copy / path.name).write_bytes(path.read_bytes())
    return copy


# ----- the data-loss case, as a user meets it ----------------------------------------------------

def test_a_second_run_into_the_same_folder_is_refused_and_the_first_is_kept(tmp_path):
    out = tmp_path / "run"
    first = run_example("train_translation.py", *TINY_FLAGS, "--out", out, timeout=120)
    assert first.returncode == 0, first.stderr
    before = digest(out)
    translation = run_example("translate.py", "--checkpoint", out, "1 2 3").stdout

    second = run_example("train_translation.py", *TINY_FLAGS, "--seed", "1", "--out", out)

    assert second.returncode == 2
    assert second.stderr.strip().splitlines() == [
        f"error: {out} already holds a training run (best.npz, config.json, curves.png, "
        "last.npz, metrics.json and 3 more); nothing was changed: continue it with "
        "--resume, replace it with --overwrite, or choose another --out"]
    assert digest(out) == before  # bit-identical
    assert run_example("translate.py", "--checkpoint", out, "1 2 3").stdout == translation


def test_overwrite_checks_every_flag_before_it_removes_anything(finished_run, tmp_path):
    out = copy_of(finished_run, tmp_path)
    before = digest(out)
    result = run_example("train_translation.py", *TINY_FLAGS, "--out", out, "--overwrite",
                         "--task", "pairs", "--data", tmp_path / "missing.tsv")
    assert result.returncode == 2 and "missing.tsv does not exist" in result.stderr
    assert digest(out) == before


def test_overwrite_replaces_the_run_whole(finished_run, tmp_path):
    out = copy_of(finished_run, tmp_path)
    spec = tiny_spec(steps=4, eval_every=2, checkpoint_every=2, seed=5)
    start_run(spec, out, overwrite=True, showcase=())
    assert RunFolder(out).spec().training == spec.training
    assert [r["step"] for r in read_records(out) if r["split"] == "valid"] == [2, 4]
    assert mg.load(out / "last.npz")["step"] == 4
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy"]  # nothing left beside it


def test_a_folder_holding_other_files_is_never_replaced(finished_run, tmp_path):
    out = copy_of(finished_run, tmp_path)
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError, match=r"holds files that are not a training run's "
                                          r"\(notes.txt\)"):
        start_run(tiny_spec(), out, overwrite=True)
    assert (out / "notes.txt").read_text() == "mine"


def test_a_failure_while_writing_the_new_run_leaves_the_old_one(finished_run, tmp_path):
    out = copy_of(finished_run, tmp_path)
    before = digest(out)

    def fail_halfway(staging):
        staging.write_json("config.json", {"half": "written"})
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        RunFolder(out).create(fail_halfway, overwrite=True)
    assert digest(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["copy"]


def test_a_replacement_killed_between_its_two_renames_gives_the_old_run_back(
        finished_run, tmp_path, monkeypatch):
    out = copy_of(finished_run, tmp_path)
    before = digest(out)
    rename = os.replace

    def replace_then_die(source, target):
        if os.path.basename(source).startswith(".copy.new-"):  # the old run is aside, the
            # new one not yet in place
            raise KeyboardInterrupt  # as a kill would stop the process here
        rename(source, target)

    monkeypatch.setattr(run_folder_module.os, "replace", replace_then_die)
    with pytest.raises(KeyboardInterrupt):
        RunFolder(out).create(lambda staging: staging.write_json("config.json", {}),
                              overwrite=True)
    monkeypatch.undo()
    assert not out.exists()  # what a kill at that moment leaves
    assert RunFolder(out).holds_run()  # the next use puts the old run back
    assert digest(out) == before


# ----- resume ----------------------------------------------------------------------------------

def test_resume_drops_the_records_after_the_checkpoint_and_says_where_it_continues(
        finished_run, tmp_path, capsys):
    straight = read_records(finished_run)
    out = tmp_path / "run"
    start_run(tiny_spec(steps=8), out, showcase=())
    # what a process killed at step 10 leaves: records of steps 9 and 10 after last.npz (8)
    folder = RunFolder(out)
    for record in [r for r in straight if r["step"] in (9, 10)]:
        folder.append_metrics(record)
    capsys.readouterr()

    resume_run(out, {"training.steps": 12}, showcase=())

    assert f"resuming {out} from step 8 of 12" in capsys.readouterr().out
    steps = [(r["step"], r["split"]) for r in read_records(out)]
    assert len(steps) == len(set(steps))  # no step twice
    assert [without_timing(r) for r in read_records(out)] == \
        [without_timing(r) for r in straight]


def test_resuming_a_finished_run_says_so_and_changes_nothing(finished_run, tmp_path, capsys):
    out = copy_of(finished_run, tmp_path)
    before = digest(out)
    metrics = resume_run(out, showcase=())
    assert f"{out} has finished its 12 steps; nothing to do" in capsys.readouterr().out
    assert metrics == json.loads((out / "metrics.json").read_text())
    assert digest(out) == before


def test_resume_refuses_options_that_would_make_another_run(finished_run, tmp_path):
    out = copy_of(finished_run, tmp_path)
    before = digest(out)
    with pytest.raises(ResumeConflict) as caught:
        resume_run(out, {"task.name": "reverse", "model.d_model": 32, "model.dropout": 0.1,
                         "training.steps": 20, "training.batch_size": 8,
                         "training.eval_every": 2})
    assert caught.value.conflicts == [("--task", "reverse", "copy"), ("--d-model", 32, 16),
                                      ("--batch-size", 8, 16)]  # dropout is the run's own
    assert str(caught.value).count("\n") == 0 and "--task 'reverse' (the run has 'copy')" \
        in str(caught.value)
    assert digest(out) == before


def test_resume_may_change_the_budget_and_the_intervals(finished_run, tmp_path):
    out = copy_of(finished_run, tmp_path)
    resume_run(out, {"training.steps": 16, "training.eval_every": 2,
                     "training.checkpoint_every": 2}, showcase=())
    valid = [r["step"] for r in read_records(out) if r["split"] == "valid"]
    assert valid == [4, 8, 12, 14, 16]
    state = mg.load(out / "last.npz")
    finished = mg.load(finished_run / "last.npz")
    assert state["step"] == 16 and state["wall_seconds"] > finished["wall_seconds"]


def test_the_report_names_the_best_checkpoint_and_counts_the_whole_run(tmp_path, capsys):
    out = tmp_path / "run"
    start_run(tiny_spec(steps=4), out, showcase=())
    resume_run(out, {"training.steps": 8}, showcase=())
    printed = capsys.readouterr().out
    best = mg.load(out / "best.npz")
    assert "trained 8 steps in " in printed
    assert f"best checkpoint: step {best['step']} (validation exact match" in printed
    assert json.loads((out / "metrics.json").read_text())["best_step"] == best["step"]


def test_validation_results_are_printed_above_the_progress_bar(tmp_path, capsys):
    pytest.importorskip("tqdm")
    start_run(tiny_spec(steps=4, eval_every=2, progress=True), tmp_path / "run", showcase=())
    printed = capsys.readouterr().out.splitlines()
    valid = [line for line in printed if "  valid  " in line]
    assert [line.split()[1] for line in valid] == ["2", "4"]
    assert all("exact match" in line and "BLEU" in line for line in valid)


# ----- checkpoints know what they hold ---------------------------------------------------------

def test_a_checkpoint_from_before_these_records_still_loads(finished_run, tmp_path):
    out = copy_of(finished_run, tmp_path)
    state = mg.load(out / "best.npz")
    for key in ("model_config", "vocab_digest", "best_step", "wall_seconds"):
        del state[key]
    mg.save(state, out / "best.npz")
    model = RunFolder(out).load_model("best")
    assert all((a.numpy() == b.numpy()).all()
               for a, b in zip(model.state_dict().values(), state["model"].values()))


def test_an_older_checkpoint_that_does_not_fit_says_so_briefly(finished_run, tmp_path):
    out = copy_of(finished_run, tmp_path)
    state = mg.load(out / "best.npz")
    del state["model_config"]
    mg.save(state, out / "best.npz")
    config = json.loads((out / "config.json").read_text())
    config["model"]["d_model"] = 32
    (out / "config.json").write_text(json.dumps(config))
    with pytest.raises(CheckpointError) as caught:
        RunFolder(out).load_model("best")
    message = str(caught.value)
    assert "shape mismatches" in message and "more)" in message
    assert len(message) < 600
