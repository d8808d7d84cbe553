#!/usr/bin/env bash
# bench/overhead.sh [BUILD_DIR=./build]: the recorder's overhead against the OMPT limit
# (docs/benchmarks.md, "Overhead against the OMPT limit").
#
# For four task-parallel shapes of the program suite (examples/suite: fib, nqueens, health, uts,
# clang-14 -O3, tied tasks, no cut-off, each >= 1M tasks at its bench size), with
# OMP_NUM_THREADS=2 and 1, times four variants of the same binary, interleaved in rounds (each
# round runs every variant once, in an order rotating from round to round):
#   plain   the program under its own runtime (clang-14's libomp 14);
#   omp16   under LLVM 16's libomp (LD_PRELOAD of third_party/libomp16/libomp.so.5), the runtime
#           `tasklens record` uses;
#   limit   libomp 16 + an empty OMPT tool registering the recorder's callbacks
#           (libempty_ompt_tool.so, bench/empty_ompt_tool.c): the OMPT limit, what any tool
#           costs before it records anything;
#   record  `tasklens record -o TRACE -- prog`.
# First prints what one clock read costs on each CPU (bench/clock_read.c) and what libomp pays per
# recorded event to call the callbacks (bench/ompt_dispatch.c). A strand begins and
# ends at one, so it is the floor of the recorder's cost per task. Then prints medians (and
# min-max) side by side with record/plain (target <= 1.20 on 2 threads),
# record/limit (target <= 1.15 on 1 thread), the recorder's own cost per task on 1 thread
# ((record - limit) / tasks, target <= 25 ns), the trace's bytes per task and, from `tasklens
# report --format json` of the last trace, recorder_stalls_removed, preemption_removed and
# blocked_removed ("-" when the report has no such key). PASS / MISS beside each target; a MISS
# does not fail the script, a failing command does. Writes BUILD_DIR/bench/overhead.json.
#
# Knobs (environment): TASKLENS_OVERHEAD_ROUNDS (5), TASKLENS_OVERHEAD_THREADS ("2 1"),
# TASKLENS_OVERHEAD_SHAPES ("fib nqueens health uts"), and the arguments of each shape:
# TASKLENS_OVERHEAD_FIB_ARGS ("29": 1.66M tasks), _NQUEENS_ARGS ("11": 1.81M), _HEALTH_ARGS
# ("6 1000": 1.36M), _UTS_ARGS ("10": 1.76M).
# Small sizes and 1 round check the script in seconds:
#   TASKLENS_OVERHEAD_ROUNDS=1 TASKLENS_OVERHEAD_FIB_ARGS=20 TASKLENS_OVERHEAD_NQUEENS_ARGS=8 \
#   TASKLENS_OVERHEAD_HEALTH_ARGS="4 100" TASKLENS_OVERHEAD_UTS_ARGS=6 bash bench/overhead.sh build
set -euo pipefail
export LC_ALL=C

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$SRC/bench/lib.sh"
bench_build_dir overhead "${1:-./build}"
TOOL=$OUT/libempty_ompt_tool.so

ROUNDS=${TASKLENS_OVERHEAD_ROUNDS:-5}
THREADS=${TASKLENS_OVERHEAD_THREADS:-"2 1"}
SHAPES=${TASKLENS_OVERHEAD_SHAPES:-"fib nqueens health uts"}
declare -A ARGS=(
  [fib]=${TASKLENS_OVERHEAD_FIB_ARGS:-29}
  [nqueens]=${TASKLENS_OVERHEAD_NQUEENS_ARGS:-11}
  [health]=${TASKLENS_OVERHEAD_HEALTH_ARGS:-"6 1000"}
  [uts]=${TASKLENS_OVERHEAD_UTS_ARGS:-10}
)
VARIANTS=(plain omp16 limit record)
# TASKLENS_OVERHEAD_ONLINE=1: also `record` compressing as it goes (TASKLENS_DEFER_COMPRESSION=0),
# the recorder before compression waited for the end of the run.
[[ ${TASKLENS_OVERHEAD_ONLINE:-0} == 1 ]] && VARIANTS+=(online)

TARGET_REC_PLAIN_2T=1.20  # record / plain, 2 threads
TARGET_REC_LIMIT_1T=1.15  # record / limit, 1 thread
TARGET_NS_PER_TASK=25     # (record - limit) / tasks, 1 thread

need=()
[[ -x $TL ]] || need+=(tasklens tasklens_recorder)
[[ -f $TOOL && -x $OUT/clock_read && -x $OUT/ompt_dispatch ]] || need+=(tasklens_bench_programs)
for s in $SHAPES; do
  [[ -n ${ARGS[$s]+x} ]] || { echo "overhead: unknown shape '$s'" >&2; exit 2; }
  [[ -x $EXAMPLES/suite_${s}_clang ]] || need+=(tasklens_suite)
done
bench_build overhead "${need[@]}"

# LLVM 16's runtime: the one this build's `record` preloads (bench/run.sh does the same).
bench_runtime overhead

bench_scratch overhead
TRACES=$OUT/traces
mkdir -p "$TRACES"

# run_variant VARIANT THREADS TRACE BIN ARGS...: one timed run; its stdout in $WORK/VARIANT.out.
run_variant() {
  local v=$1 T=$2 trace=$3
  shift 3
  case $v in
    plain) timed "$WORK/$v.out" env OMP_NUM_THREADS="$T" "$@" ;;
    omp16) timed "$WORK/$v.out" env OMP_NUM_THREADS="$T" LD_PRELOAD="$RT" "$@" ;;
    limit) timed "$WORK/$v.out" env OMP_NUM_THREADS="$T" LD_PRELOAD="$TOOL:$RT" "$@" ;;
    record)
      rm -f "$trace" "$trace.old"
      timed "$WORK/$v.out" env OMP_NUM_THREADS="$T" "$TL" record --runtime "$RT" -o "$trace" \
        -- "$@" ;;
    online)
      rm -f "$WORK/online.tlens" "$WORK/online.tlens.old"
      timed "$WORK/$v.out" env OMP_NUM_THREADS="$T" TASKLENS_DEFER_COMPRESSION=0 "$TL" record \
        --runtime "$RT" -o "$WORK/online.tlens" -- "$@" ;;
  esac
  # The program's own time for its work (the region= it prints, in us): what recording does to
  # the program while it runs, apart from tasklens's work before and after it.
  REGION_US=$(sed -n 's/.* region=\([0-9.]*\) s.*/\1/p' "$WORK/$v.out" | head -1)
  REGION_US=$(calc "printf \"%.0f\", ${REGION_US:-0} * 1e6")
}

fmt_s() { calc "printf \"%.3f\", $1 / 1e6"; }
spread() { calc "printf \"%.3f-%.3f\", $(minimum "$@") / 1e6, $(maximum "$@") / 1e6"; }

GIT=$(git -C "$SRC" describe --always --dirty 2>/dev/null || echo unknown)
LOAD0=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
stamp
START_US=$_T
echo "tasklens overhead against the OMPT limit: $GIT, build $BUILD"
echo "  $(nproc) CPUs, load average $LOAD0 at start; $ROUNDS rounds, medians (min-max) of the"
echo "  whole process's wall time in seconds; omp16 = $RT"
echo "  limit = omp16 + $(basename "$TOOL"); region: the program's own time for its work (the"
echo "  region= it prints), record's median over plain's: how much recording slows the program"
echo "  itself, apart from tasklens's work before and after it"
# What a clock read costs on each CPU: a strand begins and ends at one, so a 1-thread task costs
# at least two of them over the limit (2.5 in fib) whatever else the recorder does.
CLOCKS=$("$OUT/clock_read")
echo "  $CLOCKS"
# What libomp pays to call the callbacks (bench/ompt_dispatch.c), on one CPU.
PIN0=()
command -v taskset >/dev/null && PIN0=(taskset -c 0)
DISPATCH=$("${PIN0[@]}" env LD_PRELOAD="$RT" "$OUT/ompt_dispatch" || echo "not measured")
echo "  OMPT callbacks, on - off in one process (bench/ompt_dispatch.c): $DISPATCH"
echo
ONLINE_HEAD=""
[[ ${#VARIANTS[@]} == 5 ]] && ONLINE_HEAD=$(printf '%-19s ' online)
printf "%-9s %3s %8s | %-19s %-19s %-19s %-19s ${ONLINE_HEAD}| %-15s %-15s %-14s %6s %7s | %8s %8s %8s\n" \
  shape thr tasks plain omp16 limit record rec/plain rec/limit 'ns/task' 'B/task' region stalls \
  preempt blocked

ROWS_JSON=()
for s in $SHAPES; do
  bin=$EXAMPLES/suite_${s}_clang
  read -r -a args <<<"${ARGS[$s]}"
  # Warm-up: one untimed run of every variant (page cache, the loader's caches).
  for v in "${VARIANTS[@]}"; do run_variant "$v" 1 "$WORK/warm.tlens" "$bin" "${args[@]}"; done
  for T in $THREADS; do
    trace=$TRACES/suite_${s}_${ARGS[$s]// /_}_t$T.tlens
    declare -A times=() regions=()
    for ((r = 0; r < ROUNDS; r++)); do
      for ((k = 0; k < ${#VARIANTS[@]}; k++)); do  # rotate: round r starts with variant r mod 4
        v=${VARIANTS[$(((k + r) % ${#VARIANTS[@]}))]}
        run_variant "$v" "$T" "$trace" "$bin" "${args[@]}"
        times[$v]+="$ELAPSED_US "
        regions[$v]+="$REGION_US "
      done
      # The result (everything before " region=") must not depend on the variant.
      for v in "${VARIANTS[@]:1}"; do
        if [[ $(sed 's/ region=.*//' "$WORK/plain.out") != "$(sed 's/ region=.*//' "$WORK/$v.out")" ]]; then
          echo "overhead: $s: the $v run printed another result than the plain one:" >&2
          cat "$WORK/plain.out" "$WORK/$v.out" >&2
          exit 1
        fi
      done
    done
    tasks=$(out_tasks "$WORK/plain.out")
    timed "$WORK/report.json" "$TL" report --format json "$trace"
    rtasks=$(json_top "$WORK/report.json" tasks)
    [[ $rtasks == "$tasks" ]] || echo "overhead: warning: $s: the trace has $rtasks tasks, the program made $tasks" >&2
    stalls=$(json_any "$WORK/report.json" recorder_stalls_removed)
    preempt=$(json_any "$WORK/report.json" preemption_removed)
    blocked=$(json_any "$WORK/report.json" blocked_removed)
    bytes=$(stat -c %s "$trace")

    declare -A med=()
    cells=()
    for v in "${VARIANTS[@]}"; do
      read -r -a t <<<"${times[$v]}"
      med[$v]=$(median "${t[@]}")
      cells+=("$(printf '%s (%s)' "$(fmt_s "${med[$v]}")" "$(spread "${t[@]}")")")
    done
    rp=$(calc "printf \"%.3f\", ${med[record]} / ${med[plain]}")
    rl=$(calc "printf \"%.3f\", ${med[record]} / ${med[limit]}")
    ns=$(calc "printf \"%.1f\", (${med[record]} - ${med[limit]}) * 1000 / $tasks")
    bpt=$(calc "printf \"%.2f\", $bytes / $tasks")
    read -r -a rg_rec <<<"${regions[record]}"
    read -r -a rg_plain <<<"${regions[plain]}"
    region=$(calc "printf \"%.3f\", $(median "${rg_rec[@]}") / $(median "${rg_plain[@]}")")
    v_rp=-; v_rl=-; v_ns=-
    [[ $T == 2 ]] && v_rp=$(passmiss "$rp" "<=" "$TARGET_REC_PLAIN_2T")
    if [[ $T == 1 ]]; then
      v_rl=$(passmiss "$rl" "<=" "$TARGET_REC_LIMIT_1T")
      v_ns=$(passmiss "$ns" "<=" "$TARGET_NS_PER_TASK")
    fi
    cell_fmt=$(printf '%%-19s %.0s' "${VARIANTS[@]}")
    printf "%-9s %3s %8s | ${cell_fmt}| %-15s %-15s %-14s %6s %7s | %8s %8s %8s\n" \
      "$s" "$T" "$tasks" "${cells[@]}" "${rp}x $v_rp" "${rl}x $v_rl" "$ns $v_ns" "$bpt" \
      "${region}x" "$stalls" "$preempt" "$blocked"
    row=$(printf '{"shape": "%s", "args": %s, "threads": %s, "tasks": %s, "trace_tasks": %s' \
      "$s" "$(json_str "${ARGS[$s]}")" "$T" "$tasks" "$(json_num "${rtasks:-null}")")
    for v in "${VARIANTS[@]}"; do
      read -r -a t <<<"${times[$v]}"
      row+=$(printf ', "%s_s": %s, "runs_%s_s": %s' "$v" "$(calc "print ${med[$v]} / 1e6")" "$v" \
        "$(us_list "${t[@]}")")
    done
    row+=$(printf ', "record_over_plain": %s, "record_over_limit": %s, "recorder_ns_per_task": %s, "trace_bytes": %s, "bytes_per_task": %s, "region_record_over_plain": %s, "runs_region_record_s": %s, "runs_region_plain_s": %s' \
      "$rp" "$rl" "$ns" "$bytes" "$bpt" "$region" "$(us_list "${rg_rec[@]}")" "$(us_list "${rg_plain[@]}")")
    row+=$(printf ', "verdict_record_over_plain": "%s", "verdict_record_over_limit": "%s", "verdict_ns_per_task": "%s"' \
      "$v_rp" "$v_rl" "$v_ns")
    row+=$(printf ', "recorder_stalls_removed": %s, "preemption_removed": %s, "blocked_removed": %s}' \
      "$(json_num "$stalls")" "$(json_num "$preempt")" "$(json_num "$blocked")")
    ROWS_JSON+=("$row")
    unset times med regions
  done
done
echo
echo "targets: rec/plain <= ${TARGET_REC_PLAIN_2T}x on 2 threads; rec/limit <= ${TARGET_REC_LIMIT_1T}x" \
  "and (record - limit) / tasks <= ${TARGET_NS_PER_TASK} ns on 1 thread (\"-\": no target)"

stamp
TOTAL_S=$(calc "printf \"%.1f\", ($_T - $START_US) / 1e6")
LOAD1=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
RESULTS=$OUT/overhead.json
{
  printf '{\n  "tasklens_version": %s,\n  "build_dir": %s,\n' "$(json_str "$GIT")" "$(json_str "$BUILD")"
  printf '  "runtime_omp16": %s,\n  "empty_tool": %s,\n' "$(json_str "$RT")" "$(json_str "$TOOL")"
  printf '  "machine": {"cpus": %s, "loadavg_start": %s, "loadavg_end": %s, "clock_reads": "%s", "ompt_dispatch": "%s"},\n' \
    "$(nproc)" "$LOAD0" "$LOAD1" "$CLOCKS" "$DISPATCH"
  printf '  "config": {"rounds": %s, "threads": [%s]},\n' "$ROUNDS" "$(echo $THREADS | tr ' ' ',')"
  printf '  "targets": {"record_over_plain_2t": %s, "record_over_limit_1t": %s, "recorder_ns_per_task_1t": %s},\n' \
    "$TARGET_REC_PLAIN_2T" "$TARGET_REC_LIMIT_1T" "$TARGET_NS_PER_TASK"
  printf '  "shapes": [\n    %s\n  ],\n' "$(join_json "${ROWS_JSON[@]}" | sed 's/},{"shape"/},\n    {"shape"/g')"
  printf '  "total_seconds": %s\n}\n' "$TOTAL_S"
} >"$RESULTS.tmp"
mv "$RESULTS.tmp" "$RESULTS"
echo "total ${TOTAL_S} s, load average $LOAD1 at the end; results in $RESULTS; traces in $TRACES"
