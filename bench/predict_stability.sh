#!/usr/bin/env bash
# bench/predict_stability.sh [BUILD_DIR=./build]: do `predict`'s speedups on many cores hold from
# one recording to the next and across builds of the same program? (issue 37, item 3)
#
# For each fine-grained shape of the suite (fib, nqueens at the bench sizes of bench/lib.sh, no
# cut-off), records each build (clang-14 and gcc, tied and untied tasks) TASKLENS_PREDICT_RUNS
# times (3) on 2 threads, runs `predict --threads 1,2,16,64` on every recording and prints the
# predicted speedups at 16 and 64 cores, then per shape the spread over all its recordings
# (largest / smallest): PASS within 15% (1.15), MISS otherwise; and whether any speedup exceeds
# its core count (it must not). Also the prediction at 1 worker against the program's own
# 1-thread run (least of 5, clang, tied): the speedups' base; and per recording the speedup at 64
# with the recording's own contention (`with_contention`, not held to the 15%) and how far that
# schedule's 2-worker time is from the recording's.
#
# Knobs: TASKLENS_PREDICT_RUNS (3), TASKLENS_PREDICT_SHAPES ("fib nqueens"), the shapes' sizes as
# bench/lib.sh's suite_args (TASKLENS_PREDICT_FIB_ARGS ...).
set -euo pipefail
export LC_ALL=C

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$SRC/bench/lib.sh"
bench_build_dir predict_stability "${1:-./build}"
bench_runtime predict_stability
bench_scratch predict_stability
RUNS=${TASKLENS_PREDICT_RUNS:-3}
SHAPES=${TASKLENS_PREDICT_SHAPES:-fib nqueens}

speedups() { # speedups PREDICT_JSON: "S1_seconds S16 S64 above_cores C64 E2"
  # (C64: the speedup at 64 with the recording's contention; E2: that prediction's error
  # against the recording's own 2-thread time, in percent; "-" when not given)
  python3 -c 'import json, sys
j = json.load(open(sys.argv[1]))
rows = {r["threads"]: r for r in j["predictions"]}
above = any(r["speedup"] > r["threads"] * 1.000001 for r in j["predictions"])
c64, e2 = rows[64].get("with_contention_speedup"), rows[2].get("with_contention_error_percent")
print("%.6f %.3f %.3f %s %s %s" % (rows[1]["simulated"] / j["tsc_per_second"], rows[16]["speedup"],
                                   rows[64]["speedup"], "ABOVE" if above else "ok",
                                   "-" if c64 is None else "%.2f" % c64,
                                   "-" if e2 is None else "%+.1f" % e2))' "$1"
}

echo "predict_stability: $RUNS recordings of each build on 2 threads, runtime $RT"
printf '%-8s %-14s %4s %10s %10s %12s %5s %12s %14s\n' shape build run S16 S64 "1 worker ms" \
  cores "S64 contended" "its error at 2"
for shape in $SHAPES; do
  read -r -a args <<<"$(suite_args TASKLENS_PREDICT "$shape")"
  s16=() s64=() p1=()
  for build in clang gcc untied_clang untied_gcc; do
    for ((i = 1; i <= RUNS; i++)); do
      timed "$WORK/rec.out" env OMP_NUM_THREADS=2 "$TL" record -o "$WORK/t.tlens" -- \
        "$EXAMPLES/suite_${shape}_${build}" "${args[@]}"
      timed "$WORK/p.json" "$TL" predict "$WORK/t.tlens" --threads 1,2,16,64 --format json
      read -r one a b cores c64 e2 <<<"$(speedups "$WORK/p.json")"
      s16+=("$a") s64+=("$b") p1+=("$one")
      printf '%-8s %-14s %4s %10s %10s %12.1f %5s %12s %13s%%\n' "$shape" "$build" "$i" "$a" \
        "$b" "$(calc "print $one * 1e3")" "$cores" "$c64" "$e2"
    done
  done
  plain=()
  for ((i = 0; i < 5; i++)); do
    timed "$WORK/plain.out" env OMP_NUM_THREADS=1 LD_PRELOAD="$RT" \
      "$EXAMPLES/suite_${shape}_clang" "${args[@]}"
    plain+=("$(sed -n 's/.* region=\([0-9.]*\) s.*/\1/p' "$WORK/plain.out")")
  done
  for n in 16 64; do
    declare -n list="s$n"
    lo=$(minimum "${list[@]}") hi=$(maximum "${list[@]}")
    spread=$(calc "printf \"%.2f\", $hi / $lo")
    printf '%-8s speedup at %2s cores: %s to %s, spread %s %s\n' "$shape" "$n" "$lo" "$hi" \
      "$spread" "$(passmiss "$spread" "<=" 1.15)"
  done
  base=$(minimum "${plain[@]}")
  printf '%-8s 1 worker predicted %.1f-%.1f ms against the 1-thread run %.1f ms (least of 5)\n' \
    "$shape" "$(calc "print $(minimum "${p1[@]}") * 1e3")" \
    "$(calc "print $(maximum "${p1[@]}") * 1e3")" "$(calc "print $base * 1e3")"
done
