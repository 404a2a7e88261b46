"""The Trainer and the training pipeline: a tiny run learns; an interrupted run (a shorter run,
or a real Ctrl-C) resumed from last.npz ends bitwise where an uninterrupted run ends; a NaN or
Inf stops training and keeps the last good checkpoint; the run folder holds what
docs/conventions.md says; callbacks see the right arguments.

All runs are on the CPU, with dropout on (so the random state must resume too)."""

import functools
import itertools
import json
import math
import os
import signal
import threading

import numpy as np
import pytest

import minigrad as mg
from minigrad.errors import CheckpointError, ConfigError
from minigrad.nn import functional as F
from minigrad.optim import SGD, Adam, LambdaLR, NoamSchedule, WarmupCosine
from transformer import Transformer, TransformerConfig, Translator, builders, pipeline
from transformer.builders import build_model_config, build_vocab
from transformer.data import load_task
from transformer.data.batching import Batch, BatchIterator, encode_pairs
from transformer.data.grammar import HELD_OUT_FEATURE_PAIRS, toy_en_es
from transformer.evaluation import evaluate
from transformer.pipeline import resume_run, start_run
from transformer.run_folder import RunFolder
from transformer.run_spec import RunSpec, TaskSpec
from transformer.training import Callback, NonFiniteLossError, Trainer
from transformer.training_config import TrainingConfig

TINY_MODEL = {"d_model": 16, "n_heads": 2, "n_encoder_layers": 1, "n_decoder_layers": 1,
              "d_ff": 32, "dropout": 0.1}
TRAIN_KEYS = {"step", "epoch", "split", "time_s", "loss", "lr", "grad_norm", "tokens_per_s",
              "cross_entropy"}
VALID_KEYS = {"step", "epoch", "split", "time_s", "loss", "token_accuracy", "exact_match",
              "bleu"}
TIMING_KEYS = {"time_s", "tokens_per_s", "train_seconds"}  # the only things a resume may change


def tiny_training(**changes):
    """TrainingConfig options of a run of a few seconds: 12 steps of 16 copy sequences,
    validation and checkpoints every 4 steps, a train record every step."""
    return {"steps": 12, "batch_size": 16, "warmup_steps": 4, "eval_every": 4,
            "checkpoint_every": 4, "log_every": 1, "eval_examples": 16, "progress": False,
            **changes}


def tiny_spec(task="copy", data=None, **training):
    """The RunSpec of a run of `task` of a few seconds: TINY_MODEL, `tiny_training`."""
    return RunSpec(TaskSpec(task, data), model=TINY_MODEL,
                   training=TrainingConfig(**tiny_training(**training)))


@functools.cache
def copy_task():
    return load_task("copy")


def build_trainer(out=None, callbacks=(), optimizer=None, scheduler=None, loss=None,
                  **training):
    """A Trainer on the copy task built as `start_run` builds it; `optimizer(model)`
    and `scheduler(optimizer)` build the Trainer's instead of the paper's defaults."""
    config = TrainingConfig(**tiny_training(**training))
    mg.manual_seed(config.seed)
    splits = copy_task()
    vocab = build_vocab(splits)
    model = Transformer(build_model_config(vocab, splits, TINY_MODEL))
    batches = BatchIterator(encode_pairs(splits["train"], vocab), vocab, config.batch_size,
                            seed=config.seed)
    optimizer = optimizer(model) if optimizer is not None else None
    scheduler = scheduler(optimizer) if scheduler is not None else None
    return Trainer(model, batches, splits["valid"], vocab, config, out=out,
                   callbacks=callbacks, optimizer=optimizer, scheduler=scheduler, loss=loss)


def read_records(folder):
    with open(folder / "metrics.jsonl") as file:
        return [json.loads(line) for line in file]


def without_timing(record):
    return {key: value for key, value in record.items() if key not in TIMING_KEYS}


def assert_bitwise_equal(actual, expected, where="state"):
    """Nested dicts/lists of tensors, arrays and scalars are equal, arrays bit for bit."""
    if isinstance(expected, mg.Tensor):
        expected, actual = expected.numpy(), actual.numpy()
    if isinstance(expected, np.ndarray):
        assert actual.dtype == expected.dtype and actual.shape == expected.shape, where
        assert np.array_equal(actual, expected), f"{where} differs"
    elif isinstance(expected, dict):
        assert actual.keys() == expected.keys(), where
        for key in expected:
            assert_bitwise_equal(actual[key], expected[key], f"{where}[{key!r}]")
    elif isinstance(expected, (list, tuple)):
        assert len(actual) == len(expected), where
        for i, (a, e) in enumerate(zip(actual, expected)):
            assert_bitwise_equal(a, e, f"{where}[{i}]")
    else:
        assert actual == expected, f"{where}: {actual!r} != {expected!r}"


def assert_same_training_state(actual, expected):
    """Checkpoint states agree on everything but the wall-clock time spent."""
    timing = ("train_seconds", "wall_seconds")
    assert_bitwise_equal({k: v for k, v in actual.items() if k not in timing},
                         {k: v for k, v in expected.items() if k not in timing})


class Recorder(Callback):
    """Remembers every call as (hook, trainer, step, argument), and at each on_backward_end
    whether every parameter had its gradient."""

    def __init__(self):
        self.calls, self.gradients_ready = [], []

    def on_backward_end(self, trainer, step, batch):
        self.calls.append(("backward_end", trainer, step, batch))
        self.gradients_ready.append(all(p.grad is not None for p in trainer.parameters))

    def on_step_end(self, trainer, step, record):
        """The record's loss and gradient norm are 0-d tensors at every step; kept as numbers."""
        assert all(isinstance(record[name], mg.Tensor) and record[name].shape == ()
                   for name in ("loss", "grad_norm"))
        self.calls.append(("step_end", trainer, step, {
            name: value.item() if isinstance(value, mg.Tensor) else value
            for name, value in record.items()}))

    def on_validation(self, trainer, step, record):
        self.calls.append(("validation", trainer, step, dict(record)))


class CtrlCAt(Callback):
    """Sends this process SIGINT, as a Ctrl-C in the terminal does, at the end of `step`."""

    def __init__(self, step, times=1):
        self.step, self.times = step, times

    def on_step_end(self, trainer, step, record):
        if step == self.step:
            for _ in range(self.times):
                os.kill(os.getpid(), signal.SIGINT)


@pytest.fixture
def sigint_guard():
    """Turn a SIGINT that the Trainer failed to catch into a recorded event, so that it fails
    the test instead of stopping the whole test session; restore the handler afterwards."""
    stray = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: stray.append(signum))
    yield stray
    signal.signal(signal.SIGINT, previous)


# ----- learning -------------------------------------------------------------------------------

def test_a_tiny_run_decreases_the_loss():
    recorder = Recorder()
    trainer = build_trainer(steps=40, warmup_steps=10, eval_every=1000, callbacks=[recorder])
    assert trainer.train() is True
    losses = [record["loss"] for hook, _, _, record in recorder.calls if hook == "step_end"]
    assert len(losses) == 40
    first, last = np.mean(losses[:5]), np.mean(losses[-5:])
    assert last < first - 0.25
    assert last < math.log(len(trainer.vocab))  # better than a uniform guess


def test_logging_steps_record_the_plain_cross_entropy_for_perplexity(tmp_path):
    """Without label smoothing the loss is the plain cross-entropy: the two agree; with it,
    the logged cross-entropy is the unsmoothed one (training perplexity is exp of it)."""
    for smoothing in (0.0, 0.1):
        out = tmp_path / f"smoothing-{smoothing}"
        trainer = build_trainer(out=out, steps=6, log_every=3, eval_every=100,
                                label_smoothing=smoothing)
        trainer.train()
        train = [r for r in read_records(out) if r["split"] == "train"]
        assert [r["step"] for r in train] == [3, 6]
        for record in train:
            if smoothing:
                assert record["cross_entropy"] != pytest.approx(record["loss"], rel=1e-3)
            else:
                assert record["cross_entropy"] == pytest.approx(record["loss"], rel=1e-5)


# ----- callbacks ------------------------------------------------------------------------------

def test_callbacks_get_the_trainer_the_step_and_the_batch_or_record():
    recorder = Recorder()
    trainer = build_trainer(steps=5, eval_every=2, callbacks=[recorder])
    trainer.train()
    hooks = [(hook, step) for hook, _, step, _ in recorder.calls]
    assert hooks == [("backward_end", 1), ("step_end", 1),
                     ("backward_end", 2), ("step_end", 2), ("validation", 2),
                     ("backward_end", 3), ("step_end", 3),
                     ("backward_end", 4), ("step_end", 4), ("validation", 4),
                     ("backward_end", 5), ("step_end", 5),
                     ("validation", 5)]  # the end of the run is validated too
    assert all(call[1] is trainer for call in recorder.calls)
    assert recorder.gradients_ready == [True] * 5
    for hook, _, step, argument in recorder.calls:
        if hook == "backward_end":
            assert isinstance(argument, Batch)
        elif hook == "step_end":
            assert argument.keys() == TRAIN_KEYS and argument["step"] == step
            assert argument["split"] == "train"
        else:
            assert VALID_KEYS <= argument.keys() and argument["step"] == step
            assert argument["split"] == "valid"


# ----- the optimizer, the schedule and the loss ------------------------------------------------

def sgd(model):
    return SGD(model.parameters(), lr=0.1)


def constant(optimizer):
    return LambdaLR(optimizer, lambda step: 1.0)


def test_the_defaults_are_the_papers_adam_noam_and_smoothed_cross_entropy():
    trainer = build_trainer(warmup_steps=4, lr_factor=0.5)
    assert isinstance(trainer.optimizer, Adam) and isinstance(trainer.scheduler, NoamSchedule)
    assert trainer.optimizer.param_groups[0]["betas"] == (0.9, 0.98)
    assert trainer.optimizer.param_groups[0]["eps"] == 1e-9
    assert (trainer.scheduler.d_model, trainer.scheduler.warmup_steps,
            trainer.scheduler.factor) == (16, 4, 0.5)
    batch = trainer.data.next_batch()
    logits = trainer.model(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask)
    expected = F.cross_entropy(logits, batch.tgt_out, ignore_index=trainer.vocab.pad_id,
                               label_smoothing=0.1)
    assert trainer.loss(logits, batch.tgt_out, "mean").item() == expected.item()


def cosine_rates(steps, updates):
    """A trainer's cosine schedule over `steps` steps (warmup 4, lr factor 0.5, d_model 16),
    its rates for `updates` updates, and Noam's rates for the same updates."""
    trainer = build_trainer(steps=steps, warmup_steps=4, lr_factor=0.5, schedule="cosine")
    noam = NoamSchedule(Adam(trainer.model.parameters(), lr=1.0), 16, 4, factor=0.5)
    lrs = []
    for _ in range(updates):
        lrs.append(trainer.scheduler.get_last_lr()[0])
        trainer.scheduler.step()
    return trainer.scheduler, lrs, [noam.lr_at(1.0, step) for step in range(updates)]


def test_the_cosine_schedule_keeps_noams_warmup_and_peak_and_ends_at_zero():
    scheduler, lrs, noam = cosine_rates(steps=10, updates=12)
    assert isinstance(scheduler, WarmupCosine)
    assert lrs[3] == pytest.approx(noam[3]) == pytest.approx(0.5 / math.sqrt(16 * 4))
    assert lrs[:4] == pytest.approx(noam[:4])
    assert lrs[9:] == [0.0] * 3 and all(a > b for a, b in itertools.pairwise(lrs[3:10]))


def test_a_cosine_run_shorter_than_its_warmup_follows_noams_rise():
    _, lrs, noam = cosine_rates(steps=3, updates=3)
    assert lrs == pytest.approx(noam)


def test_an_unknown_schedule_is_refused_with_the_known_ones():
    with pytest.raises(ConfigError, match="TrainingConfig: schedule must be one of noam, cosine, "
                                          "got 'linear'"):
        TrainingConfig(schedule="linear")


def test_sgd_with_a_constant_rate_trains_without_touching_the_trainer():
    recorder = Recorder()
    trainer = build_trainer(steps=6, callbacks=[recorder], optimizer=sgd, scheduler=constant)
    batch = trainer.data.next_batch()
    before = [p.numpy() for p in trainer.parameters]
    trainer.train_step(batch)
    for parameter, old in zip(trainer.parameters, before):  # w - lr * (clipped) gradient
        np.testing.assert_allclose(parameter.numpy(), old - 0.1 * parameter.grad.numpy(),
                                   rtol=1e-6, atol=1e-7)
    trainer.read()
    assert trainer.train() is True
    records = [r for hook, _, _, r in recorder.calls if hook == "step_end"]
    assert [r["lr"] for r in records] == [0.1] * 6
    assert all(math.isfinite(r["loss"]) for r in records)


@pytest.mark.parametrize("accumulate", [1, 2])
def test_a_custom_loss_is_the_one_trained_on(accumulate):
    """Cross-entropy without smoothing, given as the loss, trains exactly as the default loss
    with label_smoothing 0; a step of micro-batches asks for their sums."""
    reductions = []

    def plain_cross_entropy(logits, targets, reduction):
        reductions.append(reduction)
        return F.cross_entropy(logits, targets, ignore_index=0, reduction=reduction)

    custom = build_trainer(steps=3, loss=plain_cross_entropy, accumulate=accumulate)
    custom.train()  # then the other, from the same seed
    default = build_trainer(steps=3, label_smoothing=0.0, accumulate=accumulate)
    default.train()
    assert reductions == ["mean" if accumulate == 1 else "sum"] * 3 * accumulate
    for parameter, expected in zip(custom.parameters, default.parameters):
        assert np.array_equal(parameter.numpy(), expected.numpy())


@pytest.mark.gpu
def test_a_checkpoint_holds_the_random_state_of_the_runs_own_devices_only():
    from minigrad.backend import get_backend

    if get_backend("cuda").xp.cuda.runtime.getDeviceCount() < 2:
        pytest.skip("needs a second GPU (cuda:1); this machine has one")
    get_backend("cuda:1")  # loaded by something else in this process, not used by the run
    trainer = build_trainer()
    assert set(trainer.state_dict()["rng"]) == {"cpu"}


def test_resuming_with_another_optimizer_class_is_refused(tmp_path):
    build_trainer(tmp_path, steps=2).train()
    resumed = build_trainer(tmp_path, steps=4, optimizer=sgd)
    before = [p.numpy() for p in resumed.parameters]
    with pytest.raises(CheckpointError, match="^the checkpoint was trained with the Adam "
                                              "optimizer, this Trainer has SGD: resume with "
                                              "Adam \\(optimizer=\\), or start a new run$"):
        resumed.resume()
    assert resumed.step == 0
    assert all(np.array_equal(p.numpy(), old) for p, old in zip(resumed.parameters, before))
    sgd_run = tmp_path / "sgd"  # a run with SGD resumes with SGD
    build_trainer(sgd_run, steps=2, optimizer=sgd, scheduler=constant).train()
    assert build_trainer(sgd_run, steps=4, optimizer=sgd, scheduler=constant).resume() == 2


def test_a_schedule_of_another_optimizer_is_refused():
    with pytest.raises(ConfigError, match="Trainer: the LambdaLR schedules another optimizer "
                                          "than the Trainer's; pass the optimizer it was "
                                          "built on as optimizer="):
        build_trainer(scheduler=lambda _: constant(SGD([mg.zeros(2, requires_grad=True)],
                                                       lr=0.1)))


# ----- resuming -------------------------------------------------------------------------------

@pytest.mark.parametrize("ema_decay", [0.0, 0.9], ids=["weights", "moving-average"])
def test_resuming_after_a_shorter_run_ends_bitwise_where_a_straight_run_ends(tmp_path,
                                                                              ema_decay):
    straight = Recorder()
    reference = build_trainer(tmp_path / "straight", steps=9, callbacks=[straight],
                              ema_decay=ema_decay)
    reference.train()

    first_part = Recorder()
    build_trainer(tmp_path / "split", steps=5, callbacks=[first_part],
                  ema_decay=ema_decay).train()
    second_part = Recorder()
    resumed = build_trainer(tmp_path / "split", steps=9, callbacks=[second_part],
                            ema_decay=ema_decay)
    assert resumed.resume() == 5
    resumed.train()

    def train_records(recorder):
        return [without_timing(r) for hook, _, _, r in recorder.calls if hook == "step_end"]

    assert train_records(first_part) + train_records(second_part) == train_records(straight)
    for parameter, expected in zip(resumed.model.parameters(), reference.model.parameters()):
        assert np.array_equal(parameter.numpy(), expected.numpy())
    state, expected_state = resumed.state_dict(), reference.state_dict()
    for key in ("best", "best_step"):  # the 5-step run was validated at its end
        state.pop(key), expected_state.pop(key)
    assert_same_training_state(state, expected_state)


def test_a_moving_average_is_what_validation_best_npz_and_translation_use(tmp_path,
                                                                          monkeypatch):
    recorder = Recorder()
    monkeypatch.setattr(pipeline, "Trainer", functools.partial(Trainer, callbacks=[recorder]))
    out = tmp_path / "run"
    start_run(tiny_spec(ema_decay=0.9), out, showcase=())
    trainer = recorder.calls[-1][1]
    averages = trainer.average.averages
    trained = {name: p.numpy() for name, p in trainer.model.named_parameters()}
    assert not all(np.array_equal(averages[n], w) for n, w in trained.items())

    last = mg.load(out / "last.npz")
    assert last["average"]["decay"] == 0.9 and last["average"]["updates"] == 12
    assert_bitwise_equal(last["model"], trainer.model.state_dict())  # the weights trained
    assert_bitwise_equal(last["average"]["averages"], averages)
    for which in ("last", "best"):  # what translation loads: the average
        state = mg.load(out / f"{which}.npz")
        loaded = RunFolder(out).load_model(which).state_dict()
        assert_bitwise_equal({n: loaded[n] for n in averages}, state["average"]["averages"])

    validated = [r for hook, _, _, r in recorder.calls if hook == "validation"][-1]
    with trainer.evaluated_weights():
        again = evaluate(trainer.model, trainer.valid[:16], trainer.vocab)
    assert (again["loss"], again["exact_match"]) == (validated["loss"],
                                                     validated["exact_match"])
    assert all(np.array_equal(p.numpy(), trained[n])  # and the weights came back after it
               for n, p in trainer.model.named_parameters())

    state = mg.load(out / "best.npz")  # a damaged average is refused, naming the file
    state["average"] = {"decay": 0.9}
    mg.save(state, out / "best.npz")
    with pytest.raises(CheckpointError, match="best.npz: its 'average' entry holds no "
                                              "'averages'"):
        RunFolder(out).load_model("best")
    state["average"] = {"decay": 0.9, "averages": {"no.such.weight": np.zeros(3)}}
    mg.save(state, out / "best.npz")
    with pytest.raises(CheckpointError, match="best.npz: load_state_dict into Transformer: "
                                              "1 unexpected keys: no.such.weight"):
        RunFolder(out).load_model("best")


def test_a_checkpoint_without_the_average_a_run_keeps_is_refused(tmp_path):
    build_trainer(tmp_path, steps=4).train()
    with pytest.raises(CheckpointError, match="holds no moving average of the weights, but "
                                              "this run keeps one \\(ema_decay 0.9\\)"):
        build_trainer(tmp_path, steps=8, ema_decay=0.9).resume()


@pytest.fixture(scope="module")
def straight_run(tmp_path_factory):
    """An uninterrupted 12-step pipeline run on the copy task: (folder, metrics)."""
    out = tmp_path_factory.mktemp("straight") / "run"
    return out, start_run(tiny_spec(), out, showcase=())


def test_ctrl_c_saves_last_npz_at_that_step_and_resume_ends_bitwise_the_same(
        tmp_path, monkeypatch, capsys, sigint_guard, straight_run):
    straight, straight_metrics = straight_run
    out = tmp_path / "run"
    before = signal.getsignal(signal.SIGINT)
    with monkeypatch.context() as patch:  # the CLI's run, with a Ctrl-C after step 6
        patch.setattr(pipeline, "Trainer", functools.partial(Trainer, callbacks=[CtrlCAt(6)]))
        assert start_run(tiny_spec(), out,
                                 showcase=()) is None
    assert sigint_guard == []  # the Trainer caught it
    assert signal.getsignal(signal.SIGINT) is before  # and gave the handler back
    assert f"interrupted at step 6: saved {out / 'last.npz'}" in capsys.readouterr().out
    assert mg.load(out / "last.npz")["step"] == 6  # not a checkpoint step: saved for Ctrl-C
    assert read_records(out)[-1]["step"] == 6
    assert not (out / "metrics.json").exists()

    metrics = resume_run(out, showcase=())  # as --resume does

    assert_same_training_state(mg.load(out / "last.npz"), mg.load(straight / "last.npz"))
    assert_bitwise_equal(mg.load(out / "best.npz")["model"],
                         mg.load(straight / "best.npz")["model"])
    # metrics.jsonl was appended to: the records of both parts, as the straight run's
    assert [without_timing(r) for r in read_records(out)] == \
        [without_timing(r) for r in read_records(straight)]
    assert without_timing(metrics) == without_timing(straight_metrics)


def test_a_second_ctrl_c_stops_at_once(sigint_guard):
    before = signal.getsignal(signal.SIGINT)
    trainer = build_trainer(steps=20, callbacks=[CtrlCAt(3, times=2)])
    with pytest.raises(KeyboardInterrupt):
        trainer.train()
    assert trainer.step == 3
    assert signal.getsignal(signal.SIGINT) is before


# ----- NaN and Inf ----------------------------------------------------------------------------

class Poison(Callback):
    """At `step`, copies the bytes of last.npz (the last good checkpoint), then breaks the run:
    `where="weights"` sets every weight to NaN after the step (so the next loss is NaN),
    `where="gradient"` sets one gradient entry to `value` before clipping."""

    def __init__(self, step, where, value=math.nan):
        self.step, self.where, self.value = step, where, value
        self.last_good = None

    def _remember(self, trainer):
        self.last_good = trainer.folder.checkpoint("last").read_bytes()

    def on_backward_end(self, trainer, step, batch):
        if step == self.step and self.where == "gradient":
            self._remember(trainer)
            trainer.parameters[0].grad.data.flat[0] = self.value

    def on_step_end(self, trainer, step, record):
        if step == self.step and self.where == "weights":
            self._remember(trainer)
            for parameter in trainer.parameters:
                parameter.data[...] = math.nan


def assert_last_good_checkpoint_kept(folder, poison, step):
    last = folder / "last.npz"
    assert last.read_bytes() == poison.last_good
    state = mg.load(last)
    assert state["step"] == step
    assert all(np.isfinite(w.numpy()).all() for w in state["model"].values())


def test_a_nan_loss_stops_with_a_clear_message_and_keeps_last_npz(tmp_path):
    poison = Poison(step=3, where="weights")  # last.npz is from step 2; step 4's loss is NaN
    trainer = build_trainer(tmp_path, steps=8, checkpoint_every=2, callbacks=[poison])
    with pytest.raises(NonFiniteLossError) as raised:
        trainer.train()
    message = str(raised.value)
    assert message.startswith("step 4: the loss is nan; training stopped")
    assert f"the last good checkpoint ({tmp_path / 'last.npz'}) was kept" in message
    assert "lr_factor" in message  # what to try
    assert_last_good_checkpoint_kept(tmp_path, poison, step=2)


@pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning")  # inf * 0
@pytest.mark.parametrize("value", [math.inf, math.nan])
def test_a_non_finite_gradient_stops_before_the_weights_or_a_checkpoint_see_it(tmp_path,
                                                                                  value):
    poison = Poison(step=4, where="gradient", value=value)  # step 4 would save last.npz
    trainer = build_trainer(tmp_path, steps=8, checkpoint_every=2, callbacks=[poison])
    with pytest.raises(NonFiniteLossError, match=f"step 4: the gradient norm is {value}"):
        trainer.train()
    assert all(np.isfinite(p.numpy()).all() for p in trainer.model.parameters())
    assert_last_good_checkpoint_kept(tmp_path, poison, step=2)


def test_a_nan_before_any_checkpoint_says_there_is_none():
    class PoisonFirstStep(Callback):
        def on_backward_end(self, trainer, step, batch):
            trainer.parameters[0].grad.data.flat[0] = math.nan

    trainer = build_trainer(callbacks=[PoisonFirstStep()])
    with pytest.raises(NonFiniteLossError, match="no checkpoint had been saved yet"):
        trainer.train()


# ----- the run folder -------------------------------------------------------------------------

def small_toy_en_es(name, data=None, seed=0, skip_bad_lines=False):
    """The toy-en-es task, drawn smaller (the full 50,000 pairs take seconds to draw)."""
    assert name == "toy-en-es" and data is None
    return toy_en_es(seed, n_train=1000, n_valid=20, n_test=20, n_compositional=20,
                     n_cross=18, n_long=10)


def test_the_run_folder_holds_what_conventions_say(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(builders, "load_task", small_toy_en_es)
    out = tmp_path / "run"
    training = tiny_training(steps=6, eval_every=3, checkpoint_every=3, log_every=2)
    metrics = start_run(tiny_spec("toy-en-es", **training), out, showcase=())
    assert sorted(p.name for p in out.iterdir()) == [
        "best.npz", "config.json", "curves.png", "last.npz", "metrics.json", "metrics.jsonl",
        "samples.jsonl", "vocab.json"]
    folder = RunFolder(out)

    config = folder.read_json("config.json")
    assert config["task"] == {"name": "toy-en-es", "data": None, "skip_bad_lines": False}
    assert config["tokenizer"] == {"subword": None, "pieces": None, "digest": None}
    splits = small_toy_en_es("toy-en-es")
    vocab = build_vocab(splits)
    assert TransformerConfig.from_dict(config["model"]) == \
        build_model_config(vocab, splits, TINY_MODEL)
    assert TrainingConfig.from_dict(config["training"]) == TrainingConfig(**training)
    assert config["monitors"] == {"samples": 3, "record_flow_every": 0, "tensorboard": None}
    assert folder.vocab() == vocab

    records = read_records(out)
    train = [r for r in records if r["split"] == "train"]
    valid = [r for r in records if r["split"] == "valid"]
    assert [r["step"] for r in train] == [2, 4, 6]
    assert [r["step"] for r in valid] == [3, 6]
    assert all(r.keys() == TRAIN_KEYS for r in train)
    assert all(VALID_KEYS <= r.keys() for r in valid)
    times = [r["time_s"] for r in records]
    assert times == sorted(times)

    last, best = mg.load(out / "last.npz"), mg.load(out / "best.npz")
    assert set(last) == {"model", "optimizer", "optimizer_class", "scheduler", "rng", "data",
                         "step", "best", "best_step", "train_seconds", "wall_seconds",
                         "model_config", "vocab_digest"}
    assert last["model_config"] == config["model"] and last["vocab_digest"] == vocab.digest()
    assert last["step"] == 6 and last["data"]["position"] == 6
    best_record = max(valid, key=lambda r: (r["exact_match"], r["bleu"], r["step"]))
    assert best["step"] == best_record["step"]
    assert_bitwise_equal(folder.load_model("last").state_dict(), last["model"])

    assert json.loads((out / "metrics.json").read_text()) == metrics
    assert {"test_exact_match", "test_bleu", "compositional_exact_match",
            "compositional_bleu", "cross_construction_exact_match", "phenomena",
            "cross_construction_pairs", "train_seconds", "long_exact_match",
            "long_agreement_errors", "long_repeated_clauses"} <= metrics.keys()
    printed = capsys.readouterr().out
    assert f"long: exact match {metrics['long_exact_match']:.4f}" in printed
    assert (f"wrong: {metrics['long_agreement_errors']} with an agreement error only, "
            f"{metrics['long_repeated_clauses']} with a repeated clause, of 10 sentences"
            in printed)
    assert set(metrics["phenomena"]) == {e.phenomenon for e in splits["test"]}
    assert set(metrics["cross_construction_pairs"]) == HELD_OUT_FEATURE_PAIRS
    assert_bitwise_equal(Translator.from_checkpoint(out).model.state_dict(), best["model"])


def test_the_progress_bar_starts_no_thread_of_its_own():
    """tqdm's monitor thread would keep minigrad from stopping OpenBLAS's spinning workers
    before the optimizer step (minigrad/backend/blas_threads.py)."""
    pytest.importorskip("tqdm")
    before = set(threading.enumerate())
    bar = build_trainer(progress=True)._progress_bar()
    try:
        bar.update(1)
        assert set(threading.enumerate()) == before
    finally:
        bar.close()
