#!/usr/bin/env bash
# bench/scale.sh [BUILD_DIR=./build]: recordings of many tasks, recorded and read back by every
# reader command (docs/design-scale.md; the proof of "a billion tasks").
#
# Six generators, each sized to about the task counts asked for (TASKLENS_SCALE_SIZES, of 10M,
# 100M and 1B; default "10M"), recorded on 2 threads (clang-14, tied, no cut-off):
#   fib       the suite's fib, a task per call          (fib 33: 11.4 M tasks; 38: 126 M; 43: 1.40 G)
#   uts       an unbalanced tree search (binomial)      (uts 11 0: 7.0 M; 13 0: 113 M; 15 0: 1.8 G)
#   nqueens   an irregular search, a task per square    (nqueens 12: 10.1 M; 13: about 57 M; 14:
#             about 330 M: the next size would be 2 G)
#   sparselu  tiled LU, blocks of 2 x 2, its phases joined by taskwaits (BOTS sparselu_single;
#             sparselu 500 2: about 10 M; 1080 2: about 100 M; 2360 2: 1.10 G)
#   sparselu_dep  the same LU ordered by `depend` clauses on its blocks (KaStORS sparselu_task_dep,
#             `suite_sparselu 500 2 2`, the same sizes): the dependence-heavy tiled program. LLVM's
#             runtime creates such tasks slowly on 2 threads, so its program runs far longer than
#             the others at each size (docs/benchmarks.md).
#   tbb_fib   oneTBB's task_group recursion, 1 unit of work per leaf (tbb_fib 34 1: 9.2 M; 39 1:
#             102 M; 44 1: 1.13 G)
# Then runs report, stream (`report --stream`: the recording read in passes, the robust span's
# census beside the profile, a second pass when it clips strands), stream-kept (the same once a
# reading before kept its clipping: one pass), stream-raw (`report --stream
# --raw-span`: one pass), whatif (the first
# site `whatif --list` shows), whatif-stream (the same, `whatif --stream`), advise,
# advise-stream (`advise --stream`: one pass per step), tasks, tasks-stream (`tasks --stream`),
# sched, sched-stream (`sched --stream`), predict, predict-stream (`predict --stream`: the
# simulation on a graph of at most 4 M nodes, collapsed above), diff (the recording against itself), diff-stream (the same, `diff --stream`: each
# recording once; no unit differs, so no third pass), export (Perfetto JSON, to /dev/null),
# export-stream (`export --stream --window 500ms:510ms`: 10 ms of the timeline in one pass) and
# view (to a scratch file), view-stream (`view --stream`: the page from passes) on each, and prints per command its wall time, tasks per second and peak
# resident bytes per task (GNU time's maximum RSS), or how it failed (a reader that refuses a
# recording too large for the memory prints one line and exits 6: shown as "refused").
# Recording: the program's wall time recorded, trace bytes per task.
#
# Knobs: TASKLENS_SCALE_SIZES ("10M"), TASKLENS_SCALE_SHAPES ("fib uts nqueens sparselu
# sparselu_dep tbb_fib"), TASKLENS_SCALE_COMMANDS ("report stream stream-raw whatif whatif-stream advise advise-stream
# tasks tasks-stream sched sched-stream predict predict-stream diff diff-stream export
# export-stream view view-stream"), TASKLENS_SCALE_DIR (where the
# traces go; default a scratch directory removed at exit: a 1B recording takes several GB).
set -euo pipefail
export LC_ALL=C

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bench/lib.sh
source "$SRC/bench/lib.sh"
bench_build_dir scale "${1:-./build}"
bench_scratch scale
bench_stop_children_on_signal  # (a reader of a billion tasks runs long: stopping it stops it)
[[ -x /usr/bin/time ]] || {
  echo "scale: /usr/bin/time not found (apt-get install time)" >&2
  exit 2
}
DIR=${TASKLENS_SCALE_DIR:-$WORK}
mkdir -p "$DIR"
SIZES=${TASKLENS_SCALE_SIZES:-10M}
SHAPES=${TASKLENS_SCALE_SHAPES:-fib uts nqueens sparselu sparselu_dep tbb_fib}
COMMANDS=${TASKLENS_SCALE_COMMANDS:-report stream stream-kept stream-raw whatif whatif-stream advise advise-stream tasks tasks-stream sched sched-stream predict predict-stream diff diff-stream export export-stream view view-stream}

# shape_cmd SHAPE SIZE: sets CMD to the generator's command line.
shape_cmd() {
  local -A fib=([10M]=33 [100M]=38 [1B]=43) uts=([10M]="11 0" [100M]="13 0" [1B]="15 0")
  local -A nq=([10M]=12 [100M]=13 [1B]=14) lu=([10M]="500 2" [100M]="1080 2" [1B]="2360 2")
  local -A tbb=([10M]="34 1" [100M]="39 1" [1B]="44 1")
  case $1 in
    fib) read -r -a CMD <<<"$EXAMPLES/suite_fib_clang ${fib[$2]}" ;;
    uts) read -r -a CMD <<<"$EXAMPLES/suite_uts_clang ${uts[$2]}" ;;
    nqueens) read -r -a CMD <<<"$EXAMPLES/suite_nqueens_clang ${nq[$2]}" ;;
    sparselu) read -r -a CMD <<<"$EXAMPLES/suite_sparselu_clang ${lu[$2]}" ;;
    sparselu_dep) read -r -a CMD <<<"$EXAMPLES/suite_sparselu_clang ${lu[$2]} 2" ;;
    tbb_fib) read -r -a CMD <<<"$EXAMPLES/tbb_fib ${tbb[$2]}" ;;
    *)
      echo "scale: unknown shape '$1'" >&2
      exit 2
      ;;
  esac
}

# measure NAME TASKS cmd...: runs cmd under GNU time and prints one row.
measure() {
  local name=$1 tasks=$2 rc=0
  shift 2
  killable /usr/bin/time -f "%e %M" -o "$WORK/time" "$@" >"$WORK/out" 2>"$WORK/err" || rc=$?
  # (GNU time writes a line about a failed command's status first.)
  read -r secs kib < <(tail -n 1 "$WORK/time") || true
  local verdict=ok
  if ((rc == 6)); then
    verdict="refused: $(grep -m1 'tasklens' "$WORK/err" | cut -c1-110)"
  elif ((rc == 5)) && grep -q 'in one pass yet' "$WORK/err"; then
    verdict="not in one pass yet: $(sed -n 's/.*the recording has \(.*\), which.*/\1/p' "$WORK/err")"
  elif ((rc != 0)); then
    verdict="FAILED (exit $rc): $(tail -n 1 "$WORK/err" | cut -c1-100)"
  fi
  local rate=-
  [[ $verdict != ok ]] || rate=$(calc "printf \"%.3g\", $tasks / (${secs:-0} > 0 ? ${secs:-0} : 1e-9)")
  printf '  %-13s %9.1f s %12s tasks/s %10s B/task  %s\n' "$name" "${secs:-0}" "$rate" \
    "$(calc "printf \"%.1f\", ${kib:-0} * 1024 / $tasks")" "$verdict"
}

# Every reading decides the robust span's clipping itself (a user's first reading of a
# recording), but stream-kept, which reads through the one its reading before kept, in a cache
# of the scratch directory's.
export TASKLENS_CACHE=off TASKLENS_CACHE_DIR=$WORK/cache
echo "scale: $(git -C "$SRC" describe --always --dirty 2>/dev/null || echo unknown), build $BUILD"
echo "  $(nproc) CPUs, $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo)"
for size in $SIZES; do
  for shape in $SHAPES; do
    shape_cmd "$shape" "$size"
    trace=$DIR/$shape.$size.tlens
    rm -f "$trace" "$trace.old"
    killable /usr/bin/time -f "%e %M" -o "$WORK/time" env OMP_NUM_THREADS=2 "$TL" record -o "$trace" \
      -- "${CMD[@]}" >"$WORK/out" 2>"$WORK/err" || {
      echo "scale: recording $shape $size failed:" >&2
      tail -n 5 "$WORK/err" >&2
      exit 1
    }
    read -r secs kib <"$WORK/time"
    tasks=$(sed -n 's/.*, \([0-9]*\) tasks, .*/\1/p' "$WORK/err" | tail -n 1)
    [[ -n $tasks && $tasks -gt 0 ]] || tasks=1
    bytes=$(stat -c %s "$trace")
    printf '%s %s: %s tasks; recorded in %.1f s, %.2f trace bytes per task (%s)\n' "$shape" \
      "$size" "$tasks" "$secs" "$(calc "print $bytes / $tasks")" "${CMD[*]##*/}"
    for command in $COMMANDS; do
      case $command in
        whatif | whatif-stream)
          [[ $command == whatif ]] && one_pass=() || one_pass=(--stream)
          site=$("$TL" whatif "${one_pass[@]}" --list "$trace" 2>/dev/null | awk '/^sites/ { s = 1; next } s && NF { print $1; exit }')
          if [[ -z $site ]]; then
            echo "  $command   (no site listed: whatif --list could not read the recording)"
            continue
          fi
          measure "$command" "$tasks" "$TL" whatif "${one_pass[@]}" --site "$site" "$trace"
          ;;
        stream) measure stream "$tasks" "$TL" report --stream "$trace" ;;
        stream-kept)  # the robust span's clipping kept by the reading before (docs/robust-span.md)
          TASKLENS_CACHE='' "$TL" report --stream "$trace" >/dev/null 2>&1 || true
          TASKLENS_CACHE='' measure stream-kept "$tasks" "$TL" report --stream "$trace" ;;
        stream-raw) measure stream-raw "$tasks" "$TL" report --stream --raw-span "$trace" ;;
        tasks-stream) measure tasks-stream "$tasks" "$TL" tasks --stream "$trace" ;;
        advise-stream) measure advise-stream "$tasks" "$TL" advise --stream "$trace" ;;
        sched-stream) measure sched-stream "$tasks" "$TL" sched --stream "$trace" ;;
        predict-stream) measure predict-stream "$tasks" "$TL" predict --stream "$trace" ;;
        diff) measure diff "$tasks" "$TL" diff "$trace" "$trace" ;;
        diff-stream) measure diff-stream "$tasks" "$TL" diff --stream "$trace" "$trace" ;;
        export) measure export "$tasks" "$TL" export -o /dev/null "$trace" ;;
        export-stream)
          measure export-stream "$tasks" "$TL" export --stream --window 500ms:510ms -o /dev/null "$trace" ;;
        view) measure view "$tasks" "$TL" view -o "$WORK/view.html" "$trace" ;;
        view-stream) measure view-stream "$tasks" "$TL" view --stream -o "$WORK/view.html" "$trace" ;;
        *) measure "$command" "$tasks" "$TL" "$command" "$trace" ;;
      esac
    done
    [[ -n ${TASKLENS_SCALE_DIR:-} ]] || rm -f "$trace"
  done
done
