"""How gradients flow through residual paths, and what LayerNorm placement and the remedies
change: the registered experiments (E0-E9 and Xiong et al.'s Figure 3 in
transformer/study/experiments/, each judged against an expectation fixed in
transformer/study/expectations.py) and the grid runner.

    python examples/gradient_flow.py              # the default run: E0-E9 and Figure 3
    python examples/gradient_flow.py --quick      # a smoke run: toy sizes, two seeds
    python examples/gradient_flow.py --only init  # the measurements at initialization
    python examples/gradient_flow.py --only E1,E9 # some of them (a user's own by its name)
    python examples/gradient_flow.py --grid xiong # a preset grid: xiong, remedies, embedding
    python examples/gradient_flow.py --grid custom --task copy --norms post-LN,t-fixup

Writes one plot (PNG) and one CSV per experiment, xiong_figure3.png, summary.png and
verdicts.json (every check with its values, interval and outcome: held, NOT held,
inconclusive, not testable, or reported) into --out, and prints one line per experiment,
ending `-> OUTCOME`. --grid trains the grid instead, printing its forecast duration first,
writes grid.csv and grid.png (diverged runs marked), and judges Xiong et al.'s warm-up
findings at each peak where the grid holds them (post-LN with and without warmup, pre-LN
without), printing one line per check and writing verdicts.json. Results already in --out
are kept unless --overwrite. A user's module (its experiments, residual schemes) is loaded
with --load path/to/module.py before --only and --norms are checked.
"""

import argparse
import ast
import dataclasses
import importlib.util
import time
from pathlib import Path

import transformer.study.experiments  # noqa: F401  (registers E0-E9 and F3)
from transformer import cli
from transformer.data import TASKS
from transformer.instruments.recorder import write_csv
from transformer.residual import SCHEMES
from transformer.study.grid import (
    GRID_FIELDS,
    PRESETS,
    Grid,
    estimate_seconds,
    grid_figure,
    judge_grid,
    run_grid,
)
from transformer.study.statistics import MIN_INIT_SEEDS, MIN_TRAIN_SEEDS, OUTCOMES, REPORTED
from transformer.study.toolkit import (
    DEFAULT,
    EXPERIMENTS,
    QUICK,
    Study,
    TaskData,
    run_experiments,
    summary_figure,
    write_verdicts,
)

SMOKE = ("--quick: a smoke run (d_model 16, two seeds, a few steps); its verdicts are not the "
         "study's and may differ from a default run's")


# the measurements at initialization (`--only init`)
GROUPS = {"init": ("E0", "E1", "E2", "E3", "E4", "E7", "E9", "F3")}


def experiment_ids(text):
    """'E1,e5' -> ('E1', 'E5'), each a registered experiment (E-ids case-insensitive); a group
    of GROUPS stands for its experiments."""
    def known(name):
        return name.upper() if name.upper() in EXPERIMENTS else name
    names = [part.strip() for part in text.split(",") if part.strip()]
    ids = tuple(known(name) for part in names for name in GROUPS.get(part.lower(), (part,)))
    unknown = [name for name in ids if name not in EXPERIMENTS]
    if not ids or unknown:
        raise argparse.ArgumentTypeError(
            f"{text!r} names no experiment of {', '.join(EXPERIMENTS)}" if not unknown else
            f"unknown experiment {', '.join(unknown)}; choose from {', '.join(EXPERIMENTS)} "
            f"or a group: {', '.join(GROUPS)}")
    return ids


def setting(text):
    """'KEY=VALUE' -> (key, value), the value a Python literal (a number, a tuple, a string
    in quotes): an experiment's own setting (Scale.extra)."""
    key, sign, value = text.partition("=")
    try:
        return key.strip(), ast.literal_eval(value.strip()) if sign else None
    except (ValueError, SyntaxError):
        raise argparse.ArgumentTypeError(f"{text!r}: the value is not a Python literal (a "
                                         f"number, a tuple like (0, 30), a string in quotes)"
                                         ) from None


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


def load_module(path):
    """Import a user's module (its @experiment functions register themselves)."""
    spec = importlib.util.spec_from_file_location(Path(path).stem, path)
    if spec is None or not Path(path).is_file():
        raise cli.UsageError(f"--load {path}: no such Python file")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)


def parse_args(argv):
    """The flags, with every --load module loaded before the residual schemes of --norms are
    checked (a loaded module may register one)."""
    parser = cli.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true",
                        help="a smoke run: smaller models, one seed, fewer steps")
    parser.add_argument("--out", default="runs/gradient_flow", help="folder for PNGs and CSVs")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace the results already in --out")
    parser.add_argument("--seeds", type=cli.positive_int,
                        help="seeds of the measurements at init (default 10, quick 2; grid 1)")
    parser.add_argument("--train-seeds", type=cli.positive_int,
                        help="seeds of the training comparisons E5, E6, E8 (default 5, quick 2)")
    parser.add_argument("--only", default=None,
                        help="comma-separated experiment names, e.g. E1,E5, or init (E0-E4, "
                             "E7, E9, F3: the measurements at init); default: E0-E9 and F3")
    sizes = parser.add_argument_group("the experiments' model (default d_model 32, 4 heads, "
                                      "d_ff 128, 6 layers per stack)")
    sizes.add_argument("--d-model", type=cli.positive_int)
    sizes.add_argument("--n-heads", type=cli.positive_int)
    sizes.add_argument("--d-ff", type=cli.positive_int)
    sizes.add_argument("--depth", type=cli.positive_int,
                       help="layers per stack of E1, E3, E7, E8 and Figure 3(a,b)")
    parser.add_argument("--set", type=setting, action="append", default=[],
                        metavar="KEY=VALUE",
                        help="an experiment's own setting, e.g. translation_steps=100 or "
                             "copy_warmup=200 (docs/write_your_own_experiment.md)")
    parser.add_argument("--task", choices=TASKS, default=None,
                        help="the task of the grid (default toy-en-es; copy adds exact match)")
    parser.add_argument("--processes", type=cli.positive_int,
                        help="runs at once in E5, E6, E8, E9 and the grid, each in a process "
                             "of its own (default: one per core)")
    grid = parser.add_argument_group("the grid runner (--grid)")
    grid.add_argument("--grid", choices=(*PRESETS, "custom"), default=None,
                      help="train a preset grid, or custom: the settings below")
    grid.add_argument("--lrs", type=list_of(cli.positive_float, "positive numbers"),
                      default=Grid.lrs, help="peak learning rates (default 1e-3,3e-3,1e-2)")
    grid.add_argument("--warmups", type=list_of(cli.non_negative_int, "integers >= 0"),
                      default=Grid.warmups, help="warmup steps, 0 for none (default 0,100)")
    grid.add_argument("--depths", type=list_of(cli.positive_int, "positive integers"),
                      help="layers per stack: the grid's (default 6), or E2's and Figure "
                           "3(c,d)'s (default 6,8,10,12,14)")
    grid.add_argument("--norms", type=list_of(str, "residual schemes"),
                      default=Grid.norms, help="residual schemes (default post-LN,pre-LN)")
    grid.add_argument("--steps", type=cli.positive_int,
                      help="training steps per run: the grid's (default 300), or E5's, E6's "
                           "and E8's (default 300, 600, 300)")
    parser.add_argument("--load", action="append", default=[],
                        help="a Python file loaded first: its @experiment functions and "
                             "register_scheme calls register themselves")
    args = parser.parse_args(argv)
    if args.grid and (args.quick or args.only):
        parser.error("--grid runs the grid only: drop --quick and --only")
    for path in args.load:
        load_module(path)
    unknown = [name for name in args.norms if name not in SCHEMES]
    if unknown:
        parser.error(f"argument --norms: {', '.join(map(repr, unknown))} is not one of "
                     f"{', '.join(SCHEMES)} (a --load'ed module may register more)")
    return args


def refuse_to_overwrite(out, names, overwrite):
    """Stop with a usage error if `out` holds files of an earlier run and --overwrite is off."""
    kept = sorted(path.name for pattern in names for path in out.glob(pattern))
    if kept and not overwrite:
        raise cli.UsageError(f"--out {out} already holds results ({', '.join(kept[:3])}"
                             f"{', ...' if len(kept) > 3 else ''}); pass --overwrite to replace "
                             f"them, or choose another --out")


def scale_of(args):
    """The experiments' Scale: the default's (or --quick's) with what the flags set."""
    base = QUICK if args.quick else DEFAULT
    steps = {key: args.steps for key in ("translation_steps", "copy_steps", "rezero_steps")} \
        if args.steps else {}
    changed = {field: value for field, value in (
        ("seeds", args.seeds), ("train_seeds", args.train_seeds), ("d_model", args.d_model),
        ("n_heads", args.n_heads), ("d_ff", args.d_ff), ("depth", args.depth),
        ("depths", args.depths)) if value}
    return dataclasses.replace(base, processes=args.processes or 0,
                               extra={**base.extra, **steps, **dict(args.set)}, **changed)


def main_experiments(args, out):
    scale = scale_of(args)
    if scale.quick:
        print(SMOKE, flush=True)
    if scale.seeds < MIN_INIT_SEEDS or scale.train_seeds < MIN_TRAIN_SEEDS:
        print(f"{scale.seeds} seeds at init and {scale.train_seeds} in training: below the "
              f"study's {MIN_INIT_SEEDS} and {MIN_TRAIN_SEEDS}", flush=True)
    names = args.only or [name for name, found in EXPERIMENTS.items() if found.default]
    started, outcomes = time.perf_counter(), []
    for outcome in run_experiments(names, scale, Study(scale)):
        outcome.save(out)
        outcomes.append(outcome)
        for note in [outcome.claim, *outcome.notes]:
            print(f"    {note}", flush=True)
        print(outcome.summary(), flush=True)
    summary_figure(outcomes, scale.quick).savefig(out / "summary.png", dpi=120)
    write_verdicts(outcomes, out / "verdicts.json", scale)
    counted = [outcome for outcome in outcomes if not (outcome.mechanism or outcome.instrument)]
    counts = {verdict: sum(o.verdict == verdict for o in counted)
              for verdict in (*OUTCOMES, REPORTED)}
    print(", ".join(f"{count} {verdict}" for verdict, count in counts.items()) +
          f" (mechanism and instrument checks not counted: {len(outcomes) - len(counted)})" +
          f" ({scale.seeds} seed(s); {time.perf_counter() - started:.0f} s; plots, CSVs and "
          f"verdicts.json in {out})")
    if scale.quick:
        print(SMOKE)


def main_grid(args, out):
    task = args.task or "toy-en-es"
    if args.grid == "custom":
        grid = Grid(lrs=args.lrs, warmups=args.warmups, depths=args.depths or Grid.depths,
                    norms=args.norms, seeds=args.seeds or 1, steps=args.steps or Grid.steps)
    else:
        grid = PRESETS[args.grid]
        if args.seeds:
            grid = dataclasses.replace(grid, seeds=args.seeds)
    grid = dataclasses.replace(grid, decode=task == "copy")
    data, scale = TaskData.load(task), dataclasses.replace(DEFAULT, processes=args.processes or 0)
    forecast = estimate_seconds(grid, data, scale)
    print(f"grid {args.grid} on {task}: {len(grid.runs())} runs of {grid.steps} steps; about "
          f"{forecast / 60:.0f} min "
          f"on this machine as loaded now (from a short timed probe)", flush=True)
    started = time.perf_counter()

    def report(row):
        print("  " + ", ".join(f"{key} {row[key]:.4g}" if isinstance(row[key], float)
                               else f"{key} {row[key]}" for key in GRID_FIELDS), flush=True)

    rows = run_grid(grid, data, scale, task, on_run=report)
    write_csv(rows, out / "grid.csv", GRID_FIELDS)
    grid_figure(rows).savefig(out / "grid.png", dpi=120)
    outcomes = judge_grid(rows, grid)
    for outcome in outcomes:
        for check in outcome.checks:
            print(f"    {check}")
        print(f"{outcome.id}: {outcome.headline} [{outcome.claim}] -> {outcome.verdict}")
    write_verdicts(outcomes, out / "verdicts.json", dataclasses.replace(scale, seeds=grid.seeds))
    print(f"({time.perf_counter() - started:.0f} s; grid.csv, grid.png and verdicts.json in "
          f"{out})")


def main(argv=None):
    args = parse_args(argv)
    if args.only is not None:
        try:
            args.only = experiment_ids(args.only)
        except argparse.ArgumentTypeError as error:
            raise cli.UsageError(f"--only: {error}") from None
    out = Path(args.out)
    written = ["grid.*"] if args.grid else ["E[0-9]_*", "xiong_figure3.*", "summary.png"]
    refuse_to_overwrite(out, written + ["verdicts.json"], args.overwrite)
    out.mkdir(parents=True, exist_ok=True)
    if args.grid:
        main_grid(args, out)
    else:
        main_experiments(args, out)


if __name__ == "__main__":
    cli.run(main)
