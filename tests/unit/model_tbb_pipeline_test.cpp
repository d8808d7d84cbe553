// The model builder on synthetic oneTBB parallel_pipeline traces (src/model/builder_tbb.cpp):
// each serial filter's runs (TbbFilterBegin/End) stay in the order they ran, whichever stage
// task ran them, and parallel filters are not chained. Exact work and span (1 tick = 1 ns); "in0:
// 100" means the strand that ends at that event did 100 of work.
//
// The pipelines are in -> mid -> out as in examples/tbb_flow.cpp: a serial_in_order input filter
// (kIn), a parallel one (no events), and a serial output filter (kOut). They follow libtbb's
// stage tasks (src/tbb/parallel_pipeline.cpp): main's call spawns the root stage task P, which
// main's thread runs while it waits; each run of a stage task runs one filter on one item. A
// task that ran the input spawns the next item's input task (while tokens are left), then
// returns itself for its item's next stage (task bypass: a new task of the recorder's); one that
// ran the output returns itself for a new item's input if no other task can take it (recycled).
// An item that reaches a serial filter while an earlier item holds it waits, and the task of
// the run that frees the filter spawns it; one that reaches it once it is free runs it in its
// own task, started by nothing of the run before: the race that the runs' events order.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "analysis/profile.hpp"
#include "model/builder.hpp"
#include "trace/format.hpp"
#include "trace_builder.hpp"

namespace tasklens {
namespace {

using fixtures::expect_invariants;
using fixtures::id;
using fixtures::TraceBuilder;
using model::NodeKind;
using trace::EventKind;

constexpr uint64_t kSwitch = 7, kComplete = 1;    // TaskSchedule statuses
constexpr uint64_t kOther = 7, kFor = 2;          // trace::TbbKind (stage tasks: Other)
constexpr uint64_t kRoot = 0x80, kBypass = 0x40;  // TbbSpawn kind flags
constexpr uint64_t kCall = 0x9100;                // main's call of parallel_pipeline
constexpr uint64_t kLib = 0x7e0000004000;         // where libtbb spawns stage tasks
constexpr uint64_t G = 0x7f0000001000;            // the pipeline's task_group_context
constexpr uint64_t kIn = 0x7f0000002000, kOut = 0x7f0000003000;  // its serial filters

// A oneTBB trace: thread 0 runs main() in the root task R, the others are idle workers.
struct Pipe {
  TraceBuilder tb;
  uint64_t R = id(0, 1);
  bool announce = true;  // false: a trace of before the pipeline events (minor 7)
  Pipe(uint32_t threads, bool announce_runs) : tb(threads, false), announce(announce_runs) {
    tb.runtime(trace::kRuntimeTbb, "oneTBB 2021.8.0 (interface 12080)");
    if (!announce) tb.version_minor(7);
    tb.ev(0, 0, EventKind::ThreadBegin, {1});
    tb.ev(0, 0, EventKind::ImplicitBegin, {0, R, 1, 0, 1});
    tb.ev(0, 0, EventKind::Mark, {static_cast<uint64_t>(trace::MarkKind::MainStart)});
    for (uint32_t t = 1; t < threads; ++t) tb.ev(t, 0, EventKind::ThreadBegin, {2});
  }
  // main calls parallel_pipeline: its root stage task P (execute_and_wait), and main's wait.
  void call(uint64_t time, uint64_t P) {
    if (announce) tb.ev(0, time, EventKind::TbbPipeline, {G});
    tb.ev(0, time, EventKind::TbbSpawn, {R, P, G, kOther | kRoot, kCall});
    tb.ev(0, time, EventKind::TbbWaitBegin, {R, G, kCall});
  }
  void wait_end(uint64_t time) { tb.ev(0, time, EventKind::TbbWaitEnd, {R, G, kCall}); }
  // A stage task spawned by `parent` (the next item's input; an item that waited for its turn).
  void spawn(uint32_t t, uint64_t time, uint64_t parent, uint64_t task) {
    tb.ev(t, time, EventKind::TbbSpawn, {parent, task, G, kOther, kLib});
  }
  // One returned by `parent` (its item's next stage, or `parent` recycled to the input).
  void bypass(uint32_t t, uint64_t time, uint64_t parent, uint64_t task) {
    tb.ev(t, time, EventKind::TbbSpawn, {parent, task, 0, kOther | kBypass, 0});
  }
  void begin(uint32_t t, uint64_t time, uint64_t prior, uint64_t task) {
    tb.ev(t, time, EventKind::TaskSchedule, {prior, kSwitch, task});
  }
  void end(uint32_t t, uint64_t time, uint64_t task, uint64_t prior) {
    tb.ev(t, time, EventKind::TaskSchedule, {task, kComplete, prior});
  }
  // A run of the serial filter at `filter` in the task thread t runs.
  void run_begin(uint32_t t, uint64_t time, uint64_t filter) {
    if (announce) tb.ev(t, time, EventKind::TbbFilterBegin, {filter});
  }
  void run_end(uint32_t t, uint64_t time, uint64_t filter) {
    if (announce) tb.ev(t, time, EventKind::TbbFilterEnd, {filter});
  }
  void run(uint32_t t, uint64_t from, uint64_t to, uint64_t filter) {
    run_begin(t, from, filter);
    run_end(t, to, filter);
  }
  void program_end(uint64_t time) {
    tb.ev(0, time, EventKind::Mark, {static_cast<uint64_t>(trace::MarkKind::ProgramEnd)});
  }
};

// The profile row of the site at `address`; a zero row if none.
analysis::SiteRow row_at(const model::Model& m, const analysis::Profile& p, uint64_t address) {
  for (const analysis::SiteRow& row : p.sites)
    if (m.sites[row.site].address == address) return row;
  ADD_FAILURE() << "no profile row for the site at 0x" << std::hex << address;
  return {};
}

// The pipeline's task nodes (those of its site), and how many of them are children of the
// first (the root stage task P).
struct StageNodes {
  size_t tasks = 0, in_root = 0;
};
StageNodes stage_nodes(const model::Model& m) {
  StageNodes s;
  uint32_t root = model::kNone;
  for (uint32_t v = 0; v < m.nodes.size(); ++v) {
    const model::Node& n = m.nodes[v];
    if (n.kind != NodeKind::Task || n.site == model::kNone || m.sites[n.site].address != kCall)
      continue;
    if (root == model::kNone) {
      root = v;
      continue;
    }
    ++s.tasks;
    s.in_root += n.parent == root;
  }
  return s;
}

// (Each thread's events are written in time order; the builder merges the threads by time.)

// The race of examples/tbb_flow.cpp with its output filter dominant: item 1's stage tasks run
// late on thread 1, and its middle stage ends after item 0's output run (out0) did, so item 1's
// own task (T1c, returned by its middle stage) runs out1: nothing spawned by out0's task orders
// it. Its run follows out0's all the same: S0 in0 mid0 out0 out1 S1.
TEST(ModelTbbPipeline, AnOutputRunStartedByItsItemsOwnTaskFollowsTheRunBefore) {
  for (bool announce : {true, false}) {
    SCOPED_TRACE(announce ? "with the pipeline's events" : "an old trace");
    Pipe f(2, announce);
    const uint64_t P = id(0, 2), P2 = id(0, 3), P3 = id(0, 4), P4 = id(0, 5);
    const uint64_t T1 = id(0, 6), T1b = id(1, 1), T1c = id(1, 2);
    f.call(100, P);  // S0: 100
    f.begin(0, 100, f.R, P);
    f.run(0, 100, 200, kIn);  // in0: 100
    f.spawn(0, 200, P, T1);   // (the next item's input)
    f.bypass(0, 200, P, P2);
    f.end(0, 200, P, f.R);
    f.begin(0, 200, f.R, P2);
    f.bypass(0, 600, P2, P3);  // mid0: 400
    f.end(0, 600, P2, f.R);
    f.begin(0, 600, f.R, P3);
    f.run(0, 600, 800, kOut);  // out0: 200
    f.bypass(0, 800, P3, P4);  // recycled: no input task is left to read the end of the input
    f.end(0, 800, P3, f.R);
    f.begin(0, 800, f.R, P4);
    f.run(0, 800, 801, kIn);  // the input's end: 1
    f.end(0, 801, P4, f.R);
    f.begin(1, 350, 0, T1);
    f.run(1, 350, 450, kIn);  // in1: 100
    f.bypass(1, 450, T1, T1b);
    f.end(1, 450, T1, 0);
    f.begin(1, 450, 0, T1b);
    f.bypass(1, 850, T1b, T1c);  // mid1: 400 (out0 has ended: out1 runs here)
    f.end(1, 850, T1b, 0);
    f.begin(1, 850, 0, T1c);
    f.run(1, 850, 1050, kOut);  // out1: 200
    f.end(1, 1050, T1c, 0);
    f.wait_end(1100);
    f.program_end(1200);  // S1: 100
    model::Model m = f.tb.build();
    expect_invariants(m);
    const analysis::Profile p = analysis::compute_profile(m);
    EXPECT_EQ(p.work, 100u + 100 + 400 + 200 + 1 + 100 + 400 + 200 + 100);
    const analysis::SiteRow row = row_at(m, p, kCall);
    EXPECT_EQ(row.count, 1u);
    EXPECT_EQ(row.work, 100u + 400 + 200 + 1 + 100 + 400 + 200);
    const StageNodes stages = stage_nodes(m);
    EXPECT_EQ(stages.tasks, 6u);
    if (announce) {
      // S0 in0 mid0 out0 out1 S1 (S0 in0 in1 mid1 out1 S1 is 1000).
      EXPECT_EQ(p.span, 100u + 100 + 400 + 200 + 200 + 100);
      EXPECT_EQ(row.span, 100u + 400 + 200 + 200);
      // The stage tasks are siblings in P, in the order spawned (the edge from out0, in P3,
      // to out1, in T1c, goes forward: P3 was spawned before T1c).
      EXPECT_EQ(stages.in_root, 6u);
      // A run's code is named by the pipeline's call: strands of 200 are the output's runs.
      size_t runs = 0;
      for (const model::Strand& s : m.strands) {
        if (s.work != 200) continue;
        ++runs;
        EXPECT_EQ(m.fragments[s.fragment].begin, kCall);
        EXPECT_EQ(m.fragments[s.fragment].end, kCall);
      }
      EXPECT_EQ(runs, 2u);
    } else {
      // Without the runs (older traces): out1 follows mid1 only, beside out0:
      // S0 in0 in1 mid1 out1 S1, and the tasks nested as they were spawned.
      EXPECT_EQ(p.span, 100u + 100 + 100 + 400 + 200 + 100);
      EXPECT_EQ(row.span, 100u + 100 + 400 + 200);
      EXPECT_EQ(stages.in_root, 2u);  // T1 and P2
    }
  }
}

// Three items, the output filter's runs in item order: item 1 reaches it while out0 runs and
// waits, so out0's task spawns it (T1c), which orders it already; item 2 reaches it after out1
// ended and runs it in its own task (T2c). The runs are one chain: S0 in0 mid0 out0 out1 out2 S1.
TEST(ModelTbbPipeline, TheSerialFiltersRunsFollowEachOtherInItemOrder) {
  for (bool announce : {true, false}) {
    SCOPED_TRACE(announce ? "with the pipeline's events" : "an old trace");
    Pipe f(3, announce);
    const uint64_t P = id(0, 2), P2 = id(0, 3), P3 = id(0, 4), P4 = id(0, 5), T1c = id(0, 6);
    const uint64_t T1 = id(0, 7), T1b = id(1, 1), T2 = id(1, 2), T2b = id(2, 1), T2c = id(2, 2);
    f.call(100, P);  // S0: 100
    f.begin(0, 100, f.R, P);
    f.run(0, 100, 200, kIn);  // in0: 100
    f.spawn(0, 200, P, T1);
    f.bypass(0, 200, P, P2);
    f.end(0, 200, P, f.R);
    f.begin(0, 200, f.R, P2);
    f.bypass(0, 600, P2, P3);  // mid0: 400
    f.end(0, 600, P2, f.R);
    f.begin(0, 600, f.R, P3);
    f.run(0, 600, 800, kOut);  // out0: 200
    f.spawn(0, 800, P3, T1c);  // item 1 waited for its turn
    f.bypass(0, 800, P3, P4);  // recycled for the input's end
    f.end(0, 800, P3, f.R);
    f.begin(0, 800, f.R, P4);
    f.run(0, 800, 801, kIn);  // the input's end: 1
    f.end(0, 801, P4, f.R);
    f.begin(1, 300, 0, T1);
    f.run(1, 300, 400, kIn);  // in1: 100
    f.spawn(1, 400, T1, T2);
    f.bypass(1, 400, T1, T1b);
    f.end(1, 400, T1, 0);
    f.begin(1, 400, 0, T1b);
    f.end(1, 700, T1b, 0);  // mid1: 300 (out0 runs: item 1 waits)
    f.begin(1, 810, 0, T1c);
    f.run(1, 810, 1010, kOut);  // out1: 200
    f.end(1, 1010, T1c, 0);
    f.begin(2, 500, 0, T2);
    f.run(2, 500, 600, kIn);  // in2: 100
    f.bypass(2, 600, T2, T2b);
    f.end(2, 600, T2, 0);
    f.begin(2, 600, 0, T2b);
    f.bypass(2, 1100, T2b, T2c);  // mid2: 500 (out1 has ended: out2 runs here)
    f.end(2, 1100, T2b, 0);
    f.begin(2, 1100, 0, T2c);
    f.run(2, 1100, 1300, kOut);  // out2: 200
    f.end(2, 1300, T2c, 0);
    f.wait_end(1400);
    f.program_end(1500);  // S1: 100
    model::Model m = f.tb.build();
    expect_invariants(m);
    const analysis::Profile p = analysis::compute_profile(m);
    EXPECT_EQ(p.work, 100u + 3 * 100 + 1 + 400 + 300 + 500 + 3 * 200 + 100);
    if (announce) {
      // (S0 in0 in1 in2 mid2 out2 S1 is 1200.)
      EXPECT_EQ(p.span, 100u + 100 + 400 + 3 * 200 + 100);
    } else {
      // out2 beside out1: S0 in0 in1 in2 mid2 out2 S1 (the chain to out1 is 1100).
      EXPECT_EQ(p.span, 100u + 3 * 100 + 500 + 200 + 100);
    }
  }
}

// A parallel filter's runs are not bracketed (the recorder shadows serial filters only): the
// middle stages of two items (1000 each) run side by side and the span holds one of them.
TEST(ModelTbbPipeline, AParallelFiltersRunsAreNotChained) {
  Pipe f(2, true);
  const uint64_t P = id(0, 2), P2 = id(0, 3), P3 = id(0, 4), P4 = id(0, 5);
  const uint64_t T1 = id(0, 6), T1b = id(1, 1), T1c = id(1, 2);
  f.call(100, P);  // S0: 100
  f.begin(0, 100, f.R, P);
  f.run(0, 100, 110, kIn);  // in0: 10
  f.spawn(0, 110, P, T1);
  f.bypass(0, 110, P, P2);
  f.end(0, 110, P, f.R);
  f.begin(0, 110, f.R, P2);
  f.bypass(0, 1110, P2, P3);  // mid0: 1000
  f.end(0, 1110, P2, f.R);
  f.begin(0, 1110, f.R, P3);
  f.run(0, 1110, 1120, kOut);  // out0: 10
  f.bypass(0, 1120, P3, P4);
  f.end(0, 1120, P3, f.R);
  f.begin(0, 1120, f.R, P4);
  f.run(0, 1120, 1121, kIn);  // the input's end: 1
  f.end(0, 1121, P4, f.R);
  f.begin(1, 120, 0, T1);
  f.run(1, 120, 130, kIn);  // in1: 10
  f.bypass(1, 130, T1, T1b);
  f.end(1, 130, T1, 0);
  f.begin(1, 130, 0, T1b);
  f.bypass(1, 1130, T1b, T1c);  // mid1: 1000
  f.end(1, 1130, T1b, 0);
  f.begin(1, 1130, 0, T1c);
  f.run(1, 1130, 1140, kOut);  // out1: 10
  f.end(1, 1140, T1c, 0);
  f.wait_end(1200);
  f.program_end(1300);  // S1: 100
  model::Model m = f.tb.build();
  expect_invariants(m);
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 100u + 10 + 10 + 1 + 2 * 1000 + 2 * 10 + 100);
  // S0 in0 in1 mid1 out1 S1 (and S0 in0 mid0 out0 out1 S1): one middle stage, not two.
  EXPECT_EQ(p.span, 100u + 10 + 10 + 1000 + 10 + 100);
}

// serial_out_of_order: one item at a time, in the order they come. Item 1's middle stage is
// short, so out1 runs first (T1c); item 0's, on a thread preempted for 450 of it (no work),
// ends after out1 did, and item 0 runs the filter in its own task (P3). The chain is in the
// order the runs happened: out0 follows out1 (in item order the edge would go backward).
TEST(ModelTbbPipeline, AnOutOfOrderFiltersRunsAreChainedInTheOrderTheyRan) {
  for (bool announce : {true, false}) {
    SCOPED_TRACE(announce ? "with the pipeline's events" : "an old trace");
    Pipe f(2, announce);
    const uint64_t P = id(0, 2), P2 = id(0, 3), P3 = id(0, 4);
    const uint64_t T1 = id(0, 5), T1b = id(1, 1), T1c = id(1, 2), T1d = id(1, 3);
    f.call(100, P);  // S0: 100
    f.begin(0, 100, f.R, P);
    f.run(0, 100, 200, kIn);  // in0: 100
    f.spawn(0, 200, P, T1);
    f.bypass(0, 200, P, P2);
    f.end(0, 200, P, f.R);
    f.begin(0, 200, f.R, P2);
    f.tb.preempt(0, 300, 750);
    f.bypass(0, 800, P2, P3);  // mid0: 150
    f.end(0, 800, P2, f.R);
    f.begin(0, 800, f.R, P3);
    f.run(0, 800, 1000, kOut);  // out0: 200
    f.end(0, 1000, P3, f.R);
    f.begin(1, 250, 0, T1);
    f.run(1, 250, 350, kIn);  // in1: 100
    f.bypass(1, 350, T1, T1b);
    f.end(1, 350, T1, 0);
    f.begin(1, 350, 0, T1b);
    f.bypass(1, 500, T1b, T1c);  // mid1: 150
    f.end(1, 500, T1b, 0);
    f.begin(1, 500, 0, T1c);
    f.run(1, 500, 700, kOut);  // out1: 200
    f.bypass(1, 700, T1c, T1d);
    f.end(1, 700, T1c, 0);
    f.begin(1, 700, 0, T1d);
    f.run(1, 700, 701, kIn);  // the input's end: 1
    f.end(1, 701, T1d, 0);
    f.wait_end(1100);
    f.program_end(1200);  // S1: 100
    model::Model m = f.tb.build();
    expect_invariants(m);
    const analysis::Profile p = analysis::compute_profile(m);
    EXPECT_EQ(p.work, 100u + 2 * 100 + 1 + 2 * 150 + 2 * 200 + 100);
    if (announce) {
      // S0 in0 in1 mid1 out1 out0 S1 (S0 in0 mid0 out0 S1 is 650).
      EXPECT_EQ(p.span, 100u + 100 + 100 + 150 + 200 + 200 + 100);
    } else {
      // out0 beside out1: S0 in0 in1 mid1 out1 T1d S1.
      EXPECT_EQ(p.span, 100u + 100 + 100 + 150 + 200 + 1 + 100);
    }
  }
}

// Two tokens, three items, the input filter dominant. in1 ends while item 0's output runs on a
// thread preempted for 250 of it; that run's task, finding no input task left, is recycled and
// reads item 2 (P4): nothing of in1's task orders in2 after in1, only the run before in the
// filter's chain: S0 in0 in1 in2 mid2 out2 S1.
TEST(ModelTbbPipeline, TheInputRunOfARecycledTaskFollowsTheRunBefore) {
  for (bool announce : {true, false}) {
    SCOPED_TRACE(announce ? "with the pipeline's events" : "an old trace");
    Pipe f(2, announce);
    const uint64_t P = id(0, 2), P2 = id(0, 3), P3 = id(0, 4), P4 = id(0, 5), P5 = id(0, 6);
    const uint64_t P6 = id(0, 7), T3 = id(0, 8), T1 = id(0, 9);
    const uint64_t T1b = id(1, 1), T1c = id(1, 2);
    f.call(100, P);  // S0: 100
    f.begin(0, 100, f.R, P);
    f.run(0, 100, 400, kIn);  // in0: 300
    f.spawn(0, 400, P, T1);   // (tokens: 2 -> 1)
    f.bypass(0, 400, P, P2);
    f.end(0, 400, P, f.R);
    f.begin(0, 400, f.R, P2);
    f.bypass(0, 450, P2, P3);  // mid0: 50
    f.end(0, 450, P2, f.R);
    f.begin(0, 450, f.R, P3);
    f.tb.preempt(0, 480, 730);
    f.run(0, 450, 750, kOut);  // out0: 50
    f.bypass(0, 750, P3, P4);  // no token was left: recycled for the input
    f.end(0, 750, P3, f.R);
    f.begin(0, 750, f.R, P4);
    f.run(0, 750, 1050, kIn);  // in2: 300
    f.spawn(0, 1050, P4, T3);  // (tokens were returned meanwhile: the input's end)
    f.bypass(0, 1050, P4, P5);
    f.end(0, 1050, P4, f.R);
    f.begin(0, 1050, f.R, P5);
    f.bypass(0, 1100, P5, P6);  // mid2: 50
    f.end(0, 1100, P5, f.R);
    f.begin(0, 1100, f.R, P6);
    f.run(0, 1100, 1150, kOut);  // out2: 50
    f.end(0, 1150, P6, f.R);
    f.begin(1, 400, 0, T1);
    f.run(1, 400, 700, kIn);  // in1: 300 (tokens: 1 -> 0, no input task is spawned)
    f.bypass(1, 700, T1, T1b);
    f.end(1, 700, T1, 0);
    f.begin(1, 700, 0, T1b);
    f.bypass(1, 760, T1b, T1c);  // mid1: 60
    f.end(1, 760, T1b, 0);
    f.begin(1, 760, 0, T1c);
    f.run(1, 760, 810, kOut);  // out1: 50
    f.end(1, 810, T1c, 0);
    f.begin(1, 1060, 0, T3);
    f.run(1, 1060, 1061, kIn);  // the input's end: 1
    f.end(1, 1061, T3, 0);
    f.wait_end(1200);
    f.program_end(1300);  // S1: 100
    model::Model m = f.tb.build();
    expect_invariants(m);
    const analysis::Profile p = analysis::compute_profile(m);
    EXPECT_EQ(p.work, 100u + 3 * 300 + 1 + 50 + 60 + 50 + 3 * 50 + 100);
    if (announce) {
      EXPECT_EQ(p.span, 100u + 3 * 300 + 50 + 50 + 100);
    } else {
      // in2 after out0 only: S0 in0 mid0 out0 in2 mid2 out2 S1.
      EXPECT_EQ(p.span, 100u + 300 + 50 + 50 + 300 + 50 + 50 + 100);
    }
  }
}

// The output filter's body calls a parallel_for (its root N, in a group of its own, which the
// filter's task waits for): the run is three strands of P3, and out1 follows the last one, where
// the run ended, not the first. The parallel_for stays nested in P3.
TEST(ModelTbbPipeline, ARunThatWaitsForANestedConstructIsChainedFromItsEnd) {
  for (bool announce : {true, false}) {
    SCOPED_TRACE(announce ? "with the pipeline's events" : "an old trace");
    Pipe f(2, announce);
    const uint64_t P = id(0, 2), P2 = id(0, 3), P3 = id(0, 4), N = id(0, 5), P4 = id(0, 6);
    const uint64_t T1 = id(0, 7), T1b = id(1, 1), T1c = id(1, 2);
    const uint64_t C2 = 0x7f0000009000, kFor0 = 0x9300;
    f.call(100, P);  // S0: 100
    f.begin(0, 100, f.R, P);
    f.run(0, 100, 110, kIn);  // in0: 10
    f.spawn(0, 110, P, T1);
    f.bypass(0, 110, P, P2);
    f.end(0, 110, P, f.R);
    f.begin(0, 110, f.R, P2);
    f.bypass(0, 210, P2, P3);  // mid0: 100
    f.end(0, 210, P2, f.R);
    f.begin(0, 210, f.R, P3);
    f.run_begin(0, 210, kOut);
    f.tb.ev(0, 260, EventKind::TbbSpawn, {P3, N, C2, kFor | kRoot, kFor0});  // out0a: 50
    f.tb.ev(0, 260, EventKind::TbbWaitBegin, {P3, C2, kFor0});
    f.begin(0, 260, P3, N);
    f.end(0, 460, N, P3);  // N: 200
    f.tb.ev(0, 460, EventKind::TbbWaitEnd, {P3, C2, kFor0});
    f.run_end(0, 510, kOut);  // out0b: 50
    f.bypass(0, 510, P3, P4);
    f.end(0, 510, P3, f.R);
    f.begin(0, 510, f.R, P4);
    f.run(0, 510, 511, kIn);  // the input's end: 1
    f.end(0, 511, P4, f.R);
    f.begin(1, 120, 0, T1);
    f.run(1, 120, 130, kIn);  // in1: 10
    f.bypass(1, 130, T1, T1b);
    f.end(1, 130, T1, 0);
    f.begin(1, 130, 0, T1b);
    f.tb.preempt(1, 200, 290);
    f.bypass(1, 520, T1b, T1c);  // mid1: 300 (out0 has ended: out1 runs here)
    f.end(1, 520, T1b, 0);
    f.begin(1, 520, 0, T1c);
    f.run(1, 520, 570, kOut);  // out1: 50
    f.end(1, 570, T1c, 0);
    f.wait_end(600);
    f.program_end(700);  // S1: 100
    model::Model m = f.tb.build();
    expect_invariants(m);
    const analysis::Profile p = analysis::compute_profile(m);
    EXPECT_EQ(p.work, 100u + 10 + 10 + 1 + 100 + 300 + 50 + 200 + 50 + 50 + 100);
    if (announce) {
      // S0 in0 mid0 out0a N out0b out1 S1 (from out0a only: S0 in0 in1 mid1 out1 S1, 570).
      EXPECT_EQ(p.span, 100u + 10 + 100 + 50 + 200 + 50 + 50 + 100);
    } else {
      // out1 after mid1 only: the longest path is through the input's end, S0 in0 mid0 out0a N
      // out0b P4 S1 (S0 in0 in1 mid1 out1 S1 is 570).
      EXPECT_EQ(p.span, 100u + 10 + 100 + 50 + 200 + 50 + 1 + 100);
    }
    // The parallel_for is a row of its own at its call, inside P3 (a task of the pipeline's).
    const analysis::SiteRow inner = row_at(m, p, kFor0);
    EXPECT_EQ(inner.count, 1u);
    EXPECT_EQ(inner.work, 200u);
    uint32_t n = model::kNone;
    for (uint32_t v = 0; v < m.nodes.size(); ++v)
      if (m.nodes[v].site != model::kNone && m.sites[m.nodes[v].site].address == kFor0) n = v;
    ASSERT_NE(n, model::kNone);
    const uint32_t parent = m.nodes[n].parent;
    EXPECT_EQ(m.nodes[parent].kind, NodeKind::Task);
    EXPECT_EQ(m.sites[m.nodes[parent].site].address, kCall);
  }
}

}  // namespace
}  // namespace tasklens
