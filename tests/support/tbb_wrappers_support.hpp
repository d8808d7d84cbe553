// What the tests of include/tasklens/tbb.h share (tbb_wrappers_test.cpp: the wrappers give
// oneTBB's results; tbb_wrappers_report_test.cpp: they tell the recorder the right sites and
// chunks): the recorder's side defined in the test program itself, and the bodies the tests run.
// Each of the two test programs includes it once.
//
// The test binaries define the tasklens_tbb_* functions themselves (as the recorder does), so the
// wrappers take their reporting path everywhere. Built by hand with
// -DTASKLENS_TBB_TEST_NO_HOOKS, they define none of them: the wrappers then take the path of a
// program run without the recorder (null weak references), and the reporting tests are skipped.
#pragma once
#include <gtest/gtest.h>
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/parallel_invoke.h>
#include <oneapi/tbb/parallel_reduce.h>
#include <oneapi/tbb/parallel_sort.h>
#include <oneapi/tbb/task_group.h>
#include <tasklens/tbb.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <functional>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace tl = tasklens::tbb;

// ---- The recorder's side: counts and the last site reported -----------------------------------

struct SiteCall {
  const char* file;
  unsigned line;
  const char* function;
  unsigned kind;
};

struct Hooks {
  std::mutex mutex;
  std::vector<SiteCall> sites;  // every tasklens_tbb_site call, in order
  std::atomic<long> clears{0};
  std::atomic<long> chunk_begins{0};
  std::atomic<long> chunk_ends{0};
  std::atomic<long> errors{0};  // a clear without a site, an end without a begin, on a thread

  void reset() {
    std::lock_guard<std::mutex> lock(mutex);
    sites.clear();
    clears = 0;
    chunk_begins = 0;
    chunk_ends = 0;
    errors = 0;
  }
  std::vector<SiteCall> site_calls() {
    std::lock_guard<std::mutex> lock(mutex);
    return sites;
  }
};

Hooks& hooks() {
  static Hooks h;
  return h;
}

thread_local int t_site_depth = 0;
thread_local int t_chunk_depth = 0;

[[maybe_unused]] bool hooks_defined() {
#ifndef TASKLENS_TBB_TEST_NO_HOOKS
  return true;
#else
  return false;
#endif
}

}  // namespace

#ifndef TASKLENS_TBB_TEST_NO_HOOKS
// Definitions in the program itself (weak, as the header declared them so, but defined): the
// wrappers see non-null addresses, as with the recorder preloaded.
extern "C" {
void tasklens_tbb_site(const char* file, unsigned line, const char* function,
                       unsigned kind) noexcept {
  ++t_site_depth;
  std::lock_guard<std::mutex> lock(hooks().mutex);
  hooks().sites.push_back(SiteCall{file, line, function, kind});
}
void tasklens_tbb_site_clear(void) noexcept {
  if (--t_site_depth < 0) ++hooks().errors;
  ++hooks().clears;
}
void tasklens_tbb_chunk_begin(void) noexcept {
  ++t_chunk_depth;
  ++hooks().chunk_begins;
}
void tasklens_tbb_chunk_end(void) noexcept {
  if (--t_chunk_depth < 0) ++hooks().errors;
  ++hooks().chunk_ends;
}
}
#endif

namespace {

using ::tbb::blocked_range;

// Writes out[i] = 3 i + 1 for the indices of its range.
struct FillBody {
  std::vector<long>* out;
  void operator()(const blocked_range<long>& r) const {
    for (long i = r.begin(); i != r.end(); ++i) (*out)[i] = 3 * i + 1;
  }
};

std::string serial_concat(int n) {
  std::string s;
  for (int i = 0; i < n; i++) s += std::to_string(i) + ",";
  return s;
}

// parallel_reduce's body form with string concatenation: associative, not commutative.
struct ConcatBody {
  std::string s;
  std::atomic<int>* calls = nullptr;
  std::atomic<int>* splits = nullptr;
  ConcatBody(std::atomic<int>* c, std::atomic<int>* sp) : calls(c), splits(sp) {}
  ConcatBody(ConcatBody& other, tl::split) : calls(other.calls), splits(other.splits) { ++*splits; }
  void operator()(const blocked_range<int>& r) {
    ++*calls;
    for (int i = r.begin(); i != r.end(); ++i) s += std::to_string(i) + ",";
  }
  void join(ConcatBody& rhs) { s += rhs.s; }
};

std::string concat_range(const blocked_range<int>& r, const std::string& init) {
  std::string s = init;
  for (int i = r.begin(); i != r.end(); ++i) s += std::to_string(i) + ",";
  return s;
}

std::vector<unsigned> random_keys(size_t n) {
  std::vector<unsigned> v(n);
  unsigned x = 12345;
  for (auto& k : v) {
    x = x * 1103515245u + 12345u;
    k = x >> 8;
  }
  return v;
}

}  // namespace
