#!/usr/bin/env bash
# bench/reader_instructions.sh [BUILD_DIR=./build]: what a reader command costs per task, as a
# count of instructions, on every thread it runs.
#
# Why: issue 36 asks `report` for 5 M tasks per second, and a rate moves 1.5-2x between hosts and
# from one hour to the next on a shared virtual machine (docs/benchmarks.md, the hosts), so a
# change that saves 20% cannot be told from the noise. Valgrind's callgrind counts the
# instructions each thread executes, the same on any machine for the same code and trace. The
# reader's fixed costs (start-up, the trace's header, the report's text) are taken out by reading
# two recordings of one program at two sizes: (instructions of the large - of the small) /
# (tasks of the large - of the small) is the cost of one more task.
#
# `report --stream --raw-span` (one pass: `report --stream`'s robust span reads the recording a
# second time when it clips strands, which two recordings of one program need not both do, so its
# cost per task is that of one pass, or two) runs on three threads: the events' decoding and merge (trace::EventDecoder,
# model::detail::EventPipe), the builder (model::detail::Builder), and its sink
# (model::SinkThread playing into analysis::StreamProfile). Each is named here by the function
# that executes most of its instructions. What count 5 M tasks a second asks for on two cores,
# and the latest figures: docs/benchmarks.md ("The readers' instructions per task").
#
# For each shape (examples/suite, clang-14, tied, no cut-off, 2 threads) at two small sizes,
# prints each command's instructions per task, in all and per thread. About 5 minutes.
# Knobs: TASKLENS_READER_SHAPES ("fib uts nqueens"), TASKLENS_READER_COMMANDS ("report --stream
# --raw-span" and "report": a comma-separated list).
set -euo pipefail
export LC_ALL=C
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$SRC/bench/lib.sh"
bench_build_dir reader_instructions "${1:-./build}"
bench_scratch reader_instructions
for tool in valgrind callgrind_annotate; do
  command -v "$tool" >/dev/null || {
    echo "reader_instructions: $tool not found (apt-get install valgrind)" >&2
    exit 2
  }
done
SHAPES=${TASKLENS_READER_SHAPES:-fib uts nqueens}
IFS=, read -r -a COMMANDS <<<"${TASKLENS_READER_COMMANDS:-report --stream --raw-span,report}"
# Two sizes each, about 40 K and 400 K tasks.
declare -A SMALL=([fib]="21" [uts]="7 0" [nqueens]="8") LARGE=([fib]="26" [uts]="9 0" [nqueens]="10")

# record SHAPE ARGS OUT: records the shape on 2 threads; prints its task count.
record() {
  local shape=$1 args=$2 out=$3
  # shellcheck disable=SC2086
  OMP_NUM_THREADS=2 "$TL" record -o "$out" -- "$EXAMPLES/suite_${shape}_clang" $args \
    >/dev/null 2>"$out.err"
  sed -n 's/.*, \([0-9]*\) tasks,.*/\1/p' "$out.err"
}

# count TRACE COMMAND...: runs the reader under callgrind; prints one line per thread that
# executed instructions: "<instructions> <the function that executed most of them>".
count() {
  local trace=$1 out
  shift
  out=$(mktemp "$WORK/cg.XXXXXX")
  # shellcheck disable=SC2068
  valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$out" \
    "$TL" $@ "$trace" >/dev/null 2>"$out.err" || {
    echo "reader_instructions: '$* $trace' failed under valgrind ($out.err):" >&2
    tail -n 3 "$out.err" >&2
    exit 1
  }
  local f
  for f in "$out"-*; do
    local total top
    total=$(sed -n 's/^summary: //p' "$f")
    top=$(callgrind_annotate "$f" 2>/dev/null | awk '/file:function/ { getline; getline; if (!seen++) print }' |
      sed -e 's/(anonymous namespace):://g' -n -e 's/.*:tasklens::\([A-Za-z_:]*\)(.*/\1/p')
    echo "$total ${top:-other}"
  done
}

# join_parts PART...: the parts separated by "; ".
join_parts() { local out="" p; for p in "$@"; do out+="${out:+; }$p"; done; echo "$out"; }

printf '%-8s %-16s %10s %14s  %s\n' shape command tasks "instr/task" "per thread (instructions per task: the thread's top function)"
for shape in $SHAPES; do
  small_tasks=$(record "$shape" "${SMALL[$shape]}" "$WORK/$shape-small.tlt")
  large_tasks=$(record "$shape" "${LARGE[$shape]}" "$WORK/$shape-large.tlt")
  if [[ -z $small_tasks || -z $large_tasks || $large_tasks -le $small_tasks ]]; then
    echo "reader_instructions: recording $shape failed ($WORK/$shape-*.tlt.err)" >&2
    exit 1
  fi
  for cmd in "${COMMANDS[@]}"; do
    # Threads are matched between the two sizes by their order of creation.
    mapfile -t small < <(count "$WORK/$shape-small.tlt" $cmd)
    mapfile -t large < <(count "$WORK/$shape-large.tlt" $cmd)
    all=0
    parts=()
    for i in "${!large[@]}"; do
      read -r n_large name <<<"${large[$i]}"
      n_small=0
      [[ -n ${small[$i]:-} ]] && read -r n_small _ <<<"${small[$i]}"
      per=$(calc "printf \"%.0f\", ($n_large - $n_small) / ($large_tasks - $small_tasks)")
      all=$((all + per))
      ((per >= 10)) && parts+=("$per: $name")
    done
    printf '%-8s %-16s %10s %14s  %s\n' "$shape" "$cmd" "$large_tasks" "$all" "$(join_parts "${parts[@]}")"
  done
done
