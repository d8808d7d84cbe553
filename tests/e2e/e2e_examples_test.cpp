// End-to-end tests on the example programs (examples/, docs/examples.md): `tasklens record` runs
// each one (clang build and gcc build), `tasklens report --format json` must give the work, span
// and parallelism that the program's analytic profile predicts, and sites at the right lines
// with the right counts. Also: record passes output and exit codes through, and the CLI's errors
// on bad input.
//
// Work and span are in TSC ticks; every example spends its time in tl_work(units), a spin of
// units * TL_UNIT_TICKS ticks on the CPU, so the measured work and span are at least the analytic
// ones and only a little more (see Analytic in e2e_util.hpp). Parallelism is compared as a ratio.
#include <linux/perf_event.h>
#include <sys/syscall.h>

#include <random>
#include <sstream>

#include "e2e_util.hpp"

namespace tasklens::e2e {
namespace {

class Examples : public E2E, public ::testing::WithParamInterface<std::string> {
 protected:
  std::string exe(const std::string& name) const { return example(name, GetParam()); }
  bool gcc() const { return GetParam() == "gcc"; }
};

// Fibonacci numbers: F(1) = F(2) = 1.
uint64_t fibonacci(int n) {
  uint64_t a = 0, b = 1;
  for (int i = 0; i < n; i++) {
    const uint64_t t = a + b;
    a = b;
    b = t;
  }
  return a;
}

// ----------------------------------------------------------------------------------- fib

// fib(n) with g units per call: C(n) = 2 F(n+1) - 1 calls, W = g C(n), S = g n.
TEST_P(Examples, FibWorkSpanParallelismMatchAnalytic) {
  const int n = 12;
  const double g = 2000;
  const double calls = 2.0 * fibonacci(n + 1) - 1;  // 465
  auto p = profile_analytic(exe("fib"), {"12", "2000"}, {calls * g, n * g});
  expect_report_invariants(p.report);
}

TEST_P(Examples, FibTaskSitesAreThePragmaLinesAndCountEveryTask) {
  const int n = 12;
  auto p = profile(exe("fib"), {std::to_string(n), "2000"});
  expect_report_invariants(p.report);
  // Each call with n >= 2 creates one task at each site: F(n+1) - 1 = 232 per site.
  const double per_site = static_cast<double>(fibonacci(n + 1) - 1);
  for (const char* marker : {"site: fib-task-1", "site: fib-task-2"}) {
    json s = expect_site(p.report, "fib.c", marker, "task");
    if (s.is_null()) continue;
    EXPECT_EQ(num(s, "count"), per_site) << marker;
    EXPECT_NE(s.value("function", "").find("fib"), std::string::npos)
        << "task site not in function fib: " << s.dump();
  }
  json par = expect_site(p.report, "fib.c", "site: fib-parallel", "parallel");
  if (!par.is_null()) {
    EXPECT_EQ(num(par, "count"), 1);
  }
  double tasks = 0;
  for (const json& s : sites_of_kind(p.report, "task")) tasks += num(s, "count");
  EXPECT_EQ(tasks, 2 * per_site) << "tasks in all task sites";
}

// g = 0: a pure fine-grained task benchmark (8360 tasks): every task is still counted.
TEST_P(Examples, FibFineGrainedCountsEveryTask) {
  const int n = 18;
  auto p = profile(exe("fib"), {std::to_string(n), "0"});
  expect_report_invariants(p.report);
  const double per_site = static_cast<double>(fibonacci(n + 1) - 1);  // 4180
  for (const char* marker : {"site: fib-task-1", "site: fib-task-2"}) {
    json s = expect_site(p.report, "fib.c", marker, "task");
    if (!s.is_null()) {
      EXPECT_EQ(num(s, "count"), per_site) << marker;
    }
  }
}

// ----------------------------------------------------------------------------- mergesort

// n = G 2^k keys, c units per key: W = c n (k + 1), S = c (2n - G); 2^k - 1 tasks per site.
TEST_P(Examples, MergesortSerialMergeBoundsParallelismAsAnalytic) {
  const double n = 16384, grain = 128, c = 3, k = 7;
  auto p = profile_analytic(exe("mergesort"), {"16384", "128", "3"},
                            {c * n * (k + 1), c * (2 * n - grain)});  // W/S = 4.0157
  expect_report_invariants(p.report);
  for (const char* marker : {"site: msort-task-1", "site: msort-task-2"}) {
    json s = expect_site(p.report, "mergesort.c", marker, "task");
    if (!s.is_null()) {
      EXPECT_EQ(num(s, "count"), 127) << marker;
    }
  }
}

// ------------------------------------------------------------------------------- treesum

// depth d, serial below B nodes (h_B = 10 for B = 1023), c units per node:
// W = c (2^d - 1), S = c ((d - h_B) + 2^h_B - 1); 2^(d - h_B) - 1 tasks per site.
TEST_P(Examples, TreesumMatchesAnalytic) {
  const double d = 14, hb = 10, c = 40;
  auto p = profile_analytic(exe("treesum"), {"14", "1023", "40"},
                            {c * (std::pow(2, d) - 1), c * ((d - hb) + std::pow(2, hb) - 1)});
  expect_report_invariants(p.report);
  for (const char* marker : {"site: treesum-task-1", "site: treesum-task-2"}) {
    json s = expect_site(p.report, "treesum.c", marker, "task");
    if (!s.is_null()) {
      EXPECT_EQ(num(s, "count"), 15) << marker;
    }
  }
}

// -------------------------------------------------------------------------------- amdahl

// s serial units (s/4 before the first OpenMP construct, the rest after the parallel part), p
// parallel units in k pieces: W = s + p, S = s + p/k.
TEST_P(Examples, AmdahlTasksMatchAnalytic) {
  auto p = profile_analytic(exe("amdahl"), {"20000", "400000", "8", "tasks"},
                            {420000, 70000});  // W/S = 6
  expect_report_invariants(p.report);
  json t = expect_site(p.report, "amdahl.c", "site: amdahl-task", "task");
  if (!t.is_null()) {
    EXPECT_EQ(num(t, "count"), 8);
  }
}

// The serial code runs outside every construct: the program's work minus the parallel region's
// is s = 20000 units, and it is s / S = 20000 / 70000 = 28.6% of the critical path, all of it
// directly in the "program" site (its critical_path_percent is exclusive; its work, like every
// site's, includes the constructs inside it). Before the first OpenMP construct there are
// s/4 = 5000 units, after the parallel part 15000: about 15000 units outside would mean that the
// code before the OpenMP runtime started was missed, about 5000 that the code after the last
// construct was.
TEST_P(Examples, AmdahlSerialCodeIsCountedOutsideConstructsOnTheCriticalPath) {
  const double s = 20000, span = 70000;
  // The serial work outside the parallel region (at least s: hard; at most 10% more: soft), and
  // its exclusive share of the critical path (within the bands those make): timings of the
  // same recording as the analytic profile, judged with it.
  auto serial_check = [&](const E2E::Profiled& run) {
    Violations v;
    auto parallels = sites_of_kind(run.report, "parallel");
    auto programs = sites_of_kind(run.report, "program");
    if (parallels.size() != 1 || programs.size() != 1) {
      v.hard = "expected one program and one parallel row\n";
      return v;
    }
    const double outside =
        (num(run.report["program"], "work") - num(parallels[0], "work")) / kUnitTicks;
    const double percent = num(programs[0], "critical_path_percent");
    const double lo = 100 * 0.99 * s / (1.10 * span), hi = 100 * 1.10 * s / span;
    std::ostringstream m;
    m << "serial work outside the parallel region: " << outside << " units, want " << 0.99 * s
      << " to " << 1.10 * s << "\n";
    if (outside < 0.99 * s) v.hard = m.str();
    if (outside > 1.10 * s) v.soft = m.str();
    if (percent < lo || percent > hi) {
      std::ostringstream share;
      share << "share of the critical path outside constructs: " << percent << "%, want " << lo
            << " to " << hi << "\n";
      v.soft += share.str();
    }
    return v;
  };
  auto p = profile_analytic(exe("amdahl"), {"20000", "400000", "8", "tasks"}, {420000, span},
                            default_env(), 0, serial_check);
  expect_report_invariants(p.report);
  ASSERT_TRUE(p.report.is_object());
  EXPECT_EQ(sites_of_kind(p.report, "program").size(), 1u) << site_list(p.report);
  EXPECT_EQ(sites_of_kind(p.report, "parallel").size(), 1u) << site_list(p.report);
}

TEST_P(Examples, AmdahlDynamicLoopMatchesAnalytic) {
  const auto loop_work = site_work_check("amdahl.c", "site: amdahl-loop", "loop", 400000);
  auto p = profile_analytic(exe("amdahl"), {"20000", "400000", "8", "loop"}, {420000, 70000},
                            default_env(), 0, loop_work);
  expect_report_invariants(p.report);
  json loop = expect_site(p.report, "amdahl.c", "site: amdahl-loop", "loop");
  if (!loop.is_null()) {
    EXPECT_EQ(num(loop, "count"), 1);
  }
}

// -------------------------------------------------------------------------------- primes

// cost(i) = 1 + i/q units for 0 <= i < N; part j of the static loop is [jN/4, (j+1)N/4).
struct PrimesCosts {
  double work = 0;
  double part[4] = {0, 0, 0, 0};
  double last_block = 0;
};
PrimesCosts primes_costs(uint64_t n, uint64_t q, uint64_t block) {
  PrimesCosts c;
  for (uint64_t i = 0; i < n; i++) {
    const double cost = 1.0 + static_cast<double>(i / q);
    c.work += cost;
    c.part[i / (n / 4)] += cost;
    if (i >= n - block) c.last_block += cost;
  }
  return c;
}

// schedule(static) gives each of 2 threads two consecutive parts. The loop's iterations are the
// 4 parts; a thread's share of two is seen only as a whole, so tasklens spreads its work evenly
// over them: S = (p2 + p3) / 2 (W/S = 2.67; the real longest part p3 gives 2.29, which 4 threads
// show). The shares' imbalance is the finding: p2 + p3 against the mean (p0 + ... + p3) / 2 is
// 49.6% more, and the report says so. gcc inlines schedule(static) loops: no loop events, so the
// region is one strand per thread, S = p2 + p3 (W/S = 1.34), and the report says that too.
TEST_P(Examples, PrimesStaticTwoThreadsSharesAreSeenTogetherAndUneven) {
  const PrimesCosts c = primes_costs(8192, 64, 256);
  const double want = 100.0 * (c.part[2] + c.part[3]) / (c.work / 2) - 100.0;
  const E2E::Check site_work =
      gcc() ? E2E::Check()
            : site_work_check("primes.c", "site: primes-static-loop", "loop", c.work);
  // The shares' imbalance is a timing of the two threads against each other (two virtual CPUs
  // can run at different speeds): a band, judged with the recording's other timings.
  const E2E::Check loop_work = gcc() ? E2E::Check() : E2E::Check([&](const Profiled& run) {
    Violations v = site_work(run);
    for (const auto& s : run.report.value("sites", json::array()))
      if (s.value("kind", "") == "loop" && s.contains("loop") &&
          s["loop"].contains("share_imbalance_percent")) {
        const double got = s["loop"]["share_imbalance_percent"].get<double>();
        if (std::abs(got - want) > 0.2 * want)
          v.soft += "share imbalance " + std::to_string(got) +
                    "% is not within 20% of the analytic " + std::to_string(want) + "%\n";
      }
    return v;
  });
  const double span = gcc() ? c.part[2] + c.part[3] : (c.part[2] + c.part[3]) / 2;
  auto p = profile_analytic(exe("primes"), {"static", "8192", "64"}, {c.work, span}, default_env(),
                            0, loop_work);
  expect_report_invariants(p.report);
  if (gcc()) {
    bool bound = false;
    for (const auto& s : p.report["sites"]) bound = bound || s.contains("team_bound");
    EXPECT_TRUE(bound) << site_list(p.report);
    return;
  }
  json loop = expect_site(p.report, "primes.c", "site: primes-static-loop", "loop");
  if (loop.is_null()) return;
  EXPECT_TRUE(loop.contains("loop") && loop["loop"].contains("share_imbalance_percent"))
      << loop.dump();
}

// With 4 threads each part is one thread's (one iteration each, seen one by one): the last part
// dominates, S = p3 (W/S = 2.29).
// 4 threads on a 2-core machine: tasklens removes the preemptions from the strands and tl_work
// counts only its time on the CPU, so the threads preempting each other change little; the
// tolerance is wider all the same.
TEST_P(Examples, PrimesStaticFourThreadsSpanIsTheLastPart) {
  const PrimesCosts c = primes_costs(8192, 64, 256);
  Analytic a{c.work, c.part[3]};
  a.par_tol = 0.15;
  a.work_over = 0.15;
  auto p = profile_analytic(exe("primes"), {"static", "8192", "64"}, a, default_env(4));
  expect_report_invariants(p.report);
}

// One task per block of 256 numbers, the most expensive first: S = the last block (W/S = 16.3).
TEST_P(Examples, PrimesTasksHaveHighParallelism) {
  const PrimesCosts c = primes_costs(8192, 64, 256);
  auto p = profile_analytic(exe("primes"), {"tasks", "8192", "64", "256"}, {c.work, c.last_block});
  expect_report_invariants(p.report);
  json t = expect_site(p.report, "primes.c", "site: primes-task", "task");
  if (!t.is_null()) {
    EXPECT_EQ(num(t, "count"), 32);
  }
}

// ------------------------------------------------------------------------- pass-through

// stdout and the exit status of the recorded program are those of a plain run (under the
// program's own runtime, libgomp for gcc builds); record's summary line names the trace.
TEST_P(Examples, RecordPassesStdoutAndExitStatusThrough) {
  struct Case {
    std::string name;
    std::vector<std::string> args;
  };
  for (const Case& c : {Case{"fib", {"10", "100"}}, Case{"primes", {"tasks", "2048", "64", "64"}},
                        Case{"mergesort", {"4096", "256", "1"}}}) {
    SCOPED_TRACE(c.name);
    std::vector<std::string> argv = {exe(c.name)};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    RunResult plain = run(argv);
    ASSERT_TRUE(plain.exited(0)) << plain.describe();
    const std::string trace = path(c.name + ".tlens");
    RunResult rec = record(exe(c.name), c.args, trace);
    EXPECT_EQ(rec.status(), plain.status()) << rec.describe();
    EXPECT_EQ(rec.out, plain.out) << "stdout changed by record";
    EXPECT_NE(rec.err.find(trace), std::string::npos) << "summary does not name the trace\n"
                                                      << rec.describe();
    EXPECT_TRUE(std::filesystem::exists(trace));
  }
}

INSTANTIATE_TEST_SUITE_P(Compilers, Examples, ::testing::Values("clang", "gcc"), compiler_name);

// --------------------------------------------------------------------------- CLI errors

class CliErrors : public E2E {
 protected:
  // report of `trace` must fail with exactly one line on stderr, naming the file.
  void expect_report_fails_with_one_line(const std::string& trace) {
    RunResult r = run({TASKLENS_BIN, "report", trace, "--format", "json"});
    EXPECT_FALSE(r.exited(0)) << r.describe();
    EXPECT_FALSE(r.timed_out || r.signal != 0) << "report crashed: " << r.describe();
    auto lines = lines_of(r.err);
    EXPECT_EQ(lines.size(), 1u) << "expected one line on stderr: " << r.describe();
    EXPECT_NE(r.err.find(std::filesystem::path(trace).filename().string()), std::string::npos)
        << "the message does not name the file: " << r.describe();
  }
};

TEST_F(CliErrors, ReportOfMissingFileFailsWithOneLineNamingIt) {
  expect_report_fails_with_one_line(path("does-not-exist.tlens"));
}

TEST_F(CliErrors, ReportOfEmptyFileFailsWithOneLineNamingIt) {
  write_file(path("empty.tlens"), "");
  expect_report_fails_with_one_line(path("empty.tlens"));
}

TEST_F(CliErrors, ReportOfRandomBytesFailsWithOneLineNamingIt) {
  std::mt19937_64 rng(20240611);
  std::string bytes(64 * 1024, '\0');
  for (char& b : bytes) b = static_cast<char>(rng());
  write_file(path("random.tlens"), bytes);
  expect_report_fails_with_one_line(path("random.tlens"));
}

// A real trace cut in the middle of the file (not a killed program: `tasklens record` finished
// it, then the file lost its second half) is damaged, not incomplete: report fails, in one line
// naming the file and saying what is wrong with it (not blaming the program).
TEST_F(CliErrors, ReportOfTruncatedTraceFailsWithOneLineNamingIt) {
  const std::string full = path("full.tlens");
  RunResult rec = record(example("fib", "clang"), {"12", "20"}, full);
  ASSERT_TRUE(rec.exited(0)) << rec.describe();
  const std::string data = read_file(full);
  ASSERT_GT(data.size(), 200u);
  const std::string cut = path("truncated.tlens");
  write_file(cut, data.substr(0, data.size() / 2));
  expect_report_fails_with_one_line(cut);
  RunResult r = run({TASKLENS_BIN, "report", cut, "--format", "json"});
  bool says_why = false;
  for (const char* word : {"truncat", "cut short", "incomplete", "damaged", "corrupt", "ends in"})
    says_why = says_why || contains_nocase(r.err, word);
  EXPECT_TRUE(says_why) << "the message does not say the file is truncated: " << r.describe();
}

// This machine has no hardware counters (no perf_event cycles): record must refuse, name the
// metric and suggest tsc.
TEST_F(CliErrors, RecordWithCyclesMetricFailsNamingItAndSuggestingTsc) {
  perf_event_attr attr{};
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = PERF_COUNT_HW_CPU_CYCLES;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  const long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  if (fd >= 0) {
    close(static_cast<int>(fd));
    GTEST_SKIP() << "this machine has a cycles counter: the error cannot be provoked";
  }
  RunResult r = record(example("fib", "clang"), {"5", "10"}, path("cycles.tlens"), default_env(),
                       {"--metric", "cycles"});
  EXPECT_FALSE(r.exited(0)) << r.describe();
  EXPECT_FALSE(r.timed_out || r.signal != 0) << r.describe();
  EXPECT_NE(r.err.find("cycles"), std::string::npos) << r.describe();
  EXPECT_NE(r.err.find("tsc"), std::string::npos) << "no suggestion of tsc: " << r.describe();
}

}  // namespace
}  // namespace tasklens::e2e
