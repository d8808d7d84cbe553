// The invariance suite: the same program must give the same logical answer however it was
// built and run. Records the programs of examples/suite (docs/examples.md, "The program suite")
// built with clang and gcc, tied and untied, with and without cut-offs, on 1, 2 and 4 threads (4
// oversubscribes the 2-core test machines: on purpose), and checks:
//
//   Counts       the report's `tasks` is exactly the `tasks=` the program printed, and the
//                program's answer (`result=`, `tasks=` and its arguments) is the same for clang
//                and gcc, tied and untied, 1, 2 and 4 threads (test size): exact;
//   Work         program.work of one binary is the same, within a measured band, on 1, 2 and 4
//                threads, and tied against untied (a somewhat larger size: see below);
//   Parallelism  program.parallelism agrees within 15% across repeated recordings and across
//                clang/gcc and tied/untied where the measurement is stable; elsewhere a weaker
//                check that still fails on a gross error (see kStableTolerance);
//   Cutoff       a cut-off variant prints and reports the same count, computes the same result
//                as the uncut program, and its parallelism fits its DAG: with the cut-off at
//                depth 0 a manual or if(0) cut-off is serial (~1), a final one is at most the
//                root's fan-out; at the default depth it never exceeds the uncut variant's by
//                more than noise.
//
// The suite's programs compute for real (no calibrated spins): their work and parallelism are
// timings of real code, judged as real timing by the policy of e2e_timing.hpp (a sample whose
// threads other processes held, or that the machine paused, is recorded again, then
// inconclusive). The bands were measured on 2-core virtual machines, 3 to 5 recordings per
// variant, and are stated beside each check. Task counts and results are exact.
//
// Loops have their own invariance tests: every loop form recorded with 1, 2 and 4 threads gives
// its analytic parallelism (tests/e2e/e2e_loops_test.cpp; bench/loops.sh adds 8).
#include <regex>

#include "e2e_util.hpp"

namespace tasklens::e2e {
namespace {

// ---------------------------------------------------------------------------------------------
// The programs

struct Program {
  std::string label;                 // the test's name
  std::string name;                  // build/examples/suite_<name>[_variant]_<compiler>
  std::vector<std::string> args;     // test size (empty: the program's defaults)
  bool untied = false;               // an _untied build exists
  std::vector<std::string> cutoffs;  // cut-off builds: "cutoff_manual", "cutoff_if", ...
  // Arguments that set the cut-off depth to 0 (the ones before it at their defaults), for the
  // cut-off checks; empty when the program has no cut-off.
  std::vector<std::string> cutoff0_args;
  // Deferred tasks the root call creates (its fan-out): a final cut-off at depth 0 runs at most
  // that many task bodies side by side. 0: not checked (data-dependent fan-out).
  int root_fanout = 0;
  // A somewhat larger size for the work and parallelism checks (runs under 0.2 s recorded): at
  // test size the work of most programs is 0.1-3 ms and one disturbance of the machine (an
  // interrupt, a page fault) moves it by 10-50%.
  std::vector<std::string> medium_args;
  // The tasks are small blocks of a grid whose neighbours other tasks write (depend programs):
  // on 2 threads the blocks move between the cores' caches at every step, and the tasks'
  // real time grows 3-8x against 1 thread (the plain program's region takes 30x as long on 2
  // threads as on 1: jacobi 8 8 200, 2 ms -> 65 ms). The 1-thread comparison of the work then
  // has no meaningful lower bound.
  bool cache_bound = false;
  // The parallelism at medium size agrees within kStableTolerance over recordings and variants.
  // Otherwise (a high parallelism that a single disturbance on the critical path moves: fib,
  // nqueens, knapsack, health) the test checks only a floor and a spread (see Parallelism).
  bool stable_parallelism = false;
  // Lower bound of the parallelism at test size on 2 threads for the unstable ones (the
  // measured minimum over 15 recordings, halved).
  double parallelism_floor = 1;
  // The stable ones' band around the median of the clang tied recordings (0: kStableTolerance).
  double stable_tolerance = 0;
};

const std::vector<Program>& programs() {
  static const std::vector<Program> list = {
      {"fib",
       "fib",
       {},
       true,
       {"cutoff_manual", "cutoff_if", "cutoff_final"},
       {"20", "0"},
       2,
       {"23"},
       false,
       false,
       5.5},
      {"nqueens",
       "nqueens",
       {},
       true,
       {"cutoff_manual", "cutoff_if", "cutoff_final"},
       {"8", "0"},
       8,
       {"9"},
       false,
       false,
       6},
      {"health",
       "health",
       {},
       true,
       {"cutoff_manual", "cutoff_if", "cutoff_final"},
       {"4", "100", "0"},
       0,
       {"5", "100"},
       false,
       false,
       1.5},
      {"uts",
       "uts",
       {},
       true,
       {"cutoff_manual", "cutoff_if", "cutoff_final"},
       {"6", "0", "0"},
       0,
       {"8"},
       false,
       true},
      {"mergesort",
       "mergesort",
       {},
       false,
       {"cutoff_manual"},
       {"20000", "0"},
       0,
       {"100000"},
       false,
       true},
      {"fft", "fft", {}, false, {"cutoff_manual"}, {"12", "0"}, 0, {"14"}, false, true},
      {"strassen",
       "strassen",
       {},
       false,
       {"cutoff_manual"},
       {"128", "16", "0"},
       0,
       {"256"},
       false,
       true},
      {"knapsack",
       "knapsack",
       {},
       false,
       {"cutoff_manual"},
       {"24", "0"},
       0,
       {"24"},
       false,
       false,
       6},
      {"sparselu", "sparselu", {}, true, {}, {}, 0, {"24", "16"}, false, true},
      {"sparselu_for",
       "sparselu",
       {"16", "8", "1"},
       true,
       {},
       {},
       0,
       {"24", "16", "1"},
       false,
       true},
      // alignment's span is the serial check after its parallel region (every 7th pair aligned
      // again) and the single's chain of task creations, whose cost per task moves several
      // times with how much the other thread contends for the creator's queue. Long sequences
      // make each pair (and the check) dearer and leave the chain's cost as it was, so that the
      // check, not the contention, makes most of the span (docs/benchmarks.md, "alignment's
      // parallelism"). The chain still moves it: +-35% still catches a span or a work off by 2x.
      {"alignment", "alignment", {}, true, {}, {}, 0, {"60", "120"}, false, true, 1, 0.35},
      {"alignment_for",
       "alignment",
       {"60", "20", "1"},
       true,
       {},
       {},
       0,
       // Longer sequences than the task variant's: at 120 40 the loop variant's 9 ms run gave
       // 5.9-9.7 from one recording to the next; at 120 80 (30 ms) 8.07-10.8: the same serial
       // check as alignment's.
       {"120", "80", "1"},
       false,
       true,
       1,
       0.35},
      {"jacobi", "jacobi", {}, true, {}, {}, 0, {"16", "8", "40"}, true, true},
      {"cholesky", "cholesky", {}, true, {}, {}, 0, {"16", "16"}, true, true},
  };
  return list;
}

// gtest prints the parameter of a failing test: its name, not its bytes.
void PrintTo(const Program& p, std::ostream* os) { *os << p.label; }

std::string program_name(const ::testing::TestParamInfo<Program>& info) { return info.param.label; }

std::vector<Program> with_cutoffs() {
  std::vector<Program> v;
  for (const Program& p : programs())
    if (!p.cutoffs.empty()) v.push_back(p);
  return v;
}

// The suite's binary of `name`, variant "" (tied, no cut-off), "untied", "cutoff_manual"...
std::string suite_exe(const std::string& name, const std::string& variant,
                      const std::string& compiler) {
  return example("suite_" + name + (variant.empty() ? "" : "_" + variant), compiler);
}

// The one line a suite program prints (examples/suite/suite.h):
//   <name> <args> result=<value> tasks=<N> variant=<tied|untied>/<cutoff> threads=<T> region=...
struct ResultLine {
  bool ok = false;
  std::string what;  // "<name> <args>"
  std::string result;
  uint64_t tasks = 0;
  std::string variant;
  int threads = 0;
  // Everything the program's answer is: the same for every build and thread count.
  std::string answer() const {
    return what + " result=" + result + " tasks=" + std::to_string(tasks);
  }
};

ResultLine parse_line(const std::string& out) {
  static const std::regex re(
      R"(^(.*) result=(\S+) tasks=(\d+) variant=(\S+) threads=(\d+) region=\S+ s$)");
  ResultLine r;
  const auto lines = lines_of(out);
  std::smatch m;
  if (lines.size() != 1 || !std::regex_match(lines[0], m, re)) return r;
  r.ok = true;
  r.what = m[1];
  r.result = m[2];
  r.tasks = std::stoull(m[3]);
  r.variant = m[4];
  r.threads = std::stoi(m[5]);
  return r;
}

std::string fmt(double v, int precision = 3) {
  std::ostringstream s;
  s.precision(precision);
  s << v;
  return s.str();
}

// ---------------------------------------------------------------------------------------------
// Fixture

class Invariance : public E2E, public ::testing::WithParamInterface<Program> {
 protected:
  struct Rec {
    std::string what;  // for messages: "suite_fib_untied_clang 20, 2 threads"
    json report;       // the recording's report (its health, for the timing policy)
    ResultLine line;
    double tasks = NAN;  // the report's
    double work = NAN;   // ticks
    double parallelism = NAN;
  };

  // Records `variant` of the program (compiler, args, threads) and checks what must hold of
  // every recording: the program succeeded and printed its line, the trace is complete, and the
  // report counts exactly the tasks the program printed.
  Rec rec(const std::string& variant, const std::string& compiler,
          const std::vector<std::string>& args, int threads) {
    const Program& p = GetParam();
    const std::string exe = suite_exe(p.name, variant, compiler);
    Rec r;
    r.what = std::filesystem::path(exe).filename().string() + " " + shell_quote_join(args) + ", " +
             std::to_string(threads) + " threads";
    const Profiled profiled = profile(exe, args, default_env(threads));
    r.line = parse_line(profiled.rec.out);
    EXPECT_TRUE(r.line.ok) << r.what << ": no result line: " << profiled.rec.describe();
    r.report = profiled.report;
    if (!profiled.report.is_object()) return r;
    EXPECT_TRUE(profiled.report.value("complete", false)) << r.what << ": trace incomplete";
    // What these checks are about is the DAG and the recorder's measure. The runtime's own cost
    // that the model takes out by default is an estimate whose fit depends on the build's path
    // through the runtime (gcc's GOMP_* entry points, untied tasks, one-thread teams:
    // docs/model.md; gcc's fib came out at twice clang's parallelism with it taken out), so the
    // figures are read with it kept (model_runtime_cost_test and e2e_recorder_test check the
    // estimate).
    const RunResult kept =
        run({TASKLENS_BIN, "report", profiled.trace, "--format", "json", "--keep-runtime-cost"});
    EXPECT_TRUE(kept.exited(0)) << kept.describe();
    if (!kept.exited(0)) return r;
    const json report = json::parse(kept.out);
    EXPECT_EQ(num(report, "runtime_overhead_removed"), 0) << r.what;
    r.tasks = num(report, "tasks");
    r.work = num(report["program"], "work");
    r.parallelism = num(report["program"], "parallelism");
    if (r.line.ok) {
      EXPECT_EQ(r.tasks, static_cast<double>(r.line.tasks))
          << r.what << ": the report's tasks are not the tasks the program created";
      EXPECT_EQ(r.line.threads, threads) << r.what;
    }
    EXPECT_GT(r.work, 0) << r.what;
    EXPECT_GE(r.parallelism, 0.98) << r.what;  // span <= work
    return r;
  }

  // Recordings judged together as real timing by the policy (e2e_timing.hpp): `take` records a
  // sample, `check` compares its figures. Returns the sample judged last.
  using Recs = std::vector<Rec>;
  Recs judge(const std::string& what, const std::function<Recs()>& take,
             const std::function<Violations(const Recs&)>& check) {
    Recs last;
    judge_timing<Recs>(
        GetParam().label + ": " + what, Needs::RealTiming, take, check,
        [](const Recs& recs) {
          std::vector<json> reports;
          for (const Rec& r : recs) reports.push_back(r.report);
          return reports;
        },
        &last);
    return last;
  }
};

// ---------------------------------------------------------------------------------------------
// Counts: exact, and the same for every build and thread count (test size).

class Counts : public Invariance {};

TEST_P(Counts, TasksAndResultAreTheSameForEveryBuildAndThreadCount) {
  const Program& p = GetParam();
  std::vector<Rec> runs;
  runs.push_back(rec("", "clang", p.args, 2));
  runs.push_back(rec("", "gcc", p.args, 2));
  if (p.untied) runs.push_back(rec("untied", "clang", p.args, 2));
  runs.push_back(rec("", "clang", p.args, 1));
  runs.push_back(rec("", "clang", p.args, 4));
  const Rec& ref = runs[0];
  ASSERT_TRUE(ref.line.ok);
  EXPECT_GT(ref.line.tasks, 0u);
  for (const Rec& r : runs) {
    if (!r.line.ok) continue;
    EXPECT_EQ(r.line.answer(), ref.line.answer()) << r.what << " against " << ref.what;
    EXPECT_EQ(r.tasks, ref.tasks) << r.what << " against " << ref.what;
    const bool untied = r.what.find("_untied_") != std::string::npos;
    EXPECT_EQ(r.line.variant, untied ? "untied/none" : "tied/none") << r.what;
  }
}

INSTANTIATE_TEST_SUITE_P(Suite, Counts, ::testing::ValuesIn(programs()), program_name);

// ---------------------------------------------------------------------------------------------
// Work: one binary's work on 1, 2 and 4 threads, tied and untied (medium size).
//
// Work is the tasks' own time (the recorder takes out preemption, blocking, its stalls and its
// cost per event), so it should not depend on the threads; but what a task costs does, for
// reasons that are real and not tasklens's: measured at medium size (3 recordings per thread
// count, clang, tied; ratios to the 2-thread work):
//   - 1 thread: 0.62-0.75 for the programs made of tiny tasks (fib, nqueens, health: a task's
//     runtime overhead is lower when no other thread touches the deques and the task
//     descriptors), 0.87-1.0 for uts, mergesort, fft, strassen, sparselu, cholesky 0.55-0.8, and
//     1.2-1.35 for alignment (its 2-thread run is the faster one); jacobi 0.22-0.33 (cache_bound,
//     above);
//   - 4 threads on 2 cores: 0.8-1.35, jacobi up to 1.75; preemption is taken out, but each
//     preemption still leaves a cold cache and the kernel's switch path inside the task (health
//     at levels 4, 400 steps, whose tasks take 0.2 us, shows 2x in some runs: not used here);
//   - untied against tied: 0.8-1.25 mostly, but untied tasks cost the runtime more: nqueens
//     1.53-1.6, jacobi 1.55-1.85 in some runs of the test, fib at bench size 1.25-1.5;
// The bounds below hold those with a margin, and still catch the gross errors: a task's work
// counted twice or idle/waiting time counted as work (>= 2x on the 2-thread run against the
// 1-thread one), work lost (a factor below 0.5). Jacobi's 1-thread work is 0.09-0.33 of its
// 2-thread work: its lower bound is 0.05.
struct Bounds {
  double lo, hi;
};
constexpr Bounds kOneThread{0.5, 1.6};             // work(1 thread) / work(2 threads)
constexpr Bounds kOneThreadCacheBound{0.05, 1.6};  // the same, cache_bound programs
// The same for the programs of tiny tasks (those without stable_parallelism: fib, nqueens,
// knapsack, health). Since the recorder's cost per event is measured during the run (about
// twice the start-up figure) and taken out of both, the ratio is lower: measured at the test's
// sizes, fib 0.42-0.47 in some runs (2-thread work 8.3-9.5 ms against 3.9 ms), health down to
// 0.29 (4.1 against 1.2 ms): on 2 threads a task of 0.1-0.3 us costs 2-3x as much, its
// deque and descriptor shared with the other thread. Lost work would still show: a factor of
// 0.1 or less.
constexpr Bounds kOneThreadTiny{0.2, 1.6};
constexpr Bounds kFourThreads{0.6, 1.9};  // work(4 threads) / work(2 threads)
constexpr Bounds kFourThreadsCacheBound{0.6, 2.2};
constexpr Bounds kUntied{0.6, 1.9};  // work(untied) / work(tied), 2 threads

class Work : public Invariance {
 protected:
  // work(a) / work(b) within `bounds`, judged by the policy.
  void expect_ratio(const std::function<Rec()>& a, const std::function<Rec()>& b, Bounds bounds,
                    const std::string& what) {
    judge(
        what,
        [&] {
          return Recs{a(), b()};
        },
        [&](const Recs& r) {
          Violations v;
          const double ratio = r[0].work / r[1].work;
          if (!(ratio >= bounds.lo && ratio <= bounds.hi)) {
            std::ostringstream m;
            m << what << ": work " << fmt(r[0].work / tsc_ticks_per_second() * 1e3) << " ms ("
              << r[0].what << ") / " << fmt(r[1].work / tsc_ticks_per_second() * 1e3) << " ms ("
              << r[1].what << ") = " << fmt(ratio) << ", not within [" << bounds.lo << ", "
              << bounds.hi << "]\n";
            v.soft = m.str();
          }
          return v;
        });
  }
};

TEST_P(Work, OneThreadAgainstTwo) {
  const Program& p = GetParam();
  expect_ratio([&] { return rec("", "clang", p.medium_args, 1); },
               [&] { return rec("", "clang", p.medium_args, 2); },
               p.cache_bound           ? kOneThreadCacheBound
               : !p.stable_parallelism ? kOneThreadTiny
                                       : kOneThread,
               "1 against 2 threads");
}

TEST_P(Work, FourThreadsOnTwoCoresAgainstTwo) {
  const Program& p = GetParam();
  expect_ratio([&] { return rec("", "clang", p.medium_args, 4); },
               [&] { return rec("", "clang", p.medium_args, 2); },
               p.cache_bound ? kFourThreadsCacheBound : kFourThreads, "4 against 2 threads");
}

class UntiedWork : public Work {};

TEST_P(UntiedWork, UntiedAgainstTied) {
  const Program& p = GetParam();
  expect_ratio([&] { return rec("untied", "clang", p.medium_args, 2); },
               [&] { return rec("", "clang", p.medium_args, 2); }, kUntied, "untied against tied");
}

std::vector<Program> with_untied() {
  std::vector<Program> v;
  for (const Program& p : programs())
    if (p.untied) v.push_back(p);
  return v;
}

INSTANTIATE_TEST_SUITE_P(Suite, Work, ::testing::ValuesIn(programs()), program_name);
INSTANTIATE_TEST_SUITE_P(Suite, UntiedWork, ::testing::ValuesIn(with_untied()), program_name);

// ---------------------------------------------------------------------------------------------
// Parallelism: the same DAG gives the same parallelism (2 threads).
//
// Stable programs (medium size): 3 clang tied recordings, then gcc tied and clang untied; each
// within kStableTolerance (or the program's own stable_tolerance) of the median of the 3 (gcc:
// kCompilerTolerance). Measured spread at medium size, 3 recordings per variant on a loaded
// machine: uts 5.8-7.1, mergesort 9.7-10.1, fft 1.7, strassen 4.1-4.9, sparselu 1.8-1.9, jacobi
// 1.1, cholesky 1.4: within +-12% of the median; alignment (see its entry). The five
// recordings are one sample for the timing policy.
//
// The others (fib, nqueens, knapsack, health) have a parallelism of 5-70 at sizes that record in
// under 0.5 s: their span is a few tens of microseconds, half of it the serial code after the
// parallel region, and one disturbance there or on a task's path (an interrupt, a page fault, a
// short preemption not removed) moves it by 20-50%: fib at n=23 gave 27-67 over 9 recordings,
// nqueens 8 16-37 over 18 (clang, gcc, untied), and one nqueens recording 7.5 against 27 for
// another. One recording is a sample of a distribution: the
// check records each variant (clang tied, gcc tied, clang untied) 3 times and compares the
// medians of gcc and untied with clang tied's, within a factor of kUnstableSpread (measured
// nqueens: clang 18.1-19.3, gcc 27-31.9, untied 15.9-18.7: gcc's tasks go through libomp's GOMP_*
// entry points, whose extra spawn cost lands in the parents' strands, so its work is larger).
// Every single recording stays above parallelism_floor (half the measured minimum; a span
// counted as the whole work gives 1).
constexpr double kStableTolerance = 0.15;
// gcc against clang: the same DAG, but not the same code in the tasks and in the serial parts
// (the merge of mergesort, the serial set-up and check on the critical path), so the weights
// differ: measured mergesort gcc 11.5-15.4 against clang 8.7-10.6 (a ratio up to 1.51 to the
// clang median, in 8 recordings each), the others within 10%. A ratio within
// [1/2, 2] still catches a span or a work off by more than a factor of 2 (a lost dependence
// or a task counted twice moves it far more).
constexpr double kCompilerTolerance = 1.0;
// Untied against tied, clang: the same DAG, but in some runs every untied recording of a run
// came out apart from the tied ones, retries included: uts 6.3 and 6.4
// against 4.84-4.97 (1.30x), alignment 4.39 and 4.45 against 6.16-6.25 (0.72x), alignment_for
// 9.7 against 8.2 (1.18x); in the other runs within 15%. Not explained yet: until it is, a
// ratio within [1/1.5, 1.5], which still catches a factor-of-2 error.
constexpr double kUntiedTolerance = 0.5;
constexpr double kUnstableSpread = 2.0;
constexpr int kUnstableRecordings = 3;

class Parallelism : public Invariance {};

TEST_P(Parallelism, SameDagSameParallelism) {
  const Program& p = GetParam();
  const auto& args = p.stable_parallelism ? p.medium_args : p.args;
  // The variants: clang tied (the reference), gcc tied, clang untied.
  std::vector<std::function<Rec()>> variants = {[&] { return rec("", "clang", args, 2); },
                                                [&] { return rec("", "gcc", args, 2); }};
  if (p.untied) variants.push_back([&] { return rec("untied", "clang", args, 2); });
  auto median_of = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  };

  if (p.stable_parallelism) {
    // A sample: 3 clang tied recordings, then one of each other variant; each within its
    // tolerance of the clang recordings' median.
    const double stable = p.stable_tolerance > 0 ? p.stable_tolerance : kStableTolerance;
    auto take = [&] {
      Recs r;
      for (int i = 0; i < 3; ++i) r.push_back(variants[0]());
      for (size_t v = 1; v < variants.size(); ++v) r.push_back(variants[v]());
      return r;
    };
    auto agree = [&](const Recs& r) {
      Violations v;
      const double median = median_of({r[0].parallelism, r[1].parallelism, r[2].parallelism});
      if (!(median > 0)) {
        v.hard = "no parallelism\n";
        return v;
      }
      for (size_t i = 0; i < r.size(); ++i) {
        const double ratio = r[i].parallelism / median;
        // gcc and untied: a factor both ways ([1/2, 2] for a tolerance of 1); clang: +-tolerance.
        const double tol = i < 3 ? stable : i == 3 ? kCompilerTolerance : kUntiedTolerance;
        const bool within =
            i < 3 ? std::abs(ratio - 1) <= tol : ratio <= 1 + tol && ratio >= 1 / (1 + tol);
        if (!within)
          v.soft += r[i].what + ": parallelism " + fmt(r[i].parallelism) + " is not within " +
                    fmt(100 * tol) + "% of the median " + fmt(median) +
                    " of the clang tied recordings " + fmt(r[0].parallelism) + ", " +
                    fmt(r[1].parallelism) + ", " + fmt(r[2].parallelism) + "\n";
      }
      return v;
    };
    judge("the parallelism of every build", take, agree);
    return;
  }
  // The others: kUnstableRecordings of each variant; their medians compared with clang tied's,
  // and every variant's median above the floor.
  auto take = [&] {
    Recs r;
    for (auto& variant : variants)
      for (int k = 0; k < kUnstableRecordings; ++k) r.push_back(variant());
    return r;
  };
  auto agree = [&](const Recs& r) {
    Violations v;
    std::vector<double> medians;
    std::string seen;
    for (size_t i = 0; i < variants.size(); ++i) {
      std::vector<double> samples;
      for (int k = 0; k < kUnstableRecordings; ++k)
        samples.push_back(r[i * kUnstableRecordings + k].parallelism);
      medians.push_back(median_of(samples));
      seen += (seen.empty() ? "" : "; ") + r[i * kUnstableRecordings].what + ": median " +
              fmt(medians.back()) + " of";
      for (double x : samples) seen += " " + fmt(x);
    }
    for (size_t i = 0; i < medians.size(); ++i) {
      // The floor holds for each variant's median: a span counted as the whole work gives 1.
      if (!(medians[i] >= p.parallelism_floor))
        v.soft += "a median below the floor " + fmt(p.parallelism_floor) + "\n";
      const double ratio = medians[i] / medians[0];
      if (i > 0 && !(ratio <= kUnstableSpread && ratio >= 1 / kUnstableSpread))
        v.soft += "a median not within a factor of " + fmt(kUnstableSpread) +
                  " of the clang tied recordings' median\n";
    }
    if (!v.soft.empty()) v.soft += seen + "\n";
    return v;
  };
  judge("the median parallelism of every build", take, agree);
}

INSTANTIATE_TEST_SUITE_P(Suite, Parallelism, ::testing::ValuesIn(programs()), program_name);

// ---------------------------------------------------------------------------------------------
// Cut-offs (test size, 2 threads, clang).

class Cutoff : public Invariance {};

TEST_P(Cutoff, CountsResultsAndParallelismFitTheDag) {
  const Program& p = GetParam();
  for (const std::string& v : p.cutoffs) {
    SCOPED_TRACE(v);
    // A sample: the uncut program twice (the reference answer and parallelism), the cut-off
    // variant at its default depth and at depth 0 (the other arguments at their defaults, like
    // the uncut run's: the root call's children are already cut).
    auto take = [&] {
      return Recs{rec("", "clang", p.args, 2), rec("", "clang", p.args, 2),
                  rec(v, "clang", p.args, 2), rec(v, "clang", p.cutoff0_args, 2)};
    };
    auto fits = [&](const Recs& r) {
      Violations x;
      const Rec &uncut = r[0], &cut = r[2], &cut0 = r[3];
      const double uncut_par = std::max(r[0].parallelism, r[1].parallelism);
      // Exact: the same result; fewer tasks (manual: the same at most, strassen's cut-off depth
      // at test size is the leaves') or the same tasks (if, final: undeferred and included
      // tasks are still tasks); no task at all at depth 0 (manual).
      std::ostringstream hard;
      if (uncut.line.ok && cut.line.ok) {
        if (cut.line.result != uncut.line.result) hard << cut.what << ": another result\n";
        if (v == "cutoff_manual" ? cut.line.tasks > uncut.line.tasks
                                 : cut.line.tasks != uncut.line.tasks)
          hard << cut.what << ": " << cut.line.tasks << " tasks against " << uncut.line.tasks
               << "\n";
      }
      if (uncut.line.ok && cut0.line.ok) {
        if (cut0.line.result != uncut.line.result) hard << cut0.what << ": another result\n";
        if (v == "cutoff_manual" ? cut0.line.tasks != 0 : cut0.line.tasks != uncut.line.tasks)
          hard << cut0.what << ": " << cut0.line.tasks << " tasks\n";
      }
      x.hard = hard.str();
      // Coarser tasks, so no more parallelism than the uncut program beyond noise (1.5: the
      // uncut figure of fib, nqueens, knapsack varies by that much, see Parallelism).
      std::ostringstream soft;
      if (!(cut.parallelism <= 1.5 * uncut_par))
        soft << cut.what << ": parallelism " << cut.parallelism << ", more than the uncut one's "
             << r[0].parallelism << ", " << r[1].parallelism << "\n";
      if (v == "cutoff_manual" || v == "cutoff_if") {
        // No task (manual) or only undeferred ones (if(0)): a serial chain. Measured 1.00-1.05.
        if (!(cut0.parallelism <= 1.15))
          soft << cut0.what << ": parallelism " << cut0.parallelism << " for a serial program\n";
      } else if (p.root_fanout > 0 && !(cut0.parallelism <= p.root_fanout * 1.15)) {
        // final: the root's children are deferred (final) tasks, everything below them
        // included: at most root_fanout bodies side by side. Measured fib 1.92, nqueens 5.4.
        soft << cut0.what << ": parallelism " << cut0.parallelism << ", more than the root's "
             << p.root_fanout << " final tasks\n";
      }
      x.soft = soft.str();
      return x;
    };
    judge(v + ": counts, results and parallelism", take, fits);
  }
}

INSTANTIATE_TEST_SUITE_P(Suite, Cutoff, ::testing::ValuesIn(with_cutoffs()), program_name);

}  // namespace
}  // namespace tasklens::e2e
