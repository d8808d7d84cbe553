#!/usr/bin/env bash
# bench/fuzz.sh [SECONDS=3600] [BUILD_DIR=./build]: fuzzes everything that reads a trace (the
# reader, the model builder, every analysis, report and export: fuzz/trace_fuzzer.cpp) with
# libFuzzer under ASan+UBSan, for SECONDS of wall time on every CPU.
#
# Builds build-fuzz/ (clang-14, TASKLENS_SANITIZE=fuzzer) if needed, and seeds the corpus with
# traces recorded by BUILD_DIR's tasklens (`--compression none`, so that mutations reach the
# events) of small runs of the examples: OpenMP tasks, loops, dependences, oneTBB, user regions.
# The corpus grows in build-fuzz/corpus/ from run to run. Prints the executions, the coverage
# (libFuzzer's cov: and ft: counters) and the findings; exits 1 when there is a finding (the
# input is saved as build-fuzz/findings/crash-*; reproduce with build-fuzz/fuzz/trace_fuzzer FILE).
# scripts/test.sh runs it for 45 s; run it for hours before trusting a new reader.
set -euo pipefail
export LC_ALL=C
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SECONDS_TO_RUN=${1:-3600}
BUILD=$(cd "${2:-$SRC/build}" && pwd)
FUZZ_BUILD=$SRC/build-fuzz
TL=$BUILD/tasklens
EX=$BUILD/examples
[[ -x $TL ]] || { echo "fuzz: $TL not found: build tasklens first (scripts/setup.sh)" >&2; exit 2; }

if [[ ! -f $FUZZ_BUILD/build.ninja ]]; then
  CC=clang-14 CXX=clang++-14 cmake -S "$SRC" -B "$FUZZ_BUILD" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTASKLENS_SANITIZE=fuzzer -DTASKLENS_BUILD_TESTS=OFF \
    -DTASKLENS_BUILD_EXAMPLES=OFF -DTASKLENS_BUILD_BENCH=OFF >/dev/null
fi
cmake --build "$FUZZ_BUILD" -j"$(nproc)" --target trace_fuzzer

SEEDS=$FUZZ_BUILD/seeds CORPUS=$FUZZ_BUILD/corpus FINDINGS=$FUZZ_BUILD/findings
mkdir -p "$SEEDS" "$CORPUS" "$FINDINGS"
seed() {  # seed NAME THREADS PROGRAM ARGS...: a small recording, once
  local name=$1 threads=$2
  shift 2
  [[ -s $SEEDS/$name.tlens ]] && return 0
  [[ -x $1 ]] || { echo "fuzz: no seed $name ($1 not built)"; return 0; }
  OMP_NUM_THREADS=$threads "$TL" record --compression none -o "$SEEDS/$name.tlens" -- "$@" \
    >/dev/null 2>&1 || echo "fuzz: recording the seed $name failed (skipped)"
}
seed fib 2 "$EX/fib_clang" 8 10
seed fib_gcc 2 "$EX/fib_gcc" 8 10
seed nqueens 2 "$EX/suite_nqueens_clang" 5
seed loops 2 "$EX/suite_sparselu_clang" 4 4 1
seed cholesky 2 "$EX/suite_cholesky_clang" 3 4
seed tbb 2 "$EX/tbb_fib" 8 10
seed sleep 2 "$EX/sleep_in_task_clang" 2 100 1
seed ordered 2 "$EX/loop_forms_clang" ordered 16 10
seed static_loops 2 "$EX/stencil_clang" 2 16 10 10 10
[[ -n $(ls -A "$SEEDS") ]] || { echo "fuzz: no seed could be recorded" >&2; exit 1; }

LOG=$FUZZ_BUILD/fuzz.log
jobs=$(nproc)
set +e
(cd "$FINDINGS" && "$FUZZ_BUILD/fuzz/trace_fuzzer" -max_total_time="$SECONDS_TO_RUN" \
  -max_len=65536 -rss_limit_mb=2048 -timeout=30 -print_final_stats=1 -jobs="$jobs" \
  -workers="$jobs" "$CORPUS" "$SEEDS") >"$LOG" 2>&1
status=$?
set -e
# With -jobs each worker logs to fuzz-N.log in the working directory, and libFuzzer's main
# process copies each finished worker's log into its own output too: the executions are counted
# from the workers' logs when there are some (counting both doubled the figure), else from LOG.
worker_logs=("$FINDINGS"/fuzz-*.log)
if [[ -e ${worker_logs[0]} ]]; then
  runs=$(cat "${worker_logs[@]}" | awk '/stat::number_of_executed_units:/ {n += $2} END {print n + 0}')
  grep -q "stat::number_of_executed_units" "$LOG" || cat "${worker_logs[@]}" >>"$LOG"
else
  runs=$(awk '/stat::number_of_executed_units:/ {n += $2} END {print n + 0}' "$LOG")
fi
rm -f "$FINDINGS"/fuzz-*.log
cov=$(grep -o 'cov: [0-9]*' "$LOG" | awk '{print $2}' | sort -n | tail -1)
ft=$(grep -o 'ft: [0-9]*' "$LOG" | awk '{print $2}' | sort -n | tail -1)
found=$(find "$FINDINGS" -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' \
  -o -name 'oom-*' \) | wc -l)
echo "fuzz: $runs executions in ${SECONDS_TO_RUN} s on $jobs workers; coverage cov ${cov:-?}," \
  "ft ${ft:-?}; corpus $(ls "$CORPUS" | wc -l) inputs; findings $found (log: $LOG)"
if ((found > 0 || status != 0)); then
  grep -h -A3 "tasklens fuzz finding\|ERROR: AddressSanitizer\|runtime error" "$LOG" | head -20 >&2
  ls "$FINDINGS" >&2
  exit 1
fi
