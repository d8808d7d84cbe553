// Predictions (analysis/predict.hpp): the work-stealing simulation on hand-made DAGs with known
// schedules, against Brent's bounds on random DAGs, the overheads measured from hand-made
// recordings, and Hoffmann and Rauber's extrapolation on values with known lines.
#include "analysis/predict.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "model_fixtures.hpp"
#include "report/predict_report.hpp"

namespace tasklens {
namespace {

using analysis::ExtrapolationInput;
using analysis::Overheads;
using analysis::simulate;
using fixtures::ModelBuilder;
using model::kNone;
using model::Model;
using model::NodeKind;
using model::SiteKind;

// Gives every strand with work a worker and a timestamp (the simulation runs only timed strands;
// work-less strands stay synthetic joins).
void time_all(Model& m) {
  uint64_t t = 1;
  for (auto& s : m.strands) {
    if (s.work == 0 && s.thread == 0) {
      s.thread = kNone;
      continue;
    }
    s.start = t;
    s.end = t + s.work;
    t = s.end;
  }
}

// A parent that spawns n tasks of `work` each, then waits for all of them (a synthetic join).
Model fork_join(uint32_t n, uint64_t work, uint64_t parent_work = 0) {
  ModelBuilder b;
  const uint32_t site = b.add_site(SiteKind::Task);
  std::vector<uint32_t> ends;
  uint32_t prev = b.strand(parent_work + 1);
  for (uint32_t i = 0; i < n; ++i) {
    b.open(NodeKind::Task, site);
    ends.push_back(b.strand(work, {prev}));
    b.close();
    prev = b.strand(1, {prev});  // the parent's continuation after each spawn
  }
  ends.push_back(prev);
  const uint32_t join = b.strand(0, ends);  // synthetic join
  b.strand(1, {join});
  Model m = b.finish();
  time_all(m);
  return m;
}

TEST(Predict, ChainTakesItsWorkWhateverTheWorkers) {
  ModelBuilder b;
  uint32_t s = b.strand(10);
  s = b.strand(20, {s});
  b.strand(30, {s});
  Model m = b.finish();
  time_all(m);
  const auto d = analysis::strand_durations(m);
  for (uint32_t p : {1u, 2u, 8u}) {
    const auto r = simulate(m, d, Overheads{}, p);
    EXPECT_EQ(r.time, 60u) << p;
    EXPECT_EQ(r.busy, 60u);
    EXPECT_EQ(r.strands_run, 3u);
    EXPECT_EQ(r.steals, 0u);
  }
}

TEST(Predict, ForkJoinOfEqualTasksTakesCeilOfTasksOverWorkers) {
  // 8 tasks of 1000 after a parent strand of 1, parent continuations of 1 each: the tasks run
  // in waves of P; the parent's 8 continuations and the last strand are on the path too.
  const Model m = fork_join(8, 1000);
  const auto d = analysis::strand_durations(m);
  EXPECT_EQ(simulate(m, d, Overheads{}, 1).time, 1u + 8 * 1 + 8 * 1000 + 1);
  // P = 8: worker 0 runs the parent's 8 continuations (it keeps the continuation), the 7 others
  // steal 7 tasks the moment they are pushed; the 8th task is popped by worker 0 after its last
  // continuation. Its end, + the final strand, ends the run.
  const auto r8 = simulate(m, d, Overheads{}, 8);
  EXPECT_EQ(r8.time, 1u + 8 + 1000 + 1);
  EXPECT_EQ(r8.steals, 7u);
  // P = 2: worker 1 steals task 0 at t=2 (ends 1002), worker 0 continues the parent to t=9,
  // then pops task 7 (LIFO: the bottom), ... 8 tasks split 4 and 4.
  const auto r2 = simulate(m, d, Overheads{}, 2);
  EXPECT_GE(r2.time, 1u + 4 * 1000);
  EXPECT_LE(r2.time, 1u + 8 + 4 * 1000 + 1);
}

// A strand of 10 loop iterations seen together (a static share) after a strand of 10: on P
// workers it runs as min(10, P) even shares (the longest of ceil(10 / P) iterations), and the
// last strand waits for all of them.
TEST(Predict, IterationsSeenTogetherAreSplitAmongTheWorkers) {
  ModelBuilder b;
  const uint32_t first = b.strand(10);
  const uint32_t loop = b.strand(1000, {first});
  b.strand(5, {loop});
  Model m = b.finish();
  time_all(m);
  m.divisible = {{loop, 10}};
  const auto d = analysis::strand_durations(m);
  EXPECT_EQ(simulate(m, d, Overheads{}, 1).time, 1015u);
  EXPECT_EQ(simulate(m, d, Overheads{}, 1).strands_run, 3u);
  const auto r4 = simulate(m, d, Overheads{}, 4);  // shares of 3, 3, 2, 2 iterations
  EXPECT_EQ(r4.time, 10u + 300 + 5);
  EXPECT_EQ(r4.busy, 1015u);
  EXPECT_EQ(r4.strands_run, 3u);
  EXPECT_EQ(r4.steals, 3u);
  EXPECT_EQ(simulate(m, d, Overheads{}, 16).time, 10u + 100 + 5);  // one iteration each
  // Shares pay the spawn cost when popped by their own worker, the steal cost when stolen.
  Overheads o;
  o.steal.ticks = 7;
  EXPECT_EQ(simulate(m, d, o, 2).time, 10u + 7 + 500 + 5);
}

TEST(Predict, OverheadsAreChargedPerStrandStartByKind) {
  const Model m = fork_join(4, 100);
  const auto d = analysis::strand_durations(m);
  Overheads o;
  o.spawn.ticks = 10;
  o.cont.ticks = 3;
  o.sync.ticks = 7;
  o.steal.ticks = 1000;
  // One worker: 4 spawned tasks (10 each), 4 continuations (3 each), the strand after the join
  // (7): 40 + 12 + 7 over the work 1 + 4 + 400 + 1.
  const auto r = simulate(m, d, o, 1);
  EXPECT_EQ(r.overhead, 40u + 12 + 7);
  EXPECT_EQ(r.time, 406u + 59);
  // Two workers: every steal costs 1000, so the result is slower than the greedy bound without
  // overheads, but each strand still runs once.
  const auto r2 = simulate(m, d, o, 2);
  EXPECT_EQ(r2.strands_run, r.strands_run);
  EXPECT_GE(r2.steals, 1u);
  EXPECT_EQ(r2.overhead % 1, 0u);
}

TEST(Predict, RandomDagsStayWithinBrentsBounds) {
  std::mt19937_64 rng(1234);
  int sped_up = 0;  // trials where 7 workers beat one: the DAGs have parallelism to schedule
  for (int trial = 0; trial < 200; ++trial) {
    fixtures::RandomModelOptions opt;
    Model m = fixtures::random_model(rng, opt);
    time_all(m);
    const auto d = analysis::strand_durations(m);
    uint64_t work = 0, span = 0;
    std::vector<uint64_t> finish(m.strands.size(), 0);
    for (uint32_t s = 0; s < m.strands.size(); ++s) {
      uint64_t start = 0;
      for (uint32_t p : m.preds_of(s)) start = std::max(start, finish[p]);
      finish[s] = start + d[s];
      work += d[s];
      span = std::max(span, finish[s]);
    }
    uint64_t timed = 0;
    for (const auto& s : m.strands) timed += s.thread != kNone;
    for (uint32_t p : {1u, 2u, 3u, 7u}) {
      const auto r = simulate(m, d, Overheads{}, p);
      ASSERT_EQ(r.strands_run, timed) << trial;
      ASSERT_EQ(r.busy, work);
      // Greedy: never slower than T1/P + Tinf, never faster than max(T1/P, Tinf).
      ASSERT_LE(double(r.time), double(work) / p + double(span) + 1e-9) << trial << " P=" << p;
      ASSERT_GE(double(r.time), std::max(double(work) / p, double(span)) - 1e-9) << trial;
      if (p == 1) {
        ASSERT_EQ(r.time, work);
      }
      if (p == 7 && r.time < work) ++sped_up;
    }
  }
  EXPECT_GT(sped_up, 100);
}

TEST(Predict, OneWorkerInClosedFormEqualsItsSimulation) {
  // run(1) counts the starts once and multiplies; run_events(1) simulates: every field agrees,
  // whatever the overheads.
  std::mt19937_64 rng(99);
  std::uniform_int_distribution<int> ticks(0, 500);
  for (int trial = 0; trial < 100; ++trial) {
    fixtures::RandomModelOptions opt;
    Model m = fixtures::random_model(rng, opt);
    time_all(m);
    const analysis::Simulator sim(m, analysis::strand_durations(m));
    Overheads o;
    o.spawn.ticks = ticks(rng) + 0.4;
    o.steal.ticks = ticks(rng);
    o.sync.ticks = ticks(rng) + 0.6;
    o.cont.ticks = ticks(rng);
    if (trial % 2) o.one_worker_task = ticks(rng) + 0.5;  // a recording of several workers
    const auto closed = sim.run(1, o), simulated = sim.run_events(1, o);
    ASSERT_EQ(closed.time, simulated.time) << trial;
    ASSERT_EQ(closed.busy, simulated.busy) << trial;
    ASSERT_EQ(closed.overhead, simulated.overhead) << trial;
    ASSERT_EQ(closed.strands_run, simulated.strands_run) << trial;
    ASSERT_EQ(closed.steals, 0u);
    // More workers go through the same simulation with the renumbered strands.
    ASSERT_EQ(sim.run(3, o).strands_run, closed.strands_run) << trial;
  }
}

// A strand pays at least what it paid on one worker, whatever schedule P workers make of it:
// the predicted speedup is never above P, even when a steal is measured cheaper than a spawn or
// a continuation cheaper than a sync (which would let many workers skip runtime work that one
// worker does), and with loop strands split among the workers.
TEST(Predict, NeverASpeedupAboveTheWorkers) {
  std::mt19937_64 rng(4242);
  std::uniform_int_distribution<int> ticks(0, 400);
  std::bernoulli_distribution half(0.5);
  for (int trial = 0; trial < 300; ++trial) {
    fixtures::RandomModelOptions opt;
    opt.max_strands = 60;
    Model m = fixtures::random_model(rng, opt);
    time_all(m);
    if (half(rng))  // some strands are loop iterations seen together
      for (uint32_t s = 0; s < m.strands.size(); s += 3)
        if (m.strands[s].thread != kNone) m.divisible.push_back({s, uint32_t(2 + s % 7)});
    const analysis::Simulator sim(m, analysis::strand_durations(m));
    Overheads o;
    o.spawn.ticks = ticks(rng);
    o.sync.ticks = ticks(rng);
    o.cont.ticks = ticks(rng);
    o.steal.ticks = ticks(rng) / 4;  // often cheaper than the rest
    // The measured task cost as one worker's, below or above the classes measured on several.
    if (half(rng)) o.one_worker_task = ticks(rng) * 2;
    // With the measured overheads, and with the program's own costs (without_contention).
    for (const Overheads& costs : {o, analysis::without_contention(o)}) {
      const auto one = sim.run(1, costs);
      for (uint32_t p : {2u, 3u, 4u, 8u, 16u, 32u, 64u}) {
        const auto r = sim.run(p, costs);
        ASSERT_GE(double(p) * double(r.time), double(one.time)) << trial << " P=" << p;
        ASSERT_GE(r.overhead + r.busy, one.overhead + one.busy) << trial << " P=" << p;
      }
    }
  }
}

// A recording of two workers with the measured task cost: one worker pays that per task and
// nothing for syncs and continuations (its gaps would hold the two workers' contention); one
// worker's recording, or no measure, keeps the classes.
TEST(Predict, OneWorkerPaysTheMeasuredTaskCostOnARecordingOfSeveral) {
  Model m = fork_join(4, 100);
  m.task_count = 4;
  m.task_cost = 30;
  Overheads o = analysis::measure_overheads(m);  // every strand on thread 0
  EXPECT_EQ(o.one_worker_task, 0.0);
  for (model::Strand& s : m.strands)  // the tasks (the strands of 100) on a second worker
    if (s.work == 100) s.thread = 1;
  o = analysis::measure_overheads(m);
  EXPECT_EQ(o.one_worker_task, 30.0);
  o.spawn.ticks = 500;  // as if the two workers had fought over the queue
  o.sync.ticks = 200;
  o.cont.ticks = 70;
  const analysis::Simulator sim(m, analysis::strand_durations(m));
  const auto one = sim.run(1, o);
  EXPECT_EQ(one.overhead, 4u * 30);  // four spawned tasks, nothing else
  EXPECT_EQ(one.time, one.busy + 4u * 30);
  EXPECT_EQ(sim.run_events(1, o).time, one.time);
  const auto two = sim.run(2, o);
  EXPECT_GE(2.0 * double(two.time), double(one.time));
  m.task_cost = 0;  // no measure: the classes
  EXPECT_EQ(analysis::measure_overheads(m).one_worker_task, 0.0);
  m.task_cost = 30;
  m.metric = "instructions";  // the task cost is not in TSC ticks
  EXPECT_EQ(analysis::measure_overheads(m).one_worker_task, 0.0);
}

// Without the recorded contention: every task pays its one-thread cost, a steal that cost times
// the measured steal/spawn ratio (at least 1, at most the measured steal), syncs and
// continuations nothing; a recording with no measured task cost (one worker, another metric)
// keeps the measured overheads.
TEST(Predict, WithoutContentionEveryTaskPaysItsOneThreadCost) {
  Overheads measured;
  measured.spawn = {500, 100, true};
  measured.steal = {1500, 10, true};
  measured.sync = {200, 50, true};
  measured.cont = {1400, 300, true};
  measured.inside = 40;
  measured.one_worker_task = 30;
  Overheads o = analysis::without_contention(measured);
  EXPECT_TRUE(o.contention_removed);
  EXPECT_DOUBLE_EQ(o.spawn.ticks, 30);
  EXPECT_DOUBLE_EQ(o.steal.ticks, 90);  // 30 x 1500 / 500
  EXPECT_DOUBLE_EQ(o.sync.ticks, 0);
  EXPECT_DOUBLE_EQ(o.cont.ticks, 0);
  EXPECT_DOUBLE_EQ(o.one_worker_task, 30);
  EXPECT_EQ(o.spawn.samples, 100u);  // what was measured stays said
  measured.steal = {400, 10, true};  // a steal measured cheaper than a spawn
  EXPECT_DOUBLE_EQ(analysis::without_contention(measured).steal.ticks, 30);
  measured.spawn.ticks = 2;  // a spawn measured near 0: no steal above the measured one
  measured.steal = {1000, 10, true};
  EXPECT_DOUBLE_EQ(analysis::without_contention(measured).steal.ticks, 1000);
  measured.spawn.ticks = 500;
  measured.steal = {500, 0, false};  // not measured (taken to be the spawn cost)
  EXPECT_DOUBLE_EQ(analysis::without_contention(measured).steal.ticks, 30);
  measured.one_worker_task = 0;  // one worker, or no measure: nothing to take out
  o = analysis::without_contention(measured);
  EXPECT_FALSE(o.contention_removed);
  EXPECT_DOUBLE_EQ(o.spawn.ticks, 500);
  EXPECT_DOUBLE_EQ(o.cont.ticks, 1400);
}

// Two recordings of one program whose workers contended differently (an untied build whose
// continuations go back through the queue, a busier machine: every gap larger, the steal/spawn
// ratio the same) predict the same without the contention, and differently with it.
TEST(Predict, PredictionsWithoutContentionDoNotFollowTheGaps) {
  Model m = fork_join(64, 100);
  m.task_count = 64;
  m.task_cost = 30;
  for (model::Strand& s : m.strands)
    if (s.work == 100 && (&s - m.strands.data()) % 2) s.thread = 1;
  Overheads tied = analysis::measure_overheads(m);
  ASSERT_EQ(tied.one_worker_task, 30.0);
  tied.spawn = {400, 64, true};
  tied.steal = {1200, 8, true};
  tied.sync = {100, 1, true};
  tied.cont = {50, 64, true};
  Overheads untied = tied;
  untied.spawn.ticks = 800;
  untied.steal.ticks = 2400;
  untied.cont.ticks = 1400;
  const analysis::Simulator sim(m, analysis::strand_durations(m));
  const auto one = sim.run(1, analysis::without_contention(tied));
  EXPECT_EQ(one.time, sim.run(1, analysis::without_contention(untied)).time);
  EXPECT_EQ(one.time, sim.run(1, tied).time);  // one worker pays the task cost either way
  for (uint32_t p : {2u, 4u, 16u, 64u}) {
    const auto a = sim.run(p, analysis::without_contention(tied));
    const auto b = sim.run(p, analysis::without_contention(untied));
    EXPECT_EQ(a.time, b.time) << p;
    EXPECT_EQ(a.steals, b.steals) << p;
    EXPECT_GE(double(p) * double(a.time), double(one.time)) << p;
    EXPECT_LT(a.time, sim.run(p, tied).time) << p;  // the contention costs time
    EXPECT_LT(sim.run(p, tied).time, sim.run(p, untied).time) << p;
  }
}

TEST(Predict, AStolenTaskPaysAtLeastItsSpawn) {
  // Four tasks of 100 on two workers, spawns measured at 50 and steals at 0: the stolen task
  // still pays 50, so the two workers pay the one worker's overheads.
  const Model m = fork_join(4, 100);
  const auto d = analysis::strand_durations(m);
  Overheads o;
  o.spawn.ticks = 50;
  const auto one = simulate(m, d, o, 1), two = simulate(m, d, o, 2);
  EXPECT_EQ(one.overhead, 4u * 50);
  EXPECT_GE(two.steals, 1u);
  EXPECT_EQ(two.overhead, 4u * 50);
}

TEST(Predict, OverheadsMeasuredFromGapsByKind) {
  // One thread: parent strand [0,100), gap 5, task strand [105,205), gap 2, continuation of the
  // parent [207,300) (continue: ready at 100, its worker free at 205: gap 2), then a synthetic
  // join and a strand after it on thread 0 [310,320) (sync: gap 10 after 300).
  ModelBuilder b;
  const uint32_t site = b.add_site(SiteKind::Task);
  const uint32_t a = b.strand(100);
  b.open(NodeKind::Task, site);
  const uint32_t t = b.strand(100, {a});
  b.close();
  const uint32_t c = b.strand(93, {a});
  const uint32_t j = b.strand(0, {t, c});
  const uint32_t e = b.strand(10, {j});
  Model m = b.finish();
  fixtures::set_time(m, a, 0, 1, 100);
  fixtures::set_time(m, t, 0, 105, 205);
  fixtures::set_time(m, c, 0, 207, 300);
  m.strands[j].thread = kNone;
  fixtures::set_time(m, e, 0, 310, 320);
  Overheads o = analysis::measure_overheads(m);
  EXPECT_EQ(o.spawn.samples, 1u);
  EXPECT_DOUBLE_EQ(o.spawn.ticks, 5);
  EXPECT_EQ(o.cont.samples, 1u);
  EXPECT_DOUBLE_EQ(o.cont.ticks, 2);
  EXPECT_EQ(o.sync.samples, 1u);
  EXPECT_DOUBLE_EQ(o.sync.ticks, 10);
  EXPECT_EQ(o.steal.samples, 0u);
  EXPECT_FALSE(o.steal.measured);
  EXPECT_DOUBLE_EQ(o.steal.ticks, 5);  // assumed: the spawn cost

  // The task runs on thread 1 instead, from 150 (ready at 100: a steal of 50; thread 1 has no
  // strand before it, so it is not a sample); the join's successor is made ready by thread 1's
  // end at 250 and starts on thread 0 at 260: a steal of 10.
  fixtures::set_time(m, t, 1, 150, 250);
  fixtures::set_time(m, c, 0, 100, 193);
  fixtures::set_time(m, e, 0, 260, 270);
  o = analysis::measure_overheads(m);
  EXPECT_EQ(o.steal.samples, 1u);
  EXPECT_TRUE(o.steal.measured);
  EXPECT_DOUBLE_EQ(o.steal.ticks, 10);
  EXPECT_EQ(o.cont.samples, 1u);
  EXPECT_DOUBLE_EQ(o.cont.ticks, 0);
}

TEST(Predict, AWorkerIsFreeWhenAllItsStrandsEnded) {
  // A one-thread team runs a task the moment it is created: the creator's zero-length strand P
  // starts with the task's C; the creator's continuation U waits for C, not for P. Its gap is 2.
  ModelBuilder b;
  const uint32_t site = b.add_site(SiteKind::Task);
  const uint32_t a = b.strand(10);
  b.open(NodeKind::Task, site);
  const uint32_t c = b.strand(1000, {a});
  b.close();
  const uint32_t p = b.strand(0, {a});
  const uint32_t u = b.strand(8, {p});
  Model m = b.finish();
  const uint64_t times[][2] = {{1, 10}, {10, 1010}, {10, 10}, {1012, 1020}};
  for (uint32_t s : {a, c, p, u}) fixtures::set_time(m, s, 0, times[s][0], times[s][1]);
  const Overheads o = analysis::measure_overheads(m);
  EXPECT_EQ(o.cont.samples, 2u);  // P (gap 0 after A) and U
  EXPECT_DOUBLE_EQ(o.cont.ticks, 1.0);
  EXPECT_EQ(o.spawn.samples, 1u);
  EXPECT_DOUBLE_EQ(o.spawn.ticks, 0.0);
}

// A chain of strands on thread 0, each of 1 tick, strand i + 1 starting gaps[i] ticks after
// strand i ended: every gap a continuation's.
Model chain_with_gaps(const std::vector<uint64_t>& gaps) {
  ModelBuilder b;
  uint32_t s = b.strand(1);
  for (size_t i = 0; i < gaps.size(); ++i) s = b.strand(1, {s});
  Model m = b.finish();
  uint64_t t = 10;
  for (uint32_t i = 0; i < m.strands.size(); ++i) {
    fixtures::set_time(m, i, 0, t, t + 1);
    t += 1 + (i < gaps.size() ? gaps[i] : 0);
  }
  return m;
}

TEST(Predict, TrimmedMeanDropsTheLargestPercent) {
  // 100 continuation gaps of 1 tick on one thread, and one of 10^6: dropped (1% of 101 is 1).
  std::vector<uint64_t> gaps(101, 1);
  gaps[50] += 1000000;
  const Overheads o = analysis::measure_overheads(chain_with_gaps(gaps));
  EXPECT_EQ(o.cont.samples, 101u);
  EXPECT_DOUBLE_EQ(o.cont.ticks, 1.0);
}

TEST(Predict, GapsFarAboveTheirClassesMedianAreNotACost) {
  // 90 continuation gaps of 10 ticks and 10 of 10^5 (a woken worker's, 10% of them: more than
  // the 1% trimmed) on one thread: the cost is the 10 ticks; 10 of 150 (15 times the median)
  // stay.
  for (const uint64_t far : {uint64_t{100000}, uint64_t{150}}) {
    std::vector<uint64_t> gaps(100, 10);
    for (size_t i = 9; i < gaps.size(); i += 10) gaps[i] = far;
    const Overheads o = analysis::measure_overheads(chain_with_gaps(gaps));
    EXPECT_EQ(o.cont.samples, 100u);
    if (far > 16 * 10)
      EXPECT_DOUBLE_EQ(o.cont.ticks, 10.0);
    else  // 90 of 10 and 10 of 150, the largest (1%) dropped
      EXPECT_DOUBLE_EQ(o.cont.ticks, (90.0 * 10 + 9 * 150) / 99);
  }
}

TEST(Predict, ExtrapolatesLinesExactly) {
  // y = 3 + 2x through every pair: any x gives the line.
  const std::vector<double> xs{1, 2, 4, 8}, ys{5, 7, 11, 19};
  for (double x : {1.0, 3.0, 16.0, 64.0})
    EXPECT_NEAR(analysis::extrapolate_value(xs, ys, x), 3 + 2 * x, 1e-9) << x;
  // Two pairs with different slopes: weighted by 1 / (1 + distance to their midpoints).
  const std::vector<double> x2{1, 2, 4}, y2{10, 20, 20};
  // At x = 4: pair (1,2) gives 40 with weight 1/(1+2.5); pair (2,4) gives 20 with weight 1/2.
  const double w1 = 1 / 3.5, w2 = 1 / 2.0;
  EXPECT_NEAR(analysis::extrapolate_value(x2, y2, 4), (40 * w1 + 20 * w2) / (w1 + w2), 1e-9);
}

TEST(Predict, ExtrapolationOfTaskTypes) {
  // Task sizes grow by 10 per thread, idle by 1, counts constant: time at P = serial +
  // count (size + idle) / P.
  std::vector<ExtrapolationInput> runs(2);
  runs[0].threads = 1;
  runs[0].serial = 100;
  runs[0].types = {{"a", 1000, 50, 2}, {"b", 10, 1000, 0}};
  runs[1].threads = 2;
  runs[1].serial = 100;
  runs[1].types = {{"a", 1000, 60, 3}, {"b", 10, 1000, 0}};
  const auto p4 = analysis::extrapolate(runs, 4);
  EXPECT_NEAR(p4.serial, 100, 1e-9);
  EXPECT_NEAR(p4.task_time, 1000 * (80 + 5) + 10 * 1000, 1e-6);
  EXPECT_NEAR(p4.time, 100 + (1000 * 85 + 10000) / 4.0, 1e-6);
  // A type only in one recording counts 0 in the other; negative extrapolations clamp to 0.
  runs[1].types.pop_back();
  const auto p8 = analysis::extrapolate(runs, 8);
  EXPECT_NEAR(p8.task_time, 1000 * (120 + 9), 1e-6);
}

// A recording whose elapsed time tasklens mostly took out (its own cost, other processes'
// preemption) gets a note saying its measured time is an estimate; one that measured the
// program's time for the most part does not, and removals beyond the elapsed time say "all".
TEST(Predict, ARecordingMostlyTakenOutSaysItsMeasuredTimeIsAnEstimate) {
  EXPECT_FALSE(report::removed_time_note("a.tlens", 0.0).has_value());
  EXPECT_FALSE(report::removed_time_note("a.tlens", 0.49).has_value());
  const auto half = report::removed_time_note("a.tlens", 0.75);
  ASSERT_TRUE(half.has_value());
  EXPECT_NE(half->find("75% of a.tlens's elapsed time"), std::string::npos) << *half;
  EXPECT_NE(half->find("record it again on an idle machine"), std::string::npos) << *half;
  const auto all = report::removed_time_note("b.tlens", 1.3);
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(all->rfind("all of b.tlens's elapsed time", 0), 0u) << *all;
}

// A recording whose workers were switched out for a tenth of their work (more threads than
// CPUs), or for a tenth of the threads' time anywhere in the run (a loaded machine: the waits
// land in the gaps the overheads are measured from), says so; less, or no measure, says nothing.
TEST(Predict, ARecordingTheMachineSwitchedOutSaysItsPredictionsArePessimistic) {
  model::Model m;
  // The note `m` gets holds `text`.
  auto says = [&m](const std::string& text) {
    const std::optional<std::string> note = report::preemption_note(m, 1000);
    return note.has_value() && note->find(text) != std::string::npos;
  };
  EXPECT_FALSE(report::preemption_note(m, 1000).has_value());
  m.preempted = 100;  // exactly a tenth of the work: not yet
  EXPECT_FALSE(report::preemption_note(m, 1000).has_value());
  m.preempted = 101;
  EXPECT_TRUE(says("switched out for other threads for 10% of their work"));
  m.preempted = 0;
  m.threads_time = 10000;
  m.preempted_in_run = 999;  // under a tenth of the threads' time
  EXPECT_FALSE(report::preemption_note(m, 1000).has_value());
  m.preempted_in_run = 7300;
  EXPECT_TRUE(says("other processes held the CPUs for 73% of the recording's threads' time"));
  EXPECT_TRUE(says("record it again on an idle machine"));
  m.threads_time = 0;  // a recording without the measure
  EXPECT_FALSE(report::preemption_note(m, 1000).has_value());
}

}  // namespace
}  // namespace tasklens
