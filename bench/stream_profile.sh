#!/usr/bin/env bash
# bench/stream_profile.sh [BUILD_DIR=./build]: the one-pass profile (docs/design-scale.md, step 1)
# on recordings of the suite's shapes: records each once on 2 threads (clang-14, no cut-off;
# oneTBB's fib with the examples' own), then runs bench/stream_profile on the traces, which
# builds each model and prints, beside compute_profile on it, whether the one-pass profile is
# the same (it must be), both speeds in strands per second (the better of three) and the most
# strands the pass held at once (its memory follows those; the model holds every strand).
#
# Knobs (environment): TASKLENS_STREAM_SHAPES ("fib nqueens health uts sparselu tbb_fib") and
# each suite shape's arguments as bench/lib.sh's suite_args (TASKLENS_STREAM_FIB_ARGS ...).
set -euo pipefail
export LC_ALL=C

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$SRC/bench/lib.sh"
bench_build_dir stream_profile "${1:-./build}"
bench_build stream_profile stream_profile_bench
bench_scratch stream_profile

SHAPES=${TASKLENS_STREAM_SHAPES:-fib nqueens health uts sparselu tbb_fib}
traces=()
for shape in $SHAPES; do
  case $shape in
    sparselu) cmd=("$EXAMPLES/suite_sparselu_clang" 40 20) ;;
    tbb_fib) cmd=("$EXAMPLES/tbb_fib" 25 50) ;;
    *)
      read -r -a args <<<"$(suite_args TASKLENS_STREAM "$shape")"
      cmd=("$EXAMPLES/suite_${shape}_clang" "${args[@]}")
      ;;
  esac
  timed "$WORK/rec.out" env OMP_NUM_THREADS=2 "$TL" record -o "$WORK/$shape.tlens" -- "${cmd[@]}"
  traces+=("$WORK/$shape.tlens")
done
"$OUT/stream_profile" "${traces[@]}"
