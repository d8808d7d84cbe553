// End to end: `tasklens whatif` and `tasklens advise` on recorded programs. The what-if on a
// program limited by a serial region predicts the parallelism its optimized twin (the region
// really parallelized) measures; the adviser names that region first.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "e2e_util.hpp"

namespace tasklens::e2e {
namespace {

class WhatIf : public E2E, public ::testing::WithParamInterface<std::string> {
 protected:
  RunResult run_json_raw(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {TASKLENS_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    argv.insert(argv.end(), {"--format", "json"});
    return run(argv);
  }
  json run_json(const std::vector<std::string>& args) {
    RunResult r = run_json_raw(args);
    if (!r.exited(0)) {
      ADD_FAILURE() << r.describe();
      return json();
    }
    return json::parse(r.out);
  }
  // The parallelism at `factor` of the curve of `unit` in a whatif JSON.
  static double parallelism_at(const json& j, const std::string& unit, double factor) {
    for (const json& u : j["units"])
      if (u["unit"] == unit)
        for (const json& p : u["points"])
          if (p["factor"].is_number() && p["factor"].get<double>() == factor)
            return p["parallelism"].get<double>();
    return NAN;
  }
};

TEST_P(WhatIf, RegionWhatIfPredictsTheOptimizedTwin) {
  const std::string exe = example("whatif_twin", GetParam());
  // Twin first: its measured parallelism is what the what-if must predict.
  Profiled twin = profile_analytic(exe, {"parallel"}, Analytic{320000, 30000});
  ASSERT_FALSE(twin.report.is_null());
  const double measured = num(twin.report["program"], "parallelism");

  double predicted = NAN, attempts = 0;
  std::string trace;
  json j;
  // The serial run is judged against its own analytic profile too (a disturbed run is retried),
  // and so is the prediction made from it: a disturbance of the code outside the region, a few
  // percent of the serial run's span, is most of the span the what-if predicts at k = 8 (seen
  // once in CI: 7.44 against 10.51 while the run's own figures were within their tolerance).
  auto prediction_holds = [&](const Profiled& run) -> std::string {
    RunResult r = run_json_raw({"whatif", run.trace, "--region", "prepare", "--factors", "8"});
    if (!r.exited(0)) return "";  // a failing command is the checks' below, not a timing
    const double at8 = parallelism_at(json::parse(r.out), "region prepare", 8);
    if (std::fabs(at8 - measured) <= 0.15 * measured) return "";
    return "whatif --region prepare at k=8 predicts " + std::to_string(at8) + ", the twin " +
           std::to_string(measured) + "\n";
  };
  Profiled serial = profile_analytic(exe, {"serial"}, Analytic{320000, 170000}, default_env(), 0,
                                     prediction_holds);
  trace = serial.trace;
  j = run_json({"whatif", trace, "--region", "prepare", "--factors", "2,8,inf"});
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["mode"], "parallelize");
  ASSERT_EQ(j["units"].size(), 1u);
  EXPECT_EQ(j["units"][0]["kind"], "region");
  // The region is the serial code: about half the work and almost all of the critical path.
  EXPECT_NEAR(j["units"][0]["work"].get<double>() / j["program"]["work"].get<double>(), 0.5, 0.05);
  EXPECT_GT(j["units"][0]["critical_path_percent"].get<double>(), 85);
  predicted = parallelism_at(j, "region prepare", 8);
  attempts = serial.attempts;
  std::cerr << "[ e2e      ] " << GetParam() << ": whatif --region prepare at k=8 predicts "
            << predicted << ", the parallel twin measures " << measured << " (error "
            << 100 * (predicted - measured) / measured << "%, " << attempts << " run(s))\n";
  EXPECT_NEAR(predicted, measured, 0.15 * measured);
  // k = 2: span S/2 + W = 90000, parallelism (S + T*W) / 90000 = 3.56.
  EXPECT_NEAR(parallelism_at(j, "region prepare", 2), 320000.0 / 90000, 0.15 * 320000 / 90000);
  // After the what-if at the largest finite factor (8): the same program work.
  EXPECT_EQ(j["after"]["factor"], 8);
  EXPECT_EQ(j["after"]["program"]["work"], j["program"]["work"]);
  EXPECT_NEAR(j["after"]["program"]["parallelism"].get<double>(), predicted, 1e-6);

  // The adviser names the fragment holding the region first.
  json a = run_json({"advise", trace, "--target", "8"});
  ASSERT_FALSE(a.is_null());
  ASSERT_GE(a["steps"].size(), 1u) << a.dump(2);
  EXPECT_EQ(a["steps"][0]["region"], "prepare") << a.dump(2);
  EXPECT_GT(a["steps"][0]["region_percent"].get<double>(), 90);
  EXPECT_NE(a["steps"][0]["fragment"].get<std::string>().find("whatif_twin.c"), std::string::npos);
  EXPECT_EQ(a["steps"][0]["function"], "main");
  EXPECT_GT(a["steps"][0]["critical_path_percent"].get<double>(), 85);
  EXPECT_EQ(a["stop"], "target-reached");
  EXPECT_GE(a["steps"].back()["parallelism"].get<double>(), 8);

  // The same question by construct site and by fragment: the solve tasks' site at k=inf and
  // the adviser's fragment at k=8 (it is the region's code).
  const int task_line = marker_line("whatif_twin.c", "#pragma omp task shared(solved)");
  json s = run_json({"whatif", trace, "--site", "whatif_twin.c:" + std::to_string(task_line),
                     "--fragment", a["steps"][0]["fragment"].get<std::string>() + "=8", "--factors",
                     "inf"});
  ASSERT_FALSE(s.is_null());
  ASSERT_EQ(s["units"].size(), 3u);  // site, fragment, all
  EXPECT_EQ(s["units"][0]["kind"], "site");
  EXPECT_EQ(s["units"][1]["kind"], "fragment");
  // all: the fragment at its own factor 8, the solve tasks removed from the span.
  for (const json& p : s["units"][2]["points"])
    EXPECT_GT(p["parallelism"].get<double>(), predicted) << s.dump(2);
}

INSTANTIATE_TEST_SUITE_P(Compilers, WhatIf, ::testing::Values("clang", "gcc"), compiler_name);

class WhatIfErrors : public E2E {};

TEST_F(WhatIfErrors, BadQuestionsGetOneLineErrors) {
  const std::string trace = path("t.tlens");
  RunResult rec = record(example("amdahl", "clang"), {"2000", "8000", "8"}, trace);
  ASSERT_TRUE(rec.exited(0)) << rec.describe();
  struct Case {
    std::vector<std::string> args;
    int code;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"whatif", trace}, 2, "--region, --site or --fragment"},
      {{"whatif", trace, "--region", "nope"}, 2, "no regions"},
      {{"whatif", trace, "--site", "nowhere.c:1"}, 2, "no construct site"},
      {{"whatif", trace, "--fragment", "amdahl.c:1-2"}, 2, "no code fragment"},
      {{"whatif", trace, "--site", "amdahl.c:1=0.5"}, 2, "1 or more"},
      {{"whatif", trace, "--site", "amdahl.c:1", "--factors", "2,x"}, 2, "not a factor"},
      {{"whatif", trace, "--site", "amdahl.c:1", "--mode", "fast"}, 2, "unknown mode"},
      {{"whatif", path("missing.tlens"), "--list"}, 4, "missing.tlens"},
      {{"advise", path("missing.tlens")}, 4, "missing.tlens"},
      {{"advise", trace, "--format", "xml"}, 2, "unknown format"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {TASKLENS_BIN};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    RunResult r = run(argv);
    EXPECT_TRUE(r.exited(c.code)) << r.describe();
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.describe();
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.describe();
    EXPECT_EQ(r.out, "") << r.describe();
  }
  // --list names the units to ask about.
  RunResult list = run({TASKLENS_BIN, "whatif", trace, "--list"});
  ASSERT_TRUE(list.exited(0)) << list.describe();
  EXPECT_NE(list.out.find("amdahl.c:"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("(none recorded)"), std::string::npos) << list.out;
}

}  // namespace
}  // namespace tasklens::e2e
