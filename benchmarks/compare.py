"""Compare frameworks on one benchmark, each run in its own subprocess, interleaved.

Runs `benchmarks/<benchmark>.py --framework F --json <args>` for every framework in turn,
`--pairs` times (A B A B ...: a slow moment of the machine hits both), then prints each
framework's median and the ratio first/other of `median_ms` (and of `cpu_median_ms`, the CPU
time, where the benchmark records it), with its spread over the pairs.

    python benchmarks/compare.py --benchmark op_overhead [--frameworks minigrad,torch]
        [--pairs 3] [--args --ops 1000 --repeats 20]
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from transformer import cli

HERE = Path(__file__).resolve().parent


def run(benchmark, framework, args):
    """One subprocess run of the benchmark; its JSON record."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(HERE.parent), env.get("PYTHONPATH")]))
    command = [sys.executable, str(HERE / f"{benchmark}.py"), "--framework", framework, "--json",
               *args]
    result = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed:\n{result.stderr}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def interleaved(benchmark, frameworks, pairs, args):
    """framework -> its records, run in the order A B A B ... (`pairs` rounds)."""
    records = {framework: [] for framework in frameworks}
    for round_ in range(pairs):
        for framework in frameworks:
            record = run(benchmark, framework, args)
            records[framework].append(record)
            print(f"  round {round_ + 1}: {framework:<9} median {record['median_ms']:.2f} ms",
                  file=sys.stderr)
    return records


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
        lines.append(f"  {framework:<9} median {statistics.median(medians):.2f} ms{extra}")
    for other in frameworks[1:]:
        for key, label in (("median_ms", "time"), ("cpu_median_ms", "CPU time"),
                           ("peak_rss_mb", "peak RSS")):
            ratios = [a[key] / b[key] for a, b in zip(records[first], records[other])
                      if a.get(key) and b.get(key)]
            if ratios:
                lines.append(f"  {first}/{other} {label}: {statistics.median(ratios):.2f}x "
                             f"(spread {min(ratios):.2f}-{max(ratios):.2f} over the rounds)")
    return lines


def main():
    parser = cli.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--benchmark", required=True, help="a script in benchmarks/, no .py")
    parser.add_argument("--frameworks", default="minigrad,torch",
                        help="comma-separated; ratios are the first over each other")
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
    frameworks = args.frameworks.split(",")
    if len(frameworks) < 2:
        parser.error("--frameworks needs at least two")
    records = interleaved(args.benchmark, frameworks, args.pairs, args.args)
    print("\n".join(report(records)))


if __name__ == "__main__":
    cli.run(main)
