"""The Annotated Transformer's first example: learn to copy random symbol sequences.

    python examples/copy_task.py            # about a minute on 2 CPU cores

Ctrl-C stops after the current step, saves last.npz in --out and exits with status 130;
--resume continues it. A folder that holds a run is replaced only with --overwrite.
"""

from transformer import cli, options
from transformer.pipeline import resume_run, start_run
from transformer.run_spec import RunSpec, TaskSpec
from transformer.training_config import TrainingConfig

COPY_JOB = RunSpec(
    task=TaskSpec("copy"),
    model={"d_model": 64, "n_heads": 4, "n_encoder_layers": 2, "n_decoder_layers": 2,
           "d_ff": 128, "dropout": 0.0},
    training=TrainingConfig(steps=1200, batch_size=64, warmup_steps=200, eval_every=400,
                            checkpoint_every=400, seed=0))


def main():
    parser = cli.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default="runs/copy")
    parser.add_argument("--device", type=cli.device, default="cpu")
    run = parser.add_mutually_exclusive_group()
    run.add_argument("--resume", action="store_true", help="continue the run in --out")
    run.add_argument("--overwrite", action="store_true", help="replace the run in --out")
    options.add_arguments(parser, COPY_JOB, flags=("--steps", "--seed"))
    cli.add_distributed_arguments(parser)
    args = parser.parse_args()
    changes = options.changes(args)
    if args.resume:
        metrics = resume_run(args.out, changes, device=args.device,
                             communicator=cli.communicator(args))
    else:
        spec = options.new_spec(parser, COPY_JOB, changes)
        metrics = start_run(spec, args.out, overwrite=args.overwrite, device=args.device,
                            communicator=cli.communicator(args))
    if metrics is None:  # interrupted by Ctrl-C: last.npz is saved
        return 130
    if metrics:  # rank 0 (the others return {})
        print(f"held-out exact match: {metrics['test_exact_match']:.4f}")
    return 0


if __name__ == "__main__":
    cli.run(main)
