"""The training step of a run as start_run would start it: the task's own batches,
vocabulary (word-level or `--subword N`) and the main job's model. What a step of a real
corpus costs, where `train_step.py` times synthetic batches of fixed sizes.

    python benchmarks/task_step.py --task en-es-bible --subword 4000 --steps 12
    python benchmarks/task_step.py --task en-es-bible --steps 8 [--json]
    python benchmarks/task_step.py --steps 400 --record-flow 100   # the flow recorder's cost

With --record-flow N the gradient-flow recorder samples every N-th step into a run folder's
flow.jsonl, as `train_translation.py --record-flow N` does; its cost is in the mean step
(`mean_ms`; the median leaves out the sampled steps), so time a multiple of N steps.
"""

import dataclasses
import json
import statistics
import tempfile
import time
from contextlib import ExitStack

import minigrad as mg
from transformer import cli
from transformer.builders import build_model_config, build_tokenizer, build_vocab, load_splits
from transformer.data import DATA_TASKS, TASKS
from transformer.data.batching import BatchIterator, encode_pairs
from transformer.main_job import MAIN_JOB
from transformer.model import Transformer
from transformer.monitoring import FlowRecording
from transformer.training import Trainer


def step_times(task, subword, steps, warmup, data=None, record_flow=0, **training):
    """(vocabulary size, seconds of each timed step) of the task's first batches, trained as
    the main job trains (its model, and its TrainingConfig with the `training` changes:
    `ema_decay` 0 leaves out the moving average's update, `batch_size` ...); with
    `record_flow` N the flow recorder samples every N-th step into a scratch run folder."""
    splits = load_splits(task, data)
    tokenizer = build_tokenizer(splits, subword)
    vocab = build_vocab(splits, tokenizer)
    config = dataclasses.replace(MAIN_JOB.training, steps=warmup + steps, progress=False,
                                 **training)
    mg.manual_seed(config.seed)
    model = Transformer(build_model_config(vocab, splits, MAIN_JOB.model, tokenizer))
    batches = BatchIterator(encode_pairs(splits["train"], vocab, tokenizer), vocab,
                            config.batch_size, seed=config.seed,
                            target_dropout=config.target_dropout)
    with ExitStack() as stack:
        out = stack.enter_context(tempfile.TemporaryDirectory()) if record_flow else None
        trainer = Trainer(model, batches, splits["valid"], vocab, config, out=out,
                          tokenizer=tokenizer)
        if record_flow:
            trainer.callbacks.append(stack.enter_context(FlowRecording(model, record_flow)))
        times = []
        for step in range(warmup + steps):
            started = time.perf_counter()
            record = trainer.train_step(batches.next_batch())
            record["loss"].numpy()  # waits for the step
            trainer.step += 1
            for callback in trainer.callbacks:
                callback.on_step_end(trainer, trainer.step, record)
            if step >= warmup:
                times.append(time.perf_counter() - started)
    return len(vocab), times


def main(argv=None):
    parser = cli.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", choices=TASKS, default="toy-en-es")
    parser.add_argument("--data", help=f"the data of --task {', '.join(DATA_TASKS)}")
    parser.add_argument("--subword", type=cli.positive_int, metavar="PIECES")
    parser.add_argument("--steps", type=cli.positive_int, default=10, help="timed steps")
    parser.add_argument("--warmup", type=cli.non_negative_int, default=3)
    parser.add_argument("--ema-decay", type=cli.probability, default=MAIN_JOB.training.ema_decay,
                        help="the weights' moving average, as the main job keeps it (default "
                             f"{MAIN_JOB.training.ema_decay}; 0: none)")
    parser.add_argument("--record-flow", type=cli.positive_int, metavar="N",
                        help="the gradient-flow recorder every N steps, as "
                             "train_translation.py --record-flow N (default: off)")
    parser.add_argument("--json", action="store_true", help="print one JSON record, last")
    args = parser.parse_args(argv)
    vocab_size, times = step_times(args.task, args.subword, args.steps, args.warmup,
                                   data=args.data, record_flow=args.record_flow or 0,
                                   ema_decay=args.ema_decay)
    vocabulary = f"subword {args.subword}" if args.subword else "word-level"
    average = f", moving average {args.ema_decay}" if args.ema_decay else ""
    average += f", flow every {args.record_flow}" if args.record_flow else ""
    record = {"benchmark": "task_step", "config": f"{args.task} {vocabulary}{average}",
              "vocab_size": vocab_size, "framework": "minigrad", "device": "cpu",
              "figure": "median_ms", "median_ms": 1000 * statistics.median(times),
              "mean_ms": 1000 * statistics.mean(times),
              "min_ms": 1000 * min(times), "max_ms": 1000 * max(times), "steps": len(times)}
    print(f"{record['config']}: vocabulary {vocab_size} tokens, a step {record['median_ms']:.0f} "
          f"ms (median of {len(times)}; {record['min_ms']:.0f}-{record['max_ms']:.0f}; mean "
          f"{record['mean_ms']:.1f})")
    if args.json:
        print(json.dumps(record))


if __name__ == "__main__":
    cli.run(main)
