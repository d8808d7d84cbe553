#!/usr/bin/env bash
# bench/event_path.sh [BUILD_DIR=./build]: can the event path keep up with 128 busy threads?
# (the goal: no single serial stage on the event path)
#
# Runs BUILD_DIR/bench/event_path (bench/event_path.cpp) for N = 1, 2, 4, ..., 128 producer
# threads, each writing a fine-grained program's events into the recorder's real buffers as fast
# as it can for EVENT_PATH_SECONDS (default 4); the writer threads compress them and write them to
# a file in /dev/shm. Oversubscribed on a small machine, which is fine: what it measures is the
# event bytes (as encoded, before compression) one writer CPU second absorbs (per_core_mb_s:
# the producers write raw events, which the writers encode), and from that the number of busy
# threads whose events the writers of a 128-core node could take: with the writers the recorder
# starts there (one per 8 CPUs: 16 cores), and with the helpers it adds while those fall behind
# (up to one writer per 4 CPUs: 32 cores; WriterConfig::max_writers): cores x per_core / 50 MB/s
# (one busy fine-grained thread makes ~50 MB/s of events). PASS when the latter is >= 128 for
# the slowest N. Also prints the producers' stalls and the helpers each run started.
#
# Knobs (environment): EVENT_PATH_THREADS (the list of N), EVENT_PATH_SECONDS,
# EVENT_PATH_WRITERS (0: the recorder's default for this machine), EVENT_PATH_MAX_WRITERS (0: the
# recorder's default, one per 4 CPUs; on a machine of 2-7 CPUs that is no helper, so set it to
# see helpers start here), EVENT_PATH_COMPRESSION
# (lz4 | zstd | none), EVENT_PATH_BUFFER_MB, EVENT_PATH_POLICY (batch, idle or normal: how the writers are scheduled),
# EVENT_PATH_SAMPLE (a .tlens whose longest event stream is replayed; default: when
# BUILD_DIR/examples/fib_clang exists, a trace of it recorded here, else synthesized events of
# the same kinds and fields), EVENT_PATH_CODECS=1 (then also BUILD_DIR/bench/event_codecs on the
# sample: raw MB/s per core and compressed bytes per task of LZ4 accelerations and zstd levels).
set -euo pipefail
build=${1:-build}
bin=$build/bench/event_path
if [[ ! -x $bin ]]; then
  echo "event_path: $bin not found (cmake --build $build --target event_path_bench)" >&2
  exit 1
fi
threads=${EVENT_PATH_THREADS:-"1 2 4 8 16 32 64 128"}
export EVENT_PATH_SECONDS=${EVENT_PATH_SECONDS:-4}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [[ -z ${EVENT_PATH_SAMPLE:-} && -x $build/examples/fib_clang && -x $build/tasklens ]]; then
  # A real stream: fib on 2 threads, ~1M tasks.
  if OMP_NUM_THREADS=2 "$build/tasklens" record -o "$work/sample.tlens" -- \
    "$build/examples/fib_clang" 27 0 >/dev/null 2>&1; then
    export EVENT_PATH_SAMPLE=$work/sample.tlens
  fi
fi
echo "events: ${EVENT_PATH_SAMPLE:-synthesized (fib-like mix)}; ${EVENT_PATH_SECONDS}s per run;" \
  "$(nproc) CPUs here"

min_core=""
for n in $threads; do
  line=$("$bin" "$n")
  echo "$line"
  core=$(sed -n 's/.*per_core_mb_s=\([0-9.]*\).*/\1/p' <<<"$line")
  if [[ -z $min_core ]] || awk "BEGIN { exit !($core < $min_core) }"; then min_core=$core; fi
done

awk -v core="$min_core" 'BEGIN {
  per_thread = 50   # MB/s of events (encoded, before compression) per busy fine-grained thread
  # A 128-core node: 16 writers start with the recording (1/8), up to 32 with helpers (1/4).
  base = 16 * core / per_thread; most = 32 * core / per_thread
  printf "slowest writer core: %.0f MB/s of events (encoded) -> one writer core keeps up with %.1f busy threads\n", core, core / per_thread
  printf "128-core node, the 16 writers started with the recording: saturation at %.0f busy threads\n", base
  printf "128-core node, with helpers up to 32 writers: saturation at %.0f busy threads (target >= 128): %s\n", most, (most >= 128 ? "PASS" : "MISS")
}'

if [[ ${EVENT_PATH_CODECS:-0} == 1 && -n ${EVENT_PATH_SAMPLE:-} && -x $build/bench/event_codecs ]]; then
  "$build/bench/event_codecs" "$EVENT_PATH_SAMPLE"
fi
