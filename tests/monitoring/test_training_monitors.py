"""What a run records of itself while it trains: samples, curves, gradient flow (equal to a
direct recorder call), TensorBoard events, and what a resume keeps of them."""

import json

import numpy as np
import pytest
from monitored import SPEC, on_pairs, run_example, write_pairs

import minigrad as mg
from minigrad.optim import clip_grad_norm_
from transformer.instruments import GradientFlowRecorder
from transformer.monitoring import read_samples
from transformer.pipeline import _trainer, resume_run, start_run
from transformer.run_folder import RunFolder


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_samples_are_printed_and_recorded_at_each_validation(monitored_run):
    samples = read_samples(RunFolder(monitored_run.path))
    assert list(samples) == [2, 4]
    assert [[s["index"] for s in records] for records in samples.values()] == [[0, 1], [0, 1]]
    printed = monitored_run.printed.splitlines()
    for sample in samples[4]:
        line = f"    sample  {sample['source']}  =>  {sample['output']}  "
        line += ("(= reference)" if sample["output"] == sample["reference"]
                 else f"(reference: {sample['reference']})")
        assert line in printed


def test_curves_and_flow_figures_are_written_at_the_end(monitored_run):
    for name in ("curves.png", "flow.png"):
        assert (monitored_run.path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_resume_cuts_back_the_records_after_its_checkpoint_and_goes_on(tmp_path):
    pairs = write_pairs(tmp_path)
    out = tmp_path / "run"
    start_run(on_pairs(pairs), out, showcase=())
    # as if killed after step 6 had been recorded but before its checkpoint
    for name in ("samples.jsonl", "flow.jsonl"):
        with open(out / name, "a") as file:
            file.write(json.dumps({"step": 6, "quantity": "stale", "index": 0}) + "\n")
    (out / "curves.png").unlink()
    resume_run(out, {"training.steps": 6}, showcase=())
    samples = lines(out / "samples.jsonl")
    assert [(s["step"], s["index"]) for s in samples] == \
        [(2, 0), (2, 1), (4, 0), (4, 1), (6, 0), (6, 1)]
    flow = lines(out / "flow.jsonl")
    assert sorted({row["step"] for row in flow}) == [2, 4, 6]
    assert not [row for row in flow if row["quantity"] == "stale"]
    assert (out / "curves.png").exists()


def test_recorded_flow_equals_a_direct_recorder_call_at_that_step(monitored_run, tmp_path):
    recorded = [row for row in lines(monitored_run.path / "flow.jsonl") if row["step"] == 2]
    # the same run to step 1, then step 2 by hand under a recorder of its own
    out = tmp_path / "run"
    start_run(on_pairs(monitored_run.pairs, SPEC.with_changes(
        {"training.steps": 1, "monitors.record_flow_every": 0})), out, showcase=())
    folder = RunFolder(out)
    from transformer.builders import load_splits

    spec = folder.spec().with_changes({"training.steps": 2})
    config = spec.training
    splits = load_splits("pairs", monitored_run.pairs, config.seed)
    trainer = _trainer(None, spec, splits, folder.vocab(), folder.tokenizer(), "cpu", None)
    trainer.resume(mg.load(folder.checkpoint("last")))
    batch = trainer.data.next_batch()
    trainer.model.train()
    trainer.optimizer.zero_grad()
    with GradientFlowRecorder(trainer.model) as recorder:
        logits = trainer.model(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask)
        trainer.loss(logits, batch.tgt_out, "mean").backward()
        recorder.end_pass(2)
        clip_grad_norm_(trainer.parameters, config.clip_norm)
        trainer.optimizer.step()
        recorder.after_update()
    key = ("stack", "layer", "sublayer", "param", "quantity")
    direct = {tuple(row[k] for k in key): row["value"] for row in recorder.rows}
    assert {tuple(row[k] for k in key): row["value"] for row in recorded}.keys() == direct.keys()
    for row in recorded:
        assert row["value"] == pytest.approx(direct[tuple(row[k] for k in key)], rel=1e-6)


def test_tensorboard_events_read_back_with_tensorboards_reader(monitored_run):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.plugins.hparams import plugin_data_pb2

    assert [p.name for p in monitored_run.tensorboard.iterdir()] == ["run"]  # the run's name
    events = EventAccumulator(str(monitored_run.tensorboard / "run"),
                              size_guidance={"scalars": 0, "histograms": 0, "tensors": 0})
    events.Reload()
    tags = events.Tags()
    assert {"train/loss", "train/lr", "valid/exact_match", "valid/bleu", "valid/chrf",
            "train/cross_entropy"} <= set(tags["scalars"])
    metrics = lines(monitored_run.path / "metrics.jsonl")
    for split, key in (("valid", "loss"), ("valid", "chrf"), ("train", "cross_entropy")):
        logged = {r["step"]: r[key] for r in metrics if r["split"] == split}
        read = {e.step: e.value for e in events.Scalars(f"{split}/{key}")}
        assert read.keys() == logged.keys()
        assert np.allclose([read[s] for s in logged], list(logged.values()), rtol=1e-6)
        if key != "chrf":  # perplexity: exp of the plain cross-entropy
            perplexity = {e.step: e.value for e in events.Scalars(f"{split}/perplexity")}
            assert np.allclose([perplexity[s] for s in logged], np.exp(list(logged.values())),
                               rtol=1e-6)
    flow = [tag for tag in tags["scalars"] if tag.startswith("flow/")]
    assert "flow/grad_in/encoder_1_self_attn" in flow
    assert any(tag.startswith("flow/update_ratio/") for tag in flow)
    final = json.loads((monitored_run.path / "metrics.json").read_text())
    read = events.Scalars("final/test_exact_match")
    assert [(e.step, e.value) for e in read] == [(4, pytest.approx(final["test_exact_match"]))]
    hparams = plugin_data_pb2.HParamsPluginData.FromString(
        events.SummaryMetadata("_hparams_/session_start_info").plugin_data.content)
    chosen = hparams.session_start_info.hparams
    assert chosen["model.d_model"].number_value == 16
    assert chosen["task.name"].string_value == "pairs"
    experiment = plugin_data_pb2.HParamsPluginData.FromString(
        events.SummaryMetadata("_hparams_/experiment").plugin_data.content).experiment
    assert "final/test_bleu" in {info.name.tag for info in experiment.metric_infos}
    assert "weights/encoder.embedding.weight" in tags["histograms"]
    assert any(tag.startswith("gradients/") for tag in tags["histograms"])
    assert any("samples" in tag for tag in tags["tensors"])


@pytest.mark.parametrize("value", ["0", "-3"])
def test_record_flow_takes_a_positive_interval(value, tmp_path):
    result = run_example("train_translation.py", "--record-flow", value, "--out",
                         tmp_path / "run")
    err = result.stderr.strip().splitlines()
    assert result.returncode == 2 and len(err) == 1, result.stderr
    assert "--record-flow" in err[0] and "positive integer" in err[0]
    assert not (tmp_path / "run").exists()
