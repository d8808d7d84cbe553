// End-to-end tests of loops as users write them (examples/loop_forms.c, examples/stencil.c): a
// loop's parallelism is bounded by its iterations, not by the team it was recorded with. Every
// loop form is recorded with 1, 2 and 4 threads (4 is oversubscribed on the 2-core test machines:
// preemption is taken out of the work) and must give the analytic parallelism within 15%, and
// so the same figure within noise whatever the team.
//
// gcc computes the shares of static loops inline (no runtime call, so no event at all): those
// forms cannot be modelled per iteration, and the test checks instead that the report says so
// (the region is marked team-bound, with a note saying how to get the real figure).
#include "e2e_util.hpp"

namespace tasklens::e2e {
namespace {

constexpr double kW = 2000;  // loop_forms' default units per iteration
constexpr double kN = 64;    // and iterations

struct Form {
  const char* name;
  double work, span;
  bool gcc_inline;       // gcc makes no runtime call for it: team-bound under gcc
  bool together = true;  // iterations seen only together (an `ordered` loop shows each one)
};

const Form kForms[] = {
    {"static", kN* kW, kW, true},
    {"static_chunk", kN* kW, kW, true},
    {"dynamic", kN* kW, kW, false},
    {"guided", kN* kW, kW, false},
    {"runtime", kN* kW, kW, false},
    {"collapse", kN* kW, kW, true},
    {"reduction", kN* kW, kW, true},
    {"nowait", 2 * kN* kW, 2 * kW, true},
    {"taskloop_grainsize", kN* kW, kW, false},
    {"taskloop_num_tasks", kN* kW, kW, false},
    {"tasks_loops", kN* kW, kW, true},
    // Ordered parts of w/8 in a chain after the first body: S = w + n w/8.
    {"ordered", kN*(kW + kW / 8), kW + kN* kW / 8, false, false},
};

std::string param_name(const ::testing::TestParamInfo<std::tuple<std::string, int>>& info) {
  std::string name = std::get<0>(info.param) + "_" + kForms[std::get<1>(info.param)].name;
  return name;
}

class LoopForms : public E2E, public ::testing::WithParamInterface<std::tuple<std::string, int>> {
 protected:
  const std::string& compiler() const { return std::get<0>(GetParam()); }
  const Form& form() const { return kForms[std::get<1>(GetParam())]; }
};

// Every thread count gives the analytic parallelism (within 15%), so the thread counts agree.
TEST_P(LoopForms, ParallelismIsTheIterationCountWithOneTwoAndFourThreads) {
  if (compiler() == "gcc" && form().gcc_inline) GTEST_SKIP() << "gcc inlines it: see TeamBound";
  const std::string exe = example("loop_forms", compiler());
  Analytic a{form().work, form().span};
  a.par_tol = 0.15;
  const int counts[] = {1, 2, 4};
  auto record_with = [&](int threads) {
    SCOPED_TRACE("OMP_NUM_THREADS=" + std::to_string(threads));
    auto p = profile_analytic(exe, {form().name}, a, default_env(threads));
    if (p.report.is_null()) return -1.0;
    expect_report_invariants(p.report);
    // Only the iterations seen together say so; schedule(dynamic, 4) chunks are 4 iterations.
    bool marked = false;
    for (const auto& s : p.report["sites"])
      if (s.contains("loop") && s["loop"]["strands_seen_together"].get<double>() > 0) marked = true;
    EXPECT_EQ(marked, form().together) << "a loop row says its iterations were seen together";
    return num(p.report["program"], "parallelism");
  };
  std::vector<double> seen;
  for (int threads : counts) seen.push_back(record_with(threads));
  ASSERT_TRUE(std::none_of(seen.begin(), seen.end(), [](double x) { return x < 0; }));
  auto spread = [&] {
    const auto [lo, hi] = std::minmax_element(seen.begin(), seen.end());
    return *hi / *lo;
  };
  for (int again = 0; again < 3 && spread() > 1.15 * 1.15; ++again) {
    // Each run is judged against the analytic value with the machine's disturbance allowed for
    // (profile_analytic): a disturbed one can pass that and still be the odd one out here (4
    // threads on 2 cores gave 42.7 against 61.2 and 61.3 once). The one farthest from the
    // analytic value is recorded again, up to three times (a host losing half its time to
    // pauses gave 59.5, 43.7 and 48.8 against 64 once). (Not the one farthest from the median:
    // there that was 59.5, the closest to the truth.)
    const double analytic = form().work / form().span;
    size_t odd = 0;
    for (size_t i = 1; i < seen.size(); i++)
      if (std::abs(seen[i] - analytic) > std::abs(seen[odd] - analytic)) odd = i;
    std::cerr << "[ e2e      ] " << counts[odd] << " threads gave " << seen[odd]
              << " against an analytic " << analytic << "; recording it again\n";
    wait_for_quiet_machine("e2e      ");
    seen[odd] = record_with(counts[odd]);
  }
  if (spread() > 1.15 * 1.15 && !too_disturbed_to_judge().empty())
    GTEST_SKIP() << too_disturbed_to_judge() << " (1, 2, 4 threads: " << seen[0] << ", " << seen[1]
                 << ", " << seen[2] << ")";
  EXPECT_LE(spread(), 1.15 * 1.15)
      << "1, 2, 4 threads: " << seen[0] << ", " << seen[1] << ", " << seen[2];
}

// gcc's inlined static loops: the region is marked team-bound and its parallelism is the team.
TEST_P(LoopForms, GccInlinedStaticLoopsAreMarkedTeamBound) {
  if (!(compiler() == "gcc" && form().gcc_inline)) GTEST_SKIP() << "seen by the runtime";
  const std::string exe = example("loop_forms", compiler());
  for (int threads : {1, 2}) {
    SCOPED_TRACE("OMP_NUM_THREADS=" + std::to_string(threads));
    auto p = profile(exe, {form().name}, default_env(threads));
    ASSERT_FALSE(p.report.is_null());
    bool marked = false;
    for (const auto& s : p.report["sites"])
      if (s.contains("team_bound")) marked = true;
    EXPECT_TRUE(marked) << site_list(p.report);
    bool noted = false;
    for (const auto& n : p.report["notes"])
      noted = noted || (contains_nocase(n, "gcc") && contains_nocase(n, "thread"));
    EXPECT_TRUE(noted) << p.report["notes"].dump();
    // (tasks_loops: the 4 tasks stay parallel; each nested loop is bound to its team of one.)
    const double want = std::string(form().name) == "tasks_loops" ? 4 : threads;
    double par = num(p.report["program"], "parallelism");
    // One disturbed recording is recorded again, up to twice, after a quiet moment (2 threads
    // gave 1.45 once while the host took half the machine's time).
    for (int again = 0; again < 2 && !(par > 0.8 * want && par < 1.2 * want); ++again) {
      std::cerr << "[ e2e      ] " << threads << " threads gave " << par << " against " << want
                << "; recording it again\n";
      wait_for_quiet_machine("e2e      ");
      auto q = profile(exe, {form().name}, default_env(threads));
      ASSERT_FALSE(q.report.is_null());
      par = num(q.report["program"], "parallelism");
    }
    if (!(par > 0.8 * want && par < 1.2 * want) && !too_disturbed_to_judge().empty())
      GTEST_SKIP() << too_disturbed_to_judge() << " (parallelism " << par << " against " << want
                   << ")";
    EXPECT_GT(par, 0.8 * want);
    EXPECT_LT(par, 1.2 * want);
  }
}

INSTANTIATE_TEST_SUITE_P(Forms, LoopForms,
                         ::testing::Combine(::testing::Values("clang", "gcc"),
                                            ::testing::Range(0, int(std::size(kForms)))),
                         param_name);

class Loops : public E2E {};

// A static loop whose second half costs twice the first: with 2 threads the second share took
// 2x the first, so the slowest share is 33% above the mean of the two; the report says so and
// suggests a dynamic schedule.
TEST_F(Loops, UnevenStaticSharesAreReportedApart) {
  // The shares are timings: a pause in the shorter one hides part of the difference (22% seen
  // once on a disturbed machine). Such a run is recorded again, up to twice.
  Profiled p;
  json loop;
  double imbalance = 0;
  for (int attempt = 0; attempt < 3; ++attempt) {
    if (attempt > 0) {
      std::cerr << "[ e2e      ] share imbalance " << imbalance << "%, recording again\n";
      wait_for_quiet_machine("e2e      ");
    }
    p = profile(example("loop_forms", "clang"), {"imbalanced"}, default_env(2));
    ASSERT_FALSE(p.report.is_null());
    loop = expect_site(p.report, "loop_forms.c", "site: imbalanced", "loop");
    ASSERT_FALSE(loop.is_null());
    ASSERT_TRUE(loop.contains("loop")) << loop.dump();
    imbalance = loop["loop"]["share_imbalance_percent"].get<double>();
    if (imbalance > 33.3 / 1.25 && imbalance < 33.3 * 1.25) break;
  }
  EXPECT_EQ(loop["loop"]["static_instances"], 1);
  EXPECT_GT(imbalance, 33.3 / 1.25);
  EXPECT_LT(imbalance, 33.3 * 1.25);
  bool noted = false;
  for (const auto& n : p.report["notes"]) noted = noted || contains_nocase(n, "schedule(dynamic)");
  EXPECT_TRUE(noted) << p.report["notes"].dump();
  // Equal shares say nothing. A disturbed machine can make two equal shares differ by more
  // than the note's 10% (16% seen once): such a run is recorded again once.
  auto uneven_note = [&](const json& report) {
    for (const auto& n : report["notes"])
      if (contains_nocase(n, "schedule(dynamic)")) return n.get<std::string>();
    return std::string();
  };
  auto even = profile(example("loop_forms", "clang"), {"static"}, default_env(2));
  ASSERT_FALSE(even.report.is_null());
  if (!uneven_note(even.report).empty()) {
    std::cerr << "[ e2e      ] equal static shares noted as uneven, recording again: "
              << uneven_note(even.report) << "\n";
    wait_for_quiet_machine("e2e      ");
    even = profile(example("loop_forms", "clang"), {"static"}, default_env(2));
    ASSERT_FALSE(even.report.is_null());
  }
  EXPECT_EQ(uneven_note(even.report), "");
}

// The stencil proxy: two static loops per step and a serial step, W/S = 32.5 whatever the team.
TEST_F(Loops, StencilProxyHasItsAnalyticParallelismWithOneTwoAndFourThreads) {
  Analytic a{156000, 4800};
  a.par_tol = 0.15;
  for (int threads : {1, 2, 4}) {
    SCOPED_TRACE("OMP_NUM_THREADS=" + std::to_string(threads));
    // Each loop's parallelism is a timing too (a pause in one chunk lowers it): judged, and
    // retried, with the run's other timings.
    auto loops_parallel = [](const Profiled& run) -> std::string {
      std::string m;
      for (const char* marker : {"site: stencil-flux", "site: stencil-update"})
        for (const json& loop :
             sites_at(run.report, "stencil.c", marker_line("stencil.c", marker), "loop"))
          if (num(loop, "parallelism") <= 64 / 1.15)
            m += std::string(marker) + ": parallelism " + std::to_string(num(loop, "parallelism")) +
                 ", not above 64 / 1.15\n";
      return m;
    };
    auto p = profile_analytic(example("stencil", "clang"), {}, a, default_env(threads), 0,
                              loops_parallel);
    if (p.report.is_null()) continue;
    for (const char* marker : {"site: stencil-flux", "site: stencil-update"}) {
      json loop = expect_site(p.report, "stencil.c", marker, "loop");
      if (!loop.is_null()) {
        EXPECT_EQ(num(loop, "count"), 4) << marker;
      }
    }
  }
}

// A 1-thread recording of a static loop is no longer predicted serial: the loop's iterations are
// shared among the simulated workers, like a static schedule on that many threads.
TEST_F(Loops, PredictFromAOneThreadRecordingOfAStaticLoopScales) {
  const std::string trace = path("one.tlens");
  RunResult rec = record(example("loop_forms", "clang"), {"static"}, trace, default_env(1));
  ASSERT_TRUE(rec.exited(0)) << rec.describe();
  json j = tasklens_command_json("predict", {trace});
  ASSERT_FALSE(j.is_null());
  double one = 0, four = 0;
  for (const auto& row : j["predictions"]) {
    if (row["threads"] == 1) one = row["simulated"].get<double>();
    if (row["threads"] == 4) four = row["simulated"].get<double>();
  }
  ASSERT_GT(four, 0) << j.dump();
  EXPECT_GT(one / four, 3.5) << "64 equal iterations on 4 workers: 4x, less the serial part";
}

}  // namespace
}  // namespace tasklens::e2e
