"""A run as data: the RunSpec is config.json (to_dict and from_dict round-trip, the earlier
layout is still read), every field has a flag of the one option table or is declared without
one, the field rules are declared on the fields, every option is checked before anything is
written (each bad value leaves no folder), and a run on a device leaves the process's default
device alone."""

import dataclasses
import json
import re
from pathlib import Path

import pytest
from test_trainer import tiny_spec

import minigrad as mg
from transformer import options, pipeline
from transformer.errors import CheckpointError, ConfigError
from transformer.main_job import MAIN_JOB
from transformer.options import OPTIONS, RESUMABLE, WITHOUT_FLAG
from transformer.run_folder import RunFolder
from transformer.run_spec import MonitorSpec, RunSpec, TaskSpec, paths
from transformer.training import Trainer
from transformer.training_config import TrainingConfig

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "short_run.json"

# config.json of a word-level run and of a subword run as runs wrote it before the RunSpec:
# the monitors among the training settings, the tokenizer as its kind.
EARLIER = {
    "task": {"name": "pairs", "data": "/runs/pairs.tsv", "skip_bad_lines": False},
    "tokenizer": {"kind": "word"},
    "model": {"src_vocab_size": 14, "tgt_vocab_size": 14, "d_model": 16, "n_heads": 2,
              "n_encoder_layers": 1, "n_decoder_layers": 1, "d_ff": 32, "dropout": 0.1,
              "max_len": 64, "positional": "sinusoidal", "attention_dropout": 0.0,
              "norm_first": False, "residual": "standard", "share_embeddings": True,
              "pad_id": 0, "activation": "relu"},
    "training": {"steps": 4, "batch_size": 16, "lr_factor": 1.0, "warmup_steps": 4,
                 "schedule": "noam", "label_smoothing": 0.1, "target_dropout": 0.1,
                 "ema_decay": 0.9, "clip_norm": 1.0, "log_every": 1, "sync_every": 0,
                 "eval_every": 3, "eval_examples": 16, "checkpoint_every": 3, "seed": 0,
                 "time_limit_s": 0.0, "progress": False, "accumulate": 1, "samples": 2,
                 "record_flow_every": 5}}
EARLIER_SUBWORD = {**EARLIER, "tokenizer": {"kind": "subword", "size": 60, "digest": "ab12",
                                            "pieces": {"source": 60, "target": 58}}}


# ----- the spec is config.json -----------------------------------------------------------------

def test_a_spec_round_trips_through_json():
    for spec in (MAIN_JOB, RunSpec.from_dict(EARLIER), RunSpec.from_dict(EARLIER_SUBWORD),
                 MAIN_JOB.with_changes({"monitors.tensorboard": "runs/tb",
                                        "tokenizer.subword": 400})):
        assert RunSpec.from_dict(json.loads(json.dumps(spec.to_dict()))) == spec


def test_a_run_folders_config_json_is_its_spec_as_written():
    written = json.loads(FIXTURE.read_text(encoding="utf-8"))["config"]
    spec = RunSpec.from_dict(written)
    assert spec.to_dict() == written
    assert spec.model_config().to_dict() == written["model"]  # the model resolved, whole


def test_the_earlier_layout_is_read():
    spec = RunSpec.from_dict(EARLIER)
    assert spec.monitors == MonitorSpec(samples=2, record_flow_every=5)
    assert spec.training == TrainingConfig.from_dict(
        {k: v for k, v in EARLIER["training"].items()
         if k not in ("samples", "record_flow_every")})
    assert spec.tokenizer.kind == "word" and spec.model == EARLIER["model"]
    subword = RunSpec.from_dict(EARLIER_SUBWORD).tokenizer
    assert (subword.kind, subword.subword, subword.digest, dict(subword.pieces)) == \
        ("subword", 60, "ab12", {"source": 60, "target": 58})
    no_size = {**EARLIER_SUBWORD["tokenizer"]}
    del no_size["size"]  # the pieces bound the size asked for
    assert RunSpec.from_dict({**EARLIER, "tokenizer": no_size}).tokenizer.subword == 60
    oldest = RunSpec.from_dict({"task": {"name": "copy"}, "training": {"steps": 7}})
    assert (oldest.task, oldest.tokenizer.kind, oldest.training.steps) == \
        (TaskSpec("copy"), "word", 7)


def test_a_config_json_that_is_no_spec_is_one_checkpoint_error_naming_it(tmp_path):
    folder, today = RunFolder(tmp_path), RunSpec.from_dict(EARLIER).to_dict()
    for config, fragment in [({**today, "extra": {}}, "unknown sections ['extra']"),
                             ({**EARLIER, "tokenizer": {"kind": "bpe"}}, "'bpe'"),
                             ({**today, "training": {"steps": 0}}, "steps must be an integer"),
                             ({**today, "monitors": {"sample": 3}}, "unknown keys ['sample']"),
                             ({**today, "model": {**today["model"], "n_heads": 3}},
                              "divisible by n_heads (3)"),
                             ([1, 2], "expected a mapping")]:
        folder.write_json("config.json", config)
        with pytest.raises(CheckpointError, match=re.escape(fragment)) as caught:
            folder.spec()
        assert str(caught.value).startswith(str(folder.file("config.json")))
        assert "\n" not in str(caught.value)


# ----- one option table ------------------------------------------------------------------------

def test_every_field_has_a_flag_or_is_declared_without_one():
    flagged = [path for option in OPTIONS for path in option.fields]
    assert len(flagged) == len(set(flagged))  # one flag a field
    assert set(flagged).isdisjoint(WITHOUT_FLAG)
    assert sorted(set(flagged) | set(WITHOUT_FLAG)) == sorted(paths())


def test_the_resumable_fields_are_the_rows_marked_so():
    assert RESUMABLE == {"training.steps", "training.eval_every", "training.checkpoint_every",
                         "training.sync_every", "training.time_limit_s",
                         "training.accumulate", "training.progress", "monitors.samples",
                         "monitors.record_flow_every", "monitors.tensorboard"}
    assert options.resumable_text().endswith("--record-flow and --tensorboard")


def test_each_flag_sets_its_fields(example_script):
    parse = example_script("train_translation").parse_arguments
    given = parse(["--layers", "3", "--norm-first", "--no-progress", "--record-flow",
                   "--subword", "50", "--task", "pairs", "--data", "p.tsv", "--skip-bad-lines",
                   "--tensorboard", "tb"]).changes
    assert given == {"task.name": "pairs", "task.data": "p.tsv", "task.skip_bad_lines": True,
                     "tokenizer.subword": 50, "model.n_encoder_layers": 3,
                     "model.n_decoder_layers": 3, "model.norm_first": True,
                     "training.progress": False, "monitors.record_flow_every": 100,
                     "monitors.tensorboard": "tb"}
    assert parse([]).changes == {} and parse([]).spec == MAIN_JOB


# ----- field rules, declared on the fields -------------------------------------------------------

@pytest.mark.parametrize("make, fragments", [
    (lambda: TrainingConfig(steps=0, lr_factor=-1.0, progress="yes"),
     ["TrainingConfig: steps must be an integer >= 1, got 0", "lr_factor must be a number > 0",
      "progress must be true or false, got 'yes'"]),
    (lambda: TrainingConfig(ema_decay=1.0), ["ema_decay must be a number in [0, 1) (0: no"]),
    (lambda: TrainingConfig(schedule="linear"), ["schedule must be one of noam, cosine"]),
    (lambda: MonitorSpec(samples=-1), ["MonitorSpec: samples must be an integer >= 0"]),
    (lambda: TaskSpec("nonsense"), ["TaskSpec: name must be one of toy-en-es"]),
    (lambda: RunSpec(model={"d_model": 30, "n_heads": 4}), ["d_model (30) must be divisible"]),
    (lambda: RunSpec(model={"dropout": 1.5}), ["dropout must be a number in [0, 1)"]),
    (lambda: RunSpec(model={"d_modle": 64}), ["unknown keys ['d_modle']"]),
    (lambda: MAIN_JOB.with_changes({"training.stepz": 3}), ["no field 'training.stepz'"]),
])
def test_a_value_that_breaks_a_rule_is_one_line_naming_it(make, fragments):
    with pytest.raises(ConfigError) as caught:
        make()
    assert "\n" not in str(caught.value)
    for fragment in fragments:
        assert fragment in str(caught.value)


# ----- every option checked before anything is written ------------------------------------------

@pytest.fixture
def nothing_written(tmp_path, monkeypatch):
    """start(spec) -> the error start_run raised for `spec` into tmp_path/run, after checking
    that tmp_path holds what it held before (no run folder, no staging folder, no log)."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a_file").write_text("not a folder\n")

    def start(spec, error=ConfigError):
        before = sorted(p.name for p in tmp_path.rglob("*"))
        with pytest.raises(error) as caught:
            pipeline.start_run(spec, tmp_path / "run", showcase=())
        assert sorted(p.name for p in tmp_path.rglob("*")) == before
        assert "\n" not in str(caught.value)
        return str(caught.value)

    return start


def test_a_file_as_the_tensorboard_folder_writes_nothing(nothing_written):
    for logdir in ("a_file", "a_file/logs"):
        message = nothing_written(tiny_spec().with_changes({"monitors.tensorboard": logdir}))
        assert message.startswith(f"--tensorboard {logdir}: ") and "is a file" in message


def test_a_tensorboard_folder_that_cannot_be_written_writes_nothing(nothing_written,
                                                                     monkeypatch):
    monkeypatch.setattr("os.access", lambda path, mode: False)  # as for a folder not ours
    message = nothing_written(tiny_spec().with_changes({"monitors.tensorboard": "new/logs"}))
    assert "cannot be written" in message


@pytest.mark.parametrize("module, spec, extra", [
    ("tensorboardX", {"monitors.tensorboard": "logs"}, "[tensorboard]"),
    ("matplotlib", {}, "[examples]"),
])
def test_a_missing_extra_writes_nothing(nothing_written, monkeypatch, module, spec, extra):
    monkeypatch.setitem(__import__("sys").modules, module, None)  # `import module` fails
    assert extra in nothing_written(tiny_spec().with_changes(spec), ImportError)


def test_missing_data_writes_nothing(nothing_written, tmp_path):
    message = nothing_written(tiny_spec("pairs", tmp_path / "missing.tsv"))
    assert "missing.tsv" in message and "does not exist" in message


def test_a_bad_number_is_refused_when_the_spec_is_made(nothing_written):
    with pytest.raises(ConfigError, match="batch_size must be an integer >= 1, got 0"):
        tiny_spec(batch_size=0)
    with pytest.raises(ConfigError, match="d_ff must be an integer >= 1, got -1"):
        tiny_spec().with_changes({"model.d_ff": -1})
    model = {**tiny_spec().model, "n_heads": 3}  # a spec made around the checks
    unchecked = tiny_spec()
    object.__setattr__(unchecked, "model", model)
    assert "divisible by n_heads (3)" in nothing_written(unchecked)


# ----- the device ---------------------------------------------------------------------------------

@pytest.mark.gpu
def test_a_cuda_run_leaves_the_processs_default_device_as_it_was(tmp_path, monkeypatch):
    trainers = []
    monkeypatch.setattr(pipeline, "Trainer",
                        lambda *args, **kwargs: trainers.append(Trainer(*args, **kwargs))
                        or trainers[-1])
    spec = dataclasses.replace(tiny_spec(steps=2, eval_every=2, checkpoint_every=2),
                               monitors=MonitorSpec(samples=0))
    before = mg.default_device()
    pipeline.start_run(spec, tmp_path / "run", device="cuda", showcase=())
    assert mg.default_device() == before == "cpu"
    assert {p.device for p in trainers[0].model.parameters()} == {"cuda:0"}
    pipeline.resume_run(tmp_path / "run", {"training.steps": 3}, device="cuda", showcase=())
    assert mg.default_device() == "cpu"
    assert {p.device for p in trainers[1].model.parameters()} == {"cuda:0"}
