// What-if curves, what-if profiles, tasking overhead, burdened parallelism and the adviser:
// against brute force on random DAG models and against hand-computed values on small shapes.
#include "analysis/whatif.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "analysis/profile.hpp"
#include "model_fixtures.hpp"

namespace tasklens {
namespace {

using analysis::Unit;
using analysis::WhatIfMode;
using fixtures::ModelBuilder;
using model::Model;
using model::NodeKind;
using model::SiteKind;

constexpr double kInf = analysis::kInfiniteFactor;

// The inline rounding every what-if shares rounds as std::llround does: halves up, and the
// doubles just below and above each half, over random parts and factors too.
TEST(WhatIfRounding, RoundNonnegativeIsLlround) {
  std::vector<double> xs = {0.0, 0.5, 1.5, 2.5, 1e15 + 0.5, 4503599627370495.5, 9007199254740991.0};
  for (double h = 0.5; h < 1e6; h = h * 3 + 0.5)
    for (double x : {h, std::nextafter(h, 0.0), std::nextafter(h, 1e300)}) xs.push_back(x);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100000; ++i) {
    const double factor = 1.0 + static_cast<double>(rng() % 10000) / 97.0;
    xs.push_back(static_cast<double>(rng() % (uint64_t{1} << 40)) / factor);
  }
  for (const double x : xs)
    ASSERT_EQ(analysis::round_nonnegative(x), static_cast<uint64_t>(std::llround(x))) << x;
}

// Longest path by relaxing every edge until nothing changes (Bellman-Ford on the negated
// weights): independent of the topological numbering the implementation relies on.
uint64_t brute_span(const Model& m, const std::vector<uint64_t>& weight) {
  const size_t n = m.strands.size();
  std::vector<uint64_t> dist(n);
  for (size_t s = 0; s < n; ++s) dist[s] = weight[s];
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t s = 0; s < n; ++s)
      for (uint32_t p : m.preds_of(s))
        if (dist[p] + weight[s] > dist[s]) {
          dist[s] = dist[p] + weight[s];
          changed = true;
        }
  }
  uint64_t best = 0;
  for (uint64_t d : dist) best = std::max(best, d);
  return best;
}

uint64_t expected_weight(uint64_t w, uint64_t u, double k) {
  uint64_t kept = std::isinf(k) ? 0 : static_cast<uint64_t>(std::llround(double(u) / k));
  return w - u + kept;
}

Unit random_unit(const Model& m, std::mt19937_64& rng, double p) {
  Unit u;
  u.name = "random";
  std::uniform_real_distribution<double> coin(0, 1);
  for (uint32_t s = 0; s < m.strands.size(); ++s) {
    if (coin(rng) >= p || m.strands[s].work == 0) continue;
    uint64_t part = std::uniform_int_distribution<uint64_t>(1, m.strands[s].work)(rng);
    u.parts.emplace_back(s, part);
  }
  return u;
}

TEST(WhatIfRandomTest, CurvesMatchBruteForceInBothModes) {
  std::mt19937_64 rng(7);
  fixtures::RandomModelOptions opt;
  opt.max_strands = 80;
  opt.min_strands = 20;
  opt.max_work = 1000;
  const std::vector<double> factors = {1, 2, 3.5, 8, kInf};
  for (int i = 0; i < 300; ++i) {
    SCOPED_TRACE("model " + std::to_string(i));
    Model m = fixtures::random_model(rng, opt);
    std::vector<Unit> units = {random_unit(m, rng, 0.3), random_unit(m, rng, 0.3)};
    units[1].name = "second";
    for (WhatIfMode mode : {WhatIfMode::Parallelize, WhatIfMode::Speedup}) {
      auto curves = analysis::whatif_curves(m, units, factors, mode);
      ASSERT_EQ(curves.size(), 3u);  // each unit, then "all"
      EXPECT_EQ(curves[2].unit, "all");
      for (size_t c = 0; c < 3; ++c) {
        // Brute force: the covered part of each strand (capped at its work for "all").
        std::vector<uint64_t> covered(m.strands.size(), 0);
        for (size_t ui = 0; ui < 2; ++ui) {
          if (c < 2 && ui != c) continue;
          for (auto [s, part] : units[ui].parts)
            covered[s] = std::min(m.strands[s].work, covered[s] + part);
        }
        uint64_t unit_work = 0;
        for (uint64_t x : covered) unit_work += x;
        EXPECT_EQ(curves[c].unit_work, unit_work);
        for (size_t f = 0; f < factors.size(); ++f) {
          std::vector<uint64_t> weight(m.strands.size());
          uint64_t work = 0;
          for (uint32_t s = 0; s < m.strands.size(); ++s) {
            weight[s] = expected_weight(m.strands[s].work, covered[s], factors[f]);
            work += mode == WhatIfMode::Speedup ? weight[s] : m.strands[s].work;
          }
          const analysis::WhatIfPoint& p = curves[c].points[f];
          EXPECT_EQ(p.span, brute_span(m, weight)) << "curve " << c << " factor " << factors[f];
          EXPECT_EQ(p.work, work);
          if (factors[f] == 1) {
            uint64_t total = 0;
            for (const auto& st : m.strands) total += st.work;
            EXPECT_EQ(p.work, total);
            EXPECT_EQ(p.span, analysis::longest_path(m));
          }
        }
      }
      if (HasFailure()) return;
    }
  }
}

TEST(WhatIfRandomTest, ProfileUnderWeightsKeepsItsInvariants) {
  std::mt19937_64 rng(8);
  fixtures::RandomModelOptions opt;
  opt.max_strands = 100;
  opt.min_strands = 30;
  opt.max_work = 500;
  for (int i = 0; i < 200; ++i) {
    SCOPED_TRACE("model " + std::to_string(i));
    Model m = fixtures::random_model(rng, opt);
    Unit u = random_unit(m, rng, 0.4);
    analysis::Weights w = analysis::apply_units(m, {&u}, 4, WhatIfMode::Parallelize);
    analysis::Profile p = analysis::compute_profile(m, &w);
    EXPECT_EQ(p.span, brute_span(m, w.span));
    uint64_t work = 0;
    for (uint64_t x : w.work) work += x;
    EXPECT_EQ(p.work, work);
    double sum = 0;
    for (const auto& row : p.sites) {
      sum += row.critical_path_percent;
      EXPECT_LE(row.work, p.work);
    }
    if (p.span > 0) {
      EXPECT_NEAR(sum, 100.0, 1e-9);
    }
  }
}

// Amdahl by hand: a serial strand of 100, then 4 parallel tasks of 10.
Model amdahl_model(uint32_t tasks = 4, uint64_t serial = 100, uint64_t each = 10) {
  ModelBuilder b;
  const uint32_t site = b.add_site(SiteKind::Task);
  const uint32_t first = b.strand(serial);
  std::vector<uint32_t> ends{first};
  for (uint32_t i = 0; i < tasks; ++i) {
    b.open(NodeKind::Task, site);
    ends.push_back(b.strand(each, {first}));
    b.close();
  }
  b.strand(0, ends);
  Model m = b.finish();
  m.fragments = {{}, {0x10, 0x20}, {0x20, 0}};
  m.strands[0].fragment = 1;
  for (uint32_t i = 1; i <= tasks; ++i) m.strands[i].fragment = 2;
  return m;
}

TEST(WhatIfTest, SerialRegionSpeedupFollowsAmdahl) {
  Model m = amdahl_model();
  Unit serial = analysis::unit_of_fragments(m, {1}, "serial");
  auto curves = analysis::whatif_curves(m, {serial}, {2, 4, kInf}, WhatIfMode::Parallelize);
  ASSERT_EQ(curves.size(), 1u);
  EXPECT_EQ(curves[0].unit_work, 100u);
  EXPECT_EQ(curves[0].unit_critical, 100u);
  EXPECT_EQ(curves[0].points[0].span, 60u);  // 50 + 10
  EXPECT_EQ(curves[0].points[1].span, 35u);
  EXPECT_EQ(curves[0].points[2].span, 10u);
  EXPECT_EQ(curves[0].points[2].work, 140u);  // parallelizing saves no work
  auto fast = analysis::whatif_curves(m, {serial}, {4}, WhatIfMode::Speedup);
  EXPECT_EQ(fast[0].points[0].work, 65u);
  EXPECT_DOUBLE_EQ(fast[0].points[0].parallelism, 65.0 / 35.0);
}

TEST(WhatIfTest, UnitsOfSitesAndRegions) {
  Model m = amdahl_model();
  Unit tasks = analysis::unit_of_sites(m, {1}, "tasks");
  EXPECT_EQ(tasks.parts.size(), 4u);
  m.region_names = {"a", "b"};
  m.region_work = {{0, 0, 30}, {0, 1, 5}, {2, 0, 4}};
  Unit a = analysis::unit_of_region(m, 0, "a");
  ASSERT_EQ(a.parts.size(), 2u);
  EXPECT_EQ(a.parts[0], (std::pair<uint32_t, uint64_t>{0, 30}));
  EXPECT_EQ(a.parts[1], (std::pair<uint32_t, uint64_t>{2, 4}));
  // An own factor applies in the combination, not to the unit's own curve.
  a.factor = 2;
  auto curves = analysis::whatif_curves(m, {a}, {kInf}, WhatIfMode::Parallelize);
  ASSERT_EQ(curves.size(), 2u);
  EXPECT_EQ(curves[0].points[0].span, 70u + 10);  // region a removed from the path
  EXPECT_EQ(curves[1].unit, "all");
  EXPECT_EQ(curves[1].points[0].span, 85u + 10);  // 100 - 30 + 15, then a task of 10
}

TEST(AdviseTest, TakesTheSerialFragmentFirstAndStopsAtTheTarget) {
  Model m = amdahl_model();
  std::vector<uint32_t> group_of = {model::kNone, 0, 1};
  analysis::AdviseOptions opt;
  opt.target = 3;
  opt.factor = 4;
  analysis::Advice a = analysis::advise(m, group_of, 2, opt);
  EXPECT_EQ(a.span, 110u);
  ASSERT_EQ(a.steps.size(), 1u);
  EXPECT_EQ(a.steps[0].group, 0u);
  EXPECT_EQ(a.steps[0].critical_work, 100u);
  EXPECT_NEAR(a.steps[0].critical_percent, 100.0 * 100 / 110, 1e-9);
  EXPECT_EQ(a.steps[0].span, 35u);
  EXPECT_DOUBLE_EQ(a.steps[0].parallelism, 4.0);
  EXPECT_EQ(a.stop, analysis::AdviseStop::TargetReached);
  // A higher target: the task fragment comes next, then nothing is left.
  opt.target = 1000;
  a = analysis::advise(m, group_of, 2, opt);
  ASSERT_EQ(a.steps.size(), 2u);
  EXPECT_EQ(a.steps[1].group, 1u);
  EXPECT_EQ(a.steps[1].span, 25u + 3);  // 10 / 4 rounds to 3 (2.5 away from zero)
  EXPECT_EQ(a.stop, analysis::AdviseStop::NothingLeft);
  opt.max_steps = 1;
  EXPECT_EQ(analysis::advise(m, group_of, 2, opt).stop, analysis::AdviseStop::MaxSteps);
  opt.target = 1;
  a = analysis::advise(m, group_of, 2, opt);
  EXPECT_EQ(a.stop, analysis::AdviseStop::AlreadyReached);
  EXPECT_TRUE(a.steps.empty());
}

TEST(AdviseTest, StopsAtCandidatesBelowTheTaskingOverhead) {
  // 200 tasks of 10: the overhead estimate is 10; a serial fragment of 50 < 10 x 10.
  Model m = amdahl_model(200, 50, 10);
  analysis::Overhead o = analysis::estimate_task_overhead(m);
  EXPECT_EQ(o.per_task, 10u);
  EXPECT_EQ(o.samples, 200u);
  std::vector<uint32_t> group_of = {model::kNone, 0, 1};
  analysis::AdviseOptions opt;
  opt.target = 100;
  analysis::Advice a = analysis::advise(m, group_of, 2, opt);
  EXPECT_TRUE(a.steps.empty());
  EXPECT_EQ(a.stop, analysis::AdviseStop::TooSmall);
  EXPECT_EQ(a.stop_group, 0u);
  opt.min_overhead_multiple = 2;  // 50 >= 2 x 10: worth it
  a = analysis::advise(m, group_of, 2, opt);
  ASSERT_FALSE(a.steps.empty());
  EXPECT_EQ(a.steps[0].group, 0u);
  EXPECT_EQ(o.source, analysis::OverheadSource::Strands);
  // Too few tasks to estimate: no overhead, no such stop.
  EXPECT_EQ(analysis::estimate_task_overhead(amdahl_model()).samples, 0u);
  EXPECT_EQ(analysis::estimate_task_overhead(amdahl_model()).source,
            analysis::OverheadSource::None);
}

TEST(AdviseTest, TheMeasuredTaskCostIsTheOverheadWhereTheTraceHasIt) {
  // The same 200 tasks of 10, with record's measure of a task's whole cost: 30 per task, which
  // the strands (their shortest 10) cannot show. It decides the stop: 50 < 10 x 30 and with
  // K = 2, 50 < 2 x 30 too; and it holds with too few task strands to estimate anything.
  Model m = amdahl_model(200, 50, 10);
  m.task_cost = 30;
  m.task_cost_tasks = 5166;
  const analysis::Overhead o = analysis::estimate_task_overhead(m);
  EXPECT_EQ(o.per_task, 30u);
  EXPECT_EQ(o.samples, 5166u);
  EXPECT_EQ(o.source, analysis::OverheadSource::Calibration);
  EXPECT_STREQ(analysis::to_string(o.source), "calibration");
  std::vector<uint32_t> group_of = {model::kNone, 0, 1};
  analysis::AdviseOptions opt;
  opt.target = 100;
  opt.min_overhead_multiple = 2;
  const analysis::Advice a = analysis::advise(m, group_of, 2, opt);
  EXPECT_EQ(a.stop, analysis::AdviseStop::TooSmall);
  EXPECT_EQ(a.overhead.per_task, 30u);
  Model few = amdahl_model();
  few.task_cost = 30;
  EXPECT_EQ(analysis::estimate_task_overhead(few).per_task, 30u);
}

TEST(BurdenedTest, EveryTaskStartPaysTheOverhead) {
  Model m = amdahl_model();  // span 100 + 10
  analysis::Burdened b = analysis::burdened(m, nullptr, 140, 7);
  EXPECT_EQ(b.span, 117u);
  EXPECT_EQ(b.overhead_on_path, 7u);
  EXPECT_DOUBLE_EQ(b.parallelism, 140.0 / 117.0);
  EXPECT_NEAR(b.overhead_percent, 700.0 / 117.0, 1e-9);
  // Nested tasks pay on every level: fib(4) has 4 task levels on its critical path... with the
  // fixture's shape (a task per call), the path crosses one task start per level.
  uint32_t site = 0;
  Model fib = fixtures::fib_model(4, &site);
  uint64_t plain = analysis::longest_path(fib);
  analysis::Burdened bf = analysis::burdened(fib, nullptr, 0, 100);
  EXPECT_EQ(bf.span, plain + 4 * 100);  // fib(4) -> fib(3) -> fib(2) -> fib(1)
}

// In Speedup mode each step saves work too; a step names the user region holding most of its
// fragment's work. Serial fragment (100: regions a 30, b 60) then the tasks' fragment (4 x 10),
// at 4 times the speed: 100 -> 25 saves 75 (work 65, span 25 + 10); 10 -> 3 (2.5 rounded)
// saves 4 x 7 (work 37, span 25 + 3). The target (3) is never reached: nothing is left.
TEST(AdviseTest, SpeedupStepsSaveWorkAndNameTheirFragmentsMainRegion) {
  Model m = amdahl_model();
  m.region_names = {"a", "b"};
  m.region_work = {{0, 0, 30}, {0, 1, 60}};
  analysis::AdviseOptions opt;
  opt.target = 3;
  opt.factor = 4;
  opt.mode = WhatIfMode::Speedup;
  const analysis::Advice a = analysis::advise(m, {model::kNone, 0, 1}, 2, opt);
  EXPECT_EQ(a.work, 140u);
  EXPECT_EQ(a.span, 110u);
  ASSERT_EQ(a.steps.size(), 2u);
  EXPECT_EQ(a.steps[0].group, 0u);
  EXPECT_EQ(a.steps[0].strands_on_path, 1u);
  EXPECT_EQ(a.steps[0].region, 1u);
  EXPECT_EQ(a.steps[0].region_work, 60u);
  EXPECT_DOUBLE_EQ(a.steps[0].region_percent, 60.0);
  EXPECT_EQ(a.steps[0].work, 65u);
  EXPECT_EQ(a.steps[0].span, 35u);
  EXPECT_EQ(a.steps[1].group, 1u);
  EXPECT_EQ(a.steps[1].critical_work, 10u);  // one task on the path
  EXPECT_EQ(a.steps[1].strands_on_path, 1u);
  EXPECT_EQ(a.steps[1].region, model::kNone);
  EXPECT_EQ(a.steps[1].region_work, 0u);
  EXPECT_EQ(a.steps[1].work, 37u);
  EXPECT_EQ(a.steps[1].span, 28u);
  EXPECT_DOUBLE_EQ(a.steps[1].parallelism, 37.0 / 28.0);
  EXPECT_EQ(a.stop, analysis::AdviseStop::NothingLeft);
  EXPECT_EQ(a.burdened_after.span, 28u);  // no overhead measured (4 tasks): the span itself
}

// A strand of loop iterations seen only together weighs one iteration on the path, in the
// adviser and in the curves: a serial strand of 300 (fragment 1), then a loop share of 800 over
// 8 iterations (fragment 2): span 300 + 100. Step 1 (factor 4) takes the serial strand (300 on
// the path against the loop's 100): 75 + 100. Step 2 the loop, whose path share is 100, not 800:
// its weight 200 over 8 iterations, 25 on the path: span 100, parallelism 11 >= 10.
TEST(AdviseTest, ALoopsIterationsSeenTogetherWeighOneIterationOnThePath) {
  ModelBuilder b;
  const uint32_t loop = b.add_site(SiteKind::Loop);
  const uint32_t serial = b.strand(300);
  b.open(NodeKind::Loop, loop);
  const uint32_t share = b.strand(800, {serial});
  b.close();
  b.strand(0, {share});
  Model m = b.finish();
  m.divisible = {{share, 8}};
  m.fragments = {{}, {0x10, 0x20}, {0x30, 0x40}};
  m.strands[serial].fragment = 1;
  m.strands[share].fragment = 2;
  analysis::AdviseOptions opt;
  opt.target = 10;
  opt.factor = 4;
  const analysis::Advice a = analysis::advise(m, {model::kNone, 0, 1}, 2, opt);
  EXPECT_EQ(a.span, 400u);
  ASSERT_EQ(a.steps.size(), 2u);
  EXPECT_EQ(a.steps[0].critical_work, 300u);
  EXPECT_DOUBLE_EQ(a.steps[0].critical_percent, 75.0);
  EXPECT_EQ(a.steps[0].span, 175u);
  EXPECT_EQ(a.steps[1].critical_work, 100u);
  EXPECT_EQ(a.steps[1].span, 100u);
  EXPECT_DOUBLE_EQ(a.steps[1].parallelism, 11.0);
  EXPECT_EQ(a.stop, analysis::AdviseStop::TargetReached);
  // The curve of the loop's fragment: 100 of it on the critical path; at factor 2 its weight
  // 400 is 50 on the path.
  const auto curves = analysis::whatif_curves(m, {analysis::unit_of_fragments(m, {2}, "loop")},
                                              {2, kInf}, WhatIfMode::Parallelize);
  ASSERT_EQ(curves.size(), 1u);
  EXPECT_EQ(curves[0].unit_work, 800u);
  EXPECT_EQ(curves[0].unit_critical, 100u);
  EXPECT_EQ(curves[0].points[0].span, 350u);
  EXPECT_EQ(curves[0].points[1].span, 300u);
}

// The tasking overhead: the 5th percentile of the task strands' works (100 tasks of 1 to 100:
// the 6th smallest, 6) plus the runtime's cost the model took out, per strand, rounded (102
// strands: 357 is 3.5 a strand, 4; 356 is 3.49, 3). Under 100 task strands: not measurable.
TEST(OverheadTest, TheFifthPercentileOfTaskStrandsPlusTheRuntimesCostPerStrand) {
  auto tasks = [](uint32_t n) {
    ModelBuilder b;
    const uint32_t site = b.add_site(SiteKind::Task);
    const uint32_t fork = b.strand(0);
    std::vector<uint32_t> ends{fork};
    for (uint32_t i = 0; i < n; ++i) {
      b.open(NodeKind::Task, site);
      ends.push_back(b.strand(100 - i, {fork}));  // works 100 down to 1
      b.close();
    }
    b.strand(0, ends);
    return b.finish();
  };
  Model m = tasks(100);
  analysis::Overhead o = analysis::estimate_task_overhead(m);
  EXPECT_EQ(o.samples, 100u);
  EXPECT_EQ(o.per_task, 6u);
  m.runtime_removed = 357;
  EXPECT_EQ(analysis::estimate_task_overhead(m).per_task, 6u + 4);
  m.runtime_removed = 356;
  EXPECT_EQ(analysis::estimate_task_overhead(m).per_task, 6u + 3);
  o = analysis::estimate_task_overhead(tasks(99));
  EXPECT_EQ(o.samples, 0u);
  EXPECT_EQ(o.per_task, 0u);
}

// fib(16) recorded on 2 threads, its first strand starting at 1,000 and its last ending
// `elapsed` later, `preempted` ticks of other processes' time taken out of its strands and
// `switched_out` ticks of its threads switched out anywhere in the run.
Model timed_fib(uint64_t elapsed, uint64_t preempted = 0, uint64_t switched_out = 0) {
  Model m = fixtures::fib_model(16);
  m.thread_count = 2;
  m.task_count = 0;
  for (const model::Node& n : m.nodes) m.task_count += n.kind == NodeKind::Task;
  const uint32_t last = static_cast<uint32_t>(m.strands.size() - 1);
  fixtures::set_time(m, 0, 0, 1000, 1001);
  fixtures::set_time(m, last, 1, 1000 + elapsed - 1, 1000 + elapsed);
  m.preempted = preempted;
  m.preempted_in_run = switched_out;
  m.threads_time = elapsed * 2;
  return m;
}

// The run's loss is its time beyond Brent's greedy bound (work / threads + span), over the
// threads and the tasks; most of it lost, at ten times the one-thread overhead per task or more,
// is what advise says beside the burdened figures.
TEST(RunLossTest, TheRunsTimeBeyondTheGreedyBoundPerTask) {
  const uint64_t work = 10000, span = 1000, greedy = work / 2 + span;
  const uint64_t tasks = timed_fib(1).task_count;
  ASSERT_EQ(tasks, 3193u);  // fib(16)'s calls
  // 100 ticks per task lost over the 2 threads.
  const Model m = timed_fib(greedy + tasks * 50);
  analysis::RunLoss l = analysis::run_loss(m, work, span, 2);
  EXPECT_EQ(l.threads, 2u);
  EXPECT_EQ(l.tasks, tasks);
  EXPECT_EQ(l.elapsed, greedy + tasks * 50);
  EXPECT_EQ(l.greedy_bound, greedy);
  EXPECT_EQ(l.per_task, 100u);
  EXPECT_DOUBLE_EQ(l.lost_share, double(tasks * 50) / double(greedy + tasks * 50));
  EXPECT_TRUE(l.most_lost);
  EXPECT_DOUBLE_EQ(l.switched_out_share, 0);
  // Each task lost under ten times the overhead: the burdened figures say it.
  EXPECT_FALSE(analysis::run_loss(m, work, span, 11).most_lost);
  EXPECT_TRUE(analysis::run_loss(m, work, span, 10).most_lost);
  // Under a tenth of a second lost (here 160 us at 1 GHz): a short run's start, not its tasks.
  Model short_run = m;
  short_run.ticks_per_second = 1e9;
  EXPECT_FALSE(analysis::run_loss(short_run, work, span, 2).most_lost);
  short_run.ticks_per_second = 1e6;  // (the same ticks are 160 ms at 1 MHz)
  EXPECT_TRUE(analysis::run_loss(short_run, work, span, 2).most_lost);
  // No overhead known (none measured or estimated): nothing to set the loss beside.
  EXPECT_FALSE(analysis::run_loss(m, work, span, 0).most_lost);
  EXPECT_EQ(analysis::run_loss(m, work, span, 0).per_task, 100u);
  // A third of the run lost: not most of it.
  l = analysis::run_loss(timed_fib(greedy + greedy / 2), work, span, 0);
  EXPECT_NEAR(l.lost_share, 1.0 / 3, 0.001);
  EXPECT_FALSE(l.most_lost);
  // Other processes' time taken out of the strands is not the program's (per thread); the
  // threads switched out anywhere in the run are said beside it, not taken out.
  l = analysis::run_loss(timed_fib(greedy + tasks * 50 + 7000, 14000, 40000), work, span, 2);
  EXPECT_EQ(l.elapsed, greedy + tasks * 50);
  EXPECT_EQ(l.per_task, 100u);
  EXPECT_DOUBLE_EQ(l.switched_out_share, 40000.0 / double(2 * (greedy + tasks * 50 + 7000)));
  // Within the bound, or a metric other than time: no loss.
  EXPECT_EQ(analysis::run_loss(timed_fib(greedy), work, span, 2).per_task, 0u);
  EXPECT_FALSE(analysis::run_loss(timed_fib(greedy), work, span, 2).most_lost);
  Model instructions = m;
  instructions.metric_is_time = false;
  EXPECT_EQ(analysis::run_loss(instructions, work, span, 2).elapsed, 0u);
  EXPECT_FALSE(analysis::run_loss(instructions, work, span, 2).most_lost);
}

}  // namespace
}  // namespace tasklens
