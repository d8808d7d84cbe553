// `record --metric a,b,c` end to end: several metrics recorded side by side (the first is the
// primary one, every analysis's work; the others are in Model::extra_work), checked against
// each other and against what the programs do; and the lists record refuses.
//
// This machine has no hardware counters, but perf's software events: task-clock (the thread's
// CPU time in ns) and page-faults.
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "e2e_util.hpp"
#include "model/builder.hpp"
#include "trace/reader.hpp"

namespace tasklens::e2e {
namespace {

class Metrics : public E2E {
 public:
  model::Model load_model(const std::string& trace) {
    trace::TraceFile file = trace::TraceFile::open(trace);
    return model::build_model(file);
  }
  std::string trace_path(const std::string& name) const { return path(name); }
};

// Index of `name` among the model's further metrics, or -1.
int extra_index(const model::Model& m, const std::string& name) {
  for (size_t i = 0; i < m.extra_metrics.size(); ++i)
    if (m.extra_metrics[i] == name) return static_cast<int>(i);
  return -1;
}

uint64_t extra_of(const model::Model& m, int metric, size_t strand) {
  return m.extra_work[size_t(metric) * m.strands.size() + strand];
}

// The TSC's work and task-clock's of the same strands, in seconds: whole program and strand by
// strand. fib(10) with 4000 units per call is compute-bound (177 calls of ~3 ms), so while a
// thread runs a strand it is on a CPU the whole time except when preempted, and the TSC's work
// has the preempted time taken out (the recorder watches context switches): both measure the
// same CPU time. What separates them: task-clock counts the kernel's time on the thread's
// behalf (the read(2) of the counters at each event, ~1-2 us, and interrupts) and the TSC
// counts the time of the few preemptions the context-switch watcher misses or sees late; the
// two are sampled one syscall apart at each event. Over 0.5 s of CPU and ~2000 events that is
// well under 1%; 5% allows for a host stealing the VM's CPU (task-clock then stops, the TSC does
// not). Strands of at least 1 ms get 10% + 50 us: one preemption seen late shifts a few us.
// Those are bands (soft, by the timing policy); the strand count and a TSC work far below the
// spins' are hard.
Violations task_clock_violations(const model::Model& m, int tsc, int task_clock) {
  Violations v;
  const double tsc_hz = m.tsc_per_second;
  if (tsc_hz < 1e8) {
    v.hard = "no TSC rate in the trace\n";
    return v;
  }
  auto amount = [&](int metric, size_t s) {  // -1: the primary metric
    return metric < 0 ? m.strands[s].work : extra_of(m, metric, s);
  };
  std::ostringstream soft, hard;
  double tsc_total = 0, tc_total = 0;
  size_t big = 0;
  for (size_t s = 0; s < m.strands.size(); ++s) {
    const double by_tsc = double(amount(tsc, s)) / tsc_hz;
    const double by_clock = double(amount(task_clock, s)) / 1e9;
    tsc_total += by_tsc;
    tc_total += by_clock;
    if (by_tsc >= 1e-3) {
      ++big;
      if (std::abs(by_clock - by_tsc) > 0.10 * by_tsc + 50e-6)
        soft << "strand " << s << ": task-clock " << by_clock * 1e3 << " ms, tsc "
             << by_tsc * 1e3 << " ms\n";
    }
  }
  const double expected = 177 * 4000 * kUnitTicks / tsc_hz;  // the program's analytic work
  if (tsc_total < 0.99 * expected)
    hard << "tsc work " << tsc_total << " s, analytic " << expected << " s\n";
  if (std::abs(tc_total - tsc_total) > 0.05 * tsc_total)
    soft << "program: task-clock " << tc_total << " s, tsc " << tsc_total << " s\n";
  if (big < 170) hard << big << " strands of 1 ms or more; fib's 177 calls each have one\n";
  v.hard = hard.str();
  v.soft = soft.str();
  return v;
}

// Records fib(10, 4000) with `metrics` and judges task-clock against the TSC (metric indexes as
// in task_clock_violations) by the timing policy; returns the model of the recording judged.
model::Model record_fib_and_compare(Metrics& test, const std::string& metrics, int tsc,
                                    int task_clock, std::string* trace_out) {
  struct Sample {
    E2E::Profiled run;
    std::shared_ptr<model::Model> model;
  };
  int n = 0;
  Sample last;
  judge_timing<Sample>(
      "fib 10 4000 with --metric " + metrics + ": task-clock against the TSC", Needs::SpinTiming,
      [&] {
        Sample s;
        s.run.trace = test.trace_path("fib" + std::to_string(++n) + ".tlens");
        s.run.rec = record(example("fib", "clang"), {"10", "4000"}, s.run.trace, default_env(),
                           {"--metric", metrics});
        EXPECT_TRUE(s.run.rec.exited(0)) << s.run.rec.describe();
        if (s.run.rec.exited(0)) {
          s.run.report = report_json(s.run.trace);
          s.model = std::make_shared<model::Model>(test.load_model(s.run.trace));
        }
        return s;
      },
      [&](const Sample& s) {
        Violations v;
        if (!s.model) {
          v.hard = "not recorded\n";
          return v;
        }
        return task_clock_violations(*s.model, tsc, task_clock);
      },
      [](const Sample& s) { return std::vector<json>{s.run.report}; }, &last);
  *trace_out = last.run.trace;
  return last.model ? std::move(*last.model) : model::Model();
}

TEST_F(Metrics, TscFirstThenTaskClockAndPageFaults) {
  std::string trace;
  model::Model m = record_fib_and_compare(*this, "tsc,task-clock,page-faults", -1, 0, &trace);
  EXPECT_EQ(m.metric, "tsc");
  ASSERT_EQ(m.extra_metrics, (std::vector<std::string>{"task-clock", "page-faults"}));
  ASSERT_EQ(m.extra_work.size(), 2 * m.strands.size());
  // fib's tasks compute on their stacks: a page fault is rare, far below one per strand.
  uint64_t faults = 0;
  for (size_t s = 0; s < m.strands.size(); ++s) faults += extra_of(m, 1, s);
  EXPECT_LT(faults, m.strands.size()) << "page faults in fib's strands";

  json j = report_json(trace);
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["metric"], "tsc");
  EXPECT_EQ(j["metrics"], json::array({"tsc", "task-clock", "page-faults"}));
  RunResult table = run({TASKLENS_BIN, "report", trace});
  ASSERT_TRUE(table.exited(0)) << table.describe();
  EXPECT_NE(table.out.find("metric tsc"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("also recorded (program totals): task-clock "), std::string::npos)
      << table.out;
  EXPECT_NE(table.out.find(", page-faults "), std::string::npos) << table.out;
}

// The primary metric is the first one, whatever it is: the report's work is task-clock's, and
// the TSC, recorded beside it, gets the same strands' time.
TEST_F(Metrics, TaskClockFirstThenTsc) {
  std::string trace;
  model::Model m = record_fib_and_compare(*this, "task-clock,tsc", 0, -1, &trace);
  ASSERT_EQ(m.extra_metrics, std::vector<std::string>{"tsc"});
  EXPECT_EQ(m.metric, "task-clock");
  json j = report_json(trace);
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["metric"], "task-clock");
  EXPECT_EQ(j["metrics"], json::array({"task-clock", "tsc"}));
  EXPECT_EQ(num(j, "ticks_per_second"), 1e9);
}

// mergesort's merges write a scratch array first touched inside the tasks (4 MiB: 1024 fresh
// pages, a page fault each without transparent huge pages on plain malloc memory), and main()
// fills the 4 MiB of keys before the parallel region: about 2048 page faults of program work,
// half of them in task strands.
TEST_F(Metrics, PageFaultsOfFreshMemoryCountWhereItIsFirstTouched) {
  // With transparent huge pages for all memory, one fault maps 2 MiB: the count is not pages.
  if (read_file("/sys/kernel/mm/transparent_hugepage/enabled").find("[always]") !=
      std::string::npos)
    GTEST_SKIP() << "transparent huge pages are always on: a fault maps 512 pages";
  const std::string trace = path("faults.tlens");
  RunResult rec = record(example("mergesort", "clang"), {"1048576", "256", "0"}, trace,
                         default_env(), {"--metric", "tsc,page-faults"});
  ASSERT_TRUE(rec.exited(0)) << rec.describe();
  ASSERT_NE(rec.out.find(": ok"), std::string::npos) << rec.describe();
  model::Model m = load_model(trace);
  const int faults = extra_index(m, "page-faults");
  ASSERT_EQ(faults, 0);
  uint64_t total = 0, in_tasks = 0;
  for (size_t s = 0; s < m.strands.size(); ++s) {
    total += extra_of(m, faults, s);
    if (m.nodes[m.strands[s].node].kind == model::NodeKind::Task)
      in_tasks += extra_of(m, faults, s);
  }
  const uint64_t pages = 1048576 * 4 / 4096;  // of each array
  std::cerr << "[ metrics  ] page faults: " << total << " in work, " << in_tasks << " in tasks\n";
  EXPECT_GE(total, 2 * pages * 98 / 100);
  EXPECT_LE(total, 2 * pages + 400) << "stacks and libraries fault a few pages more, not hundreds";
  EXPECT_GE(in_tasks, pages * 98 / 100);
  EXPECT_LE(in_tasks, pages + 200);
}

bool machine_has_cache_miss_counter() {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = PERF_COUNT_HW_CACHE_MISSES;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  const long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  if (fd >= 0) close(static_cast<int>(fd));
  return fd >= 0;
}

// One line on stderr, exit code `code` (2: usage, 3: environment), the program never started.
void expect_refused(const RunResult& r, int code, const std::string& trace,
                    const std::vector<std::string>& fragments) {
  EXPECT_TRUE(r.exited(code)) << r.describe();
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.describe();
  for (const std::string& f : fragments)
    EXPECT_NE(r.err.find(f), std::string::npos) << r.describe();
  EXPECT_EQ(r.out, "") << "the program ran: " << r.describe();
  EXPECT_FALSE(std::filesystem::exists(trace)) << r.describe();
}

TEST_F(Metrics, HardwareMetricOnThisMachineIsRefusedNamingIt) {
  if (machine_has_cache_miss_counter())
    GTEST_SKIP() << "this machine counts cache misses: the error cannot be provoked";
  const std::string trace = path("hw.tlens");
  RunResult r = record(example("fib", "clang"), {"5", "10"}, trace, default_env(),
                       {"--metric", "tsc,task-clock,cache-misses"});
  expect_refused(r, 3, trace,
                 {"metric 'cache-misses' is not available on this machine (perf_event_open: ",
                  "use --metric tsc"});
}

TEST_F(Metrics, BadListsAreRefusedWithOneLineEach) {
  const std::string trace = path("bad.tlens");
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"tsc,,", {"--metric tsc,,: empty metric name at position 2"}},
      {",tsc", {"empty metric name at position 1"}},
      {"tsc,tsc", {"metric 'tsc' is listed twice"}},
      {"task-clock,cpu-clock", {"unknown metric 'cpu-clock'", "page-faults"}},
      {"bogus", {"--metric bogus: unknown metric 'bogus'", "tsc, cycles, instructions"}},
      {"cycles,cpu-cycles", {"'cpu-cycles' is perf's alias of 'cycles'"}},
      {"cs,context-switches", {"'cs' is perf's alias of 'context-switches'"}},
      {"auto,tsc", {"auto chooses one metric"}},
      {"tsc,task-clock,page-faults,minor-faults,major-faults,cs,migrations,cycles,instructions",
       {"9 metrics, at most 8"}},
  };
  for (const auto& [list, fragments] : cases) {
    SCOPED_TRACE(list);
    RunResult r =
        record(example("fib", "clang"), {"5", "10"}, trace, default_env(), {"--metric", list});
    expect_refused(r, 2, trace, fragments);
  }
}

}  // namespace
}  // namespace tasklens::e2e
