// The OpenMP runtime's own cost taken out of the strands (src/model/builder_runtime_cost.cpp):
// of each interval of a calibrated kind, from the kind's 64th interval on, min(interval, M, f x C)
// with M the kind's median in the recording, C the calibration's and f the speed scale, the
// median of M / C over the intervals, between 0.5 and 1.
#include <gtest/gtest.h>

#include <vector>

#include "model/builder.hpp"
#include "model_team.hpp"
#include "trace_builder.hpp"

namespace tasklens::fixtures {
namespace {

constexpr uint16_t kCreate = trace::interval_key(EventKind::TaskCreate, 0);

trace::RuntimeCostEntry cost(uint16_t before, uint16_t after, bool solo, uint64_t ticks) {
  trace::RuntimeCostEntry e{};
  e.before = before;
  e.after = after;
  e.solo = solo ? 1 : 0;
  e.samples = 100;
  e.milli_ticks = ticks * 1000;
  return e;
}

// Thread 0's implicit task creates `n` tasks `gap` ticks apart (n - 1 intervals between two
// creations, in a team of two); thread 1, waiting in the barrier, runs them afterwards.
model::Model creations(uint32_t n, uint64_t gap, std::vector<trace::RuntimeCostEntry> costs,
                       model::BuildOptions options = {}) {
  TraceBuilder tb(2);
  tb.runtime_cost(std::move(costs));
  Region r{tb};
  r.begin();
  uint64_t t = 20;
  for (uint32_t i = 0; i < n; ++i, t += gap)
    tb.ev(0, t, EventKind::TaskCreate, {r.A, id(0, 100 + i), kExplicit, 0x2000});
  uint64_t u = t;
  for (uint32_t i = 0; i < n; ++i, u += 10) {
    tb.ev(1, u, EventKind::TaskSchedule, {r.B, kSwitch, id(0, 100 + i)});
    tb.ev(1, u + 5, EventKind::TaskSchedule, {id(0, 100 + i), kComplete, r.B});
  }
  r.end(t, u + 10);
  model::Model m = tb.build(options);
  expect_structure(m);
  return m;
}

uint64_t total_work(const model::Model& m) {
  uint64_t w = 0;
  for (const auto& s : m.strands) w += s.work;
  return w;
}

TEST(RuntimeCost, WhereTheProgramDoesRealWorkTheCalibrationsCostGoes) {
  // 199 intervals of 100 ticks (their median: the histogram bucket's floor, 96); the calibration
  // says 30: from the 64th interval on, 30 each (M / C = 3.2: no scaling).
  const model::Model kept = creations(200, 100, {}),
                     taken = creations(200, 100, {cost(kCreate, kCreate, false, 30)});
  EXPECT_EQ(taken.runtime_removed, (199u - 63) * 30);
  EXPECT_EQ(total_work(kept) - total_work(taken), taken.runtime_removed);
  EXPECT_EQ(taken.runtime_cost_kinds, 1u);
  EXPECT_DOUBLE_EQ(taken.runtime_cost_scale, 1.0);
  EXPECT_EQ(kept.runtime_removed, 0u);
}

TEST(RuntimeCost, NeverMoreThanTheKindsMedianInTheRecording) {
  // The calibration ran on a slower moment (500 or 150 ticks): the recording's median, 96.
  const model::Model slow = creations(200, 100, {cost(kCreate, kCreate, false, 500)});
  EXPECT_EQ(slow.runtime_removed, (199u - 63) * 96);
  EXPECT_DOUBLE_EQ(slow.runtime_cost_scale, 0.5);
  const model::Model slower = creations(200, 100, {cost(kCreate, kCreate, false, 150)});
  EXPECT_EQ(slower.runtime_removed, (199u - 63) * 96);
  EXPECT_NEAR(slower.runtime_cost_scale, 0.64, 1e-9);
}

// Thread 0 creates `n` tasks 100 ticks apart and thread 1 runs each 10 ticks after its creation
// for 5 ticks: the two kinds of interval come in together.
model::Model interleaved(uint32_t n, std::vector<trace::RuntimeCostEntry> costs) {
  TraceBuilder tb(2);
  tb.runtime_cost(std::move(costs));
  Region r{tb};
  r.begin();
  uint64_t t = 20;
  for (uint32_t i = 0; i < n; ++i, t += 100) {
    tb.ev(0, t, EventKind::TaskCreate, {r.A, id(0, 100 + i), kExplicit, 0x2000});
    tb.ev(1, t + 10, EventKind::TaskSchedule, {r.B, kSwitch, id(0, 100 + i)});
    tb.ev(1, t + 15, EventKind::TaskSchedule, {id(0, 100 + i), kComplete, r.B});
  }
  r.end(t, t + 10);
  model::Model m = tb.build();
  expect_structure(m);
  return m;
}

TEST(RuntimeCost, AFasterRunScalesTheCalibrationDown) {
  // The tasks' intervals (5 ticks) run at half their calibration (10): the speed scale falls to
  // 0.5 once they are as many as the creations' intervals, whose 30 then becomes 15.
  const uint16_t run = trace::interval_key(EventKind::TaskSchedule, kSwitch),
                 done = trace::interval_key(EventKind::TaskSchedule, kComplete);
  const model::Model alone = interleaved(300, {cost(kCreate, kCreate, false, 30)});
  EXPECT_EQ(alone.runtime_removed, (299u - 63) * 30);
  EXPECT_DOUBLE_EQ(alone.runtime_cost_scale, 1.0);
  const model::Model scaled =
      interleaved(300, {cost(kCreate, kCreate, false, 30), cost(run, done, false, 10)});
  EXPECT_DOUBLE_EQ(scaled.runtime_cost_scale, 0.5);
  const uint64_t tasks_part = (300u - 63) * 5;  // min(5, 0.5 x 10) or min(5, 10): 5 each
  ASSERT_GT(scaled.runtime_removed, tasks_part);
  const uint64_t creations_part = scaled.runtime_removed - tasks_part;
  EXPECT_LT(creations_part, alone.runtime_removed);
  EXPECT_GE(creations_part, (299u - 63) * 15);
}

TEST(RuntimeCost, OnlyTheCalibratedKindOfIntervalInItsKindOfTeam) {
  // The same kind of interval measured in one-thread teams only, or another kind: nothing.
  EXPECT_EQ(creations(200, 100, {cost(kCreate, kCreate, true, 40)}).runtime_removed, 0u);
  const uint16_t schedule = trace::interval_key(EventKind::TaskSchedule, kSwitch);
  EXPECT_EQ(creations(200, 100, {cost(kCreate, schedule, false, 40)}).runtime_removed, 0u);
}

TEST(RuntimeCost, FewIntervalsOfAKindKeepTheirTime) {
  // 63 intervals: no median yet, nothing taken.
  EXPECT_EQ(creations(64, 100, {cost(kCreate, kCreate, false, 40)}).runtime_removed, 0u);
}

TEST(RuntimeCost, KeptOnRequest) {
  model::BuildOptions keep;
  keep.keep_runtime_cost = true;
  const model::Model m = creations(200, 100, {cost(kCreate, kCreate, false, 40)}, keep);
  EXPECT_EQ(m.runtime_removed, 0u);
  EXPECT_EQ(m.runtime_cost_kinds, 0u);
  EXPECT_EQ(total_work(m), total_work(creations(200, 100, {})));
}

TEST(RuntimeCost, TheCalibrationsSinkSeesEveryIntervalOfAStrandByKind) {
  std::vector<model::IntervalSample> samples;
  model::BuildOptions sink;
  sink.interval_sink = &samples;
  const model::Model m = creations(50, 100, {cost(kCreate, kCreate, false, 40)}, sink);
  EXPECT_EQ(m.runtime_removed, 0u);  // a sink only looks
  size_t between_creations = 0;
  for (const model::IntervalSample& s : samples)
    if (s.before == kCreate && s.after == kCreate) {
      ++between_creations;
      EXPECT_EQ(s.ticks, 100u);
      EXPECT_EQ(s.solo, 0);
    }
  EXPECT_EQ(between_creations, 49u);
  // Thread 1's tasks: from their start to their end, 5 ticks each.
  size_t in_tasks = 0;
  for (const model::IntervalSample& s : samples)
    if (s.before == trace::interval_key(EventKind::TaskSchedule, kSwitch) &&
        s.after == trace::interval_key(EventKind::TaskSchedule, kComplete)) {
      ++in_tasks;
      EXPECT_EQ(s.ticks, 5u);
    }
  EXPECT_EQ(in_tasks, 50u);
}

}  // namespace
}  // namespace tasklens::fixtures
