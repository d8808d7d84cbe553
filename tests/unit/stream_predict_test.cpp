// `predict` in one pass (analysis/stream_predict.hpp): the gaps' trimmed mean from buckets, and
// the collapsed graph's bounds on a recursion fed to the sink as the builder would. (Every trace
// the model tests build is also compared with the DAG's prediction: support/one_pass_mismatch.hpp.)
#include "analysis/stream_predict.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

namespace tasklens::analysis {
namespace {

// predict.hpp's trimmed mean of the gaps (the in-memory reading's), on a copy.
double exact_trimmed_mean(std::vector<uint64_t> gaps) { return trimmed_mean(gaps).ticks; }

TEST(GapSketch, TrimmedMeanIsExactOrWithinTheBucketsError) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 40; ++round) {
    std::vector<uint64_t> gaps;
    // A third of the rounds keep the gaps (exact), a third count them (exact while at most 64
    // of them are of 2^16 ticks or more), a third put the larger ones in buckets from the first.
    const size_t limit = round % 3 == 0 ? size_t{1} << 20 : round % 3 == 1 ? 64 : 0;
    GapSketch sketch(limit), exact;
    const size_t n = 1 + rng() % 5000;
    std::lognormal_distribution<double> size(std::log(200.0 + double(rng() % 100000)), 1.0);
    for (size_t i = 0; i < n; ++i) {
      uint64_t g = rng() % 10 == 0 ? 0 : static_cast<uint64_t>(size(rng));
      if (rng() % 200 == 0) g *= 1000;  // a sleeping worker woken
      gaps.push_back(g);
      sketch.add(g);
      exact.add(g);
    }
    const double expected = exact_trimmed_mean(gaps);
    const OverheadCost c = sketch.trimmed_mean();
    EXPECT_EQ(c.samples, n);
    size_t large = 0;
    for (uint64_t g : gaps) large += g >= GapSketch::kSmall;
    EXPECT_EQ(sketch.exact(), limit != 0 ? large <= limit : large == 0) << "round " << round;
    if (sketch.exact())
      EXPECT_EQ(c.ticks, expected) << "round " << round << ", " << n << " gaps";
    else
      EXPECT_NEAR(c.ticks, expected, expected * 2 * QuantileSketch::kRelativeError + 1e-9)
          << "round " << round << ", " << n << " gaps";
    EXPECT_EQ(exact.trimmed_mean().ticks, expected);
  }
  // Millions of gaps, counted by value (and the larger ones kept): the in-memory reading's mean
  // to the bit.
  {
    std::vector<uint64_t> many;
    GapSketch counted;
    std::lognormal_distribution<double> size(std::log(1400.0), 0.8);
    for (size_t i = 0; i < 3'000'000; ++i) {
      uint64_t g = static_cast<uint64_t>(size(rng));
      if (i % 997 == 0) g *= 300;  // a worker woken from sleep
      many.push_back(g);
      counted.add(g);
    }
    ASSERT_TRUE(counted.exact());
    const OverheadCost c = counted.trimmed_mean();
    EXPECT_EQ(c.samples, many.size());
    EXPECT_EQ(c.ticks, exact_trimmed_mean(many));
  }
  // Small values have buckets of their own: exact.
  GapSketch small(0);
  std::vector<uint64_t> gaps = {0, 3, 3, 7, 100, 1, 2, 2, 9, 40};
  for (uint64_t g : gaps) small.add(g);
  EXPECT_DOUBLE_EQ(small.trimmed_mean().ticks, exact_trimmed_mean(gaps));
}

// fib(n) with a task per call on one thread, as the builder hands it over: a task's first strand
// after its creator's, the creator's continuation, a taskwait's join of the two children and the
// strand after it. Each strand takes `work` ticks.
struct FibFeeder {
  StreamPredict& sink;
  uint64_t clock = 1, order = 0;
  uint32_t next_task = 0;
  uint64_t syncs = 0;
  static constexpr uint64_t kWork = 100;

  model::StrandSink::Strand strand(uint32_t task, std::vector<model::StrandSink::Strand> preds) {
    sink.times(clock, clock + kWork, 0);
    sink.task_key(task);
    clock += kWork + 5;
    return sink.strand(kWork, kWork, 0, preds.data(), static_cast<uint32_t>(preds.size()), nullptr,
                       0, 1, 0, order++);
  }
  // The task's last strand. Each strand is released once its successors were handed over, as
  // the builder does (the caller releases the one returned).
  model::StrandSink::Strand task(int n, std::vector<model::StrandSink::Strand> creator) {
    const uint32_t me = next_task++;
    const auto first = strand(me, creator);
    if (n < 2) return first;
    const auto a = task(n - 1, {first});
    const auto cont = strand(me, {first});
    sink.release(first);
    const auto b = task(n - 2, {cont});
    const auto before_wait = strand(me, {cont});
    sink.release(cont);
    const auto join = sink.open_join();
    sink.fold(join, a);
    sink.fold(join, b);
    sink.release(a);
    sink.release(b);
    ++syncs;
    const auto last = strand(me, {before_wait, join});
    sink.release(before_wait);
    sink.release(join);
    return last;
  }
};

TEST(StreamPredict, ACollapsedRecursionKeepsItsWorkAndStaysWithinTheGreedyBounds) {
  StreamPredict full(1u << 20, true, 1), collapsed(200, true, 1);
  FibFeeder f{full}, c{collapsed};
  f.task(14, {});
  c.task(14, {});
  StreamPredict::Result a = full.finish(), b = collapsed.finish();
  const uint64_t strands = a.strands;
  ASSERT_GT(strands, 2000u);
  EXPECT_GE(a.graph.nodes.size(), strands);  // a node per strand, and one per join
  EXPECT_EQ(a.grain, 0u);
  EXPECT_EQ(a.collapsed_span, a.span);
  EXPECT_LE(b.graph.nodes.size(), 200u);
  EXPECT_GT(b.grain, 0u);
  EXPECT_EQ(b.work, a.work);
  EXPECT_EQ(b.span, a.span);
  EXPECT_GE(b.collapsed_span, b.span);
  const Simulator sa(a.graph), sb(b.graph);
  for (uint32_t p : {1u, 2u, 4u, 16u}) {
    const SimulationResult x = sa.run(p, Overheads{}), y = sb.run(p, Overheads{});
    EXPECT_EQ(y.busy, b.work);
    EXPECT_EQ(y.strands_run, x.strands_run) << p;  // every timed strand, inside nodes too
    EXPECT_GE(double(y.time), std::max(double(b.work) / p, double(b.span)) - 1) << p;
    EXPECT_LE(double(y.time), double(b.work) / p + double(b.collapsed_span) + 1) << p;
  }
  // With overheads, one worker pays about the same whether strands were collapsed or not: only
  // whether a strand after a taskwait runs as its task's continuation (the continue cost) or is
  // popped (the sync cost) may change with the order the collapsed nodes complete in.
  Overheads o;
  o.spawn.ticks = 7;
  o.sync.ticks = 11;
  o.cont.ticks = 3;
  o.steal.ticks = 20;
  const uint64_t one = sa.run(1, o).time, one_collapsed = sb.run(1, o).time;
  EXPECT_NEAR(double(one_collapsed), double(one), double(c.syncs * (11 - 3)));
  EXPECT_NE(one_collapsed, sb.run(1, Overheads{}).time);  // (the overheads were charged)
}

// With a grain from the start, each taskwait collapses the subtrees it joins while they fit in
// it: a successor waits for no more than it did, so what collapsing costs is the parallelism
// inside the nodes, and the predictions stay close to the full graph's.
TEST(StreamPredict, AGrainFromTheStartCollapsesWholeSubtreesAtTheirWaits) {
  StreamPredict full(1u << 20, true, 1), collapsed(1u << 20, true, 1, nullptr, 100 * 100);
  FibFeeder f{full}, c{collapsed};
  f.task(16, {});
  c.task(16, {});
  StreamPredict::Result a = full.finish(), b = collapsed.finish();
  EXPECT_EQ(b.grain, 10000u);
  EXPECT_LT(b.graph.nodes.size(), a.graph.nodes.size() / 8);
  EXPECT_EQ(b.work, a.work);
  // Subtrees of up to 100 strands (fib(6)'s: 71 strands, 7,100 ticks) are one node each: the
  // longest path through one grows by at most the grain.
  EXPECT_LE(b.collapsed_span, a.span + 10000);
  const Simulator sa(a.graph), sb(b.graph);
  // (Where the workers outnumber the work's breadth, the path is all: at 64 workers the
  // collapsed path decides, 26% longer here, where a grain is 1.3% of the work.)
  for (uint32_t p : {2u, 4u, 16u}) {
    const double x = double(sa.run(p, Overheads{}).time), y = double(sb.run(p, Overheads{}).time);
    EXPECT_NEAR(y, x, x * 0.05) << p << " workers";
  }
}

// What the graph holds is bounded by the node budget, not by the strands read: fib(20) hands over
// 15 times the strands of fib(14) through the same budget, compacted and collapsed in place many
// times over, and neither holds more than the budget's arrays (a 40-byte node, its predecessors'
// start, rep_, out_edges_ and the renumbering's new_of_ at 4 bytes, end_in_ at 8, up to twice
// as many predecessors as nodes: 80 bytes a node) and an eighth more.
TEST(StreamPredict, TheGraphsMemoryIsBoundedByTheBudgetNotByTheStrands) {
  constexpr uint32_t kBudget = 1024;
  const uint64_t bound = (kBudget + 64) * 80 * 9 / 8;
  uint64_t peak[2] = {}, strands[2] = {};
  for (int k = 0; k < 2; ++k) {
    StreamPredict sink(kBudget, true, 1);
    FibFeeder f{sink};
    f.task(k == 0 ? 14 : 20, {});
    const StreamPredict::Result r = sink.finish();
    strands[k] = r.strands;
    peak[k] = r.peak_graph_bytes;
    EXPECT_LE(r.graph.nodes.size(), kBudget) << k;
    EXPECT_LE(peak[k], bound) << k;
    EXPECT_GE(r.collapsed_span, r.span) << k;
  }
  ASSERT_GT(strands[1], 15 * strands[0]);
  ASSERT_GT(strands[0], kBudget);  // (both were collapsed)
  // (The figure counts the arrays themselves: the nodes alone, at the budget, are 40 bytes each.)
  EXPECT_GE(peak[0], uint64_t{kBudget} * sizeof(SimGraph::Node));
}

// A region's end joins every task of a loop of creates (a barrier's join: a fold per task), and
// the creating task's region names a node per child, while the graph holds at most its budget:
// both lists keep each node once when they fill up, so they stay within about twice the budget
// (they used to grow with the tasks: 4 bytes each, doubled while copied).
TEST(StreamPredict, AJoinOfEveryTaskListsTheGraphsNodesNotTheTasks) {
  constexpr uint32_t kBudget = 1024, kTasks = 200000;
  StreamPredict sink(kBudget, true, 1);
  FibFeeder f{sink};
  const auto first = f.strand(0, {});
  std::vector<model::StrandSink::Strand> children;
  auto creator = first;
  const auto join = sink.open_join();
  for (uint32_t t = 1; t <= kTasks; ++t) {
    const auto child = f.strand(t, {creator});
    const auto next = f.strand(0, {creator});  // the creator's continuation
    sink.release(creator);
    creator = next;
    sink.fold(join, child);
    sink.release(child);
  }
  f.strand(0, {creator, join});
  const StreamPredict::Result r = sink.finish();
  EXPECT_EQ(r.strands, 2u * kTasks + 2);
  EXPECT_LE(r.graph.nodes.size(), kBudget);
  EXPECT_GT(r.longest_list, 1024u);  // (both lists passed the size kept as it comes)
  EXPECT_LE(r.longest_list, 2u * (kBudget + 64));
  EXPECT_EQ(r.work, (2u * kTasks + 2) * FibFeeder::kWork);
  EXPECT_GE(r.collapsed_span, r.span);
}

}  // namespace
}  // namespace tasklens::analysis
