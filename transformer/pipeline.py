"""A training run, start to end: a new run (`start_run`: data -> vocabulary -> model -> run
folder) or a resumed one (`resume_run`: the run folder's own configuration and last.npz), then
the same training and final report, leaving a complete run folder. `train_translation` is
either; the example scripts only parse flags and call it. The pieces come from `builders`."""

from __future__ import annotations

import base64
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

import minigrad as mg
from minigrad.distributed import SingleProcess
from minigrad.errors import ConfigError

from .builders import build_model_config, build_tokenizer, build_vocab, load_splits, unknown_rate
from .config import TransformerConfig
from .data import WORDS, Vocab
from .data.batching import BatchIterator, encode_pairs
from .data.errors import agreement_error, repeated_clause
from .evaluation import evaluate
from .main_job import MAIN_JOB
from .model import Transformer
from .monitoring import monitored
from .run_folder import RunFolder
from .training import Trainer, TrainingConfig

# What a resumed run may change: how long it goes on and how it reports (nothing that would
# make it differ from an uninterrupted run of the same length).
RESUMABLE_OPTIONS = ("steps", "time_limit_s", "eval_every", "checkpoint_every", "sync_every",
                     "accumulate", "progress", "log_every", "samples", "record_flow_every")


class ResumeConflict(ConfigError):
    """Options given to a resumed run that differ from the run's own: `conflicts` holds
    (name, given, saved) for each."""

    def __init__(self, folder, conflicts) -> None:
        self.conflicts = conflicts
        listed = "; ".join(f"{name} {given!r} (the run has {saved!r})"
                           for name, given, saved in conflicts)
        super().__init__(f"{folder} was started with other options than these: {listed}. A "
                         f"resumed run may change only {', '.join(RESUMABLE_OPTIONS)}; drop "
                         "the others, or start a new run (--overwrite or another --out)")


# Sentences of the source articles, shown after training (they are in the toy grammar).
SHOWCASE = ["the ball is blue", "the black cat drank the milk",
            "the animal didn't cross the street because it was too tired"]


def train_translation(task, out, model_options=None, training_options=None, data=None,
                      resume=False, overwrite=False, device=None, showcase=SHOWCASE,
                      subword=None, skip_bad_lines=False, communicator=None,
                      tensorboard=None) -> dict | None:
    """Train on `task` (None: the main job's, or with `resume` the run's own) into run folder
    `out`, then evaluate the best checkpoint on every held-out split. Returns the final
    metrics (also metrics.json), or None when training was interrupted. `subword` (pieces
    per language) trains SentencePiece models on the train split instead of the word-level
    tokenizer; they are saved in the run folder. `skip_bad_lines` leaves out the bad lines of
    a pairs file instead of refusing it (a resumed run keeps its own choice). The run's
    monitors (`transformer.monitoring.monitored`) show sample translations, record the
    gradient flow as its training options say, and log to TensorBoard into the folder
    `tensorboard` when given one.

    A folder that already holds a run is refused (ConfigError) unless `resume` (continue it:
    its saved configuration holds, and options given that differ from it raise
    ResumeConflict, except RESUMABLE_OPTIONS) or `overwrite` (replace it whole, once
    everything of the new run has been checked). Every option and input is checked before
    anything is written.

    With a `communicator` of several ranks (minigrad.distributed), every rank runs this with
    the same arguments and reads the data; rank 0 alone reads and writes the run folder (what
    a resumed run needs is broadcast from it), prints, and evaluates at the end (the other
    ranks return {})."""
    if resume:
        return resume_run(out, task, model_options, training_options, data, device, showcase,
                          subword, communicator, tensorboard)
    return start_run(task, out, model_options, training_options, data, overwrite, device,
                     showcase, subword, skip_bad_lines, communicator, tensorboard)


def start_run(task, out, model_options=None, training_options=None, data=None,
              overwrite=False, device=None, showcase=SHOWCASE, subword=None,
              skip_bad_lines=False, communicator=None, tensorboard=None) -> dict | None:
    """A new run (`train_translation` without `resume`): everything checked and built, the
    run folder written whole with its step-0 state, then trained and reported."""
    communicator, folder = _setup(out, device, communicator)
    if communicator.rank == 0:
        folder.check_new_run(overwrite)
    task = task or MAIN_JOB.task
    training_config = TrainingConfig(**(training_options or {}))
    splits = load_splits(task, data, training_config.seed, skip_bad_lines)
    tokenizer = build_tokenizer(splits, subword)
    vocab = build_vocab(splits, tokenizer)
    model_config = build_model_config(vocab, splits, model_options, tokenizer)
    trainer = _trainer(out, model_config, training_config, splits, vocab, tokenizer,
                       communicator)
    if communicator.rank == 0:
        described = tokenizer.describe()
        if subword is not None:
            described["size"] = subword
        config = {"task": {"name": task, "data": None if data is None else
                           str(Path(data).resolve()), "skip_bad_lines": skip_bad_lines},
                  "tokenizer": described, "model": model_config.to_dict(),
                  "training": asdict(training_config)}
        folder.create(lambda staging: _write_first_state(staging, config, trainer), overwrite)
    return _train_and_report(trainer, folder, splits, task, showcase, tensorboard)


def resume_run(out, task=None, model_options=None, training_options=None, data=None,
               device=None, showcase=SHOWCASE, subword=None, communicator=None,
               tensorboard=None) -> dict | None:
    """Continue the run in `out` (`train_translation` with `resume`) from its last.npz, with
    its own configuration (ResumeConflict for options given that differ from it, but
    RESUMABLE_OPTIONS), then train and report; a finished run is left as it is."""
    communicator, folder = _setup(out, device, communicator)
    chief = communicator.rank == 0
    saved = communicator.broadcast_object(
        _saved_run(folder, task, data, model_options, training_options, subword)
        if chief else None, what="the broadcast of the run's configuration")
    model_config = TransformerConfig.from_dict(saved["model"])
    training_config = TrainingConfig.from_dict(saved["training"])
    vocab, tokenizer = Vocab.from_record(saved["vocab"]), _tokenizer(saved["tokenizer"])
    splits = load_splits(saved["task"], saved["data"], training_config.seed,
                         saved["skip_bad_lines"])
    trainer = _trainer(out, model_config, training_config, splits, vocab, tokenizer,
                       communicator)
    state = _last_checkpoint(folder, model_config, vocab, trainer.model.device, communicator)
    if saved["finished"]:
        if chief:
            print(f"{folder.path} has finished its {state['step']} steps; nothing to do "
                  "(give --steps with a larger number to train longer)")
        return folder.read_json("metrics.json") if chief else {}
    resumed_from = trainer.resume(state)
    if chief:
        folder.truncate_records(resumed_from)
        print(f"resuming {folder.path} from step {resumed_from} of {training_config.steps}")
    return _train_and_report(trainer, folder, splits, saved["task"], showcase, tensorboard)


def _setup(out, device, communicator):
    """(the communicator, one process by default; the RunFolder of `out`), with `device` as
    the default device."""
    if device is not None:
        mg.set_default_device(device)
    return communicator if communicator is not None else SingleProcess(), RunFolder(out)


def _trainer(out, model_config, training_config, splits, vocab, tokenizer, communicator):
    """The run's Trainer: its model drawn from the run's seed, its batches of the train
    split."""
    mg.manual_seed(training_config.seed)
    model = Transformer(model_config)
    batches = BatchIterator(encode_pairs(splits["train"], vocab, tokenizer), vocab,
                            training_config.batch_size, seed=training_config.seed,
                            target_dropout=training_config.target_dropout, device=model.device)
    return Trainer(model, batches, splits["valid"], vocab, training_config, out=out,
                   tokenizer=tokenizer, communicator=communicator)


def _write_first_state(staging, config, trainer) -> None:
    """A new run's first files, into its staging folder: config.json, vocab.json, the
    tokenizer's models, an empty metrics.jsonl and the step-0 last.npz."""
    staging.write_json("config.json", config)
    trainer.vocab.save(staging.file("vocab.json"))
    staging.write_tokenizer(trainer.tokenizer)
    staging.file("metrics.jsonl").touch()
    mg.save(trainer.state_dict(), staging.checkpoint("last"))


def _train_and_report(trainer, folder, splits, task, showcase, tensorboard=None):
    """Train with the run's monitors, then (rank 0) evaluate best.npz on the held-out splits:
    the final metrics, None when interrupted, {} on the other ranks."""
    with monitored(trainer, splits["valid"], tensorboard):
        finished = trainer.train()
    if not finished:
        return None
    if not trainer.chief:
        return {}
    best = "" if trainer.best_step is None else \
        f"; best checkpoint: step {trainer.best_step} (validation exact match " \
        f"{trainer.best[0]:.4f})"
    print(f"trained {trainer.step} steps in {trainer.train_seconds:.0f} s (wall "
          f"{trainer.wall_seconds:.0f} s){best}")
    return final_report(folder, splits, trainer.train_seconds,
                        showcase if task == "toy-en-es" else (), trainer.best_step)


def _saved_run(folder, task, data, model_options, training_options, subword):
    """What a resumed run needs from its folder, as JSON: its configuration (with the
    RESUMABLE_OPTIONS given), vocabulary and tokenizer, and whether it has finished."""
    task, data, model_config, training_config = resumed_configuration(
        folder, task, data, model_options, training_options, subword)
    vocab, tokenizer = folder.vocab(), folder.tokenizer()
    state = folder.read_checkpoint("last", model_config, vocab)
    models = getattr(tokenizer, "models", None)  # a subword run's SentencePiece models
    return {"task": task, "data": data,
            "skip_bad_lines": folder.config()["task"].get("skip_bad_lines", False),
            "model": model_config.to_dict(), "training": asdict(training_config),
            "vocab": vocab.to_record(),
            "tokenizer": None if models is None else
            {side: base64.b64encode(model).decode("ascii") for side, model in models.items()},
            "finished": state["step"] >= training_config.steps
            and folder.file("metrics.json").exists()}


def _tokenizer(models):
    """The tokenizer of `_saved_run`'s record: word-level, or the two SentencePiece models."""
    if models is None:
        return WORDS
    from .data.subword import SubwordTokenizer

    return SubwordTokenizer(base64.b64decode(models["source"]),
                            base64.b64decode(models["target"]))


def _last_checkpoint(folder, model_config, vocab, device, communicator):
    """The state of `folder`'s last.npz, read on rank 0 and sent to the other ranks (which
    need no access to the folder)."""
    if communicator.world_size == 1:
        return folder.read_checkpoint("last", model_config, vocab, device=device)
    path = folder.checkpoint("last")
    data = communicator.broadcast_bytes(path.read_bytes() if communicator.rank == 0 else b"",
                                        what="the broadcast of last.npz")
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "last.npz"
        copy.write_bytes(data)
        return mg.load(copy, device=device)


def _long_errors(examples, outputs) -> dict[str, int]:
    """The long split's wrong translations of two kinds (data/errors.py), counted."""
    pairs = [(output, example.tgt) for example, output in zip(examples, outputs)]
    return {"long_agreement_errors": sum(agreement_error(*pair) for pair in pairs),
            "long_repeated_clauses": sum(repeated_clause(*pair) for pair in pairs)}


def resumed_configuration(folder, task, data, model_options, training_options, subword=None,
                          ) -> tuple[Any, Any, TransformerConfig, TrainingConfig]:
    """(task, data, model config, training config) of the run in `folder`, with the
    RESUMABLE_OPTIONS of `training_options`; ResumeConflict for any other option given with
    a value other than the run's."""
    if not folder.holds_run() or not folder.file("config.json").exists():
        raise ConfigError(f"there is no training run in {folder.path} to resume; start one "
                          "without --resume")
    saved = folder.config()
    saved_task = saved.get("task", {})
    model_config = folder.model_config()
    conflicts = []
    if task is not None and task != saved_task.get("name"):
        conflicts.append(("task", task, saved_task.get("name")))
    if data is not None and str(Path(data).resolve()) != saved_task.get("data"):
        conflicts.append(("data", str(data), saved_task.get("data")))
    saved_subword = saved.get("tokenizer", {}).get("size")
    if subword is not None and subword != saved_subword:
        conflicts.append(("subword", subword, saved_subword))
    for name, value in (model_options or {}).items():
        if getattr(model_config, name) != value:
            conflicts.append((name, value, getattr(model_config, name)))
    saved_training = saved.get("training", {})
    for name, value in (training_options or {}).items():
        if name not in RESUMABLE_OPTIONS and saved_training.get(name) != value:
            conflicts.append((name, value, saved_training.get(name)))
    if conflicts:
        raise ResumeConflict(folder.path, conflicts)
    training_config = TrainingConfig.from_dict({**saved_training, **{
        name: value for name, value in (training_options or {}).items()
        if name in RESUMABLE_OPTIONS}})
    return saved_task.get("name"), saved_task.get("data"), model_config, training_config


def final_report(folder, splits, train_seconds, showcase=(), best_step=None) -> dict[str, Any]:
    """Evaluate best.npz on the test, compositional, cross-construction (also per held-out
    feature pair) and long splits (also its agreement errors and repeated clauses); write and
    return metrics.json."""
    model, vocab, tokenizer = folder.load_model("best"), folder.vocab(), folder.tokenizer()
    metrics = {"train_seconds": round(train_seconds, 1), "best_step": best_step}
    for split in ("test", "compositional", "cross_construction", "long"):
        if split not in splits or not splits[split]:
            continue
        result = evaluate(model, splits[split], vocab, device=model.device, tokenizer=tokenizer,
                          outputs=split == "long")
        result["unknown_rate"] = unknown_rate(splits[split], vocab, tokenizer)
        for name in ("exact_match", "bleu", "chrf", "token_accuracy", "max_length_ratio",
                     "unknown_rate"):
            metrics[f"{split}_{name}"] = result[name]
        if split == "test":
            metrics["phenomena"] = result["phenomena"]
        if split == "cross_construction":
            metrics["cross_construction_pairs"] = result["phenomena"]
        unknown = f"  unknown tokens {result['unknown_rate']:.2%}" if result["unknown_rate"] \
            else ""
        print(f"{split:>18}: exact match {result['exact_match']:.4f}  "
              f"BLEU {result['bleu']:.2f}  chrF {result['chrf']:.1f}  "
              f"token accuracy {result['token_accuracy']:.4f}  "
              f"longest output {result['max_length_ratio']:.2f}x its reference{unknown}")
        if split == "long":
            metrics.update(_long_errors(splits[split], result["outputs"]))
            print(f"{'':>18}  wrong: {metrics['long_agreement_errors']} with an agreement "
                  f"error only, {metrics['long_repeated_clauses']} with a repeated clause, of "
                  f"{len(splits[split])} sentences")
    for name, value in {**metrics.get("phenomena", {}),
                        **metrics.get("cross_construction_pairs", {})}.items():
        print(f"    {name:<36} exact match {value:.4f}")
    folder.write_json("metrics.json", metrics)
    known = [s for s in showcase if not vocab.unknown(tokenizer.source(s))]
    if known:
        from .translator import Translator

        translator = Translator(model, vocab, tokenizer)
        for sentence, translation in zip(known, translator.translate(known)):
            print(f"  {sentence}  ->  {translation}")
    return metrics
