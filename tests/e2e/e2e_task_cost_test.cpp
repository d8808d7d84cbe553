// The tasking overhead tasklens uses (the report's `task_cost`, measured by `record` on the
// calibration program's empty tasks without the recorder) against what a task costs the program
// itself: its 1-thread run's time over its serial elision's (the same source built without
// -fopenmp: suite_<name>_serial_clang), per task. Two shapes of tiny tasks: fib (two tasks per
// call, joined by a taskwait) and n-queens (a task per square tried, a board copied into each).
// The figures on the four suite shapes: docs/benchmarks.md (`bench/task_cost.sh`).
#include <regex>

#include "e2e_util.hpp"

namespace tasklens::e2e {
namespace {

struct Shape {
  std::string name;
  std::vector<std::string> args;
};

std::string shape_name(const ::testing::TestParamInfo<Shape>& info) { return info.param.name; }
// How gtest prints a shape (ctest's test names): its name, not its bytes.
void PrintTo(const Shape& shape, std::ostream* os) { *os << shape.name; }

// The region time and the task count a suite program prints (suite.h: "... tasks=N ...
// region=S s"); tasks 0 when the line is missing.
struct Region {
  double seconds = 0;
  uint64_t tasks = 0;
};
Region region_of(const std::string& out) {
  static const std::regex line(R"(tasks=(\d+) variant=\S+ threads=\d+ region=(\S+) s)");
  std::smatch m;
  Region r;
  if (std::regex_search(out, m, line)) {
    r.tasks = std::stoull(m[1]);
    r.seconds = std::stod(m[2]);
  }
  return r;
}

class TaskCost : public E2E, public ::testing::WithParamInterface<Shape> {};

// Within 30%: every burdened parallelism and cut-off is built on this figure.
constexpr double kBand = 0.30;
// Runs of each build per sample, interleaved; the least region time of each counts (a pause of
// the machine only lengthens a run).
constexpr int kRuns = 7;

TEST_P(TaskCost, IsWhatATaskCostsTheProgramOverItsSerialElision) {
  const Shape& shape = GetParam();
  // The program's own 1-thread run under the runtime tasklens records with (its calibration's).
  EnvOverrides one = default_env(1);
  const std::string runtime =
      std::string(TASKLENS_SOURCE_DIR) + "/third_party/libomp16/libomp.so.5";
  if (std::filesystem::exists(runtime)) one["LD_PRELOAD"] = runtime;
  EnvOverrides fresh = default_env(1);
  fresh["TASKLENS_CACHE_DIR"] = path("cache");  // the user's cache stays as it was

  double real_ns = 0;
  std::string figures;
  auto take = [&] {
    // --recalibrate: every sample measures the task cost again.
    Profiles runs{
        profile(example("suite_" + shape.name, "clang"), shape.args, fresh, 0, {"--recalibrate"})};
    double plain = 1e300, serial = 1e300;
    uint64_t tasks = 0;
    figures.clear();
    for (int i = 0; i < kRuns; ++i) {
      const RunResult s = run(
          [&] {
            std::vector<std::string> argv{example("suite_" + shape.name + "_serial", "clang")};
            argv.insert(argv.end(), shape.args.begin(), shape.args.end());
            return argv;
          }(),
          default_env(1));
      std::vector<std::string> argv{example("suite_" + shape.name, "clang")};
      argv.insert(argv.end(), shape.args.begin(), shape.args.end());
      const RunResult p = run(argv, one);
      const Region rs = region_of(s.out), rp = region_of(p.out);
      if (!s.exited(0) || !p.exited(0) || rs.tasks == 0 || rs.tasks != rp.tasks) {
        figures = "a run failed or the builds disagree on the tasks:\n" + s.describe() + "\n" +
                  p.describe() + "\n";
        real_ns = 0;
        return runs;
      }
      tasks = rp.tasks;
      serial = std::min(serial, rs.seconds);
      plain = std::min(plain, rp.seconds);
    }
    real_ns = (plain - serial) / double(tasks) * 1e9;
    std::ostringstream f;
    f << shape.name << ": 1 thread " << plain * 1e3 << " ms, serial elision " << serial * 1e3
      << " ms (least of " << kRuns << " each), " << tasks << " tasks: " << real_ns
      << " ns per task\n";
    figures = f.str();
    return runs;
  };
  auto check = [&](const Profiles& runs) {
    Violations v;
    const json& j = runs[0].report;
    if (!j.is_object() || !j.contains("task_cost") || !j["task_cost"].is_number()) {
      v.hard = "no task_cost in the report: " + (j.is_object() ? j.dump().substr(0, 400) : "") +
               "\n" + runs[0].rec.err;
      return v;
    }
    if (!(real_ns > 0)) {
      v.hard = figures;
      return v;
    }
    const double measured_ns = num(j, "task_cost") / num(j, "ticks_per_second") * 1e9;
    std::cerr << "[ e2e      ] " << figures << "  tasklens: " << measured_ns << " ns per task\n";
    if (!(measured_ns >= real_ns * (1 - kBand) && measured_ns <= real_ns * (1 + kBand)))
      v.soft = "tasklens's task cost " + std::to_string(measured_ns) +
               " ns is not within 30% of the program's own " + figures;
    return v;
  };
  // The figures judged come from the calibration's runs and the program's own, not from the
  // recording's strands: its preemption inside strands (Needs::RealTiming's test) says nothing
  // of them. The recording's whole-run health (steal, other processes) still does.
  judge_profiles(shape.name + ": the task cost against the serial elision", take, check,
                 Needs::SpinTiming);
}

INSTANTIATE_TEST_SUITE_P(Shapes, TaskCost,
                         ::testing::Values(Shape{"fib", {"25"}}, Shape{"nqueens", {"10"}}),
                         shape_name);

}  // namespace
}  // namespace tasklens::e2e
