"""Train a translation model and leave a run folder (the project's main job).

    python examples/train_translation.py                      # toy English->Spanish, CPU
    python examples/train_translation.py --task copy --out runs/copy
    python examples/train_translation.py --out runs/toy-en-es --resume

A folder that already holds a run is never overwritten by accident: continue it with
--resume, replace it with --overwrite, or choose another --out. Ctrl-C stops after the current
step, saves last.npz and exits with status 130 (the shell's convention for an interrupted
command); --resume then continues exactly where it stopped, and only the flags named in its
help may change (and the number of processes: see docs/distributed.md).

    mpiexec -n 2 python -m mpi4py examples/train_translation.py --distributed
"""

from dataclasses import asdict

from transformer import cli
from transformer.data import DATA_TASKS, TASKS
from transformer.main_job import MAIN_JOB
from transformer.pipeline import RESUMABLE_OPTIONS, ResumeConflict, train_translation
from transformer.training import SCHEDULES

# The flag of each option of the library, for messages about them.
FLAGS = {"task": "--task", "data": "--data", "d_model": "--d-model", "n_heads": "--heads",
         "n_encoder_layers": "--layers", "n_decoder_layers": "--layers", "d_ff": "--d-ff",
         "dropout": "--dropout", "norm_first": "--norm-first", "steps": "--steps",
         "batch_size": "--batch-size", "warmup_steps": "--warmup", "lr_factor": "--lr-factor",
         "schedule": "--schedule",
         "target_dropout": "--target-dropout", "ema_decay": "--ema-decay",
         "eval_every": "--eval-every", "time_limit_s": "--time-limit", "seed": "--seed",
         "accumulate": "--accumulate", "sync_every": "--sync-every", "subword": "--subword",
         "progress": "--no-progress", "samples": "--samples",
         "record_flow_every": "--record-flow"}

# The flags a resumed run may change: "--steps, ... and --no-progress".
RESUMABLE_FLAGS = list(dict.fromkeys(FLAGS[name] for name in RESUMABLE_OPTIONS if name in FLAGS))
RESUMABLE = f"{', '.join(RESUMABLE_FLAGS[:-1])} and {RESUMABLE_FLAGS[-1]}"
MODEL, TRAINING = MAIN_JOB.model, MAIN_JOB.training  # the defaults of a new run


def given(**options):
    """The options set on the command line (None: not given)."""
    return {name: value for name, value in options.items() if value is not None}


def parse_arguments(argv=None):
    parser = cli.ArgumentParser(description=__doc__)
    parser.add_argument("--task", choices=TASKS, help=f"default {MAIN_JOB.task}")
    parser.add_argument("--data", help="a TSV file of 'source<TAB>target' lines (--task pairs; "
                                       "or the dictionary of de-en, the SWORD modules' folder "
                                       "of en-es-bible)")
    parser.add_argument("--skip-bad-lines", action="store_true",
                        help="leave out the bad lines of --data (they are listed) instead of "
                             "refusing the file")
    parser.add_argument("--out", help="run folder (default: runs/TASK)")
    run = parser.add_mutually_exclusive_group()
    run.add_argument("--resume", action="store_true",
                     help=f"continue the run in --out; only {RESUMABLE} may change")
    run.add_argument("--overwrite", action="store_true",
                     help="replace the run in --out (once every flag has been checked)")
    parser.add_argument("--device", type=cli.device, default="cpu", help="cpu | cuda | cuda:N")
    parser.add_argument("--subword", type=cli.positive_int, metavar="PIECES",
                        help="subword vocabulary: a SentencePiece model of at most PIECES "
                             "pieces per language, trained on the train split (default: "
                             "word-level)")
    model = parser.add_argument_group("model")
    model.add_argument("--d-model", type=cli.positive_int, help=f"default {MODEL['d_model']}")
    model.add_argument("--heads", type=cli.positive_int, help=f"default {MODEL['n_heads']}")
    model.add_argument("--layers", type=cli.positive_int,
                       help=f"encoder and decoder layers each (default "
                            f"{MODEL['n_encoder_layers']})")
    model.add_argument("--d-ff", type=cli.positive_int, help=f"default {MODEL['d_ff']}")
    model.add_argument("--dropout", type=cli.probability, help=f"default {MODEL['dropout']}")
    model.add_argument("--norm-first", action="store_true", help="pre-LN instead of post-LN")
    peak = f"{MAIN_JOB.peak_lr():.1e}".replace("e-0", "e-")
    training = parser.add_argument_group("training")
    training.add_argument("--steps", type=cli.positive_int,
                          help=f"training steps (default {TRAINING.steps}; with --resume: "
                               "extend the run)")
    training.add_argument("--batch-size", type=cli.positive_int,
                          help=f"default {TRAINING.batch_size}")
    training.add_argument("--warmup", type=cli.positive_int,
                          help=f"warmup steps (default {TRAINING.warmup_steps})")
    training.add_argument("--lr-factor", type=cli.positive_float,
                          help=f"scales the schedule's rate (default {TRAINING.lr_factor}: with "
                               f"d_model {MODEL['d_model']} and {TRAINING.warmup_steps} warmup "
                               f"steps the rate peaks at {peak})")
    training.add_argument("--schedule", choices=SCHEDULES,
                          help=f"noam: the paper's, the rate decaying as 1 / sqrt(step) after the "
                               f"warmup; cosine: the same warmup and peak, then a half cosine "
                               f"to 0 at the last step; a run no longer than its warmup only warms "
                               f"up (default {TRAINING.schedule})")
    training.add_argument("--target-dropout", type=cli.probability, metavar="P",
                          help="target-side word dropout: replace this share of the decoder's "
                               "input tokens by <unk> in training, so that it reads the source "
                               f"rather than its own prefix (default {TRAINING.target_dropout}; "
                               "0: off)")
    training.add_argument("--ema-decay", type=cli.probability, metavar="DECAY",
                          help="validate, keep best.npz by and translate with a moving average "
                               "of the weights, each step's weight 1 - DECAY (default "
                               f"{TRAINING.ema_decay}; 0: the weights as trained)")
    training.add_argument("--eval-every", type=cli.positive_int,
                          help=f"validate and checkpoint every N steps (default "
                               f"{TRAINING.eval_every})")
    training.add_argument("--sync-every", type=cli.positive_int,
                          help="read the loss from the device every N steps (default: the "
                               "logging interval); between reads a GPU step never waits")
    training.add_argument("--time-limit", type=cli.positive_float,
                          help="stop training after this many seconds (default: no limit)")
    training.add_argument("--seed", type=cli.non_negative_int, help=f"default {TRAINING.seed}")
    training.add_argument("--accumulate", type=cli.positive_int,
                          help="micro-batches per step and rank (gradient accumulation; "
                               "default 1): the global batch is --batch-size all the same")
    cli.add_distributed_arguments(parser)
    training.add_argument("--no-progress", action="store_true", help="log lines, no tqdm bar")
    watch = parser.add_argument_group("seeing inside the run (docs/inspecting.md)")
    watch.add_argument("--samples", type=cli.non_negative_int, metavar="N",
                       help="translate the first N validation sentences at each validation, "
                            f"print them and keep them in samples.jsonl (default "
                            f"{TRAINING.samples}; 0: none)")
    watch.add_argument("--record-flow", type=cli.positive_int, nargs="?", metavar="N",
                       const=MAIN_JOB.record_flow_every,
                       help="record the gradient flow every N steps (N: default "
                            f"{MAIN_JOB.record_flow_every}) into flow.jsonl, drawn in "
                            "flow.png (without the flag: not recorded)")
    watch.add_argument("--tensorboard", metavar="DIR",
                       help="also log to TensorBoard in DIR: scalars, the samples, histograms "
                            "of the weights and gradients (pip install -e '.[tensorboard]')")
    args = parser.parse_args(argv)
    if args.data is not None and args.task not in DATA_TASKS:
        parser.error(f"--data {args.data}: only --task {', '.join(DATA_TASKS)} read data "
                     "(add --task pairs for a TSV file)")
    if args.skip_bad_lines and args.task != "pairs":
        parser.error("--skip-bad-lines: only --task pairs reads a TSV file that may have bad "
                     "lines (add --task pairs --data FILE)")
    if args.task == "pairs" and args.data is None and not args.resume:
        parser.error("--task pairs needs --data FILE, a TSV file of 'source<TAB>target' lines")
    d_model = args.d_model or MODEL["d_model"]
    heads = args.heads or MODEL["n_heads"]
    if not args.resume and d_model % 2:
        parser.error(f"--d-model {d_model}: must be even (the sinusoidal positions pair a sine "
                     "with a cosine)")
    if not args.resume and d_model % heads:
        parser.error(f"--heads {heads} does not divide d_model {d_model}"
                     f"{'' if args.d_model else ' (the default)'}: each head gets d_model / "
                     "heads dimensions")
    return args


def main(argv=None):
    args = parse_arguments(argv)
    eval_every = args.eval_every
    training = given(steps=args.steps, warmup_steps=args.warmup, batch_size=args.batch_size,
                     lr_factor=args.lr_factor, schedule=args.schedule,
                     target_dropout=args.target_dropout,
                     ema_decay=args.ema_decay,
                     eval_every=eval_every,
                     checkpoint_every=eval_every, time_limit_s=args.time_limit, seed=args.seed,
                     accumulate=args.accumulate, sync_every=args.sync_every,
                     progress=False if args.no_progress else None, samples=args.samples,
                     record_flow_every=args.record_flow)
    communicator = cli.communicator(args)
    if not args.resume:
        training = asdict(MAIN_JOB.training_config(**training))
    try:
        metrics = train_translation(
            args.task, args.out or f"runs/{args.task or MAIN_JOB.task}", data=args.data,
            resume=args.resume, overwrite=args.overwrite, device=args.device,
            subword=args.subword, skip_bad_lines=args.skip_bad_lines,
            model_options=given(d_model=args.d_model, n_heads=args.heads,
                                n_encoder_layers=args.layers, n_decoder_layers=args.layers,
                                d_ff=args.d_ff, dropout=args.dropout,
                                norm_first=args.norm_first or None),
            training_options=training, communicator=communicator,
            tensorboard=args.tensorboard)
    except ResumeConflict as conflict:
        flags = dict.fromkeys(f"{FLAGS.get(name, name)} {given_value}"
                              f" (the run has {saved})"
                              for name, given_value, saved in conflict.conflicts)
        raise cli.UsageError(f"--resume keeps the run's own options, but these differ: "
                             f"{'; '.join(flags)}; only {RESUMABLE} may change (or start a "
                             "new run with --overwrite or another --out)") from None
    if metrics is None:  # interrupted by Ctrl-C: last.npz is saved
        return 130
    return 0


if __name__ == "__main__":
    cli.run(main)
