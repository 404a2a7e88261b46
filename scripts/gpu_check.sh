#!/usr/bin/env bash
# The CUDA checks, in one go, for a machine with an NVIDIA GPU where CuPy (>= 14) and PyTorch
# are installed; it installs nothing and runs from the checkout (PYTHONPATH=.), with python3:
#   0. the environment: the GPU, Python, NumPy, CuPy (>= 14, sees the GPU), PyTorch;
#   1. a smoke run against the CPU (scripts/gpu_smoke.py): backward, cross-entropy, masked
#      softmax, LayerNorm, embedding, three Trainer steps; plain and fused kernels; the
#      stand-in's launch count beside torch.profiler's. Its calls also pay CuPy's first-use
#      compilation of every kernel, so the parts after it run warm;
#   2. the cuda suite on real CuPy (`pytest -m gpu`, hypothesis profile `gpu`);
#   3. the benchmarks on cuda: train_step small and base (minigrad, minigrad --fused, torch),
#      then op_overhead (minigrad, torch), and the ratios minigrad / torch.
# Every part is time-boxed with `timeout` so the whole fits in TOTAL_SECONDS: the smoke run
# gets at most SMOKE_SECONDS, the tests TEST_SECONDS, each benchmark run an equal share of
# what is left; a part that runs out of time is reported as such and the next one starts.
#
#   scripts/gpu_check.sh                             # on the GPU machine
#   DEVICE=cpu CONFIGS=tiny scripts/gpu_check.sh     # a dry run of the benchmark part here
#
# Settings (environment): DEVICE (cuda), CONFIGS ("small base"), STEPS (20), WARMUP (5),
# TOTAL_SECONDS (540), SMOKE_SECONDS (150), TEST_SECONDS (180), RESULTS (folder for the JSON
# records and logs: $OUT when set, else a new temporary folder).
# Exit status 0 when every part passed, 1 otherwise.

set -u -o pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH=".${PYTHONPATH:+:$PYTHONPATH}"

DEVICE=${DEVICE:-cuda}
CONFIGS=${CONFIGS:-small base}
STEPS=${STEPS:-20}
WARMUP=${WARMUP:-5}
TOTAL_SECONDS=${TOTAL_SECONDS:-540}
SMOKE_SECONDS=${SMOKE_SECONDS:-150}
TEST_SECONDS=${TEST_SECONDS:-180}
RESULTS=${RESULTS:-${OUT:-$(mktemp -d)}}
mkdir -p "$RESULTS"
failed=0

note_failure() {  # $1: the part, $2: its exit status, $3: its time box
    if [ "$2" -eq 124 ]; then
        echo "!! $1: ran out of its ${3}s"
    else
        echo "!! $1: failed (exit status $2)"
    fi
    failed=1
}

left() {  # seconds left of TOTAL_SECONDS, at most $1
    local rest=$(( TOTAL_SECONDS - SECONDS ))
    [ "$rest" -lt "$1" ] && echo "$rest" || echo "$1"
}

echo "== 0. environment (device $DEVICE; records in $RESULTS)"
command -v python3 >/dev/null || { echo "!! no python3 on this machine"; exit 1; }
if [ "$DEVICE" != cpu ]; then
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
    if ! python3 -c "
import sys, cupy
major = int(cupy.__version__.split('.')[0])
count = cupy.cuda.runtime.getDeviceCount()
print('cupy', cupy.__version__, '|', count, 'GPU(s)')
sys.exit(0 if major >= 14 and count > 0 else 1)"; then
        echo "!! CuPy >= 14 that sees a GPU is needed: pip install -e '.[gpu-cuda12]' (CUDA 12) or pip install -e '.[gpu-cuda13]' (CUDA 13)"
        exit 1
    fi
fi
python3 -c "import sys, numpy, torch; print('python', sys.version.split()[0], '| numpy',
           numpy.__version__, '| torch', torch.__version__, '| torch sees cuda:',
           torch.cuda.is_available())" || echo "!! no PyTorch: no torch runs, no ratios"

if [ "$DEVICE" != cpu ]; then
    box=$(left "$SMOKE_SECONDS")
    echo "== 1. smoke run against the CPU (at most ${box}s, CuPy compiles its kernels here)"
    timeout "$box" python3 scripts/gpu_smoke.py
    status=$?
    [ "$status" -eq 0 ] || note_failure "smoke run" "$status" "$box"

    box=$(left "$TEST_SECONDS")
    echo "== 2. the cuda suite on real CuPy (pytest -m gpu, at most ${box}s)"
    if python3 -c "import pytest, hypothesis" 2>/dev/null; then
        HYPOTHESIS_PROFILE=gpu timeout "$box" \
            python3 -m pytest -q -m gpu -p no:cacheprovider tests
        status=$?
        [ "$status" -eq 0 ] || note_failure "cuda suite" "$status" "$box"
    else
        echo "!! pytest or hypothesis is not installed: no cuda suite"
        failed=1
    fi
fi

echo "== 3. benchmarks on $DEVICE: train_step ($CONFIGS), then op_overhead"
runs=()
for config in $CONFIGS; do
    runs+=("train_step $config minigrad" "train_step $config minigrad --fused"
           "train_step $config torch")
done
runs+=("op_overhead - minigrad" "op_overhead - torch")
runs_left=${#runs[@]}
for run in "${runs[@]}"; do
    set -- $run
    benchmark=$1 config=$2 framework=$3 extra=${4:-}
    share=$(( (TOTAL_SECONDS - SECONDS) / runs_left ))
    runs_left=$(( runs_left - 1 ))
    name="${benchmark}_${config}_${framework}${extra:+_fused}"
    if [ "$share" -lt 10 ]; then
        echo "!! $name: skipped, under 10s left for it"
        failed=1
        continue
    fi
    if [ "$benchmark" = train_step ]; then
        arguments=(--config "$config" --steps "$STEPS" --warmup "$WARMUP" $extra)
    else
        arguments=(--ops 1000 --repeats 20)
    fi
    echo "-- $name (at most ${share}s)"
    timeout "$share" python3 "benchmarks/$benchmark.py" --framework "$framework" \
        --device "$DEVICE" "${arguments[@]}" --json \
        > "$RESULTS/$name.json" 2> "$RESULTS/$name.log"
    status=$?
    if [ "$status" -ne 0 ]; then
        tail -n 5 "$RESULTS/$name.log"
        rm -f "$RESULTS/$name.json"
        note_failure "$name" "$status" "$share"
    fi
done

echo "== minigrad / torch on $DEVICE (one run each; target <= 1.5 for train_step)"
python3 - "$RESULTS" $CONFIGS <<'EOF'
import json
import sys
from pathlib import Path

results = Path(sys.argv[1])


def record(name):
    path = results / f"{name}.json"
    return json.loads(path.read_text().strip().splitlines()[-1]) if path.exists() else None


for config in sys.argv[2:]:
    torch = record(f"train_step_{config}_torch")
    for label in ("minigrad", "minigrad_fused"):
        ours = record(f"train_step_{config}_{label}")
        if ours is None:
            print(f"{config:>6} {label:<15} no record: the run failed or ran out of time")
            continue
        phases = ours["phases"]
        line = (f"{config:>6} {label:<15} median {ours['median_ms']:8.2f} ms (forward "
                f"{phases['forward_ms']:.2f}, backward {phases['backward_ms']:.2f}, optimizer "
                f"{phases['optimizer_ms']:.2f}); matmul floor {ours['matmul_floor_ms']:.2f} ms")
        if torch is not None:
            line += f"; / torch {ours['median_ms'] / torch['median_ms']:.2f}"
        print(line)
    if torch is not None:
        print(f"{config:>6} {'torch':<15} median {torch['median_ms']:8.2f} ms")
ours, theirs = record("op_overhead_-_minigrad"), record("op_overhead_-_torch")
for label, run in (("minigrad", ours), ("torch", theirs)):
    if run is not None:
        print(f"op_overhead {label:<9} {run['us_per_op']:.2f} us per op (forward + backward)")
if ours and theirs:
    print(f"op_overhead minigrad / torch: {ours['us_per_op'] / theirs['us_per_op']:.2f}")
EOF

echo "== done in ${SECONDS}s: $([ "$failed" -eq 0 ] && echo 'all passed' || echo 'FAILURES above')"
exit "$failed"
