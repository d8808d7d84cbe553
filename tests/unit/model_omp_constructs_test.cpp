// The model builder on synthetic traces of the OpenMP constructs model_test.cpp does not cover:
// single, masked, sections, taskloop (grainsize and num_tasks), nested parallel regions, untied
// tasks, final and included tasks, mergeable tasks, locks. Exact work and span (1 tick = 1 ns);
// "A: 10" beside an event means the strand of A that ends there did 10 of work.
#include <gtest/gtest.h>

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
using fixtures::expect_structure;
using fixtures::id;
using fixtures::TraceBuilder;
using namespace fixtures;  // model_team.hpp: the OMPT values and Region
using model::SiteKind;
using trace::EventKind;

// OMPT values (omp-tools.h) beyond model_team.hpp's.
constexpr uint64_t kUntied = 0x10000000, kFinal = 0x20000000, kMergeable = 0x40000000,
                   kMerged = 0x80000000;
constexpr uint64_t kIncluded = kExplicit | kUndeferred | kFinal;  // a final task's child
constexpr uint64_t kYield = 2;                                    // ompt_task_yield
constexpr uint64_t kSections = 2, kSingleExecutor = 3, kSingleOther = 4, kTaskloop = 7;
constexpr uint64_t kWorkshareBarrier = 8;  // ompt_sync_region_barrier_implicit_workshare
constexpr uint64_t kDispatchSection = 2, kDispatchTaskloop = 4;
constexpr uint64_t kLock = 1, kNestLock = 3, kCritical = 5;  // ompt_mutex_t

// The one profile row of a site of `kind` (a failure and a zero row if there is not exactly one).
analysis::SiteRow row_of(const model::Model& m, const analysis::Profile& p, SiteKind kind) {
  analysis::SiteRow found;
  int n = 0;
  for (const analysis::SiteRow& row : p.sites)
    if (m.sites[row.site].kind == kind) {
      found = row;
      ++n;
    }
  EXPECT_EQ(n, 1) << "rows of kind " << model::to_string(kind);
  return found;
}

size_t rows_of(const model::Model& m, const analysis::Profile& p, SiteKind kind) {
  size_t n = 0;
  for (const analysis::SiteRow& row : p.sites) n += m.sites[row.site].kind == kind;
  return n;
}

analysis::SiteRow row_at(const model::Model& m, const analysis::Profile& p, uint64_t address) {
  for (const analysis::SiteRow& row : p.sites)
    if (m.sites[row.site].address == address) return row;
  ADD_FAILURE() << "no row at 0x" << std::hex << address;
  return {};
}

std::vector<uint64_t> iterations_of(const model::Model& m) {
  std::vector<uint64_t> out;
  for (const model::DivisibleStrand& d : m.divisible) out.push_back(d.iterations);
  return out;
}

// ------------------------------------------------------------------------ single, masked

// A single executed by A (200) and skipped by B (single_other), then a dynamic,1 loop of 4 x 100
// of both threads. The single is a construct of one thread; the loop's two shares are one
// instance although only A's thread executed the single (single_other keeps the threads'
// worksharing constructs counted alike).
TEST(ModelOmp, SingleIsOneThreadsConstructAndTheTeamsLoopStaysOneInstance) {
  TraceBuilder tb(2);
  Region r{tb};
  r.open_team();
  tb.ev(0, 20, EventKind::WorkBegin, {kSingleExecutor, r.A, 1, 0x3000});  // A: 10
  tb.ev(0, 220, EventKind::WorkEnd, {kSingleExecutor, r.A, 0x3001});      // single: 200
  tb.ev(0, 220, EventKind::SyncBegin, {kWorkshareBarrier, r.A, 0x3002});
  tb.ev(0, 220, EventKind::SyncEnd, {kWorkshareBarrier, r.A, 0x3002});
  tb.ev(1, 20, EventKind::WorkBegin, {kSingleOther, r.B, 1, 0x3000});
  tb.ev(1, 20, EventKind::WorkEnd, {kSingleOther, r.B, 0x3001});
  tb.ev(1, 20, EventKind::SyncBegin, {kWorkshareBarrier, r.B, 0x3002});  // B: 10
  tb.ev(1, 220, EventKind::SyncEnd, {kWorkshareBarrier, r.B, 0x3002});
  for (uint32_t t = 0; t < 2; ++t) {
    const uint64_t task = t ? r.B : r.A;
    tb.ev(t, 220, EventKind::WorkBegin, {kLoop, task, 4, 0x4000});
    tb.ev(t, 220, EventKind::Dispatch, {kChunk, task, 2 * t, 1});
    tb.ev(t, 320, EventKind::Dispatch, {kChunk, task, 2 * t + 1, 1});  // chunk: 100
    tb.ev(t, 420, EventKind::WorkEnd, {kLoop, task, 0x4001});          // chunk: 100
    tb.ev(t, 420, EventKind::SyncBegin, {kWorkshareBarrier, task, 0x4002});
    tb.ev(t, 430, EventKind::SyncEnd, {kWorkshareBarrier, task, 0x4002});
  }
  tb.ev(1, 435, EventKind::SyncBegin, {kBarrier, r.B, 0});  // B: 5
  r.end(440, 450);                                          // A: 10
  model::Model m = tb.build();
  expect_invariants(m);
  const analysis::Profile p = analysis::compute_profile(m);
  // A: 10 + 200 + 2 x 100 + 10; B: 10 + 2 x 100 + 5.
  EXPECT_EQ(p.work, 420u + 215);
  // A's 10, the single, the barrier, one chunk (the loop is 4-way parallel), A's last 10.
  EXPECT_EQ(p.span, 10u + 200 + 100 + 10);
  const analysis::SiteRow single = row_of(m, p, SiteKind::Single);
  EXPECT_EQ(single.count, 1u);
  EXPECT_EQ(single.work, 200u);
  EXPECT_EQ(single.span, 200u);
  const analysis::SiteRow loop = row_of(m, p, SiteKind::Loop);
  EXPECT_EQ(loop.count, 1u) << "B's share is in A's loop instance, not in the single's";
  EXPECT_EQ(loop.work, 400u);
  EXPECT_EQ(loop.span, 100u);
  EXPECT_TRUE(m.divisible.empty()) << "chunks of one iteration";
}

// masked (master) is a construct of the thread that runs it, with no barrier: B's work runs
// beside it.
TEST(ModelOmp, MaskedIsAConstructOfItsThreadWithoutABarrier) {
  TraceBuilder tb(2);
  Region r{tb};
  r.open_team();
  tb.ev(0, 50, EventKind::MaskedBegin, {r.A, 0x5000});      // A: 40
  tb.ev(0, 350, EventKind::MaskedEnd, {r.A, 0x5001});       // masked: 300
  tb.ev(1, 210, EventKind::SyncBegin, {kBarrier, r.B, 0});  // B: 200
  r.end(400, 410);                                          // A: 50
  model::Model m = tb.build();
  expect_invariants(m);
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 40u + 300 + 50 + 200);
  EXPECT_EQ(p.span, 40u + 300 + 50);  // A's chain; B's 200 beside it
  const analysis::SiteRow masked = row_of(m, p, SiteKind::Masked);
  EXPECT_EQ(masked.count, 1u);
  EXPECT_EQ(masked.work, 300u);
  EXPECT_EQ(masked.span, 300u);
  size_t nodes = 0;
  for (const model::Node& n : m.nodes) nodes += n.kind == model::NodeKind::Masked;
  EXPECT_EQ(nodes, 1u);
}

// ------------------------------------------------------------------------ sections

// Three sections of 100, 200 and 150: A runs the first two, B the third. Each section is a
// strand of its own, forked from the strand before the construct: the construct's span is its
// longest section, not a thread's share (300).
TEST(ModelOmp, EachSectionIsAStrandOfItsOwn) {
  TraceBuilder tb(2);
  Region r{tb};
  r.open_team();
  tb.ev(0, 20, EventKind::WorkBegin, {kSections, r.A, 3, 0x6000});  // A: 10
  tb.ev(0, 20, EventKind::Dispatch, {kDispatchSection, r.A, 0x6100, 0});
  tb.ev(0, 120, EventKind::Dispatch, {kDispatchSection, r.A, 0x6200, 0});  // section: 100
  tb.ev(0, 320, EventKind::WorkEnd, {kSections, r.A, 0x6001});             // section: 200
  tb.ev(0, 320, EventKind::SyncBegin, {kWorkshareBarrier, r.A, 0x6002});
  tb.ev(1, 15, EventKind::WorkBegin, {kSections, r.B, 3, 0x6000});  // B: 5
  tb.ev(1, 15, EventKind::Dispatch, {kDispatchSection, r.B, 0x6300, 0});
  tb.ev(1, 165, EventKind::WorkEnd, {kSections, r.B, 0x6001});  // section: 150
  tb.ev(1, 165, EventKind::SyncBegin, {kWorkshareBarrier, r.B, 0x6002});
  tb.ev(0, 330, EventKind::SyncEnd, {kWorkshareBarrier, r.A, 0x6002});
  tb.ev(1, 330, EventKind::SyncEnd, {kWorkshareBarrier, r.B, 0x6002});
  tb.ev(1, 335, EventKind::SyncBegin, {kBarrier, r.B, 0});  // B: 5
  r.end(340, 350);                                          // A: 10
  model::Model m = tb.build();
  expect_invariants(m);
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 10u + 100 + 200 + 10 + 5 + 150 + 5);
  EXPECT_EQ(p.span, 10u + 200 + 10);  // A's 10, the longest section, A's last 10
  const analysis::SiteRow sections = row_of(m, p, SiteKind::Sections);
  EXPECT_EQ(sections.count, 1u) << "both threads' shares are one instance";
  EXPECT_EQ(sections.work, 450u);
  EXPECT_EQ(sections.span, 200u);
  EXPECT_TRUE(m.divisible.empty()) << "a section is one piece of code, not iterations";
}

// ------------------------------------------------------------------------ taskloop

// taskloop grainsize(2) over 8 iterations of 100 (inside its implicit taskgroup): 4 tasks whose
// dispatch events give 2 iterations each. A runs two of them while it waits at the end of the
// taskgroup, B (in its barrier) the other two. Each task weighs one iteration on paths; the
// taskgroup the taskloop opened for itself is not a construct of its own, its tasks are the
// taskloop's.
TEST(ModelOmp, ATaskloopsTasksAreItsPartsAndWeighOneIterationEach) {
  TraceBuilder tb(2);
  Region r{tb};
  r.begin();
  const uint64_t T[4] = {id(0, 5), id(0, 6), id(0, 7), id(0, 8)};
  tb.ev(0, 20, EventKind::SyncBegin, {kTaskgroup, r.A, 0x7000});    // A: 10
  tb.ev(0, 22, EventKind::WorkBegin, {kTaskloop, r.A, 8, 0x7000});  // A: 2
  for (uint64_t k = 0; k < 4; ++k)                                  // A: 2 before each
    tb.ev(0, 24 + 2 * k, EventKind::TaskCreate, {r.A, T[k], kExplicit, 0x7000});
  tb.ev(0, 32, EventKind::WorkEnd, {kTaskloop, r.A, 0x7001});  // A: 2
  tb.ev(0, 34, EventKind::SyncWaitBegin, {kTaskgroup, r.A});   // A: 2
  for (uint64_t k = 0; k < 4; ++k) {                           // each task: 200
    const uint32_t t = k < 2 ? 0 : 1;
    const uint64_t runner = t ? r.B : r.A, start = (t ? 40 : 34) + 200 * (k % 2);
    tb.ev(t, start, EventKind::TaskSchedule, {runner, kSwitch, T[k]});
    tb.ev(t, start, EventKind::Dispatch, {kDispatchTaskloop, T[k], 2 * k, 2});
    tb.ev(t, start + 200, EventKind::TaskSchedule, {T[k], kComplete, runner});
  }
  tb.ev(0, 440, EventKind::SyncWaitEnd, {kTaskgroup, r.A});
  tb.ev(0, 440, EventKind::SyncEnd, {kTaskgroup, r.A, 0x7001});
  r.end(450, 460);  // A: 10
  model::Model m = tb.build();
  expect_invariants(m);
  EXPECT_EQ(iterations_of(m), (std::vector<uint64_t>{2, 2, 2, 2}));
  const analysis::Profile p = analysis::compute_profile(m);
  // A: 10 + 2 + 4 x 2 + 2 + 2 + 10; the tasks 4 x 200; B: 1.
  EXPECT_EQ(p.work, 34u + 800 + 1);
  // A's strands up to the last creation (10 + 2 + 4 x 2), the last task's iteration (200 / 2),
  // then A's 10 after the taskgroup.
  EXPECT_EQ(p.span, 20u + 100 + 10);
  const analysis::SiteRow taskloop = row_of(m, p, SiteKind::Taskloop);
  EXPECT_EQ(taskloop.count, 1u);
  EXPECT_EQ(taskloop.work, 5u * 2 + 800);  // its 5 strands of A, and the tasks
  EXPECT_EQ(taskloop.span, 4u * 2 + 100);  // inside it: 4 creations, then the last task
  EXPECT_EQ(rows_of(m, p, SiteKind::Task), 0u) << "a taskloop's tasks are not task sites";
  EXPECT_EQ(rows_of(m, p, SiteKind::Taskgroup), 0u) << "nor its taskgroup a taskgroup site";
  EXPECT_EQ(m.task_count, 4u);
}

// A one-thread team (initial task I, region P, its implicit task A from 10), as libomp reports
// one: every task created runs at once (undeferred), so a task is its creation, its switch and,
// `work` later, its completion. Its taskloop opens its own taskgroup at 20 and begins at 22, over
// `trip` iterations at 0x7000.
struct OneThreadTaskloop {
  TraceBuilder& tb;
  uint64_t I = id(0, 2), P = id(0, 3), A = id(0, 4);
  void begin(uint64_t trip) {
    tb.ev(0, 0, EventKind::ImplicitBegin, {id(0, 1), I, 1, 1, kInitial});
    tb.ev(0, 10, EventKind::ParallelBegin, {I, P, 1, 0, 0x1000});
    tb.ev(0, 10, EventKind::ImplicitBegin, {P, A, 1, 0, kImplicit});
    tb.ev(0, 20, EventKind::SyncBegin, {kTaskgroup, A, 0x7000});       // A: 10
    tb.ev(0, 22, EventKind::WorkBegin, {kTaskloop, A, trip, 0x7000});  // A: 2
  }
  void create(uint64_t parent, uint64_t task, uint64_t at) {
    tb.ev(0, at, EventKind::TaskCreate, {parent, task, kExplicit | kUndeferred, 0x7000});
    tb.ev(0, at, EventKind::TaskSchedule, {parent, kSwitch, task});
  }
  void run(uint64_t parent, uint64_t task, uint64_t at, uint64_t work) {
    create(parent, task, at);
    tb.ev(0, at + work, EventKind::TaskSchedule, {task, kComplete, parent});
  }
  // The taskloop ends at `at`, its taskgroup 2 later; the region's barrier 10 after that.
  void end(uint64_t at) {
    tb.ev(0, at, EventKind::WorkEnd, {kTaskloop, A, 0x7001});
    tb.ev(0, at + 2, EventKind::SyncWaitBegin, {kTaskgroup, A});
    tb.ev(0, at + 2, EventKind::SyncWaitEnd, {kTaskgroup, A});
    tb.ev(0, at + 2, EventKind::SyncEnd, {kTaskgroup, A, 0x7001});
    tb.ev(0, at + 12, EventKind::SyncBegin, {kBarrier, A, 0x1000});
    tb.ev(0, at + 12, EventKind::SyncEnd, {kBarrier, A, 0x1000});
    tb.ev(0, at + 12, EventKind::ImplicitEnd, {A, 0, kImplicit});
    tb.ev(0, at + 12, EventKind::ParallelEnd, {P, I, 0, 0x1000});
  }
};

// taskloop num_tasks(2) over 8 iterations of 100 in a one-thread team: the runtime reports no
// dispatch event there, and runs each task at once (flagged undeferred, like every task of a
// one-thread team): the trip count is shared among the tasks that ran the body (4 each), and
// the tasks stay parallel, with the one-thread team's warning.
TEST(ModelOmp, ATaskloopWithoutDispatchEventsSharesItsTripCountAmongItsTasks) {
  TraceBuilder tb(1);
  OneThreadTaskloop r{tb};
  const uint64_t A = r.A, T1 = id(0, 5), T2 = id(0, 6);
  r.begin(8);
  r.run(A, T1, 24, 400);   // A: 2, T1: 400
  r.run(A, T2, 426, 400);  // A: 2, T2: 400
  r.end(828);              // A: 2, 2, then 10 before the barrier
  model::Model m = tb.build();
  expect_structure(m);
  ASSERT_EQ(m.warnings.size(), 1u);  // the one-thread team's if(0)/final warning
  EXPECT_NE(m.warnings[0].find("one-thread teams"), std::string::npos) << m.warnings[0];
  EXPECT_EQ(iterations_of(m), (std::vector<uint64_t>{4, 4}));  // 8 iterations / 2 tasks
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 10u + 2 + 2 + 2 + 2 + 2 + 10 + 800);
  // A's 10 + 2 + 2, its 2 after T1 (A's strand between creating T1 and running it is empty),
  // T2's iteration (400 / 4), A's 10 after the taskgroup.
  EXPECT_EQ(p.span, 10u + 2 + 2 + 2 + 100 + 10);
  EXPECT_EQ(row_of(m, p, SiteKind::Taskloop).count, 1u);
}

// taskloop over 8 iterations in a one-thread team (no dispatch events) whose first task T0 only
// splits the range, creating T2 and T3 (libomp's recursive split: they are its children, not the
// taskloop's), and whose second task T1 runs the body: the trip count goes to the taskloop's
// tasks that stand alone, T1 alone. Read in one pass (tb.build's checks), T1 waits for the
// taskloop's end to know its share.
TEST(ModelOmp, ATaskloopsSplittingTaskDoesNotTakeAShareOfItsTripCount) {
  TraceBuilder tb(1);
  OneThreadTaskloop r{tb};
  const uint64_t A = r.A, T0 = id(0, 5), T1 = id(0, 6), T2 = id(0, 7), T3 = id(0, 8);
  r.begin(8);
  r.create(A, T0, 24);                                         // A: 2
  r.run(T0, T2, 26, 200);                                      // T0: 2, T2: 200
  r.run(T0, T3, 228, 200);                                     // T0: 2, T3: 200
  tb.ev(0, 430, EventKind::TaskSchedule, {T0, kComplete, A});  // T0: 2
  r.run(A, T1, 432, 400);                                      // A: 2, T1: 400
  r.end(834);                                                  // A: 2, 2, then 10
  model::Model m = tb.build();
  expect_structure(m);
  EXPECT_EQ(iterations_of(m), std::vector<uint64_t>{8});  // T1's: 8 iterations / 1 task
  const analysis::Profile p = analysis::compute_profile(m);
  // A: 10 + 2 + 2, 2 after T0, 2 + 2 after T1, 10; T0: 2 + 2 + 2; T1, T2, T3: 800.
  EXPECT_EQ(p.work, 10u + 2 + 2 + 2 + 2 + 2 + 10 + 2 + 2 + 2 + 800);
}

// The same taskloop's tasks in a recording that ends while T2 runs (a killed program: no end
// of T2, of the taskloop or of the region): T2 ends where the trace does and stands alone, like
// T1, so each has half the trip count, in memory as in one pass.
TEST(ModelOmp, ATaskloopThatNeverEndedSharesItsTripCountAmongTheTasksItHad) {
  TraceBuilder tb(1);
  OneThreadTaskloop r{tb};
  const uint64_t T1 = id(0, 5), T2 = id(0, 6);
  r.begin(8);
  r.run(r.A, T1, 24, 400);
  r.create(r.A, T2, 426);
  tb.ev(0, 626, EventKind::Mark, {2});  // the program ends inside T2
  model::Model m = tb.build();
  EXPECT_EQ(iterations_of(m), (std::vector<uint64_t>{4, 4}));
}

// taskloop nogroup: no taskgroup around it, so its tasks (T1: 2 iterations of 100, T2: one of
// 400) join where A's escaped tasks do: at the team's next barrier (an explicit one here, in
// which B runs them), before A's 100 after it.
TEST(ModelOmp, ATaskloopWithoutItsGroupHasItsTasksJoinedAtTheNextBarrier) {
  constexpr uint64_t kExplicitBarrier = 3;
  TraceBuilder tb(2);
  Region r{tb};
  r.open_team();
  const uint64_t T1 = id(0, 5), T2 = id(0, 6);
  tb.ev(0, 20, EventKind::WorkBegin, {kTaskloop, r.A, 3, 0x7000});       // A: 10
  tb.ev(0, 22, EventKind::TaskCreate, {r.A, T1, kExplicit, 0x7000});     // A: 2
  tb.ev(0, 24, EventKind::TaskCreate, {r.A, T2, kExplicit, 0x7000});     // A: 2
  tb.ev(0, 26, EventKind::WorkEnd, {kTaskloop, r.A, 0x7001});            // A: 2
  tb.ev(0, 326, EventKind::SyncBegin, {kExplicitBarrier, r.A, 0x7100});  // A: 300
  tb.ev(1, 30, EventKind::SyncBegin, {kExplicitBarrier, r.B, 0x7100});   // B: 20
  tb.ev(1, 40, EventKind::TaskSchedule, {r.B, kSwitch, T1});
  tb.ev(1, 40, EventKind::Dispatch, {kDispatchTaskloop, T1, 0, 2});
  tb.ev(1, 240, EventKind::TaskSchedule, {T1, kComplete, r.B});  // T1: 200
  tb.ev(1, 240, EventKind::TaskSchedule, {r.B, kSwitch, T2});
  tb.ev(1, 240, EventKind::Dispatch, {kDispatchTaskloop, T2, 2, 1});
  tb.ev(1, 640, EventKind::TaskSchedule, {T2, kComplete, r.B});  // T2: 400
  tb.ev(0, 640, EventKind::SyncEnd, {kExplicitBarrier, r.A, 0x7100});
  tb.ev(1, 640, EventKind::SyncEnd, {kExplicitBarrier, r.B, 0x7100});
  tb.ev(1, 641, EventKind::SyncBegin, {kBarrier, r.B, 0});  // B: 1
  r.end(740, 750);                                          // A: 100
  model::Model m = tb.build();
  expect_invariants(m);
  EXPECT_EQ(iterations_of(m), std::vector<uint64_t>{2});  // T1's (T2 is one iteration)
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 10u + 2 + 2 + 2 + 300 + 100 + 20 + 1 + 200 + 400);
  // A's 10 + 2 + 2 -> T2 -> barrier -> A's 100 (A's own strands: 416; T2 not joined: 414).
  EXPECT_EQ(p.span, 10u + 2 + 2 + 400 + 100);
  EXPECT_EQ(row_of(m, p, SiteKind::Taskloop).count, 1u);
}

// ------------------------------------------------------------------------ nested parallel

// A (thread 0, outer team of 2 with B) opens an inner region of 2 with thread 2: A2 (200) and
// C2 (300) run in parallel, and A goes on after the inner region's end. The inner region is
// a construct of its own inside the outer one.
TEST(ModelOmp, ANestedParallelRegionIsParallelInsideItsImplicitTask) {
  TraceBuilder tb(3);
  const uint64_t I = id(0, 2), P = id(0, 3), A = id(0, 4), Q = id(0, 5), A2 = id(0, 6);
  const uint64_t B = id(1, 1), C2 = id(2, 1);
  tb.ev(0, 0, EventKind::ImplicitBegin, {id(0, 1), I, 1, 1, kInitial});
  tb.ev(0, 10, EventKind::ParallelBegin, {I, P, 2, 0, 0x1000});
  tb.ev(0, 10, EventKind::ImplicitBegin, {P, A, 2, 0, kImplicit});
  tb.ev(0, 30, EventKind::ParallelBegin, {A, Q, 2, 0, 0x2000});  // A: 20
  tb.ev(0, 30, EventKind::ImplicitBegin, {Q, A2, 2, 0, kImplicit});
  tb.ev(0, 230, EventKind::SyncBegin, {kBarrier, A2, 0x2000});  // A2: 200
  tb.ev(0, 332, EventKind::SyncEnd, {kBarrier, A2, 0x2000});
  tb.ev(0, 332, EventKind::ImplicitEnd, {A2, 0, kImplicit});
  tb.ev(0, 332, EventKind::ParallelEnd, {Q, A, 0, 0x2000});
  tb.ev(0, 432, EventKind::SyncBegin, {kBarrier, A, 0x1000});  // A: 100
  tb.ev(0, 440, EventKind::SyncEnd, {kBarrier, A, 0x1000});
  tb.ev(0, 440, EventKind::ImplicitEnd, {A, 0, kImplicit});
  tb.ev(0, 440, EventKind::ParallelEnd, {P, I, 0, 0x1000});
  tb.ev(1, 10, EventKind::ImplicitBegin, {P, B, 2, 1, kImplicit});
  tb.ev(1, 310, EventKind::SyncBegin, {kBarrier, B, 0});  // B: 300
  tb.ev(1, 441, EventKind::SyncEnd, {kBarrier, B, 0});
  tb.ev(1, 441, EventKind::ImplicitEnd, {B, 1, kImplicit});
  tb.ev(2, 31, EventKind::ImplicitBegin, {Q, C2, 2, 1, kImplicit});
  tb.ev(2, 331, EventKind::SyncBegin, {kBarrier, C2, 0});  // C2: 300
  tb.ev(2, 333, EventKind::SyncEnd, {kBarrier, C2, 0});
  tb.ev(2, 333, EventKind::ImplicitEnd, {C2, 1, kImplicit});
  model::Model m = tb.build();
  expect_invariants(m);
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 20u + 200 + 300 + 100 + 300);
  // A's 20, the inner region's longer implicit task, A's 100 (B's 300 runs beside all that).
  EXPECT_EQ(p.span, 20u + 300 + 100);
  EXPECT_EQ(rows_of(m, p, SiteKind::Parallel), 2u);
  const analysis::SiteRow outer = row_at(m, p, 0x1000), inner = row_at(m, p, 0x2000);
  EXPECT_EQ(outer.count, 1u);
  EXPECT_EQ(outer.work, 920u);
  EXPECT_EQ(outer.span, 420u);
  EXPECT_EQ(inner.count, 1u);
  EXPECT_EQ(inner.work, 200u + 300);
  EXPECT_EQ(inner.span, 300u);
}

// ------------------------------------------------------------------------ task flavours

// An untied task U suspended on thread 0 (a taskyield) and resumed on thread 1 stays one task:
// its two strands are a chain, both in U's construct.
TEST(ModelOmp, AnUntiedTaskKeepsItsIdentityWhenItMigrates) {
  TraceBuilder tb(2);
  Region r{tb};
  r.begin();
  const uint64_t U = id(0, 5);
  tb.ev(0, 20, EventKind::TaskCreate, {r.A, U, kExplicit | kUntied, 0x2000});  // A: 10
  tb.ev(0, 30, EventKind::SyncBegin, {kTaskwait, r.A, 0x2100});                // A: 10
  tb.ev(0, 30, EventKind::TaskSchedule, {r.A, kSwitch, U});
  tb.ev(0, 130, EventKind::TaskSchedule, {U, kYield, r.A});     // U: 100, suspended
  tb.ev(1, 140, EventKind::TaskSchedule, {r.B, kSwitch, U});    // resumed on thread 1
  tb.ev(1, 340, EventKind::TaskSchedule, {U, kComplete, r.B});  // U: 200
  tb.ev(0, 345, EventKind::SyncEnd, {kTaskwait, r.A, 0x2100});
  r.end(400, 410);  // A: 55
  model::Model m = tb.build();
  expect_invariants(m);
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 10u + 10 + 100 + 200 + 55 + 1);
  EXPECT_EQ(p.span, 10u + 100 + 200 + 55);  // A1 -> U's two parts -> taskwait -> A
  const analysis::SiteRow task = row_of(m, p, SiteKind::Task);
  EXPECT_EQ(task.count, 1u);
  EXPECT_EQ(task.work, 300u);
  EXPECT_EQ(task.span, 300u);
  std::vector<uint32_t> parts;  // U's strands, in order
  for (uint32_t s = 0; s < m.strands.size(); ++s)
    if (m.sites[m.strands[s].site].kind == SiteKind::Task) parts.push_back(s);
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(m.strands[parts[0]].thread, 0u);
  EXPECT_EQ(m.strands[parts[1]].thread, 1u);
  EXPECT_EQ(m.strands[parts[0]].node, m.strands[parts[1]].node);
  bool chained = false;
  for (uint32_t pred : m.preds_of(parts[1])) chained = chained || pred == parts[0];
  EXPECT_TRUE(chained);
}

// A final task F (deferred: it runs on B beside A) whose two children are included (the
// runtime flags them undeferred and final): each runs inside F, which goes on after it.
TEST(ModelOmp, AFinalTasksChildrenAreIncludedAndRunInsideIt) {
  TraceBuilder tb(2);
  Region r{tb};
  r.begin();
  const uint64_t F = id(0, 5), C1 = id(1, 2), C2 = id(1, 3);
  tb.ev(0, 20, EventKind::TaskCreate, {r.A, F, kExplicit | kFinal, 0x2000});  // A: 10
  tb.ev(0, 30, EventKind::SyncBegin, {kTaskwait, r.A, 0x2200});               // A: 10
  tb.ev(1, 25, EventKind::TaskSchedule, {r.B, kSwitch, F});
  tb.ev(1, 75, EventKind::TaskCreate, {F, C1, kIncluded, 0x2100});  // F: 50
  tb.ev(1, 75, EventKind::TaskSchedule, {F, kSwitch, C1});
  tb.ev(1, 175, EventKind::TaskSchedule, {C1, kComplete, F});        // C1: 100
  tb.ev(1, 185, EventKind::TaskCreate, {F, C2, kIncluded, 0x2100});  // F: 10
  tb.ev(1, 185, EventKind::TaskSchedule, {F, kSwitch, C2});
  tb.ev(1, 285, EventKind::TaskSchedule, {C2, kComplete, F});   // C2: 100
  tb.ev(1, 295, EventKind::TaskSchedule, {F, kComplete, r.B});  // F: 10
  tb.ev(0, 300, EventKind::SyncEnd, {kTaskwait, r.A, 0x2200});
  r.end(350, 360);  // A: 50
  model::Model m = tb.build();
  expect_invariants(m);
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 10u + 10 + 50 + 100 + 10 + 100 + 10 + 50 + 1);
  // A1 -> F 50 -> C1 -> F 10 -> C2 -> F 10 -> taskwait -> A 50: F and its children in series
  // (with deferred children: 10 + 50 + 10 + 100 + 10 + 50 = 230).
  EXPECT_EQ(p.span, 10u + 50 + 100 + 10 + 100 + 10 + 50);
  const analysis::SiteRow f = row_at(m, p, 0x2000), c = row_at(m, p, 0x2100);
  EXPECT_EQ(f.count, 1u);
  EXPECT_EQ(f.work, 270u);
  EXPECT_EQ(f.span, 270u);
  EXPECT_EQ(c.count, 2u);
  EXPECT_EQ(c.work, 200u);
  EXPECT_EQ(c.span, 200u);
}

// mergeable changes nothing in itself: a mergeable deferred task M runs beside its creator, a
// mergeable if(0) task N the runtime merged (flags undeferred, mergeable, merged) runs in it.
TEST(ModelOmp, MergeableTasksAreDeferredOrNotByTheirOtherFlags) {
  TraceBuilder tb(2);
  Region r{tb};
  r.begin();
  const uint64_t M = id(0, 5), N = id(0, 6);
  tb.ev(0, 20, EventKind::TaskCreate, {r.A, M, kExplicit | kMergeable, 0x2000});  // A: 10
  tb.ev(1, 25, EventKind::TaskSchedule, {r.B, kSwitch, M});
  tb.ev(1, 325, EventKind::TaskSchedule, {M, kComplete, r.B});  // M: 300
  tb.ev(0, 30, EventKind::TaskCreate,
        {r.A, N, kExplicit | kUndeferred | kMergeable | kMerged, 0x2100});  // A: 10
  tb.ev(0, 30, EventKind::TaskSchedule, {r.A, kSwitch, N});
  tb.ev(0, 230, EventKind::TaskSchedule, {N, kComplete, r.A});    // N: 200
  tb.ev(0, 330, EventKind::SyncBegin, {kTaskwait, r.A, 0x2200});  // A: 100
  tb.ev(0, 335, EventKind::SyncEnd, {kTaskwait, r.A, 0x2200});
  r.end(400, 410);  // A: 65
  model::Model m = tb.build();
  expect_invariants(m);
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 10u + 10 + 300 + 200 + 100 + 65 + 1);
  // A1 A2 -> N -> A's 100 -> taskwait -> A's 65 (385); through M: 10 + 300 + 65 = 375. With N
  // deferred it would be 375, with M undeferred 10 + 300 + 10 + 200 + 100 + 65.
  EXPECT_EQ(p.span, 10u + 10 + 200 + 100 + 65);
}

// ------------------------------------------------------------------------ locks

// Time waiting for a lock (omp_set_lock) or a critical section is not work; a nest lock the
// thread already holds is acquired without a wait (an acquired event alone), which changes
// nothing. The task is one strand: mutexes do not split strands.
TEST(ModelOmp, WaitingForALockIsNotWorkAndARelockOfANestLockIsNoWait) {
  TraceBuilder tb(2);
  Region r{tb};
  r.begin();
  const uint64_t C = id(0, 5);
  tb.ev(0, 20, EventKind::TaskCreate, {r.A, C, kExplicit, 0x2000});  // A: 10
  tb.ev(1, 21, EventKind::TaskSchedule, {r.B, kSwitch, C});
  tb.ev(1, 71, EventKind::MutexWaitBegin, {kLock});             // C: 50
  tb.ev(1, 370, EventKind::MutexWaitEnd, {kLock});              // 299 waiting: not work
  tb.ev(1, 400, EventKind::MutexWaitEnd, {kNestLock});          // C: 30, then no wait at all
  tb.ev(1, 420, EventKind::MutexWaitBegin, {kCritical});        // C: 20
  tb.ev(1, 520, EventKind::MutexWaitEnd, {kCritical});          // 100 waiting: not work
  tb.ev(1, 570, EventKind::TaskSchedule, {C, kComplete, r.B});  // C: 50
  r.end(100, 610);                                              // A: 80
  model::Model m = tb.build();
  expect_invariants(m);
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 10u + 80 + 150 + 1);
  EXPECT_EQ(p.span, 10u + 150);  // A1 -> C's work without its waits
  const analysis::SiteRow task = row_of(m, p, SiteKind::Task);
  EXPECT_EQ(task.work, 150u);
  size_t strands = 0;
  for (const model::Strand& s : m.strands) strands += m.sites[s.site].kind == SiteKind::Task;
  EXPECT_EQ(strands, 1u);
}

}  // namespace
}  // namespace tasklens
