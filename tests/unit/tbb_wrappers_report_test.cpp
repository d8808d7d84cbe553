// What the oneTBB wrappers of include/tasklens/tbb.h tell the recorder: their caller's file,
// line and function, the right kind, balanced site/clear and chunk begin/end pairs, and one chunk
// per body call. (That they give oneTBB's results: tbb_wrappers_test.cpp.)
#include "tbb_wrappers_support.hpp"

namespace {

// ---- What the recorder is told -----------------------------------------------------------------

class TbbWrappersReport : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!hooks_defined()) GTEST_SKIP() << "built without the tasklens_tbb_* definitions";
    hooks().reset();
  }
  // The sites reported since the last call; every one must have been cleared, and every chunk
  // ended, on its own thread.
  std::vector<SiteCall> take() {
    std::vector<SiteCall> s = hooks().site_calls();
    EXPECT_EQ(hooks().clears.load(), static_cast<long>(s.size()));
    EXPECT_EQ(hooks().chunk_ends.load(), hooks().chunk_begins.load());
    EXPECT_EQ(hooks().errors.load(), 0);
    EXPECT_EQ(t_site_depth, 0);
    EXPECT_EQ(t_chunk_depth, 0);
    chunks_ = hooks().chunk_begins.load();
    hooks().reset();
    return s;
  }
  // Exactly one site, reported from this file at `line`, of `kind`, by `function`.
  void expect_one(unsigned line, unsigned kind, const char* function) {
    std::vector<SiteCall> s = take();
    ASSERT_EQ(s.size(), 1u) << "line " << line;
    EXPECT_STREQ(s[0].file, __FILE__);
    EXPECT_EQ(s[0].line, line);
    EXPECT_EQ(s[0].kind, kind) << "line " << line;
    EXPECT_STREQ(s[0].function, function);
  }
  long chunks_ = 0;
};

TEST_F(TbbWrappersReport, SitesAreTheCallersWithTheirKinds) {
  const char* const fn = __func__;
  tl::task_group g;
  std::atomic<int> x{0};
  unsigned line = __LINE__ + 1;
  g.run([&x] { ++x; });
  expect_one(line, tl::kind_run, fn);
  line = __LINE__ + 1;
  g.wait();
  expect_one(line, tl::kind_wait, fn);
  line = __LINE__ + 1;
  g.run_and_wait([&x] { ++x; });
  expect_one(line, tl::kind_run, fn);
  line = __LINE__ + 1;
  g.cancel();
  expect_one(line, tl::kind_other, fn);
  line = __LINE__ + 1;
  EXPECT_EQ(g.wait(), tl::canceled);
  expect_one(line, tl::kind_wait, fn);
  EXPECT_EQ(x.load(), 2);

  line = __LINE__ + 1;
  tl::parallel_invoke([&x] { ++x; }, [&x] { ++x; });
  expect_one(line, tl::kind_parallel_invoke, fn);
  tl::task_group_context ctx;
  line = __LINE__ + 1;
  tl::parallel_invoke([] {}, [] {}, [] {}, [] {}, [] {}, [] {}, [] {}, [] {}, [] {}, [] {}, ctx);
  expect_one(line, tl::kind_parallel_invoke, fn);

  std::vector<long> out(1000);
  line = __LINE__ + 1;
  tl::parallel_for(blocked_range<long>(0, 1000), FillBody{&out});
  expect_one(line, tl::kind_parallel_for, fn);
  line = __LINE__ + 1;
  tl::parallel_for(0, 10, [](int) {});
  expect_one(line, tl::kind_parallel_for, fn);
  line = __LINE__ + 1;
  tl::parallel_for(
      0, 10, 3, [](int) {}, tl::static_partitioner());
  expect_one(line, tl::kind_parallel_for, fn);

  line = __LINE__ + 1;
  tl::parallel_reduce(blocked_range<int>(0, 100), std::string(), concat_range, std::plus<>());
  expect_one(line, tl::kind_parallel_reduce, fn);
  std::atomic<int> calls{0}, splits{0};
  ConcatBody body(&calls, &splits);
  line = __LINE__ + 1;
  tl::parallel_reduce(blocked_range<int>(0, 100), body, tl::auto_partitioner());
  expect_one(line, tl::kind_parallel_reduce, fn);

  std::vector<unsigned> v = random_keys(5000);
  line = __LINE__ + 1;
  tl::parallel_sort(v.begin(), v.end());
  expect_one(line, tl::kind_parallel_sort, fn);
  line = __LINE__ + 1;
  tl::parallel_sort(v, std::greater<unsigned>());
  expect_one(line, tl::kind_parallel_sort, fn);

  // A call that throws still clears its site.
  line = __LINE__ + 1;
  EXPECT_THROW(tl::parallel_invoke([] {}, [] { throw 1; }), int);
  expect_one(line, tl::kind_parallel_invoke, fn);
}

// Nested calls: a site per call, each cleared on its own thread (the hooks count per thread).
TEST_F(TbbWrappersReport, NestedCallsReportEverySiteBalanced) {
  tl::task_group g;
  for (int t = 0; t < 8; t++) {
    g.run([] { tl::parallel_for(0, 16, [](int) { tl::parallel_invoke([] {}, [] {}); }); });
  }
  g.wait();
  const std::vector<SiteCall> s = take();
  // 8 runs + 1 wait + 8 parallel_for + 128 parallel_invoke.
  EXPECT_EQ(s.size(), 8u + 1u + 8u + 128u);
  size_t invokes = 0;
  for (const SiteCall& c : s) invokes += c.kind == tl::kind_parallel_invoke;
  EXPECT_EQ(invokes, 128u);
}

TEST_F(TbbWrappersReport, ChunksOfParallelFor) {
  for (const long g : {1L, 3L, 16L, 100L}) {
    const long n = 1000;
    std::atomic<long> calls{0};
    tl::parallel_for(
        blocked_range<long>(0, n, g), [&calls](const blocked_range<long>&) { ++calls; },
        tl::simple_partitioner());
    take();
    EXPECT_GE(chunks_, (n + g - 1) / g) << "grainsize " << g;
    EXPECT_EQ(chunks_, calls.load()) << "grainsize " << g;  // one chunk per body call
  }
  // Index forms: a blocked_range of step counts with grainsize 1, so with the simple partitioner
  // one chunk per index.
  std::atomic<int> indices{0};
  tl::parallel_for(
      0, 500, [&indices](int) { ++indices; }, tl::simple_partitioner());
  take();
  EXPECT_EQ(indices.load(), 500);
  EXPECT_EQ(chunks_, 500);
  indices = 0;
  tl::parallel_for(
      10, 1010, 4, [&indices](int) { ++indices; }, tl::simple_partitioner());
  take();
  EXPECT_EQ(indices.load(), 250);
  EXPECT_EQ(chunks_, 250);
  // Other partitioners: at least one chunk, at most one per index.
  indices = 0;
  tl::parallel_for(0, 500, [&indices](int) { ++indices; });
  take();
  EXPECT_GE(chunks_, 1);
  EXPECT_LE(chunks_, 500);
  // An exception ends its chunk.
  EXPECT_THROW(tl::parallel_for(0, 100,
                                [](int i) {
                                  if (i == 50) throw std::runtime_error("50");
                                }),
               std::runtime_error);
  take();
  EXPECT_GE(chunks_, 1);
}

TEST_F(TbbWrappersReport, ChunksOfParallelReduce) {
  const int n = 1000, g = 10;
  std::atomic<int> real_calls{0};
  const std::string s = tl::parallel_reduce(
      blocked_range<int>(0, n, g), std::string(),
      [&real_calls](const blocked_range<int>& r, const std::string& v) {
        ++real_calls;
        return concat_range(r, v);
      },
      std::plus<std::string>(), tl::simple_partitioner());
  EXPECT_EQ(s, serial_concat(n));
  take();
  EXPECT_EQ(chunks_, real_calls.load());
  EXPECT_GE(chunks_, (n + g - 1) / g);

  std::atomic<int> calls{0}, splits{0};
  ConcatBody body(&calls, &splits);
  tl::parallel_reduce(blocked_range<int>(0, n, g), body, tl::simple_partitioner());
  EXPECT_EQ(body.s, serial_concat(n));
  take();
  EXPECT_EQ(chunks_, calls.load());
  EXPECT_GE(chunks_, (n + g - 1) / g);
}

TEST_F(TbbWrappersReport, NoChunksOutsideForAndReduce) {
  tl::task_group g;
  g.run([] {});
  g.wait();
  tl::parallel_invoke([] {}, [] {});
  std::vector<unsigned> v = random_keys(5000);
  tl::parallel_sort(v);
  take();
  EXPECT_EQ(chunks_, 0);
}

}  // namespace
