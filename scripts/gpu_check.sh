#!/usr/bin/env bash
# The GPU check: one call on a machine with an NVIDIA GPU, CuPy >= 14, pytest (with
# pytest-xdist and pytest-timeout), hypothesis and PyTorch; it installs nothing and runs from
# the checkout (PYTHONPATH=.). It fits a short loan: at most about 420 s of command time,
# every part time-boxed with `timeout -s INT` (pytest then still prints its failures), and
# Python unbuffered, so that a part cut short still leaves its output. The parts (PARTS):
#
#   smoke  scripts/gpu_smoke.py against the CPU (plain and fused kernels, NCCL's allreduce of
#          ones(4) on one GPU, launches by profiler and by the stand-in's rule); it also
#          pays CuPy's first-use compilation of the kernels                       (90 s)
#   tests  the cuda suite (`-m gpu`, hypothesis profile `gpu`) in two pytest calls, each
#          `-n 8 --timeout 120 --junitxml`: first the decisive files (cuda, fused,
#          cuda training, backend and optimizer tests), then the rest       (110 s + 80 s)
#   main   the README's run on the GPU: examples/train_translation.py --device cuda
#          --steps 200, a translation with its checkpoint, ms per step against the CPU (80 s)
#   bench  benchmarks/train_step.py small and base, minigrad and torch; minigrad --fused
#          only once the fused-kernel tests have passed                            (60 s)
#
#   scripts/gpu_check.sh                                   # everything, on the GPU machine
#   PARTS=tests TESTS="tests/engine/test_fused.py" scripts/gpu_check.sh   # a rerun (<= 150 s)
#   DEVICE=cpu scripts/gpu_check.sh                        # a dry run here, on the stand-in
#
# Settings (environment): DEVICE (cuda; cpu: every part on the CuPy stand-in, a slice of the
# suite, tiny configs counted over one step, torch runs skipped), PARTS (smoke,tests,main,
# bench), TESTS (a pytest selection run instead of the two test calls), WORKERS (8,
# pytest's -n), OUT (where the files go; a new temporary folder when unset), KERNEL_CACHE
# (a kernel_cache.tar.gz of an earlier call to start warm). It writes at most 4 files to
# OUT: records.tar.gz (every part's log, the junit XML, the benchmark JSON), console.log,
# kernel_cache.tar.gz (CuPy's compiled kernels; left out, with a line, above 12 MiB) and
# summary.txt, the one-screen summary (scripts/gpu_check_summary.py) that it also prints
# last.
# Exit status 0 when every part passed, 1 otherwise.

set -u -o pipefail
STARTED=0
cd "$(dirname "$0")/.."
export PYTHONPATH=".${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=gpu

DEVICE=${DEVICE:-cuda}
PARTS=${PARTS:-smoke,tests,main,bench}
TESTS=${TESTS:-}
WORKERS=${WORKERS:-8}
OUT=${OUT:-$(mktemp -d)}
KERNEL_CACHE=${KERNEL_CACHE:-}
export CUPY_CACHE_DIR=${CUPY_CACHE_DIR:-$HOME/.cupy/kernel_cache}
WORK=$(mktemp -d)
RECORDS="$WORK/records"
mkdir -p "$OUT" "$RECORDS" "$CUPY_CACHE_DIR"
exec > >(tee "$WORK/console.log") 2>&1

if [ "$DEVICE" = cpu ]; then
    PY=(python3 -m minigrad.testing.fake_cupy)  # scripts run with the stand-in as CuPy
    SMOKE=(--quick)
    DECISIVE=(tests/engine/test_fused.py -k layer_norm)
    REST=(tests/engine/test_cuda.py -k "seed or rng")
    MAIN=(--task copy --d-model 16 --heads 2 --layers 1 --d-ff 32) SENTENCE="a b c"
    CONFIGS="tiny" MAIN_STEPS=2 CPU_STEPS=2
else
    PY=(python3)
    SMOKE=()
    MAIN=() SENTENCE="the ball is blue"
    DECISIVE=(tests/engine/test_cuda.py tests/engine/test_fused.py
              tests/training/test_cuda_training.py tests/engine/test_backend.py tests/optim)
    REST=(tests "${DECISIVE[@]/#/--ignore=}")
    CONFIGS="small base" MAIN_STEPS=200 CPU_STEPS=20
fi

part() { [[ ",$PARTS," == *",$1,"* ]]; }
status() {  # $1: the part, $2: its exit status, $3: its time box; one line in status.txt
    local what=passed
    [ "$2" -eq 124 ] && what="ran out of its ${3}s"
    [ "$2" -ne 0 ] && [ "$2" -ne 124 ] && what="failed (exit status $2)"
    echo "$1: $what ($((SECONDS - STARTED))s)" | tee -a "$RECORDS/status.txt"
}
timed() {  # $1: the time box, $2: the log, then the command: its exit status
    local box=$1 log=$2
    shift 2
    STARTED=$SECONDS
    timeout -s INT -k 10 "$box" "$@" 2>&1 | tee "$RECORDS/$log"
}

echo "== environment (device $DEVICE, parts $PARTS; files to $OUT)"
if [ "$DEVICE" != cpu ]; then
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader || true
    [ -n "$KERNEL_CACHE" ] && tar -xzf "$KERNEL_CACHE" -C "$CUPY_CACHE_DIR" \
        && echo "kernel cache restored from $KERNEL_CACHE"
    python3 -c "import cupy; print('cupy', cupy.__version__, cupy.cuda.runtime.getDeviceCount(),
                'GPU(s)')" || echo "!! CuPy >= 14 that sees a GPU is needed: pip install -e \
'.[gpu-cuda12]' (CUDA 12) or pip install -e '.[gpu-cuda13]' (CUDA 13)"
fi
python3 -c "import sys, numpy; print('python', sys.version.split()[0], '| numpy',
            numpy.__version__)"
python3 -c "import torch; print('torch', torch.__version__, '| cuda:',
            torch.cuda.is_available())" 2>/dev/null || echo "no PyTorch: torch runs skipped"

if part smoke; then
    echo "== smoke (at most 90s)"
    timed 90 smoke.log "${PY[@]}" scripts/gpu_smoke.py "${SMOKE[@]}"
    status smoke "$?" 90
fi

if part tests; then
    # --dist load: the suite's addopts keep a file in one worker; here the tests of one file
    # (the generated op checks) are shared out over every worker
    options=(-q -m gpu -p no:cacheprovider -n "$WORKERS" --dist load --timeout 120)
    if [ -n "$TESTS" ]; then
        echo "== tests: $TESTS (at most 140s)"
        # shellcheck disable=SC2086  # TESTS is a selection of several words
        timed 140 tests_selected.log python3 -m pytest "${options[@]}" \
            --junitxml="$RECORDS/junit_selected.xml" $TESTS
        status "tests ($TESTS)" "$?" 140
    else
        echo "== tests: the decisive files (at most 110s)"
        timed 110 tests_decisive.log python3 -m pytest "${options[@]}" \
            --junitxml="$RECORDS/junit_decisive.xml" "${DECISIVE[@]}"
        status "tests, decisive" "$?" 110
        echo "== tests: the rest (at most 80s)"
        timed 80 tests_rest.log python3 -m pytest "${options[@]}" \
            --junitxml="$RECORDS/junit_rest.xml" "${REST[@]}"
        status "tests, the rest" "$?" 80
    fi
fi

if part main; then
    echo "== main: train_translation.py --device cuda --steps $MAIN_STEPS, translate (at most 80s)"
    run="$WORK/run-cuda"
    start=$(date +%s%N)
    timed 55 main_cuda.log "${PY[@]}" examples/train_translation.py --device cuda \
        --steps "$MAIN_STEPS" --out "$run" --no-progress "${MAIN[@]}"
    code=$?
    echo "{\"device\": \"cuda\", \"steps\": $MAIN_STEPS," \
         "\"ms\": $(( ($(date +%s%N) - start) / 1000000 ))}" > "$RECORDS/main_cuda.json"
    status "main, training on cuda" "$code" 55
    timed 10 main_translate.log "${PY[@]}" examples/translate.py --checkpoint "$run" \
        --device cuda "$SENTENCE"
    status "main, translate" "$?" 10
    start=$(date +%s%N)
    timed 15 main_cpu.log python3 examples/train_translation.py --device cpu \
        --steps "$CPU_STEPS" --out "$WORK/run-cpu" --no-progress "${MAIN[@]}"
    code=$?  # the reference's final evaluation may be cut short once it has trained
    [ "$code" -eq 124 ] && grep -qs "^trained" "$RECORDS/main_cpu.log" && code=0
    echo "{\"device\": \"cpu\", \"steps\": $CPU_STEPS," \
         "\"ms\": $(( ($(date +%s%N) - start) / 1000000 ))}" > "$RECORDS/main_cpu.json"
    status "main, training on cpu" "$code" 15
fi

if part bench; then
    fused=""
    if grep -qs "test_fused" "$RECORDS"/junit_*.xml \
            && ! grep -qs "<failure\|<error" "$RECORDS/junit_decisive.xml"; then
        fused="--fused"
    else
        echo "bench: no --fused (the fused-kernel tests have not passed in this call)"
    fi
    echo "== bench: train_step $CONFIGS (at most 60s in all)"
    for config in $CONFIGS; do
        for run in "minigrad" "minigrad $fused" "torch"; do
            set -- $run
            [ "$run" = "minigrad " ] && continue
            name="train_step_${config}_$1${2:+_fused}"
            if [ "$1" = torch ] && { [ "$DEVICE" = cpu ] \
                    || ! python3 -c "import torch" 2>/dev/null; }; then
                echo "$name: skipped, no PyTorch on a GPU" | tee -a "$RECORDS/status.txt"
                continue
            fi
            if [ "$DEVICE" = cpu ]; then  # the stand-in counts launches; it times nothing
                timed 120 "$name.log" python3 benchmarks/train_step.py --count \
                    --config "$config" --warmup 1 --steps 1 ${2:-} --json
                status "$name (--count)" "$?" 120
            else
                timed 10 "$name.log" python3 benchmarks/train_step.py --framework "$1" \
                    --config "$config" --device cuda --steps 10 --warmup 2 ${2:-} --json
                status "$name" "$?" 10
            fi
            tail -n 1 "$RECORDS/$name.log" > "$RECORDS/$name.json"
        done
    done
fi

echo "== files"
tar -czf "$OUT/records.tar.gz" -C "$WORK" records
if [ "$DEVICE" != cpu ]; then
    tar -czf "$WORK/kernel_cache.tar.gz" -C "$CUPY_CACHE_DIR" .
    size=$(stat -c %s "$WORK/kernel_cache.tar.gz")
    if [ "$size" -le $((12 * 1024 * 1024)) ]; then
        cp "$WORK/kernel_cache.tar.gz" "$OUT/"
    else
        echo "kernel_cache.tar.gz left out: $((size / 1024 / 1024)) MiB, over 12 MiB"
    fi
fi
python3 scripts/gpu_check_summary.py "$RECORDS" "$SECONDS" | tee "$OUT/summary.txt"
cp "$WORK/console.log" "$OUT/console.log"
! grep -qv ": passed\|: skipped" "$RECORDS/status.txt"
