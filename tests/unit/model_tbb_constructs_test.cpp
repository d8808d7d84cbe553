// The model builder on synthetic oneTBB traces of the constructs model_tbb_test.cpp does not
// cover: parallel_reduce, parallel_sort and the other algorithms' splits, parallel_invoke,
// task_arena::execute (nested too), enqueued tasks, cancellation and exceptions, task bypass,
// parallel_pipeline, and threads the program starts itself that nobody joins. (Flow graphs are
// model_tbb_flow_test.cpp's.) Exact work and span (1 tick = 1 ns); "S0: 10" beside an event
// means the strand that ends there did 10 of work.
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
using model::SiteKind;
using trace::EventKind;

constexpr uint64_t kSwitch = 7, kComplete = 1, kCancel = 3;  // TaskSchedule statuses
// trace::TbbKind
constexpr uint64_t kTask = 1, kReduce = 3, kInvoke = 4, kSort = 5, kOther = 7, kArena = 8,
                   kEnqueued = 9;
constexpr uint64_t kRoot = 0x80, kBypass = 0x40;  // TbbSpawn kind flags

// A oneTBB trace: thread 0 runs main() in the root task R, the other threads are idle workers.
struct Tbb {
  TraceBuilder tb;
  uint64_t R = id(0, 1);
  explicit Tbb(uint32_t threads) : tb(threads, false) {
    tb.runtime(trace::kRuntimeTbb, "oneTBB 2021.11.0 (interface 12110)");
    tb.ev(0, 0, EventKind::ThreadBegin, {1});
    tb.ev(0, 0, EventKind::ImplicitBegin, {0, R, 1, 0, 1});
    tb.ev(0, 0, EventKind::Mark, {static_cast<uint64_t>(trace::MarkKind::MainStart)});
    for (uint32_t t = 1; t < threads; ++t) tb.ev(t, 0, EventKind::ThreadBegin, {2});
  }
  void spawn(uint32_t t, uint64_t time, uint64_t parent, uint64_t task, uint64_t group,
             uint64_t kind, uint64_t code) {
    tb.ev(t, time, EventKind::TbbSpawn, {parent, task, group, kind, code});
  }
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
  // One call of the algorithm's body (the wrappers of include/tasklens/tbb.h).
  void chunk(uint32_t t, uint64_t begin, uint64_t end, uint64_t task) {
    tb.ev(t, begin, EventKind::ChunkBegin, {task});
    tb.ev(t, end, EventKind::ChunkEnd, {task});
  }
  void program_end(uint64_t time) {
    tb.ev(0, time, EventKind::Mark, {static_cast<uint64_t>(trace::MarkKind::ProgramEnd)});
  }
};

uint32_t site_at(const model::Model& m, uint64_t address) {
  for (uint32_t s = 0; s < m.sites.size(); ++s)
    if (m.sites[s].address == address) return s;
  return model::kNone;
}

// The profile row of the site at `address`, checked to be of `kind`; a zero row if none.
analysis::SiteRow row_at(const model::Model& m, const analysis::Profile& p, uint64_t address,
                         SiteKind kind) {
  const uint32_t site = site_at(m, address);
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

size_t rows_of(const model::Model& m, const analysis::Profile& p, SiteKind kind) {
  size_t n = 0;
  for (const analysis::SiteRow& row : p.sites) n += m.sites[row.site].kind == kind;
  return n;
}

// ------------------------------------------------------------------------ algorithms

// parallel_reduce, parallel_sort and the other algorithms (Other: parallel_for_each, scan ...)
// split like parallel_for: the call's root task T0 (spawned by execute_and_wait) spawns T1,
// which spawns T2, all of the call's kind. The splits are parts of the call: one construct at
// the call's site, none at the splits' code.
TEST(ModelTbbConstructs, SplitsOfReduceSortAndOtherAlgorithmsBelongToTheirCall) {
  const std::pair<uint64_t, SiteKind> kinds[] = {{kReduce, SiteKind::ParallelReduce},
                                                 {kSort, SiteKind::ParallelSort},
                                                 {kOther, SiteKind::TbbAlgorithm}};
  for (auto [kind, site_kind] : kinds) {
    SCOPED_TRACE(model::to_string(site_kind));
    Tbb t(3);
    const uint64_t T0 = id(0, 2), T1 = id(0, 3), T2 = id(1, 1), C = 0x7f0000001000;
    t.spawn(0, 10, t.R, T0, C, kind | kRoot, 0x5000);  // S0: 10
    t.wait_begin(0, 10, t.R, C, 0x5000);
    t.begin(0, 12, t.R, T0);
    t.spawn(0, 22, T0, T1, C, kind, 0x5100);  // T0a: 10
    t.end(0, 122, T0, t.R);                   // T0b: 100
    t.begin(1, 25, 0, T1);
    t.spawn(1, 35, T1, T2, C, kind, 0x5200);  // T1a: 10
    t.end(1, 135, T1, 0);                     // T1b: 100
    t.begin(2, 40, 0, T2);
    t.end(2, 240, T2, 0);  // T2: 200
    t.wait_end(0, 245, t.R, C, 0x5000);
    t.program_end(255);  // S2: 10
    model::Model m = t.tb.build();
    expect_invariants(m);
    const analysis::Profile p = analysis::compute_profile(m);
    EXPECT_EQ(p.work, 10u + 10 + 100 + 10 + 100 + 200 + 10);
    EXPECT_EQ(p.span, 10u + 10 + 10 + 200 + 10);  // S0 T0a T1a T2 S2
    EXPECT_EQ(rows_of(m, p, site_kind), 1u);
    const analysis::SiteRow row = row_at(m, p, 0x5000, site_kind);
    EXPECT_EQ(row.count, 1u);
    EXPECT_EQ(row.work, 420u);
    EXPECT_EQ(row.span, 10u + 10 + 200);
    EXPECT_EQ(site_at(m, 0x5100), model::kNone);
    EXPECT_EQ(site_at(m, 0x5200), model::kNone);
  }
}

// The wrappers' chunks of a parallel_reduce are logically parallel like a parallel_for's: its
// root task runs two bodies of 100 one after the other, 5 apart; the span takes one of them.
TEST(ModelTbbConstructs, ParallelReduceChunksAreParallel) {
  Tbb t(1);
  const uint64_t T0 = id(0, 2), C = 0x7f0000001000;
  t.spawn(0, 10, t.R, T0, C, kReduce | kRoot, 0x5000);  // S0: 10
  t.wait_begin(0, 10, t.R, C, 0x5000);
  t.begin(0, 12, t.R, T0);
  t.chunk(0, 15, 115, T0);   // 3 before it
  t.chunk(0, 120, 220, T0);  // 5 between
  t.end(0, 222, T0, t.R);    // 2 after
  t.wait_end(0, 230, t.R, C, 0x5000);
  t.program_end(240);  // S2: 10
  model::Model m = t.tb.build();
  expect_invariants(m);
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 10u + 3 + 100 + 5 + 100 + 2 + 10);
  EXPECT_EQ(p.span, 10u + 3 + 5 + 100 + 2 + 10);  // the code between chunks stays in order
  const analysis::SiteRow row = row_at(m, p, 0x5000, SiteKind::ParallelReduce);
  EXPECT_EQ(row.count, 1u);
  EXPECT_EQ(row.work, 210u);
  EXPECT_EQ(row.span, 110u);
}

// parallel_invoke(f1, f2, f3) spawns f1 and f2, then runs f3 through execute_and_wait: the three
// tasks one task spawned into one group for one call are one instance. A second call at the same
// line (after the first one's wait) is a second instance.
TEST(ModelTbbConstructs, AParallelInvokesFunctionsAreOneInstancePerCall) {
  Tbb t(3);
  const uint64_t F1 = id(0, 2), F2 = id(0, 3), F3 = id(0, 4), G1 = id(0, 5), G2 = id(0, 6);
  const uint64_t C = 0x7f0000001000, kAt = 0x6000;
  t.spawn(0, 10, t.R, F1, C, kInvoke, kAt);          // S0: 10
  t.spawn(0, 20, t.R, F2, C, kInvoke, kAt);          // S1: 10
  t.spawn(0, 25, t.R, F3, C, kInvoke | kRoot, kAt);  // S2: 5
  t.wait_begin(0, 25, t.R, C, kAt);
  t.begin(0, 26, t.R, F3);
  t.end(0, 326, F3, t.R);  // F3: 300
  t.begin(1, 12, 0, F1);
  t.end(1, 112, F1, 0);  // F1: 100
  t.begin(2, 22, 0, F2);
  t.end(2, 222, F2, 0);  // F2: 200
  t.wait_end(0, 330, t.R, C, kAt);
  t.spawn(0, 340, t.R, G1, C, kInvoke, kAt);          // S3: 10
  t.spawn(0, 345, t.R, G2, C, kInvoke | kRoot, kAt);  // S4: 5
  t.wait_begin(0, 345, t.R, C, kAt);
  t.begin(0, 346, t.R, G2);
  t.end(0, 406, G2, t.R);  // G2: 60
  t.begin(1, 341, 0, G1);
  t.end(1, 391, G1, 0);  // G1: 50
  t.wait_end(0, 410, t.R, C, kAt);
  t.program_end(420);  // S5: 10
  model::Model m = t.tb.build();
  expect_invariants(m);
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 25u + 600 + 15 + 110 + 10);
  EXPECT_EQ(p.span, 25u + 300 + 15 + 60 + 10);  // S0 S1 S2 F3, S3 S4 G2, S5
  const analysis::SiteRow row = row_at(m, p, kAt, SiteKind::ParallelInvoke);
  EXPECT_EQ(row.count, 2u);
  EXPECT_EQ(row.work, 600u + 110);
  EXPECT_EQ(row.span, 300u + 60);  // each call's longest function
  EXPECT_EQ(m.task_count, 5u);
}

// task_arena::execute runs its delegate as a task X that the caller waits for; X calls another
// arena's execute (Y, run by a thread of that arena). Each is a construct of its own, the inner
// one inside the outer.
TEST(ModelTbbConstructs, NestedArenaExecutesAreConstructsInsideEachOther) {
  Tbb t(2);
  const uint64_t X = id(0, 2), Y = id(0, 3), D1 = 0x7f0000001000, D2 = 0x7f0000002000;
  t.spawn(0, 10, t.R, X, D1, kArena | kRoot, 0x8000);  // S0: 10
  t.wait_begin(0, 10, t.R, D1, 0x8000);
  t.begin(0, 12, t.R, X);
  t.spawn(0, 32, X, Y, D2, kArena | kRoot, 0x9000);  // X1: 20
  t.wait_begin(0, 32, X, D2, 0x9000);
  t.begin(1, 35, 0, Y);
  t.end(1, 235, Y, 0);  // Y: 200
  t.wait_end(0, 240, X, D2, 0x9000);
  t.end(0, 250, X, t.R);  // X2: 10
  t.wait_end(0, 252, t.R, D1, 0x8000);
  t.program_end(262);  // S2: 10
  model::Model m = t.tb.build();
  expect_invariants(m);
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 10u + 20 + 200 + 10 + 10);
  EXPECT_EQ(p.span, p.work);  // all in series
  EXPECT_EQ(rows_of(m, p, SiteKind::ArenaExecute), 2u);
  const analysis::SiteRow outer = row_at(m, p, 0x8000, SiteKind::ArenaExecute);
  EXPECT_EQ(outer.count, 1u);
  EXPECT_EQ(outer.work, 230u);
  EXPECT_EQ(outer.span, 230u);
  const analysis::SiteRow inner = row_at(m, p, 0x9000, SiteKind::ArenaExecute);
  EXPECT_EQ(inner.count, 1u);
  EXPECT_EQ(inner.work, 200u);
  EXPECT_EQ(inner.span, 200u);
}

// A task enqueued into an arena (task_arena::enqueue, no group) is never joined: it runs beside
// everything to the end, even past a wait of the thread that enqueued it.
TEST(ModelTbbConstructs, AnEnqueuedTaskIsNeverJoined) {
  Tbb t(2);
  const uint64_t E = id(0, 2), A = id(0, 3), G = 0x7f0000001000;
  t.spawn(0, 10, t.R, E, 0, kEnqueued, 0x8800);  // S0: 10
  t.spawn(0, 20, t.R, A, G, kTask, 0x1000);      // S1: 10
  t.wait_begin(0, 20, t.R, G, 0x1100);
  t.begin(0, 21, t.R, A);
  t.end(0, 71, A, t.R);  // A: 50
  t.wait_end(0, 75, t.R, G, 0x1100);
  t.program_end(175);  // S2: 100
  t.begin(1, 12, 0, E);
  t.end(1, 512, E, 0);  // E: 500
  model::Model m = t.tb.build();
  expect_invariants(m);
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 10u + 10 + 50 + 100 + 500);
  EXPECT_EQ(p.span, 10u + 500);  // S0 -> E, which nothing waits for (R's chain: 170)
  ASSERT_FALSE(p.critical_path.empty());
  EXPECT_EQ(m.strands[p.critical_path.back()].work, 500u);
  EXPECT_EQ(row_at(m, p, 0x8800, SiteKind::Task).work, 500u);
}

// A task_group whose task A throws (its run ends; the wait rethrows once the group is done) and
// whose task B is cancelled: B's cancel slot runs (status cancel; 100 here, so that its join
// shows) and ends B like a completion, joined by the group's wait.
TEST(ModelTbbConstructs, ACancelledTaskIsDoneAndJoinedByItsGroupsWait) {
  Tbb t(3);
  const uint64_t A = id(0, 2), B = id(0, 3), G = 0x7f0000001000;
  t.spawn(0, 10, t.R, A, G, kTask, 0x1000);  // S0: 10
  t.spawn(0, 20, t.R, B, G, kTask, 0x1010);  // S1: 10
  t.wait_begin(0, 25, t.R, G, 0x1100);       // S2: 5
  t.begin(1, 15, 0, A);
  t.end(1, 65, A, 0);  // A: 50, ended by its exception
  t.begin(2, 70, 0, B);
  t.tb.ev(2, 170, EventKind::TaskSchedule, {B, kCancel, 0});  // B: 100, cancelled
  t.wait_end(0, 175, t.R, G, 0x1100);
  t.program_end(185);  // S3: 10
  model::Model m = t.tb.build();
  expect_invariants(m);
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 10u + 10 + 5 + 50 + 100 + 10);
  // S0 S1 -> B -> S3 (B not joined: 120; through A: 70).
  EXPECT_EQ(p.span, 10u + 10 + 100 + 10);
  EXPECT_EQ(m.task_count, 2u);
}

// Task bypass: A, in group G, returns task H for the scheduler to run next (a deferred
// task_handle): no spawn into a group, yet H is in A's group, and G's wait joins it.
TEST(ModelTbbConstructs, ATaskRunByBypassIsJoinedWithItsSpawnersGroup) {
  Tbb t(2);
  const uint64_t A = id(0, 2), H = id(1, 1), G = 0x7f0000001000;
  t.spawn(0, 10, t.R, A, G, kTask, 0x1000);  // S0: 10
  t.wait_begin(0, 20, t.R, G, 0x1100);       // S1: 10
  t.begin(1, 15, 0, A);
  t.spawn(1, 115, A, H, 0, kTask | kBypass, 0);  // A1: 100
  t.end(1, 116, A, 0);                           // A2: 1
  t.begin(1, 116, 0, H);
  t.end(1, 416, H, 0);  // H: 300
  t.wait_end(0, 420, t.R, G, 0x1100);
  t.program_end(430);  // S2: 10
  model::Model m = t.tb.build();
  expect_invariants(m);
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 10u + 10 + 100 + 1 + 300 + 10);
  EXPECT_EQ(p.span, 10u + 100 + 300 + 10);  // S0 A1 H S2 (H not joined: 410)
}

// parallel_pipeline: a construct at the user's call (its root P, an Other task spawned by
// execute_and_wait), whose filter tasks are parts of it. P runs the serial input filter for 3
// tokens (10 each) and spawns each token's parallel body (300) as it goes: the serial filter is
// a chain, the bodies run beside each other.
TEST(ModelTbbConstructs, APipelineIsOneConstructWithItsSerialFilterAChain) {
  Tbb t(4);
  const uint64_t P = id(0, 2), C = 0x7f0000001000;
  const uint64_t body[3] = {id(0, 3), id(0, 4), id(0, 5)};
  t.spawn(0, 10, t.R, P, C, kOther | kRoot, 0x9100);  // S0: 10
  t.wait_begin(0, 10, t.R, C, 0x9100);
  t.begin(0, 11, t.R, P);
  for (uint32_t k = 0; k < 3; ++k) {
    t.spawn(0, 21 + 10 * k, P, body[k], C, kOther, 0x9200);  // P: 10 (token k's input)
    t.begin(k + 1, 22 + 10 * k, 0, body[k]);
    t.end(k + 1, 322 + 10 * k, body[k], 0);  // body: 300
  }
  t.end(0, 42, P, t.R);  // P: 1
  t.wait_end(0, 345, t.R, C, 0x9100);
  t.program_end(355);  // S2: 10
  model::Model m = t.tb.build();
  expect_invariants(m);
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 10u + 31 + 900 + 10);
  EXPECT_EQ(p.span, 10u + 30 + 300 + 10);  // S0, the input filter 3 times, the last body, S2
  EXPECT_EQ(rows_of(m, p, SiteKind::TbbAlgorithm), 1u);
  const analysis::SiteRow row = row_at(m, p, 0x9100, SiteKind::TbbAlgorithm);
  EXPECT_EQ(row.count, 1u);
  EXPECT_EQ(row.work, 931u);
  EXPECT_EQ(row.span, 330u);
  EXPECT_EQ(site_at(m, 0x9200), model::kNone);
}

// Algorithms other than parallel_for/reduce/invoke/sort (for_each, scan, pipeline, flow graph)
// are tasks of the call's kind `tbb_algorithm`. A new call (its root spawned by execute_and_wait)
// inside such a task is a construct of its own at its call, as nested parallel_fors are: a
// parallel_for_each (root N0) called by a pipeline's filter task F is a row at its call inside
// the pipeline's row, which holds it (a site's work includes the constructs inside it).
TEST(ModelTbbConstructs, AnOtherAlgorithmCalledInsideAnOtherAlgorithmsTaskIsARowOfItsOwn) {
  Tbb t(2);
  const uint64_t P = id(0, 2), F = id(0, 3), N0 = id(1, 1), N1 = id(1, 2);
  const uint64_t C1 = 0x7f0000001000, C2 = 0x7f0000002000;
  t.spawn(0, 10, t.R, P, C1, kOther | kRoot, 0x9100);  // S0: 10
  t.wait_begin(0, 10, t.R, C1, 0x9100);
  t.begin(0, 11, t.R, P);
  t.spawn(0, 21, P, F, C1, kOther, 0x9200);  // P: 10
  t.end(0, 22, P, t.R);                      // P: 1
  t.begin(1, 25, 0, F);
  t.spawn(1, 35, F, N0, C2, kOther | kRoot, 0x9300);  // F: 10
  t.wait_begin(1, 35, F, C2, 0x9300);
  t.begin(1, 36, F, N0);
  t.spawn(1, 46, N0, N1, C2, kOther, 0x9400);  // N0: 10
  t.end(1, 146, N0, F);                        // N0: 100
  t.begin(0, 50, t.R, N1);
  t.end(0, 250, N1, t.R);  // N1: 200
  t.wait_end(1, 255, F, C2, 0x9300);
  t.end(1, 265, F, 0);  // F: 10
  t.wait_end(0, 270, t.R, C1, 0x9100);
  t.program_end(280);  // S2: 10
  model::Model m = t.tb.build();
  expect_invariants(m);
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 10u + 11 + 10 + 10 + 100 + 200 + 10 + 10);
  EXPECT_EQ(p.span, 10u + 10 + 10 + 10 + 200 + 10 + 10);  // S0 P F N0 N1 F S2
  EXPECT_EQ(rows_of(m, p, SiteKind::TbbAlgorithm), 2u);
  // The pipeline's row: P, F and the for_each inside F.
  const analysis::SiteRow outer = row_at(m, p, 0x9100, SiteKind::TbbAlgorithm);
  EXPECT_EQ(outer.count, 1u);
  EXPECT_EQ(outer.work, 341u);
  EXPECT_EQ(outer.span, 10u + 10 + 10 + 200 + 10);  // P F N0 N1 F
  // The for_each's row at its call: N0 and N1, N1 spawned after N0's first strand.
  const analysis::SiteRow inner = row_at(m, p, 0x9300, SiteKind::TbbAlgorithm);
  EXPECT_EQ(inner.count, 1u);
  EXPECT_EQ(inner.work, 10u + 100 + 200);
  EXPECT_EQ(inner.span, 10u + 200);
}

// ------------------------------------------------------------------------ the program's threads

// A thread that is never joined (std::thread::detach) runs beside the program to its end: no
// join waits for it, not even the join of another thread. R starts T (detached) and U, and joins
// U (blocked meanwhile: no work).
TEST(ModelTbbConstructs, ADetachedThreadIsJoinedByNothing) {
  Tbb t(3);
  const uint64_t T = id(0, 2), U = id(0, 3);
  t.tb.ev(0, 100, EventKind::UserThreadCreate, {T, 0x5000});  // S0: 100
  t.tb.ev(0, 110, EventKind::UserThreadCreate, {U, 0x5100});  // S1: 10
  t.tb.ev(0, 200, EventKind::UserThreadJoinBegin, {U});       // S2: 90
  t.tb.ev(0, 400, EventKind::UserThreadJoinEnd, {U});
  t.program_end(450);  // S3: 50
  t.tb.ev(1, 105, EventKind::UserThreadStart, {T});
  t.tb.ev(1, 440, EventKind::UserThreadEnd, {T});  // T: 335
  t.tb.ev(2, 120, EventKind::UserThreadStart, {U});
  t.tb.ev(2, 390, EventKind::UserThreadEnd, {U});  // U: 270
  model::Model m = t.tb.build();
  expect_invariants(m);
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 100u + 10 + 90 + 50 + 335 + 270);
  // S0 -> T, which ends last (S0 S1 U S3: 430; T joined by U's join: 485).
  EXPECT_EQ(p.span, 100u + 335);
  EXPECT_EQ(rows_of(m, p, SiteKind::Thread), 2u);
  EXPECT_EQ(row_at(m, p, 0x5000, SiteKind::Thread).work, 335u);
  EXPECT_EQ(row_at(m, p, 0x5100, SiteKind::Thread).span, 270u);
  EXPECT_EQ(m.task_count, 0u);
}

}  // namespace
}  // namespace tasklens
