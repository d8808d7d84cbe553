// End to end: `tasklens diff` (seed 001's differential analysis) on recorded programs. The
// false-sharing example (examples/false_sharing.c) recorded with 1 and 2 threads puts its
// false-sharing loop first with a large work ratio, its padded twin near 1; a trace against
// itself has ratios of 1 and no cost; two different programs are refused with the reason; bad
// arguments give one-line errors; the JSON contract (docs/report-json.md), CSV and table.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "e2e_util.hpp"

namespace tasklens::e2e {
namespace {

RunResult diff(const std::vector<std::string>& args) { return tasklens_command("diff", args); }

// The site row of `j[list]` at examples/<file>'s marker line (+kSiteLineSlack), any kind.
json unit_at(const json& j, const char* list, const std::string& file, const std::string& marker) {
  const int line = marker_line(file, marker);
  if (!j.is_object() || !j.contains(list)) return json();
  for (const json& u : j[list]) {
    const std::string name = u.value("unit", "");
    if (site_file(name) != file) continue;
    const int l = site_line(name);
    if (l >= line && l <= line + kSiteLineSlack) return u;
  }
  return json();
}

double ratio(const json& unit) {
  if (!unit.is_object() || !unit.contains("metrics")) return NAN;
  return num(unit["metrics"]["tsc"], "ratio");
}

std::string unit_list(const json& j) {
  std::string s;
  if (j.is_object() && j.contains("sites"))
    for (const json& u : j["sites"])
      s += "  " + u.value("kind", "?") + " " + u.value("unit", "?") + " ratio " +
           std::to_string(ratio(u)) + " cost " + std::to_string(num(u["metrics"]["tsc"], "cost")) +
           "\n";
  return s;
}

// The fields of the contract, and the identities that hold for every unit.
void expect_contract(const json& j) {
  ASSERT_TRUE(j.is_object());
  for (const char* k : {"tasklens_version", "base", "other", "metrics", "sort_metric",
                        "min_share_percent", "notes", "program", "sites", "fragments",
                        "small_sites", "small_fragments", "only_in_base", "only_in_other"})
    EXPECT_TRUE(j.contains(k)) << "missing " << k;
  EXPECT_EQ(j["metrics"], json::array({"tsc"}));
  EXPECT_EQ(j.value("sort_metric", ""), "tsc");
  for (const char* side : {"base", "other"})
    for (const char* k : {"trace", "executable", "metrics", "threads", "workers", "tasks",
                          "strands", "elapsed", "work", "span", "parallelism"})
      EXPECT_TRUE(j[side].contains(k)) << "missing " << side << "." << k;
  const double other_span = num(j["other"]["span"], "tsc");
  auto check = [&](const json& m, const std::string& what) {
    const double base = num(m, "base"), other = num(m, "other");
    EXPECT_EQ(num(m, "inflation"), other - base) << what;
    if (base > 0) {
      EXPECT_NEAR(num(m, "ratio"), other / base, 1e-9 * other / base) << what;
    } else {
      EXPECT_TRUE(m["ratio"].is_null()) << what;
    }
    EXPECT_LE(num(m, "critical"), other) << what;
    EXPECT_LE(num(m, "cost"), other_span) << what;
    EXPECT_NEAR(num(m, "cost_percent"), 100.0 * num(m, "cost") / other_span, 1e-6) << what;
  };
  check(j["program"]["tsc"], "program");
  EXPECT_EQ(num(j["program"]["tsc"], "base"), num(j["base"]["work"], "tsc"));
  EXPECT_EQ(num(j["program"]["tsc"], "other"), num(j["other"]["work"], "tsc"));
  for (const char* list : {"sites", "fragments"}) {
    double last = INFINITY;
    for (const json& u : j[list]) {
      check(u["metrics"]["tsc"], u.value("unit", "?"));
      const double cost = num(u["metrics"]["tsc"], "cost");
      EXPECT_LE(cost, last) << list << " not sorted by cost";
      last = cost;
    }
  }
}

class DiffE2E : public E2E, public ::testing::WithParamInterface<std::string> {};

// False sharing only costs when the two threads run at the same time. On a machine shared with
// other work (this project's 2-core VM runs several builds at once) the two threads of a run are
// time-sliced with the others and rarely overlap: measured under a load of 8, the false-sharing
// loop's ratio was 0.9-1.9, i.e. nothing. So the recordings run at real-time priority
// (SCHED_FIFO 10, about 30 ms of CPU in all) where the test may use it (root or CAP_SYS_NICE):
// then both threads hold both cores. Elsewhere a recording of 2 threads is judged only when its
// threads ran at once: `tasklens sched` shows on average 1.8 running strands or more over the
// run and other processes preempted them for at most 5% of the time (the recorder's
// preemption_removed); otherwise the pair is recorded again, and the test is skipped, saying
// so, when no attempt could be judged.
// (realtime_available(): e2e_util.hpp.)

RunResult record_priority(const std::string& exe, const std::string& out, int threads) {
  std::vector<std::string> argv;
  if (realtime_available()) argv = {"/usr/bin/chrt", "-f", "10"};
  argv.insert(argv.end(), {TASKLENS_BIN, "record", "-o", out, "--", exe});
  return run(argv, default_env(threads));
}

// The false-sharing loop's work grows several times with 2 threads on the 2 cores (measured at
// real-time priority on the 2-core AMD EPYC VM, about 18 pairs of runs: clang 3.0x-7.1x, gcc
// 1.8x-4.0x: the compilers emit different increments, docs/examples.md); the padded loop does
// the same work without sharing a line and stays near 1 (clang 0.93-1.06, gcc 0.67-1.05, and
// 1.58 and 1.73 once each: the two virtual CPUs seem to land at times on the two hardware
// threads of one core, where even independent counters run 1.7x slower, measured with a pinned
// microbenchmark). Tolerances: the false-sharing loop first; its ratio at least 1.5 and at least
// twice the padded loop's (the padded loop is the control: whatever slows a run, a 1-thread run
// beside other work on the sibling CPU or a 2-thread run on one core, moves both ratios alike;
// measured 2.3x-6.7x); the padded ratio within [0.6, 1.8] (the above). One retry of the pair of
// recordings when the first does not match.
TEST_P(DiffE2E, FalseSharingSiteComesFirst) {
  const std::string exe = std::string(TASKLENS_EXAMPLES_DIR) + "/false_sharing_" + GetParam();
  const bool rt = realtime_available();
  std::string failure;
  json j;
  int judged = 0, last = 0;  // the last attempt's recordings show as table and CSV below
  for (int attempt = 0; attempt < (rt ? 4 : 6) && judged < 2; ++attempt) {
    last = attempt;
    const std::string one = path("one" + std::to_string(attempt) + ".tlens");
    const std::string two = path("two" + std::to_string(attempt) + ".tlens");
    // Without tasklens first: on some virtual machines the two CPUs are at times the two
    // hardware threads of one core, where false sharing costs nothing (measured: the shared
    // loop's ratio 1.08, the padded one's 1.04) or slows both loops alike.
    if (!false_sharing_shows_now(exe, "diff     ", attempt)) continue;
    RunResult r1 = record_priority(exe, one, 1);
    ASSERT_TRUE(r1.exited(0)) << r1.describe();
    RunResult r2 = record_priority(exe, two, 2);
    ASSERT_TRUE(r2.exited(0)) << r2.describe();
    j = tasklens_command_json("diff", {one, two});
    ASSERT_TRUE(j.is_object());
    expect_contract(j);
    EXPECT_EQ(num(j["base"], "workers"), 1);
    EXPECT_EQ(num(j["other"], "workers"), 2);
    if (!rt) {
      const json sched = tasklens_command_json("sched", {two});
      const double running = num(sched["parallelism"], "running_average");
      const double preempted = num(sched, "preempted") / num(sched, "cumulative");
      if (!(running >= 1.8 && preempted <= 0.05)) {
        std::cerr << "[ diff     ] attempt " << attempt + 1 << ": the 2 threads did not run at "
                  << "once (" << running << " running strands on average, " << 100 * preempted
                  << "% of the time preempted): not judged\n";
        usleep(1000000);
        continue;
      }
    }
    ++judged;
    ASSERT_FALSE(j["sites"].empty()) << j.dump(1).substr(0, 3000);
    const json first = j["sites"][0];
    const json shared = unit_at(j, "sites", "false_sharing.c", "// site: fs-shared");
    const json padded = unit_at(j, "sites", "false_sharing.c", "// site: fs-padded");
    std::ostringstream s;
    if (shared.is_null() || padded.is_null()) {
      s << "the shared or the padded loop's site is missing\n";
    } else {
      if (first.value("unit", "") != shared.value("unit", ""))
        s << "first site is " << first.value("unit", "") << ", not the false-sharing loop "
          << shared.value("unit", "") << "\n";
      if (!(ratio(shared) >= 1.5)) s << "false-sharing ratio " << ratio(shared) << " < 1.5\n";
      if (!(ratio(shared) >= 2 * ratio(padded)))
        s << "false-sharing ratio " << ratio(shared) << " is not twice the padded loop's "
          << ratio(padded) << "\n";
      if (!(ratio(padded) >= 0.6 && ratio(padded) <= 1.8))
        s << "padded ratio " << ratio(padded) << " outside [0.6, 1.8]\n";
      if (!(num(shared["metrics"]["tsc"], "cost") > 0))
        s << "the false-sharing loop's inflation has no cost on the critical path\n";
      std::cerr << "[ diff     ] " << GetParam() << (rt ? " (real-time priority)" : "")
                << ": false-sharing loop x" << ratio(shared) << " (cost "
                << num(shared["metrics"]["tsc"], "cost_percent") << "% of the span), padded loop x"
                << ratio(padded) << ", program x" << num(j["program"]["tsc"], "ratio") << "\n";
    }
    failure = s.str();
    if (failure.empty()) break;
    std::cerr << "[ diff     ] attempt " << attempt + 1 << " off:\n" << failure << unit_list(j);
    usleep(1000000);
  }
  if (judged == 0)
    GTEST_SKIP() << "false sharing did not show on this machine in any attempt, with or without "
                    "tasklens (2 threads beside other load without real-time priority, or two "
                    "virtual CPUs on one core): see the comments above";
  EXPECT_EQ(failure, "") << unit_list(j);

  // The table and the CSV of the same comparison.
  const std::string one = path("one" + std::to_string(last) + ".tlens");
  const std::string two = path("two" + std::to_string(last) + ".tlens");
  RunResult table = diff({one, two});
  ASSERT_TRUE(table.exited(0)) << table.describe();
  EXPECT_NE(table.out.find("construct sites, by the cost"), std::string::npos) << table.out;
  EXPECT_NE(table.out.find("false_sharing.c:"), std::string::npos) << table.out;
  RunResult csv = diff({one, two, "--format", "csv"});
  ASSERT_TRUE(csv.exited(0)) << csv.describe();
  const std::vector<std::string> lines = lines_of(csv.out);
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(
      lines[0].rfind("unit_kind,unit,kind,function,small,base_strands,other_strands,tsc_base", 0),
      0u)
      << lines[0];
  EXPECT_EQ(lines[1].rfind("program,", 0), 0u) << lines[1];
}

INSTANTIATE_TEST_SUITE_P(Compilers, DiffE2E, ::testing::Values("clang", "gcc"), compiler_name);

TEST_F(E2E, DiffOfATraceAgainstItselfHasRatiosOfOne) {
  const std::string trace = path("fib.tlens");
  RunResult r = record(std::string(TASKLENS_EXAMPLES_DIR) + "/fib_clang", {}, trace);
  ASSERT_TRUE(r.exited(0)) << r.describe();
  const json j = tasklens_command_json("diff", {trace, trace, "--min-share", "0"});
  ASSERT_TRUE(j.is_object());
  expect_contract(j);
  EXPECT_EQ(num(j["program"]["tsc"], "ratio"), 1.0);
  EXPECT_EQ(num(j["program"]["tsc"], "cost"), 0);
  EXPECT_TRUE(j["small_sites"].empty());
  size_t units = 0;
  for (const char* list : {"sites", "fragments"})
    for (const json& u : j[list]) {
      const json& m = u["metrics"]["tsc"];
      if (num(m, "base") > 0) {
        EXPECT_EQ(num(m, "ratio"), 1.0) << u.dump();
      }
      EXPECT_EQ(num(m, "cost"), 0) << u.dump();
      EXPECT_EQ(num(u, "base_strands"), num(u, "other_strands")) << u.dump();
      ++units;
    }
  EXPECT_GE(units, 4u);
  EXPECT_TRUE(j["only_in_base"].empty() && j["only_in_other"].empty());
}

TEST_F(E2E, DiffRefusesDifferentProgramsAndBadArguments) {
  const std::string fib = path("fib.tlens"), primes = path("primes.tlens");
  RunResult r1 = record(std::string(TASKLENS_EXAMPLES_DIR) + "/fib_clang", {}, fib);
  ASSERT_TRUE(r1.exited(0)) << r1.describe();
  RunResult r2 = record(std::string(TASKLENS_EXAMPLES_DIR) + "/primes_clang", {"tasks"}, primes);
  ASSERT_TRUE(r2.exited(0)) << r2.describe();

  struct Case {
    std::vector<std::string> args;
    int exit_code;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{fib, primes}, 2, "no construct site in common"},
      {{fib}, 2, "give two traces"},
      {{fib, fib, primes}, 2, "give two traces"},
      {{fib, fib, "--format", "xml"}, 2, "--format xml"},
      {{fib, fib, "--min-share", "200"}, 2, "--min-share"},
      {{fib, fib, "--metric", "cycles"}, 2, "not measured by both"},
      {{fib, path("missing.tlens")}, 4, "missing.tlens"},
  };
  for (const Case& c : cases) {
    RunResult r = diff(c.args);
    EXPECT_TRUE(r.exited(c.exit_code)) << r.describe();
    EXPECT_EQ(r.out, "") << r.describe();
    const std::vector<std::string> lines = lines_of(r.err);
    ASSERT_EQ(lines.size(), 1u) << r.describe();
    EXPECT_EQ(lines[0].rfind("tasklens: ", 0), 0u) << r.describe();
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.describe();
  }
  // The refusal names what each recording has.
  RunResult r = diff({fib, primes});
  EXPECT_NE(r.err.find("fib.c:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("primes.c:"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace tasklens::e2e
