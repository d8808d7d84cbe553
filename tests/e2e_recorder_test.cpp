// The recorder never counts its own time, or time a thread spent blocked, as the program's
// work: recordings of real programs where the recorder is made to stall (a tiny buffer pool and
// a slowed writer) and where tasks sleep, checked against the examples' analytic work.
#include <gtest/gtest.h>

#include "e2e_util.hpp"

namespace tasklens::e2e {
namespace {

class Recorder : public E2E {};

// fib(24) with 2 units per call makes ~150,000 tasks, about 3 MB of events: with 1 MB of buffers
// (4 chunks) and a writer that sleeps 50 ms per chunk, the program's threads must wait for
// buffers again and again. Those waits are recorded and taken out: the work stays the analytic
// one while the run takes far longer. One thread: it is inside a strand nearly all the time, so
// its waits fall in strands (a worker of two threads may wait while it has no task, where
// there is no work to take them out of).
TEST_F(Recorder, StallsForBuffersAreTakenOutOfTheWork) {
  const std::string trace = path("stall.tlens");
  EnvOverrides env = default_env(1);
  env["TASKLENS_BUFFER_MB"] = "1";
  env["TASKLENS_TEST_WRITER_DELAY_US"] = "50000";
  RunResult rec = record(example("fib", "clang"), {"24", "2"}, trace, env);
  ASSERT_TRUE(rec.exited(0)) << rec.describe();
  json j = report_json(trace);
  ASSERT_FALSE(j.is_null());
  const double hz = tsc_ticks_per_second();
  const double stalls = num(j, "recorder_stalls");
  const double removed_s = num(j, "recorder_stalls_removed") / hz;
  EXPECT_GE(stalls, 1) << "the tiny pool never made a thread wait: " << rec.describe();
  EXPECT_GT(removed_s, 0.03) << "no stall time was taken out";
  // C(24) = 2 F(25) - 1 = 150049 calls of 2 units.
  const double want = 150049.0 * 2;
  const double work = num(j["program"], "work") / kUnitTicks;
  EXPECT_GE(work, 0.99 * want);
  EXPECT_LE(work, 1.25 * want + disturbance_units(rec))
      << "stalls of " << removed_s << " s were removed, but the work still exceeds the analytic";
  // Without the removal the work would hold the stalls: far more than the tolerance above.
  EXPECT_GT(removed_s * hz / kUnitTicks, 0.25 * want);
}

// The recorder times a sample of its own events during the run (the start-up calibration's
// tight loop sees warm caches only): the report takes that cost out and says where it came from.
TEST_F(Recorder, ItsCostPerEventIsMeasuredDuringTheRunAndTakenOut) {
  const std::string trace = path("probe.tlens");
  RunResult rec = record(example("fib", "clang"), {"20", "1"}, trace, default_env(1));
  ASSERT_TRUE(rec.exited(0)) << rec.describe();
  json j = report_json(trace);
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j.value("probe_cost_source", ""), "run");
  const double per_event = num(j, "probe_cost_per_event");
  const double hz = tsc_ticks_per_second();
  // Recording an event costs a few ns to a few hundred ns on any machine.
  EXPECT_GT(per_event / hz, 1e-9);
  EXPECT_LT(per_event / hz, 1e-6);
  // C(20) = 21891 calls, each with a few events: most of their cost comes out of the work.
  const double removed = num(j, "probe_removed");
  EXPECT_GT(removed, per_event * 21891);
  EXPECT_LT(removed, per_event * 21891 * 8);
}

// Tasks that sleep: the sleep is blocked time, not work (taken out and reported apart), unless
// --blocked-as-work asks for wall-time semantics.
TEST_F(Recorder, BlockedTimeIsNotWorkUnlessAsked) {
  const std::string trace = path("sleep.tlens");
  RunResult rec = record(example("sleep_in_task", "clang"), {"4", "20000", "50"}, trace);
  ASSERT_TRUE(rec.exited(0)) << rec.describe();
  json j = report_json(trace);
  ASSERT_FALSE(j.is_null());
  const double hz = tsc_ticks_per_second();
  const double blocked_s = num(j, "blocked_removed") / hz;
  EXPECT_GE(blocked_s, 0.19) << "4 sleeps of 50 ms inside the tasks";
  EXPECT_LE(blocked_s, 0.3);
  EXPECT_EQ(analytic_mismatch(j, Analytic{80000, 20000, 0.10, 0.10}, disturbance_units(rec)), "");
  // Per site: the task site's strands hold the sleeps.
  const json task = expect_site(j, "sleep_in_task.c", "site: sleep-task", "task");
  EXPECT_NEAR(num(task, "blocked") / hz, blocked_s, 0.01);
  // One task's sleep is on the critical path (the span ends with the last task): named by its
  // code fragment, about 50 ms.
  ASSERT_TRUE(j["blocked_critical"].is_array() && !j["blocked_critical"].empty()) << j.dump();
  const json& first = j["blocked_critical"][0];
  EXPECT_NE(first["fragment"].get<std::string>().find("sleep_in_task.c:"), std::string::npos);
  EXPECT_NEAR(num(first, "blocked_seconds"), 0.05, 0.015);

  RunResult wall = tasklens_command("report", {trace, "--format", "json", "--blocked-as-work"});
  ASSERT_TRUE(wall.exited(0)) << wall.describe();
  json w = json::parse(wall.out);
  EXPECT_EQ(num(w, "blocked_removed"), 0);
  const double work_s = num(w["program"], "work") / hz;
  const double want_s = (80000.0 * kUnitTicks) / hz + 0.2;
  EXPECT_GE(work_s, 0.97 * want_s) << "the sleeps count as work with --blocked-as-work";

  RunResult table = tasklens_command("report", {trace});
  ASSERT_TRUE(table.exited(0)) << table.describe();
  EXPECT_NE(table.out.find("blocked inside tasks"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("on the critical path: it bounds the wall time"), std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find("blocked      count"), std::string::npos) << "the blocked column\n"
                                                                     << table.out;
}

}  // namespace
}  // namespace tasklens::e2e
