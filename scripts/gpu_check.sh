#!/usr/bin/env bash
# The GPU check: one call on a machine with an NVIDIA GPU, CuPy >= 14, pytest (with
# pytest-xdist and pytest-timeout), hypothesis and PyTorch; it installs nothing and runs from
# the checkout (PYTHONPATH=.). Give the call a timeout of 450 s: every step below runs in a
# time box (`timeout -s INT`, then a kill after its grace; pytest prints its failures on INT),
# and the boxes with their graces add up to 374 s, which leaves the rest for the shell, the
# start of Python and the copies. Python runs unbuffered, the console goes straight to
# $OUT/console.log, and $OUT/summary.txt and $OUT/records.tar.gz are rewritten after every
# part: a call killed at any point returns what its finished parts found.
#
#   part   step                                                              box + grace
#   env    versions (pytest, pytest-xdist, pytest-timeout, CuPy, CUDA, NCCL,
#          NumPy, PyTorch)                                                    10 + 2
#          nvidia-smi                                                          4 + 1
#          a kernel cache restored (KERNEL_CACHE)                              4 + 1
#   smoke  scripts/gpu_smoke.py against the CPU (plain and fused kernels,
#          NCCL's allreduce on one GPU, launches by profiler and by the
#          stand-in's rule); it pays CuPy's first compilation of the kernels  65 + 5
#   tests  the cuda suite (`-m gpu`, hypothesis profile `gpu`): the decisive
#          files (cuda, fused, cuda training, backend, optimizer tests),      85 + 5
#          then the rest; each test at most 40 s (--timeout)                  45 + 5
#   main   the README's run: train_translation.py --device cuda --steps 200   38 + 2
#          a translation from its checkpoint                                   8 + 2
#          20 steps on the CPU, for ms per step against the GPU               10 + 2
#   bench  benchmarks/train_step.py small and base: minigrad, minigrad
#          --fused (once the fused-kernel tests have passed), torch      6 x (7 + 1)
#   files  after each of the 5 parts: records.tar.gz and summary.txt     5 x (4 + 1)
#          at the end: kernel_cache.tar.gz                                     6 + 1
#                                                                   in all:   374 s
#
#   scripts/gpu_check.sh                                   # everything, on the GPU machine
#   PARTS=tests TESTS="tests/engine/test_fused.py" scripts/gpu_check.sh   # a rerun
#   DEVICE=cpu scripts/gpu_check.sh                        # a dry run here, on the stand-in
#
# Settings (environment): DEVICE (cuda; cpu: every part on the CuPy stand-in, a slice of the
# suite, tiny configs counted over one step (box 60 s each), torch runs skipped), PARTS
# (env,smoke,tests,main,bench), TESTS (a pytest selection run instead of the two test
# calls, in a box of 140 s), WORKERS (8, pytest's -n), OUT (where the files go; a new
# temporary folder when unset), KERNEL_CACHE (a kernel_cache.tar.gz of an earlier call to
# start warm). On cuda it sets MINIGRAD_REQUIRE_CUDA=1: the tests and the smoke then refuse
# to run on the CuPy stand-in. pytest runs with `-o addopts=` (the suite's addopts need a
# newer pytest-xdist than the machine may have) and --continue-on-collection-errors. It
# writes at most 4 files to OUT: console.log, summary.txt (the one-screen summary,
# scripts/gpu_check_summary.py, also printed last), records.tar.gz (every step's log, the
# junit XML, the benchmark JSON) and kernel_cache.tar.gz (CuPy's compiled kernels; left out,
# with a line, above 12 MiB).
# Exit status 0 when every part passed, 1 otherwise.

set -u -o pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH=".${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1 HYPOTHESIS_PROFILE=gpu

DEVICE=${DEVICE:-cuda}
PARTS=${PARTS:-env,smoke,tests,main,bench}
TESTS=${TESTS:-}
WORKERS=${WORKERS:-8}
OUT=${OUT:-$(mktemp -d)}
KERNEL_CACHE=${KERNEL_CACHE:-}
export CUPY_CACHE_DIR=${CUPY_CACHE_DIR:-$HOME/.cupy/kernel_cache}
WORK=$(mktemp -d)
RECORDS="$WORK/records"
mkdir -p "$OUT" "$RECORDS" "$CUPY_CACHE_DIR"
exec > >(tee "$OUT/console.log") 2>&1
STARTED=$SECONDS

if [ "$DEVICE" = cpu ]; then
    PY=(python3 -m minigrad.testing.fake_cupy)  # scripts run with the stand-in as CuPy
    SMOKE=(--quick)
    DECISIVE=(tests/engine/test_fused.py -k layer_norm)
    REST=(tests/engine/test_cuda.py -k "seed or rng")
    MAIN=(--task copy --d-model 16 --heads 2 --layers 1 --d-ff 32) SENTENCE="a b c"
    CONFIGS="tiny" MAIN_STEPS=2 CPU_STEPS=2 BENCH_BOX=60
else
    export MINIGRAD_REQUIRE_CUDA=1
    PY=(python3)
    SMOKE=()
    MAIN=() SENTENCE="the ball is blue"
    DECISIVE=(tests/engine/test_cuda.py tests/engine/test_fused.py
              tests/training/test_cuda_training.py tests/engine/test_backend.py tests/optim)
    REST=(tests "${DECISIVE[@]/#/--ignore=}")
    CONFIGS="small base" MAIN_STEPS=200 CPU_STEPS=20 BENCH_BOX=7
fi

part() { [[ ",$PARTS," == *",$1,"* ]]; }
status() {  # $1: the step, $2: its exit status, $3: its time box; one line in status.txt
    local what=passed
    [ "$2" -eq 124 ] && what="ran out of its ${3}s"
    [ "$2" -ne 0 ] && [ "$2" -ne 124 ] && what="failed (exit status $2)"
    echo "$1: $what ($((SECONDS - STEP_STARTED))s)" | tee -a "$RECORDS/status.txt"
}
timed() {  # $1: the time box, $2: the kill grace, $3: the log, then the command
    local box=$1 grace=$2 log=$3
    shift 3
    STEP_STARTED=$SECONDS
    timeout -s INT -k "$grace" "$box" "$@" 2>&1 | tee "$RECORDS/$log"
}
save() {  # records.tar.gz and summary.txt into OUT, each replaced whole (4 s + 1)
    timeout -k 1 4 bash -c '
        tar -czf "$1/records.tar.gz" -C "$1" records && mv -f "$1/records.tar.gz" "$2/" &&
        python3 scripts/gpu_check_summary.py "$1/records" "$3" > "$1/summary.txt" &&
        mv -f "$1/summary.txt" "$2/"' save "$WORK" "$OUT" "$((SECONDS - STARTED))" \
        || echo "!! the files of this part were not saved within 4 s"
}

echo "== environment (device $DEVICE, parts $PARTS; files to $OUT)"
if part env; then
    timed 10 2 env.log python3 -c '
import importlib.metadata as metadata, sys
def version(name):
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"
print("python", sys.version.split()[0], "| " + " | ".join(
    f"{name} {version(name)}" for name in ("pytest", "pytest-xdist", "pytest-timeout",
                                           "numpy", "hypothesis", "torch")))
try:
    import cupy
    from cupy.cuda import nccl, runtime
except ImportError as error:
    print("CuPy: not importable:", error)
    sys.exit(0)
print("CuPy", cupy.__version__, "| CUDA runtime", runtime.runtimeGetVersion(),
      "| driver", runtime.driverGetVersion(), "| NCCL",
      nccl.get_version() if nccl.available else "not available (no libnccl)")
print(runtime.getDeviceCount(), "GPU(s)")'
    status "env, versions" "$?" 10
    if [ "$DEVICE" != cpu ]; then
        timeout -k 1 4 nvidia-smi --query-gpu=name,memory.total,driver_version \
            --format=csv,noheader || echo "!! nvidia-smi failed"
        if [ -n "$KERNEL_CACHE" ]; then
            timeout -k 1 4 tar -xzf "$KERNEL_CACHE" -C "$CUPY_CACHE_DIR" \
                && echo "kernel cache restored from $KERNEL_CACHE"
        fi
    fi
    save
fi

if part smoke; then
    echo "== smoke (at most 65s)"
    timed 65 5 smoke.log "${PY[@]}" scripts/gpu_smoke.py "${SMOKE[@]}"
    status smoke "$?" 65
    save
fi

if part tests; then
    # -o addopts=: none of pyproject.toml's options (--no-loadscope-reorder needs
    # pytest-xdist 3.8); --dist load shares one file's tests (the op checks) over the workers
    options=(-o addopts= -q -m gpu -p no:cacheprovider --continue-on-collection-errors -ra)
    if grep -qs "pytest-xdist not installed" "$RECORDS/env.log"; then
        echo "tests: no pytest-xdist, in one process"
    else
        options+=(-n "$WORKERS" --dist load)
    fi
    if grep -qs "pytest-timeout not installed" "$RECORDS/env.log"; then
        echo "tests: no pytest-timeout, no test's own time limit"
    else
        options+=(--timeout 40)
    fi
    if [ -n "$TESTS" ]; then
        echo "== tests: $TESTS (at most 140s)"
        # shellcheck disable=SC2086  # TESTS is a selection of several words
        timed 140 5 tests_selected.log python3 -m pytest "${options[@]}" \
            --junitxml="$RECORDS/junit_selected.xml" $TESTS
        status "tests ($TESTS)" "$?" 140
    else
        echo "== tests: the decisive files (at most 85s)"
        timed 85 5 tests_decisive.log python3 -m pytest "${options[@]}" \
            --junitxml="$RECORDS/junit_decisive.xml" "${DECISIVE[@]}"
        status "tests, decisive" "$?" 85
        echo "== tests: the rest (at most 45s)"
        timed 45 5 tests_rest.log python3 -m pytest "${options[@]}" \
            --junitxml="$RECORDS/junit_rest.xml" "${REST[@]}"
        status "tests, the rest" "$?" 45
    fi
    save
fi

if part main; then
    echo "== main: train_translation.py --device cuda --steps $MAIN_STEPS, translate (at most 56s)"
    run="$WORK/run-cuda"
    start=$(date +%s%N)
    timed 38 2 main_cuda.log "${PY[@]}" examples/train_translation.py --device cuda \
        --steps "$MAIN_STEPS" --out "$run" --no-progress "${MAIN[@]}"
    code=$?
    echo "{\"device\": \"cuda\", \"steps\": $MAIN_STEPS," \
         "\"ms\": $(( ($(date +%s%N) - start) / 1000000 ))}" > "$RECORDS/main_cuda.json"
    status "main, training on cuda" "$code" 38
    timed 8 2 main_translate.log "${PY[@]}" examples/translate.py --checkpoint "$run" \
        --device cuda "$SENTENCE"
    status "main, translate" "$?" 8
    start=$(date +%s%N)
    timed 10 2 main_cpu.log python3 examples/train_translation.py --device cpu \
        --steps "$CPU_STEPS" --out "$WORK/run-cpu" --no-progress "${MAIN[@]}"
    code=$?  # the reference's final evaluation may be cut short once it has trained
    [ "$code" -eq 124 ] && grep -qs "^trained" "$RECORDS/main_cpu.log" && code=0
    echo "{\"device\": \"cpu\", \"steps\": $CPU_STEPS," \
         "\"ms\": $(( ($(date +%s%N) - start) / 1000000 ))}" > "$RECORDS/main_cpu.json"
    status "main, training on cpu" "$code" 10
    save
fi

if part bench; then
    fused=""
    if grep -qs "test_fused" "$RECORDS"/junit_*.xml \
            && ! grep -qs "<failure\|<error" "$RECORDS/junit_decisive.xml"; then
        fused="--fused"
    else
        echo "bench: no --fused (the fused-kernel tests have not passed in this call)"
    fi
    echo "== bench: train_step $CONFIGS (at most ${BENCH_BOX}s a run)"
    for config in $CONFIGS; do
        for run in "minigrad" "minigrad $fused" "torch"; do
            set -- $run
            [ "$run" = "minigrad " ] && continue
            name="train_step_${config}_$1${2:+_fused}"
            if [ "$1" = torch ] && { [ "$DEVICE" = cpu ] \
                    || grep -qs "torch not installed" "$RECORDS/env.log"; }; then
                echo "$name: skipped, no PyTorch on a GPU" | tee -a "$RECORDS/status.txt"
                continue
            fi
            if [ "$DEVICE" = cpu ]; then  # the stand-in counts launches; it times nothing
                timed "$BENCH_BOX" 1 "$name.log" python3 benchmarks/train_step.py --count \
                    --config "$config" --warmup 1 --steps 1 ${2:-} --json
                status "$name (--count)" "$?" "$BENCH_BOX"
            else
                timed "$BENCH_BOX" 1 "$name.log" python3 benchmarks/train_step.py \
                    --framework "$1" --config "$config" --device cuda --steps 5 --warmup 2 \
                    ${2:-} --json
                status "$name" "$?" "$BENCH_BOX"
            fi
            tail -n 1 "$RECORDS/$name.log" > "$RECORDS/$name.json"
        done
    done
    save
fi

echo "== files"
if [ "$DEVICE" != cpu ]; then  # the records and the summary are in OUT already
    timeout -k 1 6 tar -czf "$WORK/kernel_cache.tar.gz" -C "$CUPY_CACHE_DIR" .
    size=$(stat -c %s "$WORK/kernel_cache.tar.gz" 2>/dev/null || echo 0)
    if [ "$size" -gt 0 ] && [ "$size" -le $((12 * 1024 * 1024)) ]; then
        mv -f "$WORK/kernel_cache.tar.gz" "$OUT/"
    else
        echo "kernel_cache.tar.gz left out: $((size / 1024 / 1024)) MiB (over 12 MiB, or none)"
    fi
fi
cat "$OUT/summary.txt" 2>/dev/null
! grep -qv ": passed\|: skipped" "$RECORDS/status.txt"
