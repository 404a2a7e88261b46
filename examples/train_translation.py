"""Train a translation model and leave a run folder (the project's main job).

    python examples/train_translation.py                      # toy English->Spanish, CPU
    python examples/train_translation.py --task copy --out runs/copy
    python examples/train_translation.py --out runs/toy-en-es --resume

Ctrl-C stops after the current step, saves last.npz and exits with status 130 (the shell's
convention for an interrupted command); `--resume` then continues exactly where it stopped.
"""

import argparse
import sys

from transformer.data import TASKS
from transformer.pipeline import train_translation


def given(**options):
    """The options set on the command line or with a default here (None: the library's)."""
    return {name: value for name, value in options.items() if value is not None}


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", default="toy-en-es", choices=TASKS)
    parser.add_argument("--data", help="a TSV file of 'source<TAB>target' lines (--task pairs)")
    parser.add_argument("--out", help="run folder (default: runs/TASK)")
    parser.add_argument("--resume", action="store_true", help="continue the run in --out")
    parser.add_argument("--device", default="cpu", help="cpu | cuda | cuda:N")
    model = parser.add_argument_group("model (defaults: transformer.pipeline.MAIN_JOB_MODEL)")
    model.add_argument("--d-model", type=int)
    model.add_argument("--heads", type=int)
    model.add_argument("--layers", type=int, help="encoder and decoder layers each")
    model.add_argument("--d-ff", type=int)
    model.add_argument("--dropout", type=float)
    model.add_argument("--norm-first", action="store_true", help="pre-LN instead of post-LN")
    training = parser.add_argument_group("training")
    training.add_argument("--steps", type=int,
                          help="training steps (default 5000; with --resume: extend the run)")
    training.add_argument("--batch-size", type=int, default=64)
    training.add_argument("--warmup", type=int, default=400)
    training.add_argument("--lr-factor", type=float, default=1.0)
    training.add_argument("--eval-every", type=int, default=500)
    training.add_argument("--time-limit", type=float,
                          help="stop training after this many seconds (default: no limit)")
    training.add_argument("--seed", type=int, default=0)
    training.add_argument("--no-progress", action="store_true", help="log lines, no tqdm bar")
    args = parser.parse_args()

    metrics = train_translation(
        args.task, args.out or f"runs/{args.task}", data=args.data, resume=args.resume,
        device=args.device,
        model_options=given(d_model=args.d_model, n_heads=args.heads,
                            n_encoder_layers=args.layers, n_decoder_layers=args.layers,
                            d_ff=args.d_ff, dropout=args.dropout,
                            norm_first=args.norm_first or None),
        training_options=given(steps=args.steps, batch_size=args.batch_size,
                               warmup_steps=args.warmup, lr_factor=args.lr_factor,
                               eval_every=args.eval_every, checkpoint_every=args.eval_every,
                               time_limit_s=args.time_limit, seed=args.seed,
                               progress=not args.no_progress))
    if metrics is None:  # interrupted by Ctrl-C: last.npz is saved
        sys.exit(130)


if __name__ == "__main__":
    main()
