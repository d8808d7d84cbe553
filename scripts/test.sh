#!/usr/bin/env bash
# The test suite: unit and end-to-end tests of the release build, then the unit tests again
# under ASan+UBSan, and under TSan the recorder's concurrent buffers and region names, the model
# builder's threads and the profile's. Needs scripts/setup.sh first.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs="$(nproc)"
cmake --build build -j"$jobs"
# The end-to-end tests time programs: let the build's dirty pages reach the disk first, so that
# writeback does not run beside them.
sync
ctest --test-dir build --output-on-failure -j"$jobs" -LE e2e
# The end-to-end tests one at a time: each records programs on 2 threads and judges their timing
# (work, span, parallelism against analytic values and against each other); two at once on a
# 2-core machine preempt each other's programs. They take about 2.5 minutes in all.
ctest --test-dir build --output-on-failure -L e2e

# Sanitizer builds: unit tests only (a sanitized recorder cannot be preloaded into programs that
# are not built with the same sanitizer runtime).
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DTASKLENS_SANITIZE=address \
  -DTASKLENS_BUILD_EXAMPLES=OFF -DTASKLENS_BUILD_BENCH=OFF >/dev/null
cmake --build build-asan -j"$jobs"
ctest --test-dir build-asan --output-on-failure -j"$jobs" -LE e2e

cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTASKLENS_SANITIZE=thread \
  -DTASKLENS_BUILD_EXAMPLES=OFF -DTASKLENS_BUILD_BENCH=OFF >/dev/null
# Also the readers' own threads: the model builder's event pipe and populating (a large trace,
# both ways) and the profile measuring sites on two threads (the random models).
cmake --build build-tsan -j"$jobs" --target recorder_buffer_test recorder_regions_test \
  model_test analysis_test
ctest --test-dir build-tsan --output-on-failure \
  -R 'RecorderBuffer|RecorderRegions|Model\.ALargeTrace|ProfileRandomTest'

# The fuzzer (libFuzzer, clang-14, ASan+UBSan) over everything that reads a trace, briefly:
# bench/fuzz.sh runs it for hours.
bash bench/fuzz.sh 45 build
