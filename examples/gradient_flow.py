"""How gradients flow through residual paths, and what LayerNorm placement changes: six
experiments E1-E6 (transformer/analysis/experiments.py) against what the literature reports.

    python examples/gradient_flow.py              # 3 seeds, under 15 minutes on 2 CPU cores
    python examples/gradient_flow.py --quick      # smaller models, one seed, under 3 minutes

Writes one plot (PNG) and one CSV per experiment into --out and prints one line per
experiment: what was measured (mean ± std over seeds), the expectation fixed in advance, and
whether it held. An expectation that does not hold is reported as such, never tuned away.
"""

import argparse
import dataclasses
import time
from pathlib import Path

from transformer.analysis.experiments import DEFAULT, EXPERIMENTS, QUICK, run_experiments


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="smaller models, one seed, fewer steps")
    parser.add_argument("--out", default="runs/gradient_flow", help="folder for PNGs and CSVs")
    parser.add_argument("--seeds", type=int, help="seeds per configuration (default 3, quick 1)")
    parser.add_argument("--only", default=",".join(EXPERIMENTS),
                        help="comma-separated experiment ids, e.g. E1,E5")
    args = parser.parse_args(argv)
    scale = QUICK if args.quick else DEFAULT
    if args.seeds:
        scale = dataclasses.replace(scale, seeds=args.seeds)
    only = [name.strip().upper() for name in args.only.split(",")]
    unknown = sorted(set(only) - set(EXPERIMENTS))
    if unknown:
        parser.error(f"unknown experiment(s) {', '.join(unknown)}; choose from "
                     f"{', '.join(EXPERIMENTS)}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)

    started = time.perf_counter()
    for outcome in run_experiments(scale, only):
        outcome.save(out)
        print(outcome.summary(), flush=True)
    print(f"({scale.seeds} seed(s), {time.perf_counter() - started:.0f} s; plots and CSVs in "
          f"{out})")


if __name__ == "__main__":
    main()
