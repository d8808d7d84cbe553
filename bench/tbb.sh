#!/usr/bin/env bash
# bench/tbb.sh [BUILD_DIR=./build]: recording overhead of oneTBB programs, both ways in
# (docs/benchmarks.md): the unmodified binary and the same source built with the wrappers of
# include/tasklens/tbb.h, each against its own plain run.
#
#   fine:   tbb_fib with a task per call and no work in it (g = 0), n = TASKLENS_BENCH_TBB_FIB_N
#   coarse: tbb_parallel_for, N chunks of w units (1 unit = 2000 TSC ticks, ~0.77 us at 2.6 GHz)
#
# with 1 thread (taskset to one CPU: oneTBB sizes its pool from the affinity mask) and with all
# CPUs. Figures are medians of REPS interleaved runs (plain, recorded, recorded, plain, ...) of
# the whole process, measured in this run; targets are printed beside them with PASS / MISS
# (a MISS does not fail the script; a failing command does). Also: the wrappers' cost without
# recording (wrapped plain / unmodified plain). Writes BUILD_DIR/bench/tbb_results.json.
#
# Knobs: TASKLENS_BENCH_REPS (9: the plain two-thread fib alone varies by a third from run to
# run), TASKLENS_BENCH_TBB_FIB_N (29),
# TASKLENS_BENCH_TBB_COARSE ("32768 1 20": N, G, w).
set -euo pipefail
export LC_ALL=C

BUILD_ARG=${1:-./build}
if [[ ! -d $BUILD_ARG ]]; then
  echo "bench: build directory '$BUILD_ARG' not found; build first (cmake --build build)" >&2
  exit 2
fi
BUILD=$(cd "$BUILD_ARG" && pwd)
TL=$BUILD/tasklens
EX=$BUILD/examples
REPS=${TASKLENS_BENCH_REPS:-9}
FIB_N=${TASKLENS_BENCH_TBB_FIB_N:-29}
read -r C_N C_G C_W <<<"${TASKLENS_BENCH_TBB_COARSE:-32768 1 20}"
TARGET_FINE=2.0
TARGET_COARSE=1.05
for f in "$TL" "$EX/tbb_fib" "$EX/tbb_fib_wrapped" "$EX/tbb_parallel_for" \
  "$EX/tbb_parallel_for_wrapped"; do
  if [[ ! -x $f ]]; then
    echo "bench: $f is missing; build first: cmake --build $BUILD" >&2
    exit 2
  fi
done
unset LD_PRELOAD
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tasklens-tbb-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
NPROC=$(nproc)

now_us() { local t=${EPOCHREALTIME/./}; echo "$t"; }
# timed CMD...: runs it (output to $WORK), prints its wall time in microseconds.
timed() {
  local t0 t1
  t0=$(now_us)
  if ! "$@" >"$WORK/out" 2>"$WORK/err"; then
    echo "bench: command failed: $*" >&2
    cat "$WORK/err" >&2
    exit 1
  fi
  t1=$(now_us)
  echo $((t1 - t0))
}
median() {
  printf '%s\n' "$@" | sort -g | awk '{ a[NR] = $1 }
    END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
calc() { awk "BEGIN { $1 }"; }

RESULTS=()
# measure LABEL TARGET CPUS BIN ARGS...: plain and recorded, interleaved.
measure() {
  local label=$1 target=$2 cpus=$3 bin=$4
  shift 4
  local pin=() plain=() rec=() i
  [[ $cpus != all ]] && pin=(taskset -c "$cpus")
  timed "${pin[@]}" "$bin" "$@" >/dev/null  # warm-up
  for ((i = 0; i < REPS; i++)); do
    if ((i % 2 == 0)); then
      plain+=("$(timed "${pin[@]}" "$bin" "$@")")
      rec+=("$(timed "${pin[@]}" "$TL" record -o "$WORK/t.tlens" -- "$bin" "$@")")
    else
      rec+=("$(timed "${pin[@]}" "$TL" record -o "$WORK/t.tlens" -- "$bin" "$@")")
      plain+=("$(timed "${pin[@]}" "$bin" "$@")")
    fi
  done
  local tasks mp mr ratio verdict threads
  tasks=$(sed -n 's/.*, \([0-9]*\) tasks, \([0-9]*\) threads.*/\1/p' "$WORK/err" | tail -n 1)
  threads=$([[ $cpus == all ]] && echo "$NPROC" || echo 1)
  mp=$(median "${plain[@]}")
  mr=$(median "${rec[@]}")
  ratio=$(calc "printf \"%.3f\", $mr / $mp")
  verdict=$(calc "print ($ratio <= $target) ? \"PASS\" : \"MISS\"")
  printf '  %-34s %3s %9s %9.4f %9.4f %8sx  <= %sx %s\n' "$label" "$threads" "${tasks:-?}" \
    "$(calc "print $mp / 1e6")" "$(calc "print $mr / 1e6")" "$ratio" "$target" "$verdict"
  RESULTS+=("$(printf '{"program": "%s", "threads": %s, "tasks": %s, "plain_s": %s, "recorded_s": %s, "ratio": %s, "target": %s, "verdict": "%s"}' \
    "$label" "$threads" "${tasks:-null}" "$(calc "print $mp / 1e6")" "$(calc "print $mr / 1e6")" \
    "$ratio" "$target" "$verdict")")
}

echo "tasklens oneTBB benchmarks: $NPROC CPUs, medians of $REPS interleaved runs"
printf '  %-34s %3s %9s %9s %9s %9s\n' program thr tasks 'plain s' 'rec s' rec/plain
for cpus in 0 all; do
  measure "fib($FIB_N) unmodified" "$TARGET_FINE" "$cpus" "$EX/tbb_fib" "$FIB_N" 0
  measure "fib($FIB_N) wrapped" "$TARGET_FINE" "$cpus" "$EX/tbb_fib_wrapped" "$FIB_N" 0
  measure "parallel_for($C_N x $C_W u) unmodified" "$TARGET_COARSE" "$cpus" \
    "$EX/tbb_parallel_for" "$C_N" "$C_G" "$C_W" 0 0
  measure "parallel_for($C_N x $C_W u) wrapped" "$TARGET_COARSE" "$cpus" \
    "$EX/tbb_parallel_for_wrapped" "$C_N" "$C_G" "$C_W" 0 0
done

# The wrappers without recording: wrapped / unmodified plain runs of fib, interleaved.
un=()
wr=()
for ((i = 0; i < REPS; i++)); do
  un+=("$(timed "$EX/tbb_fib" "$FIB_N" 0)")
  wr+=("$(timed "$EX/tbb_fib_wrapped" "$FIB_N" 0)")
done
wrap_ratio=$(calc "printf \"%.3f\", $(median "${wr[@]}") / $(median "${un[@]}")")
echo "  wrappers without recording: fib($FIB_N) wrapped / unmodified = ${wrap_ratio}x"

mkdir -p "$BUILD/bench"
{
  printf '{"runs": [%s],\n "wrappers_unrecorded_ratio": %s}\n' "$(IFS=,; echo "${RESULTS[*]}")" \
    "$wrap_ratio"
} >"$BUILD/bench/tbb_results.json"
echo "  (written to $BUILD/bench/tbb_results.json)"
