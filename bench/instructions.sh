#!/usr/bin/env bash
# bench/instructions.sh [BUILD_DIR=./build]: the recorder's cost in the program's threads as a
# count of instructions, which, unlike a time, does not move with the machine.
#
# On a shared or virtual machine the same run takes 1.5-2x longer from one minute to the next
# (bench/overhead.sh's spreads), so a change of the hot path that saves 10% of its time cannot be
# seen in wall times. Valgrind's callgrind counts the instructions executed inside the recorder's
# callbacks (every function named recorder::...::on_*: OMPT's task, sync, work, dispatch...
# callbacks, with everything they call), the same on any machine for the same code.
#
# For each shape of the program suite (examples/suite, clang-14 -O3, tied, no cut-off, at small
# sizes: fib 18, n-queens 8, health 4 x 100, uts 8), on 1 thread (the per-task cost target is
# on 1 thread), prints the tasks (as the program counts them) and the instructions in the
# callbacks, in all and per task, against the target of 200 per task (PASS or MISS).
# TASKLENS_INSTRUCTIONS_THREADS="1 2" adds 2-thread teams: valgrind runs one thread at a time, so
# their idle workers' spinning makes some shapes (health) take many minutes there.
#
# Why the programs are linked with the recorder and LLVM 16's runtime here rather than run under
# `tasklens record`: valgrind's launcher is itself a dynamically linked program, so an LD_PRELOAD
# given to valgrind loads the recorder into the launcher, whose start-up then takes the
# recorder's settings out of the environment the program would get. Linked, the recorder starts
# in the program as under `record` (TASKLENS_OUTPUT names its trace).
#
# Then the wall-clock ratios beside the empty-tool limit, measured in the same run
# (bench/overhead.sh on 1 thread, 3 rounds: record/limit, the region's time over plain).
# Needs valgrind (apt-get install valgrind) and clang-14. About 30 s, and a minute for the wall
# clock. Knobs: TASKLENS_INSTRUCTIONS_SHAPES ("fib nqueens health uts"),
# TASKLENS_INSTRUCTIONS_THREADS ("1"), TASKLENS_INSTRUCTIONS_WALL (1; 0: instructions only).
set -euo pipefail
SRC=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$SRC/bench/lib.sh"
BUILD=$(cd "${1:-$SRC/build}" && pwd)
REC=$BUILD/libtasklens_recorder.so
RT=$SRC/third_party/libomp16/libomp.so.5
SHAPES=${TASKLENS_INSTRUCTIONS_SHAPES:-"fib nqueens health uts"}
THREADS=${TASKLENS_INSTRUCTIONS_THREADS:-1}
declare -A ARGS=([fib]="18" [nqueens]="8" [health]="4 100" [uts]="8")

for tool in valgrind callgrind_annotate clang-14; do
  command -v "$tool" >/dev/null || {
    echo "instructions: $tool not found (apt-get install valgrind clang-14)" >&2
    exit 2
  }
done
[[ -f $REC ]] || {
  echo "instructions: $REC not found (cmake --build $BUILD --target tasklens_recorder)" >&2
  exit 2
}
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

echo "tasklens recorder instructions per task: $(git -C "$SRC" describe --always --dirty 2>/dev/null || echo unknown), build $BUILD"
echo "  callgrind counts the instructions inside the recorder's callbacks (recorder::...::on_*)"
printf "%-9s %3s %9s | %12s %10s %s\n" shape thr tasks 'callback Ir' 'Ir/task' 'target 200'
TARGET=200  # issue 36: at most 200 instructions per task in the program's threads
for s in $SHAPES; do
  [[ -n ${ARGS[$s]+x} ]] || {
    echo "instructions: unknown shape '$s'" >&2
    exit 2
  }
  bin=$WORK/$s
  # (The recorder refers to oneTBB's entry points it forwards to; an OpenMP program never calls
  # them, and the loader resolves them only when they are: allowed undefined here.)
  clang-14 -std=gnu11 -O3 -fopenmp -o "$bin" "$SRC/examples/suite/$s.c" -lm \
    -Wl,--no-as-needed "$REC" "$RT" -Wl,--allow-shlib-undefined \
    -Wl,-rpath,"$(dirname "$RT")":"$BUILD" -Wl,--disable-new-dtags
  read -r -a args <<<"${ARGS[$s]}"
  for T in $THREADS; do
    out=$WORK/cg.$s.$T
    OMP_NUM_THREADS=$T TASKLENS_OUTPUT=$WORK/$s.$T.tlens TASKLENS_COMPRESSION=none \
      valgrind --tool=callgrind --callgrind-out-file="$out" --toggle-collect='*recorder::*::on_*' \
      "$bin" "${args[@]}" >"$WORK/stdout" 2>"$WORK/stderr" || {
      echo "instructions: $s failed under valgrind:" >&2
      cat "$WORK/stderr" >&2
      exit 1
    }
    tasks=$(sed -n 's/.* tasks=\([0-9]*\).*/\1/p' "$WORK/stdout" | head -1)
    [[ -s $WORK/$s.$T.tlens && -n $tasks && $tasks -gt 0 ]] || {
      echo "instructions: $s wrote no trace or no task count (is the recorder built?)" >&2
      exit 1
    }
    ir=$(callgrind_annotate "$out" 2>/dev/null | awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
    per_task=$(calc "printf \"%.1f\", $ir / $tasks")
    printf "%-9s %3s %9s | %12s %10s %s\n" "$s" "$T" "$tasks" "$ir" "$per_task" \
      "$(passmiss "$per_task" "<=" "$TARGET")"
  done
done

# The same shapes' wall-clock cost beside the OMPT limit (an empty tool registering the same
# callbacks), measured in the same minute: bench/overhead.sh on 1 thread at its bench sizes,
# 3 rounds. Instructions say what the callbacks execute; this says what the program's thread
# pays for them, clock reads and caches included. TASKLENS_INSTRUCTIONS_WALL=0 skips it.
if [[ ${TASKLENS_INSTRUCTIONS_WALL:-1} != 0 ]]; then
  echo
  echo "wall clock on 1 thread beside the OMPT limit (bench/overhead.sh, 3 rounds):"
  TASKLENS_OVERHEAD_THREADS=1 TASKLENS_OVERHEAD_ROUNDS=${TASKLENS_OVERHEAD_ROUNDS:-3} \
    TASKLENS_OVERHEAD_SHAPES="$SHAPES" bash "$SRC/bench/overhead.sh" "$BUILD" |
    sed -n '/^shape /,/^targets:/p'
fi
