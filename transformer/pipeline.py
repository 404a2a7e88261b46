"""The main job as one function: data -> vocabulary -> model -> Trainer -> final evaluation,
leaving a complete run folder. The example scripts only parse flags and call this."""

import time
from dataclasses import asdict

import minigrad as mg

from .config import TransformerConfig
from .data import Vocab, load_task, tokenize
from .data.batching import BatchIterator, encode_pairs
from .evaluation import evaluate
from .model import Transformer
from .run_folder import RunFolder
from .training import Trainer, TrainingConfig

# What a resumed run may change: how long it goes on and how it reports (nothing that would
# make it differ from an uninterrupted run of the same length).
RESUMABLE_OPTIONS = ("steps", "time_limit_s", "progress")

# Sentences of the source articles, shown after training (they are in the toy grammar).
SHOWCASE = ["the ball is blue", "the black cat drank the milk",
            "the animal didn't cross the street because it was too tired"]


# The main job's model (the defaults of examples/train_translation.py): CPU-sized.
MAIN_JOB_MODEL = {"d_model": 64, "n_heads": 4, "n_encoder_layers": 2, "n_decoder_layers": 2,
                  "d_ff": 256, "dropout": 0.1}


def build_vocab(splits):
    """The joint vocabulary of a task, from the source and target tokens of its train split."""
    return Vocab.build([tokenize(e.src) + tokenize(e.tgt) for e in splits["train"]])


def build_model_config(vocab, splits, model_options=None):
    """The TransformerConfig of a run on `splits`: one joint vocabulary with shared embeddings,
    max_len fitting the longest pair, the main job's sizes (MAIN_JOB_MODEL), then
    `model_options` (TransformerConfig fields) on top."""
    longest = max(len(tokenize(e.src)) + len(tokenize(e.tgt)) for s in splits.values()
                  for e in s)
    return TransformerConfig(len(vocab), len(vocab), **{
        "share_embeddings": True, "max_len": max(64, 2 * longest + 16), **MAIN_JOB_MODEL,
        **(model_options or {})})


def fresh_setup(task="toy-en-es", model_options=None, seed=0, data=None):
    """(vocab, model config) of a new run of `task`, as train_translation builds them (model
    options default to the main job's, MAIN_JOB_MODEL); no model, no folder."""
    splits = load_task(task, data=data, seed=seed)
    vocab = build_vocab(splits)
    return vocab, build_model_config(vocab, splits, model_options)


def train_translation(task, out, model_options=None, training_options=None, data=None,
                      resume=False, device=None, showcase=SHOWCASE):
    """Train on `task` into run folder `out` (or continue it with `resume`: the saved
    configuration holds, except RESUMABLE_OPTIONS given in `training_options`), then evaluate
    the best checkpoint on every held-out split. Returns the final metrics (also
    metrics.json), or None when training was interrupted."""
    folder = RunFolder(out)
    if device is not None:
        mg.set_default_device(device)
    if resume:
        saved = folder.read_json("config.json")
        task, data = saved["task"]["name"], saved["task"]["data"]
        model_config = TransformerConfig.from_dict(saved["model"])
        training_config = TrainingConfig.from_dict({**saved["training"], **{
            k: v for k, v in (training_options or {}).items() if k in RESUMABLE_OPTIONS}})
    else:
        training_config = TrainingConfig(**(training_options or {}))
    mg.manual_seed(training_config.seed)
    splits = load_task(task, data=data, seed=training_config.seed)
    if resume:
        vocab = folder.vocab()
    else:
        vocab = build_vocab(splits)
        model_config = build_model_config(vocab, splits, model_options)
        folder.write_json("config.json", {"task": {"name": task, "data": data and str(data)},
                                          "model": model_config.to_dict(),
                                          "training": asdict(training_config)})
        vocab.save(folder.file("vocab.json"))
        folder.file("metrics.jsonl").unlink(missing_ok=True)

    model = Transformer(model_config)
    batches = BatchIterator(encode_pairs(splits["train"], vocab), vocab,
                            training_config.batch_size, seed=training_config.seed)
    trainer = Trainer(model, batches, splits["valid"], vocab, training_config, out=out)
    if resume:
        trainer.resume()
    started = time.perf_counter()
    finished = trainer.train()
    if not finished:
        return None
    print(f"trained {trainer.step} steps in {trainer.train_seconds:.0f} s "
          f"(wall {time.perf_counter() - started:.0f} s)")
    return final_report(folder, splits, trainer.train_seconds, showcase)


def final_report(folder, splits, train_seconds, showcase=()):
    """Evaluate best.npz on the test, compositional and cross-construction splits (that one
    also per held-out feature pair); write and return metrics.json."""
    model, vocab = folder.load_model("best"), folder.vocab()
    metrics = {"train_seconds": round(train_seconds, 1)}
    for split in ("test", "compositional", "cross_construction"):
        if split not in splits or not splits[split]:
            continue
        result = evaluate(model, splits[split], vocab)
        for name in ("exact_match", "bleu", "token_accuracy", "max_length_ratio"):
            metrics[f"{split}_{name}"] = result[name]
        if split == "test":
            metrics["phenomena"] = result["phenomena"]
        if split == "cross_construction":
            metrics["cross_construction_pairs"] = result["phenomena"]
        print(f"{split:>18}: exact match {result['exact_match']:.4f}  "
              f"BLEU {result['bleu']:.2f}  token accuracy {result['token_accuracy']:.4f}  "
              f"longest output {result['max_length_ratio']:.2f}x its reference")
    for name, value in {**metrics.get("phenomena", {}),
                        **metrics.get("cross_construction_pairs", {})}.items():
        print(f"    {name:<36} exact match {value:.4f}")
    folder.write_json("metrics.json", metrics)
    known = [s for s in showcase if not vocab.unknown(tokenize(s))]
    if known:
        from .translator import Translator

        translator = Translator(model, vocab)
        for sentence, translation in zip(known, translator.translate(known)):
            print(f"  {sentence}  ->  {translation}")
    return metrics
