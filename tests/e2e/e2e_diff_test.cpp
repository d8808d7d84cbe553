// End to end: `tasklens diff` (the differential analysis) on recorded programs. The
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

// False sharing only costs when the two threads run at the same time, on two cores that do not
// share a cache line's home (two virtual CPUs on the two hardware threads of one core show none,
// or slow both loops alike). So the recordings run at real-time priority (SCHED_FIFO 10, about 30
// ms of CPU in all) where the test may use it (root or CAP_SYS_NICE): then both threads hold both
// cores. A sample (a 1-thread and a 2-thread recording) judges only what it shows: the program
// prints its loops' times, and a sample whose own times do not show false sharing clearly (the
// shared loop's work growing less than 1.65x, or less than 2.2 times the padded loop's, or the
// padded loop's outside [0.66, 1.64]: 10% inside the bands tasklens's figures are held to,
// FalseSharingProbe) cannot judge tasklens's account of it; nor can one whose threads other
// processes held (real timing). Both count as disturbed by the timing policy.
// (realtime_available(): e2e_util.hpp.)

RunResult record_priority(const std::string& exe, const std::string& out, int threads) {
  std::vector<std::string> argv;
  if (realtime_available()) argv = {"/usr/bin/chrt", "-f", "10"};
  argv.insert(argv.end(), {TASKLENS_BIN, "record", "-o", out, "--", exe});
  return run(argv, default_env(threads));
}

// The false-sharing loop's work grows several times with 2 threads on the 2 cores (measured at
// real-time priority on a 2-core VM, about 18 pairs of runs: clang 3.0x-7.1x, gcc
// 1.8x-4.0x: the compilers emit different increments, docs/examples.md); the padded loop does
// the same work without sharing a line and stays near 1 (clang 0.93-1.06, gcc 0.67-1.05, and
// 1.58 and 1.73 once each). Bands: the false-sharing loop first; its ratio at least 1.5 and at
// least twice the padded loop's (the padded loop is the control: whatever slows a run moves both
// ratios alike); the padded ratio within [0.6, 1.8].
TEST_P(DiffE2E, FalseSharingSiteComesFirst) {
  const std::string exe = std::string(TASKLENS_EXAMPLES_DIR) + "/false_sharing_" + GetParam();
  const bool rt = realtime_available();
  int n = 0;
  auto take = [&] {
    Profiles runs;
    for (int threads : {1, 2}) {
      Profiled p;
      p.trace = path("t" + std::to_string(threads) + "-" + std::to_string(++n) + ".tlens");
      p.rec = record_priority(exe, p.trace, threads);
      EXPECT_TRUE(p.rec.exited(0)) << p.rec.describe();
      p.report = report_json(p.trace, &p.rep);
      runs.push_back(p);
    }
    return runs;
  };
  auto judge = [&](const Profiles& runs) {
    Violations v;
    const FalseSharingProbe own = false_sharing_of_runs(runs[0].rec.out, runs[1].rec.out);
    if (!own.shows()) v.disturbed = "in these runs " + own.describe();
    const json j = tasklens_command_json("diff", {runs[0].trace, runs[1].trace});
    if (!j.is_object() || j["sites"].empty()) {
      v.hard = "no diff, or no site in it\n";
      return v;
    }
    const json first = j["sites"][0];
    const json shared = unit_at(j, "sites", "false_sharing.c", "// site: fs-shared");
    const json padded = unit_at(j, "sites", "false_sharing.c", "// site: fs-padded");
    if (shared.is_null() || padded.is_null()) {
      v.hard = "the shared or the padded loop's site is missing\n" + unit_list(j);
      return v;
    }
    std::ostringstream s;
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
    if (!s.str().empty()) v.soft = s.str() + unit_list(j);
    return v;
  };
  const Profiles runs = judge_profiles(GetParam() + ": the false-sharing loop found by diff", take,
                                       judge, Needs::RealTiming);
  ASSERT_EQ(runs.size(), 2u);
  const std::string one = runs[0].trace, two = runs[1].trace;
  const json j = tasklens_command_json("diff", {one, two});
  expect_contract(j);
  EXPECT_EQ(num(j["base"], "workers"), 1);
  EXPECT_EQ(num(j["other"], "workers"), 2);

  // The table and the CSV of the same comparison.
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
