#!/usr/bin/env bash
# bench/view.sh [build-dir]: the goal for `tasklens view`: the page of a 1-million-task trace
# opens in a browser in under 3 seconds. Records fib(28) with a task per call (1.03M tasks, the
# bench's fib_bench), writes its page, opens it 3 times in headless Chromium
# (tests/browser/drive_view.py: Debian's chromium and chromium-driver) and prints the median time
# from navigation start until every view is drawn, with the page's size and the time `view` took
# to write it. Needs scripts/setup.sh's packages. Prints PASS/MISS; fails only when a command does.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${1:-build}
TL=$BUILD/tasklens
N=${TASKLENS_BENCH_VIEW_FIB_N:-28}
REPS=${TASKLENS_BENCH_VIEW_REPS:-3}
TARGET_MS=3000
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

OMP_NUM_THREADS=2 "$TL" record -o "$WORK/fib.tlens" -- "$BUILD/bench/fib_bench" "$N" >/dev/null
t0=$(date +%s%N)
"$TL" view "$WORK/fib.tlens" -o "$WORK/fib.html" >/dev/null
t1=$(date +%s%N)
tasks=$("$TL" report "$WORK/fib.tlens" --format json | /usr/bin/python3 -c \
  'import json,sys; print(json.load(sys.stdin)["tasks"])')
bytes=$(stat -c %s "$WORK/fib.html")

readies=()
for ((i = 0; i < REPS; i++)); do
  out=$(/usr/bin/python3 tests/browser/drive_view.py "$WORK/fib.html" --shots "$WORK" --timing-only)
  readies+=("$(echo "$out" | /usr/bin/python3 -c \
    'import json,sys; t=json.load(sys.stdin)["timing"]; print(int(max(t["ready"], t["load_end"] or 0)))')")
done
median=$(printf '%s\n' "${readies[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
verdict=PASS
((median <= TARGET_MS)) || verdict=MISS
printf 'view: fib(%s), %s tasks: page %s KB written in %.1f s; opened and drawn in %s ms (median of %s: %s)  target <= %s ms %s\n' \
  "$N" "$tasks" "$((bytes / 1024))" "$(awk -v a="$t0" -v b="$t1" 'BEGIN {print (b - a) / 1e9}')" "$median" "$REPS" \
  "${readies[*]}" "$TARGET_MS" "$verdict"
