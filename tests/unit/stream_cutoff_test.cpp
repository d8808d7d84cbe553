// The cut-off advice in passes (analysis/stream_cutoff.hpp) on synthetic recordings of
// recursions: every depth the passes call exact must be the DAG's figure (trace_builder.hpp's
// build checks every trace of the model tests so, through cutoff_streaming_mismatch), and on
// the shapes below the passes must call them exact, or not, as the text says.
#include "analysis/stream_cutoff.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analysis/cutoff.hpp"
#include "model_team.hpp"
#include "trace_builder.hpp"

namespace tasklens {
namespace {

using fixtures::id;
using fixtures::Region;
using fixtures::TraceBuilder;
using namespace fixtures;  // model_team.hpp: the OMPT values
using trace::EventKind;

// A fib-like recursion recorded on two threads: each call of n >= 2 creates two tasks (sites
// 0x2000 and 0x2100), then waits for them (a taskwait, or a taskgroup); thread 1 steals the
// second child of the calls at depth <= `steal_depth` and runs its subtree, while thread 0 runs
// the rest. `other_leaf`: each leaf also creates a task of another site (0x2900) that it waits
// for, which a cut-off keeps.
struct FibTrace {
  TraceBuilder tb{2};
  Region r{tb};
  uint64_t counter[2] = {10, 10};
  uint64_t time[2] = {20, 20};
  uint32_t steal_depth = 2;
  bool taskgroup = false, other_leaf = false;

  uint64_t fresh(uint32_t thread) { return id(thread, counter[thread]++); }

  // Runs call `self` of fib(n) on `thread`, its tasks at depth `depth + 1`.
  void call(uint32_t thread, uint64_t self, uint32_t n, uint32_t depth) {
    uint64_t& t = time[thread];
    if (n < 2) {
      t += 7 + n;
      if (other_leaf) {
        const uint64_t leaf = fresh(thread);
        tb.ev(thread, t, EventKind::TaskCreate, {self, leaf, kExplicit, 0x2900});
        tb.ev(thread, t + 1, EventKind::SyncBegin, {kTaskwait, self, 0x2950});
        tb.ev(thread, t + 1, EventKind::TaskSchedule, {self, kSwitch, leaf});
        tb.ev(thread, t + 4, EventKind::TaskSchedule, {leaf, kComplete, self});
        tb.ev(thread, t + 4, EventKind::SyncEnd, {kTaskwait, self, 0x2950});
        t += 5;
      }
      return;
    }
    t += 3;
    if (taskgroup) tb.ev(thread, t, EventKind::SyncBegin, {kTaskgroup, self, 0x2050});
    const uint64_t a = fresh(thread), b = fresh(thread);
    tb.ev(thread, t + 1, EventKind::TaskCreate, {self, a, kExplicit, 0x2000});
    tb.ev(thread, t + 3, EventKind::TaskCreate, {self, b, kExplicit, 0x2100});
    t += 4;
    if (taskgroup)
      tb.ev(thread, t, EventKind::SyncWaitBegin, {kTaskgroup, self});
    else
      tb.ev(thread, t, EventKind::SyncBegin, {kTaskwait, self, 0x2200});
    const bool steal = thread == 0 && depth < steal_depth;
    uint64_t b_end = 0;
    if (steal) {  // thread 1 runs b from its creation on (or once it is free)
      uint64_t& t1 = time[1];
      t1 = std::max(t1, t) + 1;
      tb.ev(1, t1, EventKind::TaskSchedule, {r.B, kSwitch, b});
      call(1, b, n - 2, depth + 1);
      t1 += 1;
      tb.ev(1, t1, EventKind::TaskSchedule, {b, kComplete, r.B});
      b_end = t1;
    }
    tb.ev(thread, t, EventKind::TaskSchedule, {self, kSwitch, a});
    call(thread, a, n - 1, depth + 1);
    t += 1;
    tb.ev(thread, t, EventKind::TaskSchedule, {a, kComplete, self});
    if (!steal) {
      tb.ev(thread, t, EventKind::TaskSchedule, {self, kSwitch, b});
      call(thread, b, n - 2, depth + 1);
      t += 1;
      tb.ev(thread, t, EventKind::TaskSchedule, {b, kComplete, self});
    }
    t = std::max(t, b_end) + 1;
    if (taskgroup)
      tb.ev(thread, t, EventKind::SyncEnd, {kTaskgroup, self, 0x2050});
    else
      tb.ev(thread, t, EventKind::SyncEnd, {kTaskwait, self, 0x2200});
    t += 2;  // the sum
  }

  model::Model build(uint32_t n) {
    r.begin();
    time[1] = 20;
    call(0, r.A, n, 0);
    const uint64_t end = std::max(time[0], time[1]) + 10;
    r.end(end, end + 5);
    return tb.build();
  }
};

// The passes' figures on a trace, read as the model tests read it (trace_builder.hpp).
analysis::StreamCutoffAdvice advice_in_passes(const model::Model& m, TraceBuilder& tb,
                                              double target) {
  std::vector<model::SiteKind> kinds;
  model::BuildOptions options;
  options.place_site = [&kinds](const model::Site& site, uint32_t index, uint32_t) {
    if (kinds.size() <= index) kinds.resize(index + 1, model::SiteKind::Program);
    kinds[index] = site.kind;
    return index;
  };
  const std::vector<uint8_t> bytes = tb.bytes();
  char path[] = "/tmp/tasklens_stream_cutoffXXXXXX";
  const int fd = mkstemp(path);
  EXPECT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  close(fd);
  const trace::TraceFile file = trace::TraceFile::open(path);
  unlink(path);
  const uint64_t per_task = analysis::estimate_task_overhead(m).per_task;
  auto read = [&](model::StrandSink& sink) { model::build_streaming(file, sink, options); };
  const analysis::TaskSiteTest is_task_site = [&kinds](uint32_t site) {
    return site < kinds.size() && kinds[site] == model::SiteKind::Task;
  };
  analysis::CutoffScan scan(is_task_site);
  read(scan);
  return analysis::stream_advise_cutoffs(
      scan, read, is_task_site, 3, target, per_task,
      analysis::CutoffMachine{2, std::max<uint64_t>(per_task, 1)});
}

TEST(StreamCutoff, AFibRecursionIsAdvisedInPassesAsOnItsDag) {
  for (bool taskgroup : {false, true}) {
    SCOPED_TRACE(taskgroup ? "taskgroups" : "taskwaits");
    const fixtures::CutoffStreamingCounts before = fixtures::cutoff_streaming_counts();
    FibTrace f;
    f.taskgroup = taskgroup;
    const model::Model m = f.build(10);  // (checked against the DAG at every depth, in build)
    const fixtures::CutoffStreamingCounts& after = fixtures::cutoff_streaming_counts();
    EXPECT_EQ(after.depths_not_exact, before.depths_not_exact);
    EXPECT_GE(after.depths_compared, before.depths_compared + 9);  // depths 1 .. 9
    EXPECT_EQ(after.advice_left_out, before.advice_left_out);
    EXPECT_GE(after.advice_compared, before.advice_compared + 2);
    const std::vector<analysis::Recursion> recursions = analysis::find_recursions(m);
    ASSERT_EQ(recursions.size(), 1u);
    const analysis::StreamCutoffAdvice passes = advice_in_passes(m, f.tb, 2.0);
    EXPECT_TRUE(passes.not_evaluated.empty()) << passes.not_evaluated[0];
    ASSERT_EQ(passes.cutoffs.size(), 1u);
    EXPECT_EQ(passes.cutoffs[0].recursion.sites, recursions[0].sites);
    EXPECT_EQ(passes.cutoffs[0].recursion.max_depth, 9u);
    // After the scan: the extents, then one pass for every depth of so shallow a tree.
    EXPECT_EQ(passes.passes, 2u);
  }
}

TEST(StreamCutoff, ATaskOfAnotherSiteInsideTheRecursionLeavesItsDepthsOut) {
  FibTrace f;
  f.other_leaf = true;
  const fixtures::CutoffStreamingCounts before = fixtures::cutoff_streaming_counts();
  const model::Model m = f.build(8);
  const fixtures::CutoffStreamingCounts& after = fixtures::cutoff_streaming_counts();
  // The leaves' tasks lie at every depth below the top: a cut there would keep them beside the
  // calls it inlines, which one pass cannot time. Only the depth with nothing inside is exact.
  EXPECT_GT(after.depths_not_exact, before.depths_not_exact);
  const analysis::StreamCutoffAdvice passes = advice_in_passes(m, f.tb, 2.0);
  EXPECT_TRUE(passes.cutoffs.empty());
  ASSERT_EQ(passes.not_evaluated.size(), 1u);
  EXPECT_NE(passes.not_evaluated[0].find("another construct"), std::string::npos)
      << passes.not_evaluated[0];
}

TEST(StreamCutoff, ADeepRecursionTakesFewPassesForItsSearch) {
  // fib 30's depths are too many for one pass's candidates when the tree is deep: a chain of
  // calls each making one task (a linked list walked recursively) 200 deep.
  TraceBuilder tb(2);
  Region r{tb};
  r.begin();
  uint64_t t = 20, counter = 10;
  std::vector<uint64_t> chain{r.A};
  for (uint32_t d = 0; d < 200; ++d) {
    const uint64_t child = id(0, counter++);
    tb.ev(0, t += 5, EventKind::TaskCreate, {chain.back(), child, kExplicit, 0x2000});
    tb.ev(0, t += 1, EventKind::SyncBegin, {kTaskwait, chain.back(), 0x2200});
    tb.ev(0, t, EventKind::TaskSchedule, {chain.back(), kSwitch, child});
    chain.push_back(child);
  }
  t += 50;
  for (size_t d = chain.size() - 1; d >= 1; --d) {
    tb.ev(0, t += 1, EventKind::TaskSchedule, {chain[d], kComplete, chain[d - 1]});
    tb.ev(0, t, EventKind::SyncEnd, {kTaskwait, chain[d - 1], 0x2200});
    t += 3;
  }
  r.end(t + 10, t + 15);
  const model::Model m = tb.build();
  const analysis::StreamCutoffAdvice passes = advice_in_passes(m, tb, 1e9);
  ASSERT_EQ(passes.cutoffs.size(), 1u);
  EXPECT_EQ(passes.cutoffs[0].recursion.max_depth, 200u);
  // After the scan: the extents, the first depths, then the search's brackets: far fewer than
  // the binary search's steps would each take.
  EXPECT_LE(passes.passes, 5u);
}

}  // namespace
}  // namespace tasklens
