"""How gradients flow through residual paths, and what LayerNorm placement changes: nine
experiments E1-E9 (transformer/analysis/experiments.py), each reproducing a finding of the
literature on a CPU-sized model and judging it against an expectation fixed in advance.

    python examples/gradient_flow.py              # the study: under 20 minutes on 2 quiet cores
    python examples/gradient_flow.py --quick      # a smoke run: toy sizes, one seed, < 3 min
    python examples/gradient_flow.py --only E1,E9 # some of them
    python examples/gradient_flow.py --grid       # lr × warmup × depth × norm placement

Writes one plot (PNG) and one CSV per experiment and summary.png (every verdict) into --out,
and prints one line per experiment: what was measured (mean ± std over seeds), the
expectation, and whether it held. An expectation that does not hold is reported as such.
--grid trains toy translation over the grid instead, printing its forecast duration first,
and writes grid.csv and grid.png. Results already in --out are kept unless --overwrite.
"""

import argparse
import dataclasses
import time
from pathlib import Path

from transformer import cli
from transformer.analysis.experiments import (
    DEFAULT,
    EXPERIMENTS,
    QUICK,
    VARIANTS,
    TaskData,
    run_experiments,
    summary_figure,
)
from transformer.analysis.grid import GRID_FIELDS, Grid, estimate_seconds, grid_figure, run_grid
from transformer.analysis.recorder import write_csv

SMOKE = ("--quick: a smoke run (d_model 16, one seed, a few steps); its verdicts are not the "
         "study's and may differ from a default run's")


def experiment_ids(text):
    """'E1,e5' -> ('E1', 'E5'), each one of EXPERIMENTS."""
    ids = tuple(name.strip().upper() for name in text.split(",") if name.strip())
    unknown = [name for name in ids if name not in EXPERIMENTS]
    if not ids or unknown:
        raise argparse.ArgumentTypeError(
            f"{text!r} names no experiment of {', '.join(EXPERIMENTS)}" if not unknown else
            f"unknown experiment {', '.join(unknown)}; choose from {', '.join(EXPERIMENTS)}")
    return ids


def list_of(item, allowed):
    """An argparse type: a comma-separated list, each item parsed by `item`."""
    def parse(text):
        try:
            values = tuple(item(part.strip()) for part in text.split(",") if part.strip())
        except argparse.ArgumentTypeError as error:
            raise argparse.ArgumentTypeError(f"{text!r}: {error}") from None
        if not values:
            raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of "
                                             f"{allowed}")
        return values
    return parse


def norm_placement(text):
    if text not in VARIANTS:
        raise argparse.ArgumentTypeError(f"{text!r} is not one of {', '.join(VARIANTS)}")
    return text


def parse_args(argv):
    parser = cli.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: smaller models, one seed, fewer steps")
    parser.add_argument("--out", default="runs/gradient_flow", help="folder for PNGs and CSVs")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace the results already in --out")
    parser.add_argument("--seeds", type=cli.positive_int,
                        help="seeds per configuration (default 3, quick 1; grid 1)")
    parser.add_argument("--only", type=experiment_ids, default=EXPERIMENTS,
                        help="comma-separated experiment ids, e.g. E1,E5")
    grid = parser.add_argument_group("the grid runner (--grid)")
    grid.add_argument("--grid", action="store_true",
                      help="train toy translation over the grid below instead")
    grid.add_argument("--lrs", type=list_of(cli.positive_float, "positive numbers"),
                      default=Grid.lrs, help="peak learning rates (default 1e-3,3e-3,1e-2)")
    grid.add_argument("--warmups", type=list_of(cli.non_negative_int, "integers >= 0"),
                      default=Grid.warmups, help="warmup steps, 0 for none (default 0,100)")
    grid.add_argument("--depths", type=list_of(cli.positive_int, "positive integers"),
                      default=Grid.depths, help="layers per stack (default 6)")
    grid.add_argument("--norms", type=list_of(norm_placement, "model variants"),
                      default=Grid.norms, help="model variants (default post-LN,pre-LN)")
    grid.add_argument("--steps", type=cli.positive_int, default=Grid.steps,
                      help="training steps per run (default 300)")
    args = parser.parse_args(argv)
    if args.grid and (args.quick or args.only != EXPERIMENTS):
        parser.error("--grid runs the grid only: drop --quick and --only")
    return args


def refuse_to_overwrite(out, names, overwrite):
    """Stop with a usage error if `out` holds files of an earlier run and --overwrite is off."""
    kept = sorted(path.name for pattern in names for path in out.glob(pattern))
    if kept and not overwrite:
        raise cli.UsageError(f"--out {out} already holds results ({', '.join(kept[:3])}"
                             f"{', ...' if len(kept) > 3 else ''}); pass --overwrite to replace "
                             f"them, or choose another --out")


def main_experiments(args, out):
    scale = QUICK if args.quick else DEFAULT
    if args.seeds:
        scale = dataclasses.replace(scale, seeds=args.seeds, copy_seeds=args.seeds,
                                    perturbation_seeds=max(args.seeds,
                                                           scale.perturbation_seeds))
    if scale.quick:
        print(SMOKE, flush=True)
    started, outcomes = time.perf_counter(), []
    for outcome in run_experiments(scale, args.only):
        outcome.save(out)
        outcomes.append(outcome)
        print(outcome.summary(), flush=True)
        print(f"    [{outcome.claim}; {time.perf_counter() - started:.0f} s so far]", flush=True)
        for note in outcome.notes:
            print(f"    {note}", flush=True)
    summary_figure(outcomes, scale.quick).savefig(out / "summary.png", dpi=120)
    print(f"({scale.seeds} seed(s), E6 {scale.copy_seeds}, E9 {scale.perturbation_seeds}; "
          f"{time.perf_counter() - started:.0f} s; plots and CSVs in {out})")
    if scale.quick:
        print(SMOKE)


def main_grid(args, out):
    grid = Grid(lrs=args.lrs, warmups=args.warmups, depths=args.depths, norms=args.norms,
                seeds=args.seeds or 1, steps=args.steps)
    data, scale = TaskData.load("toy-en-es"), DEFAULT
    forecast = estimate_seconds(grid, data, scale)
    print(f"grid: {len(grid.runs())} runs of {grid.steps} steps; about {forecast / 60:.0f} min "
          f"on this machine as loaded now (from a short timed probe)", flush=True)
    started = time.perf_counter()

    def report(row):
        print("  " + ", ".join(f"{key} {row[key]:.4g}" if isinstance(row[key], float)
                               else f"{key} {row[key]}" for key in GRID_FIELDS), flush=True)

    rows = run_grid(grid, data, scale, on_run=report)
    write_csv(rows, out / "grid.csv", GRID_FIELDS)
    grid_figure(rows).savefig(out / "grid.png", dpi=120)
    print(f"({time.perf_counter() - started:.0f} s; grid.csv and grid.png in {out})")


def main(argv=None):
    args = parse_args(argv)
    out = Path(args.out)
    refuse_to_overwrite(out, ["grid.*"] if args.grid else ["E[0-9]_*", "summary.png"],
                        args.overwrite)
    out.mkdir(parents=True, exist_ok=True)
    if args.grid:
        main_grid(args, out)
    else:
        main_experiments(args, out)


if __name__ == "__main__":
    cli.run(main)
