// Time a thread spent off its CPU (src/model/builder_off_cpu.cpp), on synthetic traces: an
// interval is taken out of each strand it overlaps, only the overlapping part, and the part that
// falls in a wait (which is no work anyway) is counted under no cause; each cause inside one
// strand: preemption (the TSC's work only), blocking, recorder stalls, slow page faults, the
// recorder's own cost per event; and the host's steal, which nothing can take out, reported.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "analysis/profile.hpp"
#include "model/builder.hpp"
#include "model_team.hpp"
#include "trace/format.hpp"
#include "trace_builder.hpp"

namespace tasklens {
namespace {

using fixtures::expect_invariants;
using fixtures::id;
using fixtures::TraceBuilder;
using namespace fixtures;  // model_team.hpp: the OMPT values and Region
using trace::EventKind;

// A creates C at 20 and works to 520; B runs C from 21 to 41, then waits in its barrier.
//  - thread 0 preempted 15..25: 5 out of A's strand before the creation, 5 out of the next;
//  - thread 1 preempted 30..60: 11 out of C, the other 19 in B's barrier wait (no strand);
//  - thread 0 blocked 510..530: 10 out of A's last strand, 10 in its barrier wait.
TEST(ModelOffCpu, AnIntervalIsSplitAtTheEventsItSpansAndAWaitKeepsItsPart) {
  TraceBuilder tb(2);
  tb.preempt(0, 15, 25);
  tb.preempt(1, 30, 60);
  tb.blocked(0, 510, 530);
  Region r{tb};
  r.begin();
  const uint64_t C = id(0, 5);
  tb.ev(0, 20, EventKind::TaskCreate, {r.A, C, kExplicit, 0x2000});  // A: 10 - 5
  tb.ev(1, 21, EventKind::TaskSchedule, {r.B, kSwitch, C});
  tb.ev(1, 41, EventKind::TaskSchedule, {C, kComplete, r.B});  // C: 20 - 11
  r.end(520, 540);                                             // A: 500 - 5 - 10
  const model::Model m = tb.build();
  expect_invariants(m);
  std::vector<uint64_t> works;
  for (const model::Strand& s : m.strands)
    if (s.work) works.push_back(s.work);
  std::sort(works.begin(), works.end());
  EXPECT_EQ(works, (std::vector<uint64_t>{1, 5, 9, 485}));  // B's 11..12 is the 1
  EXPECT_EQ(m.preempted, 5u + 5 + 11);
  // The whole run's preemption counts the part in B's wait too (not the blocking): the
  // threads' time runs from the first strand with work (the region's, at 10) to the last (2
  // threads).
  EXPECT_EQ(m.preempted_in_run, 10u + 30);
  EXPECT_EQ(m.threads_time, 2 * (540u - 10));
  EXPECT_EQ(m.blocked, 10u);
  ASSERT_EQ(m.blocked_work.size(), 1u);
  EXPECT_EQ(m.strands[m.blocked_work[0].strand].work, 485u);
  EXPECT_EQ(m.blocked_work[0].ticks, 10u);
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 500u);
  EXPECT_EQ(p.span, 5u + 485);
}

// ------------------------------------------------------------------------ each cause

// The amount of further metric `metric` (0: the first after the primary one) of `strand`.
uint64_t extra(const model::Model& m, size_t metric, uint32_t strand) {
  return m.extra_work.at(metric * m.strands.size() + strand);
}

// Time another process had the CPU is taken out of the TSC's work, primary or not, and only out
// of it: task-clock (modelled here as the thread's CPU time) stopped by itself.
TEST(ModelOffCpu, PreemptionIsTakenOutOfTheTscOnly) {
  using trace::Metric;
  for (bool tsc_first : {true, false}) {
    std::vector<Metric> metrics = tsc_first ? std::vector<Metric>{Metric::Tsc, Metric::TaskClock}
                                            : std::vector<Metric>{Metric::TaskClock, Metric::Tsc};
    TraceBuilder tb(2);
    tb.metrics(metrics, [](uint32_t t, uint64_t time) {
      uint64_t off = t == 1 && time > 30 ? std::min<uint64_t>(time, 60) - 30 : 0;
      return std::vector<uint64_t>{time - off};
    });
    tb.preempt(1, 30, 60);
    Region r{tb};
    r.begin();
    uint64_t C = id(0, 5);
    tb.ev(0, 20, EventKind::TaskCreate, {r.A, C, kExplicit, 0x2000});
    tb.ev(1, 21, EventKind::TaskSchedule, {r.B, kSwitch, C});
    tb.ev(1, 221, EventKind::TaskSchedule, {C, kComplete, r.B});  // C: 200 - 30 preempted
    r.end(520, 530);
    model::Model m = tb.build();
    expect_invariants(m);
    uint64_t work = 0, other = 0;
    for (uint32_t s = 0; s < m.strands.size(); ++s) {
      EXPECT_EQ(m.strands[s].work, extra(m, 0, s)) << "strand " << s;
      work += m.strands[s].work;
      other += extra(m, 0, s);
    }
    EXPECT_EQ(work, 10u + 500 + 170 + 1) << "tsc first: " << tsc_first;
    EXPECT_EQ(other, work);
    // Reported preemption is in the primary metric's unit: only when it is the TSC.
    EXPECT_EQ(m.preempted, tsc_first ? 30u : 0u);
    EXPECT_EQ(m.tsc_per_second, 1e9);
  }
}

// A region where A creates task C at 20 and B runs it from 21 to 221 (200 ticks); `inside_c`
// adds B's events in between. Returns the model built with `options`.
model::Model one_task_region(TraceBuilder& tb, const model::BuildOptions& options,
                             const std::function<void()>& inside_c) {
  Region r{tb};
  r.begin();
  uint64_t C = id(0, 5);
  tb.ev(0, 20, EventKind::TaskCreate, {r.A, C, kExplicit, 0x2000});
  tb.ev(1, 21, EventKind::TaskSchedule, {r.B, kSwitch, C});
  inside_c();
  tb.ev(1, 221, EventKind::TaskSchedule, {C, kComplete, r.B});
  r.end(520, 530);
  model::Model m = tb.build(options);
  expect_invariants(m);
  return m;
}

uint64_t total_work(const model::Model& m) {
  uint64_t work = 0;
  for (const auto& s : m.strands) work += s.work;
  return work;
}

// A thread that blocks inside a task (sleep, I/O, a futex the runtime does not see) does no
// work: the blocked time is taken out of the strand (blocked_removed), unless the caller keeps
// wall-time semantics; preemption and a wait inside the recorder are taken out either way, each
// counted under its own cause.
TEST(ModelOffCpu, BlockedTimeAndRecorderStallsAreTakenOutOfTheStrand) {
  for (bool blocked_as_work : {false, true}) {
    TraceBuilder tb(2);
    tb.blocked(1, 40, 90);    // 50 blocked inside C
    tb.preempt(1, 100, 110);  // 10 preempted inside C
    model::BuildOptions options;
    options.blocked_as_work = blocked_as_work;
    model::Model m = one_task_region(tb, options, [&] {
      // C waited 30 ticks for a buffer, ending at 150; a preemption inside that wait is the
      // wait's.
      tb.preempt(1, 125, 135);
      tb.ev(1, 150, EventKind::RecorderStall, {30});
    });
    const uint64_t work = total_work(m);
    const uint64_t c_work = 200 - 30 - 10 - (blocked_as_work ? 0 : 50);
    EXPECT_EQ(work, 10u + 500 + c_work + 1) << "blocked as work: " << blocked_as_work;
    EXPECT_EQ(m.recorder_stalled, 30u);
    EXPECT_EQ(m.preempted, 10u);
    EXPECT_EQ(m.blocked, blocked_as_work ? 0u : 50u);
    EXPECT_EQ(m.blocked_removed, !blocked_as_work);
    // The strand that blocked (C's, from 21 to 221) keeps its blocked time apart.
    if (blocked_as_work) {
      EXPECT_TRUE(m.blocked_work.empty());
    } else {
      ASSERT_EQ(m.blocked_work.size(), 1u);
      const model::Strand& s = m.strands[m.blocked_work[0].strand];
      EXPECT_EQ(s.start, 21u);
      EXPECT_EQ(m.blocked_work[0].ticks, 50u);
    }
  }
}

// A page fault far slower than the thread's usual ones (the recorder's SlowFaults: the part
// beyond a usual fault) is the machine's time, not the program's: taken out of the strand it
// falls in and counted apart, unless the caller keeps it; an interval that overlaps a switch
// (which a damaged trace may hold) is not taken out twice.
TEST(ModelOffCpu, SlowPageFaultsAreTakenOutOfTheStrandUnlessKept) {
  for (bool keep : {false, true}) {
    TraceBuilder tb(2);
    tb.slow_fault(1, 40, 100);   // 60 inside C
    tb.preempt(1, 90, 110);      // overlaps the fault by 10: 20 preempted, 50 more of the fault
    tb.slow_fault(0, 300, 340);  // 40 inside A's continuation
    model::BuildOptions options;
    options.keep_slow_faults = keep;
    model::Model m = one_task_region(tb, options, [] {});
    const uint64_t work = total_work(m);
    const uint64_t faults = keep ? 0 : 60 + 40;
    EXPECT_EQ(m.slow_faults, faults) << "keep: " << keep;
    EXPECT_EQ(m.preempted, keep ? 20u : 10u) << "keep: " << keep;
    EXPECT_EQ(work, 10u + 500 + 200 + 1 - faults - m.preempted) << "keep: " << keep;
  }
}

// The program's start-up (before main(), or without that mark before the first parallel region)
// is not work, and the builder clears it from the first strand: what it had taken out of it
// (the loader blocked on the disk, preempted) is then taken out of no strand either, so the
// totals and the blocked strands count only time inside the strands that remain.
TEST(ModelOffCpu, WhatTheStartUpLostIsNotCountedAsTakenOut) {
  for (bool main_marked : {true, false}) {
    TraceBuilder tb(2);
    tb.blocked(0, 2, 6);  // the loader, before main
    tb.preempt(0, 6, 7);
    tb.blocked(0, 9, 10);  // after main, before the region
    Region r{tb};
    tb.ev(0, 0, EventKind::ImplicitBegin, {id(0, 1), r.I, 1, 1, kInitial});
    if (main_marked)
      tb.ev(0, 8, EventKind::Mark, {static_cast<uint64_t>(trace::MarkKind::MainStart)});
    tb.ev(0, 10, EventKind::ParallelBegin, {r.I, r.P, 2, 0, 0x1000});
    tb.ev(0, 10, EventKind::ImplicitBegin, {r.P, r.A, 2, 0, kImplicit});
    tb.ev(1, 11, EventKind::ImplicitBegin, {r.P, r.B, 2, 1, kImplicit});
    tb.ev(1, 12, EventKind::SyncBegin, {kBarrier, r.B, 0});
    r.end(520, 530);
    const model::Model m = tb.build();
    expect_invariants(m);
    const std::string what = main_marked ? "main marked" : "no mark";
    EXPECT_EQ(m.preempted, 0u) << what;
    // With the mark, main's serial code from 8 to 10 is work, less the tick it was blocked.
    EXPECT_EQ(m.blocked, main_marked ? 1u : 0u) << what;
    ASSERT_EQ(m.blocked_work.size(), main_marked ? 1u : 0u) << what;
    if (main_marked) {
      EXPECT_EQ(m.blocked_work[0].ticks, 1u);
      EXPECT_EQ(m.strands[m.blocked_work[0].strand].work, 1u);
      EXPECT_EQ(m.strands[m.blocked_work[0].strand].start, 8u);
    }
    EXPECT_EQ(total_work(m), (main_marked ? 1u : 0u) + 510 + 1) << what;
  }
}

// The builder reads each thread's intervals from the trace as its events reach them, a few
// hundred at a time (off_cpu_stream.hpp): 600 intervals of the three causes, each in its own
// record, one reported twice, fall each in its own strand of A's, the same whether the trace
// holds them in time order (read as they come) or not (held whole, sorted at open).
TEST(ModelOffCpu, ManyIntervalsAreReadAsTheEventsReachThem) {
  constexpr uint64_t kChildren = 600;
  auto at = [](uint64_t i) { return 1000 + 100 * i; };
  for (bool out_of_order : {false, true}) {
    TraceBuilder tb(2);
    Region r{tb};
    r.begin();
    for (uint64_t i = 0; i < kChildren; ++i) {
      const uint64_t C = id(0, 100 + i);
      tb.ev(0, at(i), EventKind::TaskCreate, {r.A, C, kExplicit, 0x2000});
      tb.ev(1, at(i) + 1, EventKind::TaskSchedule, {r.B, kSwitch, C});
      tb.ev(1, at(i) + 3, EventKind::TaskSchedule, {C, kComplete, r.B});
      const uint64_t from = at(i) + 10, to = at(i) + 20;  // inside A's strand after C_i
      if (i % 3 == 0) tb.preempt(0, from, to);
      if (i % 3 == 1) tb.blocked(0, from, to);
      if (i % 3 == 2) tb.slow_fault(0, from, to);
      if (i == 5) tb.blocked(0, from + 2, from + 5);  // reported twice: taken out once
    }
    if (out_of_order) tb.preempt(0, at(0) + 12, at(0) + 18);  // again, after later ones
    r.end(at(kChildren) + 50, at(kChildren) + 70);
    const model::Model m = tb.build();
    expect_invariants(m);
    EXPECT_EQ(m.preempted, 10 * 200u) << out_of_order;
    EXPECT_EQ(m.blocked, 10 * 200u) << out_of_order;
    EXPECT_EQ(m.slow_faults, 10 * 200u) << out_of_order;
    EXPECT_EQ(m.preempted_in_run, 10 * 200u) << out_of_order;
    // A's strands: 990 before C_0, then 100 - 10 between two creations, and 150 - 10 at the end;
    // the children's 2 each.
    std::vector<uint64_t> works;
    for (const model::Strand& s : m.strands)
      if (s.work) works.push_back(s.work);
    std::sort(works.begin(), works.end());
    std::vector<uint64_t> expected(kChildren, 2);
    expected.insert(expected.end(), kChildren - 1, 90);
    expected.push_back(140);
    expected.push_back(990);
    expected.push_back(1);  // B's 11..12
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(works, expected) << out_of_order;
  }
}

// The recorder's cost per event is in the intervals between events: one such cost per event
// comes out of the thread's intervals (never below zero), and is reported. An interval too short
// to hold it (or empty: an event that took its predecessor's timestamp) passes the rest on to
// the thread's next interval.
TEST(ModelOffCpu, TheRecordersCostPerEventIsTakenOutOfEveryInterval) {
  auto build = [](bool keep) {
    TraceBuilder tb(2);
    tb.probe_cost(3);
    Region r{tb};
    r.begin();
    uint64_t C = id(0, 5);
    tb.ev(0, 20, EventKind::TaskCreate, {r.A, C, kExplicit, 0x2000});
    tb.ev(1, 21, EventKind::TaskSchedule, {r.B, kSwitch, C});
    tb.ev(1, 22, EventKind::MutexWaitBegin, {1});  // an interval of 1 tick: it becomes 0
    tb.ev(1, 23, EventKind::MutexWaitEnd, {1});
    tb.ev(1, 221, EventKind::TaskSchedule, {C, kComplete, r.B});
    r.end(520, 530);
    model::BuildOptions options;
    options.keep_probe_cost = keep;
    model::Model m = tb.build(options);
    expect_invariants(m);
    return m;
  };
  auto total = [](const model::Model& m) {
    uint64_t work = 0;
    for (const auto& s : m.strands) work += s.work;
    return work;
  };
  model::Model kept = build(true), taken = build(false);
  EXPECT_EQ(kept.probe_per_event, 0u);
  EXPECT_EQ(kept.probe_removed, 0u);
  EXPECT_EQ(taken.probe_per_event, 3u);
  // The intervals strands get: A's 10 (after two events at time 10: 6 ticks out) and 500 (3),
  // B's 1 before its barrier (1: the other 2 go to B's wait, which is not work), C's 1 before
  // the mutex wait (1, 2 carried) and 198 after it (the 2 carried, 3 for the wait's end event
  // minus the 1 tick the wait's own interval held, and 3 of its own: 7).
  EXPECT_EQ(total(kept) - total(taken), 6u + 3 + 1 + 1 + 7);
  // The report's figure is what was taken out of those strands: not the 6 ticks taken out of
  // the initial task's 10 before the first parallel region, whose work is cleared afterwards as
  // the runtime's start-up (WhatTheStartUpLostIsNotCountedAsTakenOut).
  EXPECT_EQ(taken.probe_removed, 6u + 3 + 1 + 1 + 7);
}

// A wait for a lock inside a strand is neither work nor taken out of it, but lies inside its
// span: the model counts it apart (runtime_waited), so that a strand's span is its work, what
// was taken out of it, and its waits.
TEST(ModelOffCpu, WaitsInsideAStrandsSpanAreCountedApart) {
  TraceBuilder tb(2);
  tb.preempt(1, 60, 70);  // inside the wait: the wait's, not preemption
  Region r{tb};
  r.begin();
  const uint64_t C = id(0, 5);
  tb.ev(0, 20, EventKind::TaskCreate, {r.A, C, kExplicit, 0x2000});
  tb.ev(1, 21, EventKind::TaskSchedule, {r.B, kSwitch, C});
  tb.ev(1, 30, EventKind::MutexWaitBegin, {1});
  tb.ev(1, 130, EventKind::MutexWaitEnd, {1});
  tb.ev(1, 221, EventKind::TaskSchedule, {C, kComplete, r.B});
  r.end(520, 530);
  const model::Model m = tb.build();
  expect_invariants(m);
  EXPECT_EQ(m.runtime_waited, 100u);  // 30..130
  EXPECT_EQ(m.preempted, 0u);
  uint64_t spans = 0, works = 0;
  for (const model::Strand& s : m.strands) {
    if (s.thread == model::kNone) continue;
    spans += s.end - s.start;
    works += s.work;
  }
  EXPECT_EQ(spans, works + m.runtime_waited + m.preempted + m.blocked + m.probe_removed);
}

// The hypervisor's steal during the recording (a HostSteal record): its share of the CPUs' time,
// with a warning from 2%; unknown (-1) in a trace without the record.
TEST(ModelOffCpu, TheHostsStealIsReportedFromTwoPercent) {
  auto build = [](std::optional<std::pair<uint64_t, uint64_t>> steal) {
    TraceBuilder tb(2);
    if (steal) tb.host_steal(steal->first, steal->second);
    Region r{tb};
    r.begin();
    r.end(100, 110);
    return tb.build();
  };
  auto warned = [](const model::Model& m) {
    for (const std::string& w : m.warnings)
      if (w.find("steal time") != std::string::npos) return true;
    return false;
  };
  const model::Model none = build(std::nullopt), quiet = build({{1, 100}}),
                     stolen = build({{44, 100}});
  EXPECT_EQ(none.host_steal_percent, -1);
  EXPECT_FALSE(warned(none));
  EXPECT_DOUBLE_EQ(quiet.host_steal_percent, 1.0);
  EXPECT_FALSE(warned(quiet));
  EXPECT_DOUBLE_EQ(stolen.host_steal_percent, 44.0);
  EXPECT_TRUE(warned(stolen));
  // A damaged record (more steal than time) is ignored.
  EXPECT_EQ(build({{200, 100}}).host_steal_percent, -1);
  // `record` reads the same share from the record headers alone, and warns with the same words.
  TraceBuilder tb(2);
  tb.host_steal(44, 100);
  const std::vector<uint8_t> bytes = tb.bytes();
  char path[] = "/tmp/tasklens_steal_testXXXXXX";
  const int fd = mkstemp(path);
  ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  close(fd);
  EXPECT_DOUBLE_EQ(trace::TraceFile::scan(path).host_steal_percent, 44.0);
  unlink(path);
  EXPECT_NE(model::host_steal_warning(44).find("44% of the time"), std::string::npos);
  EXPECT_EQ(model::host_steal_warning(1.9), "");
  EXPECT_EQ(model::host_steal_warning(-1), "");
}

}  // namespace
}  // namespace tasklens
