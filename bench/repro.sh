#!/usr/bin/env bash
# bench/repro.sh [BUILD_DIR=./build]: how reproducible a recording's figures are
# (docs/benchmarks.md, "Reproducibility").
#
# Records each program of the suite (examples/suite, clang-14 -O3, tied, no cut-off) N times on
# 2 threads: fib(29) (1.66M tasks), n-queens n = 11 (1.81M tasks) and the health simulation
# (levels 6, 1000 steps: 1.36M tasks), and prints for each one, over the N recordings:
#   - min / median / max of program.parallelism (the robust figure: preemption, recorder stalls
#     and blocking removed) and of program.parallelism_raw (nothing removed; "-" when the
#     report has no such key), with min / median; target: min >= 0.85 x median (robust);
#   - the work (ms, min / median / max): with the span, which of the two moved the parallelism (on a
#     host whose virtual CPUs share cores, the same program's work on 2 threads moves with
#     how busy the sibling is);
#   - recorder_stalls (a count) and recorder_stalls_removed (time), min / median / max, when the
#     report has them ("-" otherwise);
#   - slow_faults_removed (us, min / median / max): page faults far slower than the thread's
#     usual ones, taken out of the work (the recorder watches faults since format 4.4);
#   - the span (us, min / median / max) and the part of it in the program's serial code before its
#     first construct (the "start-..." fragment's critical work: unique strands, where the
#     program and its runtime fault their memory in): a miss there is first-touch time, not
#     the analysis;
#   - the work ratio: program.work_seconds of a 1-thread recording (median of a few) / the
#     parallel region's time of a plain 1-thread run under the same runtime (median of a few;
#     the region time the program prints, so that process start-up and exit are in neither);
#     target <= 1.10: recording must not inflate the work it measures;
#     The work leaves out the OpenMP runtime's own cost between events (runtime_overhead_removed,
#     timed by `record` on empty tasks: "rt s", its median), so that it is the program's own;
#   - beside it the same program under the OMPT limit (the runtime with an empty tool that
#     registers the recorder's callbacks, bench/empty_ompt_tool.c), also 1 thread and
#     alternated: (work + rt) / limit near 1 says the recorder's own cost was taken out, and
#     limit / plain is the cost of the runtime's OMPT path (calling a tool at all).
# PASS / MISS beside each target; a MISS does not fail the script, a failing command does.
# First it prints this machine's page-fault times (bench/fault_tail.c): a tail of faults of
# 10 us and more (a virtual machine's host backing memory lazily) explains start-up misses.
# Writes BUILD_DIR/bench/repro.json.
#
# Knobs (environment): TASKLENS_REPRO_RECORDINGS (8), TASKLENS_REPRO_THREADS (2),
# TASKLENS_REPRO_WORK_RUNS (5: 1-thread recordings and plain runs for the work ratio, both kept
# to CPU TASKLENS_REPRO_PIN_CPU, 0 by default, "none" for anywhere),
# TASKLENS_REPRO_PROGRAMS ("fib nqueens health"), TASKLENS_REPRO_FIB_ARGS ("29"),
# TASKLENS_REPRO_NQUEENS_ARGS ("11"), TASKLENS_REPRO_HEALTH_ARGS ("6 1000"). A quick check:
#   TASKLENS_REPRO_RECORDINGS=2 TASKLENS_REPRO_WORK_RUNS=1 TASKLENS_REPRO_FIB_ARGS=20 \
#   TASKLENS_REPRO_NQUEENS_ARGS=8 TASKLENS_REPRO_HEALTH_ARGS="4 100" bash bench/repro.sh build
set -euo pipefail
export LC_ALL=C

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$SRC/bench/lib.sh"
bench_build_dir repro "${1:-./build}"

N=${TASKLENS_REPRO_RECORDINGS:-8}
T=${TASKLENS_REPRO_THREADS:-2}
WORK_RUNS=${TASKLENS_REPRO_WORK_RUNS:-5}
# The CPU the work ratio's 1-thread runs are kept to (TASKLENS_REPRO_PIN_CPU; "none": anywhere).
PIN_CPU=${TASKLENS_REPRO_PIN_CPU:-0}
PIN=()
[[ $PIN_CPU != none ]] && command -v taskset >/dev/null && PIN=(taskset -c "$PIN_CPU")
PROGRAMS=${TASKLENS_REPRO_PROGRAMS:-"fib nqueens health"}
declare -A ARGS=(
  [fib]=${TASKLENS_REPRO_FIB_ARGS:-29}
  [nqueens]=${TASKLENS_REPRO_NQUEENS_ARGS:-11}
  [health]=${TASKLENS_REPRO_HEALTH_ARGS:-"6 1000"}
  [uts]=${TASKLENS_REPRO_UTS_ARGS:-10}
)
TARGET_MIN_OVER_MEDIAN=0.85
TARGET_WORK_RATIO=1.10

need=()
[[ -x $TL ]] || need+=(tasklens tasklens_recorder)
TOOL=$OUT/libempty_ompt_tool.so
[[ -x $OUT/fault_tail && -f $TOOL ]] || need+=(tasklens_bench_programs)
for p in $PROGRAMS; do
  [[ -n ${ARGS[$p]+x} ]] || { echo "repro: unknown program '$p'" >&2; exit 2; }
  [[ -x $EXAMPLES/suite_${p}_clang ]] || need+=(tasklens_suite)
done
bench_build repro "${need[@]}"

# The runtime `record` preloads, preloaded for the plain runs too (bench/run.sh does the same).
bench_runtime repro

bench_scratch repro

# stats V...: "min median max" of the numbers among the arguments, or "- - -" if there is none.
stats() {
  local nums=() x
  for x in "$@"; do [[ $x =~ ^-?[0-9.]+([eE][-+]?[0-9]+)?$ ]] && nums+=("$x"); done
  if ((${#nums[@]} == 0)); then echo "- - -"; return; fi
  echo "$(minimum "${nums[@]}") $(median "${nums[@]}") $(maximum "${nums[@]}")"
}
fmt3() { [[ $1 == - ]] && printf -- - || calc "printf \"%.${2:-2}f\", $1"; }
# startup_us REPORT_JSON: the critical work (us) of the program's serial code before its first
# construct (the fragment named "start-..."), "-" when there is none or no python3.
startup_us() {
  command -v python3 >/dev/null || { echo -; return; }
  python3 - "$1" <<'PY' 2>/dev/null || echo -
import json, sys
d = json.load(open(sys.argv[1]))
hz = d["program"]["work"] / d["program"]["work_seconds"]
v = sum(f["critical_work"] for s in d["sites"] for f in s.get("fragments", [])
        if f["fragment"].startswith("start-"))
print("%.1f" % (v / hz * 1e6))
PY
}

GIT=$(git -C "$SRC" describe --always --dirty 2>/dev/null || echo unknown)
LOAD0=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
stamp
START_US=$_T
echo "tasklens reproducibility: $GIT, build $BUILD"
echo "  $(nproc) CPUs, load average $LOAD0 at start; $N recordings of each program on $T threads;"
echo "  work ratio from $WORK_RUNS 1-thread recordings and plain runs${PIN:+ on CPU $PIN_CPU}; runtime $RT"
FAULTS=-
[[ -x $OUT/fault_tail ]] && FAULTS=$("$OUT/fault_tail" 64)
echo "  this machine's $FAULTS"
echo
printf '%-8s %8s | %-20s %6s %-5s | %-20s %6s | %-16s %-16s %-16s %-16s | %-18s %-24s | %7s %7s %6s %-5s | %7s %7s %15s %11s\n' \
  program tasks 'parallelism min/med/max' min/med ok 'raw min/med/max' min/med \
  'work ms min/med/max' 'span us min/med/max' 'start-up us' 'slow faults us' 'stalls min/med/max' \
  'stalls_removed min/med/max' 'work s' 'plain s' ratio ok 'rt s' 'limit s' '(work+rt)/limit' \
  'limit/plain'

ROWS_JSON=()
for p in $PROGRAMS; do
  bin=$EXAMPLES/suite_${p}_clang
  read -r -a args <<<"${ARGS[$p]}"
  trace=$WORK/$p.tlens
  par=() raw=() stalls=() stalls_rm=() span=() startup=() faults=() wk=()
  for ((i = 0; i < N; i++)); do
    rm -f "$trace" "$trace.old"
    timed "$WORK/rec.out" env OMP_NUM_THREADS="$T" "$TL" record --runtime "$RT" -o "$trace" \
      -- "$bin" "${args[@]}"
    timed "$WORK/report.json" "$TL" report --format json "$trace"
    par+=("$(json_program "$WORK/report.json" parallelism)")
    r=$(json_program "$WORK/report.json" parallelism_raw)
    raw+=("${r:--}")
    stalls+=("$(json_any "$WORK/report.json" recorder_stalls)")
    stalls_rm+=("$(json_any "$WORK/report.json" recorder_stalls_removed)")
    sp=$(json_program "$WORK/report.json" span_seconds)
    span+=("$(calc "printf \"%.1f\", ${sp:-0} * 1e6")")
    wks=$(json_program "$WORK/report.json" work_seconds)
    wk+=("$(calc "printf \"%.2f\", ${wks:-0} * 1e3")")
    startup+=("$(startup_us "$WORK/report.json")")
    f=$(json_any "$WORK/report.json" slow_faults_removed)
    hz=$(json_any "$WORK/report.json" ticks_per_second)
    if [[ $f =~ ^[0-9] && $hz =~ ^[0-9] ]]; then faults+=("$(calc "printf \"%.1f\", $f / $hz * 1e6")"); else faults+=(-); fi
  done
  tasks=$(out_tasks "$WORK/rec.out")
  # The work ratio: 1-thread recordings against plain 1-thread runs, alternated, both on the same
  # CPU (the recorder's writer moves to the others): virtual CPUs of one machine can run at
  # different speeds (tens of percent apart), which would otherwise decide the ratio.
  work=() plain=() limit=() rt=() workrt=()
  for ((i = 0; i < WORK_RUNS; i++)); do
    timed "$WORK/plain.out" "${PIN[@]}" env OMP_NUM_THREADS=1 LD_PRELOAD="$RT" "$bin" "${args[@]}"
    plain+=("$(sed -n 's/.* region=\([0-9.]*\) s.*/\1/p' "$WORK/plain.out")")
    timed "$WORK/limit.out" "${PIN[@]}" env OMP_NUM_THREADS=1 LD_PRELOAD="$TOOL:$RT" "$bin" \
      "${args[@]}"
    limit+=("$(sed -n 's/.* region=\([0-9.]*\) s.*/\1/p' "$WORK/limit.out")")
    rm -f "$trace" "$trace.old"
    timed "$WORK/rec1.out" "${PIN[@]}" env OMP_NUM_THREADS=1 "$TL" record --runtime "$RT" \
      -o "$trace" -- "$bin" "${args[@]}"
    timed "$WORK/report.json" "$TL" report --format json "$trace"
    w=$(json_program "$WORK/report.json" work_seconds)
    work+=("$w")
    r=$(json_any "$WORK/report.json" runtime_overhead_removed)
    hz=$(json_any "$WORK/report.json" ticks_per_second)
    if [[ $r =~ ^[0-9] && $hz =~ ^[0-9] ]]; then r=$(calc "printf \"%.6f\", $r / $hz"); else r=0; fi
    rt+=("$r")
    workrt+=("$(calc "printf \"%.6f\", $w + $r")")
  done

  read -r p_min p_med p_max <<<"$(stats "${par[@]}")"
  read -r r_min r_med r_max <<<"$(stats "${raw[@]}")"
  read -r s_min s_med s_max <<<"$(stats "${stalls[@]}")"
  read -r sr_min sr_med sr_max <<<"$(stats "${stalls_rm[@]}")"
  read -r sp_min sp_med sp_max <<<"$(stats "${span[@]}")"
  read -r wk_min wk_med wk_max <<<"$(stats "${wk[@]}")"
  read -r su_min su_med su_max <<<"$(stats "${startup[@]}")"
  read -r f_min f_med f_max <<<"$(stats "${faults[@]}")"
  p_rel=$(calc "printf \"%.3f\", $p_min / $p_med")
  p_ok=$(passmiss "$p_rel" ">=" "$TARGET_MIN_OVER_MEDIAN")
  r_rel=-
  [[ $r_min != - ]] && r_rel=$(calc "printf \"%.3f\", $r_min / $r_med")
  w_med=$(median "${work[@]}")
  pl_med=$(median "${plain[@]}")
  ratio=$(calc "printf \"%.3f\", $w_med / $pl_med")
  w_ok=$(passmiss "$ratio" "<=" "$TARGET_WORK_RATIO")
  li_med=$(median "${limit[@]}")
  rt_med=$(median "${rt[@]}")
  w_li=$(calc "printf \"%.3f\", $(median "${workrt[@]}") / $li_med")
  li_pl=$(calc "printf \"%.3f\", $li_med / $pl_med")
  printf '%-8s %8s | %-20s %6s %-5s | %-20s %6s | %-16s %-16s %-16s %-16s | %-18s %-24s | %7.3f %7.3f %6s %-5s | %7.3f %7.3f %15s %11s\n' \
    "$p" "$tasks" "$(fmt3 "$p_min")/$(fmt3 "$p_med")/$(fmt3 "$p_max")" "$p_rel" "$p_ok" \
    "$(fmt3 "$r_min")/$(fmt3 "$r_med")/$(fmt3 "$r_max")" "$r_rel" \
    "$(fmt3 "$wk_min" 0)/$(fmt3 "$wk_med" 0)/$(fmt3 "$wk_max" 0)" \
    "$(fmt3 "$sp_min" 0)/$(fmt3 "$sp_med" 0)/$(fmt3 "$sp_max" 0)" \
    "$(fmt3 "$su_min" 0)/$(fmt3 "$su_med" 0)/$(fmt3 "$su_max" 0)" \
    "$(fmt3 "$f_min" 0)/$(fmt3 "$f_med" 0)/$(fmt3 "$f_max" 0)" \
    "$(fmt3 "$s_min" 0)/$(fmt3 "$s_med" 0)/$(fmt3 "$s_max" 0)" \
    "$(fmt3 "$sr_min" 0)/$(fmt3 "$sr_med" 0)/$(fmt3 "$sr_max" 0)" "$w_med" "$pl_med" "$ratio" "$w_ok" \
    "$rt_med" "$li_med" "$w_li" "$li_pl"

  list() { local IFS=,; local a=() x; for x in "$@"; do a+=("$(json_num "$x")"); done; echo "[${a[*]}]"; }
  ROWS_JSON+=("$(printf '{"program": "%s", "args": %s, "threads": %s, "tasks": %s, "parallelism": %s, "parallelism_raw": %s, "recorder_stalls": %s, "recorder_stalls_removed": %s, "work_ms": %s, "span_us": %s, "startup_critical_us": %s, "slow_faults_removed_us": %s, "parallelism_min_over_median": %s, "verdict_parallelism": "%s", "parallelism_raw_min_over_median": %s, "work_seconds_1t": %s, "plain_region_seconds_1t": %s, "work_ratio": %s, "verdict_work_ratio": "%s", "runtime_removed_seconds_1t": %s, "limit_region_seconds_1t": %s, "work_and_runtime_over_limit": %s, "limit_over_plain": %s}' \
    "$p" "$(json_str "${ARGS[$p]}")" "$T" "$tasks" "$(list "${par[@]}")" "$(list "${raw[@]}")" \
    "$(list "${stalls[@]}")" "$(list "${stalls_rm[@]}")" "$(list "${wk[@]}")" "$(list "${span[@]}")" \
    "$(list "${startup[@]}")" "$(list "${faults[@]}")" "$p_rel" "$p_ok" "$(json_num "$r_rel")" \
    "$(list "${work[@]}")" "$(list "${plain[@]}")" "$ratio" "$w_ok" "$(list "${rt[@]}")" \
    "$(list "${limit[@]}")" \
    "$w_li" "$li_pl")")
done
echo
echo "targets: parallelism min >= ${TARGET_MIN_OVER_MEDIAN} x median (robust figure);" \
  "work ratio (1-thread recorded work / plain 1-thread region time) <= ${TARGET_WORK_RATIO};" \
  "rt: the runtime's own cost taken out of that work; (work+rt)/limit: over the region time" \
  "under an empty OMPT tool (the recorder's cost taken out leaves about 1), limit/plain: what" \
  "calling a tool costs the runtime"

stamp
TOTAL_S=$(calc "printf \"%.1f\", ($_T - $START_US) / 1e6")
LOAD1=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
RESULTS=$OUT/repro.json
mkdir -p "$OUT"
{
  printf '{\n  "tasklens_version": %s,\n  "build_dir": %s,\n  "runtime": %s,\n' "$(json_str "$GIT")" \
    "$(json_str "$BUILD")" "$(json_str "$RT")"
  printf '  "machine": {"cpus": %s, "loadavg_start": %s, "loadavg_end": %s, "page_faults": %s},\n' \
    "$(nproc)" "$LOAD0" "$LOAD1" "$(json_str "$FAULTS")"
  printf '  "config": {"recordings": %s, "threads": %s, "work_runs": %s},\n' "$N" "$T" "$WORK_RUNS"
  printf '  "targets": {"parallelism_min_over_median": %s, "work_ratio": %s},\n' \
    "$TARGET_MIN_OVER_MEDIAN" "$TARGET_WORK_RATIO"
  printf '  "programs": [\n    %s\n  ],\n' "$(join_json "${ROWS_JSON[@]}" | sed 's/},{"program"/},\n    {"program"/g')"
  printf '  "total_seconds": %s\n}\n' "$TOTAL_S"
} >"$RESULTS.tmp"
mv "$RESULTS.tmp" "$RESULTS"
echo "total ${TOTAL_S} s, load average $LOAD1 at the end; results in $RESULTS"
