"""The one-screen summary of a scripts/gpu_check.sh call, from its records folder: the
versions, each step's status, the tests (counts, the failing ones, the slowest), the main
run's ms per step on the GPU against the CPU, the benchmarks' ms per step against torch, and
the smoke run's failures and launch counts.

    python scripts/gpu_check_summary.py RECORDS [SECONDS]
"""

import json
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def tests(records):
    lines = []
    for path in sorted(records.glob("junit_*.xml")):
        cases = list(ET.parse(path).getroot().iter("testcase"))
        failed = [case for case in cases if case.find("failure") is not None
                  or case.find("error") is not None]
        skipped = sum(case.find("skipped") is not None for case in cases)
        slowest = max(cases, key=lambda case: float(case.get("time", 0)), default=None)
        lines.append(f"tests {path.stem[6:]}: {len(cases) - len(failed) - skipped} passed, "
                     f"{len(failed)} failed, {skipped} skipped"
                     + (f"; slowest {slowest.get('name')} {float(slowest.get('time')):.1f}s"
                        if slowest is not None else ""))
        lines += [f"  FAILED {case.get('classname')}::{case.get('name')}" for case in failed[:8]]
        if len(failed) > 8:
            lines.append(f"  ... and {len(failed) - 8} more (records.tar.gz has the logs)")
    return lines


def record(path):
    try:
        return json.loads(path.read_text().strip().splitlines()[-1])
    except (OSError, IndexError, ValueError):
        return None


def main_run(records):
    runs = {device: record(records / f"main_{device}.json") for device in ("cuda", "cpu")}
    if not all(runs.values()):
        return []
    ms = {device: run["ms"] / run["steps"] for device, run in runs.items()}
    return [f"main run: {ms['cuda']:.0f} ms per step on cuda ({runs['cuda']['steps']} steps), "
            f"{ms['cpu']:.0f} on the cpu ({runs['cpu']['steps']}), startup included: "
            f"cpu / cuda {ms['cpu'] / ms['cuda']:.1f}"]


def benchmarks(records):
    lines = []
    for path in sorted(records.glob("train_step_*.json")):
        run = record(path)
        if run is not None and "launches_per_step" in run:
            lines.append(f"{path.stem}: {run['launches_per_step']:.0f} launches, "
                         f"{run['syncs_per_step']:.0f} syncs per step (the stand-in's count)")
            continue
        if run is None or "median_ms" not in run:
            lines.append(f"{path.stem}: no record")
            continue
        torch = record(records / f"train_step_{run['config']}_torch.json")
        ratio = f", / torch {run['median_ms'] / torch['median_ms']:.2f}" \
            if torch and "median_ms" in torch and run["framework"] != "torch" else ""
        lines.append(f"{path.stem}: {run['median_ms']:.1f} ms per step{ratio}")
    return lines


def environment(records):
    path = records / "env.log"
    return [line for line in path.read_text().splitlines() if line.strip()][:4] \
        if path.exists() else []


def smoke(records):
    path = records / "smoke.log"
    if not path.exists():
        return []
    return [line.strip() for line in path.read_text().splitlines()
            if line.lstrip().startswith(("FAILED", "!!", "tiny step:", "allreduce"))][:8]


def main():
    records = Path(sys.argv[1])
    status = records / "status.txt"
    lines = [f"== summary{f' ({sys.argv[2]}s)' if len(sys.argv) > 2 else ''}"]
    lines += environment(records)
    lines += status.read_text().splitlines() if status.exists() else ["no part ran"]
    lines += smoke(records) + tests(records) + main_run(records) + benchmarks(records)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
