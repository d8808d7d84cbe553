// End to end: `tasklens sched` on recorded examples (docs/examples.md): the breakdown adds up to
// P x elapsed per worker and in total, its work column is the report's work plus the preemption
// the recorder removed from it, the observed time is not below the lower bound max(T1/P, Tinf),
// the time series integrates to the totals, the JSON contract (docs/report-json.md), CSV, the
// table's sparklines, the note on a one-worker run and the errors on bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "e2e_util.hpp"

namespace tasklens::e2e {
namespace {

RunResult sched(const std::vector<std::string>& args) { return tasklens_command("sched", args); }
json sched_json(const std::vector<std::string>& args) {
  return tasklens_command_json("sched", args);
}

uint64_t u64(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number_unsigned()) {
    ADD_FAILURE() << key << " missing or not an unsigned integer in " << j.dump().substr(0, 300);
    return 0;
  }
  return j[key].get<uint64_t>();
}

// The contract's fields and the exact identities; returns the number of workers.
void expect_contract(const json& j, uint32_t workers, size_t points) {
  ASSERT_TRUE(j.is_object());
  for (const char* k :
       {"tasklens_version", "trace",      "executable", "metric",    "ticks_per_second",
        "tsc_per_second",   "complete",   "threads",    "workers",   "strands",
        "warnings",         "notes",      "first",      "last",      "elapsed",
        "elapsed_seconds",  "cumulative", "preempted",  "breakdown", "per_worker",
        "bounds",           "ready_path", "parallelism"})
    EXPECT_TRUE(j.contains(k)) << "missing " << k;
  EXPECT_EQ(j.value("metric", ""), "tsc");
  EXPECT_EQ(num(j, "workers"), workers);
  const uint64_t elapsed = u64(j, "elapsed"), cumulative = u64(j, "cumulative");
  EXPECT_EQ(u64(j, "last") - u64(j, "first"), elapsed);
  EXPECT_EQ(cumulative, workers * elapsed);
  EXPECT_GT(elapsed, 0u);

  const json& b = j["breakdown"];
  const uint64_t work = u64(b, "work"), delay = u64(b, "delay"), nws = u64(b, "no_work_sched"),
                 nwa = u64(b, "no_work_app");
  EXPECT_EQ(work + delay + nws + nwa, cumulative) << "the components must add up exactly";
  EXPECT_EQ(u64(b, "no_work"), nws + nwa);
  EXPECT_EQ(u64(b, "cumulative"), cumulative);
  ASSERT_TRUE(j["per_worker"].is_array());
  EXPECT_EQ(j["per_worker"].size(), workers);
  uint64_t sum[4] = {0, 0, 0, 0};
  for (const json& w : j["per_worker"]) {
    const uint64_t c[4] = {u64(w, "work"), u64(w, "delay"), u64(w, "no_work_sched"),
                           u64(w, "no_work_app")};
    EXPECT_EQ(c[0] + c[1] + c[2] + c[3], elapsed) << "thread " << w.value("thread", -1);
    EXPECT_GT(u64(w, "strands"), 0u);
    for (int i = 0; i < 4; ++i) sum[i] += c[i];
  }
  EXPECT_EQ(sum[0], work);
  EXPECT_EQ(sum[1], delay);
  EXPECT_EQ(sum[2], nws);
  EXPECT_EQ(sum[3], nwa);

  const json& rp = j["ready_path"];
  EXPECT_EQ(
      u64(rp, "work") + u64(rp, "scheduler_delay") + u64(rp, "busy_delay") + u64(rp, "before"),
      elapsed);
  EXPECT_GE(num(rp, "strands"), 1);

  // The time series: min(points, elapsed) intervals tiling [first, last), integrating to the
  // totals (up to the averages' rounding).
  const json& par = j["parallelism"];
  ASSERT_TRUE(par.contains("series") && par["series"].is_array());
  const json& series = par["series"];
  EXPECT_EQ(series.size(), points);
  EXPECT_EQ(num(par, "points"), points);
  double run = 0, ready = 0;
  uint64_t at = u64(j, "first");
  for (const json& p : series) {
    EXPECT_EQ(u64(p, "begin"), at);
    at = u64(p, "end");
    const double len = double(u64(p, "end") - u64(p, "begin"));
    run += num(p, "running") * len;
    ready += num(p, "ready") * len;
    EXPECT_LE(num(p, "running"), num(p, "running_max") + 1e-9);
    EXPECT_LE(num(p, "ready"), num(p, "ready_max") + 1e-9);
  }
  EXPECT_EQ(at, u64(j, "last"));
  EXPECT_NEAR(run, num(par, "running_ticks"), 1e-6 * num(par, "running_ticks") + 1);
  EXPECT_NEAR(ready, num(par, "ready_ticks"), 1e-6 * num(par, "ready_ticks") + 1);
  // Running strands hold their worker: their integral is the work column (strands of one
  // thread do not overlap).
  EXPECT_EQ(u64(par, "running_ticks"), work);
  EXPECT_LE(num(par, "running_max"), workers);
}

// The breakdown's work is the time workers held strands, their spans: the report's work (T1),
// what tasklens took out of it (preemption, blocking, slow faults, waits for the recorder's
// buffers, the recorder's and the runtime's cost) and the waits inside the runtime within the
// strands (within 1% of the cumulative time: the program's start-up, before main, is cleared
// from its first strand's work but not from these totals); the observed time is not below
// max(T1/P, Tinf) (2% noise); the bounds are the report's work and span as measured.
void expect_bounds(const json& j, const json& report) {
  const json& bounds = j["bounds"];
  const double t1 = num(bounds, "work"), tinf = num(bounds, "span");
  const double P = num(j, "workers");
  // sched shows the run as measured: the report's figures before the robust clipping.
  EXPECT_EQ(t1, num(report["program"], "work_raw"));
  EXPECT_EQ(tinf, num(report["program"], "span_raw"));
  EXPECT_DOUBLE_EQ(num(bounds, "greedy_bound"), t1 / P + tinf);
  EXPECT_DOUBLE_EQ(num(bounds, "lower_bound"), std::max(t1 / P, tinf));
  const double work = num(j["breakdown"], "work");
  EXPECT_EQ(num(j, "preempted"), num(report, "preemption_removed"));
  double spans = t1;
  for (const char* part :
       {"preemption_removed", "blocked_removed", "slow_faults_removed", "recorder_stalls_removed",
        "probe_removed", "runtime_overhead_removed", "runtime_waits_in_strands"})
    spans += num(report, part);
  EXPECT_NEAR(work, spans, 0.01 * num(j, "cumulative"))
      << "timeline work " << work << ", T1 " << t1 << ", with what was taken out and the waits "
      << spans << "; report: " << report.dump().substr(0, 2000);
  const double observed = num(bounds, "observed_seconds");
  EXPECT_GE(observed * 1.02, num(bounds, "lower_bound_seconds"));
  EXPECT_GT(num(bounds, "greedy_bound_seconds"), 0);
  // (Brent's T1/P + Tinf bounds a greedy schedule from above: a run may finish before it, so it is
  // shown, not checked.)
  std::cerr << "[ sched    ] " << j.value("executable", "?") << ": elapsed " << observed
            << " s, greedy bound " << num(bounds, "greedy_bound_seconds") << " s, lower bound "
            << num(bounds, "lower_bound_seconds") << " s; work " << work / num(j, "cumulative")
            << ", delay " << num(j["breakdown"], "delay") / num(j, "cumulative")
            << ", no-work-sched " << num(j["breakdown"], "no_work_sched") / num(j, "cumulative")
            << ", no-work-app " << num(j["breakdown"], "no_work_app") / num(j, "cumulative")
            << " of P x elapsed; preempted " << num(j, "preempted") / num(j, "cumulative") << "\n";
}

class Sched : public E2E, public ::testing::WithParamInterface<std::string> {};

// fib(12), g = 2000 units, on 2 threads: parallelism 38.75, so both workers are busy nearly all
// the time and the ready strands pile up.
TEST_P(Sched, FibBreakdownAddsUp) {
  const std::string trace = path("fib.tlens");
  RunResult rec = record(example("fib", GetParam()), {"12", "2000"}, trace);
  ASSERT_TRUE(rec.exited(0)) << rec.describe();
  json j = sched_json({trace});
  expect_contract(j, 2, 200);
  json report = report_json(trace);
  expect_bounds(j, report);
  EXPECT_GE(num(j["parallelism"], "ready_max"), 2);
  EXPECT_GT(num(j["parallelism"], "running_average"), 1.0);

  // --points N and CSV.
  json few = sched_json({trace, "--points", "7"});
  expect_contract(few, 2, 7);
  RunResult csv = sched({trace, "--format", "csv", "--points", "5"});
  ASSERT_TRUE(csv.exited(0)) << csv.describe();
  const std::vector<std::string> lines = lines_of(csv.out);
  ASSERT_GE(lines.size(), 4u);
  EXPECT_EQ(lines[0], "worker,thread,strands,work,delay,no_work_sched,no_work_app,cumulative");
  EXPECT_NE(csv.out.find("\nname,value\n"), std::string::npos);
  EXPECT_NE(csv.out.find("\nbegin,end,running,ready,running_max,ready_max\n"), std::string::npos);
  const size_t series = csv.out.find("\nbegin,end,");
  EXPECT_EQ(lines_of(csv.out.substr(series + 1)).size(), 1u + 5u);

  // The table: the breakdown and two sparklines.
  RunResult table = sched({trace});
  ASSERT_TRUE(table.exited(0)) << table.describe();
  for (const char* s : {"no-work-sched", "no-work-app", "greedy bound", "ready path", "running |",
                        "ready   |", "\u2588"})
    EXPECT_NE(table.out.find(s), std::string::npos) << s << "\n" << table.out;
}

// amdahl: a serial part then 8 pieces on 2 workers: the serial part is no-work for one worker.
TEST_P(Sched, AmdahlSerialPartIsNoWork) {
  const std::string trace = path("amdahl.tlens");
  RunResult rec = record(example("amdahl", GetParam()), {}, trace);
  ASSERT_TRUE(rec.exited(0)) << rec.describe();
  json j = sched_json({trace});
  expect_contract(j, 2, 200);
  expect_bounds(j, report_json(trace));
  // The serial part is 20000 of the span's 70000 units: one worker idle during it.
  const double serial_ticks = 20000 * kUnitTicks;
  EXPECT_GE(num(j["breakdown"], "no_work") + num(j["breakdown"], "delay"), 0.5 * serial_ticks);
}

INSTANTIATE_TEST_SUITE_P(Compilers, Sched, ::testing::Values("clang", "gcc"), compiler_name);

class SchedTbb : public E2E {};

TEST_F(SchedTbb, FibBreakdownAddsUp) {
  const std::string trace = path("tbb_fib.tlens");
  RunResult rec = record(std::string(TASKLENS_EXAMPLES_DIR) + "/tbb_fib", {"12", "2000"}, trace);
  ASSERT_TRUE(rec.exited(0)) << rec.describe();
  json j = sched_json({trace});
  ASSERT_TRUE(j.is_object());
  // oneTBB may run the program's own thread and its workers: at least 2 ran strands.
  const uint32_t workers = static_cast<uint32_t>(num(j, "workers"));
  EXPECT_GE(workers, 2u);
  expect_contract(j, workers, 200);
  expect_bounds(j, report_json(trace));
}

class SchedErrors : public E2E {};

TEST_F(SchedErrors, OneWorkerAndBadInput) {
  // One thread: printed, with a note.
  const std::string one = path("one.tlens");
  RunResult rec = record(example("fib", "clang"), {"8", "100"}, one, default_env(1));
  ASSERT_TRUE(rec.exited(0)) << rec.describe();
  json j = sched_json({one});
  expect_contract(j, 1, 200);
  ASSERT_TRUE(j["notes"].is_array() && !j["notes"].empty());
  EXPECT_TRUE(contains_nocase(j["notes"][0].get<std::string>(), "one worker")) << j["notes"];
  RunResult r = sched({one});
  EXPECT_TRUE(r.exited(0)) << r.describe();
  EXPECT_TRUE(contains_nocase(r.out, "note: one worker")) << r.describe();

  // Not a trace.
  write_file(path("junk.tlens"), "not a trace at all");
  r = sched({path("junk.tlens")});
  EXPECT_TRUE(r.exited(4)) << r.describe();
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.describe();
  // A missing one.
  r = sched({path("missing.tlens")});
  EXPECT_FALSE(r.exited(0)) << r.describe();
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.describe();

  // Bad options.
  r = sched({one, "--points", "0"});
  EXPECT_TRUE(r.exited(2)) << r.describe();
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.describe();
  r = sched({one, "--format", "xml"});
  EXPECT_TRUE(r.exited(2)) << r.describe();
}

}  // namespace
}  // namespace tasklens::e2e
