// The model builder on synthetic oneTBB traces (src/model/builder_tbb.cpp): exact work and span
// for task_group waits, algorithm constructs and their chunks (1 tick = 1 ns). In the comments
// below, "S0: 10" means the strand that ends at that event did 10 of work.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
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
using model::SiteKind;
using trace::EventKind;

constexpr uint64_t kSwitch = 7, kComplete = 1;  // TaskSchedule statuses
constexpr uint64_t kTask = 1, kFor = 2;         // trace::TbbKind
constexpr uint64_t kRoot = 0x80;                // TbbSpawn kind flag: spawned by execute_and_wait
constexpr char kVersion[] = "oneTBB 2021.11.0 (interface 12110)";

// A oneTBB trace: thread 0 runs main() in the root task R (no OpenMP region), the other
// threads are workers that start idle.
struct Tbb {
  TraceBuilder tb;
  uint64_t R = id(0, 1);
  // `metrics`: the trace's metrics, with their counter values (TraceBuilder::metrics).
  explicit Tbb(uint32_t threads, std::vector<trace::Metric> metrics = {trace::Metric::Tsc},
               TraceBuilder::CounterFn counters = {})
      : tb(threads, false) {
    tb.metrics(std::move(metrics), std::move(counters));
    tb.runtime(trace::kRuntimeTbb, kVersion);
    tb.ev(0, 0, EventKind::ThreadBegin, {1});
    tb.ev(0, 0, EventKind::ImplicitBegin, {0, R, 1, 0, 1});
    tb.ev(0, 0, EventKind::Mark, {static_cast<uint64_t>(trace::MarkKind::MainStart)});
    for (uint32_t t = 1; t < threads; ++t) tb.ev(t, 0, EventKind::ThreadBegin, {2});
  }
  void spawn(uint32_t t, uint64_t time, uint64_t parent, uint64_t task, uint64_t group,
             uint64_t kind, uint64_t code) {
    tb.ev(t, time, EventKind::TbbSpawn, {parent, task, group, kind, code});
  }
  // `prior`: the task the thread ran before (0 on an idle worker).
  void begin(uint32_t t, uint64_t time, uint64_t prior, uint64_t task) {
    tb.ev(t, time, EventKind::TaskSchedule, {prior, kSwitch, task});
  }
  void end(uint32_t t, uint64_t time, uint64_t task, uint64_t prior) {
    tb.ev(t, time, EventKind::TaskSchedule, {task, kComplete, prior});
  }
  void wait_begin(uint32_t t, uint64_t time, uint64_t task, uint64_t group, uint64_t code) {
    tb.ev(t, time, EventKind::TbbWaitBegin, {task, group, code});
  }
  void wait_end(uint32_t t, uint64_t time, uint64_t task, uint64_t group, uint64_t code) {
    tb.ev(t, time, EventKind::TbbWaitEnd, {task, group, code});
  }
  void chunk(uint32_t t, uint64_t begin, uint64_t end, uint64_t task) {
    tb.ev(t, begin, EventKind::ChunkBegin, {task});
    tb.ev(t, end, EventKind::ChunkEnd, {task});
  }
  // main() returns: the root's last strand ends here.
  void program_end(uint64_t time) {
    tb.ev(0, time, EventKind::Mark, {static_cast<uint64_t>(trace::MarkKind::ProgramEnd)});
  }
};

// The site at `address`, or kNone.
uint32_t site_at(const model::Model& m, uint64_t address) {
  for (uint32_t s = 0; s < m.sites.size(); ++s)
    if (m.sites[s].address == address) return s;
  return model::kNone;
}

// The profile row of the site at `address` (checked to be of `kind`); a zero row if none.
analysis::SiteRow row_at(const model::Model& m, const analysis::Profile& p, uint64_t address,
                         SiteKind kind) {
  uint32_t site = site_at(m, address);
  if (site == model::kNone) {
    ADD_FAILURE() << "no site at 0x" << std::hex << address;
    return {};
  }
  EXPECT_EQ(m.sites[site].kind, kind) << "site at 0x" << std::hex << address;
  for (const analysis::SiteRow& row : p.sites)
    if (row.site == site) return row;
  ADD_FAILURE() << "no profile row for the site at 0x" << std::hex << address;
  return {};
}

size_t rows_of_kind(const model::Model& m, const analysis::Profile& p, SiteKind kind) {
  size_t n = 0;
  for (const analysis::SiteRow& row : p.sites) n += m.sites[row.site].kind == kind;
  return n;
}

// Work of the strands that belong directly to nodes of `site` (a task's own strands, without its
// children's or its chunks').
uint64_t own_work(const model::Model& m, uint32_t site) {
  uint64_t w = 0;
  for (const model::Strand& s : m.strands)
    if (m.nodes[s.node].site == site) w += s.work;
  return w;
}

uint64_t thread_work(const model::Model& m, uint32_t thread) {
  uint64_t w = 0;
  for (const model::Strand& s : m.strands)
    if (s.thread == thread) w += s.work;
  return w;
}

// fib-like: R spawns A and B into G, runs C itself (inline), waits for G. A and B run on
// threads 1 and 2. The span is the longest of the three paths into the wait's end.
TEST(ModelTbb, TaskGroupForkJoin) {
  for (uint64_t c : {50u, 400u}) {
    Tbb t(3);
    uint64_t A = id(0, 2), B = id(0, 3), G = 0x7f0000001000;
    t.spawn(0, 10, t.R, A, G, kTask, 0x1000);  // S0: 10
    t.spawn(0, 20, t.R, B, G, kTask, 0x1010);  // S1: 10
    t.wait_begin(0, 20 + c, t.R, G, 0x1100);   // S2: C
    t.begin(1, 15, 0, A);
    t.end(1, 215, A, 0);  // A: 200
    t.begin(2, 25, 0, B);
    t.end(2, 325, B, 0);  // B: 300
    uint64_t resume = std::max<uint64_t>(330, 25 + c);
    t.wait_end(0, resume, t.R, G, 0x1100);
    t.program_end(resume + 10);  // S3: 10
    model::Model m = t.tb.build();
    expect_invariants(m);
    analysis::Profile p = analysis::compute_profile(m);
    EXPECT_EQ(p.work, 10u + 10 + c + 200 + 300 + 10) << "C " << c;
    // max(S0 S1 B, S0 A, S0 S1 C) + S3
    EXPECT_EQ(p.span, std::max<uint64_t>({10 + 10 + 300, 10 + 200, 10 + 10 + c}) + 10) << "C " << c;
    EXPECT_EQ(m.task_count, 2u);
    EXPECT_TRUE(m.loops_have_chunks);
    analysis::SiteRow a = row_at(m, p, 0x1000, SiteKind::Task);
    analysis::SiteRow b = row_at(m, p, 0x1010, SiteKind::Task);
    EXPECT_EQ(a.count, 1u);
    EXPECT_EQ(a.work, 200u);
    EXPECT_EQ(b.count, 1u);
    EXPECT_EQ(b.span, 300u);
    EXPECT_EQ(own_work(m, 0), 10u + 10 + c + 10);  // the root's strands: not the wait
  }
}

// A task of G spawns X into G too: G's wait (in R) joins X, although R did not spawn it.
TEST(ModelTbb, WaitJoinsTasksSpawnedIntoTheGroupFromInsideIt) {
  Tbb t(3);
  uint64_t A = id(0, 2), X = id(1, 1), G = 0x7f0000001000;
  t.spawn(0, 10, t.R, A, G, kTask, 0x1000);  // S0: 10
  t.wait_begin(0, 20, t.R, G, 0x1100);       // S1: 10
  t.begin(1, 30, 0, A);
  t.spawn(1, 130, A, X, G, kTask, 0x2000);  // A1: 100
  t.end(1, 140, A, 0);                      // A2: 10
  t.begin(2, 160, 0, X);
  t.end(2, 560, X, 0);  // X: 400
  t.wait_end(0, 565, t.R, G, 0x1100);
  t.program_end(665);  // S2: 100
  model::Model m = t.tb.build();
  expect_invariants(m);
  analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 10u + 10 + 100 + 10 + 400 + 100);
  // S0 -> A1 -> X -> S2: the continuation comes after the grandchild (510 if it did not).
  EXPECT_EQ(p.span, 10u + 100 + 400 + 100);
  EXPECT_EQ(row_at(m, p, 0x2000, SiteKind::Task).count, 1u);
}

// A task of G spawns Y into another group H: G's wait does not join Y, which runs beside R's
// continuation until H's wait (in R), or to the end of the program if nobody waits for H.
TEST(ModelTbb, WaitDoesNotJoinTasksOfAnotherGroup) {
  for (bool waited : {true, false}) {
    Tbb t(3);
    uint64_t A = id(0, 2), Y = id(1, 1), G = 0x7f0000001000, H = 0x7f0000002000;
    t.spawn(0, 10, t.R, A, G, kTask, 0x1000);  // S0: 10
    t.wait_begin(0, 20, t.R, G, 0x1100);       // S1: 10
    t.begin(1, 30, 0, A);
    t.spawn(1, 130, A, Y, H, kTask, 0x2000);  // A1: 100
    t.end(1, 140, A, 0);                      // A2: 10
    t.begin(2, 150, 0, Y);
    t.end(2, 1150, Y, 0);  // Y: 1000
    t.wait_end(0, 145, t.R, G, 0x1100);
    if (waited) {
      t.wait_begin(0, 245, t.R, H, 0x1200);  // S2: 100
      t.wait_end(0, 1155, t.R, H, 0x1200);
      t.program_end(1205);  // S3: 50
    } else {
      t.program_end(245);  // S2: 100
    }
    model::Model m = t.tb.build();
    expect_invariants(m);
    analysis::Profile p = analysis::compute_profile(m);
    if (waited) {
      EXPECT_EQ(p.work, 10u + 10 + 100 + 10 + 1000 + 100 + 50);
      // S0 -> A1 -> Y -> S3; 1260 if G's wait had joined Y (S2 after Y).
      EXPECT_EQ(p.span, 10u + 100 + 1000 + 50);
    } else {
      EXPECT_EQ(p.work, 10u + 10 + 100 + 10 + 1000 + 100);
      EXPECT_EQ(p.span, 10u + 100 + 1000) << "Y escapes; 1210 if G's wait had joined it";
    }
  }
}

// Waiting threads run other tasks: R (waiting for G) runs its child A on thread 0; A, waiting
// for its own group GA, runs Z there, a child of B that is not A's descendant; B, waiting for
// K on thread 1, runs A's child A1. No wait is work of the waiting task.
TEST(ModelTbb, WaitersRunOtherTasksMeanwhile) {
  Tbb t(2);
  uint64_t A = id(0, 2), B = id(0, 3), A1 = id(0, 4), Z = id(1, 1);
  uint64_t G = 0x7f0000001000, GA = 0x7f0000003000, K = 0x7f0000002000;
  t.spawn(0, 10, t.R, A, G, kTask, 0x1000);  // S0: 10
  t.spawn(0, 20, t.R, B, G, kTask, 0x1010);  // S1: 10
  t.wait_begin(0, 30, t.R, G, 0x1100);       // S2: 10
  t.begin(0, 40, t.R, A);
  t.spawn(0, 90, A, A1, GA, kTask, 0x3000);  // Aa: 50
  t.wait_begin(0, 100, A, GA, 0x3100);       // Ab: 10
  t.begin(1, 25, 0, B);
  t.spawn(1, 60, B, Z, K, kTask, 0x2000);  // Ba: 35
  t.wait_begin(1, 70, B, K, 0x2100);       // Bb: 10
  t.begin(1, 110, B, A1);
  t.begin(0, 110, A, Z);
  t.end(0, 310, Z, A);   // Z: 200
  t.end(1, 410, A1, B);  // A1: 300
  t.wait_end(1, 415, B, K, 0x2100);
  t.end(1, 465, B, 0);  // Bc: 50
  t.wait_end(0, 420, A, GA, 0x3100);
  t.end(0, 470, A, t.R);  // Ac: 50
  t.wait_end(0, 480, t.R, G, 0x1100);
  t.program_end(580);  // S3: 100
  model::Model m = t.tb.build();
  expect_invariants(m);
  analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 130u + 110 + 95 + 300 + 200);
  // S0 -> Aa -> A1 -> Ac -> S3 (S0 S1 Ba Z Bc S3 is 405).
  EXPECT_EQ(p.span, 10u + 50 + 300 + 50 + 100);
  EXPECT_EQ(own_work(m, 0), 10u + 10 + 10 + 100);
  EXPECT_EQ(own_work(m, site_at(m, 0x1000)), 50u + 10 + 50);  // A: not its wait (100..420)
  EXPECT_EQ(own_work(m, site_at(m, 0x1010)), 35u + 10 + 50);  // B: not its wait (70..415)
  EXPECT_EQ(thread_work(m, 0), 130u + 110 + 200);
  EXPECT_EQ(thread_work(m, 1), 95u + 300);
  analysis::SiteRow a = row_at(m, p, 0x1000, SiteKind::Task);
  EXPECT_EQ(a.work, 110u + 300);  // A and its child A1, not Z
  EXPECT_EQ(a.span, 50u + 300 + 50);
  analysis::SiteRow b = row_at(m, p, 0x1010, SiteKind::Task);
  EXPECT_EQ(b.work, 95u + 200);  // B and its child Z
  EXPECT_EQ(b.span, 35u + 200 + 50);
  EXPECT_EQ(row_at(m, p, 0x2000, SiteKind::Task).work, 200u);
}

// parallel_for from main (root spawn T0, 0x80) splits into T1 and T2 (same kind, no 0x80): one
// construct instance. T1's body calls another parallel_for (root spawn N0, which splits into N1):
// a construct instance of its own, at its own call site or, recursively, at the same one.
TEST(ModelTbb, AlgorithmSplitsBelongToTheirCall) {
  for (bool recursive : {false, true}) {
    Tbb t(4);
    uint64_t T0 = id(0, 2), T1 = id(0, 3), T2 = id(0, 4), N0 = id(1, 1), N1 = id(1, 2);
    uint64_t C1 = 0x7f0000001000, C2 = 0x7f0000002000;
    uint64_t outer = 0x5000, inner = recursive ? 0x5000 : 0x6000;
    t.spawn(0, 10, t.R, T0, C1, kFor | kRoot, outer);  // S0: 10
    t.wait_begin(0, 10, t.R, C1, outer);               // S1: 0
    t.begin(0, 12, t.R, T0);
    t.spawn(0, 22, T0, T1, C1, kFor, 0x5100);  // T0a: 10
    t.spawn(0, 32, T0, T2, C1, kFor, 0x5100);  // T0b: 10
    t.end(0, 232, T0, t.R);                    // T0c: 200
    t.begin(1, 25, 0, T1);
    t.spawn(1, 75, T1, N0, C2, kFor | kRoot, inner);  // T1a: 50
    t.wait_begin(1, 75, T1, C2, inner);               // T1b: 0
    t.begin(1, 76, T1, N0);
    t.spawn(1, 86, N0, N1, C2, kFor, 0x6100);  // N0a: 10
    t.end(1, 186, N0, T1);                     // N0b: 100
    t.begin(3, 90, 0, N1);
    t.end(3, 240, N1, 0);  // N1: 150
    t.wait_end(1, 245, T1, C2, inner);
    t.end(1, 295, T1, 0);  // T1c: 50
    t.begin(2, 35, 0, T2);
    t.end(2, 235, T2, 0);  // T2: 200
    t.wait_end(0, 300, t.R, C1, outer);
    t.program_end(360);  // S2: 60
    model::Model m = t.tb.build();
    expect_invariants(m);
    analysis::Profile p = analysis::compute_profile(m);
    EXPECT_EQ(p.work, 70u + 220 + 100 + 110 + 150 + 200);
    // S0 -> T0a -> T1a -> N0a -> N1 -> T1c -> S2 (through T0 or T2: 290).
    EXPECT_EQ(p.span, 10u + 10 + 50 + 10 + 150 + 50 + 60);
    EXPECT_EQ(m.task_count, 5u);
    EXPECT_EQ(site_at(m, 0x5100), model::kNone) << "a split is not a construct of its own";
    EXPECT_EQ(site_at(m, 0x6100), model::kNone) << "a split is not a construct of its own";
    // The nested call is a separate instance, whatever its site.
    uint32_t outer_instance = model::kNone, inner_instance = model::kNone;
    for (const model::Strand& s : m.strands) {
      const model::Node& n = m.nodes[s.node];
      if (s.work == 200 || s.work == 50) {  // T0c, T2, T1a, T1c: parts of the outer call
        if (outer_instance == model::kNone) outer_instance = n.instance;
        EXPECT_EQ(n.instance, outer_instance) << "strand of work " << s.work;
      }
      if (s.work == 100 || s.work == 150) {  // N0b, N1: parts of the inner call
        if (inner_instance == model::kNone) inner_instance = n.instance;
        EXPECT_EQ(n.instance, inner_instance) << "strand of work " << s.work;
      }
    }
    EXPECT_NE(outer_instance, model::kNone);
    EXPECT_NE(inner_instance, outer_instance);
    EXPECT_EQ(rows_of_kind(m, p, SiteKind::ParallelFor), recursive ? 1u : 2u);
    analysis::SiteRow o = row_at(m, p, outer, SiteKind::ParallelFor);
    EXPECT_EQ(o.work, 220u + 100 + 110 + 150 + 200);  // the nested call's work counts once
    EXPECT_EQ(o.span, 10u + 50 + 10 + 150 + 50);      // T0a T1a N0a N1 T1c
    if (recursive) {
      EXPECT_EQ(o.count, 2u);
    } else {
      EXPECT_EQ(o.count, 1u);
      analysis::SiteRow i = row_at(m, p, inner, SiteKind::ParallelFor);
      EXPECT_EQ(i.count, 1u);
      EXPECT_EQ(i.work, 110u + 150);
      EXPECT_EQ(i.span, 10u + 150);  // N0a N1
    }
  }
}

// One task runs its 4 chunks of 100 one after the other (5 between them): they are logically
// parallel, so the span is one chunk plus the task's code around them, not 400.
TEST(ModelTbb, ChunksOfOneTaskAreParallel) {
  Tbb t(1);
  uint64_t T0 = id(0, 2), C1 = 0x7f0000001000;
  t.spawn(0, 10, t.R, T0, C1, kFor | kRoot, 0x5000);  // S0: 10
  t.wait_begin(0, 10, t.R, C1, 0x5000);               // S1: 0
  t.begin(0, 12, t.R, T0);
  t.chunk(0, 15, 115, T0);  // T0a: 3 before it
  t.chunk(0, 120, 220, T0);
  t.chunk(0, 225, 325, T0);
  t.chunk(0, 330, 430, T0);
  t.end(0, 432, T0, t.R);  // 2 after the last chunk
  t.wait_end(0, 440, t.R, C1, 0x5000);
  t.program_end(450);  // S2: 10
  model::Model m = t.tb.build();
  expect_invariants(m);
  analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 10u + 3 + 400 + 3 * 5 + 2 + 10);
  // The code between chunks stays in order: S0, 3, 5, 5, 5, the last chunk, 2, S2.
  EXPECT_EQ(p.span, 10u + 3 + 3 * 5 + 100 + 2 + 10);
  size_t chunks = 0;
  for (const model::Node& n : m.nodes) chunks += n.kind == model::NodeKind::Chunk;
  EXPECT_EQ(chunks, 4u);
  analysis::SiteRow row = row_at(m, p, 0x5000, SiteKind::ParallelFor);
  EXPECT_EQ(row.count, 1u);
  EXPECT_EQ(row.work, 3u + 400 + 15 + 2);
  EXPECT_EQ(row.span, 3u + 15 + 100 + 2);
}

// A parallel_for's two tasks run two chunks of 100 each: 4-way parallel.
TEST(ModelTbb, ChunksAcrossTasksAreParallel) {
  Tbb t(2);
  uint64_t T0 = id(0, 2), T1 = id(0, 3), C1 = 0x7f0000001000;
  t.spawn(0, 10, t.R, T0, C1, kFor | kRoot, 0x5000);  // S0: 10
  t.wait_begin(0, 10, t.R, C1, 0x5000);               // S1: 0
  t.begin(0, 12, t.R, T0);
  t.spawn(0, 17, T0, T1, C1, kFor, 0x5100);  // T0a: 5
  t.chunk(0, 20, 120, T0);                   // T0b: 3 before it
  t.chunk(0, 122, 222, T0);                  // 2 between
  t.end(0, 224, T0, t.R);                    // 2 after
  t.begin(1, 30, 0, T1);
  t.chunk(1, 32, 132, T1);   // 2 before it
  t.chunk(1, 134, 234, T1);  // 2 between
  t.end(1, 236, T1, 0);      // 2 after
  t.wait_end(0, 240, t.R, C1, 0x5000);
  t.program_end(250);  // S2: 10
  model::Model m = t.tb.build();
  expect_invariants(m);
  analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 10u + (5 + 3 + 200 + 2 + 2) + (2 + 200 + 2 + 2) + 10);
  // S0 -> T0a -> T0b -> 2 -> second chunk -> 2 -> S2.
  EXPECT_EQ(p.span, 10u + 5 + 3 + 2 + 100 + 2 + 10);
  analysis::SiteRow row = row_at(m, p, 0x5000, SiteKind::ParallelFor);
  EXPECT_EQ(row.count, 1u);
  EXPECT_EQ(row.work, 212u + 206);
  EXPECT_EQ(row.span, 5u + 3 + 2 + 100 + 2);
}

// T1's chunk calls a nested parallel_for and waits for it inside the chunk: the chunk's strands
// around the wait stay one chunk, which joins T1's end.
TEST(ModelTbb, NestedAlgorithmInsideAChunk) {
  Tbb t(2);
  uint64_t T0 = id(0, 2), T1 = id(0, 3), N0 = id(1, 1), C1 = 0x7f0000001000, C2 = 0x7f0000002000;
  t.spawn(0, 10, t.R, T0, C1, kFor | kRoot, 0x5000);  // S0: 10
  t.wait_begin(0, 10, t.R, C1, 0x5000);               // S1: 0
  t.begin(0, 12, t.R, T0);
  t.spawn(0, 17, T0, T1, C1, kFor, 0x5100);  // T0a: 5
  t.chunk(0, 20, 120, T0);                   // 3 before it
  t.end(0, 122, T0, t.R);                    // 2 after
  t.begin(1, 30, 0, T1);
  t.tb.ev(1, 32, EventKind::ChunkBegin, {T1});       // T1a: 2
  t.spawn(1, 42, T1, N0, C2, kFor | kRoot, 0x6000);  // 10 in the chunk
  t.wait_begin(1, 42, T1, C2, 0x6000);
  t.begin(1, 45, T1, N0);
  t.chunk(1, 47, 247, N0);  // 2 before it
  t.end(1, 249, N0, T1);    // 2 after
  t.wait_end(1, 250, T1, C2, 0x6000);
  t.tb.ev(1, 260, EventKind::ChunkEnd, {T1});  // 10 in the chunk after the wait
  t.end(1, 262, T1, 0);                        // 2 after
  t.wait_end(0, 270, t.R, C1, 0x5000);
  t.program_end(280);  // S2: 10
  model::Model m = t.tb.build();
  expect_invariants(m);
  analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 10u + (5 + 3 + 100 + 2) + (2 + 10 + 10 + 2) + (2 + 200 + 2) + 10);
  // S0 T0a T1a, the chunk's 10, N0's 2 + 200 + 2, the chunk's 10, T1's 2, S2.
  EXPECT_EQ(p.span, 10u + 5 + 2 + 10 + 204 + 10 + 2 + 10);
  analysis::SiteRow outer = row_at(m, p, 0x5000, SiteKind::ParallelFor);
  EXPECT_EQ(outer.count, 1u);
  EXPECT_EQ(outer.work, 110u + 24 + 204);
  EXPECT_EQ(outer.span, 5u + 2 + 10 + 204 + 10 + 2);
  analysis::SiteRow inner = row_at(m, p, 0x6000, SiteKind::ParallelFor);
  EXPECT_EQ(inner.count, 1u);
  EXPECT_EQ(inner.span, 204u);
}

std::string model_error(TraceBuilder& tb) {
  try {
    tb.build();
  } catch (const model::ModelError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no ModelError";
  return {};
}

// A TBB whose ABI the recorder does not know: its tasks are not traced, and the builder says
// which TBB it was.
constexpr char kOldTbb[] = "TBB 2017-2020 (libtbb.so.2)";

// oneTBB's start-up inside the first call and what follows main()'s return are not work, in
// any metric: instructions (3 a tick here) follow the TSC's work strand by strand.
TEST(ModelTbb, FurtherMetricsSkipTheRuntimesStartUpAndTheEndLikeTheWork) {
  Tbb t(2, {trace::Metric::Tsc, trace::Metric::Instructions},
        [](uint32_t, uint64_t time) { return std::vector<uint64_t>{3 * time}; });
  uint64_t A = id(0, 2), G = 0x7f0000001000;
  auto mark = [&](uint64_t time, trace::MarkKind kind) {
    t.tb.ev(0, time, EventKind::Mark, {static_cast<uint64_t>(kind)});
  };
  mark(10, trace::MarkKind::RuntimeInitBegin);
  mark(60, trace::MarkKind::RuntimeInitEnd);
  t.spawn(0, 100, t.R, A, G, kTask, 0x1000);  // S0: 100 - 50 of start-up
  t.wait_begin(0, 110, t.R, G, 0x1100);       // S1: 10
  t.begin(1, 120, 0, A);
  t.end(1, 320, A, 0);  // A: 200
  t.wait_end(0, 330, t.R, G, 0x1100);
  mark(400, trace::MarkKind::MainReturn);  // S2: 70
  t.program_end(450);
  model::Model m = t.tb.build();
  expect_invariants(m);
  ASSERT_EQ(m.extra_metrics, std::vector<std::string>{"instructions"});
  uint64_t work = 0, instructions = 0;
  for (uint32_t s = 0; s < m.strands.size(); ++s) {
    EXPECT_EQ(m.extra_work[s], 3 * m.strands[s].work) << "strand " << s;
    work += m.strands[s].work;
    instructions += m.extra_work[s];
  }
  EXPECT_EQ(work, 50u + 10 + 200 + 70);
  EXPECT_EQ(instructions, 3 * work);
}

TEST(ModelTbb, UnsupportedTbbIsAClearError) {
  TraceBuilder tb(1, false);
  tb.runtime(trace::kRuntimeTbbUnsupported, kOldTbb);
  tb.ev(0, 0, EventKind::ThreadBegin, {1});
  tb.ev(0, 5, EventKind::ThreadEnd, {});
  std::string what = model_error(tb);
  EXPECT_NE(what.find(kOldTbb), std::string::npos) << what;
}

// The same program as the recorder writes it (src/recorder/recording.cpp, main_with_recording):
// for any TBB program, old ABI included, main() runs in a root task of the recorder's own, so
// the trace holds that task's ImplicitBegin and the MainStart mark, and still no TBB task.
TEST(ModelTbb, UnsupportedTbbWithTheRecordersRootTaskIsAClearError) {
  TraceBuilder tb(1, false);
  tb.runtime(trace::kRuntimeTbbUnsupported, kOldTbb);
  tb.ev(0, 0, EventKind::ThreadBegin, {1});
  tb.ev(0, 0, EventKind::ImplicitBegin, {0, id(0, 1), 1, 0, 1});
  tb.ev(0, 1, EventKind::Mark, {static_cast<uint64_t>(trace::MarkKind::MainStart)});
  tb.ev(0, 500, EventKind::Mark, {static_cast<uint64_t>(trace::MarkKind::ProgramEnd)});
  std::string what = model_error(tb);
  EXPECT_NE(what.find(kOldTbb), std::string::npos) << what;
}

TEST(ModelTbb, TraceWithoutOpenMPNorTbbActivityNamesBoth) {
  TraceBuilder tb(1);
  tb.ev(0, 5, EventKind::ThreadBegin, {1});
  std::string what = model_error(tb);
  EXPECT_NE(what.find("OpenMP"), std::string::npos) << what;
  EXPECT_NE(what.find("oneTBB"), std::string::npos) << what;
}

// A thread of the program's own (std::thread) calling oneTBB outside every task runs a task of
// its own, beside the main thread's work: not after it.
TEST(ModelTbb, CallsFromTheProgramsOwnThreadsRunBesideTheMainThread) {
  TraceBuilder tb(2, false);
  tb.runtime(trace::kRuntimeTbb, kVersion);
  const uint64_t R = id(0, 1), T0 = id(1, 1);
  tb.ev(0, 0, EventKind::ThreadBegin, {1});
  tb.ev(0, 0, EventKind::ImplicitBegin, {0, R, 1, 0, 1});
  tb.ev(0, 0, EventKind::Mark, {static_cast<uint64_t>(trace::MarkKind::MainStart)});
  tb.ev(1, 5, EventKind::ThreadBegin, {3});
  tb.ev(1, 10, EventKind::TbbSpawn, {0, T0, 0x7000, kFor | kRoot, 0x5000});
  tb.ev(1, 10, EventKind::TbbWaitBegin, {0, 0x7000, 0x5000});
  tb.ev(1, 12, EventKind::TaskSchedule, {0, kSwitch, T0});
  tb.ev(1, 312, EventKind::TaskSchedule, {T0, kComplete, 0});  // T0: 300
  tb.ev(1, 315, EventKind::TbbWaitEnd, {0, 0x7000, 0x5000});
  tb.ev(1, 400, EventKind::ThreadEnd, {});  // the thread's own task: 85 after the wait
  tb.ev(0, 1000, EventKind::Mark, {static_cast<uint64_t>(trace::MarkKind::ProgramEnd)});
  model::Model m = tb.build();
  expect_invariants(m);
  analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 1000u + 300 + 85);
  EXPECT_EQ(p.span, 1000u);  // the main thread's serial work, beside the other thread's
}

}  // namespace
}  // namespace tasklens
