#!/usr/bin/env bash
# bench/advice.sh [BUILD_DIR=./build]: does the cut-off `advise` recommends hold when the user
# writes it? (docs/whatif.md, "What cut-off should I write?")
#
# For each program of the suite with a manual cut-off (examples/suite: fib, nqueens, health,
# uts; clang-14 -O3, tied tasks), on OMP_NUM_THREADS=2:
#   1. records the program without a cut-off and takes `advise --format json`'s depths for its
#      largest recursion: the one for the target parallelism (`recommended_depth`) and the one
#      for the 2 threads it was recorded with (`for_recorded_threads.fastest_depth`, the depth
#      the sweep judges: it runs on those threads), and the parallelism it estimates there;
#   2. runs the program with every cut-off of the sweep (its manual variant: the calls at that
#      depth and below are plain calls), TASKLENS_ADVICE_RUNS times each (5), interleaved in
#      rounds, under LLVM 16's libomp (the runtime `record` uses); the medians of the program's
#      own region time;
#   3. records the program with the advised cut-off (for the 2 threads)
#      TASKLENS_ADVICE_RECORDINGS times (3) and reads the parallelism of the construct the
#      adviser measured it in (its scope, a `single`): their median is judged.
# Prints, per program, the sweep's medians with the fastest and both advised depths marked, then
# advised/fastest (target <= 1.10) for both, judged for the 2 threads' depth (the target's aims
# at a larger machine: its ratio is printed for the record), and measured/estimated parallelism
# (target within 25%),
# PASS / MISS beside each; and whether the adviser said a depth helps (`depth_cutoff_helps`)
# and its size cut-off when it did not. A MISS does not fail the script, a failing command does.
#
# The unbalanced tree (uts) is swept by depth like the others; when the adviser says no depth
# helps, its size cut-off is printed but not run: the suite's tree search cannot know a
# subtree's size before making its task (that is what the adviser's sentence says).
#
# uts_wide is the same search on its binomial tree (UTS T3-like: the root has 400,000 children,
# mostly leaves; at 80,000 the grouped programs are too short to judge on a noisy host:
# docs/benchmarks.md). Its advised depth's tasks are still tiny, and the adviser proposes them made
# several calls at a time (`group_cutoff`): the program's fourth argument does that, so the sweep
# adds that depth with TASKLENS_ADVICE_GROUPS calls per task ("4 16 64 256 1024 2048 4096 8192", and
# the proposed one), shown as depth:calls. The advised form for 2 threads is the grouped one when
# the adviser says it costs less there than its fastest depth.
#
# Knobs (environment): TASKLENS_ADVICE_RUNS (5), TASKLENS_ADVICE_RECORDINGS (3),
# TASKLENS_ADVICE_SHAPES ("fib nqueens health uts uts_wide"), TASKLENS_ADVICE_TARGET (16),
# TASKLENS_ADVICE_SWEEP (cut-offs, "1 2 3 4 5 6 7 8 10 12"), and each shape's arguments before the
# cut-off: TASKLENS_ADVICE_FIB_ARGS ("32"), _NQUEENS_ARGS ("12"), _HEALTH_ARGS ("6 1000"), _UTS_ARGS
# ("11 0"), _UTS_WIDE_ARGS ("400000 1"). (fib, n-queens and the tree search run larger than in the
# other benches: at the smaller sizes their cut-off runs are too short for the 10% judged, and a
# short cut-off fib's span is largely the program's start-up and its first leaves on cold caches,
# which no recording of the program without a cut-off shows; docs/benchmarks.md has the spread.) A
# quick check of the script:
#   TASKLENS_ADVICE_RUNS=1 TASKLENS_ADVICE_FIB_ARGS=20 TASKLENS_ADVICE_NQUEENS_ARGS=8 \
#   TASKLENS_ADVICE_HEALTH_ARGS="4 100" TASKLENS_ADVICE_UTS_ARGS="6 0" bash bench/advice.sh build
set -euo pipefail
export LC_ALL=C

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$SRC/bench/lib.sh"
bench_build_dir advice "${1:-./build}"
bench_runtime advice
bench_scratch advice

RUNS=${TASKLENS_ADVICE_RUNS:-5}
RECORDINGS=${TASKLENS_ADVICE_RECORDINGS:-3}
: "${TASKLENS_ADVICE_FIB_ARGS:=32}" "${TASKLENS_ADVICE_NQUEENS_ARGS:=12}" "${TASKLENS_ADVICE_UTS_ARGS:=11 0}"
: "${TASKLENS_ADVICE_UTS_WIDE_ARGS:=400000 1}"
SHAPES=${TASKLENS_ADVICE_SHAPES:-fib nqueens health uts uts_wide}
CALLS_SWEEP=${TASKLENS_ADVICE_GROUPS:-4 16 64 256 1024 2048 4096 8192}
TARGET=${TASKLENS_ADVICE_TARGET:-16}
SWEEP=${TASKLENS_ADVICE_SWEEP:-1 2 3 4 5 6 7 8 10 12}

# region_seconds OUTPUT_FILE: the program's own region time (suite_report's "region=S s").
region_seconds() { sed -n 's/.* region=\([0-9.]*\) s.*/\1/p' "$1"; }

# advice_field FILE EXPR: a figure of advise's JSON, by a python expression over `c`, the first
# cut-off entry ("-" when there is none).
advice_field() {
  python3 -c 'import json, sys
a = json.load(open(sys.argv[1]))
c = a["cutoffs"][0] if a.get("cutoffs") else None
v = eval(sys.argv[2]) if c else None
print("-" if v is None else v)' "$1" "$2"
}

# scope_parallelism REPORT_JSON: the parallelism of the `single` the suite's programs make their
# top call in (the adviser's scope for them).
scope_parallelism() {
  python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
p = [s["parallelism"] for s in r.get("sites", []) if s.get("kind") == "single"]
print(p[0] if p else "-")' "$1"
}

echo "advice: $RUNS runs per cut-off, 2 threads, target $TARGET, runtime $RT"
for shape in $SHAPES; do
  program=${shape%_wide}
  plain=$EXAMPLES/suite_${program}_clang
  cut=$EXAMPLES/suite_${program}_cutoff_manual_clang
  read -r -a args <<<"$(suite_args TASKLENS_ADVICE "$shape")"
  timed "$WORK/rec.out" env OMP_NUM_THREADS=2 "$TL" record -o "$WORK/$shape.tlens" -- "$plain" "${args[@]}"
  timed "$WORK/advice.json" "$TL" advise "$WORK/$shape.tlens" --target "$TARGET" --format json
  target_depth=$(advice_field "$WORK/advice.json" 'c["recommended_depth"]')
  depth=$(advice_field "$WORK/advice.json" \
    'c["for_recorded_threads"]["fastest_depth"] if c.get("for_recorded_threads") else c["recommended_depth"]')
  estimate=$(advice_field "$WORK/advice.json" \
    '(c["for_recorded_threads"]["fastest"] if c.get("for_recorded_threads") else c["recommended"])["parallelism"]')
  helps=$(advice_field "$WORK/advice.json" 'c.get("depth_cutoff_helps")')
  size=$(advice_field "$WORK/advice.json" \
    '"%d ticks: %d tasks, parallelism %.2f" % (c["size_cutoff"]["min_work"], c["size_cutoff"]["tasks_kept"], c["size_cutoff"]["parallelism"]) if c.get("size_cutoff") else None')
  tasks=$(advice_field "$WORK/advice.json" 'c["tasks"]')
  group=$(advice_field "$WORK/advice.json" \
    '"%d:%d" % (c["group_cutoff"]["depth"], c["group_cutoff"]["calls_per_task"]) if c.get("group_cutoff") else None')
  group_wins=$(advice_field "$WORK/advice.json" \
    'bool(c.get("group_cutoff") and c.get("for_recorded_threads") and c["group_cutoff"]["cost_on_recorded_threads_seconds"] < c["for_recorded_threads"]["fastest"]["cost_on_recorded_threads_seconds"])')
  if [[ $group != - && $group_wins == True ]]; then
    depth=$group
    estimate=$(advice_field "$WORK/advice.json" 'c["group_cutoff"]["parallelism"]')
  fi
  echo
  echo "== $shape ${args[*]}: $tasks tasks; advised depth $depth on 2 threads (estimated" \
    "parallelism $estimate), $target_depth for the target," \
    "a depth helps: $helps${size:+; by size: $size}; several calls a task: $group"
  if [[ $depth == - ]]; then
    echo "   no recursion found: nothing to sweep"
    continue
  fi
  extra=()
  if [[ $group != - ]]; then
    for g in $CALLS_SWEEP "${group#*:}"; do extra+=("${group%%:*}:$g"); done
  fi
  cutoffs=$(printf '%s\n' $SWEEP "$depth" "$target_depth" "${extra[@]}" | sort -t: -k1,1n -k2,2n -u)
  declare -A times=() made=()
  for ((round = 0; round < RUNS; round++)); do
    for c in $cutoffs; do
      # (depth:calls: the program's fourth argument, its tasks at that depth calls at a time)
      timed "$WORK/run.out" env OMP_NUM_THREADS=2 LD_PRELOAD="$RT" "$cut" "${args[@]}" ${c//:/ }
      times[$c]="${times[$c]:-} $(region_seconds "$WORK/run.out")"
      made[$c]=$(out_tasks "$WORK/run.out")
    done
  done
  best_c="" best=""
  declare -A med=()
  for c in $cutoffs; do
    # shellcheck disable=SC2086
    med[$c]=$(median ${times[$c]})
    if [[ -z $best ]] || calc "exit !(${med[$c]} < $best)"; then
      best=${med[$c]} best_c=$c
    fi
  done
  printf '   %8s %12s %8s\n' cut-off "median s" tasks
  for c in $cutoffs; do
    mark=""
    [[ $c == "$best_c" ]] && mark+=" <- fastest"
    [[ $c == "$depth" ]] && mark+=" <- advised for 2 threads"
    [[ $c == "$target_depth" ]] && mark+=" <- advised for the target"
    printf '   %8s %12.6f %8s%s\n' "$c" "${med[$c]}" "${made[$c]}" "$mark"
  done
  ratio=$(calc "printf \"%.3f\", ${med[$depth]} / $best")
  echo "   advised for 2 threads / fastest: $ratio (target <= 1.10) $(passmiss "$ratio" '<=' 1.10)"
  echo "   advised for the target $TARGET / fastest:" \
    "$(calc "printf \"%.3f\", ${med[$target_depth]} / $best") (for the record)"
  # The cut-off program's parallelism moves between recordings (a few large tasks): the median
  # of RECORDINGS of them.
  recorded=()
  for ((r = 0; r < RECORDINGS; r++)); do
    timed "$WORK/rec2.out" env OMP_NUM_THREADS=2 "$TL" record -o "$WORK/${shape}_cut.tlens" -- \
      "$cut" "${args[@]}" ${depth//:/ }
    timed "$WORK/cut.json" "$TL" report "$WORK/${shape}_cut.tlens" --format json
    recorded+=("$(scope_parallelism "$WORK/cut.json")")
  done
  measured=-
  [[ " ${recorded[*]} " == *" - "* ]] || measured=$(median "${recorded[@]}")
  echo "   parallelism of the cut-off program's $RECORDINGS recordings: ${recorded[*]}"
  if [[ $measured == - || $estimate == - ]]; then
    echo "   measured parallelism: - (no single in the report)"
  else
    off=$(calc "printf \"%.3f\", $measured / $estimate")
    verdict=$(calc "print (($off >= 0.75 && $off <= 1.25) ? \"PASS\" : \"MISS\")")
    echo "   parallelism with the advised cut-off: measured $measured (median), estimated $estimate:" \
      "ratio $off (target 0.75-1.25) $verdict"
  fi
  unset times med made
done
