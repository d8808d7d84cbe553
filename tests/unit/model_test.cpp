// The model builder on synthetic traces: exact work and span for each OpenMP rule, free of the
// timing noise of real runs (those are checked end to end in e2e_semantics_test.cpp).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <string>
#include <vector>

#include "analysis/profile.hpp"
#include "analysis/stream_profile.hpp"
#include "model/builder.hpp"
#include "model_team.hpp"
#include "trace/format.hpp"
#include "trace_builder.hpp"

namespace tasklens {
namespace {

using fixtures::expect_invariants;
using fixtures::expect_structure;
using fixtures::id;
using fixtures::TraceBuilder;
using namespace fixtures;  // model_team.hpp: the OMPT values and Region
using trace::EventKind;

TEST(Model, TaskwaitDoesNotWaitForGrandchildren) {
  TraceBuilder tb(2);
  Region r{tb};
  r.begin();
  uint64_t C = id(0, 5), G = id(0, 6);
  tb.ev(0, 20, EventKind::TaskCreate, {r.A, C, kExplicit, 0x2000});  // A: 10
  tb.ev(0, 30, EventKind::SyncBegin, {kTaskwait, r.A, 0x2100});      // A: 10
  tb.ev(0, 30, EventKind::TaskSchedule, {r.A, kSwitch, C});
  tb.ev(0, 130, EventKind::TaskCreate, {C, G, kExplicit, 0x2200});  // C: 100
  tb.ev(0, 140, EventKind::TaskSchedule, {C, kComplete, r.A});      // C: 10
  tb.ev(0, 140, EventKind::SyncEnd, {kTaskwait, r.A, 0x2100});
  tb.ev(1, 150, EventKind::TaskSchedule, {r.B, kSwitch, G});
  tb.ev(1, 550, EventKind::TaskSchedule, {G, kComplete, r.B});  // G: 400
  r.end(640, 650);                                              // A: 500 after the wait
  model::Model m = tb.build();
  expect_invariants(m);
  analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 10u + 10 + 100 + 10 + 400 + 500 + 1);  // + B's strand 5..6
  // A1 -> C1 -> C2 -> taskwait -> A3 (the continuation runs beside the grandchild G).
  EXPECT_EQ(p.span, 10u + 100 + 10 + 500);
}

TEST(Model, TaskgroupWaitsForAllDescendants) {
  TraceBuilder tb(2);
  Region r{tb};
  r.begin();
  uint64_t C = id(0, 5), G = id(0, 6);
  tb.ev(0, 20, EventKind::SyncBegin, {kTaskgroup, r.A, 0x2000});     // A: 10
  tb.ev(0, 30, EventKind::TaskCreate, {r.A, C, kExplicit, 0x2100});  // A: 10
  tb.ev(0, 40, EventKind::SyncWaitBegin, {kTaskgroup, r.A});         // A: 10
  tb.ev(0, 40, EventKind::TaskSchedule, {r.A, kSwitch, C});
  tb.ev(0, 140, EventKind::TaskCreate, {C, G, kExplicit, 0x2200});  // C: 100
  tb.ev(0, 150, EventKind::TaskSchedule, {C, kComplete, r.A});      // C: 10
  tb.ev(1, 160, EventKind::TaskSchedule, {r.B, kSwitch, G});
  tb.ev(1, 560, EventKind::TaskSchedule, {G, kComplete, r.B});  // G: 400
  tb.ev(0, 560, EventKind::SyncWaitEnd, {kTaskgroup, r.A});
  tb.ev(0, 560, EventKind::SyncEnd, {kTaskgroup, r.A, 0x2300});
  r.end(1060, 1070);  // A: 500 after the group
  model::Model m = tb.build();
  expect_invariants(m);
  analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 10u + 10 + 10 + 100 + 10 + 400 + 500 + 1);
  // ... -> C1 -> G -> end of taskgroup -> A's 500.
  EXPECT_EQ(p.span, 10u + 10 + 100 + 400 + 500);
  // The taskgroup is a site of its own, with its instance's span.
  bool found = false;
  for (const analysis::SiteRow& row : p.sites)
    if (m.sites[row.site].kind == model::SiteKind::Taskgroup) {
      found = true;
      EXPECT_EQ(row.count, 1u);
      EXPECT_EQ(row.span, 10u + 100 + 400);  // from inside the group to its end
    }
  EXPECT_TRUE(found);
}

TEST(Model, DependenceOnAFinishedPredecessorStillOrders) {
  TraceBuilder tb(2);
  Region r{tb};
  r.begin();
  uint64_t X = id(0, 5), Z = id(0, 6), Y = id(0, 7), addr = 0x7000;
  tb.ev(0, 20, EventKind::TaskCreate, {r.A, X, kExplicit, 0x2000});  // A: 10
  tb.ev(0, 20, EventKind::Dependences, {X, 1}, {addr, 3});           // depend(inout: x)
  tb.ev(0, 30, EventKind::TaskCreate, {r.A, Z, kExplicit, 0x2100});  // A: 10
  tb.ev(0, 40, EventKind::TaskSchedule, {r.A, kSwitch, Z});          // A: 10, then suspended
  tb.ev(1, 30, EventKind::TaskSchedule, {r.B, kSwitch, X});
  tb.ev(1, 330, EventKind::TaskSchedule, {X, kComplete, r.B});        // X: 300
  tb.ev(0, 390, EventKind::TaskSchedule, {Z, kComplete, r.A});        // Z: 350
  tb.ev(0, 400, EventKind::TaskCreate, {r.A, Y, kExplicit, 0x2200});  // A: 10; X is done
  tb.ev(0, 400, EventKind::Dependences, {Y, 1}, {addr, 1});           // depend(in: x)
  tb.ev(1, 410, EventKind::TaskSchedule, {r.B, kSwitch, Y});
  tb.ev(1, 610, EventKind::TaskSchedule, {Y, kComplete, r.B});  // Y: 200
  r.end(420, 700);
  model::Model m = tb.build();
  expect_invariants(m);
  analysis::Profile p = analysis::compute_profile(m);
  // A1 -> X -> Y = 510, although X had finished before Y was created; without the dependence
  // the longest path would be A1 -> A2 -> Z = 370.
  EXPECT_EQ(p.span, 10u + 300 + 200);
}

TEST(Model, EveryLoopChunkIsAStrandOfItsOwn) {
  TraceBuilder tb(2);
  Region r{tb};
  r.open_team();
  // A dynamic,1 loop of 8 iterations of 100: thread 0 runs 5 of them, thread 1 three.
  tb.ev(0, 10, EventKind::WorkBegin, {kLoop, r.A, 8, 0x3000});
  tb.ev(1, 10, EventKind::WorkBegin, {kLoop, r.B, 8, 0x3000});
  for (uint64_t i = 0; i < 5; ++i) tb.ev(0, 10 + 100 * i, EventKind::Dispatch, {kChunk, r.A, i, 1});
  for (uint64_t i = 0; i < 3; ++i)
    tb.ev(1, 10 + 100 * i, EventKind::Dispatch, {kChunk, r.B, 5 + i, 1});
  tb.ev(0, 510, EventKind::WorkEnd, {kLoop, r.A, 0x3001});
  tb.ev(1, 310, EventKind::WorkEnd, {kLoop, r.B, 0x3001});
  tb.ev(0, 510, EventKind::SyncBegin, {kBarrier, r.A, 0x3002});
  tb.ev(1, 310, EventKind::SyncBegin, {kBarrier, r.B, 0x3002});
  tb.ev(0, 520, EventKind::SyncEnd, {kBarrier, r.A, 0x3002});
  tb.ev(1, 520, EventKind::SyncEnd, {kBarrier, r.B, 0x3002});
  tb.ev(1, 520, EventKind::SyncBegin, {kBarrier, r.B, 0});
  r.end(520, 530);
  model::Model m = tb.build();
  expect_invariants(m);
  analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 800u);
  EXPECT_EQ(p.span, 100u);  // 8-way parallel whatever the two threads did
  bool found = false;
  for (const analysis::SiteRow& row : p.sites)
    if (m.sites[row.site].kind == model::SiteKind::Loop) {
      found = true;
      EXPECT_EQ(row.count, 1u);  // the two threads' shares are one loop instance
      EXPECT_EQ(row.work, 800u);
      EXPECT_EQ(row.span, 100u);
    }
  EXPECT_TRUE(found);
}

TEST(Model, BarrierJoinsTheWholeTeam) {
  TraceBuilder tb(2);
  Region r{tb};
  r.open_team();
  tb.ev(0, 410, EventKind::SyncBegin, {3, r.A, 0x4000});  // explicit barrier: A did 400
  tb.ev(1, 110, EventKind::SyncBegin, {3, r.B, 0x4000});  // B did 100
  tb.ev(0, 410, EventKind::SyncEnd, {3, r.A, 0x4000});
  tb.ev(1, 410, EventKind::SyncEnd, {3, r.B, 0x4000});
  tb.ev(1, 705, EventKind::SyncBegin, {kBarrier, r.B, 0});  // B: 295, A: 100
  r.end(510, 710);
  model::Model m = tb.build();
  expect_invariants(m);
  analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.span, 400u + 295);  // max of each phase, not max of the per-thread sums (500)
}

TEST(Model, UndeferredTasksJoinTheirParentOnlyInRealTeams) {
  for (uint64_t team : {1u, 2u}) {
    TraceBuilder tb(1);
    uint64_t I = id(0, 2), P = id(0, 3), A = id(0, 4), C = id(0, 5), D = id(0, 6);
    tb.ev(0, 0, EventKind::ImplicitBegin, {id(0, 1), I, 1, 1, kInitial});
    tb.ev(0, 10, EventKind::ParallelBegin, {I, P, team, 0, 0x1000});
    tb.ev(0, 10, EventKind::ImplicitBegin, {P, A, team, 0, kImplicit});
    for (uint64_t k = 0; k < 2; ++k) {  // two tasks of 100, each run at once by the creator
      uint64_t T = k ? D : C, t0 = 10 + 110 * k;
      tb.ev(0, t0 + 10, EventKind::TaskCreate, {A, T, kExplicit | kUndeferred, 0x2000});
      tb.ev(0, t0 + 10, EventKind::TaskSchedule, {A, kSwitch, T});
      tb.ev(0, t0 + 110, EventKind::TaskSchedule, {T, kComplete, A});
    }
    tb.ev(0, 240, EventKind::SyncBegin, {kTaskwait, A, 0x2100});
    tb.ev(0, 240, EventKind::SyncEnd, {kTaskwait, A, 0x2100});
    tb.ev(0, 250, EventKind::SyncBegin, {kBarrier, A, 0x1000});
    tb.ev(0, 250, EventKind::SyncEnd, {kBarrier, A, 0x1000});
    tb.ev(0, 250, EventKind::ImplicitEnd, {A, 0, kImplicit});
    tb.ev(0, 250, EventKind::ParallelEnd, {P, I, 0, 0x1000});
    model::Model m = tb.build();
    analysis::Profile p = analysis::compute_profile(m);
    EXPECT_EQ(p.work, 10u + 100 + 10 + 100 + 10 + 10) << "team " << team;
    if (team == 2) {
      EXPECT_EQ(p.span, p.work) << "if(0) tasks in a real team: serial";
      EXPECT_TRUE(m.warnings.empty());
    } else {
      // A one-thread team flags every task undeferred: they stay parallel, with a warning.
      EXPECT_EQ(p.span, 10u + 10 + 100 + 10) << "one-thread team";  // A1 A3 D post-wait
      EXPECT_EQ(m.warnings.size(), 1u);
    }
  }
}

TEST(Model, WaitingForACriticalSectionIsNotWork) {
  TraceBuilder tb(2);
  Region r{tb};
  r.begin();
  uint64_t C = id(0, 5);
  tb.ev(0, 20, EventKind::TaskCreate, {r.A, C, kExplicit, 0x2000});  // A: 10
  tb.ev(1, 21, EventKind::TaskSchedule, {r.B, kSwitch, C});
  tb.ev(1, 71, EventKind::MutexWaitBegin, {3});  // C: 50, then waits 300 for the critical
  tb.ev(1, 370, EventKind::MutexWaitEnd, {3});
  tb.ev(1, 470, EventKind::TaskSchedule, {C, kComplete, r.B});  // C: 100 in the critical
  r.end(520, 530);                                              // A: 500
  model::Model m = tb.build();
  expect_invariants(m);
  analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 10u + 500 + 50 + 100 + 1);
  EXPECT_EQ(p.span, 10u + 500);
}

// Regions split a strand's work (nested ones count for the outermost) and follow their task.
TEST(Model, RegionWorkIsSplitOffStrandsOfTheTaskThatBeganIt) {
  TraceBuilder tb(2);
  Region r{tb};
  r.begin();
  uint64_t C = id(0, 5);
  tb.ev(0, 20, EventKind::TaskCreate, {r.A, C, kExplicit, 0x2000});  // A: 10
  tb.ev(1, 21, EventKind::TaskSchedule, {r.B, kSwitch, C});
  tb.ev(1, 31, EventKind::RegionBegin, {0});                    // C: 10 outside
  tb.ev(1, 41, EventKind::RegionBegin, {1});                    // 10 inside; nested in 0
  tb.ev(1, 61, EventKind::RegionEnd, {1});                      // 20 inside
  tb.ev(1, 81, EventKind::RegionEnd, {0});                      // 20 inside: 50 in all
  tb.ev(1, 181, EventKind::TaskSchedule, {C, kComplete, r.B});  // C: 100 outside
  tb.ev(0, 200, EventKind::RegionBegin, {2});                   // A: 180
  tb.ev(0, 260, EventKind::RegionEnd, {2});                     // A: 60 inside region 2
  r.end(300, 310);                                              // A: 40
  model::Model m = tb.build();
  expect_invariants(m);
  uint64_t in0 = 0, in2 = 0;
  for (const model::RegionWork& w : m.region_work) {
    EXPECT_EQ(w.region == 1, false) << "a nested region counts for the outermost";
    if (w.region == 0) in0 += w.work;
    if (w.region == 2) in2 += w.work;
    EXPECT_LE(w.work, m.strands[w.strand].work);
  }
  EXPECT_EQ(in0, 50u);
  EXPECT_EQ(in2, 60u);
  EXPECT_TRUE(std::is_sorted(m.region_work.begin(), m.region_work.end(),
                             [](const auto& a, const auto& b) { return a.strand < b.strand; }));
  ASSERT_GE(m.region_names.size(), 3u);
  EXPECT_EQ(m.region_names[0], "region#0");  // the synthetic trace names none
}

TEST(Model, UnbalancedRegionsAreWarnedAbout) {
  TraceBuilder tb(2);
  Region r{tb};
  r.begin();
  uint64_t C = id(0, 5);
  tb.ev(0, 20, EventKind::TaskCreate, {r.A, C, kExplicit, 0x2000});
  tb.ev(1, 21, EventKind::TaskSchedule, {r.B, kSwitch, C});
  tb.ev(1, 31, EventKind::RegionBegin, {0});                   // never ended in C
  tb.ev(1, 81, EventKind::TaskSchedule, {C, kComplete, r.B});  // 50 inside, to the task's end
  tb.ev(0, 90, EventKind::RegionEnd, {0});                     // A never began it
  r.end(300, 310);
  model::Model m = tb.build();
  ASSERT_EQ(m.region_work.size(), 1u);
  EXPECT_EQ(m.region_work[0].work, 50u);
  ASSERT_EQ(m.warnings.size(), 2u);
  EXPECT_NE(m.warnings[0].find("not ended in the same task"), std::string::npos);
  EXPECT_NE(m.warnings[1].find("no matching begin"), std::string::npos);
}

// A strand's fragment: the code addresses of the events that started and ended it. A task's
// first strand starts at its creation site.
TEST(Model, StrandsKnowTheCodeFragmentTheyRan) {
  TraceBuilder tb(2);
  Region r{tb};
  r.begin();
  uint64_t C = id(0, 5);
  tb.ev(0, 20, EventKind::TaskCreate, {r.A, C, kExplicit, 0x2000});
  tb.ev(0, 30, EventKind::SyncBegin, {kTaskwait, r.A, 0x2100});
  tb.ev(0, 30, EventKind::TaskSchedule, {r.A, kSwitch, C});
  tb.ev(0, 130, EventKind::TaskSchedule, {C, kComplete, r.A});
  tb.ev(0, 130, EventKind::SyncEnd, {kTaskwait, r.A, 0x2100});
  r.end(640, 650);
  model::Model m = tb.build();
  expect_invariants(m);
  auto fragment_of_work = [&](uint64_t work) {
    for (const model::Strand& s : m.strands)
      if (s.work == work) return m.fragments.at(s.fragment);
    ADD_FAILURE() << "no strand with work " << work;
    return model::Fragment{};
  };
  EXPECT_EQ(fragment_of_work(10).begin, 0x1000u);  // A's first strand: parallel -> create
  EXPECT_EQ(fragment_of_work(10).end, 0x2000u);
  EXPECT_EQ(fragment_of_work(100).begin, 0x2000u);  // C: from its creation site to its end
  EXPECT_EQ(fragment_of_work(100).end, 0u);
  EXPECT_EQ(fragment_of_work(510).begin, 0x2100u);  // after the taskwait, to the barrier
  EXPECT_EQ(fragment_of_work(510).end, 0x1000u);
  EXPECT_EQ(m.fragments[0].begin, 0u);
  EXPECT_EQ(m.fragments[0].end, 0u);
}

// ------------------------------------------------------------------------ several metrics

// The trace of WaitingForACriticalSectionIsNotWork with `metrics`, whose counters grow at rates
// of their own: instructions 3 a tick; page faults 2 at tick 5, then one every 100 ticks. The
// root's strand before the region (0-10, the runtime's start-up) and the wait for the critical
// section (71-370: 3 page faults) are not work in any metric.
model::Model critical_section(const std::vector<trace::Metric>& metrics) {
  TraceBuilder tb(2);
  tb.metrics(metrics, [metrics](uint32_t, uint64_t time) {
    std::vector<uint64_t> v;
    for (trace::Metric m : metrics)
      if (m == trace::Metric::Instructions)
        v.push_back(3 * time);
      else if (m == trace::Metric::PageFaults)
        v.push_back(time / 100 + (time >= 5 ? 2 : 0));
    return v;
  });
  Region r{tb};
  r.begin();
  uint64_t C = id(0, 5);
  tb.ev(0, 20, EventKind::TaskCreate, {r.A, C, kExplicit, 0x2000});
  tb.ev(1, 21, EventKind::TaskSchedule, {r.B, kSwitch, C});
  tb.ev(1, 71, EventKind::MutexWaitBegin, {3});
  tb.ev(1, 370, EventKind::MutexWaitEnd, {3});
  tb.ev(1, 470, EventKind::TaskSchedule, {C, kComplete, r.B});
  r.end(520, 530);
  return tb.build();
}

uint64_t extra(const model::Model& m, size_t metric, uint32_t strand) {
  return m.extra_work.at(metric * m.strands.size() + strand);
}

// Every strand gets its amount of each further metric exactly as it gets its work.
TEST(Model, FurtherMetricsAreAttributedToStrandsLikeTheWork) {
  using trace::Metric;
  model::Model m = critical_section({Metric::Tsc, Metric::Instructions, Metric::PageFaults});
  expect_invariants(m);
  ASSERT_EQ(m.extra_metrics, (std::vector<std::string>{"instructions", "page-faults"}));
  ASSERT_EQ(m.extra_work.size(), 2 * m.strands.size());
  uint64_t work = 0, instructions = 0, faults = 0;
  std::vector<std::pair<uint64_t, uint64_t>> per_strand;  // (tsc work, page faults) of non-empty
  for (uint32_t s = 0; s < m.strands.size(); ++s) {
    EXPECT_EQ(extra(m, 0, s), 3 * m.strands[s].work) << "strand " << s;
    work += m.strands[s].work;
    instructions += extra(m, 0, s);
    faults += extra(m, 1, s);
    if (m.strands[s].work) per_strand.emplace_back(m.strands[s].work, extra(m, 1, s));
  }
  EXPECT_EQ(work, 10u + 500 + 50 + 100 + 1);
  EXPECT_EQ(instructions, 3 * work);
  // A 10-20: 0, A 20-520: 5, C 21-470 without 71-370: 0 + 1, B 11-12: 0.
  EXPECT_EQ(faults, 6u);
  std::sort(per_strand.begin(), per_strand.end());
  EXPECT_EQ(per_strand,
            (std::vector<std::pair<uint64_t, uint64_t>>{{1, 0}, {10, 0}, {150, 1}, {500, 5}}));
}

// The primary metric's work is the reference: a metric recorded beside it gets, strand by
// strand, what it gets as the primary one, and the other way round.
TEST(Model, AFurtherMetricMatchesTheSameMetricAsThePrimaryOne) {
  using trace::Metric;
  model::Model a = critical_section({Metric::Tsc, Metric::PageFaults, Metric::Instructions});
  model::Model b = critical_section({Metric::PageFaults, Metric::Instructions, Metric::Tsc});
  ASSERT_EQ(a.strands.size(), b.strands.size());
  EXPECT_EQ(b.metric, "page-faults");
  EXPECT_FALSE(b.metric_is_time);
  EXPECT_EQ(b.extra_metrics, (std::vector<std::string>{"instructions", "tsc"}));
  for (uint32_t s = 0; s < a.strands.size(); ++s) {
    EXPECT_EQ(extra(a, 0, s), b.strands[s].work) << "strand " << s;
    EXPECT_EQ(extra(b, 1, s), a.strands[s].work) << "strand " << s;
    EXPECT_EQ(extra(a, 1, s), extra(b, 0, s)) << "strand " << s;
  }
  // One metric: no further ones.
  model::Model one = critical_section({Metric::Tsc});
  EXPECT_TRUE(one.extra_metrics.empty());
  EXPECT_TRUE(one.extra_work.empty());
}

// A trace of a later minor version reads (its unknown records are skipped), with a warning.
TEST(Model, ATraceOfALaterMinorVersionReadsWithAWarning) {
  for (uint16_t minor : {trace::kVersionMinor, uint16_t(trace::kVersionMinor + 1)}) {
    TraceBuilder tb(2);
    tb.version_minor(minor);
    Region r{tb};
    r.begin();
    r.end(100, 110);
    model::Model m = tb.build();
    expect_structure(m);
    const bool warned = std::any_of(m.warnings.begin(), m.warnings.end(), [](const auto& w) {
      return w.find("written by a newer tasklens") != std::string::npos;
    });
    EXPECT_EQ(warned, minor > trace::kVersionMinor) << "minor version " << minor;
  }
}

// Many tasks on two threads: far more events than the event pipe holds at once, so that its
// decoder waits for the builder, and populates the builder's vectors meanwhile when they are
// in huge pages. The model is the same whichever way its memory was populated.
TEST(Model, ALargeTraceGivesTheSameModelWhicheverWayItsMemoryIsPopulated) {
  TraceBuilder tb(2);
  Region r{tb};
  r.open_team();
  const uint32_t kTasks = 40000;
  uint64_t t0 = 20, t1 = 20;
  for (uint32_t k = 0; k < kTasks; ++k) {
    const uint64_t child = id(0, 100 + k);
    tb.ev(0, t0, EventKind::TaskCreate, {r.A, child, kExplicit, 0x2000 + (k % 3) * 0x10});
    t0 += 3;
    // Every other task runs on thread 1, the others on thread 0 at once.
    const bool other = k % 2;
    uint64_t& t = other ? t1 : t0;
    t = std::max(t, t0);
    const uint64_t runner = other ? r.B : r.A;
    tb.ev(other, t, EventKind::TaskSchedule, {runner, kSwitch, child});
    t += 5 + k % 7;
    tb.ev(other, t, EventKind::TaskSchedule, {child, kComplete, runner});
    t += 1;
  }
  const uint64_t end = std::max(t0, t1) + 10;
  tb.ev(0, end - 5, EventKind::SyncBegin, {kTaskwait, r.A, 0x3000});
  tb.ev(0, end - 1, EventKind::SyncEnd, {kTaskwait, r.A, 0x3000});
  tb.ev(1, end - 2, EventKind::SyncBegin, {kBarrier, r.B, 0});
  r.end(end, end + 2);

  const model::Model a = tb.build({.huge_pages = false,
                                   .progress = {},
                                   .place_site = {},
                                   .folds_into_enclosing = {},
                                   .place_fragment = {}});
  const model::Model b = tb.build({.huge_pages = true,
                                   .progress = {},
                                   .place_site = {},
                                   .folds_into_enclosing = {},
                                   .place_fragment = {}});
  expect_invariants(a);
  EXPECT_EQ(a.task_count, kTasks);
  ASSERT_EQ(a.strands.size(), b.strands.size());
  for (size_t s = 0; s < a.strands.size(); ++s) {
    const model::Strand &x = a.strands[s], &y = b.strands[s];
    ASSERT_TRUE(x.work == y.work && x.start == y.start && x.end == y.end && x.thread == y.thread &&
                x.node == y.node && x.site == y.site && x.fragment == y.fragment)
        << "strand " << s;
  }
  ASSERT_EQ(a.nodes.size(), b.nodes.size());
  for (size_t v = 0; v < a.nodes.size(); ++v) {
    const model::Node &x = a.nodes[v], &y = b.nodes[v];
    ASSERT_TRUE(x.kind == y.kind && x.parent == y.parent && x.site == y.site &&
                x.instance == y.instance && x.strand_begin == y.strand_begin &&
                x.strand_end == y.strand_end && x.subtree_size == y.subtree_size)
        << "node " << v;
  }
  EXPECT_EQ(a.pred_begin, b.pred_begin);
  EXPECT_EQ(a.preds, b.preds);
  EXPECT_EQ(a.sites.size(), b.sites.size());
  EXPECT_EQ(a.warnings, b.warnings);
}

TEST(Model, TraceWithoutOpenMPActivityIsAClearError) {
  TraceBuilder tb(1);
  tb.ev(0, 5, EventKind::ThreadBegin, {1});
  try {
    tb.build();
    ADD_FAILURE() << "no error";
  } catch (const model::ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("never started"), std::string::npos);
  }
}

// Damaged traces (found by flipping bytes of real ones): what the ids say cannot be trusted.
TEST(Model, ATaskIdMetAsARegionIdDoesNotCrash) {
  TraceBuilder tb(2);
  Region r{tb};
  r.begin();
  // A second parallel region whose id is implicit task A's: its index must not be taken for a
  // region's (it indexed the regions with a task's index and crashed).
  tb.ev(0, 20, EventKind::ParallelBegin, {r.A, r.A, 1, 0, 0x1100});
  tb.ev(0, 21, EventKind::ImplicitBegin, {r.A, id(0, 9), 1, 0, kImplicit});
  tb.ev(0, 22, EventKind::ImplicitEnd, {id(0, 9), 0, kImplicit});
  tb.ev(0, 23, EventKind::ParallelEnd, {r.A, r.A, 0, 0x1100});
  r.end(40, 50);
  model::Model m = tb.build();
  expect_invariants(m);
}

// A task created twice made its parent's list of children a cycle, which the taskwait then
// walked forever, adding edges until the memory ran out.
TEST(Model, ATaskCreatedTwiceIsAnAnomalyNotALoop) {
  TraceBuilder tb(2);
  Region r{tb};
  r.begin();
  uint64_t C = id(0, 5), D = id(0, 6);
  tb.ev(0, 20, EventKind::TaskCreate, {r.A, C, kExplicit, 0x2000});
  tb.ev(0, 22, EventKind::TaskCreate, {r.A, D, kExplicit, 0x2000});
  tb.ev(0, 24, EventKind::TaskCreate, {r.A, C, kExplicit, 0x2000});  // C again
  tb.ev(0, 30, EventKind::SyncBegin, {kTaskwait, r.A, 0x2100});
  tb.ev(0, 30, EventKind::TaskSchedule, {r.A, kSwitch, C});
  tb.ev(0, 40, EventKind::TaskSchedule, {C, kComplete, D});
  tb.ev(0, 50, EventKind::TaskSchedule, {D, kComplete, r.A});
  tb.ev(0, 50, EventKind::SyncEnd, {kTaskwait, r.A, 0x2100});
  r.end(60, 70);
  model::Model m = tb.build();
  expect_structure(m);
  EXPECT_EQ(m.task_count, 2u);
  ASSERT_EQ(m.warnings.size(), 1u);  // the anomaly is reported
  EXPECT_NE(m.warnings[0].find("did not match"), std::string::npos) << m.warnings[0];
}

// A thread whose start the recorder did not see (started before main(), or by a library) that
// runs a parallel region has an initial task of its own: its work runs beside the program's,
// and the report says so.
TEST(Model, ASecondInitialThreadIsModelledBesideTheFirstWithAWarning) {
  TraceBuilder tb(2);
  const uint64_t I0 = id(0, 1), P0 = id(0, 2), A0 = id(0, 3);
  const uint64_t I1 = id(1, 1), P1 = id(1, 2), A1 = id(1, 3);
  for (uint32_t t = 0; t < 2; ++t) {
    const uint64_t I = t ? I1 : I0, P = t ? P1 : P0, A = t ? A1 : A0;
    const uint64_t begin = t ? 20 : 0, end = t ? 330 : 110, site = t ? 0x1100 : 0x1000;
    tb.ev(t, begin, EventKind::ImplicitBegin, {0, I, 1, 1, kInitial});
    tb.ev(t, begin + 10, EventKind::ParallelBegin, {I, P, 1, 0, site});
    tb.ev(t, begin + 10, EventKind::ImplicitBegin, {P, A, 1, 0, kImplicit});
    tb.ev(t, end, EventKind::SyncBegin, {kBarrier, A, site});
    tb.ev(t, end, EventKind::SyncEnd, {kBarrier, A, site});
    tb.ev(t, end, EventKind::ImplicitEnd, {A, 0, kImplicit});
    tb.ev(t, end, EventKind::ParallelEnd, {P, I, 0, site});
  }
  tb.ev(1, 340, EventKind::ImplicitEnd, {I1, 1, kInitial});
  tb.ev(0, 500, EventKind::ImplicitEnd, {I0, 1, kInitial});  // main waited in join from 110
  model::Model m = tb.build();
  expect_structure(m);
  analysis::Profile p = analysis::compute_profile(m);
  // The main thread's first 10 before its first region are the runtime's start-up, not work;
  // the second thread's 10 before its region are before it had a task at all.
  EXPECT_EQ(p.work, 100u + 390 + 300 + 10);
  EXPECT_EQ(p.span, 100u + 390);  // the main thread's chain, its join wait included
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_NE(m.warnings[0].find("1 thread(s) other than the program's first"), std::string::npos)
      << m.warnings[0];
}

// A thread the program starts itself (pthread_create) is a child of the creating task, its
// OpenMP initial task is the thread's task, and pthread_join joins it; the joiner's time blocked
// in the join is not work.
TEST(Model, ThreadsTheProgramStartsAreSpawnedAndJoined) {
  TraceBuilder tb(2);
  const uint64_t I0 = id(0, 1), T = id(0, 2), I1 = id(1, 1), P = id(1, 2), A1 = id(1, 3);
  tb.ev(0, 0, EventKind::ImplicitBegin, {0, I0, 1, 1, kInitial});
  tb.ev(0, 100, EventKind::UserThreadCreate, {T, 0x5000});  // root: 100
  tb.ev(1, 110, EventKind::UserThreadStart, {T});
  tb.ev(1, 115, EventKind::ThreadBegin, {1});  // OMPT: the thread becomes an OpenMP root
  tb.ev(1, 120, EventKind::ImplicitBegin, {0, I1, 1, 1, kInitial});
  tb.ev(1, 150, EventKind::ParallelBegin, {I1, P, 1, 0, 0x1000});  // T: 40
  tb.ev(1, 150, EventKind::ImplicitBegin, {P, A1, 1, 0, kImplicit});
  tb.ev(1, 650, EventKind::SyncBegin, {kBarrier, A1, 0x1000});  // A1: 500
  tb.ev(1, 650, EventKind::SyncEnd, {kBarrier, A1, 0x1000});
  tb.ev(1, 650, EventKind::ImplicitEnd, {A1, 0, kImplicit});
  tb.ev(1, 650, EventKind::ParallelEnd, {P, I1, 0, 0x1000});
  tb.ev(1, 700, EventKind::UserThreadEnd, {T});              // T: 50
  tb.ev(0, 300, EventKind::UserThreadJoinBegin, {T});        // root: 200
  tb.ev(0, 710, EventKind::UserThreadJoinEnd, {T});          // blocked: not work
  tb.ev(0, 760, EventKind::ImplicitEnd, {I0, 1, kInitial});  // root: 50
  model::Model m = tb.build();
  expect_invariants(m);
  analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 100u + 200 + 40 + 500 + 50 + 50);
  EXPECT_EQ(p.span, 100u + 40 + 500 + 50 + 50);  // creation -> the thread -> join -> root
  bool found = false;
  for (const analysis::SiteRow& row : p.sites)
    if (m.sites[row.site].kind == model::SiteKind::Thread) {
      found = true;
      EXPECT_EQ(m.sites[row.site].address, 0x5000u);
      EXPECT_EQ(row.count, 1u);
      EXPECT_EQ(row.work, 40u + 500 + 50);
      EXPECT_EQ(row.span, 40u + 500 + 50);
    }
  EXPECT_TRUE(found);
  EXPECT_EQ(m.task_count, 0u) << "a thread is not a task";
}

// A thread created outside every task (before the runtime began, here) hangs under the program in
// memory; one pass refuses it in one line that names it.
TEST(Model, AThreadStartedOutsideEveryTaskIsRefusedInOnePass) {
  TraceBuilder tb(2);
  const uint64_t I0 = id(0, 1), T = id(0, 2);
  tb.ev(0, 50, EventKind::UserThreadCreate, {T, 0x5000});
  tb.ev(0, 60, EventKind::ImplicitBegin, {0, I0, 1, 1, kInitial});
  tb.ev(1, 110, EventKind::UserThreadStart, {T});
  tb.ev(1, 700, EventKind::UserThreadEnd, {T});
  tb.ev(0, 300, EventKind::UserThreadJoinBegin, {T});
  tb.ev(0, 710, EventKind::UserThreadJoinEnd, {T});
  tb.ev(0, 760, EventKind::ImplicitEnd, {I0, 1, kInitial});
  model::Model m = tb.build();  // (the one-pass checks skip what one pass refuses)
  expect_structure(m);
  const std::vector<uint8_t> bytes = tb.bytes();
  char path[] = "/tmp/tasklens_model_testXXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  close(fd);
  const trace::TraceFile file = trace::TraceFile::open(path);
  unlink(path);
  analysis::StreamProfile sink(analysis::StreamProfile::kSitesAsTheyCome, 3);
  try {
    model::build_streaming(file, sink, {});
    ADD_FAILURE() << "read in one pass";
  } catch (const model::NotInOnePass& e) {
    EXPECT_NE(std::string(e.what()).find("the recording has threads of its own started outside "
                                         "every task, which tasklens cannot read in one pass yet"),
              std::string::npos)
        << e.what();
  }
}

// The end of a barrier that never began asked for the phase before the first (index -1).
TEST(Model, ABarrierEndWithoutItsBeginIsAnAnomaly) {
  TraceBuilder tb(2);
  Region r{tb};
  r.open_team();
  tb.ev(0, 20, EventKind::SyncEnd, {kBarrier, r.A, 0x1000});
  tb.ev(1, 20, EventKind::SyncBegin, {kBarrier, r.B, 0});
  r.end(30, 40);
  model::Model m = tb.build();
  expect_structure(m);
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_NE(m.warnings[0].find("did not match"), std::string::npos) << m.warnings[0];
}

TEST(Model, AnIdBeyondWhatTheTraceCouldNumberIsACorruptedTrace) {
  for (uint64_t bad : {id(0, uint64_t{1} << 39), id(70000, 1)}) {
    TraceBuilder tb(2);
    Region r{tb};
    r.begin();
    tb.ev(0, 20, EventKind::TaskCreate, {r.A, bad, kExplicit, 0x2000});
    r.end(40, 50);
    try {
      tb.build();  // it resized a vector to the id (out of memory, or a crash)
      ADD_FAILURE() << "no error for id " << bad;
    } catch (const trace::TraceError& e) {
      EXPECT_NE(std::string(e.what()).find("corrupted event stream"), std::string::npos)
          << e.what();
    }
  }
}

// Found by the damaged-trace fuzzing (damaged_trace_test.cpp): the model sized its table of
// region names by the id of a RegionBegin event.
TEST(Model, ARegionIdBeyondTheRecordersLimitIsACorruptedTrace) {
  TraceBuilder tb(2);
  Region r{tb};
  r.begin();
  tb.ev(0, 20, EventKind::RegionBegin, {uint64_t{1} << 36});
  tb.ev(0, 30, EventKind::RegionEnd, {uint64_t{1} << 36});
  r.end(40, 50);
  try {
    tb.build();
    ADD_FAILURE() << "no error for the region id";
  } catch (const trace::TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("region id 68719476736 is out of range"),
              std::string::npos)
        << e.what();
  }
}

// Also found by the fuzzing: a task resumed (a schedule event) that was never created or begun
// had no construct to hang its strand in.
TEST(Model, ATaskResumedThatNeverBeganIsAnAnomaly) {
  TraceBuilder tb(2);
  Region r{tb};
  r.begin();
  const uint64_t ghost = id(1, 9);
  tb.ev(1, 20, EventKind::ImplicitBegin, {0, ghost, 1, 0, kInitial});  // a second initial task
  tb.ev(1, 30, EventKind::TaskSchedule, {r.B, kSwitch, ghost});
  tb.ev(1, 40, EventKind::TaskSchedule, {ghost, kComplete, r.B});
  r.end(60, 70);
  model::Model m = tb.build();
  expect_structure(m);
  EXPECT_FALSE(m.warnings.empty());
}

}  // namespace
}  // namespace tasklens
