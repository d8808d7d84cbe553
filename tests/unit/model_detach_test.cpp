// The model builder on synthetic traces of detached tasks (`detach`, omp_fulfill_event): the
// detached task ends at the later of its body and its fulfilment, the fulfilling task keeps its
// work, and a fulfilment the serial order cannot place is said so. (e2e_semantics_test.cpp
// records examples/sem_detach.c.)
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

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
using trace::EventKind;

// A detached task ends when its event is fulfilled (omp_fulfill_event), here by task F: the task
// Y that depends on it starts after the fulfilment, and F goes on with its own work after the
// call. `fulfil_at` is when F calls it, after D's body has ended (late) or while it runs
// (early).
struct DetachCase {
  uint64_t d_start, d_end, fulfil_at;
  bool waiter_first = false;  // Y created before F
};
model::Model detach_model(const DetachCase& c) {
  TraceBuilder tb(2);
  Region r{tb};
  r.begin();
  const uint64_t D = id(0, 5), F = id(0, 6), Y = id(0, 7), addr = 0x7000;
  const bool late = c.fulfil_at > c.d_end;
  tb.ev(0, 20, EventKind::TaskCreate, {r.A, D, kExplicit, 0x2000});  // A: 10
  tb.ev(0, 20, EventKind::Dependences, {D, 1}, {addr, 2});           // depend(out: x) detach(e)
  if (c.waiter_first) {
    tb.ev(0, 30, EventKind::TaskCreate, {r.A, Y, kExplicit, 0x2200});  // A: 10
    tb.ev(0, 30, EventKind::Dependences, {Y, 1}, {addr, 1});           // depend(in: x)
    tb.ev(0, 40, EventKind::TaskCreate, {r.A, F, kExplicit, 0x2100});  // A: 10
  } else {
    tb.ev(0, 30, EventKind::TaskCreate, {r.A, F, kExplicit, 0x2100});  // A: 10
    tb.ev(0, 40, EventKind::TaskCreate, {r.A, Y, kExplicit, 0x2200});  // A: 10
    tb.ev(0, 40, EventKind::Dependences, {Y, 1}, {addr, 1});           // depend(in: x)
  }
  tb.ev(0, 50, EventKind::SyncBegin, {kTaskwait, r.A, 0x2300});  // A: 10
  tb.ev(0, 50, EventKind::TaskSchedule, {r.A, kSwitch, F});
  tb.ev(1, c.d_start, EventKind::TaskSchedule, {r.B, kSwitch, D});
  if (late) tb.ev(1, c.d_end, EventKind::TaskSchedule, {D, 4, r.B});       // ompt_task_detach
  tb.ev(0, c.fulfil_at, EventKind::TaskSchedule, {D, late ? 6u : 5u, 0});  // late / early fulfill
  if (!late) tb.ev(1, c.d_end, EventKind::TaskSchedule, {D, kComplete, r.B});
  tb.ev(0, c.fulfil_at + 100, EventKind::TaskSchedule, {F, kComplete, r.A});  // F: 100 more
  const uint64_t y = std::max(c.d_end, c.fulfil_at) + 10;
  tb.ev(1, y, EventKind::TaskSchedule, {r.B, kSwitch, Y});
  tb.ev(1, y + 200, EventKind::TaskSchedule, {Y, kComplete, r.B});  // Y: 200
  tb.ev(0, y + 200, EventKind::SyncEnd, {kTaskwait, r.A, 0x2300});
  r.end(y + 210, y + 220);  // A: 10 after the wait
  return tb.build();
}

TEST(Model, ADetachedTaskEndsWhenItsEventIsFulfilledLate) {
  // D runs 50..100 and detaches; F fulfils at 350, after 300 of its own work.
  model::Model m = detach_model({50, 100, 350});
  expect_invariants(m);
  analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 10u * 5 + 50 + 300 + 100 + 200 + 1);  // F's 100 after the call stay F's
  // A1 A2 -> F's 300 -> fulfilment -> Y -> A's last 10; ending D with its body: A2 -> F -> A.
  EXPECT_EQ(p.span, 10u + 10 + 300 + 200 + 10);
}

TEST(Model, ADetachedTaskEndsWhenItsEventIsFulfilledEarly) {
  // D runs 300..400; F fulfils at 350, while D runs, after 300 of its own work.
  model::Model m = detach_model({300, 400, 350});
  expect_invariants(m);
  analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 10u * 5 + 100 + 300 + 100 + 200 + 1);
  // D's end is the later of its body (A1 -> D = 110) and the fulfilment (A1 A2 -> F's 300).
  EXPECT_EQ(p.span, 10u + 10 + 300 + 200 + 10);
}

// A task waiting for the detached one but created before the fulfilling task comes before the
// fulfilment in the serial order the span is computed in: that edge is lost, and said so.
TEST(Model, AFulfilmentAfterItsWaiterInProgramOrderIsReported) {
  model::Model m = detach_model({50, 100, 350, true});
  expect_structure(m);
  bool said = false;
  for (const std::string& w : m.warnings)
    said = said || w.find("created before the task that fulfilled its event") != std::string::npos;
  EXPECT_TRUE(said);
  analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 10u * 5 + 50 + 300 + 100 + 200 + 1);
  // Y after D's body only: the longest path is then A1 A2 A3 -> F -> A's last 10.
  EXPECT_EQ(p.span, 10u + 10 + 10 + 400 + 10);
  // The usual order gives no such warning.
  for (const std::string& w : detach_model({50, 100, 350}).warnings)
    EXPECT_EQ(w.find("detached"), std::string::npos) << w;
}

}  // namespace
}  // namespace tasklens
