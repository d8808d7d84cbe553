#!/usr/bin/env bash
# bench/run.sh [BUILD_DIR=./build]: the tasklens benchmarks (docs/benchmarks.md).
#
#   1. recording overhead: wall time of `tasklens record -- prog` / wall time of prog run plainly
#      under the same OpenMP runtime (LD_PRELOAD of the runtime `record` preloads), for a
#      fine-grained fib (a task per call) and a coarse-grained program (tasks of tens of us),
#      with OMP_NUM_THREADS=1 and 2; medians of REPS interleaved runs of each variant;
#   2. trace bytes per task of the fib traces;
#   3. `tasklens report --format json` throughput (tasks per second) on the fib trace and on a
#      larger one (fib(32), about 7M tasks);
#   4. `tasklens tasks`, `tasklens sched` and `tasklens predict` (--format json; predict at its
#      default 7 thread counts) wall time on the fib trace (1.66M tasks), and `tasklens diff` of
#      that trace against itself, against the goal of 2 s for a 1-million-task trace.
#      Also `tasklens export --format perfetto` on it: seconds per million tasks, file size.
#
# Every figure is a ratio or rate measured in this run; targets are printed next to them with
# PASS / MISS, and a MISS does not fail the script (it fails only when a command fails).
# Prints a table and writes BUILD_DIR/bench/results.json. Pure bash + awk (no python).
#
# Knobs (environment): TASKLENS_BENCH_REPS (5), TASKLENS_BENCH_THREADS ("1 2"),
# TASKLENS_BENCH_FIB_N (29), TASKLENS_BENCH_FIB_BIG_N (32), TASKLENS_BENCH_COARSE_ARGS ("40000 3":
# tasks, matrix products per task), TASKLENS_BENCH_REPORT_REPS (5).
set -euo pipefail
export LC_ALL=C

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$SRC/bench/lib.sh"
bench_build_dir bench "${1:-./build}"
FIB=$OUT/fib_bench
COARSE=$OUT/coarse_bench

REPS=${TASKLENS_BENCH_REPS:-5}
THREADS=${TASKLENS_BENCH_THREADS:-"1 2"}
FIB_N=${TASKLENS_BENCH_FIB_N:-29}
FIB_BIG_N=${TASKLENS_BENCH_FIB_BIG_N:-32}
COARSE_ARGS=${TASKLENS_BENCH_COARSE_ARGS:-"40000 3"}
REPORT_REPS=${TASKLENS_BENCH_REPORT_REPS:-5}

# Targets.
TARGET_FINE=2.0      # recorded / plain, fine-grained fib
TARGET_COARSE=1.05   # recorded / plain, coarse-grained
TARGET_BYTES=16      # trace bytes per task
TARGET_REPORT=5000000  # report: tasks per second
TARGET_ANALYSIS_S_PER_M=2.0  # tasks, sched, predict: seconds per million tasks

# Build what is missing (never the case under `cmake --build build --target bench`).
if [[ ! -x $TL || ! -x $FIB || ! -x $COARSE ]]; then
  echo "bench: building tasklens and the bench programs in $BUILD" >&2
  cmake --build "$BUILD" --target tasklens tasklens_recorder tasklens_bench_programs >&2
fi

# The OpenMP runtime: the one `tasklens record` preloads by default (TASKLENS_OMP_RUNTIME of this
# build, else the system's libomp). It is passed to record explicitly and LD_PRELOADed for the
# plain runs, so that both use the very same file.
RT=$(cache_get TASKLENS_OMP_RUNTIME)
[[ -n $RT && ! -f $RT ]] && RT=$(cache_get TASKLENS_SYSTEM_LIBOMP)
[[ -n $RT && ! -f $RT ]] && RT=""
if [[ -n $RT ]]; then
  RT=$(cd "$(dirname "$RT")" && pwd)/$(basename "$RT")
  RECORD_RT=(--runtime "$RT")
else
  echo "bench: warning: no LLVM OpenMP runtime to preload; 'plain' is the program's own runtime" >&2
  RECORD_RT=(--runtime program)
fi
BUILD_TYPE=$(cache_get CMAKE_BUILD_TYPE)

# A clean environment for the programs: no inherited preloads or OMPT tools.
unset LD_PRELOAD OMP_TOOL OMP_TOOL_LIBRARIES OMP_TOOL_VERBOSE_INIT OMP_NUM_THREADS

TRACES=$OUT/traces
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tasklens-bench.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
mkdir -p "$TRACES"

HAVE_TIME=0
[[ -x /usr/bin/time ]] && HAVE_TIME=1

# ---------------------------------------------------------------------------------------------
# Helpers

# stamp, timed, median, calc, cache_get: bench/lib.sh.

# A top-level number field ("  \"name\": value") of a `tasklens report --format json` output.
json_top() { awk -v k="\"$2\":" '$1 == k && /^  "/ { v = $2; sub(/,$/, "", v); print v; exit }' "$1"; }
# A number field of the top-level "program" object.
json_program() {
  awk -v k="\"$2\":" '/^  "program": \{/ { in_p = 1; next } in_p && /^  }/ { exit }
    in_p && $1 == k { v = $2; sub(/,$/, "", v); print v; exit }' "$1"
}

json_str() { local s=${1//\\/\\\\}; s=${s//\"/\\\"}; printf '"%s"' "$s"; }
join_json() { local IFS=,; echo "$*"; }
us_list() { printf '%s\n' "$@" | awk '{ printf "%s%.6f", (NR > 1 ? ", " : "["), $1 / 1e6 } END { print "]" }'; }

passmiss() { # passmiss VALUE OP TARGET -> PASS or MISS
  calc "print (($1 $2 $3) ? \"PASS\" : \"MISS\")"
}

human_bytes() { calc "b = $1; if (b < 10240) printf \"%d B\", b; else if (b < 10485760)
  printf \"%.1f KiB\", b / 1024; else printf \"%.1f MiB\", b / 1048576"; }

# ---------------------------------------------------------------------------------------------
NPROC=$(nproc 2>/dev/null || echo 1)
CPU=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)
LOAD0=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
GIT=$(git -C "$SRC" describe --always --dirty 2>/dev/null || echo unknown)
stamp
START_US=$_T

echo "tasklens benchmarks: $GIT, ${BUILD_TYPE:-?} build in $BUILD"
echo "  $NPROC CPUs (${CPU:-unknown}), load average $LOAD0 at start"
echo "  runtime for plain and recorded runs: ${RT:-(none: the programs own)}"
echo "  medians of $REPS interleaved runs of each variant; wall time of the whole process"
echo

# ---------------------------------------------------------------------------------------------
# 1. Recording overhead (and, for fib, trace size).

OVERHEAD_JSON=()
TRACESIZE_JSON=()
declare -A FIB_TRACE FIB_TASKS

printf '1. recording overhead: recorded / plain wall time (same binary, same runtime)\n'
printf '   %-16s %3s %9s %8s %8s %8s %10s %-12s %8s\n' program thr tasks 'own s' 'plain s' \
  'rec s' rec/plain target rec/own

# overhead KIND LABEL THREADS TARGET BIN ARGS...
overhead() {
  local kind=$1 label=$2 T=$3 target=$4 bin=$5
  shift 5
  local name trace i v order args="$*" own=() plain=() rec=()
  name=$(basename "$bin")
  trace=$TRACES/${name}_${args// /_}_t$T.tlens
  for ((i = 0; i < REPS; i++)); do
    if ((i % 2 == 0)); then order="own plain rec"; else order="rec plain own"; fi
    for v in $order; do
      case $v in
        own)
          timed "$WORK/own.out" env OMP_NUM_THREADS="$T" "$bin" "$@"
          own+=("$ELAPSED_US") ;;
        plain)
          timed "$WORK/plain.out" env OMP_NUM_THREADS="$T" ${RT:+LD_PRELOAD="$RT"} "$bin" "$@"
          plain+=("$ELAPSED_US") ;;
        rec)
          rm -f "$trace" "$trace.old"
          timed "$WORK/rec.out" env OMP_NUM_THREADS="$T" "$TL" record "${RECORD_RT[@]}" \
            -o "$trace" -- "$bin" "$@"
          rec+=("$ELAPSED_US") ;;
      esac
    done
  done
  # The programs print their result before " region=" (timings after): it must not change.
  if [[ $(sed 's/ region=.*//' "$WORK/plain.out") != "$(sed 's/ region=.*//' "$WORK/rec.out")" ]]; then
    echo "bench: warning: $label: the recorded run printed another result than the plain one" >&2
  fi

  # The task count, from the last recorded trace.
  timed "$WORK/report.json" "$TL" report --format json "$trace"
  local tasks complete expected
  tasks=$(json_top "$WORK/report.json" tasks)
  complete=$(json_top "$WORK/report.json" complete)
  expected=$(sed -n 's/.* tasks=\([0-9]*\).*/\1/p' "$WORK/plain.out")
  [[ $complete == true ]] || echo "bench: warning: $trace is incomplete" >&2
  if [[ -n $expected && $expected != "$tasks" ]]; then
    echo "bench: warning: $label: the trace has $tasks tasks, the program made $expected" >&2
  fi

  local m_own m_plain m_rec ratio ratio_own verdict extra=""
  m_own=$(median "${own[@]}")
  m_plain=$(median "${plain[@]}")
  m_rec=$(median "${rec[@]}")
  ratio=$(calc "printf \"%.4f\", $m_rec / $m_plain")
  ratio_own=$(calc "printf \"%.4f\", $m_rec / $m_own")
  verdict=$(passmiss "$ratio" "<=" "$target")
  printf '   %-16s %3s %9s %8.3f %8.3f %8.3f %9.3fx %-12s %7.3fx\n' "$label" "$T" "$tasks" \
    "$(calc "print $m_own / 1e6")" "$(calc "print $m_plain / 1e6")" \
    "$(calc "print $m_rec / 1e6")" "$ratio" "<= ${target}x $verdict" "$ratio_own"

  if [[ $kind == coarse ]]; then
    # How coarse the tasks really are: from the program (last plain run) and from the trace.
    local med_us work_s
    med_us=$(sed -n 's/.* median=\([0-9.]*\).*/\1/p' "$WORK/plain.out")
    work_s=$(json_program "$WORK/report.json" work_seconds)
    extra=$(printf ', "task_us_median": %s, "work_us_per_task": %s' "${med_us:-null}" \
      "$(calc "printf \"%.3f\", $work_s * 1e6 / $tasks")")
    COARSE_NOTE+=("$(printf '%s thr=%s: median task %s us (program), %.1f us of work per task (trace)' \
      "$label" "$T" "${med_us:-?}" "$(calc "print $work_s * 1e6 / $tasks")")")
  fi

  OVERHEAD_JSON+=("$(printf '{"kind": "%s", "program": %s, "threads": %s, "tasks": %s, "own_s": %s, "plain_s": %s, "recorded_s": %s, "ratio": %s, "ratio_vs_own": %s, "target": %s, "verdict": "%s", "runs_own_s": %s, "runs_plain_s": %s, "runs_recorded_s": %s%s}' \
    "$kind" "$(json_str "$label")" "$T" "$tasks" "$(calc "print $m_own / 1e6")" \
    "$(calc "print $m_plain / 1e6")" "$(calc "print $m_rec / 1e6")" "$ratio" "$ratio_own" \
    "$target" "$verdict" "$(us_list "${own[@]}")" "$(us_list "${plain[@]}")" \
    "$(us_list "${rec[@]}")" "$extra")")

  if [[ $kind == fib ]]; then
    FIB_TRACE[$T]=$trace
    FIB_TASKS[$T]=$tasks
  fi
}

# warmup BIN ARGS...: one untimed run of each variant (page cache, dynamic loader caches).
warmup() {
  local bin=$1
  shift
  timed /dev/null env OMP_NUM_THREADS=1 "$bin" "$@"
  timed /dev/null env OMP_NUM_THREADS=1 ${RT:+LD_PRELOAD="$RT"} "$bin" "$@"
  rm -f "$WORK/warmup.tlens"
  timed /dev/null env OMP_NUM_THREADS=1 "$TL" record "${RECORD_RT[@]}" -o "$WORK/warmup.tlens" \
    -- "$bin" "$@"
}

COARSE_NOTE=()
warmup "$FIB" "$FIB_N"
for T in $THREADS; do
  overhead fib "fib($FIB_N)" "$T" "$TARGET_FINE" "$FIB" "$FIB_N"
done
# shellcheck disable=SC2086
warmup "$COARSE" $COARSE_ARGS
for T in $THREADS; do
  # shellcheck disable=SC2086
  overhead coarse "coarse(${COARSE_ARGS// /,})" "$T" "$TARGET_COARSE" "$COARSE" $COARSE_ARGS
done
for note in "${COARSE_NOTE[@]}"; do echo "   $note"; done

# The fixed cost of recording, whatever the program does: the launcher (fork, and at the end
# reopening the trace for its summary line), the recorder's start and stop, the runtime's OMPT
# initialization. Measured on a 1-task run of coarse_bench; it is part of every ratio above.
fixed_plain=()
fixed_rec=()
for ((i = 0; i < REPS; i++)); do
  timed /dev/null env OMP_NUM_THREADS=1 ${RT:+LD_PRELOAD="$RT"} "$COARSE" 1 1
  fixed_plain+=("$ELAPSED_US")
  rm -f "$WORK/fixed.tlens" "$WORK/fixed.tlens.old"
  timed /dev/null env OMP_NUM_THREADS=1 "$TL" record "${RECORD_RT[@]}" -o "$WORK/fixed.tlens" \
    -- "$COARSE" 1 1
  fixed_rec+=("$ELAPSED_US")
done
FIXED_PLAIN=$(median "${fixed_plain[@]}")
FIXED_REC=$(median "${fixed_rec[@]}")
printf '   fixed cost of recording (1-task run, thr=1): %+.1f ms (plain %.1f ms, recorded %.1f ms)\n' \
  "$(calc "print ($FIXED_REC - $FIXED_PLAIN) / 1e3")" "$(calc "print $FIXED_PLAIN / 1e3")" \
  "$(calc "print $FIXED_REC / 1e3")"
FIXED_JSON=$(printf '{"program": "coarse_bench 1 1", "threads": 1, "plain_s": %s, "recorded_s": %s, "difference_s": %s, "runs_plain_s": %s, "runs_recorded_s": %s}' \
  "$(calc "print $FIXED_PLAIN / 1e6")" "$(calc "print $FIXED_REC / 1e6")" \
  "$(calc "print ($FIXED_REC - $FIXED_PLAIN) / 1e6")" "$(us_list "${fixed_plain[@]}")" \
  "$(us_list "${fixed_rec[@]}")")
echo "   own = the program's own OpenMP runtime, for information (no target)"
echo

# ---------------------------------------------------------------------------------------------
# 2. Trace bytes per task.

printf '2. trace size: bytes per task\n'
for T in $THREADS; do
  trace=${FIB_TRACE[$T]}
  tasks=${FIB_TASKS[$T]}
  bytes=$(stat -c %s "$trace")
  bpt=$(calc "printf \"%.3f\", $bytes / $tasks")
  verdict=$(passmiss "$bpt" "<=" "$TARGET_BYTES")
  printf '   %-16s thr=%s %9s tasks %10s %8.2f B/task   target <= %s %s\n' "fib($FIB_N)" "$T" \
    "$tasks" "$(human_bytes "$bytes")" "$bpt" "$TARGET_BYTES" "$verdict"
  TRACESIZE_JSON+=("$(printf '{"program": "fib(%s)", "threads": %s, "tasks": %s, "bytes": %s, "bytes_per_task": %s, "target": %s, "verdict": "%s"}' \
    "$FIB_N" "$T" "$tasks" "$bytes" "$bpt" "$TARGET_BYTES" "$verdict")")
done
echo

# ---------------------------------------------------------------------------------------------
# 3. Report throughput.

REPORT_JSON=()
TMAX=$(printf '%s\n' $THREADS | sort -n | tail -n 1)
printf '3. report speed: tasklens report --format json, median (and best) of %s runs after one\n' "$REPORT_REPS"
printf '   warm-up run, which is shown apart\n'

# report_speed LABEL TRACE
# The warm-up run is not counted: on a VM that hands the memory its processes free back to its
# host (free page reporting), the first run after a pause waits for the host to fault that
# memory in again, and takes two to four times as long (docs/benchmarks.md).
report_speed() {
  local label=$1 trace=$2 i runs=() rss=() tasks m best tps best_tps verdict bytes peak warm
  timed "$WORK/report.json" "$TL" report --format json "$trace"
  warm=$ELAPSED_US
  for ((i = 0; i < REPORT_REPS; i++)); do
    if ((HAVE_TIME)); then
      timed "$WORK/report.json" /usr/bin/time -f %M -o "$WORK/rss" "$TL" report --format json "$trace"
      rss+=("$(tail -n 1 "$WORK/rss")")
    else
      timed "$WORK/report.json" "$TL" report --format json "$trace"
    fi
    runs+=("$ELAPSED_US")
  done
  tasks=$(json_top "$WORK/report.json" tasks)
  bytes=$(stat -c %s "$trace")
  m=$(median "${runs[@]}")
  best=$(printf '%s\n' "${runs[@]}" | sort -g | head -n 1)
  tps=$(calc "printf \"%.0f\", $tasks / ($m / 1e6)")
  best_tps=$(calc "printf \"%.0f\", $tasks / ($best / 1e6)")
  verdict=$(passmiss "$tps" ">=" "$TARGET_REPORT")
  peak=null
  ((HAVE_TIME)) && peak=$(median "${rss[@]}")
  printf '   %-16s thr=%s %9s tasks %10s %7.2f s %6.2f M tasks/s (best %.2f)  %6.2f s/M tasks  peak %s  target >= %s M/s %s\n' \
    "$label" "$TMAX" "$tasks" "$(human_bytes "$bytes")" "$(calc "print $m / 1e6")" \
    "$(calc "print $tps / 1e6")" "$(calc "print $best_tps / 1e6")" "$(calc "print $m / $tasks")" \
    "$([[ $peak == null ]] && echo '?' || human_bytes "$(calc "print $peak * 1024")")" \
    "$(calc "print $TARGET_REPORT / 1e6")" "$verdict"
  printf '   %-16s warm-up run %.2f s\n' "" "$(calc "print $warm / 1e6")"
  REPORT_JSON+=("$(printf '{"trace": "%s", "threads": %s, "tasks": %s, "trace_bytes": %s, "seconds": %s, "tasks_per_second": %s, "seconds_per_million_tasks": %s, "peak_rss_kib": %s, "target_tasks_per_second": %s, "verdict": "%s", "runs_s": %s, "best_tasks_per_second": %s, "warmup_s": %s}' \
    "$label" "$TMAX" "$tasks" "$bytes" "$(calc "print $m / 1e6")" "$tps" \
    "$(calc "printf \"%.4f\", $m / $tasks")" "$peak" "$TARGET_REPORT" "$verdict" \
    "$(us_list "${runs[@]}")" "$best_tps" "$(calc "print $warm / 1e6")")")
}

report_speed "fib($FIB_N)" "${FIB_TRACE[$TMAX]}"
# The larger trace: fib(FIB_BIG_N), recorded once. `tasklens report` holds the whole model in
# memory (a few hundred bytes per task, 600 assumed): take a smaller n when MemAvailable is
# too small.
BIG_N=$FIB_BIG_N
MEM_KB=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo 2>/dev/null || true)
if [[ -n $MEM_KB ]]; then
  while ((BIG_N > FIB_N)); do
    need_kb=$(calc "a = 0; b = 1; for (i = 0; i <= $BIG_N; i++) { t = a + b; a = b; b = t }
      printf \"%.0f\", (2 * a - 2) * 600 / 1024")  # a = F(n+1); tasks = 2 F(n+1) - 2
    ((need_kb * 10 < MEM_KB * 8)) && break
    BIG_N=$((BIG_N - 1))
  done
  if ((BIG_N != FIB_BIG_N)); then
    echo "   (only $((MEM_KB / 1024)) MiB available: fib($BIG_N) instead of fib($FIB_BIG_N))"
  fi
fi
if ((BIG_N > FIB_N)); then
  BIG_TRACE=$TRACES/fib_bench_${BIG_N}_t$TMAX.tlens
  rm -f "$BIG_TRACE" "$BIG_TRACE.old"
  timed "$WORK/big.out" env OMP_NUM_THREADS="$TMAX" "$TL" record "${RECORD_RT[@]}" \
    -o "$BIG_TRACE" -- "$FIB" "$BIG_N"
  report_speed "fib($BIG_N)" "$BIG_TRACE"
fi
echo

# ---------------------------------------------------------------------------------------------
# 4. The scheduling analyses.

ANALYSIS_JSON=()
printf '4. tasks, sched, predict and diff: wall time on the fib(%s) trace, median of %s runs\n' \
  "$FIB_N" "$REPORT_REPS"
for cmd in tasks sched predict diff; do
  args=("${FIB_TRACE[$TMAX]}")
  # diff compares two recordings: the trace against itself (every unit matched, two models).
  [[ $cmd == diff ]] && args+=("${FIB_TRACE[$TMAX]}")
  runs=()
  for ((i = 0; i < REPORT_REPS; i++)); do
    timed "$WORK/$cmd.json" "$TL" "$cmd" --format json "${args[@]}"
    runs+=("$ELAPSED_US")
  done
  m=$(median "${runs[@]}")
  tasks=${FIB_TASKS[$TMAX]}
  per_m=$(calc "printf \"%.3f\", $m / 1e6 / ($tasks / 1e6)")
  verdict=$(passmiss "$per_m" "<=" "$TARGET_ANALYSIS_S_PER_M")
  printf '   %-6s %9s tasks %7.2f s  %6.2f s/M tasks  target <= %s s/M tasks %s\n' "$cmd" \
    "$tasks" "$(calc "print $m / 1e6")" "$per_m" "$TARGET_ANALYSIS_S_PER_M" "$verdict"
  ANALYSIS_JSON+=("$(printf '{"command": "%s", "tasks": %s, "seconds": %s, "seconds_per_million_tasks": %s, "target": %s, "verdict": "%s", "runs_s": %s}' \
    "$cmd" "$tasks" "$(calc "print $m / 1e6")" "$per_m" "$TARGET_ANALYSIS_S_PER_M" "$verdict" \
    "$(us_list "${runs[@]}")")")
done
# tasklens export --format perfetto into a file: seconds per million tasks, and the file's size.
runs=()
for ((i = 0; i < REPORT_REPS; i++)); do
  rm -f "$WORK/export.json"
  timed /dev/null "$TL" export --format perfetto -o "$WORK/export.json" "${FIB_TRACE[$TMAX]}"
  runs+=("$ELAPSED_US")
done
m=$(median "${runs[@]}")
tasks=${FIB_TASKS[$TMAX]}
per_m=$(calc "printf \"%.3f\", $m / 1e6 / ($tasks / 1e6)")
bytes=$(stat -c %s "$WORK/export.json")
printf '   %-6s %9s tasks %7.2f s  %6.2f s/M tasks  (perfetto, %s, %.0f B/task)\n' export "$tasks" \
  "$(calc "print $m / 1e6")" "$per_m" "$(human_bytes "$bytes")" "$(calc "print $bytes / $tasks")"
ANALYSIS_JSON+=("$(printf '{"command": "export --format perfetto", "tasks": %s, "seconds": %s, "seconds_per_million_tasks": %s, "bytes": %s, "runs_s": %s}' \
  "$tasks" "$(calc "print $m / 1e6")" "$per_m" "$bytes" "$(us_list "${runs[@]}")")")
rm -f "$WORK/export.json"
echo

# ---------------------------------------------------------------------------------------------
stamp
TOTAL_S=$(calc "printf \"%.1f\", ($_T - $START_US) / 1e6")
LOAD1=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
RESULTS=$OUT/results.json
{
  printf '{\n'
  printf '  "tasklens_version": %s,\n' "$(json_str "$GIT")"
  printf '  "build_dir": %s,\n  "build_type": %s,\n' "$(json_str "$BUILD")" "$(json_str "${BUILD_TYPE:-}")"
  printf '  "runtime": %s,\n' "$(json_str "${RT:-program}")"
  printf '  "machine": {"cpus": %s, "cpu": %s, "loadavg_start": %s, "loadavg_end": %s},\n' \
    "$NPROC" "$(json_str "$CPU")" "$LOAD0" "$LOAD1"
  printf '  "config": {"reps": %s, "threads": [%s], "fib_n": %s, "fib_big_n": %s, "coarse_args": %s, "report_reps": %s},\n' \
    "$REPS" "$(echo $THREADS | tr ' ' ',')" "$FIB_N" "$FIB_BIG_N" "$(json_str "$COARSE_ARGS")" "$REPORT_REPS"
  printf '  "recording_overhead": [\n    %s\n  ],\n' "$(join_json "${OVERHEAD_JSON[@]}" | sed 's/},{/},\n    {/g')"
  printf '  "fixed_cost": %s,\n' "$FIXED_JSON"
  printf '  "trace_bytes_per_task": [\n    %s\n  ],\n' "$(join_json "${TRACESIZE_JSON[@]}" | sed 's/},{/},\n    {/g')"
  printf '  "report_speed": [\n    %s\n  ],\n' "$(join_json "${REPORT_JSON[@]}" | sed 's/},{/},\n    {/g')"
  printf '  "analysis_speed": [\n    %s\n  ],\n' "$(join_json "${ANALYSIS_JSON[@]}" | sed 's/},{/},\n    {/g')"
  printf '  "total_seconds": %s\n}\n' "$TOTAL_S"
} >"$RESULTS.tmp"
mv "$RESULTS.tmp" "$RESULTS"
echo "total ${TOTAL_S} s, load average $LOAD1 at the end; results in $RESULTS; traces in $TRACES"
