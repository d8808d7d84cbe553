#!/usr/bin/env bash
# bench/switches.sh [BUILD_DIR=./build]: does the recorder take the program's CPU, or make its
# threads wait, without saying so?
#
# Records a fine-grained 2-thread program N times (the suite's n-queens, a task per candidate
# square) under `perf record -e sched:sched_switch --call-graph dwarf -a` (root, or perf_event_paranoid <= -1),
# and reads from the kernel's own switch records, per recording:
#   - yield_ms: time the writer ran on a CPU a program thread gave up in sched_yield (the
#     runtime's idle spinning, waiting for work): idle time the writer used, not work;
#   - writer_preempt (writer_ms): time the program's threads spent switched out while runnable
#     otherwise with one of tasklens's threads (tasklens-writer) running next on their CPU,
#     until they ran again;
#   - recorder_blocked (blocked_ms): time they spent switched out while NOT runnable inside the
#     recorder (a frame of libtasklens_recorder on the switch's call chain): waits for the
#     writer; its one-time set-up (before main, a thread's first event: loading the unwinder,
#     opening the switch ring) is startup_ms, no strand's time;
#   - lock_waits: switches out inside the recorder in a mutex wait (__lll_lock_wait or
#     pthread_mutex_lock on the call chain): a program thread waiting on a lock (target: 0);
# and beside them what the report says: the recorder's own measure of its waits
# (recorder_stalls_time), the part of them inside strands it took out of the work
# (recorder_stalls_removed), and preemption_removed. Targets: recorder_blocked is 0 (under
# 0.5 ms) or within 5% of recorder_stalls_time; writer_preempt is 0 or covered by
# preemption_removed; lock_waits is 0. PASS/MISS per recording; a MISS does not fail the script.
#
# Knobs: TASKLENS_SWITCHES_RUNS (10), TASKLENS_SWITCHES_PROG (suite_nqueens_clang),
# TASKLENS_SWITCHES_ARGS ("11"), TASKLENS_SWITCHES_THREADS (2). Extra environment for the
# recording (e.g. TASKLENS_WRITER_POLICY=normal, TASKLENS_BUFFER_MB=4) passes through.
set -euo pipefail
export LC_ALL=C
SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
TL=$BUILD/tasklens
RUNS=${TASKLENS_SWITCHES_RUNS:-10}
PROG=$BUILD/examples/${TASKLENS_SWITCHES_PROG:-suite_nqueens_clang}
read -r -a ARGS <<<"${TASKLENS_SWITCHES_ARGS:-11}"
THREADS=${TASKLENS_SWITCHES_THREADS:-2}
command -v perf >/dev/null || { echo "switches: perf not found (apt-get install linux-perf)" >&2; exit 2; }
[[ -x $TL && -x $PROG ]] || { echo "switches: build tasklens and $PROG first" >&2; exit 2; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

printf '%-4s %10s %10s %10s %10s %10s | %10s %10s %10s | %6s %6s %s\n' run yield_ms startup_ms writer_ms blocked_ms lockwaits \
  stalls_ms removed_ms preempt_ms stalls lost verdict
fails=0
for ((i = 1; i <= RUNS; i++)); do
  trace=$WORK/run$i.tlens
  OMP_NUM_THREADS=$THREADS perf record -q -e sched:sched_switch --call-graph dwarf,8192 -a -o "$WORK/perf.data" -- \
    "$TL" record -o "$trace" -- "$PROG" "${ARGS[@]}" >/dev/null 2>"$WORK/record.err" ||
    { cat "$WORK/record.err" >&2; exit 1; }
  perf script -i "$WORK/perf.data" -F pid,tid,comm,cpu,time,event,trace,ip,sym,dso 2>/dev/null >"$WORK/switches.txt"
  "$TL" report "$trace" --format json >"$WORK/report.json"
  line=$(python3 - "$trace" "$WORK/switches.txt" "$WORK/report.json" <<'EOF'
import json, re, struct, sys
trace, switches, report = sys.argv[1:4]
d = open(trace, 'rb').read()
pid = struct.unpack_from('<Q', d, 16)[0]
tids, pos = set(), 64
while pos + 8 <= len(d):
    t, size = struct.unpack_from('<II', d, pos)
    if size < 8: break
    if t == 3: tids.add(struct.unpack_from('<Q', d, pos + 16)[0])  # ThreadInfo's os_tid
    pos += size
head = re.compile(r'^\s*(\S.*?)\s+(\d+)/(\d+)\s+\[(\d+)\]\s+([\d.]+):\s+sched:sched_switch:\s+(.*)$')
events = []  # (time, kind, fields, frames)
cur = None
for line in open(switches, errors='replace'):
    m = head.match(line)
    if m:
        cur = [float(m.group(5)), dict(re.findall(r'(\w+)=(\S+)', m.group(6))), int(m.group(4)), []]
        events.append(cur)
    elif cur is not None and line.strip():
        cur[3].append(line.strip())
out_at, out_why = {}, {}
writer = blocked = yielded = startup = 0.0
lockwaits = 0
for time, f, cpu, frames in events:
    prev, nxt = int(f.get('prev_pid', -1)), int(f.get('next_pid', -1))
    if prev in tids:
        in_rec = any('libtasklens_recorder' in fr for fr in frames)
        runnable = f.get('prev_state', '').startswith('R')
        if runnable and f.get('next_comm') == 'tasklens-writer':
            # A thread that yields (sched_yield: the runtime's idle spinning, waiting for work)
            # gives the writer idle time; any other switch takes it from the program's work.
            out_at[prev] = time
            out_why[prev] = 'yield' if any('sched_yield' in fr for fr in frames) else 'writer'
        elif not runnable and in_rec:
            # The recorder's one-time set-up (before main, or a thread's first event) is no
            # strand's time: counted apart.
            startup = any(s in fr for fr in frames for s in
                          ('threads_prepare', 'start_trace', 'thread_init', 'buffer_register',
                           'calibrate_probe', 'tbb_prepare'))
            out_at[prev], out_why[prev] = time, 'startup' if startup else 'recorder'
            if any('__lll_lock_wait' in fr or 'pthread_mutex_lock' in fr for fr in frames):
                lockwaits += 1
        else:
            out_at.pop(prev, None)
    if nxt in tids and nxt in out_at:
        dt = time - out_at.pop(nxt)
        why = out_why.pop(nxt)
        if why == 'writer': writer += dt
        elif why == 'yield': yielded += dt
        elif why == 'startup': startup += dt
        else: blocked += dt
r = json.load(open(report))
hz = r['ticks_per_second'] or 1
stalls_ms = r.get('recorder_stalls_time', 0) / hz * 1e3
removed_ms = r.get('recorder_stalls_removed', 0) / hz * 1e3
preempt_ms = r.get('preemption_removed', 0) / hz * 1e3
# Blocked inside the recorder: the recorder measured every such wait itself (its stalls, in or
# out of strands; those in strands were removed). Switched out for the writer: only a strand's
# share is work, and it is inside preemption_removed.
blocked_ok = blocked * 1e3 < 0.5 or abs(blocked * 1e3 - stalls_ms) <= 0.05 * blocked * 1e3
writer_ok = writer * 1e3 < 0.5 or preempt_ms >= 0.95 * writer * 1e3
ok = lockwaits == 0 and blocked_ok and writer_ok
print(f"{yielded*1e3:10.3f} {startup*1e3:10.3f} {writer*1e3:10.3f} {blocked*1e3:10.3f} {lockwaits:10d} | {stalls_ms:10.3f} {removed_ms:10.3f} {preempt_ms:10.3f} | "
      f"{r.get('recorder_stalls', 0):6d} {r.get('switches_lost', 0):6d} {'PASS' if ok else 'MISS'}")
EOF
  )
  printf '%-4s %s\n' "$i" "$line"
  [[ $line == *MISS* ]] && fails=$((fails + 1))
done
echo "switches: $((RUNS - fails)) of $RUNS recordings PASS"
