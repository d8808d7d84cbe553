#!/usr/bin/env bash
# The test suite, every stage, then one summary (each stage: passed, failed, inconclusive,
# skipped, time); the exit status is non-zero when any stage failed. Needs scripts/setup.sh first.
#
#   build      the release build (build/), incremental
#   unit       the unit tests: exact, on synthetic inputs (tests/unit)
#   e2e        the end-to-end tests: real programs recorded (tests/e2e), one at a time; their
#              timing checks follow tests/support/e2e_timing.hpp, whose "inconclusive"
#              judgements (every sample disturbed, by the recordings' own account) are counted
#              apart
#   asan       the unit tests built with clang's ASan+UBSan (build-fuzz/: the same build gives
#              the fuzzer, so the sources are compiled once for both)
#   tsan       the recorder's concurrent buffers and region names, the model builder's threads,
#              the one-pass sink's and the profile's, built with TSan (build-tsan/)
#   fuzz       45 s of libFuzzer over everything that reads a trace (bench/fuzz.sh runs it for
#              hours)
#
# A stage that fails does not stop the others (but a stage whose build failed has nothing to
# run). TASKLENS_TEST_STAGES="unit e2e" runs only the stages named.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
jobs="$(nproc)"
stages=${TASKLENS_TEST_STAGES:-"build unit e2e asan tsan fuzz"}
results=$root/build/test-results
mkdir -p "$results"
rm -f "$results"/*.notes "$results"/*.xml
summary=()
failed=0

wanted() { [[ " $stages " == *" $1 "* ]]; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.0f s", b - a }'; }

# record STAGE STATUS COUNTS START: one summary line ("passed failed inconclusive skipped").
record() {
  local stage=$1 status=$2 counts=$3 start=$4
  read -r p f i s <<<"$counts"
  if [[ $counts == "-" ]]; then  # a build, or the fuzzer: no test counts
    summary+=("$(printf '%-10s %-7s %59s' "$stage" "$status" "$(elapsed "$start")")")
  else
    summary+=("$(printf '%-10s %-7s %5s passed %3s failed %3s inconclusive %3s skipped %6s' \
      "$stage" "$status" "$p" "$f" "$i" "$s" "$(elapsed "$start")")")
  fi
  [[ $status == ok ]] || failed=1
}

# ctest_stage STAGE BUILD_DIR CTEST_ARGS...: runs ctest with its JUnit file, counts the results.
ctest_stage() {
  local stage=$1 dir=$2 start
  shift 2
  start=$(now)
  echo "== $stage"
  ctest --test-dir "$dir" --output-on-failure --output-junit "$results/$stage.xml" "$@"
  local rc=$?
  local counts="0 0 0 0" notes=""
  if [[ -s $results/$stage.xml ]]; then
    local out
    out=$(python3 scripts/ctest_counts.py "$results/$stage.xml")
    counts=$(head -n1 <<<"$out")
    notes=$(tail -n +2 <<<"$out")
  fi
  [[ -n $notes ]] && printf '%s\n' "$notes" >"$results/$stage.notes"
  record "$stage" "$([[ $rc == 0 ]] && echo ok || echo FAILED)" "$counts" "$start"
}

# build_stage STAGE COMMAND...: a build; its time goes in the summary.
build_stage() {
  local stage=$1 start
  shift
  start=$(now)
  echo "== $stage"
  if "$@"; then
    record "$stage" ok - "$start"
    return 0
  fi
  record "$stage" FAILED - "$start"
  return 1
}

if wanted build || wanted unit || wanted e2e; then
  if build_stage build cmake --build build -j"$jobs"; then
    # The end-to-end tests time programs: let the build's dirty pages reach the disk first, so
    # that writeback does not run beside them.
    sync
    wanted unit && ctest_stage unit build -j"$jobs" -LE e2e
    # One at a time: each records programs on the 2 cores (ctest's RUN_SERIAL keeps them apart).
    wanted e2e && ctest_stage e2e build -L e2e
  fi
fi

# The sanitizer builds optimize less and keep line tables only: they compile the sources again,
# and at -O2 -g that was the suite's longest stage; the checks and the stacks' lines are the same.
sanitizer_flags="-O1 -g1 -DNDEBUG"

# Sanitizer builds: unit tests only (a sanitized recorder cannot be preloaded into programs that
# are not built with the same sanitizer runtime), so no examples, benches or end-to-end tests.
# ASan+UBSan and the fuzzer share one clang build (TASKLENS_SANITIZE=fuzzer instruments for both;
# only the fuzzer links libFuzzer).
if wanted asan || wanted fuzz; then
  CC=clang-14 CXX=clang++-14 cmake -S . -B build-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="$sanitizer_flags" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$sanitizer_flags" \
    -DTASKLENS_SANITIZE=fuzzer -DTASKLENS_BUILD_TESTS=ON -DTASKLENS_BUILD_E2E=OFF \
    -DTASKLENS_BUILD_EXAMPLES=OFF -DTASKLENS_BUILD_BENCH=OFF >/dev/null
  if build_stage asan-build cmake --build build-fuzz -j"$jobs"; then
    wanted asan && ctest_stage asan build-fuzz -j"$jobs"
  else
    stages=${stages/fuzz/}  # nothing to fuzz with
  fi
fi

if wanted tsan; then
  cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTASKLENS_SANITIZE=thread \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="$sanitizer_flags" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$sanitizer_flags" \
    -DTASKLENS_BUILD_EXAMPLES=OFF -DTASKLENS_BUILD_BENCH=OFF -DTASKLENS_BUILD_E2E=OFF >/dev/null
  # The recorder's threads, and the readers' own: the model builder's event pipe and populating
  # (a large trace, both ways), the one-pass sink's thread (model/sink_thread.hpp) and the
  # profile measuring sites on two threads (random models).
  build_stage tsan-build cmake --build build-tsan -j"$jobs" --target recorder_buffer_test \
    recorder_regions_test model_test analysis_test sink_thread_test &&
    ctest_stage tsan build-tsan -R 'RecorderBuffer|RecorderRegions|Model\.ALargeTrace|ProfileRandomTest|SinkThread'
fi

if wanted fuzz; then
  start=$(now)
  echo "== fuzz"
  if bash bench/fuzz.sh 45 build | tee "$results/fuzz.log"; then
    record fuzz ok - "$start"
  else
    record fuzz FAILED - "$start"
  fi
fi

echo
echo "== summary ($(uname -n), $(nproc) CPUs)"
printf '%s\n' "${summary[@]}"
for f in "$results"/*.notes; do
  [[ -e $f ]] || continue
  echo "-- $(basename "$f" .notes): what did not simply pass"
  cat "$f"
done
rm -f "$results"/*.notes
exit $failed
