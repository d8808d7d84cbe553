// The model builder on synthetic traces of task dependences (depend clauses, which the builder
// computes itself from each task's Dependences event): readers after the last writer and beside
// each other, a writer after the readers before it, mutexinoutset as inout, dependences that
// start afresh after a taskwait, and none between tasks of different parents. (The finished-
// predecessor case is model_test.cpp's DependenceOnAFinishedPredecessorStillOrders.) Exact work
// and span (1 tick = 1 ns); "A: 10" beside an event means the strand that ends there did 10.
#include <gtest/gtest.h>

#include <cstdint>

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

constexpr uint64_t kIn = 1, kOut = 2, kInout = 3, kMutexinoutset = 4;  // ompt_dependence_type_t
constexpr uint64_t x = 0x7000;                                         // the variable's address

// A creates W (out x), R1 and R2 (in x), W2 (inout x), then waits. W runs on B, then R1; A runs
// R2 in its taskwait; W2 runs on B once both readers are done. R1 and R2 come after W but not
// after each other; W2 after both.
TEST(ModelDependences, ReadersFollowTheWriterAndPrecedeTheNextOneButNotEachOther) {
  TraceBuilder tb(2);
  Region r{tb};
  r.begin();
  const uint64_t W = id(0, 5), R1 = id(0, 6), R2 = id(0, 7), W2 = id(0, 8);
  const uint64_t tasks[4] = {W, R1, R2, W2}, types[4] = {kOut, kIn, kIn, kInout};
  for (uint64_t k = 0; k < 4; ++k) {  // A: 10 before each
    tb.ev(0, 20 + 10 * k, EventKind::TaskCreate, {r.A, tasks[k], kExplicit, 0x2000 + 0x100 * k});
    tb.ev(0, 20 + 10 * k, EventKind::Dependences, {tasks[k], 1}, {x, types[k]});
  }
  tb.ev(0, 60, EventKind::SyncBegin, {kTaskwait, r.A, 0x2400});  // A: 10
  tb.ev(1, 25, EventKind::TaskSchedule, {r.B, kSwitch, W});
  tb.ev(1, 125, EventKind::TaskSchedule, {W, kComplete, r.B});  // W: 100
  tb.ev(1, 125, EventKind::TaskSchedule, {r.B, kSwitch, R1});
  tb.ev(1, 325, EventKind::TaskSchedule, {R1, kComplete, r.B});  // R1: 200
  tb.ev(0, 130, EventKind::TaskSchedule, {r.A, kSwitch, R2});
  tb.ev(0, 430, EventKind::TaskSchedule, {R2, kComplete, r.A});  // R2: 300
  tb.ev(1, 435, EventKind::TaskSchedule, {r.B, kSwitch, W2});
  tb.ev(1, 485, EventKind::TaskSchedule, {W2, kComplete, r.B});  // W2: 50
  tb.ev(0, 490, EventKind::SyncEnd, {kTaskwait, r.A, 0x2400});
  r.end(500, 510);  // A: 10
  model::Model m = tb.build();
  expect_invariants(m);
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 5u * 10 + 100 + 200 + 300 + 50 + 10 + 1);
  // A1 -> W -> R2 -> W2 -> A's last 10. (R2 after R1 as well: 670; W2 after W alone: 420.)
  EXPECT_EQ(p.span, 10u + 100 + 300 + 50 + 10);
}

// Two mutexinoutset tasks on x are mutually exclusive, in either order: modelled as inout, the
// second after the first.
TEST(ModelDependences, MutexinoutsetIsModelledAsInout) {
  TraceBuilder tb(2);
  Region r{tb};
  r.begin();
  const uint64_t M1 = id(0, 5), M2 = id(0, 6);
  tb.ev(0, 20, EventKind::TaskCreate, {r.A, M1, kExplicit, 0x2000});  // A: 10
  tb.ev(0, 20, EventKind::Dependences, {M1, 1}, {x, kMutexinoutset});
  tb.ev(0, 30, EventKind::TaskCreate, {r.A, M2, kExplicit, 0x2000});  // A: 10
  tb.ev(0, 30, EventKind::Dependences, {M2, 1}, {x, kMutexinoutset});
  tb.ev(0, 40, EventKind::SyncBegin, {kTaskwait, r.A, 0x2100});  // A: 10
  tb.ev(1, 25, EventKind::TaskSchedule, {r.B, kSwitch, M1});
  tb.ev(1, 225, EventKind::TaskSchedule, {M1, kComplete, r.B});  // M1: 200
  tb.ev(0, 230, EventKind::TaskSchedule, {r.A, kSwitch, M2});
  tb.ev(0, 330, EventKind::TaskSchedule, {M2, kComplete, r.A});  // M2: 100
  tb.ev(0, 335, EventKind::SyncEnd, {kTaskwait, r.A, 0x2100});
  r.end(345, 355);  // A: 10
  model::Model m = tb.build();
  expect_invariants(m);
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 3u * 10 + 200 + 100 + 10 + 1);
  EXPECT_EQ(p.span, 10u + 200 + 100 + 10);  // A1 -> M1 -> M2 -> A (unordered: 10 + 200 + 10)
}

// X (out x) is waited for; then Y (in x) and Z (out x) are created: Y follows X through the
// taskwait only, and Z follows Y, as dependences do among the tasks created after the wait.
TEST(ModelDependences, DependencesGoOnAmongTheTasksCreatedAfterATaskwait) {
  TraceBuilder tb(2);
  Region r{tb};
  r.begin();
  const uint64_t X = id(0, 5), Y = id(0, 6), Z = id(0, 7);
  tb.ev(0, 20, EventKind::TaskCreate, {r.A, X, kExplicit, 0x2000});  // A: 10
  tb.ev(0, 20, EventKind::Dependences, {X, 1}, {x, kOut});
  tb.ev(0, 30, EventKind::SyncBegin, {kTaskwait, r.A, 0x2100});  // A: 10
  tb.ev(1, 25, EventKind::TaskSchedule, {r.B, kSwitch, X});
  tb.ev(1, 125, EventKind::TaskSchedule, {X, kComplete, r.B});  // X: 100
  tb.ev(0, 130, EventKind::SyncEnd, {kTaskwait, r.A, 0x2100});
  tb.ev(0, 140, EventKind::TaskCreate, {r.A, Y, kExplicit, 0x2200});  // A: 10
  tb.ev(0, 140, EventKind::Dependences, {Y, 1}, {x, kIn});
  tb.ev(0, 150, EventKind::TaskCreate, {r.A, Z, kExplicit, 0x2300});  // A: 10
  tb.ev(0, 150, EventKind::Dependences, {Z, 1}, {x, kOut});
  tb.ev(0, 160, EventKind::SyncBegin, {kTaskwait, r.A, 0x2400});  // A: 10
  tb.ev(1, 145, EventKind::TaskSchedule, {r.B, kSwitch, Y});
  tb.ev(1, 345, EventKind::TaskSchedule, {Y, kComplete, r.B});  // Y: 200
  tb.ev(0, 350, EventKind::TaskSchedule, {r.A, kSwitch, Z});
  tb.ev(0, 400, EventKind::TaskSchedule, {Z, kComplete, r.A});  // Z: 50
  tb.ev(0, 405, EventKind::SyncEnd, {kTaskwait, r.A, 0x2400});
  r.end(415, 425);  // A: 10
  model::Model m = tb.build();
  expect_invariants(m);
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 6u * 10 + 100 + 200 + 50 + 1);
  // A1 -> X -> taskwait -> A3 -> Y -> Z -> taskwait -> A's last 10 (Z beside Y: 330).
  EXPECT_EQ(p.span, 10u + 100 + 10 + 200 + 50 + 10);
}

// Dependences order sibling tasks only: X (a child of A, out x) and Y (a child of B, in x) are
// not siblings, and Y ran while X did.
TEST(ModelDependences, TasksOfDifferentParentsAreNotOrderedByTheirClauses) {
  TraceBuilder tb(2);
  Region r{tb};
  r.open_team();
  const uint64_t X = id(0, 5), Y = id(1, 5);
  tb.ev(0, 20, EventKind::TaskCreate, {r.A, X, kExplicit, 0x2000});  // A: 10
  tb.ev(0, 20, EventKind::Dependences, {X, 1}, {x, kOut});
  tb.ev(0, 30, EventKind::SyncBegin, {kTaskwait, r.A, 0x2100});  // A: 10
  tb.ev(0, 30, EventKind::TaskSchedule, {r.A, kSwitch, X});
  tb.ev(0, 330, EventKind::TaskSchedule, {X, kComplete, r.A});  // X: 300
  tb.ev(0, 330, EventKind::SyncEnd, {kTaskwait, r.A, 0x2100});
  tb.ev(1, 20, EventKind::TaskCreate, {r.B, Y, kExplicit, 0x2200});  // B: 10
  tb.ev(1, 20, EventKind::Dependences, {Y, 1}, {x, kIn});
  tb.ev(1, 30, EventKind::SyncBegin, {kTaskwait, r.B, 0x2300});  // B: 10
  tb.ev(1, 30, EventKind::TaskSchedule, {r.B, kSwitch, Y});
  tb.ev(1, 230, EventKind::TaskSchedule, {Y, kComplete, r.B});  // Y: 200
  tb.ev(1, 230, EventKind::SyncEnd, {kTaskwait, r.B, 0x2300});
  tb.ev(1, 240, EventKind::SyncBegin, {kBarrier, r.B, 0});  // B: 10
  r.end(340, 350);                                          // A: 10
  model::Model m = tb.build();
  expect_invariants(m);
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 3u * 10 + 300 + 3 * 10 + 200);
  EXPECT_EQ(p.span, 10u + 300 + 10);  // A's chain (Y after X would make it 10 + 300 + 200 + 10)
}

}  // namespace
}  // namespace tasklens
