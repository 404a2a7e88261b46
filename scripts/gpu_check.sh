#!/usr/bin/env bash
# The CUDA checks, for a machine with an NVIDIA GPU where CuPy and PyTorch are installed:
#   1. the CUDA conformance tests: the cuda case of every device-parametrized test
#      (`pytest -m gpu`, hypothesis profile `gpu`: few examples, derandomized);
#   2. the small and base training-step benchmarks (benchmarks/train_step.py --device cuda),
#      minigrad (CuPy) then PyTorch, and the ratio minigrad / PyTorch for each.
# It runs from the checkout without installing anything (PYTHONPATH=.) and fits in 5 minutes
# on a cold machine: every part is time-boxed with `timeout` (the tests get at most
# TEST_SECONDS; each benchmark run an equal share of what is left), and a part that runs out
# of time is reported as such.
#
#   scripts/gpu_check.sh                             # on the GPU machine
#   DEVICE=cpu CONFIGS=tiny scripts/gpu_check.sh     # dry run here: the -m gpu tests skip
#
# Settings (environment): DEVICE (cuda), CONFIGS ("small base"), STEPS (20), WARMUP (5),
# TOTAL_SECONDS (290), TEST_SECONDS (150), RESULTS (folder for the JSON records and logs:
# $OUT when set, else a new temporary folder).
# Exit status 0 when every part passed, 1 otherwise.

set -u -o pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH=".${PYTHONPATH:+:$PYTHONPATH}"

DEVICE=${DEVICE:-cuda}
CONFIGS=${CONFIGS:-small base}
STEPS=${STEPS:-20}
WARMUP=${WARMUP:-5}
TOTAL_SECONDS=${TOTAL_SECONDS:-290}
TEST_SECONDS=${TEST_SECONDS:-150}
RESULTS=${RESULTS:-${OUT:-$(mktemp -d)}}
mkdir -p "$RESULTS"
FRAMEWORKS="minigrad torch"
failed=0

note_timeout() {  # $1: the part, $2: its exit status, $3: its time box
    if [ "$2" -eq 124 ]; then
        echo "!! $1: ran out of its ${3}s"
    else
        echo "!! $1: failed (exit status $2)"
    fi
    failed=1
}

echo "== environment (device $DEVICE; records in $RESULTS)"
if [ "$DEVICE" != cpu ]; then
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
    if ! python3 -c "import cupy; assert cupy.cuda.runtime.getDeviceCount() > 0"; then
        echo "!! CuPy does not see a GPU: the cuda tests would all skip and minigrad cannot run"
        exit 1
    fi
fi
python3 -c "import numpy, torch; print('numpy', numpy.__version__, '| torch', torch.__version__,
           '| torch sees cuda:', torch.cuda.is_available())" || failed=1
python3 -c "import cupy; print('cupy', cupy.__version__)" 2>/dev/null || echo "cupy: not installed"

echo "== 1. CUDA conformance tests (pytest -m gpu, at most ${TEST_SECONDS}s)"
if python3 -c "import pytest, hypothesis" 2>/dev/null; then
    HYPOTHESIS_PROFILE=gpu timeout "$TEST_SECONDS" \
        python3 -m pytest -q -m gpu -p no:cacheprovider tests
    status=$?
    [ "$status" -eq 0 ] || note_timeout "conformance tests" "$status" "$TEST_SECONDS"
else
    echo "!! pytest or hypothesis is not installed: no conformance tests"
    failed=1
fi

echo "== 2. training step, --device $DEVICE: configs $CONFIGS"
runs_left=$(( $(echo $CONFIGS | wc -w) * $(echo $FRAMEWORKS | wc -w) ))
for config in $CONFIGS; do
    for framework in $FRAMEWORKS; do
        share=$(( (TOTAL_SECONDS - SECONDS) / runs_left ))
        runs_left=$(( runs_left - 1 ))
        record="$RESULTS/train_step_${config}_${framework}.json"
        if [ "$share" -lt 10 ]; then
            echo "!! $framework $config: skipped, under 10s left for it"
            failed=1
            continue
        fi
        echo "-- $framework $config (at most ${share}s)"
        timeout "$share" python3 benchmarks/train_step.py --framework "$framework" \
            --config "$config" --device "$DEVICE" --steps "$STEPS" --warmup "$WARMUP" --json \
            > "$record" 2> "$RESULTS/train_step_${config}_${framework}.log"
        status=$?
        if [ "$status" -ne 0 ]; then
            tail -n 5 "$RESULTS/train_step_${config}_${framework}.log"
            rm -f "$record"
            note_timeout "$framework $config" "$status" "$share"
        fi
    done
done

echo "== minigrad / torch, ms per training step on $DEVICE (one run each; target <= 1.5)"
python3 - "$RESULTS" $CONFIGS <<'EOF'
import json
import sys
from pathlib import Path

results = Path(sys.argv[1])
for config in sys.argv[2:]:
    runs = {}
    for framework in ("minigrad", "torch"):
        path = results / f"train_step_{config}_{framework}.json"
        if path.exists():
            runs[framework] = json.loads(path.read_text().strip().splitlines()[-1])
    for run in runs.values():
        phases = run["phases"]
        print(f"{config:>6} {run['framework']:<9} median {run['median_ms']:8.2f} ms "
              f"(min {run['min_ms']:.2f}, max {run['max_ms']:.2f}); forward "
              f"{phases['forward_ms']:.2f}, backward {phases['backward_ms']:.2f}, optimizer "
              f"{phases['optimizer_ms']:.2f}; matmul floor {run['matmul_floor_ms']:.2f} ms at "
              f"{run['gflops']:.0f} GFLOP/s; no-grad forward {run['no_grad_forward_ms']:.2f} ms")
    if len(runs) == 2:
        ours, theirs = runs["minigrad"], runs["torch"]
        print(f"{config:>6} minigrad/torch: {ours['median_ms'] / theirs['median_ms']:.2f} "
              f"(of the minimums: {ours['min_ms'] / theirs['min_ms']:.2f})")
    else:
        print(f"{config:>6} no ratio: a run failed or ran out of time")
EOF

echo "== done in ${SECONDS}s: $([ "$failed" -eq 0 ] && echo 'all passed' || echo 'FAILURES above')"
exit "$failed"
