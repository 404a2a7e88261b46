"""The Annotated Transformer's first example: learn to copy random symbol sequences.

    python examples/copy_task.py            # about a minute on 2 CPU cores

Ctrl-C stops after the current step, saves last.npz in --out and exits with status 130;
--resume continues it. A folder that holds a run is replaced only with --overwrite.
"""

from transformer import cli
from transformer.pipeline import train_translation


def main():
    parser = cli.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="runs/copy")
    parser.add_argument("--steps", type=cli.positive_int, default=1200)
    parser.add_argument("--device", type=cli.device, default="cpu")
    parser.add_argument("--seed", type=cli.non_negative_int, help="default 0")
    run = parser.add_mutually_exclusive_group()
    run.add_argument("--resume", action="store_true", help="continue the run in --out")
    run.add_argument("--overwrite", action="store_true", help="replace the run in --out")
    cli.add_distributed_arguments(parser)
    args = parser.parse_args()
    communicator = cli.communicator(args)
    if args.resume:
        given_seed = {} if args.seed is None else {"seed": args.seed}  # must be the run's
        metrics = train_translation("copy", args.out, resume=True, device=args.device,
                                    training_options={"steps": args.steps, **given_seed},
                                    communicator=communicator)
    else:
        metrics = train_translation(
            "copy", args.out, overwrite=args.overwrite, device=args.device,
            communicator=communicator,
            model_options=dict(d_model=64, n_heads=4, n_encoder_layers=2, n_decoder_layers=2,
                               d_ff=128, dropout=0.0),
            training_options=dict(steps=args.steps, batch_size=64, warmup_steps=200,
                                  eval_every=400, checkpoint_every=400, seed=args.seed or 0))
    if metrics is None:  # interrupted by Ctrl-C: last.npz is saved
        return 130
    if metrics:  # rank 0 (the others return {})
        print(f"held-out exact match: {metrics['test_exact_match']:.4f}")
    return 0


if __name__ == "__main__":
    cli.run(main)
