"""A training run, start to end: a new run (`start_run`: its RunSpec checked -> data ->
vocabulary -> model -> run folder) or a resumed one (`resume_run`: the run folder's own RunSpec
and last.npz), then the same training and final report, leaving a complete run folder. The
example scripts parse their flags into a RunSpec (transformer.options) and call these; the
pieces come from `builders`."""

from __future__ import annotations

import base64
import dataclasses
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import minigrad as mg
from minigrad.backend import get_backend
from minigrad.distributed import SingleProcess

from .builders import build_model_config, build_tokenizer, build_vocab, load_splits, unknown_rate
from .data import WORDS, Vocab
from .data.batching import BatchIterator, encode_pairs
from .data.errors import agreement_error, repeated_clause
from .errors import ConfigError, ResumeConflict
from .evaluation import evaluate
from .model import Transformer
from .monitoring import check_monitors, log_final, monitored
from .options import conflicts, resumable_text
from .run_folder import RunFolder
from .run_spec import RunSpec
from .training import Trainer

# Sentences of the source articles, shown after training (they are in the toy grammar).
SHOWCASE = ["the ball is blue", "the black cat drank the milk",
            "the animal didn't cross the street because it was too tired"]


def start_run(spec: RunSpec, out, overwrite=False, device="cpu", communicator=None,
              showcase=SHOWCASE) -> dict | None:
    """Train the run `spec` into the run folder `out` on `device` (its model is moved there;
    the process's default device is left as it is), then evaluate the best checkpoint on
    every held-out split. Returns the final metrics (also metrics.json), or None when
    training was interrupted (Ctrl-C, the time limit: `resume_run` continues it).

    Everything is checked before anything is written: the spec (when it was made), the
    device, the folder (a folder that already holds a run is refused with ConfigError, unless
    `overwrite`: it is replaced whole once the new run is ready), what the monitors need
    (their extras, a TensorBoard folder that is one and can be written), the data, the
    tokenizer, the model on the device. Then the run folder is written whole, with
    config.json (the spec, the model and tokenizer resolved) and the step-0 state.

    With a `communicator` of several ranks (minigrad.distributed), every rank runs this with
    the same arguments and reads the data; rank 0 alone writes the run folder, prints, and
    evaluates at the end (the other ranks return {})."""
    communicator = communicator if communicator is not None else SingleProcess()
    folder = RunFolder(out)
    chief = communicator.rank == 0
    get_backend(device)  # the device is there (a DeviceError of one line, if not)
    if spec.task.data is not None:
        spec = spec.with_changes({"task.data": str(Path(spec.task.data).resolve())})
    if chief:
        folder.check_new_run(overwrite)
        check_monitors(spec.monitors)
    splits = load_splits(spec.task.name, spec.task.data, spec.training.seed,
                         spec.task.skip_bad_lines)
    tokenizer = build_tokenizer(splits, spec.tokenizer.subword)
    vocab = build_vocab(splits, tokenizer)
    spec = dataclasses.replace(
        spec, model=build_model_config(vocab, splits, spec.model, tokenizer).to_dict(),
        tokenizer=dataclasses.replace(spec.tokenizer, **_trained(tokenizer)))
    trainer = _trainer(out, spec, splits, vocab, tokenizer, device, communicator)
    if chief:
        folder.create(lambda staging: _write_first_state(staging, spec, trainer), overwrite)
    return _train_and_report(trainer, folder, splits, spec, showcase)


def resume_run(out, changes: Mapping[str, Any] | None = None, device="cpu", communicator=None,
               showcase=SHOWCASE) -> dict | None:
    """Continue the run in `out` from its last.npz with its own RunSpec and `changes`
    ({RunSpec path: value}, e.g. {"training.steps": 8000}), which may change only the fields
    of `options.RESUMABLE`: a change of another field raises ResumeConflict (one line, the
    flags named) with nothing changed. Then train and report as `start_run`; a finished run
    is left as it is. The changes hold for this session: config.json keeps the spec the run
    was started with."""
    communicator = communicator if communicator is not None else SingleProcess()
    folder = RunFolder(out)
    chief = communicator.rank == 0
    get_backend(device)  # the device is there (a DeviceError of one line, if not)
    saved = communicator.broadcast_object(_saved_run(folder, changes or {}) if chief else None,
                                          what="the broadcast of the run's configuration")
    spec = RunSpec.from_dict(saved["spec"])
    if chief:
        check_monitors(spec.monitors)
    vocab, tokenizer = Vocab.from_record(saved["vocab"]), _tokenizer(saved["tokenizer"])
    splits = load_splits(spec.task.name, spec.task.data, spec.training.seed,
                         spec.task.skip_bad_lines)
    trainer = _trainer(out, spec, splits, vocab, tokenizer, device, communicator)
    state = _last_checkpoint(folder, spec, vocab, trainer.model.device, communicator)
    if saved["finished"]:
        if chief:
            print(f"{folder.path} has finished its {state['step']} steps; nothing to do "
                  "(give --steps with a larger number to train longer)")
        return folder.read_json("metrics.json") if chief else {}
    resumed_from = trainer.resume(state)
    if chief:
        folder.truncate_records(resumed_from)
        print(f"resuming {folder.path} from step {resumed_from} of {spec.training.steps}")
    return _train_and_report(trainer, folder, splits, spec, showcase)


def _trained(tokenizer) -> dict[str, Any]:
    """What a trained subword tokenizer adds to the spec: its pieces per side and digest."""
    if tokenizer.kind != "subword":
        return {}
    described = tokenizer.describe()
    return {"pieces": described["pieces"], "digest": described["digest"]}


def _trainer(out, spec, splits, vocab, tokenizer, device, communicator):
    """The run's Trainer: its model drawn from the run's seed (on the CPU, then moved to
    `device`), its batches of the train split."""
    mg.manual_seed(spec.training.seed)
    model = Transformer(spec.model_config())
    model.to(device)
    batches = BatchIterator(encode_pairs(splits["train"], vocab, tokenizer), vocab,
                            spec.training.batch_size, seed=spec.training.seed,
                            target_dropout=spec.training.target_dropout, device=model.device)
    return Trainer(model, batches, splits["valid"], vocab, spec.training, out=out,
                   tokenizer=tokenizer, communicator=communicator)


def _write_first_state(staging, spec, trainer) -> None:
    """A new run's first files, into its staging folder: config.json, vocab.json, the
    tokenizer's models, an empty metrics.jsonl and the step-0 last.npz."""
    staging.write_json("config.json", spec.to_dict())
    trainer.vocab.save(staging.file("vocab.json"))
    staging.write_tokenizer(trainer.tokenizer)
    staging.file("metrics.jsonl").touch()
    mg.save(trainer.state_dict(), staging.checkpoint("last"))


def _train_and_report(trainer, folder, splits, spec, showcase):
    """Train with the run's monitors, then (rank 0) evaluate best.npz on the held-out splits:
    the final metrics, None when interrupted, {} on the other ranks."""
    with monitored(trainer, splits["valid"], spec.monitors):
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
    metrics = final_report(folder, splits, trainer.train_seconds,
                           showcase if spec.task.name == "toy-en-es" else (), trainer.best_step)
    if spec.monitors.tensorboard is not None:
        log_final(spec.monitors.tensorboard, folder, metrics, trainer.step)
    return metrics


def _saved_run(folder, changes) -> dict[str, Any]:
    """What a resumed run needs from its folder, as JSON: its spec with `changes`
    (`resumed_spec`), vocabulary and tokenizer, and whether it has finished."""
    spec = resumed_spec(folder, changes)
    vocab, tokenizer = folder.vocab(), folder.tokenizer()
    state = folder.read_checkpoint("last", spec.model_config(), vocab)
    models = getattr(tokenizer, "models", None)  # a subword run's SentencePiece models
    return {"spec": spec.to_dict(), "vocab": vocab.to_record(),
            "tokenizer": None if models is None else
            {side: base64.b64encode(model).decode("ascii") for side, model in models.items()},
            "finished": state["step"] >= spec.training.steps
            and folder.file("metrics.json").exists()}


def resumed_spec(folder, changes: Mapping[str, Any]) -> RunSpec:
    """The RunSpec of the run in `folder` with `changes` ({path: value}); ResumeConflict
    naming each change outside options.RESUMABLE (a data path is compared absolute)."""
    if not folder.holds_run() or not folder.file("config.json").exists():
        raise ConfigError(f"there is no training run in {folder.path} to resume; start one "
                          "without --resume")
    spec = folder.spec()
    changes = {path: str(Path(value).resolve()) if path == "task.data" else value
               for path, value in changes.items()}
    refused = conflicts(spec, changes)
    if refused:
        raise ResumeConflict(folder.path, refused, resumable_text())
    return spec.with_changes(changes)


def _tokenizer(models):
    """The tokenizer of `_saved_run`'s record: word-level, or the two SentencePiece models."""
    if models is None:
        return WORDS
    from .data.subword import SubwordTokenizer

    return SubwordTokenizer(base64.b64decode(models["source"]),
                            base64.b64decode(models["target"]))


def _last_checkpoint(folder, spec, vocab, device, communicator):
    """The state of `folder`'s last.npz, read on rank 0 and sent to the other ranks (which
    need no access to the folder)."""
    if communicator.world_size == 1:
        return folder.read_checkpoint("last", spec.model_config(), vocab, device=device)
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
