// End to end: `tasklens predict` on recorded examples (docs/examples.md). The criterion: the
// prediction for 2 threads made from a 1-thread recording is within 15% of the measured 2-thread
// time (the elapsed time of a 2-thread recording, as `tasklens sched` measures it) on each example
// whose parallelism exceeds 2; the test prints how close each one is. Also the JSON contract
// (docs/report-json.md), the bounds every prediction respects, the extrapolation from several
// recordings, and the errors on bad input. The predictions are of wall times: judged by the
// timing policy (e2e_timing.hpp) as real timing, whose recordings must have had their threads
// to themselves.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "e2e_util.hpp"

namespace tasklens::e2e {
namespace {

constexpr double kTolerance = 0.15;  // the criterion's "within 15%"

RunResult predict(const std::vector<std::string>& args) {
  return tasklens_command("predict", args);
}
json predict_json(const std::vector<std::string>& args) {
  return tasklens_command_json("predict", args);
}

void expect_contract(const json& j, size_t recordings, const std::vector<int>& threads) {
  ASSERT_TRUE(j.is_object());
  for (const char* k :
       {"tasklens_version", "metric", "tsc_per_second", "recordings", "simulated_from", "work",
        "span", "parallelism", "overheads", "notes", "predictions"})
    EXPECT_TRUE(j.contains(k)) << "missing " << k;
  ASSERT_TRUE(j["recordings"].is_array());
  EXPECT_EQ(j["recordings"].size(), recordings);
  for (const json& r : j["recordings"])
    for (const char* k : {"trace", "executable", "threads", "tasks", "elapsed", "elapsed_seconds"})
      EXPECT_TRUE(r.contains(k)) << "recording without " << k;
  for (const char* c : {"spawn", "steal", "sync", "continue"}) {
    ASSERT_TRUE(j["overheads"].contains(c)) << c;
    for (const char* k : {"ticks", "seconds", "samples", "measured"})
      EXPECT_TRUE(j["overheads"][c].contains(k)) << c << " without " << k;
  }
  ASSERT_TRUE(j["predictions"].is_array());
  ASSERT_EQ(j["predictions"].size(), threads.size());
  const double work = num(j, "work"), span = num(j, "span");
  EXPECT_GT(work, 0);
  EXPECT_GT(span, 0);
  EXPECT_LE(span, work);
  double previous = INFINITY;
  for (size_t i = 0; i < threads.size(); ++i) {
    const json& row = j["predictions"][i];
    for (const char* k :
         {"threads", "simulated", "simulated_seconds", "speedup", "steals", "overhead",
          "lower_bound", "greedy_bound", "measured", "measured_seconds", "simulated_error_percent",
          "extrapolated", "extrapolated_seconds", "extrapolated_speedup"})
      EXPECT_TRUE(row.contains(k)) << "prediction without " << k;
    const int p = threads[i];
    EXPECT_EQ(num(row, "threads"), p);
    const double sim = num(row, "simulated");
    // No schedule beats max(T1/P, Tinf); overheads only add to it.
    EXPECT_GE(sim, std::max(work / p, span) * (1 - 1e-9)) << "P=" << p;
    EXPECT_NEAR(num(row, "lower_bound"), std::max(work / p, span), 1e-6 * work);
    EXPECT_NEAR(num(row, "greedy_bound"), work / p + span, 1e-6 * work);
    // More workers never make the greedy simulation much slower (steal costs may add a little).
    EXPECT_LE(sim, previous * 1.05) << "P=" << p;
    previous = sim;
  }
}

struct Case {
  std::string name;
  std::string exe;  // under TASKLENS_EXAMPLES_DIR
  std::vector<std::string> args;
  bool tbb = false;  // oneTBB: one worker through the CPU affinity (taskset), not OMP_NUM_THREADS
};

std::string case_name(const ::testing::TestParamInfo<Case>& info) { return info.param.name; }
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class PredictExamples : public E2E, public ::testing::WithParamInterface<Case> {
 protected:
  // The case recorded with `threads` workers, and reported.
  Profiled profile_with(const Case& c, int threads, const std::string& out) {
    Profiled p;
    p.trace = out;
    p.rec = record_with(c, threads, out);
    EXPECT_TRUE(p.rec.exited(0)) << p.rec.describe();
    p.report = report_json(out, &p.rep);
    return p;
  }
  RunResult record_with(const Case& c, int threads, const std::string& out) {
    const std::string exe = std::string(TASKLENS_EXAMPLES_DIR) + "/" + c.exe;
    if (!c.tbb) return record(exe, c.args, out, default_env(threads));
    std::vector<std::string> argv = {"/usr/bin/taskset",
                                     "-c",
                                     threads == 1 ? "0" : "0,1",
                                     TASKLENS_BIN,
                                     "record",
                                     "-o",
                                     out,
                                     "--",
                                     exe};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    return run(argv);
  }
};

// The 2-thread prediction from the 1-thread recording against the 2-thread recording's elapsed
// time (both wall times: real timing, judged by the policy). Each sample's closeness is printed.
TEST_P(PredictExamples, TwoThreadPredictionFromOneThreadRecordingWithin15Percent) {
  const Case& c = GetParam();
  int n = 0;
  auto take = [&] {
    ++n;
    return Profiles{profile_with(c, 1, path(c.name + "-1-" + std::to_string(n) + ".tlens")),
                    profile_with(c, 2, path(c.name + "-2-" + std::to_string(n) + ".tlens"))};
  };
  auto close = [&](const Profiles& runs) {
    Violations v;
    json j = predict_json({runs[0].trace, runs[1].trace, "--threads", "1,2,4"});
    if (!j.is_object() || j["predictions"].size() != 3) {
      v.hard = "predict failed\n";
      return v;
    }
    const json& row2 = j["predictions"][1];
    const double predicted = num(row2, "simulated"), measured = num(row2, "measured");
    if (!(measured > 0)) {
      v.hard = "no measured time for 2 threads\n";
      return v;
    }
    const double error = (predicted - measured) / measured;
    // The prediction at 1 from the 1-thread recording (the simulation's own calibration).
    const json& row1 = j["predictions"][0];
    const double calibration =
        (num(row1, "simulated") - num(row1, "measured")) / num(row1, "measured");
    const std::string line = c.name + ": predicted 2-thread time " +
                             std::to_string(predicted / 1e6) + " Mticks, measured " +
                             std::to_string(measured / 1e6) + " Mticks, error " +
                             std::to_string(100 * error) + "% (1-thread calibration " +
                             std::to_string(100 * calibration) + "%)";
    std::printf("[ closeness ] %s\n", line.c_str());
    if (std::fabs(error) > kTolerance)
      v.soft = line + ": more than " + std::to_string(int(kTolerance * 100)) + "% off\n";
    return v;
  };
  const Profiles runs = judge_profiles(c.name + ": the 2-thread prediction from 1 thread", take,
                                       close, Needs::RealTiming);
  ASSERT_EQ(runs.size(), 2u);
  json j = predict_json({runs[0].trace, runs[1].trace, "--threads", "1,2,4"});
  expect_contract(j, 2, {1, 2, 4});
  if (HasFailure()) return;
  EXPECT_GT(num(j, "parallelism"), 2.0) << "the example must have parallelism above 2";
  EXPECT_EQ(j.value("simulated_from", ""), runs[0].trace);
}

class PredictExamplesOneThread : public E2E {};

// Fine-grained programs recorded on one thread (a task per call, ~50-100 ns each): the
// prediction at 1 worker is the recording's own time once tasklens's cost is out of both (the
// work, and the elapsed time `measured` shows), within 15%.
TEST_F(PredictExamplesOneThread, PredictsItsOwnTimeWithin15Percent) {
  for (const auto& [name, args] : std::vector<std::pair<std::string, std::vector<std::string>>>{
           {"fib", {"22"}}, {"nqueens", {"9"}}, {"health", {"4", "100"}}}) {
    SCOPED_TRACE(name);
    auto close = [&, name = name](const Profiles& runs) {
      Violations v;
      json j = predict_json({runs[0].trace, "--threads", "1,2"});
      if (!j.is_object()) {
        v.hard = "predict failed\n";
        return v;
      }
      const json& rec = j["recordings"][0];
      const double elapsed = num(rec, "elapsed"), removed = num(rec, "elapsed_removed");
      const json& row1 = j["predictions"][0];
      const double predicted = num(row1, "simulated"), measured = num(row1, "measured");
      if (!(removed > 0)) v.hard += "tasklens's own cost was not taken out of the elapsed\n";
      if (std::abs(num(rec, "elapsed_program") - (elapsed - removed)) > 1 ||
          std::abs(measured - (elapsed - removed)) > 1)
        v.hard += "measured is not the elapsed time less what was removed\n";
      const double error = (predicted - measured) / measured;
      char line[256];
      std::snprintf(line, sizeof line,
                    "%s: predicted %.3f Mticks, measured %.3f Mticks (%.3f as recorded), error "
                    "%+.1f%%",
                    name.c_str(), predicted / 1e6, measured / 1e6, elapsed / 1e6, 100 * error);
      std::printf("[ closeness ] %s\n", line);
      if (!(std::fabs(error) <= kTolerance)) v.soft = std::string(line) + "\n";
      return v;
    };
    judge_profiles(
        name + ": the 1-worker prediction against its own recording",
        [&, name = name, args = args] {
          return Profiles{profile(example("suite_" + name, "clang"), args, default_env(1))};
        },
        close, Needs::RealTiming);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Examples, PredictExamples,
    ::testing::Values(
        Case{"fib", "fib_clang", {"12", "600"}}, Case{"fib_gcc", "fib_gcc", {"12", "600"}},
        Case{"mergesort", "mergesort_clang", {}},
        Case{"treesum", "treesum_clang", {"14", "1023", "15"}},
        Case{"primes_tasks", "primes_clang", {"tasks"}},
        Case{"tbb_fib", "tbb_fib", {"12", "600"}, true},
        Case{"tbb_mergesort", "tbb_mergesort", {"16384", "128", "3"}, true},
        Case{"tbb_primes_tasks", "tbb_primes_wrapped", {"tasks", "8192", "128"}, true}),
    case_name);

class Predict : public E2E {};

// Three recordings (1, 2 and 4 threads on 2 cores): the extrapolation beside the
// simulation, measured times on the rows of recorded thread counts, the table and the CSV.
// Eight threads per CPU: the workers spend most of the run switched out, which the gaps between
// their strands (the overheads) hold too. predict says so.
TEST_F(Predict, WarnsWhenOversubscriptionInflatedTheOverheads) {
  const std::string t = path("oversubscribed.tlens");
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  RunResult r = record(example("suite_fib", "clang"), {"22"}, t, default_env(int(8 * cpus)));
  ASSERT_TRUE(r.exited(0)) << r.describe();
  RunResult p = run({TASKLENS_BIN, "predict", t});
  ASSERT_TRUE(p.exited(0)) << p.describe();
  EXPECT_NE(p.out.find("switched out for other threads"), std::string::npos) << p.out;
}

TEST_F(Predict, ExtrapolationFromSeveralRecordingsAndFormats) {
  std::vector<std::string> traces;
  for (int t : {1, 2, 4}) {
    traces.push_back(path("fib" + std::to_string(t) + ".tlens"));
    RunResult r = record(example("fib", "clang"), {"10", "300"}, traces.back(), default_env(t));
    ASSERT_TRUE(r.exited(0)) << r.describe();
  }
  std::vector<std::string> args = {traces[2], traces[0], traces[1], "--threads", "8,1,2,4"};
  json j = predict_json(args);
  expect_contract(j, 3, {1, 2, 4, 8});
  if (HasFailure()) return;
  EXPECT_EQ(j.value("simulated_from", ""), traces[0]) << "the fewest threads are simulated";
  EXPECT_TRUE(j["overheads"]["steal"].value("measured", true) == false)
      << "a 1-thread recording measures no steal";
  for (size_t i = 0; i < 4; ++i) {
    const json& row = j["predictions"][i];
    EXPECT_TRUE(row["extrapolated"].is_number()) << row.dump();
    EXPECT_GT(num(row, "extrapolated"), 0);
    EXPECT_EQ(row["measured"].is_number(), i < 3) << row.dump();
  }
  EXPECT_NEAR(num(j["predictions"][0], "speedup"), 1.0, 1e-9);

  RunResult table = predict(args);
  ASSERT_TRUE(table.exited(0)) << table.describe();
  for (const char* want : {"threads", "predicted", "lower bound", "greedy bound", "measured",
                           "extrapolated", "overheads measured"})
    EXPECT_NE(table.out.find(want), std::string::npos) << want << "\n" << table.out;
  EXPECT_TRUE(contains_nocase(table.out, "steal cost not measured"))
      << "the simulated recording has one worker: the table must say the steal cost is assumed\n"
      << table.out;

  args.insert(args.end(), {"--format", "csv"});
  RunResult csv = predict(args);
  ASSERT_TRUE(csv.exited(0)) << csv.describe();
  const auto lines = lines_of(csv.out);
  ASSERT_EQ(lines.size(), 5u) << csv.out;
  EXPECT_EQ(lines[0].rfind("threads,simulated,speedup", 0), 0u) << lines[0];
}

TEST_F(Predict, BadInputGetsOneClearLine) {
  const std::string fib = path("fib.tlens"), fib_b = path("fib_b.tlens"), tree = path("tree.tlens");
  RunResult rec = record(example("fib", "clang"), {"8", "100"}, fib, default_env(1));
  ASSERT_TRUE(rec.exited(0)) << rec.describe();
  rec = record(example("fib", "clang"), {"8", "100"}, fib_b, default_env(1));
  ASSERT_TRUE(rec.exited(0)) << rec.describe();
  rec = record(example("treesum", "clang"), {"6", "7", "10"}, tree, default_env(2));
  ASSERT_TRUE(rec.exited(0)) << rec.describe();

  struct Bad {
    std::vector<std::string> args;
    const char* says;
  };
  write_file(path("junk.tlens"), "not a trace at all");
  const std::vector<Bad> bad = {
      {{fib, "--threads", "0"}, "thread count"},
      {{fib, "--threads", "1,,2"}, "thread count"},
      {{fib, "--threads", "two"}, "thread count"},
      {{fib, "--format", "xml"}, "format"},
      {{fib, fib_b}, "one recording per thread count"},
      {{fib, tree}, "no task type in common"},
      {{path("missing.tlens")}, "missing.tlens"},
  };
  for (const Bad& b : bad) {
    RunResult r = predict(b.args);
    EXPECT_FALSE(r.exited(0)) << r.describe();
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.describe();
    EXPECT_TRUE(contains_nocase(r.err, b.says)) << b.says << "\n" << r.describe();
  }
  RunResult r = predict({path("junk.tlens")});
  EXPECT_TRUE(r.exited(4)) << r.describe();
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.describe();
}

}  // namespace
}  // namespace tasklens::e2e
