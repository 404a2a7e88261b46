"""Compare frameworks, or settings of one, on one benchmark, each run in its own subprocess,
interleaved.

Runs `benchmarks/<benchmark>.py --framework F --json <args>` for every framework in turn,
`--pairs` times (A B A B ...: a slow moment of the machine hits both), then prints each
framework's median and the ratio first/other of `median_ms` (and of `cpu_median_ms`, the CPU
time, and of each phase, where the benchmark records them), with its spread over the pairs.
`--setting NAME=A,B` runs one framework with the environment variable NAME set to A, then B,
and compares those instead; `--setting PYTHONPATH=OLD,NEW` compares two source trees of minigrad
(each tree's packages come first on the path; the benchmark script is this tree's). Each ratio
has its median and, over two or more rounds, its mean with the sample sd and a 95% interval.

    python benchmarks/compare.py --benchmark op_overhead [--frameworks minigrad,torch]
        [--pairs 3] [--args --ops 1000 --repeats 20]
    python benchmarks/compare.py --benchmark op_overhead --setting PYTHONPATH=/tmp/old,. --pairs 15
    python benchmarks/compare.py --benchmark train_step --setting MINIGRAD_RELEASE_BLAS_THREADS=1,0
        --args --config base
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from transformer import cli
from transformer.study.statistics import mean_interval, sample_sd

HERE = Path(__file__).resolve().parent


def run(benchmark, framework, args, setting=None):
    """One subprocess run of the benchmark (with `setting`, a dict, added to its
    environment; a PYTHONPATH there goes before this tree's); its JSON record."""
    env = {**os.environ, **(setting or {})}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [
        (setting or {}).get("PYTHONPATH"), str(HERE.parent), os.environ.get("PYTHONPATH")]))
    command = [sys.executable, str(HERE / f"{benchmark}.py"), "--framework", framework, "--json",
               *args]
    result = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def interleaved(benchmark, frameworks, pairs, args, setting=None):
    """framework -> its records, run in the order A B A B ... (`pairs` rounds); with
    `setting` (name, values) the one framework once per value instead, keyed "NAME=VALUE"."""
    if setting:
        (framework,) = frameworks
        name, values = setting
        variants = {f"{name}={value}": (framework, {name: value}) for value in values}
    else:
        variants = {framework: (framework, None) for framework in frameworks}
    records = {label: [] for label in variants}
    for round_ in range(pairs):
        for label, (framework, environment) in variants.items():
            record = run(benchmark, framework, args, environment)
            records[label].append(record)
            print(f"  round {round_ + 1}: {label:<9} median {record['median_ms']:.2f} ms",
                  file=sys.stderr)
    return records


def _figures(record):
    """The record's times to compare: the whole, the CPU time, each phase (ms), peak RSS."""
    phases = {f"{name.removesuffix('_ms')} phase": value
              for name, value in record.get("phases", {}).items()
              if isinstance(value, (int, float))}
    return {"time": record.get("median_ms"), "CPU time": record.get("cpu_median_ms"), **phases,
            "peak RSS": record.get("peak_rss_mb")}


def report(records):
    """Lines: each framework's median of medians, then each ratio first/other with its spread."""
    frameworks = list(records)
    first = frameworks[0]
    sample = records[first][0]
    variant = f" cache {sample['cache']}" if "cache" in sample else ""
    lines = [(f"{sample.get('benchmark', '')} {sample['config']}{variant} on {sample['device']} "
              f"({len(records[first])} interleaved rounds)")]
    for framework in frameworks:
        medians = [r["median_ms"] for r in records[framework]]
        figure = records[framework][0]["figure"]
        values = [r[figure] for r in records[framework] if figure in r]
        extra = f", {statistics.median(values):.2f} {figure}" if values else ""
        phases = [_figures(r) for r in records[framework]]
        extra += "".join(f", {label} {statistics.median(p[label] for p in phases):.2f} ms"
                         for label in phases[0] if label.endswith(" phase"))
        lines.append(f"  {framework:<9} median {statistics.median(medians):.2f} ms{extra}")
    for other in frameworks[1:]:
        pairs = [(_figures(a), _figures(b)) for a, b in zip(records[first], records[other])]
        for label in pairs[0][0]:
            ratios = [a[label] / b[label] for a, b in pairs if a.get(label) and b.get(label)]
            if ratios:
                lines.append(f"  {first}/{other} {label}: {statistics.median(ratios):.2f}x "
                             f"(spread {min(ratios):.2f}-{max(ratios):.2f} over the rounds"
                             f"{_spread(ratios)})")
    return lines


def _spread(ratios):
    """The ratios' mean, sample sd and 95% interval of the mean, with n (two or more)."""
    if len(ratios) < 2:
        return ""
    low, high = mean_interval(ratios)
    return (f"; mean {statistics.mean(ratios):.3f}, sd {sample_sd(ratios):.3f}, "
            f"95% interval [{low:.3f}, {high:.3f}], n {len(ratios)}")


def main():
    parser = cli.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--benchmark", required=True, help="a script in benchmarks/, no .py")
    parser.add_argument("--frameworks",
                        help="comma-separated; ratios are the first over each other (default "
                             "minigrad,torch; with --setting, minigrad)")
    parser.add_argument("--setting", metavar="NAME=A,B",
                        help="compare one framework with the environment variable NAME set to "
                             "A, B, ... instead of frameworks")
    parser.add_argument("--pairs", type=cli.positive_int, default=3,
                        help="interleaved rounds (at least 3)")
    parser.add_argument("--args", nargs=argparse.REMAINDER, default=[],
                        help="everything after it goes to the benchmark script")
    args = parser.parse_args()
    if args.pairs < 3:
        parser.error(f"--pairs {args.pairs}: at least 3 rounds are needed for a median")
    if not (HERE / f"{args.benchmark}.py").is_file():
        scripts = sorted(p.stem for p in HERE.glob("*.py") if p.stem not in ("compare", "configs"))
        parser.error(f"--benchmark {args.benchmark}: no benchmarks/{args.benchmark}.py; choose "
                     f"from {', '.join(scripts)}")
    setting = None
    if args.setting:
        name, _, values = args.setting.partition("=")
        setting = (name, values.split(","))
        if not name or len(setting[1]) < 2 or "" in setting[1]:
            parser.error(f"--setting {args.setting}: give NAME=A,B (at least two values)")
    frameworks = (args.frameworks or ("minigrad" if setting else "minigrad,torch")).split(",")
    if setting and len(frameworks) != 1:
        parser.error(f"--setting compares one framework; --frameworks {args.frameworks} names "
                     f"{len(frameworks)}")
    if not setting and len(frameworks) < 2:
        parser.error("--frameworks needs at least two")
    records = interleaved(args.benchmark, frameworks, args.pairs, args.args, setting)
    print("\n".join(report(records)))


if __name__ == "__main__":
    cli.run(main)
