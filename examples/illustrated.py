"""An executable Illustrated Transformer: the two source articles' explanations, section by
section, with every number and figure computed by the real model (transformer/illustrated/;
its prose is transformer/illustrated/walkthrough.template.md).

    python examples/illustrated.py --checkpoint runs/toy-en-es --out docs/illustrated
    python examples/illustrated.py --out runs/illustrated      # a freshly initialized model

Writes OUT/walkthrough.md and its PNG figures (linked by relative paths). --checkpoint takes a
run folder, or RUN/best.npz or RUN/last.npz. Without it, the page builds the toy-en-es
vocabulary with the default settings and initializes the main job's model from --seed, and
says so at the top of the page. Headless (Agg canvas).
"""

import time

from transformer import cli
from transformer.illustrated import load_subject, write_walkthrough


def main(argv=None):
    parser = cli.ArgumentParser(description=__doc__)
    cli.add_checkpoint_arguments(parser, required=False)
    parser.add_argument("--out", default="runs/illustrated", type=cli.output_folder,
                        help="folder for walkthrough.md and its figures")
    parser.add_argument("--seed", type=cli.non_negative_int, default=0,
                        help="initialization seed without --checkpoint")
    parser.add_argument("--dpi", type=cli.positive_int, default=72,
                        help="resolution of the figures")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    checkpoint, which = args.checkpoint, "best"
    if args.checkpoint is not None:
        folder, which = cli.run_checkpoint(args.checkpoint, args.which)
        checkpoint = folder.path
    elif args.which is not None:
        parser.error(f"--which {args.which} chooses a checkpoint of --checkpoint; add "
                     "--checkpoint RUN")
    subject = load_subject(checkpoint, which, args.out, seed=args.seed, dpi=args.dpi)
    path, sections = write_walkthrough(subject)
    figures = sum(len(section.figures) for section in sections)
    print(f"{path}: {len(sections)} sections, {figures} figures "
          f"({time.perf_counter() - started:.1f} s)")


if __name__ == "__main__":
    cli.run(main)
