#!/usr/bin/env bash
# bench/task_cost.sh [BUILD_DIR=./build]: is the tasking overhead tasklens uses what a task costs
# the program? (docs/report-json.md, `task_cost`)
#
# For each program of the suite with tiny tasks (examples/suite: fib, nqueens, health, uts;
# clang-14 -O3, tied tasks, no cut-off):
#   1. runs its serial elision (suite_<name>_serial_clang: the same source without -fopenmp)
#      and its 1-thread run under LLVM 16's libomp (the runtime `record` uses),
#      TASKLENS_TASK_COST_RUNS times each (7), interleaved; the least region time of each (a
#      pause of the machine only lengthens a run): (1 thread - elision) / tasks is what a task
#      costs the program;
#   2. records the program with --recalibrate (a fresh measure, in a scratch cache) and reads
#      the report's `task_cost`;
# and prints both per task with their ratio, PASS within 30% (the target), MISS otherwise. A
# MISS does not fail the script, a failing command does.
#
# Knobs (environment): TASKLENS_TASK_COST_RUNS (7), TASKLENS_TASK_COST_SHAPES ("fib nqueens
# health uts"), and each shape's arguments: _FIB_ARGS ("29"), _NQUEENS_ARGS ("11"),
# _HEALTH_ARGS ("6 1000"), _UTS_ARGS ("10 0").
set -euo pipefail
export LC_ALL=C

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$SRC/bench/lib.sh"
bench_build_dir task_cost "${1:-./build}"
bench_runtime task_cost
bench_scratch task_cost

RUNS=${TASKLENS_TASK_COST_RUNS:-7}
SHAPES=${TASKLENS_TASK_COST_SHAPES:-fib nqueens health uts}

region_seconds() { sed -n 's/.* region=\([0-9.]*\) s.*/\1/p' "$1"; }

echo "task_cost: $RUNS runs of each build, least region time, runtime $RT"
printf '%-8s %-8s %10s %12s %12s %14s %14s %7s %s\n' shape args tasks "elision ms" \
  "1-thread ms" "program ns" "tasklens ns" ratio verdict
for shape in $SHAPES; do
  read -r -a args <<<"$(suite_args TASKLENS_TASK_COST "$shape")"
  serial=() plain=()
  for ((i = 0; i < RUNS; i++)); do
    timed "$WORK/s.out" env OMP_NUM_THREADS=1 "$EXAMPLES/suite_${shape}_serial_clang" "${args[@]}"
    serial+=("$(region_seconds "$WORK/s.out")")
    timed "$WORK/p.out" env OMP_NUM_THREADS=1 LD_PRELOAD="$RT" \
      "$EXAMPLES/suite_${shape}_clang" "${args[@]}"
    plain+=("$(region_seconds "$WORK/p.out")")
  done
  tasks=$(out_tasks "$WORK/p.out")
  s=$(minimum "${serial[@]}")
  p=$(minimum "${plain[@]}")
  program_ns=$(calc "printf \"%.1f\", ($p - $s) / $tasks * 1e9")
  timed "$WORK/rec.out" env OMP_NUM_THREADS=2 TASKLENS_CACHE_DIR="$WORK/cache" "$TL" record \
    --recalibrate -o "$WORK/$shape.tlens" -- "$EXAMPLES/suite_${shape}_clang" "${args[@]}"
  timed "$WORK/report.json" "$TL" report "$WORK/$shape.tlens" --format json
  tasklens_ns=$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
c = r.get("task_cost")
print("-" if c is None else "%.1f" % (c / r["ticks_per_second"] * 1e9))' "$WORK/report.json")
  if [[ $tasklens_ns == - ]]; then
    ratio=- verdict=MISS
  else
    ratio=$(calc "printf \"%.2f\", $tasklens_ns / $program_ns")
    verdict=$(calc "print (($ratio >= 0.7 && $ratio <= 1.3) ? \"PASS\" : \"MISS\")")
  fi
  printf '%-8s %-8s %10s %12.2f %12.2f %14s %14s %7s %s\n' "$shape" "${args[*]}" "$tasks" \
    "$(calc "print $s * 1e3")" "$(calc "print $p * 1e3")" "$program_ns" "$tasklens_ns" "$ratio" \
    "$verdict"
done
