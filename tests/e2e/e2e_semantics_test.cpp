// End-to-end tests of the OpenMP semantics the model must get right (src/model/builder.hpp), one
// small analytic program each (examples/sem_*.c, docs/examples.md), for the clang build and the
// gcc build (run under libomp by tasklens). Each test names the fact it checks; the analytic
// values are in units of tl_work() (see e2e_util.hpp), and most cases also give, in the
// program's header, the value a tool with the corresponding mistake would find.
//
// Measured notes on gcc builds under libomp: gcc inlines `masked`/`master` and schedule(static)
// loops (no runtime call, so no event and no site); the sites of single, sections and taskgroup
// inside a parallel region may show the line of the `parallel` (gcc's line table gives the runtime
// call the line of the outlined region's first instruction) and sections show as a loop, so those
// sites are not checked for line numbers with gcc; the work and span do not depend on that.
#include "e2e_util.hpp"

namespace tasklens::e2e {
namespace {

class Semantics : public E2E, public ::testing::WithParamInterface<std::string> {
 protected:
  std::string exe(const std::string& name) const { return example(name, GetParam()); }
  bool gcc() const { return GetParam() == "gcc"; }

  // The one site of `kind` at the marker's line (clang), or, for gcc builds where the runtime
  // does not give construct sites their own line, the only site of `kind` anywhere.
  json site(const json& report, const std::string& file, const std::string& marker,
            const std::string& kind, bool line_known_for_gcc) {
    if (!gcc() || line_known_for_gcc) return expect_site(report, file, marker, kind);
    auto found = sites_of_kind(report, kind);
    if (found.size() != 1) {
      ADD_FAILURE() << "expected one " << kind << " site, found " << found.size() << ":\n"
                    << site_list(report);
      return json();
    }
    return found[0];
  }
};

// The parent's taskwait returns when its child ends, while the grandchild still runs; the
// continuation runs beside the grandchild: S = a + max(L, L2) = 70000, not a + L + L2 = W.
TEST_P(Semantics, TaskwaitDoesNotWaitForGrandchildren) {
  auto p = profile_analytic(exe("sem_taskwait_grandchild"), {}, {110000, 70000});
  expect_report_invariants(p.report);
  for (const char* marker : {"site: tg-child", "site: tg-grandchild"}) {
    json s = expect_site(p.report, "sem_taskwait_grandchild.c", marker, "task");
    if (!s.is_null()) {
      EXPECT_EQ(num(s, "count"), 1) << marker;
    }
  }
}

// A taskgroup waits for its tasks' descendants too: S = max(b, a + L) + L2 = 110000.
TEST_P(Semantics, TaskgroupWaitsForGrandchildren) {
  auto p = profile_analytic(exe("sem_taskgroup"), {}, {140000, 110000});
  expect_report_invariants(p.report);
  json tg = site(p.report, "sem_taskgroup.c", "site: tgroup-taskgroup", "taskgroup", false);
  if (!tg.is_null()) {
    EXPECT_EQ(num(tg, "count"), 1);
  }
}

// An explicit barrier orders the two phases: S = max(x0, x1) + max(y0, y1) = 70000.
// Two threads contending for a critical section: the time each one waits is not work.
TEST_P(Semantics, WaitingForACriticalSectionIsNotWork) {
  auto p = profile_analytic(exe("sem_critical"), {}, {240000, 120000});
  expect_report_invariants(p.report);
}

// Threads the program starts itself (pthread_create) that run OpenMP are children of main's task
// and joined where pthread_join returns; main's time blocked in the join is not work:
// W = a + b + c + 4L = 200000, S = a + max(b, L) + c = 60000.
TEST_P(Semantics, ThreadsTheProgramStartsAreSpawnedAndJoined) {
  auto p = profile_analytic(exe("sem_user_threads"), {}, {200000, 60000});
  expect_report_invariants(p.report);
  json t = expect_site(p.report, "sem_user_threads.c", "site: ut-thread", "thread");
  if (!t.is_null()) {
    EXPECT_EQ(num(t, "count"), 2);
  }
  for (const json& w : p.report["warnings"])
    EXPECT_EQ(w.get<std::string>().find("other than the program's first"), std::string::npos) << w;
}

TEST_P(Semantics, ExplicitBarrierSeparatesPhases) {
  auto p = profile_analytic(exe("sem_barrier"), {}, {90000, 70000});
  expect_report_invariants(p.report);
}

// depend(out/inout/in) chain A -> B -> {C1, C2} -> D beside 4 independent tasks, then P -> Q
// where P has already finished when Q is created: S = 4c + max(t1, p + q) = 100000.
TEST_P(Semantics, DependencesOrderTasksEvenWhenThePredecessorHasFinished) {
  auto p = profile_analytic(exe("sem_depend"), {}, {190000, 100000});
  expect_report_invariants(p.report);
  // The program reports whether the case really happened (libomp runs P at once when the
  // creating thread's task deque is full); without it this is an ordinary dependence.
  EXPECT_NE(p.rec.err.find("P had already finished when Q was created"), std::string::npos)
      << "the finished-predecessor case did not happen in this run: " << p.rec.describe();
  for (const char* marker : {"site: dep-A", "site: dep-B", "site: dep-C1", "site: dep-C2",
                             "site: dep-D", "site: dep-P", "site: dep-Q"}) {
    json s = expect_site(p.report, "sem_depend.c", marker, "task");
    if (!s.is_null()) {
      EXPECT_EQ(num(s, "count"), 1) << marker;
    }
  }
  // The 4 independent tasks come from one pragma in a loop (which the compiler may unroll).
  const int line = marker_line("sem_depend.c", "site: dep-independent");
  double count = 0;
  for (const json& s : sites_at(p.report, "sem_depend.c", line, "task")) count += num(s, "count");
  EXPECT_EQ(count, 4) << "independent tasks at sem_depend.c:" << line << "\n"
                      << site_list(p.report);
}

// Untied tasks that yield (and, with clang's libomp, may resume on another thread) have the
// parallelism of tied ones: W/S = n = 16.
TEST_P(Semantics, UntiedTasksThatYieldKeepTheTiedParallelism) {
  auto p = profile_analytic(exe("sem_untied"), {}, {640000, 40000});
  expect_report_invariants(p.report);
  json t = expect_site(p.report, "sem_untied.c", "site: untied-task", "task");
  if (!t.is_null()) {
    EXPECT_EQ(num(t, "count"), 16);
  }
}

// omp_set_max_active_levels(2): both levels are active (inner teams of 2 threads):
// W = 500000, S = max(a0, a1) + b + c = 160000. Up to 4 threads on 2 cores: wider tolerance.
TEST_P(Semantics, NestedParallelRegionsAreBothActive) {
  Analytic a{500000, 160000};
  a.par_tol = 0.15;
  a.work_over = 0.15;
  auto p = profile_analytic(exe("sem_nested"), {}, a);
  expect_report_invariants(p.report);
  EXPECT_NE(p.rec.out.find("inner teams 2 and 2 threads"), std::string::npos) << p.rec.out;
  json outer = expect_site(p.report, "sem_nested.c", "site: nested-outer", "parallel");
  if (!outer.is_null()) {
    EXPECT_EQ(num(outer, "count"), 1);
  }
  json inner = expect_site(p.report, "sem_nested.c", "site: nested-inner", "parallel");
  if (!inner.is_null()) {
    EXPECT_EQ(num(inner, "count"), 2);
  }
}

// single (s1), masked (m) + barrier, sections {x1, x2, x3}, then r on each thread:
// W = 170000, S = s1 + m + max(x1 + x2, x3) + r = 120000.
TEST_P(Semantics, SingleMaskedSectionsSpanAndSiteWork) {
  const std::string file = "sem_single_masked_sections.c";
  // gcc: masked inlined; single and sections on the parallel's line, see above.
  const std::vector<Check> sites = {
      site_work_check(file, "site: smsec-single", "single", 30000),
      site_work_check(file, "site: smsec-masked", "masked", 20000),
      site_work_check(file, "site: smsec-sections", "sections", 80000)};
  auto site_work = [&](const Profiled& run) {
    Violations v;
    if (!gcc())
      for (const Check& c : sites) {
        const Violations one = c(run);
        v.hard += one.hard;
        v.soft += one.soft;
      }
    return v;
  };
  auto p = profile_analytic(exe("sem_single_masked_sections"), {}, {170000, 120000}, default_env(),
                            0, site_work);
  expect_report_invariants(p.report);
  if (gcc()) return;
  expect_site(p.report, file, "site: smsec-single", "single");
  expect_site(p.report, file, "site: smsec-masked", "masked");
  expect_site(p.report, file, "site: smsec-sections", "sections");
}

// taskloop grainsize(1) over 16 equal iterations: W/S = 16.
TEST_P(Semantics, TaskloopGrainsize1ParallelismIsTheIterationCount) {
  auto p = profile_analytic(exe("sem_taskloop"), {}, {640000, 40000});
  expect_report_invariants(p.report);
  json tl = site(p.report, "sem_taskloop.c", "site: taskloop-taskloop", "taskloop", false);
  if (!tl.is_null()) {
    EXPECT_EQ(num(tl, "count"), 1);
  }
}

// schedule(dynamic, 1) over 32 equal iterations: every chunk is independent, W/S = 32 whatever
// the number of threads (tests/e2e/e2e_loops_test.cpp records every loop form with 1, 2 and 4).
TEST_P(Semantics, DynamicLoopParallelismIs32WithTwoThreads) {
  auto p = profile_analytic(exe("sem_loop_dynamic"), {}, {640000, 20000});
  expect_report_invariants(p.report);
  json loop = expect_site(p.report, "sem_loop_dynamic.c", "site: dyn-loop", "loop");
  if (!loop.is_null()) {
    EXPECT_EQ(num(loop, "count"), 1);
  }
}

// exit(3) inside a parallel region: the status passes through record, stdout too, and the
// trace is reportable with the work done before the exit (8 tasks: W/S = 8).
TEST_P(Semantics, ExitInsideParallelRegionPassesStatusAndTraceIsReportable) {
  RunResult plain = run({exe("sem_exit_in_parallel")});
  EXPECT_TRUE(plain.exited(3)) << plain.describe();
  Analytic a{160000, 20000};
  a.par_tol = 0.15;
  auto p = profile_analytic(exe("sem_exit_in_parallel"), {}, a, default_env(), 3, nullptr,
                            Needs::SpinTiming.incomplete());
  EXPECT_EQ(p.rec.out, plain.out) << "stdout changed by record";
  expect_report_invariants(p.report, /*expect_complete=*/false);
  json t = expect_site(p.report, "sem_exit_in_parallel.c", "site: exit-task", "task");
  if (!t.is_null()) {
    EXPECT_EQ(num(t, "count"), 8);
  }
}

// raise(SIGKILL) after ~0.5 s of task work: record ends like the program (killed by SIGKILL, or
// exit status 128 + 9), and the trace is still reported, with "complete": false.
TEST_P(Semantics, SigkilledProgramIsReportedIncomplete) {
  // What was flushed before the kill: some of the 640000 units (hard), never more (soft: the
  // recording's overhead).
  auto flushed = [](const Profiled& run) {
    Violations v;
    const double work = num(run.report["program"], "work") / kUnitTicks;
    if (!(work > 0)) v.hard = "no work recorded before the kill\n";
    if (work > 1.10 * 640000)
      v.soft = "work " + std::to_string(work) + " units, more than the program's 640000 + 10%\n";
    return v;
  };
  auto p = profile_judged(exe("sem_sigkill"), {}, "the work done before the kill", flushed,
                          default_env(), -SIGKILL, Needs::SpinTiming.incomplete());
  EXPECT_NE(p.rec.out.find("64 tasks done, raising SIGKILL"), std::string::npos)
      << p.rec.describe();
  ASSERT_TRUE(p.report.is_object());
  expect_report_invariants(p.report, /*expect_complete=*/false);
  EXPECT_EQ(p.report.value("complete", true), false)
      << "a killed program's trace must be incomplete";
}

// A program without OpenMP: its output and status pass through, and record says clearly that
// the OpenMP runtime never started; if it wrote a trace, report fails or says so too.
TEST_P(Semantics, ProgramWithoutOpenMPIsReportedClearly) {
  RunResult plain = run({exe("sem_no_openmp")});
  ASSERT_TRUE(plain.exited(0)) << plain.describe();
  const std::string trace = path("no-openmp.tlens");
  RunResult rec = record(exe("sem_no_openmp"), {}, trace);
  EXPECT_FALSE(rec.timed_out || rec.signal != 0) << rec.describe();
  EXPECT_EQ(rec.status(), plain.status()) << rec.describe();
  EXPECT_EQ(rec.out, plain.out) << "stdout changed by record";
  EXPECT_TRUE(contains_nocase(rec.err, "openmp"))
      << "record does not say OpenMP never started: " << rec.describe();
  if (std::filesystem::exists(trace)) {
    RunResult rep = run({TASKLENS_BIN, "report", trace, "--format", "json"});
    EXPECT_TRUE(!rep.exited(0) || contains_nocase(rep.err + rep.out, "openmp"))
        << "report of a trace without OpenMP neither fails nor says why: " << rep.describe();
  }
}

// fork (the child runs its own OpenMP region and exits) and fork + exec /bin/true: the trace is
// the parent's, complete and valid, with only the parent's work: W = 2kw = 320000, S = 80000, and
// 2k = 8 tasks at the task site (the child runs the same code: its tasks would make 12).
TEST_P(Semantics, ForkAndExecCountOnlyTheParentsWork) {
  auto p = profile_analytic(exe("sem_fork_exec"), {}, {320000, 80000});
  expect_report_invariants(p.report);
  EXPECT_NE(p.rec.out.find(": ok"), std::string::npos) << p.rec.describe();
  json t = expect_site(p.report, "sem_fork_exec.c", "site: fork-task", "task");
  if (!t.is_null()) {
    EXPECT_EQ(num(t, "count"), 8);
  }
}

// One row per source construct even when the compiler duplicates it: clang unrolls the loop of 4
// independent task creations in sem_depend.c (4 call sites, one pragma) and inlines region() of
// sem_fork_exec.c at its 2 calls (2 copies of one parallel and one task pragma).
TEST_P(Semantics, ConstructsDuplicatedByTheCompilerAreOneRowPerSite) {
  for (const char* name : {"sem_depend", "sem_fork_exec"}) {
    SCOPED_TRACE(name);
    auto p = profile(exe(name), {});
    expect_one_row_per_site(p.report);
  }
}

// A detached task ends when its event is fulfilled, not when its body ends: the task that depends
// on it waits for the fulfilment, S = max(b1 + b2, max(a, b1) + c) = 80000 (a tool that ended it
// with its body: a + c = 50000), and the fulfilling task's work after the call stays its own
// (W = 100000). Fulfilled after its body ended (the defaults) and while it still runs (a = 40000,
// b1 = 10000). gcc's detach clause cannot run under libomp: `record` refuses the gcc build before
// it runs (exit code 3, no trace) and says why.
TEST_P(Semantics, ADetachedTaskEndsWhenItsEventIsFulfilled) {
  if (gcc()) {
    const std::string out = path("detach.tlens");
    RunResult r = record(exe("sem_detach"), {}, out);
    EXPECT_TRUE(r.exited(3)) << r.describe();
    EXPECT_NE(r.err.find("detach"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("clang"), std::string::npos) << r.err;
    EXPECT_EQ(r.out.find("analytic"), std::string::npos) << "the program ran:\n" << r.out;
    EXPECT_FALSE(std::filesystem::exists(out));
    return;
  }
  auto late = profile_analytic(exe("sem_detach"), {}, {100000, 80000});
  expect_report_invariants(late.report);
  json b = expect_site(late.report, "sem_detach.c", "site: detach-B", "task");
  if (!b.is_null()) {
    EXPECT_NEAR(num(b, "work") / kUnitTicks, 50000, 50000 * 0.1) << b;
  }
  auto early =
      profile_analytic(exe("sem_detach"), {"40000", "10000", "10000", "40000"}, {100000, 80000});
  expect_report_invariants(early.report);
}

INSTANTIATE_TEST_SUITE_P(Compilers, Semantics, ::testing::Values("clang", "gcc"), compiler_name);

}  // namespace
}  // namespace tasklens::e2e
