// Tasks that began and whose end the trace lacks (src/model/builder_unended.cpp): exact work and
// span on synthetic traces (1 tick = 1 ns). oneTBB releases a task_group task's group inside the
// task, before the recorder writes the task's end: the group's wait may return and the program
// end while the task's thread is between the two, so the end is never written. Before this rule
// such a task kept only the work before its thread's last event (none, for a task without
// events), and a span came out below the program's analytic one.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "analysis/profile.hpp"
#include "model/builder.hpp"
#include "model_team.hpp"
#include "trace/format.hpp"
#include "trace_builder.hpp"

namespace tasklens {
namespace {

using fixtures::expect_structure;
using fixtures::id;
using fixtures::TraceBuilder;
using trace::EventKind;

constexpr uint64_t kTbbSwitch = 7;  // TaskSchedule status: a task begins on this thread
constexpr uint64_t kTbbTask = 1;    // trace::TbbKind: a task_group's task
constexpr uint64_t kGroup = 0x7f0000001000, kOtherGroup = 0x7f0000002000;
constexpr uint64_t kTaskCode = 0x1000, kWaitCode = 0x1100;

// A oneTBB trace of two threads: thread 0 runs main() in the root task R and spawns A into
// `group` at 10; thread 1 begins A at 30 and its end is never written.
struct TbbUnended {
  TraceBuilder tb{2, false};
  uint64_t R = id(0, 1), A = id(0, 2);
  explicit TbbUnended(uint64_t group) {
    tb.runtime(trace::kRuntimeTbb, "oneTBB 2021.11.0 (interface 12110)");
    tb.ev(0, 0, EventKind::ThreadBegin, {1});
    tb.ev(0, 0, EventKind::ImplicitBegin, {0, R, 1, 0, 1});
    tb.ev(0, 0, EventKind::Mark, {static_cast<uint64_t>(trace::MarkKind::MainStart)});
    tb.ev(1, 0, EventKind::ThreadBegin, {2});
    tb.ev(0, 10, EventKind::TbbSpawn, {R, A, group, kTbbTask, kTaskCode});  // S0: 10
    tb.ev(1, 30, EventKind::TaskSchedule, {0, kTbbSwitch, A});
  }
  void wait(uint64_t begin, uint64_t end) {
    tb.ev(0, begin, EventKind::TbbWaitBegin, {R, kGroup, kWaitCode});
    tb.ev(0, end, EventKind::TbbWaitEnd, {R, kGroup, kWaitCode});
  }
  void program_end(uint64_t time) {
    tb.ev(0, time, EventKind::Mark, {static_cast<uint64_t>(trace::MarkKind::ProgramEnd)});
  }
};

uint64_t task_work(const model::Model& m) {
  uint64_t w = 0;
  for (const model::Strand& s : m.strands)
    if (m.nodes[s.node].kind == model::NodeKind::Task) w += s.work;
  return w;
}

bool has_warning(const model::Model& m, const std::string& words) {
  for (const std::string& w : m.warnings)
    if (w.find(words) != std::string::npos) return true;
  return false;
}

const trace::Loss* unended_loss(const model::Model& m) {
  for (const trace::Loss& l : m.losses)
    if (l.cause == "unended_tasks") return &l;
  return nullptr;
}

// The wait for A's group returned at 530 while A's thread had not written A's end: A ran from
// 30 until at most 530, and its thread did nothing else meanwhile: A's work is 500.
TEST(ModelUnended, ATaskWhoseEndIsMissingEndsAtTheWaitThatJoinedIt) {
  TbbUnended t(kGroup);
  t.wait(20, 530);     // S1: 10
  t.program_end(630);  // S2: 100
  model::Model m = t.tb.build();
  expect_structure(m);
  analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(task_work(m), 500u);
  EXPECT_EQ(p.work, 10u + 10 + 500 + 100);
  EXPECT_EQ(p.span, 10u + 500 + 100);  // S0 -> A -> S2 (120 if A's work were lost)
  EXPECT_TRUE(has_warning(m, "1 oneTBB task's end was not recorded")) << m.warnings.size();
  EXPECT_EQ(unended_loss(m), nullptr);  // bounded by the wait: nothing is lost
}

// The same, A's thread preempted from 200 until after the recording's end (the recorder closes
// that switch-out at the end): only 30..200 was A's work.
TEST(ModelUnended, TheTimeItsThreadWasOffItsCpuIsNotItsWork) {
  TbbUnended t(kGroup);
  t.wait(20, 530);
  t.program_end(630);
  t.tb.preempt(1, 200, 900);
  model::Model m = t.tb.build();
  expect_structure(m);
  analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(task_work(m), 170u);
  EXPECT_EQ(p.span, 10u + 170 + 100);
}

// A was spawned into a group nobody waits for, and the recorder saw its thread still inside A
// when the recording ended at 800 (OpenAtEnd): A ran from 30 to 800.
TEST(ModelUnended, ATaskItsThreadWasInsideAtTheEndRunsToTheEnd) {
  TbbUnended t(kOtherGroup);
  t.program_end(300);  // S1: 290
  t.tb.finish_at(800);
  t.tb.open_at_end(1, t.A);
  model::Model m = t.tb.build();
  expect_structure(m);
  analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(task_work(m), 770u);
  EXPECT_EQ(p.work, 10u + 290 + 770);
  EXPECT_EQ(p.span, 10u + 770);
  const trace::Loss* loss = unended_loss(m);
  ASSERT_NE(loss, nullptr);
  EXPECT_EQ(loss->count, 1u);
  EXPECT_NE(loss->message.find("counted up to the program's end, its thread still inside it"),
            std::string::npos)
      << loss->message;
}

// An OpenAtEnd entry for another thread, or for a task that did end, changes nothing.
TEST(ModelUnended, AnOpenAtEndEntryMustMatchTheTaskAndItsThread) {
  TbbUnended t(kOtherGroup);
  t.program_end(300);
  t.tb.finish_at(800);
  t.tb.open_at_end(0, t.A);  // thread 0 is not inside A
  model::Model m = t.tb.build();
  expect_structure(m);
  EXPECT_EQ(task_work(m), 0u);  // nothing after A's begin: its thread's last event
  const trace::Loss* loss = unended_loss(m);
  ASSERT_NE(loss, nullptr);
  EXPECT_NE(loss->message.find("counted up to its thread's last event"), std::string::npos)
      << loss->message;

  TbbUnended ended(kOtherGroup);
  ended.tb.ev(1, 230, EventKind::TaskSchedule, {ended.A, 1, 0});  // A: 200, ended
  ended.program_end(300);
  ended.tb.finish_at(800);
  ended.tb.open_at_end(1, ended.A);  // listed while it ended (the race finish() allows)
  model::Model e = ended.tb.build();
  expect_structure(e);
  EXPECT_EQ(task_work(e), 200u);
  EXPECT_EQ(unended_loss(e), nullptr);
  EXPECT_FALSE(has_warning(e, "not recorded"));
}

// An OpenMP task whose thread's events stop after its begin (lost with the rest of that
// thread's stream): the taskwait that joined it ended at 540, its upper bound.
TEST(ModelUnended, AnOpenMPTaskEndsAtTheTaskwaitThatJoinedIt) {
  using namespace fixtures;  // model_team.hpp's OMPT values
  TraceBuilder tb(2);
  Region r{tb};
  r.begin();
  const uint64_t C = id(0, 5);
  tb.ev(0, 20, EventKind::TaskCreate, {r.A, C, kExplicit, 0x2000});  // A: 10
  tb.ev(0, 30, EventKind::SyncBegin, {kTaskwait, r.A, 0x2100});      // A: 10
  tb.ev(1, 40, EventKind::TaskSchedule, {r.B, kSwitch, C});          // thread 1's last event
  tb.ev(0, 540, EventKind::SyncEnd, {kTaskwait, r.A, 0x2100});
  tb.ev(0, 640, EventKind::SyncBegin, {kBarrier, r.A, 0x1000});  // A: 100
  model::Model m = tb.build();
  expect_structure(m);
  EXPECT_EQ(task_work(m), 500u);
  EXPECT_TRUE(has_warning(m, "1 OpenMP task's end was not recorded")) << m.warnings.size();
  // One pass that waits for C's end no event longer (then the rest of the run goes on without
  // it) gives the same figures, since C's thread has no later event (build() compares them).
  model::BuildOptions brief;
  brief.late_end_events = 0;
  tb.build(brief);
}

// Events of two threads merged by time: a child's end may come a little after its parent's
// taskwait end (clocks of two cores a few ticks apart, or the runtime's order of callbacks). The
// child ended: its end is what it is, not the wait's time, in memory and in one pass alike (one
// pass once closed such a child at the wait and said its end was lost).
TEST(ModelUnended, AnEndThatComesJustAfterTheTaskwaitIsTheTasksEnd) {
  using namespace fixtures;
  TraceBuilder tb(2);
  Region r{tb};
  r.begin();
  const uint64_t C = id(0, 5), D = id(0, 6);
  tb.ev(0, 20, EventKind::TaskCreate, {r.A, C, kExplicit, 0x2000});  // A: 10
  tb.ev(0, 25, EventKind::TaskCreate, {r.A, D, kExplicit, 0x2000});  // A: 5
  tb.ev(0, 30, EventKind::SyncBegin, {kTaskwait, r.A, 0x2100});      // A: 5
  tb.ev(1, 40, EventKind::TaskSchedule, {r.B, kSwitch, C});
  tb.ev(0, 50, EventKind::TaskSchedule, {r.A, kSwitch, D});
  tb.ev(0, 150, EventKind::TaskSchedule, {D, kComplete, r.A});  // D: 100
  tb.ev(0, 540, EventKind::SyncEnd, {kTaskwait, r.A, 0x2100});
  tb.ev(1, 545, EventKind::TaskSchedule, {C, kComplete, r.B});   // C: 505, after the wait
  tb.ev(0, 640, EventKind::SyncBegin, {kBarrier, r.A, 0x1000});  // A: 100
  r.end(700, 710);
  model::Model m = tb.build();
  expect_structure(m);
  EXPECT_EQ(task_work(m), 605u);
  EXPECT_FALSE(has_warning(m, "not recorded"));
  EXPECT_EQ(unended_loss(m), nullptr);
}

// A child suspended for another task and never resumed before its parent's taskwait ended (a
// trace that lost events): what it did joins the wait, in memory and in one pass alike, and
// one pass does not hold the rest of the run back waiting for it.
TEST(ModelUnended, AChildSuspendedAndNeverResumedJoinsTheWaitWithWhatItDid) {
  using namespace fixtures;
  TraceBuilder tb(2);
  Region r{tb};
  r.begin();
  const uint64_t C = id(0, 5), E = id(0, 6);
  tb.ev(0, 20, EventKind::TaskCreate, {r.A, C, kExplicit, 0x2000});  // A: 10
  tb.ev(0, 25, EventKind::TaskCreate, {r.A, E, kExplicit, 0x2000});  // A: 5
  tb.ev(0, 30, EventKind::SyncBegin, {kTaskwait, r.A, 0x2100});      // A: 5
  tb.ev(1, 40, EventKind::TaskSchedule, {r.B, kSwitch, C});
  tb.ev(1, 300, EventKind::TaskSchedule, {C, kSwitch, E});      // C: 260, never resumed
  tb.ev(1, 400, EventKind::TaskSchedule, {E, kComplete, r.B});  // E: 100
  tb.ev(0, 540, EventKind::SyncEnd, {kTaskwait, r.A, 0x2100});
  tb.ev(0, 640, EventKind::SyncBegin, {kBarrier, r.A, 0x1000});  // A: 100
  r.end(700, 710);
  model::Model m = tb.build();
  expect_structure(m);
  EXPECT_EQ(task_work(m), 360u);
  // C's 260 ticks are before the wait's end, and A's 100 after it, on one path (without C's
  // edge into the wait the longest path goes through E: under 300).
  EXPECT_GE(analysis::compute_profile(m).span, 360u);
}

}  // namespace
}  // namespace tasklens
