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

// Units per iteration (twice loop_forms' default) and iterations. The program's span holds, beside
// one iteration, the region's start and the runtime's creation of the loop's tasks or chunks,
// which the analytic span leaves out: a third of a millisecond on some virtual machines (their
// page faults and system calls are slow), 17% of a default iteration, half that of this one; far
// more with more threads than CPUs, which is why a single loop is judged by its own site.
constexpr double kW = 4000;
constexpr double kN = 64;
const std::vector<std::string> kSizes = {"64", "4000"};

struct Form {
  const char* name;
  double work, span;
  bool gcc_inline;       // gcc makes no runtime call for it: team-bound under gcc
  bool together = true;  // iterations seen only together (an `ordered` loop shows each one)
  // The band of the program's parallelism around the analytic one. tasks_loops's critical path
  // holds four steps of the runtime beside its iteration (a task's start, a nested region's
  // start and end, the task's end), each one a strand of its own that a pause of the machine
  // lengthens whole (the iterations' spins count such a pause, those strands cannot): 30%.
  double par_tol = 0.15;
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
    {"tasks_loops", kN* kW, kW, true, true, 0.30},
    // Ordered parts of w/8 in a chain after the first body: S = w + n w/8.
    {"ordered", kN*(kW + kW / 8), kW + kN* kW / 8, false, false},
};

std::string param_name(const ::testing::TestParamInfo<std::tuple<std::string, int>>& info) {
  std::string name = std::get<0>(info.param) + "_" + kForms[std::get<1>(info.param)].name;
  return name;
}

// The forms each test applies to: the ones the runtime sees for ParallelismIs..., gcc's inlined
// static loops for TeamBound.
std::vector<std::tuple<std::string, int>> forms_where(bool inlined_by_gcc) {
  std::vector<std::tuple<std::string, int>> v;
  for (const std::string compiler : {"clang", "gcc"})
    for (int i = 0; i < int(std::size(kForms)); ++i)
      if ((compiler == "gcc" && kForms[i].gcc_inline) == inlined_by_gcc)
        v.emplace_back(compiler, i);
  return v;
}

class LoopForms : public E2E, public ::testing::WithParamInterface<std::tuple<std::string, int>> {
 protected:
  const std::string& compiler() const { return std::get<0>(GetParam()); }
  const Form& form() const { return kForms[std::get<1>(GetParam())]; }
};
class SeenLoopForms : public LoopForms {};
class InlinedLoopForms : public LoopForms {};

// What the analytic figures describe: the loop's own site when the program has one loop, run
// once (its work and span leave out the region's start and the runtime's first steps, which on
// a machine with slow page faults and system calls cost a large share of an iteration when the
// team has more threads than CPUs), else the whole program (two loops, loops in tasks). As a
// report with that row for its program, for analytic_violations.
json the_loop(const json& report) {
  if (!report.is_object() || !report.contains("sites")) return report;
  const json* loop = nullptr;
  int loops = 0;
  for (const json& site : report["sites"]) {
    const std::string kind = site.value("kind", "");
    if (kind != "loop" && kind != "taskloop") continue;
    ++loops;
    loop = &site;
  }
  if (loops != 1 || num(*loop, "count") != 1) return report;
  json judged = report;
  judged["program"] = *loop;
  return judged;
}

// Every thread count gives the analytic parallelism (within the form's band, 15% for most), so
// the thread counts agree (within the band squared): the three recordings judged together.
TEST_P(SeenLoopForms, ParallelismIsTheIterationCountWithOneTwoAndFourThreads) {
  const std::string exe = example("loop_forms", compiler());
  Analytic a{form().work, form().span};
  a.par_tol = form().par_tol;
  const int counts[] = {1, 2, 4};
  auto agree = [&](const Profiles& runs) {
    Violations v;
    std::vector<double> seen;
    for (size_t i = 0; i < runs.size(); ++i) {
      const json judged = the_loop(runs[i].report);
      // (A run off its band is explained when its spins' own account shows the excess.)
      add_violations(v, analytic_violations(judged, a, runs[i].overrun),
                     std::to_string(counts[i]) + " threads: ");
      seen.push_back(num(judged["program"], "parallelism"));
    }
    const auto [lo, hi] = std::minmax_element(seen.begin(), seen.end());
    const double apart = (1 + a.par_tol) * (1 + a.par_tol);
    if (!(*hi <= apart * *lo))
      v.soft += "1, 2, 4 threads: " + std::to_string(seen[0]) + ", " + std::to_string(seen[1]) +
                ", " + std::to_string(seen[2]) + ": more than " + std::to_string(apart) +
                " times apart\n";
    return v;
  };
  const Profiles runs = judge_profiles(
      std::string(form().name) + " (" + compiler() + ") on 1, 2 and 4 threads",
      [&] {
        Profiles r;
        for (int threads : counts) {
          std::vector<std::string> args = {form().name};
          args.insert(args.end(), kSizes.begin(), kSizes.end());
          r.push_back(profile(exe, args, default_env(threads)));
        }
        return r;
      },
      agree);
  for (size_t i = 0; i < runs.size(); ++i) {
    SCOPED_TRACE("OMP_NUM_THREADS=" + std::to_string(counts[i]));
    if (runs[i].report.is_null()) continue;
    expect_report_invariants(runs[i].report);
    // Only the iterations seen together say so; schedule(dynamic, 4) chunks are 4 iterations.
    bool marked = false;
    for (const auto& s : runs[i].report["sites"])
      if (s.contains("loop") && s["loop"]["strands_seen_together"].get<double>() > 0) marked = true;
    EXPECT_EQ(marked, form().together) << "a loop row says its iterations were seen together";
  }
}

// gcc's inlined static loops: the region is marked team-bound and its parallelism is the team.
TEST_P(InlinedLoopForms, GccInlinedStaticLoopsAreMarkedTeamBound) {
  const std::string exe = example("loop_forms", compiler());
  for (int threads : {1, 2}) {
    SCOPED_TRACE("OMP_NUM_THREADS=" + std::to_string(threads));
    // (tasks_loops: the 4 tasks stay parallel; each nested loop is bound to its team of one.)
    const double want = std::string(form().name) == "tasks_loops" ? 4 : threads;
    auto team = [&](const Profiled& run) {
      Violations v;
      const double par = num(run.report["program"], "parallelism");
      if (!(par > 0.8 * want && par < 1.2 * want))
        v.soft = "parallelism " + std::to_string(par) + " against the team's " +
                 std::to_string(want) + "\n";
      return v;
    };
    auto p =
        profile_judged(exe, {form().name}, "the team's parallelism", team, default_env(threads));
    ASSERT_FALSE(p.report.is_null());
    bool marked = false;
    for (const auto& s : p.report["sites"])
      if (s.contains("team_bound")) marked = true;
    EXPECT_TRUE(marked) << site_list(p.report);
    bool noted = false;
    for (const auto& n : p.report["notes"])
      noted = noted || (contains_nocase(n, "gcc") && contains_nocase(n, "thread"));
    EXPECT_TRUE(noted) << p.report["notes"].dump();
  }
}

INSTANTIATE_TEST_SUITE_P(Forms, SeenLoopForms, ::testing::ValuesIn(forms_where(false)), param_name);
INSTANTIATE_TEST_SUITE_P(Forms, InlinedLoopForms, ::testing::ValuesIn(forms_where(true)),
                         param_name);

class Loops : public E2E {};

// A static loop whose second half costs twice the first: with 2 threads the second share took
// 2x the first, so the slowest share is 33% above the mean of the two; the report says so and
// suggests a dynamic schedule.
TEST_F(Loops, UnevenStaticSharesAreReportedApart) {
  // The shares are timings: a pause in the shorter one hides part of the difference.
  auto uneven = [](const Profiled& run) {
    Violations v;
    auto found = sites_at(run.report, "loop_forms.c",
                          marker_line("loop_forms.c", "site: imbalanced"), "loop");
    if (found.size() != 1 || !found[0].contains("loop")) {
      v.hard = "no loop row at the imbalanced loop\n";
      return v;
    }
    const double imbalance = found[0]["loop"]["share_imbalance_percent"].get<double>();
    if (!(imbalance > 33.3 / 1.25 && imbalance < 33.3 * 1.25))
      v.soft = "share imbalance " + std::to_string(imbalance) + "%, analytic 33.3%\n";
    return v;
  };
  const Profiled p = profile_judged(example("loop_forms", "clang"), {"imbalanced"},
                                    "the static shares' imbalance", uneven);
  ASSERT_FALSE(p.report.is_null());
  const json loop = expect_site(p.report, "loop_forms.c", "site: imbalanced", "loop");
  ASSERT_TRUE(loop.contains("loop")) << loop.dump();
  EXPECT_EQ(loop["loop"]["static_instances"], 1);
  bool noted = false;
  for (const auto& n : p.report["notes"]) noted = noted || contains_nocase(n, "schedule(dynamic)");
  EXPECT_TRUE(noted) << p.report["notes"].dump();
  // Equal shares say nothing (a timing too: a pause can make two equal shares differ by more
  // than the note's 10%).
  auto even = [](const Profiled& run) {
    Violations v;
    for (const auto& n : run.report["notes"])
      if (contains_nocase(n, "schedule(dynamic)"))
        v.soft += "equal static shares noted as uneven: " + n.get<std::string>() + "\n";
    return v;
  };
  profile_judged(example("loop_forms", "clang"), {"static"}, "equal shares not noted", even);
}

// The stencil proxy: two static loops per step and a serial step, W/S = 32.5 whatever the team.
TEST_F(Loops, StencilProxyHasItsAnalyticParallelismWithOneTwoAndFourThreads) {
  Analytic a{156000, 4800};
  a.par_tol = 0.15;
  for (int threads : {1, 2, 4}) {
    SCOPED_TRACE("OMP_NUM_THREADS=" + std::to_string(threads));
    // Each loop's parallelism is a timing too (a pause in one chunk lowers it): a band, judged
    // with the recording's other timings.
    auto loops_parallel = [](const Profiled& run) {
      Violations v;
      for (const char* marker : {"site: stencil-flux", "site: stencil-update"})
        for (const json& loop :
             sites_at(run.report, "stencil.c", marker_line("stencil.c", marker), "loop"))
          if (num(loop, "parallelism") <= 64 / 1.15)
            v.soft += std::string(marker) + ": parallelism " +
                      std::to_string(num(loop, "parallelism")) + ", not above 64 / 1.15\n";
      return v;
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
