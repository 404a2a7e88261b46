"""Train a translation model and leave a run folder (the project's main job).

    python examples/train_translation.py                      # toy English->Spanish, CPU
    python examples/train_translation.py --task copy --out runs/copy
    python examples/train_translation.py --out runs/toy-en-es --resume

A folder that already holds a run is never overwritten by accident: continue it with
--resume, replace it with --overwrite, or choose another --out. Every flag is checked before
anything is written. Ctrl-C stops after the current step, saves last.npz and exits with
status 130 (the shell's convention for an interrupted command); --resume then continues
exactly where it stopped, and only the flags named in its help may change (and the number of
processes: see docs/distributed.md).

    mpiexec -n 2 python -m mpi4py examples/train_translation.py --distributed
"""

from transformer import cli, options
from transformer.main_job import MAIN_JOB
from transformer.pipeline import resume_run, start_run


def parse_arguments(argv=None):
    parser = cli.ArgumentParser(description=__doc__)
    parser.add_argument("--out", help="run folder (default: runs/TASK)")
    run = parser.add_mutually_exclusive_group()
    run.add_argument("--resume", action="store_true",
                     help=f"continue the run in --out; only {options.resumable_text()} may "
                          "change")
    run.add_argument("--overwrite", action="store_true",
                     help="replace the run in --out (once every flag has been checked)")
    parser.add_argument("--device", type=cli.device, default="cpu", help="cpu | cuda | cuda:N")
    options.add_arguments(parser, MAIN_JOB)
    cli.add_distributed_arguments(parser)
    args = parser.parse_args(argv)
    args.changes = options.changes(args)  # {RunSpec field: value} of the flags given
    args.spec = None if args.resume else options.new_spec(parser, MAIN_JOB, args.changes)
    return args


def main(argv=None):
    args = parse_arguments(argv)
    out = args.out or f"runs/{args.task or MAIN_JOB.task.name}"
    communicator = cli.communicator(args)
    if args.resume:
        metrics = resume_run(out, args.changes, device=args.device, communicator=communicator)
    else:
        metrics = start_run(args.spec, out, overwrite=args.overwrite, device=args.device,
                            communicator=communicator)
    if metrics is None:  # interrupted by Ctrl-C: last.npz is saved
        return 130
    return 0


if __name__ == "__main__":
    cli.run(main)
