// report/diagnosis_report.hpp: the wording of each kind of finding from hand-made findings of
// analysis/diagnosis.hpp, the table's lines and the JSON list, advise's notes on steps through a
// region entered too often, and the serial code's fragments named.
#include "report/diagnosis_report.hpp"

#include <gtest/gtest.h>

#include "analysis/profile.hpp"
#include "model_fixtures.hpp"
#include "report/cutoff_report.hpp"

namespace tasklens {
namespace {

using analysis::DiagnosisFinding;
using fixtures::ModelBuilder;
using model::SiteKind;
using report::DiagnosisItem;

// Sites a.c:12 (task, in main), a.c:20 (loop, in work), a.c:30 (parallel); 1 tick = 1 ns.
// Fragment groups: 1 "a.c:3-9" in main, 2 "start-a.c:40-end".
struct Names {
  model::Model m;
  std::vector<report::SiteLabel> sites;
  report::FragmentLabels fragments;
  report::SpanAccount account;
  analysis::Diff base;
  Names() {
    ModelBuilder b;
    b.add_site(SiteKind::Task);
    b.add_site(SiteKind::Loop);
    b.add_site(SiteKind::Parallel);
    b.strand(1000);
    m = b.finish();
    m.ticks_per_second = 1e9;
    sites = {{"<program>", "", 0, "(outside any construct)", false, ""},
             {"a.c:12", "/src/a.c", 12, "main", false, ""},
             {"a.c:20", "/src/a.c", 20, "work", false, ""},
             {"a.c:30", "/src/a.c", 30, "", false, ""}};
    fragments.group_of = {0, 1, 2};
    fragments.label = {"<unknown>", "a.c:3-9", "start-a.c:40-end"};
    fragments.function = {"", "main", ""};
    fragments.begin_file = {"", "/src/a.c", "/src/a.c"};
    account.fragments = {"a.c:50-end", "a.c:3-9"};
    base.sites.resize(2);
    base.sites[1].name = "a.c:20";
  }
  report::DiagnosisNames names() const {
    return {.sites = &sites, .fragments = &fragments, .account = &account, .base = &base};
  }
  DiagnosisItem say(analysis::FindingFigures figures) const {
    return report::diagnosis_item(m, DiagnosisFinding{0.5, std::move(figures)}, names());
  }
};

TEST(DiagnosisReport, EveryKindHasItsJsonName) {
  using K = analysis::DiagnosisKind;
  const std::vector<std::pair<K, std::string>> names = {{K::SerialCode, "serial-code"},
                                                        {K::TinyTasks, "tiny-tasks"},
                                                        {K::FewTasks, "few-tasks"},
                                                        {K::UnevenShares, "uneven-shares"},
                                                        {K::TeamBound, "team-bound"},
                                                        {K::RegionEntries, "region-entries"},
                                                        {K::WorkInflation, "work-inflation"},
                                                        {K::WhatIfGain, "whatif-gain"},
                                                        {K::LowParallelism, "low-parallelism"},
                                                        {K::Untrustworthy, "untrustworthy"},
                                                        {K::CreationBound, "creation-bound"}};
  for (const auto& [kind, name] : names) EXPECT_EQ(analysis::to_string(kind), name);
  const Names n;
  EXPECT_EQ(n.say(analysis::FewTasks{}).kind, "few-tasks");
  EXPECT_EQ(n.say(analysis::Untrustworthy{}).kind, "untrustworthy");
}

TEST(DiagnosisReport, SerialCodeNamesItsFragmentAndTheParallelismWithoutIt) {
  const Names n;
  analysis::SerialCode f{.group = 1,
                         .serial = 600,
                         .group_critical = 500,
                         .span = 700,
                         .parallelism = 1000.0 / 700,
                         .parallelism_without = 4};
  DiagnosisItem d = n.say(f);
  EXPECT_EQ(d.kind, "serial-code");
  EXPECT_EQ(d.finding, "serial code outside any parallel construct is 86% of the critical path");
  EXPECT_EQ(d.evidence,
            "a.c:3-9 in main takes 500 ns of the 700 ns critical path; without it the "
            "parallelism would be 4.00 (now 1.43)");
  EXPECT_EQ(d.location, "a.c:3-9");
  EXPECT_EQ(d.advice,
            "run that code in parallel (tasks or a parallel loop) or beside the parallel work; "
            "`tasklens whatif --fragment a.c:3-9` shows the gain factor by factor");
  // A fragment from the program's start to its end is located at its line.
  f.group = 2;
  d = n.say(f);
  EXPECT_EQ(d.location, "a.c:40");
  EXPECT_EQ(d.evidence.rfind("start-a.c:40-end takes 500 ns", 0), 0u) << d.evidence;
}

TEST(DiagnosisReport, TinyTasksSayTheirSizesTheWorkersDelayAndWhatToWrite) {
  const Names n;
  analysis::TinyTasks f;
  f.sites = {1, 2};
  f.largest_site = 2;
  f.median = 1500;
  f.count = 32;
  f.tiny = 27;
  f.tiny_size = 1040;  // what tiny meant: 20 x a measured task cost of 52 ns
  f.delay_source = analysis::DelaySource::Schedule;
  f.delay = 0.2;
  f.advice = analysis::TinyAdvice::LargerTasks;
  DiagnosisItem d = n.say(f);
  EXPECT_EQ(d.finding, "the tasks at a.c:12, a.c:20 are too small to pay for themselves");
  EXPECT_EQ(d.evidence,
            "27 of 32 (84%) take under 1.040 us, median 1.500 us; the workers spent 20% of their "
            "time between tasks with work ready (the runtime's overhead)");
  EXPECT_EQ(d.location, "a.c:20");
  EXPECT_EQ(d.advice,
            "make each task do more: create fewer, larger tasks (several items per task, or an "
            "if() clause that runs the small ones at once), so that each does 10 us of work or "
            "more");

  f.chunks = true;
  f.sites = {2};
  f.delay_source = analysis::DelaySource::Capacity;
  f.delay = 0.25;
  f.advice = analysis::TinyAdvice::LargerChunks;
  d = n.say(f);
  EXPECT_EQ(d.finding, "the loop chunks at a.c:20 are too small to pay for themselves");
  EXPECT_EQ(
      d.evidence,
      "27 of 32 (84%) take under 1.040 us, median 1.500 us; the workers ran the program's code "
      "only 75% of the time");
  EXPECT_EQ(d.advice,
            "give the loop larger chunks (schedule(dynamic, N) with N iterations worth 10 us or "
            "more)");

  f.delay_source = analysis::DelaySource::Unknown;
  EXPECT_EQ(n.say(f).evidence, "27 of 32 (84%) take under 1.040 us, median 1.500 us");
}

// A recursion's tiny tasks: the cut-off's sentence (report/cutoff_report.hpp), then where to see
// the depths around it.
TEST(DiagnosisReport, TinyTasksOfARecursionAreGivenItsCutoff) {
  uint32_t site = 0;
  const model::Model m = fixtures::fib_model(12, &site);
  const std::vector<report::SiteLabel> sites = {{"<program>", "", 0, "", false, ""},
                                                {"fib.c:19", "/src/fib.c", 19, "fib", false, ""}};
  const auto recursions = analysis::find_recursions(m);
  ASSERT_EQ(recursions.size(), 1u);
  analysis::TinyTasks f;
  f.sites = {site};
  f.largest_site = site;
  f.advice = analysis::TinyAdvice::Cutoff;
  f.cutoff = analysis::advise_cutoff(m, recursions[0], 16, 0, 0);
  const DiagnosisItem d = report::diagnosis_item(m, DiagnosisFinding{0.5, f}, {.sites = &sites});
  EXPECT_EQ(d.advice, report::cutoff_sentence(m, f.cutoff, sites) +
                          "; `tasklens advise` shows the depths around it");
  EXPECT_EQ(d.location, "fib.c:19");
}

TEST(DiagnosisReport, FewTasksSayWhetherTheyAreFewOrOneDominates) {
  const Names n;
  analysis::FewTasks f{.site = 1, .count = 3, .max = 400, .total = 900, .workers = 2};
  f.few = true;
  DiagnosisItem d = n.say(f);
  EXPECT_EQ(d.finding, "too few tasks at a.c:12 to keep 2 workers busy");
  EXPECT_EQ(d.evidence, "3 tasks, largest 400 ns of 900 ns in all");
  EXPECT_EQ(d.location, "a.c:12");
  EXPECT_EQ(d.advice,
            "create more, smaller tasks there (split the largest), so that every worker has "
            "several");
  f.few = false;
  f.dominant = true;
  EXPECT_EQ(n.say(f).finding, "one of the tasks at a.c:12 is larger than a worker's share");
}

TEST(DiagnosisReport, LoopFindingsNameTheLoopAndTheRegion) {
  const Names n;
  DiagnosisItem d = n.say(analysis::UnevenShares{.site = 2, .imbalance = 1.0 / 3});
  EXPECT_EQ(d.kind, "uneven-shares");
  EXPECT_EQ(d.finding, "the threads' static shares of the loop at a.c:20 are uneven");
  EXPECT_EQ(d.evidence,
            "the slowest share took 33% longer than the average one, and the rest of the team "
            "waited for it");
  EXPECT_EQ(d.location, "a.c:20");
  EXPECT_EQ(d.advice,
            "give the loop schedule(dynamic) or schedule(guided) (or smaller static chunks), so "
            "that threads that finish early take more iterations");

  d = n.say(analysis::TeamBound{
      .site = 3, .team_bound_work = 1000, .work = 9000, .parallelism = 2, .team = 2});
  EXPECT_EQ(d.kind, "team-bound");
  EXPECT_EQ(d.finding, "the parallel region at a.c:30 splits its work by the team itself");
  EXPECT_EQ(d.evidence,
            "11% of its work ran as one stretch per thread, with no construct the runtime "
            "reports (a loop gcc compiled with a static schedule, or code using "
            "omp_get_thread_num()): its parallelism, 2.00, is the 2 threads it was recorded "
            "with");
  EXPECT_EQ(d.location, "a.c:30");
  EXPECT_EQ(d.advice,
            "record the clang build, or with more threads than cores (OMP_NUM_THREADS=16), to "
            "see how far it scales");
}

TEST(DiagnosisReport, RegionEntriesSayTheEntriesAndTheirCost) {
  const Names n;
  const DiagnosisItem d = n.say(analysis::RegionEntries{
      .site = 3, .entries = 2000, .per_entry = 1500, .critical_percent = 37.4});
  EXPECT_EQ(d.finding,
            "the parallel region at a.c:30 is entered 2000 times, and each entry costs the "
            "critical path 1.500 us");
  EXPECT_EQ(d.evidence,
            "its own strands (starting and ending the team, and the code around the constructs "
            "inside it) hold 37% of the critical path");
  EXPECT_EQ(d.location, "a.c:30");
  EXPECT_EQ(d.advice,
            "create the team once: put one `#pragma omp parallel` around the loop that enters it "
            "again and again, with `#pragma omp for` inside (the serial code between its loops "
            "in `single` or `masked`), or fuse adjacent parallel loops into one region");
}

TEST(DiagnosisReport, WorkInflationNamesDiffsUnit) {
  const Names n;
  analysis::WorkInflation f{.unit = 1,
                            .ratio = 3.04,
                            .inflation = 2000000,
                            .cost_percent = 40.4,
                            .base_threads = 1,
                            .other_threads = 2};
  DiagnosisItem d = n.say(f);
  EXPECT_EQ(d.finding,
            "the work at a.c:20 grows 3.0x from the base recording (1 thread) to this one (2)");
  EXPECT_EQ(d.evidence,
            "2.000 ms more work there; the critical path would be 40% shorter if it did the "
            "base's work");
  EXPECT_EQ(d.location, "a.c:20");
  EXPECT_EQ(d.advice,
            "look there for contention, false sharing or lost locality; `tasklens diff` of the "
            "two recordings compares them unit by unit");
  f.base_threads = 2;
  f.inflation = -5;
  d = n.say(f);
  EXPECT_EQ(d.finding,
            "the work at a.c:20 grows 3.0x from the base recording (2 threads) to this one (2)");
  EXPECT_EQ(d.evidence.rfind("0 ns more work there", 0), 0u) << d.evidence;
}

TEST(DiagnosisReport, WhatIfGainSaysTheSplitAndTheParallelismBeforeAndAfter) {
  const Names n;
  const DiagnosisItem d = n.say(analysis::WhatIfGain{.site = 1,
                                                     .site_kind = SiteKind::Task,
                                                     .critical_percent = 62.4,
                                                     .before = 1.62,
                                                     .after = 3.56});
  EXPECT_EQ(d.finding,
            "splitting the task at a.c:12 8 ways would raise the parallelism from 1.62 to 3.56");
  EXPECT_EQ(d.evidence, "it holds 62% of the critical path (`tasklens whatif --site a.c:12`)");
  EXPECT_EQ(d.location, "a.c:12");
  EXPECT_EQ(d.advice,
            "break its work into smaller parallel pieces (more tasks, a finer loop, a parallel "
            "algorithm inside it)");
}

// The creator's rate and its tasks' size, the threads they can keep busy, the runtime's own
// creation cost beside the time per creation when measured, and the task size the target needs:
// (16 - 1) x 4.6 us. With `depend`, creating from several threads is not offered.
TEST(DiagnosisReport, CreationBoundSaysTheRateTheTaskSizeAndWhatTheTargetNeeds) {
  const Names n;
  analysis::CreationBound f{.site = 3,
                            .site_kind = SiteKind::Single,
                            .task_site = 1,
                            .created = 298447,
                            .creating_work = 298447u * 4600,
                            .gap = 4600,
                            .task_mean = 386,
                            .bound = 1.08,
                            .critical_percent = 95.9,
                            .dependences = true,
                            .task_cost = 49,
                            .parallelism = 1.08,
                            .target = 16};
  DiagnosisItem d = n.say(f);
  EXPECT_EQ(d.kind, "creation-bound");
  EXPECT_EQ(d.finding,
            "the single at a.c:30 creates its tasks too slowly for them to keep the threads "
            "busy: 298447 tasks (most at a.c:12) one after another on the critical path, one "
            "every 4.600 us, each running 386 ns on average");
  EXPECT_EQ(d.evidence,
            "it holds 96% of the critical path; while it creates them, at most 1.08 threads can "
            "be busy (one creating, the tasks ending as fast as they come); creating an empty "
            "task costs the OpenMP runtime about 49 ns on one thread: the rest of each 4.600 us "
            "is the runtime's work with other threads taking the tasks and matching each task's "
            "`depend` clauses against the tasks before it, or the creator's own code between two "
            "creations");
  EXPECT_EQ(d.location, "a.c:30");
  EXPECT_EQ(d.advice,
            "create fewer, larger tasks (larger blocks or tiles): for a parallelism of 16 each "
            "must run about 69.000 us; `depend` orders only tasks created by the same task, so "
            "creating them from several threads is not the way, and splitting the single does "
            "not help");

  // Without `depend`; a creation cost that is most of the gap; none measured.
  f.dependences = false;
  f.task_cost = 3000;
  d = n.say(f);
  EXPECT_EQ(d.advice,
            "create fewer, larger tasks (for a parallelism of 16 each must run about 69.000 us), "
            "moving into them any work the creator does between two creations; or create them "
            "from several threads (a taskloop, or tasks that create tasks)");
  EXPECT_NE(d.evidence.find("; creating an empty task costs the OpenMP runtime about 3.000 us: "
                            "that is most of the time between two creations"),
            std::string::npos)
      << d.evidence;
  f.task_cost = 0;
  EXPECT_EQ(n.say(f).evidence,
            "it holds 96% of the critical path; while it creates them, at most 1.08 threads can "
            "be busy (one creating, the tasks ending as fast as they come)");
}

// advise's note on steps through a creator's creations names the steps, the creator, its rate
// and what shortens them; none without steps.
TEST(DiagnosisReport, CreationStepNotesNameTheStepsAndTheCreator) {
  const Names n;
  analysis::Advice advice;
  advice.steps.resize(3);
  advice.steps[0].group = 1;
  advice.steps[2].group = 2;
  const analysis::CreationBound creator{
      .site = 3, .site_kind = SiteKind::Single, .gap = 4600, .task_mean = 386, .dependences = true};
  EXPECT_EQ(report::creation_step_notes({{0, 0.97}, {2, 1.0}}, creator, advice, n.fragments,
                                        n.sites, n.m),
            std::vector<std::string>{
                "steps 1 (a.c:3-9, 97% of its work) and 3 (start-a.c:40-end, 100% of its work) "
                "are the time between two task creations of the single at a.c:30, one every "
                "4.600 us for tasks of 386 ns on average (report's creation-bound finding): that "
                "time is the OpenMP runtime's creating each task and matching its `depend` "
                "clauses as much as code of yours, and what shortens it is fewer, larger tasks"});
  analysis::CreationBound plain = creator;
  plain.dependences = false;
  const auto one =
      report::creation_step_notes({{0, 0.5}}, plain, advice, n.fragments, n.sites, n.m);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].rfind("step 1 (a.c:3-9, 50% of its work) is the time", 0), 0u) << one[0];
  EXPECT_NE(one[0].find("fewer, larger tasks, or creating them from several threads"),
            std::string::npos)
      << one[0];
  EXPECT_TRUE(report::creation_step_notes({}, creator, advice, n.fragments, n.sites, n.m).empty());
}

TEST(DiagnosisReport, LowParallelismNamesTheSiteHoldingMostOfThePath) {
  const Names n;
  analysis::LowParallelism f{.parallelism = 1000.0 / 700,
                             .target = 16,
                             .work = 1000,
                             .span = 700,
                             .site = 1,
                             .site_kind = SiteKind::Task,
                             .site_critical_percent = 100.0 / 7};
  DiagnosisItem d = n.say(f);
  EXPECT_EQ(d.finding, "the program's parallelism is 1.43: it can keep at most about 1 cores busy");
  EXPECT_EQ(d.evidence,
            "work 1.000 us, critical path 700 ns; the task at a.c:12 (main) holds 14% of the "
            "critical path");
  EXPECT_EQ(d.location, "a.c:12");
  EXPECT_EQ(d.advice,
            "shorten the critical path there: split that work into more, smaller parallel "
            "pieces; `tasklens whatif --site a.c:12` shows the gain, `tasklens advise` what to "
            "change first");
  // No construct on the path; a site without a function is named alone.
  f.site = model::kNone;
  f.parallelism = 0.5;
  d = n.say(f);
  EXPECT_EQ(d.finding, "the program's parallelism is 0.50: it can keep at most about 1 cores busy");
  EXPECT_EQ(d.evidence, "work 1.000 us, critical path 700 ns");
  EXPECT_EQ(d.location, "");
  EXPECT_EQ(d.advice, "`tasklens advise` says what to change first");
  f.site = 3;
  f.site_kind = SiteKind::Parallel;
  EXPECT_EQ(n.say(f).evidence,
            "work 1.000 us, critical path 700 ns; the parallel at a.c:30 holds 14% of the "
            "critical path");
}

TEST(DiagnosisReport, AnUntrustworthyRecordingListsWhatDisturbedIt) {
  Names n;
  n.m.losses.resize(1);
  n.m.losses[0].message = "3 writes failed (disk full)";
  analysis::Untrustworthy f{.incomplete = true,
                            .losses = 1,
                            .clipped = 2,
                            .measured_parallelism = 1.8,
                            .recorder_stalled = 3000,
                            .switches_lost = 4,
                            .host_steal_percent = 12};
  DiagnosisItem d = n.say(f);
  EXPECT_EQ(d.finding, "this recording is disturbed: read its figures with care");
  EXPECT_EQ(d.evidence,
            "the trace is incomplete (the program was killed or data was lost); 3 writes failed "
            "(disk full); 2 strand(s) far longer than the rest of their code (a paused machine, "
            "page faults, interrupts) were counted at their code's median: as measured the "
            "parallelism is 1.80; threads waited 3.000 us for tasklens's event buffers (taken "
            "out); 4 context switches were not seen; the virtual machine's host took 12% of the "
            "CPUs' time away (steal), time the strands it paused count as work");
  // The first clipped strand's fragment, at its line.
  EXPECT_EQ(d.location, "a.c:50");
  EXPECT_EQ(d.advice,
            "record it again on a quiet machine and compare (a figure is a distribution until "
            "it is shown stable)");
  // Only lost context switches: no location.
  d = n.say(analysis::Untrustworthy{.switches_lost = 1});
  EXPECT_EQ(d.evidence, "1 context switches were not seen");
  EXPECT_EQ(d.location, "");
}

TEST(DiagnosisReport, TheTableAndTheJsonSayTheSame) {
  const std::vector<DiagnosisItem> items = {
      {"serial-code", "serial code is 86%", "a.c:3-9 takes 600 ns", "a.c:3-9", "run it"},
      {"low-parallelism", "the parallelism is 1.43", "work 1 us", "", "`tasklens advise`"}};
  EXPECT_EQ(report::diagnosis_table(items),
            "Diagnosis, most important first:\n"
            "  1. serial code is 86% [a.c:3-9]: a.c:3-9 takes 600 ns. What to do: run it.\n"
            "  2. the parallelism is 1.43: work 1 us. What to do: `tasklens advise`.\n");
  EXPECT_EQ(report::diagnosis_json(items).dump(),
            R"([{"kind":"serial-code","finding":"serial code is 86%","evidence":"a.c:3-9 takes )"
            R"(600 ns","location":"a.c:3-9","advice":"run it"},{"kind":"low-parallelism",)"
            R"("finding":"the parallelism is 1.43","evidence":"work 1 us","location":"",)"
            R"("advice":"`tasklens advise`"}])");
  EXPECT_EQ(report::diagnosis_table({}), "");
  EXPECT_EQ(report::diagnosis_json({}).dump(), "[]");
  // The items keep the findings' order.
  const Names n;
  const auto said = report::diagnosis_items(
      n.m, {{0.9, analysis::FewTasks{.site = 1}}, {0.1, analysis::UnevenShares{.site = 2}}},
      n.names());
  ASSERT_EQ(said.size(), 2u);
  EXPECT_EQ(said[0].kind, "few-tasks");
  EXPECT_EQ(said[1].kind, "uneven-shares");
}

TEST(DiagnosisReport, AdviseNotesNameTheStepsThroughARegionsOwnCode) {
  const Names n;
  analysis::Advice advice;
  for (uint32_t g : {1, 2, 0, 2}) advice.steps.push_back({.group = g});
  std::vector<analysis::RegionEntrySteps> regions(2);
  regions[0].site = 3;
  regions[0].entries = 2000;
  regions[0].steps = {{0, 0.38}, {3, 0.96}};
  regions[1].site = 1;
  regions[1].entries = 100;
  regions[1].steps = {{2, 1.0}};
  const auto notes = report::region_entry_notes(regions, advice, n.fragments, n.sites);
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_EQ(notes[0],
            "steps 1 (a.c:3-9, 38% of its work) and 4 (start-a.c:40-end, 96% of its work) run "
            "the own code of the parallel region at a.c:30, entered 2000 times (starting and "
            "ending its team): what parallelizes it is creating the team once, one `#pragma omp "
            "parallel` around the loop that enters it with `#pragma omp for` inside");
  EXPECT_EQ(notes[1].rfind("step 3 (<unknown>, 100% of its work) runs the own code of the "
                           "parallel region at a.c:12, entered 100 times",
                           0),
            0u)
      << notes[1];
  // Three steps: a list.
  regions.resize(1);
  regions[0].steps = {{0, 0.5}, {1, 0.5}, {3, 0.5}};
  EXPECT_EQ(report::region_entry_notes(regions, advice, n.fragments, n.sites)[0].rfind(
                "steps 1 (a.c:3-9, 50% of its work), 2 (start-a.c:40-end, 50% of its work) and 4 "
                "(start-a.c:40-end, 50% of its work) run the own code",
                0),
            0u);
  EXPECT_TRUE(report::region_entry_notes({}, advice, n.fragments, n.sites).empty());
}

// Serial code of 600 (group 1) and 50 (group 2, off the critical path), then 4 tasks of 100:
// the groups by critical weight, named.
TEST(DiagnosisReport, SerialFragmentsAreNamedByTheirGroups) {
  const Names n;
  ModelBuilder b;
  const uint32_t task = b.add_site(SiteKind::Task);
  const uint32_t first = b.strand(600);
  b.strand(50, {}, 1);
  std::vector<uint32_t> ends;
  for (uint32_t k = 0; k < 4; ++k) {
    b.open(model::NodeKind::Task, task);
    ends.push_back(b.strand(100, {first}, k % 2));
    b.close();
  }
  b.strand(0, ends);
  model::Model m = b.finish();
  m.fragments.resize(3);
  for (model::Strand& s : m.strands) s.fragment = s.site == 0 ? 1 : 0;
  m.strands[1].fragment = 2;
  const analysis::Profile profile = analysis::compute_profile(m);
  const auto named = report::serial_fragments(m, profile, n.fragments);
  ASSERT_EQ(named.size(), 2u);
  EXPECT_EQ(named[0].label, "a.c:3-9");
  EXPECT_EQ(named[0].function, "main");
  EXPECT_EQ(named[0].work, 600u);
  EXPECT_EQ(named[0].critical, 600u);
  EXPECT_EQ(named[1].label, "start-a.c:40-end");
  EXPECT_EQ(named[1].function, "");
  EXPECT_EQ(named[1].work, 50u);
  EXPECT_EQ(named[1].critical, 0u);
  EXPECT_EQ(report::serial_fragments(m, profile, n.fragments, 1).size(), 1u);
}

TEST(DiagnosisReport, TheTargetSaysWhereItComesFrom) {
  const unsigned cores = analysis::machine_cores();
  model::Model m;
  m.thread_count = 1;
  EXPECT_EQ(report::parallelism_target_origin(m),
            "8 x the " + std::to_string(cores) + " cores of this machine");
  m.thread_count = cores + 1;
  EXPECT_EQ(report::parallelism_target_origin(m),
            "8 x the " + std::to_string(cores + 1) +
                " threads recorded (more than this machine's " + std::to_string(cores) + " cores)");
}

}  // namespace
}  // namespace tasklens
