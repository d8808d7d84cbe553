// Scheduling delays (analysis/sched.hpp): hand-made schedules with known work, delay,
// no-work-sched and no-work-app per worker, the ready path, the running/ready step function and
// its downsampling, and on random schedules that the components add up to P x elapsed exactly and
// the series integrates to the totals.
#include "analysis/sched.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "model_fixtures.hpp"
#include "report/sched_report.hpp"

namespace tasklens {
namespace {

using analysis::downsample;
using analysis::SchedComponents;
using analysis::SchedStep;
using analysis::Schedule;
using fixtures::ModelBuilder;
using model::kNone;
using model::Model;
using model::NodeKind;
using model::SiteKind;

using fixtures::set_time;

void expect_components(const SchedComponents& c, uint64_t work, uint64_t delay, uint64_t sched,
                       uint64_t app, const char* what) {
  EXPECT_EQ(c.work, work) << what;
  EXPECT_EQ(c.delay, delay) << what;
  EXPECT_EQ(c.no_work_sched, sched) << what;
  EXPECT_EQ(c.no_work_app, app) << what;
}

// The exact identities every schedule satisfies.
void expect_consistent(const Schedule& s) {
  SchedComponents sum;
  for (const auto& w : s.per_worker) {
    EXPECT_EQ(w.time.total(), s.elapsed) << "thread " << w.thread;
    sum.work += w.time.work;
    sum.delay += w.time.delay;
    sum.no_work_sched += w.time.no_work_sched;
    sum.no_work_app += w.time.no_work_app;
  }
  EXPECT_EQ(s.total.total(), s.cumulative);
  EXPECT_EQ(s.cumulative, uint64_t{s.workers} * s.elapsed);
  EXPECT_EQ(sum.work, s.total.work);
  EXPECT_EQ(sum.delay, s.total.delay);
  EXPECT_EQ(sum.no_work_sched, s.total.no_work_sched);
  EXPECT_EQ(sum.no_work_app, s.total.no_work_app);
  EXPECT_EQ(s.path.work + s.path.scheduler_delay + s.path.busy_delay + s.path.before, s.elapsed);
  // The step function integrates to the totals.
  uint64_t run = 0, rdy = 0;
  for (size_t i = 0; i < s.steps.size(); ++i) {
    const uint64_t end = i + 1 < s.steps.size() ? s.steps[i + 1].time : s.last;
    ASSERT_LE(s.steps[i].time, end);
    run += uint64_t{s.steps[i].running} * (end - s.steps[i].time);
    rdy += uint64_t{s.steps[i].ready} * (end - s.steps[i].time);
  }
  EXPECT_EQ(run, s.running_ticks);
  EXPECT_EQ(rdy, s.ready_ticks);
  for (size_t points : {1, 3, 7, 200}) {
    uint64_t r2 = 0, y2 = 0;
    for (const auto& p : downsample(s.steps, s.first, s.last, points)) {
      r2 += p.running_ticks;
      y2 += p.ready_ticks;
    }
    EXPECT_EQ(r2, s.running_ticks) << points << " points";
    EXPECT_EQ(y2, s.ready_ticks) << points << " points";
  }
}

TEST(Sched, ChainOnTwoWorkersIsHalfNoWork) {
  ModelBuilder b;
  const uint32_t a = b.strand(100);
  const uint32_t c = b.strand(100, {a});
  Model m = b.finish();
  set_time(m, a, 0, 1000, 1100);
  set_time(m, c, 1, 1100, 1200);
  const Schedule s = analysis::compute_schedule(m);
  ASSERT_TRUE(s.timestamps);
  EXPECT_EQ(s.workers, 2u);
  EXPECT_EQ(s.elapsed, 200u);
  EXPECT_EQ(s.cumulative, 400u);
  expect_components(s.total, 200, 0, 0, 200, "total");
  expect_components(s.per_worker[0].time, 100, 0, 0, 100, "worker 0");
  expect_components(s.per_worker[1].time, 100, 0, 0, 100, "worker 1");
  EXPECT_EQ(s.path.strands, (std::vector<uint32_t>{a, c}));
  EXPECT_EQ(s.path.work, 200u);
  EXPECT_EQ(s.max_running, 1u);
  EXPECT_EQ(s.max_ready, 0u);
  expect_consistent(s);
}

TEST(Sched, ForkWithOneBusyWorkerIsDelay) {
  // s0 spawns t1 and t2 at 1010; worker 0 takes t1 at once, worker 1 takes t2 only at 1060.
  ModelBuilder b;
  const uint32_t site = b.add_site(SiteKind::Task);
  const uint32_t s0 = b.strand(10);
  b.open(NodeKind::Task, site);
  const uint32_t t1 = b.strand(100, {s0});
  b.close();
  b.open(NodeKind::Task, site);
  const uint32_t t2 = b.strand(100, {s0});
  b.close();
  Model m = b.finish();
  set_time(m, s0, 0, 1000, 1010);
  set_time(m, t1, 0, 1010, 1110);
  set_time(m, t2, 1, 1060, 1160);
  const Schedule s = analysis::compute_schedule(m);
  EXPECT_EQ(s.elapsed, 160u);
  expect_components(s.per_worker[0].time, 110, 0, 0, 50, "worker 0");
  expect_components(s.per_worker[1].time, 100, 50, 0, 10, "worker 1");
  expect_components(s.total, 210, 50, 0, 60, "total");
  EXPECT_EQ(s.path.strands, (std::vector<uint32_t>{s0, t2}));
  EXPECT_EQ(s.path.work, 110u);
  EXPECT_EQ(s.path.scheduler_delay, 50u);
  EXPECT_EQ(s.path.busy_delay, 0u);
  EXPECT_EQ(s.ready_ticks, 50u);
  EXPECT_EQ(s.max_ready, 1u);
  EXPECT_EQ(s.max_running, 2u);
  // The steps: 1 running; t1 runs and t2 waits; both run; t2 alone.
  const std::vector<std::pair<uint64_t, std::pair<uint32_t, uint32_t>>> want = {
      {1000, {1, 0}}, {1010, {1, 1}}, {1060, {2, 0}}, {1110, {1, 0}}, {1160, {0, 0}}};
  ASSERT_EQ(s.steps.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(s.steps[i].time, want[i].first) << i;
    EXPECT_EQ(s.steps[i].running, want[i].second.first) << i;
    EXPECT_EQ(s.steps[i].ready, want[i].second.second) << i;
  }
  expect_consistent(s);
}

TEST(Sched, LateReadyPathIsNoWorkSchedForTheOtherIdleWorkers) {
  // Huynh's case: the only ready strand (on the ready path) waits 30 ticks while all three
  // workers are idle: one of them is in delay, the other two in no-work-sched.
  ModelBuilder b;
  const uint32_t s0 = b.strand(10);
  const uint32_t s1 = b.strand(60, {s0});
  const uint32_t s2 = b.strand(50, {s1});
  const uint32_t s3 = b.strand(50, {s1});
  Model m = b.finish();
  set_time(m, s0, 0, 1000, 1010);
  set_time(m, s1, 1, 1040, 1100);
  set_time(m, s2, 2, 1100, 1150);
  set_time(m, s3, 0, 1100, 1150);
  const Schedule s = analysis::compute_schedule(m);
  EXPECT_EQ(s.workers, 3u);
  EXPECT_EQ(s.cumulative, 450u);
  // Workers 1 and 2 are idle since the start, worker 0 since 1010: the delay goes to the one idle
  // longest (worker 1: the lower thread of the two).
  expect_components(s.per_worker[0].time, 60, 0, 30, 60, "worker 0");
  expect_components(s.per_worker[1].time, 60, 30, 0, 60, "worker 1");
  expect_components(s.per_worker[2].time, 50, 0, 30, 70, "worker 2");
  expect_components(s.total, 170, 30, 60, 190, "total");
  EXPECT_EQ(s.path.strands, (std::vector<uint32_t>{s0, s1, s3}));
  EXPECT_EQ(s.path.scheduler_delay, 30u);
  EXPECT_EQ(s.path.work, 120u);
  expect_consistent(s);
}

TEST(Sched, BusyDelayWhenEveryWorkerIsBusy) {
  // Two workers busy with long strands while a third strand waits: busy delay on the path, no
  // worker idle, no delay.
  ModelBuilder b;
  const uint32_t s0 = b.strand(10);
  const uint32_t x = b.strand(100, {s0});
  const uint32_t y = b.strand(100, {s0});
  const uint32_t z = b.strand(50, {s0});
  Model m = b.finish();
  set_time(m, s0, 0, 1000, 1010);
  set_time(m, x, 0, 1010, 1110);
  set_time(m, y, 1, 1010, 1110);
  set_time(m, z, 0, 1110, 1160);
  const Schedule s = analysis::compute_schedule(m);
  expect_components(s.per_worker[0].time, 160, 0, 0, 0, "worker 0");
  expect_components(s.per_worker[1].time, 100, 0, 0, 60, "worker 1");
  EXPECT_EQ(s.path.strands, (std::vector<uint32_t>{s0, z}));
  EXPECT_EQ(s.path.busy_delay, 100u);
  EXPECT_EQ(s.path.scheduler_delay, 0u);
  EXPECT_EQ(s.max_ready, 1u);
  expect_consistent(s);
}

TEST(Sched, SyntheticJoinPassesOnTheLastPredecessorsEnd) {
  // t1 and t2 join in a strand without timestamps; s3 after the join is ready when t1 ends.
  ModelBuilder b;
  const uint32_t s0 = b.strand(10);
  const uint32_t t1 = b.strand(40, {s0});
  const uint32_t t2 = b.strand(20, {s0});
  const uint32_t j = b.strand(0, {t1, t2}, kNone);
  const uint32_t s3 = b.strand(10, {j});
  Model m = b.finish();
  set_time(m, s0, 0, 1000, 1010);
  set_time(m, t1, 0, 1010, 1050);
  set_time(m, t2, 1, 1010, 1030);
  set_time(m, s3, 1, 1070, 1080);
  m.strands[j].thread = kNone;
  const Schedule s = analysis::compute_schedule(m);
  EXPECT_EQ(s.timed_strands, 4u);
  EXPECT_EQ(s.elapsed, 80u);
  // [1050, 1070): s3 ready, both idle: worker 1 (idle since 1030) in delay, worker 0 no-work-sched.
  expect_components(s.per_worker[0].time, 50, 0, 20, 10, "worker 0");
  expect_components(s.per_worker[1].time, 30, 20, 0, 30, "worker 1");
  EXPECT_EQ(s.path.strands, (std::vector<uint32_t>{s0, t1, s3}));
  EXPECT_EQ(s.path.scheduler_delay, 20u);
  expect_consistent(s);
}

TEST(Sched, OverlappingStrandsOfOneWorkerCountOnce) {
  // (oneTBB: a strand stopped in a wait while its thread runs another; were they ever recorded
  // overlapping, the worker is busy once, not twice.)
  ModelBuilder b;
  const uint32_t a = b.strand(100);
  const uint32_t c = b.strand(20, {a});
  const uint32_t d = b.strand(100);
  Model m = b.finish();
  set_time(m, a, 0, 1000, 1100);
  set_time(m, c, 0, 1100, 1150);
  set_time(m, d, 1, 1000, 1200);
  m.strands[c].start = 1050;  // overlaps a
  const Schedule s = analysis::compute_schedule(m);
  expect_components(s.per_worker[0].time, 150, 0, 0, 50, "worker 0");
  EXPECT_EQ(s.running_ticks, 100u + 100u + 200u);
  EXPECT_EQ(s.max_running, 3u);
  expect_consistent(s);
}

TEST(Sched, OneWorkerAndNoTimestamps) {
  Model chain = fixtures::chain_model({10, 20, 30});
  // No timestamps at all: nothing to break down.
  Schedule s = analysis::compute_schedule(chain);
  EXPECT_FALSE(s.timestamps);
  EXPECT_EQ(s.timed_strands, 0u);
  EXPECT_TRUE(s.steps.empty());
  // One worker, with a gap in the runtime before a ready strand: delay.
  set_time(chain, 0, 3, 1000, 1010);
  set_time(chain, 1, 3, 1010, 1030);
  set_time(chain, 2, 3, 1035, 1065);
  s = analysis::compute_schedule(chain);
  ASSERT_TRUE(s.timestamps);
  EXPECT_EQ(s.workers, 1u);
  EXPECT_EQ(s.per_worker[0].thread, 3u);
  expect_components(s.total, 60, 5, 0, 0, "total");
  expect_consistent(s);
  report::SchedRun run;
  run.model = &chain;
  run.schedule = &s;
  const auto notes = report::sched_notes(run);
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].find("one worker"), std::string::npos);
  // Everything at one instant: no time elapsed.
  for (uint32_t i = 0; i < 3; ++i) set_time(chain, i, 0, 5000, 5000);
  s = analysis::compute_schedule(chain);
  EXPECT_FALSE(s.timestamps);
  EXPECT_EQ(s.timed_strands, 3u);
}

TEST(Sched, DownsampleEdges) {
  // running 2 on [0, 10), 0 on [10, 15), 4 on [15, 20).
  const std::vector<SchedStep> steps = {{100, 2, 1}, {110, 0, 0}, {115, 4, 3}};
  EXPECT_TRUE(downsample(steps, 100, 120, 0).empty());
  EXPECT_TRUE(downsample(steps, 120, 120, 5).empty());
  auto one = downsample(steps, 100, 120, 1);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].begin, 100u);
  EXPECT_EQ(one[0].end, 120u);
  EXPECT_EQ(one[0].running_ticks, 40u);
  EXPECT_DOUBLE_EQ(one[0].running, 2.0);
  EXPECT_EQ(one[0].ready_ticks, 25u);
  EXPECT_EQ(one[0].running_max, 4u);
  EXPECT_EQ(one[0].ready_max, 3u);
  // More points than ticks: one point per tick.
  auto fine = downsample(steps, 100, 120, 1000);
  ASSERT_EQ(fine.size(), 20u);
  EXPECT_DOUBLE_EQ(fine[9].running, 2.0);
  EXPECT_DOUBLE_EQ(fine[10].running, 0.0);
  EXPECT_DOUBLE_EQ(fine[19].running, 4.0);
  // Uneven split: 3 points over 20 ticks are [100,106), [106,113), [113,120).
  auto three = downsample(steps, 100, 120, 3);
  ASSERT_EQ(three.size(), 3u);
  EXPECT_EQ(three[0].end, 106u);
  EXPECT_EQ(three[1].begin, 106u);
  EXPECT_EQ(three[1].end, 113u);
  EXPECT_EQ(three[2].end, 120u);
  EXPECT_EQ(three[1].running_ticks, 2u * 4);  // [106, 110) at 2, [110, 113) at 0
  EXPECT_DOUBLE_EQ(three[1].running, 8.0 / 7.0);
  EXPECT_EQ(three[2].running_ticks, 4u * 5);  // [113, 115) at 0, [115, 120) at 4
  EXPECT_EQ(three[2].running_max, 4u);
  // A step exactly on a boundary belongs to the interval it starts.
  auto two = downsample(steps, 100, 120, 2);
  EXPECT_EQ(two[0].running_max, 2u);
  EXPECT_EQ(two[1].running_ticks, 20u);
  EXPECT_EQ(two[1].running_max, 4u);
}

TEST(Sched, SparklineScalesToTheTop) {
  EXPECT_EQ(report::sparkline({0, 1, 2, 8, 100}, 8), " \u2581\u2582\u2588\u2588");
  EXPECT_EQ(report::sparkline({1, 2}, 0), "  ");
}

// Random DAGs scheduled by a list scheduler with random gaps on P workers (some strands without
// timestamps): the identities hold exactly.
TEST(Sched, RandomSchedulesAddUpExactly) {
  std::mt19937_64 rng(42);
  for (int iter = 0; iter < 300; ++iter) {
    fixtures::RandomModelOptions opt;
    opt.max_strands = 60;
    Model m = fixtures::random_model(rng, opt);
    fixtures::time_randomly(rng, m);
    const Schedule s = analysis::compute_schedule(m);
    if (!s.timestamps) continue;
    SCOPED_TRACE("iteration " + std::to_string(iter));
    expect_consistent(s);
    uint64_t durations = 0;
    for (const auto& st : m.strands)
      if (st.thread != kNone) durations += st.end - st.start;
    EXPECT_EQ(s.running_ticks, durations);
    EXPECT_EQ(s.total.work, durations);  // no overlaps on a worker
    if (HasFailure()) break;
  }
}

}  // namespace
}  // namespace tasklens
