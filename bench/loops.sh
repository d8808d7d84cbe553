#!/usr/bin/env bash
# bench/loops.sh [BUILD_DIR=./build]: team-size invariance of loops (docs/benchmarks.md,
# "Loops"). A loop's parallelism is bounded by its iterations, not by the team it was recorded
# with, so every loop form must give the same figure recorded with 1, 2, 4 and 8 threads (4 and 8
# oversubscribe a 2-core machine: on purpose).
#
# Records examples/loop_forms.c (every form; n = 64 iterations of w units) and examples/stencil.c,
# built with clang and gcc, with each thread count, and prints per program and build the
# parallelism at each thread count, the analytic value the program prints, and
#   max/min  the largest over the smallest of the thread counts' figures;
#   verdict  PASS when every figure is within 15% of the analytic value, MISS otherwise, or
#            TEAM-BOUND when the report marks the region as split by its threads without a
#            construct the runtime reports (gcc's inlined static loops: their parallelism is
#            the team's, said in the report; a measurement, not a failure).
# Writes BUILD_DIR/bench/loops.json (one object per program and build).
#
# Knobs (environment): TASKLENS_LOOPS_THREADS ("1 2 4 8"), TASKLENS_LOOPS_COMPILERS ("clang
# gcc"), TASKLENS_LOOPS_FORMS (every form of loop_forms.c), TASKLENS_LOOPS_W (2000 units per
# iteration).
set -euo pipefail
export LC_ALL=C

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$SRC/bench/lib.sh"
bench_build_dir loops "${1:-./build}"
bench_build loops tasklens tasklens_examples
EX=$EXAMPLES
mkdir -p "$OUT"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

THREADS=${TASKLENS_LOOPS_THREADS:-"1 2 4 8"}
COMPILERS=${TASKLENS_LOOPS_COMPILERS:-"clang gcc"}
FORMS=${TASKLENS_LOOPS_FORMS:-"static static_chunk dynamic guided runtime collapse reduction nowait
  taskloop_grainsize taskloop_num_tasks tasks_loops ordered"}
W=${TASKLENS_LOOPS_W:-2000}

JSON=$OUT/loops.json
echo "[" >"$JSON"
first=1
printf '%-30s %-6s' program build
for t in $THREADS; do printf ' %8s' "T=$t"; done
printf ' %9s %8s  %s\n' analytic max/min verdict

run_one() { # run_one LABEL COMPILER EXE ARGS...
  local label=$1 cc=$2 exe=$3
  shift 3
  local figures=() analytic="" bound=0 verdict=PASS t
  for t in $THREADS; do
    OMP_NUM_THREADS=$t timed "$WORK/rec.out" "$TL" record -o "$WORK/t.tlens" -- "$exe" "$@"
    analytic=$(awk -F'parallelism=' '/^analytic:/ { print $2 }' "$WORK/rec.out")
    timed "$WORK/report.json" "$TL" report --format json "$WORK/t.tlens"
    local par
    par=$(json_program "$WORK/report.json" parallelism)
    figures+=("$par")
    grep -q '"team_bound"' "$WORK/report.json" && bound=1
    [[ $(calc "print ($par >= 0.85 * $analytic && $par <= 1.15 * $analytic)") == 1 ]] ||
      verdict=MISS
  done
  [[ $bound == 1 ]] && verdict=TEAM-BOUND
  local lo hi
  lo=$(minimum "${figures[@]}")
  hi=$(maximum "${figures[@]}")
  printf '%-30s %-6s' "$label" "$cc"
  for par in "${figures[@]}"; do printf ' %8.2f' "$par"; done
  printf ' %9.2f %8.2f  %s\n' "$analytic" "$(calc "printf \"%.4f\", $hi / $lo")" "$verdict"
  [[ $first == 1 ]] || echo "," >>"$JSON"
  first=0
  printf '  {"program": "%s", "build": "%s", "threads": [%s], "parallelism": [%s], "analytic": %s, "verdict": "%s"}' \
    "$label" "$cc" "$(echo $THREADS | tr ' ' ',')" "$(
      IFS=,
      echo "${figures[*]}"
    )" "$analytic" "$verdict" >>"$JSON"
}

for cc in $COMPILERS; do
  for form in $FORMS; do
    run_one "loop_forms $form" "$cc" "$EX/loop_forms_$cc" "$form" 64 "$W"
  done
  run_one "stencil" "$cc" "$EX/stencil_$cc"
done
printf '\n]\n' >>"$JSON"
echo "wrote $JSON"
