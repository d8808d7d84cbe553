#!/usr/bin/env bash
# bench/invariance.sh [BUILD_DIR=./build]: the invariance suite at bench size
# (docs/benchmarks.md, "Invariance"). The same program must give the same logical answer however
# it was built and run.
#
# Records each program of the suite (examples/suite) at its bench size (>= 1M tasks, 2M where
# the program allows it at a reasonable run time) with OMP_NUM_THREADS=1, 2 and 4 (4
# oversubscribes a 2-core machine: on purpose), built with clang and gcc, tied and (where the
# program has it) untied, and prints one row per recording:
#   program, variant (compiler/tied|untied), threads, tasks (the report's), work (s,
#   program.work_seconds), parallelism (program.parallelism), and per row
#     work/ref   its work against the reference (the same program, clang, tied, 2 threads);
#     par/ref    its parallelism against the reference's;
#   and verdicts:
#     FAIL  the report's tasks differ from the tasks= the program printed, or the program's
#           answer (result= and tasks=) differs from the reference's (exact: never noise);
#     MISS  work/ref or par/ref off by more than 15% (a measurement, not a failure: work grows
#           with the threads for real, see docs/benchmarks.md).
# The script exits with status 1 when a row FAILs, 0 otherwise (MISS included). Writes
# BUILD_DIR/bench/invariance.json.
#
# Knobs (environment): TASKLENS_INVARIANCE_THREADS ("1 2 4"), TASKLENS_INVARIANCE_COMPILERS
# ("clang gcc"), TASKLENS_INVARIANCE_PROGRAMS (all 12), TASKLENS_INVARIANCE_<NAME>_ARGS (the
# bench size of <NAME>, upper case). A quick check at test size:
#   TASKLENS_INVARIANCE_PROGRAMS="fib jacobi" TASKLENS_INVARIANCE_FIB_ARGS=20 \
#   TASKLENS_INVARIANCE_JACOBI_ARGS="8 8 20" bash bench/invariance.sh build
set -euo pipefail
export LC_ALL=C

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$SRC/bench/lib.sh"
bench_build_dir invariance "${1:-./build}"

THREADS=${TASKLENS_INVARIANCE_THREADS:-"1 2 4"}
COMPILERS=${TASKLENS_INVARIANCE_COMPILERS:-"clang gcc"}
PROGRAMS=${TASKLENS_INVARIANCE_PROGRAMS:-"fib nqueens health uts mergesort fft strassen knapsack sparselu alignment jacobi cholesky"}
# Bench sizes (docs/examples.md, "The program suite").
declare -A DEFAULT_ARGS=(
  [fib]="30"              # 2692536 tasks
  [nqueens]="11"          # 1806706
  [health]="6 1000"       # 1364000
  [uts]="80000 1"         # 2113464 (binomial)
  [mergesort]="2000000"   # 1356920
  [fft]="20"              # 1441792
  [strassen]="512 4"      # 960799
  [knapsack]="36"         # 1132572
  [sparselu]="240 2"      # 1195477
  [alignment]="1500 12"   # 1124250
  [jacobi]="32 4 1000"    # 1024000
  [cholesky]="180 2"      # 988260
)
UNTIED="fib nqueens health uts sparselu alignment jacobi cholesky"
TOLERANCE=0.15

need=()
[[ -x $TL ]] || need+=(tasklens tasklens_recorder)
for p in $PROGRAMS; do
  [[ -n ${DEFAULT_ARGS[$p]+x} ]] || { echo "invariance: unknown program '$p'" >&2; exit 2; }
  for cc in $COMPILERS; do [[ -x $EXAMPLES/suite_${p}_$cc ]] || need+=(tasklens_suite); done
done
bench_build invariance "${need[@]}"

bench_scratch invariance
TRACE=$WORK/run.tlens

GIT=$(git -C "$SRC" describe --always --dirty 2>/dev/null || echo unknown)
LOAD0=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
stamp
START_US=$_T
echo "tasklens invariance: $GIT, build $BUILD"
echo "  $(nproc) CPUs, load average $LOAD0 at start; threads $THREADS; compilers $COMPILERS"
echo "  ref = the program's clang tied recording on 2 threads; MISS = more than" \
  "$(calc "print $TOLERANCE * 100")% off it"
echo
printf '%-9s %-13s %3s %9s %9s %8s | %8s %-4s %8s %-4s | %s\n' program variant thr tasks \
  'work s' par work/ref '' par/ref '' verdict

ROWS_JSON=()
FAILS=0
MISSES=0
for p in $PROGRAMS; do
  var=TASKLENS_INVARIANCE_${p^^}_ARGS
  args_s=${!var:-${DEFAULT_ARGS[$p]}}
  read -r -a args <<<"$args_s"
  ties=tied
  [[ " $UNTIED " == *" $p "* ]] && ties="tied untied"
  # The reference first: clang (or the first compiler), tied, 2 threads.
  ref_cc=clang
  [[ " $COMPILERS " == *" clang "* ]] || ref_cc=${COMPILERS%% *}
  runs=("$ref_cc tied 2")
  for cc in $COMPILERS; do
    for tie in $ties; do
      for T in $THREADS; do
        [[ "$cc $tie $T" == "$ref_cc tied 2" ]] || runs+=("$cc $tie $T")
      done
    done
  done
  ref_answer='' ref_work='' ref_par=''
  for r in "${runs[@]}"; do
    read -r cc tie T <<<"$r"
    suffix=''
    [[ $tie == untied ]] && suffix=_untied
    bin=$EXAMPLES/suite_${p}${suffix}_$cc
    rm -f "$TRACE" "$TRACE.old"
    timed "$WORK/rec.out" env OMP_NUM_THREADS="$T" "$TL" record -o "$TRACE" -- "$bin" "${args[@]}"
    timed "$WORK/report.json" "$TL" report --format json "$TRACE"
    printed=$(out_tasks "$WORK/rec.out")
    answer=$(sed -n 's/ variant=.*//p' "$WORK/rec.out")
    tasks=$(json_top "$WORK/report.json" tasks)
    work=$(json_program "$WORK/report.json" work_seconds)
    par=$(json_program "$WORK/report.json" parallelism)
    if [[ -z $ref_answer ]]; then ref_answer=$answer ref_work=$work ref_par=$par; fi
    verdict=ok
    why=()
    if [[ $tasks != "$printed" ]]; then why+=("report $tasks tasks, program $printed"); fi
    if [[ $answer != "$ref_answer" ]]; then why+=("answer '$answer' != '$ref_answer'"); fi
    wr=$(calc "printf \"%.3f\", $work / $ref_work")
    pr=$(calc "printf \"%.3f\", $par / $ref_par")
    wv=$(calc "print (($wr > 1 + $TOLERANCE || $wr < 1 - $TOLERANCE) ? \"MISS\" : \"\")")
    pv=$(calc "print (($pr > 1 + $TOLERANCE || $pr < 1 - $TOLERANCE) ? \"MISS\" : \"\")")
    if ((${#why[@]})); then
      verdict="FAIL: $(IFS=';'; echo "${why[*]}")"
      FAILS=$((FAILS + 1))
    elif [[ -n $wv$pv ]]; then
      verdict=MISS
      MISSES=$((MISSES + 1))
    fi
    printf '%-9s %-13s %3s %9s %9.4f %8.2f | %8s %-4s %8s %-4s | %s\n' "$p" "$cc/$tie" "$T" \
      "$tasks" "$work" "$par" "$wr" "$wv" "$pr" "$pv" "$verdict"
    ROWS_JSON+=("$(printf '{"program": "%s", "args": %s, "compiler": "%s", "tasks_kind": "%s", "threads": %s, "tasks": %s, "printed_tasks": %s, "work_seconds": %s, "parallelism": %s, "work_over_ref": %s, "parallelism_over_ref": %s, "verdict": %s}' \
      "$p" "$(json_str "$args_s")" "$cc" "$tie" "$T" "$(json_num "$tasks")" "$(json_num "$printed")" \
      "$(json_num "$work")" "$(json_num "$par")" "$wr" "$pr" "$(json_str "$verdict")")")
  done
done
echo
echo "$FAILS FAIL (task counts or answers differ), $MISSES MISS (work or parallelism more than" \
  "$(calc "print $TOLERANCE * 100")% off the clang tied 2-thread recording)"

stamp
TOTAL_S=$(calc "printf \"%.1f\", ($_T - $START_US) / 1e6")
LOAD1=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
RESULTS=$OUT/invariance.json
mkdir -p "$OUT"
{
  printf '{\n  "tasklens_version": %s,\n  "build_dir": %s,\n' "$(json_str "$GIT")" "$(json_str "$BUILD")"
  printf '  "machine": {"cpus": %s, "loadavg_start": %s, "loadavg_end": %s},\n' "$(nproc)" "$LOAD0" "$LOAD1"
  printf '  "tolerance": %s, "fails": %s, "misses": %s,\n' "$TOLERANCE" "$FAILS" "$MISSES"
  printf '  "rows": [\n    %s\n  ],\n' "$(join_json "${ROWS_JSON[@]}" | sed 's/},{"program"/},\n    {"program"/g')"
  printf '  "total_seconds": %s\n}\n' "$TOTAL_S"
} >"$RESULTS.tmp"
mv "$RESULTS.tmp" "$RESULTS"
echo "total ${TOTAL_S} s, load average $LOAD1 at the end; results in $RESULTS"
((FAILS == 0))
