// The model builder on synthetic traces of worksharing loops: which strands hold iterations seen
// only together (Model::divisible) and how many, for each way the runtime reports a loop.
// (e2e_loops_test.cpp records the real loop forms.)
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "analysis/loops.hpp"
#include "analysis/profile.hpp"
#include "model/builder.hpp"
#include "model_team.hpp"
#include "trace_builder.hpp"

namespace tasklens {
namespace {

using namespace fixtures;  // model_team.hpp: the OMPT values and Region

std::vector<uint64_t> iterations_of(const model::Model& m) {
  std::vector<uint64_t> out;
  for (const model::DivisibleStrand& d : m.divisible) out.push_back(d.iterations);
  return out;
}

// Closes a loop of both threads at a_end / b_end, then the region.
void end_loop(TraceBuilder& tb, Region& r, uint64_t a_end, uint64_t b_end) {
  tb.ev(0, a_end, EventKind::WorkEnd, {kLoop, r.A, 0x3001});
  tb.ev(1, b_end, EventKind::WorkEnd, {kLoop, r.B, 0x3001});
  tb.ev(1, b_end, EventKind::SyncBegin, {kBarrier, r.B, 0});
  r.end(a_end, std::max(a_end, b_end) + 10);
}

// schedule(static, 4) over 64 iterations: the runtime reports each thread's first chunk only
// (4 iterations at 0 and at 4); each thread then ran 8 chunks, 32 iterations, in one strand.
TEST(ModelLoops, AStaticScheduleWithAChunkSizeGetsEachThreadsWholeShare) {
  TraceBuilder tb(2);
  Region r{tb};
  r.open_team();
  tb.ev(0, 10, EventKind::WorkBegin, {kLoop, r.A, 64, 0x3000});
  tb.ev(1, 10, EventKind::WorkBegin, {kLoop, r.B, 64, 0x3000});
  tb.ev(0, 10, EventKind::Dispatch, {kChunk, r.A, 0, 4});
  tb.ev(1, 10, EventKind::Dispatch, {kChunk, r.B, 4, 4});
  end_loop(tb, r, 3210, 6410);
  model::Model m = tb.build();
  expect_invariants(m);
  EXPECT_EQ(iterations_of(m), (std::vector<uint64_t>{32, 32}));
  // The longer share's iteration: 6400 / 32.
  EXPECT_EQ(analysis::compute_profile(m).span, 200u);
}

// Three threads' first chunks of 5 over 32 iterations (7 chunks, the last of 2): ranks 0, 1, 2
// run chunks {0, 3, 6}, {1, 4}, {2, 5}: 12, 10 and 10 iterations. Ranked by start, not by
// thread or arrival.
TEST(ModelLoops, StaticChunkSharesFollowTheThreadsRanks) {
  TraceBuilder tb(3);
  const uint64_t I = id(0, 2), P = id(0, 3), A = id(0, 4), B = id(1, 1), C = id(2, 1);
  tb.ev(0, 0, EventKind::ImplicitBegin, {id(0, 1), I, 1, 1, kInitial});
  tb.ev(0, 10, EventKind::ParallelBegin, {I, P, 3, 0, 0x1000});
  const uint64_t tasks[] = {A, B, C}, starts[] = {10, 0, 5};  // thread 1 has rank 0
  for (uint32_t t = 0; t < 3; ++t) {
    tb.ev(t, 10, EventKind::ImplicitBegin, {P, tasks[t], 3, t, kImplicit});
    tb.ev(t, 10, EventKind::WorkBegin, {kLoop, tasks[t], 32, 0x3000});
    tb.ev(t, 11, EventKind::Dispatch, {kChunk, tasks[t], starts[t], 5});
    tb.ev(t, 1000, EventKind::WorkEnd, {kLoop, tasks[t], 0x3001});
    tb.ev(t, 1000, EventKind::SyncBegin, {kBarrier, tasks[t], t ? 0u : 0x1000u});
  }
  tb.ev(0, 1010, EventKind::SyncEnd, {kBarrier, A, 0x1000});
  tb.ev(0, 1010, EventKind::ImplicitEnd, {A, 0, kImplicit});
  tb.ev(0, 1010, EventKind::ParallelEnd, {P, I, 0, 0x1000});
  for (uint32_t t = 1; t < 3; ++t) {
    tb.ev(t, 1011, EventKind::SyncEnd, {kBarrier, tasks[t], 0});
    tb.ev(t, 1011, EventKind::ImplicitEnd, {tasks[t], t, kImplicit});
  }
  model::Model m = tb.build();
  expect_invariants(m);
  std::vector<uint64_t> got = iterations_of(m);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<uint64_t>{10, 10, 12}));
}

// A one-thread team: the runtime reports no chunk at all; the thread's share is the whole loop.
TEST(ModelLoops, AOneThreadTeamsLoopIsItsWholeTripCount) {
  TraceBuilder tb(1);
  const uint64_t I = id(0, 2), P = id(0, 3), A = id(0, 4);
  tb.ev(0, 0, EventKind::ImplicitBegin, {id(0, 1), I, 1, 1, kInitial});
  tb.ev(0, 10, EventKind::ParallelBegin, {I, P, 1, 0, 0x1000});
  tb.ev(0, 10, EventKind::ImplicitBegin, {P, A, 1, 0, kImplicit});
  tb.ev(0, 20, EventKind::WorkBegin, {kLoop, A, 64, 0x3000});
  tb.ev(0, 6420, EventKind::WorkEnd, {kLoop, A, 0x3001});
  tb.ev(0, 6420, EventKind::SyncBegin, {kBarrier, A, 0x1000});
  tb.ev(0, 6430, EventKind::SyncEnd, {kBarrier, A, 0x1000});
  tb.ev(0, 6430, EventKind::ImplicitEnd, {A, 0, kImplicit});
  tb.ev(0, 6430, EventKind::ParallelEnd, {P, I, 0, 0x1000});
  model::Model m = tb.build();
  expect_invariants(m);
  EXPECT_EQ(iterations_of(m), std::vector<uint64_t>{64});
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_GE(p.work, 6400u);
  EXPECT_LT(p.span, 6430u / 32);  // 6400 / 64 plus the few ticks around the loop
}

// Dynamic chunks of 4 weigh one iteration; chunks of 1 are iterations already (no entry), and a
// chunk whose body made a task was seen in parts (no entry either).
TEST(ModelLoops, ChunksOfSeveralIterationsAreDivisibleUnlessTheyHoldConstructs) {
  TraceBuilder tb(2);
  Region r{tb};
  r.open_team();
  tb.ev(0, 10, EventKind::WorkBegin, {kLoop, r.A, 9, 0x3000});
  tb.ev(1, 10, EventKind::WorkBegin, {kLoop, r.B, 9, 0x3000});
  tb.ev(0, 10, EventKind::Dispatch, {kChunk, r.A, 0, 4});   // 400: divisible by 4
  tb.ev(0, 410, EventKind::Dispatch, {kChunk, r.A, 8, 1});  // 100: one iteration
  tb.ev(1, 10, EventKind::Dispatch, {kChunk, r.B, 4, 4});   // makes a task: seen in parts
  const uint64_t T = id(1, 7);
  tb.ev(1, 50, EventKind::TaskCreate, {r.B, T, kExplicit, 0x2000});
  tb.ev(0, 510, EventKind::WorkEnd, {kLoop, r.A, 0x3001});
  tb.ev(0, 510, EventKind::TaskSchedule, {r.A, kSwitch, T});
  tb.ev(0, 530, EventKind::TaskSchedule, {T, kComplete, r.A});
  tb.ev(1, 410, EventKind::WorkEnd, {kLoop, r.B, 0x3001});
  tb.ev(1, 410, EventKind::SyncBegin, {kBarrier, r.B, 0});
  r.end(530, 540);
  model::Model m = tb.build();
  expect_invariants(m);
  EXPECT_EQ(iterations_of(m), std::vector<uint64_t>{4});
}

// `ordered` over 4 iterations of 100 with ordered parts of 10, the second thread (B) holding the
// first two: the parts chain in iteration order across the threads, each after its own body, and
// a body does not wait for the previous iteration's part: S = 100 + 4 x 10, not a thread's share.
TEST(ModelLoops, OrderedPartsChainAcrossThreadsInIterationOrder) {
  constexpr uint64_t kOrdered = 7;
  TraceBuilder tb(2);
  Region r{tb};
  r.open_team();
  tb.ev(0, 10, EventKind::WorkBegin, {kLoop, r.A, 4, 0x3000});
  tb.ev(1, 10, EventKind::WorkBegin, {kLoop, r.B, 4, 0x3000});
  tb.ev(0, 10, EventKind::Dispatch, {kChunk, r.A, 2, 2});
  tb.ev(1, 10, EventKind::Dispatch, {kChunk, r.B, 0, 2});
  // B: body 0, part 0, body 1, part 1.
  tb.ev(1, 110, EventKind::MutexWaitBegin, {kOrdered});
  tb.ev(1, 110, EventKind::MutexWaitEnd, {kOrdered});
  tb.ev(1, 120, EventKind::MutexReleased, {kOrdered});
  tb.ev(1, 220, EventKind::MutexWaitBegin, {kOrdered});
  tb.ev(1, 220, EventKind::MutexWaitEnd, {kOrdered});
  tb.ev(1, 230, EventKind::MutexReleased, {kOrdered});
  // A: body 2, waits for part 1, part 2, body 3, part 3.
  tb.ev(0, 110, EventKind::MutexWaitBegin, {kOrdered});
  tb.ev(0, 230, EventKind::MutexWaitEnd, {kOrdered});
  tb.ev(0, 240, EventKind::MutexReleased, {kOrdered});
  tb.ev(0, 340, EventKind::MutexWaitBegin, {kOrdered});
  tb.ev(0, 340, EventKind::MutexWaitEnd, {kOrdered});
  tb.ev(0, 350, EventKind::MutexReleased, {kOrdered});
  end_loop(tb, r, 350, 230);
  model::Model m = tb.build();
  expect_invariants(m);  // (no backward edge either: that would be a warning)
  EXPECT_TRUE(m.divisible.empty()) << "iterations seen one by one";
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 440u);
  EXPECT_EQ(p.span, 140u);
}

// schedule(static) without a chunk size over 64 iterations: the runtime reports each thread's
// whole share as its one chunk (32 iterations each, 3200 and 6400 of work). Each share weighs
// one iteration on paths, and the loop analysis sees its shares' imbalance: per iteration 100
// and 200, against a mean of 150 (a third above it).
TEST(ModelLoops, AStaticScheduleWithoutAChunkSizeIsEachThreadsShareAndShowsItsImbalance) {
  constexpr uint64_t kLoopStatic = 10;  // ompt_work_loop_static
  TraceBuilder tb(2);
  Region r{tb};
  r.open_team();
  tb.ev(0, 10, EventKind::WorkBegin, {kLoopStatic, r.A, 64, 0x3000});
  tb.ev(1, 10, EventKind::WorkBegin, {kLoopStatic, r.B, 64, 0x3000});
  tb.ev(0, 10, EventKind::Dispatch, {kChunk, r.A, 0, 32});
  tb.ev(1, 10, EventKind::Dispatch, {kChunk, r.B, 32, 32});
  tb.ev(0, 3210, EventKind::WorkEnd, {kLoopStatic, r.A, 0x3001});  // A's share: 3200
  tb.ev(1, 6410, EventKind::WorkEnd, {kLoopStatic, r.B, 0x3001});  // B's share: 6400
  tb.ev(1, 6410, EventKind::SyncBegin, {kBarrier, r.B, 0});
  r.end(3210, 6420);
  model::Model m = tb.build();
  expect_invariants(m);
  EXPECT_EQ(iterations_of(m), (std::vector<uint64_t>{32, 32}));
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 9600u);
  EXPECT_EQ(p.span, 200u);  // B's iteration: 6400 / 32
  const std::vector<analysis::LoopFacts> facts = analysis::loop_facts(m);
  ASSERT_EQ(facts.size(), 1u);
  EXPECT_EQ(m.sites[facts[0].site].address, 0x3000u);
  EXPECT_EQ(facts[0].strands_together, 2u);
  EXPECT_EQ(facts[0].iterations_together, 64u);
  EXPECT_EQ(facts[0].static_instances, 1u);
  EXPECT_NEAR(facts[0].share_imbalance, (200.0 - 150) / 150, 1e-12);
}

// schedule(guided) over 14 iterations of 100: chunks of 7 (A), then 4, 2 and 1 (B). Every chunk
// of several iterations weighs one iteration: the loop is 14-way parallel. B's several chunks
// are no static share.
TEST(ModelLoops, GuidedChunksOfDecreasingSizeEachWeighOneIteration) {
  constexpr uint64_t kLoopGuided = 12;  // ompt_work_loop_guided
  TraceBuilder tb(2);
  Region r{tb};
  r.open_team();
  tb.ev(0, 10, EventKind::WorkBegin, {kLoopGuided, r.A, 14, 0x3000});
  tb.ev(1, 10, EventKind::WorkBegin, {kLoopGuided, r.B, 14, 0x3000});
  tb.ev(0, 10, EventKind::Dispatch, {kChunk, r.A, 0, 7});
  tb.ev(0, 710, EventKind::WorkEnd, {kLoopGuided, r.A, 0x3001});  // 7 x 100
  tb.ev(1, 10, EventKind::Dispatch, {kChunk, r.B, 7, 4});
  tb.ev(1, 410, EventKind::Dispatch, {kChunk, r.B, 11, 2});       // 4 x 100
  tb.ev(1, 610, EventKind::Dispatch, {kChunk, r.B, 13, 1});       // 2 x 100
  tb.ev(1, 710, EventKind::WorkEnd, {kLoopGuided, r.B, 0x3001});  // 1 x 100
  tb.ev(1, 710, EventKind::SyncBegin, {kBarrier, r.B, 0});
  r.end(710, 720);
  model::Model m = tb.build();
  expect_invariants(m);
  std::vector<uint64_t> got = iterations_of(m);
  std::sort(got.begin(), got.end());
  EXPECT_EQ(got, (std::vector<uint64_t>{2, 4, 7}));  // a chunk of 1 is one iteration already
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 1400u);
  EXPECT_EQ(p.span, 100u);
  const std::vector<analysis::LoopFacts> facts = analysis::loop_facts(m);
  ASSERT_EQ(facts.size(), 1u);
  EXPECT_EQ(facts[0].strands_together, 3u);
  EXPECT_EQ(facts[0].iterations_together, 13u);
  EXPECT_EQ(facts[0].static_instances, 0u);
}

// Two dynamic,1 loops of 2 iterations, the first `nowait`: A runs 100 then 300, B 300 then 100.
// Each thread starts the second loop once its own chunks of the first are done, without waiting
// for the other's: the span is 400 (with a barrier between the loops: 300 + 300).
TEST(ModelLoops, AfterANowaitLoopEachThreadGoesOnFromItsOwnChunks) {
  TraceBuilder tb(2);
  Region r{tb};
  r.open_team();
  const uint64_t first[2] = {100, 300}, second[2] = {300, 100};
  for (uint32_t t = 0; t < 2; ++t) {
    const uint64_t task = t ? r.B : r.A, mid = 10 + first[t], end = mid + second[t];
    tb.ev(t, 10, EventKind::WorkBegin, {kLoop, task, 2, 0x3000});
    tb.ev(t, 10, EventKind::Dispatch, {kChunk, task, t, 1});
    tb.ev(t, mid, EventKind::WorkEnd, {kLoop, task, 0x3001});
    tb.ev(t, mid, EventKind::WorkBegin, {kLoop, task, 2, 0x4000});
    tb.ev(t, mid, EventKind::Dispatch, {kChunk, task, t, 1});
    tb.ev(t, end, EventKind::WorkEnd, {kLoop, task, 0x4001});
  }
  tb.ev(1, 410, EventKind::SyncBegin, {kBarrier, r.B, 0});
  r.end(410, 420);
  model::Model m = tb.build();
  expect_invariants(m);
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 800u);
  EXPECT_EQ(p.span, 400u);
  for (uint64_t site : {0x3000u, 0x4000u}) {
    bool found = false;
    for (const analysis::SiteRow& row : p.sites)
      if (m.sites[row.site].address == site) {
        found = true;
        EXPECT_EQ(row.count, 1u) << std::hex << site;
        EXPECT_EQ(row.work, 400u) << std::hex << site;
        EXPECT_EQ(row.span, 300u) << std::hex << site;
      }
    EXPECT_TRUE(found) << std::hex << site;
  }
}

// In one pass a thread's first chunk of a dynamic loop is held back until the loop ends, to know
// whether it stands alone for its iterations; what follows the loop must still wait for it. Here
// it is the longest chunk (300), and thread 0 reaches the loop's barrier (at 320) before thread 1
// ends the loop (at 410): the loop's span and the program's are that chunk's.
TEST(ModelLoops, AChunkHeldBackUntilTheLoopEndsStillBoundsWhatFollows) {
  constexpr uint64_t kWorkshareBarrier = 8;  // ompt_sync_region_barrier_implicit_workshare
  TraceBuilder tb(2);
  Region r{tb};
  r.open_team();
  const uint64_t chunks[2][2] = {{300, 10}, {200, 200}};
  for (uint32_t t = 0; t < 2; ++t) {
    const uint64_t task = t ? r.B : r.A, mid = 10 + chunks[t][0], end = mid + chunks[t][1];
    tb.ev(t, 10, EventKind::WorkBegin, {kLoop, task, 4, 0x3000});
    tb.ev(t, 10, EventKind::Dispatch, {kChunk, task, 2 * t, 1});
    tb.ev(t, mid, EventKind::Dispatch, {kChunk, task, 2 * t + 1, 1});
    tb.ev(t, end, EventKind::WorkEnd, {kLoop, task, 0x3001});
    tb.ev(t, end, EventKind::SyncBegin, {kWorkshareBarrier, task, 0x3002});
    tb.ev(t, 410, EventKind::SyncEnd, {kWorkshareBarrier, task, 0x3002});
  }
  tb.ev(1, 415, EventKind::SyncBegin, {kBarrier, r.B, 0});  // B: 5
  r.end(420, 430);                                          // A: 10
  model::Model m = tb.build();                              // (which compares the one-pass reading)
  expect_invariants(m);
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 710u + 10 + 5);
  EXPECT_EQ(p.span, 300u + 10);
  bool found = false;
  for (const analysis::SiteRow& row : p.sites)
    if (m.sites[row.site].address == 0x3000) {
      found = true;
      EXPECT_EQ(row.work, 710u);
      EXPECT_EQ(row.span, 300u);
      EXPECT_EQ(row.critical_work, 300u);
    }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace tasklens
