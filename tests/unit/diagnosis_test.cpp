// analysis/diagnosis.hpp on hand-built models: each kind of finding with its figures and its
// weight, the order of the findings, and the computations report and advise share (the serial
// code's fragment groups, the regions entered too often, advise's steps through them, the
// target). The thresholds' boundaries are in diagnosis_thresholds_test.cpp, the wording in
// diagnosis_report_test.cpp.
#include "analysis/diagnosis.hpp"

#include <gtest/gtest.h>

#include <variant>

#include "diagnosis_models.hpp"

namespace tasklens {
namespace {

using analysis::DiagnosisFinding;
using analysis::DiagnosisKind;
using fixtures::diagnosis_input;
using fixtures::Entries;
using fixtures::ModelBuilder;
using fixtures::SerialThenTasks;
using fixtures::StaticShares;
using fixtures::TeamRegion;
using fixtures::TwoSiteRecursion;
using fixtures::type_sizes;
using model::Model;
using model::NodeKind;
using model::SiteKind;

std::vector<DiagnosisKind> kinds(const std::vector<DiagnosisFinding>& findings) {
  std::vector<DiagnosisKind> out;
  for (const DiagnosisFinding& f : findings) out.push_back(f.kind());
  return out;
}

std::string said(const std::vector<DiagnosisFinding>& findings) {
  std::string out;
  for (const DiagnosisFinding& f : findings)
    out += std::string(analysis::to_string(f.kind())) + " " + std::to_string(f.weight) + "; ";
  return out;
}

// Serial code of 600 then 4 tasks of 100 (W = 1000, S = 700): the serial code holds 600 of the
// 700 critical path; without it the span is one task, 400 / 100 = 4. The task site holds the
// rest (100 / 700, under whatif-gain's fifth): low-parallelism names it, after.
TEST(Diagnosis, SerialCodeComesFirstWithItsGroupAndTheParallelismWithoutIt) {
  const SerialThenTasks a;
  ASSERT_EQ(a.profile.work, 1000u);
  ASSERT_EQ(a.profile.span, 700u);
  const double p = 1000.0 / 700.0;
  const auto findings = analysis::diagnose(a.input(16));
  ASSERT_EQ(kinds(findings),
            (std::vector{DiagnosisKind::SerialCode, DiagnosisKind::LowParallelism}))
      << said(findings);
  const auto& serial = std::get<analysis::SerialCode>(findings[0].figures);
  EXPECT_EQ(serial.group, 1u);
  EXPECT_EQ(serial.serial, 600u);
  EXPECT_EQ(serial.group_critical, 600u);
  EXPECT_EQ(serial.span, 700u);
  EXPECT_DOUBLE_EQ(serial.parallelism, p);
  EXPECT_DOUBLE_EQ(serial.parallelism_without, 4.0);
  // The serial code's share of the span, times the span's share of the time on 16 cores.
  EXPECT_DOUBLE_EQ(findings[0].weight, 600.0 / 700.0 / (p / 16 + 1));

  const auto& low = std::get<analysis::LowParallelism>(findings[1].figures);
  EXPECT_DOUBLE_EQ(low.parallelism, p);
  EXPECT_EQ(low.target, 16);
  EXPECT_EQ(low.work, 1000u);
  EXPECT_EQ(low.span, 700u);
  EXPECT_EQ(low.site, 1u);
  EXPECT_EQ(low.site_kind, SiteKind::Task);
  EXPECT_DOUBLE_EQ(low.site_critical_percent, 100.0 * 100 / 700);
  EXPECT_DOUBLE_EQ(findings[1].weight, 0.25 * (1 - p / 16));
}

// No fragment groups: the serial code cannot be named, and is no finding.
TEST(Diagnosis, SerialCodeNeedsTheFragmentGroups) {
  const SerialThenTasks a;
  const auto findings = analysis::diagnose(diagnosis_input(a.m, a.profile, 16));
  EXPECT_EQ(kinds(findings), (std::vector{DiagnosisKind::LowParallelism})) << said(findings);
}

// Ten tasks under the tiny size of 20 (6 tiny), 200 of the 400 work, without a schedule or
// timestamps: the workers' delay is unknown (half), weight 0.5 x 0.5. The tasks do not nest (no
// recursion): fewer, larger tasks.
TEST(Diagnosis, TinyTasksWithoutARecursionAreToldToBeLarger) {
  const Model m = fixtures::fork_join_model({100, 100, 100, 100});
  const analysis::Profile profile = analysis::compute_profile(m);
  ASSERT_EQ(profile.work, 400u);
  const std::vector<analysis::TypeSizes> sizes = {type_sizes(1, 10, 6, 200, 50, 20)};
  analysis::DiagnosisInput in = diagnosis_input(m, profile, 1);
  in.task_sizes = &sizes;
  in.tiny_size = 20;
  const auto findings = analysis::diagnose(in);
  ASSERT_EQ(kinds(findings), (std::vector{DiagnosisKind::TinyTasks})) << said(findings);
  const auto& f = std::get<analysis::TinyTasks>(findings[0].figures);
  EXPECT_FALSE(f.chunks);
  EXPECT_EQ(f.sites, (std::vector<uint32_t>{1}));
  EXPECT_EQ(f.largest_site, 1u);
  EXPECT_EQ(f.median, 20u);
  EXPECT_EQ(f.count, 10u);
  EXPECT_EQ(f.tiny, 6u);
  EXPECT_EQ(f.total, 200u);
  EXPECT_DOUBLE_EQ(f.work_share, 0.5);
  EXPECT_EQ(f.delay_source, analysis::DelaySource::Unknown);
  EXPECT_DOUBLE_EQ(f.delay, 0.5);
  EXPECT_EQ(f.advice, analysis::TinyAdvice::LargerTasks);
  EXPECT_DOUBLE_EQ(findings[0].weight, 0.25);
}

// The two task sites of one recursion are one finding: their counts add up, the site with more
// tasks is its location, and its advice is the recursion's cut-off. With the schedule, the
// workers' delay is the time between tasks with work ready over their time: (150 + 50) / 1000.
TEST(Diagnosis, TinyTasksOfOneRecursionAreOneFindingWithItsCutoff) {
  const TwoSiteRecursion r(8);
  const std::vector<analysis::TypeSizes> sizes = {
      type_sizes(TwoSiteRecursion::kSecond, 12, 12, 24, 2, 1),
      type_sizes(TwoSiteRecursion::kFirst, 20, 15, 40, 2, 3)};
  analysis::Schedule schedule;
  schedule.cumulative = 1000;
  schedule.total.delay = 150;
  schedule.total.no_work_sched = 50;
  analysis::DiagnosisInput in = diagnosis_input(r.m, r.profile, 1);
  in.task_sizes = &sizes;
  in.tiny_size = 2;
  in.schedule = &schedule;
  const auto findings = analysis::diagnose(in);
  ASSERT_EQ(kinds(findings), (std::vector{DiagnosisKind::TinyTasks})) << said(findings);
  const auto& f = std::get<analysis::TinyTasks>(findings[0].figures);
  EXPECT_EQ(f.sites, (std::vector<uint32_t>{TwoSiteRecursion::kSecond, TwoSiteRecursion::kFirst}));
  EXPECT_EQ(f.largest_site, TwoSiteRecursion::kFirst);
  EXPECT_EQ(f.median, 3u);
  EXPECT_EQ(f.count, 32u);
  EXPECT_EQ(f.tiny, 27u);
  EXPECT_EQ(f.total, 64u);
  EXPECT_EQ(f.delay_source, analysis::DelaySource::Schedule);
  EXPECT_DOUBLE_EQ(f.delay, 0.2);
  const double share = 64.0 / static_cast<double>(r.profile.work);
  EXPECT_DOUBLE_EQ(f.work_share, share);
  EXPECT_DOUBLE_EQ(findings[0].weight, share * 0.2);
  ASSERT_EQ(f.advice, analysis::TinyAdvice::Cutoff);
  const auto recursions = analysis::find_recursions(r.m);
  ASSERT_EQ(recursions.size(), 1u);
  const analysis::CutoffAdvice cut = analysis::advise_cutoff(
      r.m, recursions[0], 1, analysis::estimate_task_overhead(r.m).per_task, 0);
  EXPECT_EQ(f.cutoff.recursion.sites, recursions[0].sites);
  EXPECT_EQ(f.cutoff.recommended, cut.recommended);
  EXPECT_EQ(f.cutoff.verdict, cut.verdict);
  EXPECT_EQ(f.cutoff.target, 1);
}

// Timestamps and a time metric, no schedule: the delay is the workers' time outside the
// program's code, 1 - 400 / (2 threads x 200) = 0, weighed at least kTinyTasksDelayFloor.
TEST(Diagnosis, TinyTasksWithTimestampsWeighTheWorkersIdleTime) {
  Model m = fixtures::fork_join_model({100, 100, 100, 100});
  m.thread_count = 2;
  for (uint32_t k = 0; k < 4; ++k)
    fixtures::set_time(m, 1 + k, k % 2, 100 * (k / 2), 100 * (k / 2 + 1));
  const analysis::Profile profile = analysis::compute_profile(m);
  const std::vector<analysis::TypeSizes> sizes = {type_sizes(1, 8, 8, 400, 100, 100)};
  analysis::DiagnosisInput in = diagnosis_input(m, profile, 1);
  in.task_sizes = &sizes;
  in.tiny_size = 200;
  const auto findings = analysis::diagnose(in);
  ASSERT_EQ(kinds(findings), (std::vector{DiagnosisKind::TinyTasks})) << said(findings);
  const auto& f = std::get<analysis::TinyTasks>(findings[0].figures);
  EXPECT_EQ(f.delay_source, analysis::DelaySource::Capacity);
  EXPECT_DOUBLE_EQ(f.delay, 0.0);
  EXPECT_DOUBLE_EQ(findings[0].weight, 1.0 * analysis::kTinyTasksDelayFloor);
  // A metric that is not time: the delay is unknown.
  m.metric_is_time = false;
  const auto counted = analysis::diagnose(in);
  ASSERT_EQ(counted.size(), 1u);
  EXPECT_EQ(std::get<analysis::TinyTasks>(counted[0].figures).delay_source,
            analysis::DelaySource::Unknown);
}

// 2 workers, W = 1000: 3 tasks holding 300 are too few (3 < 2 x 4); 20 tasks of which one is 200
// of 300 have a task larger than a worker's share (150). Both weigh 0.4 x 0.3: equal weights keep
// the task types' order. Loop chunks are never few-tasks (their number is the schedule's).
TEST(Diagnosis, FewTasksAndADominantTaskWeighTheirShareOfTheWork) {
  ModelBuilder b;
  b.add_site(SiteKind::Task);
  b.add_site(SiteKind::Task);
  b.add_site(SiteKind::Loop);
  b.strand(1000);
  Model m = b.finish();
  m.thread_count = 2;
  const analysis::Profile profile = analysis::compute_profile(m);
  const std::vector<analysis::TypeSizes> sizes = {type_sizes(2, 20, 0, 300, 200),
                                                  type_sizes(3, 1, 0, 500, 500, 0, true),
                                                  type_sizes(1, 3, 0, 300, 100)};
  analysis::DiagnosisInput in = diagnosis_input(m, profile, 1);
  in.task_sizes = &sizes;
  const auto findings = analysis::diagnose(in);
  ASSERT_EQ(kinds(findings), (std::vector{DiagnosisKind::FewTasks, DiagnosisKind::FewTasks}))
      << said(findings);
  const auto& dominant = std::get<analysis::FewTasks>(findings[0].figures);
  EXPECT_EQ(dominant.site, 2u);
  EXPECT_EQ(dominant.count, 20u);
  EXPECT_EQ(dominant.max, 200u);
  EXPECT_EQ(dominant.total, 300u);
  EXPECT_EQ(dominant.workers, 2u);
  EXPECT_DOUBLE_EQ(dominant.work_share, 0.3);
  EXPECT_FALSE(dominant.few);
  EXPECT_TRUE(dominant.dominant);
  const auto& few = std::get<analysis::FewTasks>(findings[1].figures);
  EXPECT_EQ(few.site, 1u);
  EXPECT_TRUE(few.few);
  EXPECT_FALSE(few.dominant);
  EXPECT_DOUBLE_EQ(findings[0].weight, 0.4 * 0.3);
  EXPECT_DOUBLE_EQ(findings[1].weight, 0.4 * 0.3);
  // One worker: nothing to share.
  m.thread_count = 1;
  EXPECT_TRUE(analysis::diagnose(in).empty());
}

// Static shares of 3200 and 6400 (32 iterations each): the slowest is 1/3 above the mean. The
// loop's span is one iteration's share of the slowest (6400 / 32 = 200) of the program's 210.
TEST(Diagnosis, UnevenSharesWeighTheImbalanceByTheLoopsShareOfTheSpan) {
  const StaticShares s(3200, 6400);
  ASSERT_EQ(s.profile.span, 210u);
  const auto findings = analysis::diagnose(diagnosis_input(s.m, s.profile, 1));
  ASSERT_EQ(kinds(findings), (std::vector{DiagnosisKind::UnevenShares})) << said(findings);
  const auto& f = std::get<analysis::UnevenShares>(findings[0].figures);
  EXPECT_EQ(f.site, StaticShares::kLoop);
  EXPECT_DOUBLE_EQ(f.imbalance, 1.0 / 3);
  EXPECT_DOUBLE_EQ(f.span_share, 200.0 / 210);
  EXPECT_DOUBLE_EQ(findings[0].weight, f.imbalance / (1 + f.imbalance) * (200.0 / 210));
}

// A region of 2 x 500 team-bound work and a loop phase of 2 x 4000: 1000 of its 9000 work (11%)
// ran as one stretch per thread. Weight: that work's share of the program's.
TEST(Diagnosis, TeamBoundWorkWeighsItsShareOfTheProgram) {
  const TeamRegion r(500, 500, 4000);
  ASSERT_EQ(r.profile.work, 9000u);
  const auto findings = analysis::diagnose(diagnosis_input(r.m, r.profile, 1));
  ASSERT_EQ(kinds(findings), (std::vector{DiagnosisKind::TeamBound})) << said(findings);
  const auto& f = std::get<analysis::TeamBound>(findings[0].figures);
  EXPECT_EQ(f.site, TeamRegion::kRegion);
  EXPECT_EQ(f.team_bound_work, 1000u);
  EXPECT_EQ(f.work, 9000u);
  EXPECT_EQ(f.team, 2u);
  EXPECT_EQ(f.program_work, 9000u);
  EXPECT_DOUBLE_EQ(f.parallelism, 9000.0 / 4500);
  EXPECT_DOUBLE_EQ(findings[0].weight, 1000.0 / 9000);
}

// A region entered 100 times, 60 of its own per entry around two chunks of 100: its own strands
// hold 6000 of the 16010 critical path (37%), 60 per entry. The loop, 62% of the path, would
// gain from a split 8 ways (each chunk 13 on the path): whatif-gain names it, never the region.
TEST(Diagnosis, ARegionEnteredAgainAndAgainIsToldToBeEnteredOnce) {
  const Entries e(60);
  ASSERT_EQ(e.profile.span, 10u + 100 * 160);
  ASSERT_EQ(e.profile.work, 10u + 100 * 260);
  const double p = 26010.0 / 16010;
  const auto findings = analysis::diagnose(e.input(16));
  ASSERT_EQ(kinds(findings), (std::vector{DiagnosisKind::RegionEntries, DiagnosisKind::WhatIfGain}))
      << said(findings);
  const auto& f = std::get<analysis::RegionEntries>(findings[0].figures);
  EXPECT_EQ(f.site, Entries::kRegion);
  EXPECT_EQ(f.entries, 100u);
  EXPECT_EQ(f.critical_work, 6000u);
  EXPECT_EQ(f.per_entry, 60u);
  EXPECT_DOUBLE_EQ(f.critical_percent, 100.0 * 6000 / 16010);
  EXPECT_DOUBLE_EQ(f.parallelism, p);
  EXPECT_EQ(f.target, 16);
  EXPECT_DOUBLE_EQ(findings[0].weight, f.critical_percent / 100 / (p / 16 + 1));

  const auto& gain = std::get<analysis::WhatIfGain>(findings[1].figures);
  EXPECT_EQ(gain.site, Entries::kLoop);
  EXPECT_EQ(gain.site_kind, SiteKind::Loop);
  EXPECT_DOUBLE_EQ(gain.critical_percent, 100.0 * 10000 / 16010);
  EXPECT_EQ(gain.split, 8);
  EXPECT_DOUBLE_EQ(gain.before, p);
  EXPECT_DOUBLE_EQ(gain.after, 26010.0 / (10 + 100 * 73));
  EXPECT_DOUBLE_EQ(findings[1].weight, (1 - p / gain.after) / 3);
}

// 300 of its own per entry around chunks of 100: the region holds most of the critical path.
// Splitting the loop (25% of it) gains too little for whatif-gain; low-parallelism names the
// loop, passing over the region (whose own strands are no work to split).
TEST(Diagnosis, LowParallelismPassesOverARegionEnteredTooOften) {
  const Entries e(300);
  const auto findings = analysis::diagnose(e.input(16));
  ASSERT_EQ(kinds(findings),
            (std::vector{DiagnosisKind::RegionEntries, DiagnosisKind::LowParallelism}))
      << said(findings);
  const auto& low = std::get<analysis::LowParallelism>(findings[1].figures);
  EXPECT_EQ(low.site, Entries::kLoop);
  EXPECT_DOUBLE_EQ(low.site_critical_percent, 100.0 * 10000 / 40010);
}

// One strand at the Program site: no construct to name.
TEST(Diagnosis, LowParallelismWithoutAConstructNamesNoSite) {
  const Model m = fixtures::chain_model({100});
  const analysis::Profile profile = analysis::compute_profile(m);
  const auto findings = analysis::diagnose(diagnosis_input(m, profile, 16));
  ASSERT_EQ(kinds(findings), (std::vector{DiagnosisKind::LowParallelism})) << said(findings);
  const auto& low = std::get<analysis::LowParallelism>(findings[0].figures);
  EXPECT_EQ(low.site, model::kNone);
  EXPECT_DOUBLE_EQ(low.parallelism, 1.0);
  EXPECT_DOUBLE_EQ(findings[0].weight, 0.25 * (1 - 1.0 / 16));
}

// 4 tasks of 800 (W = 3200, S = 800): split 8 ways each task is 100 on the path, 3200 / 100 =
// 32. The what-if names the site and the gain: no low-parallelism beside it.
TEST(Diagnosis, WhatIfGainIsTheParallelismOfTheSiteSplit8Ways) {
  const Model m = fixtures::fork_join_model({800, 800, 800, 800});
  const analysis::Profile profile = analysis::compute_profile(m);
  const auto findings = analysis::diagnose(diagnosis_input(m, profile, 64));
  ASSERT_EQ(kinds(findings), (std::vector{DiagnosisKind::WhatIfGain})) << said(findings);
  const auto& f = std::get<analysis::WhatIfGain>(findings[0].figures);
  EXPECT_EQ(f.site, 1u);
  EXPECT_EQ(f.site_kind, SiteKind::Task);
  EXPECT_DOUBLE_EQ(f.critical_percent, 100.0);
  EXPECT_DOUBLE_EQ(f.before, 4.0);
  EXPECT_DOUBLE_EQ(f.after, 32.0);
  EXPECT_DOUBLE_EQ(findings[0].weight, (1 - 4.0 / 32) / 3);
}

// A single creating 200 tasks of 100, one every 400: its creating strands are the whole of its
// time on the path, and while it creates at most (400 + 100) / 400 = 1.25 threads are busy. It
// is not work to split: neither whatif-gain nor low-parallelism name it.
TEST(Diagnosis, ACreatorSlowerThanItsTasksIsCreationBound) {
  const fixtures::Creator c(200, 400, 100);
  ASSERT_EQ(c.profile.work, 200u * 500);
  ASSERT_EQ(c.profile.span, 200u * 400 + 100);
  const double p = 100000.0 / 80100;
  auto findings = analysis::diagnose(diagnosis_input(c.m, c.profile, 16));
  ASSERT_EQ(kinds(findings), (std::vector{DiagnosisKind::CreationBound})) << said(findings);
  const auto& f = std::get<analysis::CreationBound>(findings[0].figures);
  EXPECT_EQ(f.site, fixtures::Creator::kSingle);
  EXPECT_EQ(f.site_kind, SiteKind::Single);
  EXPECT_EQ(f.task_site, fixtures::Creator::kTask);
  EXPECT_EQ(f.created, 200u);
  EXPECT_EQ(f.creating_work, 200u * 400);
  EXPECT_EQ(f.gap, 400u);
  EXPECT_EQ(f.task_mean, 100u);
  EXPECT_DOUBLE_EQ(f.bound, 1.25);
  EXPECT_DOUBLE_EQ(f.critical_percent, 100.0 * 80000 / 80100);
  EXPECT_FALSE(f.dependences);
  EXPECT_EQ(f.task_cost, 0u);
  EXPECT_DOUBLE_EQ(f.parallelism, p);
  EXPECT_DOUBLE_EQ(findings[0].weight, 80000.0 / 80100 / (p / 16 + 1));

  // Tasks waiting for each other (a `depend` chain) say so; the measured task cost is passed on.
  fixtures::Creator chained(200, 400, 100, /*chained=*/true);
  chained.m.task_cost = 7;
  findings = analysis::diagnose(diagnosis_input(chained.m, chained.profile, 16));
  ASSERT_EQ(kinds(findings), (std::vector{DiagnosisKind::CreationBound})) << said(findings);
  EXPECT_TRUE(std::get<analysis::CreationBound>(findings[0].figures).dependences);
  EXPECT_EQ(std::get<analysis::CreationBound>(findings[0].figures).task_cost, 7u);
}

// What creation-bound does not claim: fewer than kCreationMin creations (no rate), a creator
// whose own code outside its creating strands holds more than half of its path, tasks that keep
// the target's threads busy, and a bound far above the program's parallelism (something else
// holds it back). Each leaves the site to whatif-gain or low-parallelism.
TEST(Diagnosis, CreationBoundNeedsManyCreationsThatHoldTheCreatorsTimeAndExplainTheParallelism) {
  auto kinds_of = [](const fixtures::Creator& c, double target) {
    return kinds(analysis::diagnose(diagnosis_input(c.m, c.profile, target)));
  };
  auto has_creation_bound = [&](const fixtures::Creator& c, double target) {
    const auto k = kinds_of(c, target);
    return std::find(k.begin(), k.end(), DiagnosisKind::CreationBound) != k.end();
  };
  EXPECT_TRUE(has_creation_bound(fixtures::Creator(analysis::kCreationMin, 400, 100), 16));
  EXPECT_FALSE(has_creation_bound(fixtures::Creator(analysis::kCreationMin - 1, 400, 100), 16));
  // Own code of 80000 before 200 creations of 400 (80000): the creating strands hold half.
  EXPECT_TRUE(has_creation_bound(fixtures::Creator(200, 400, 100, false, 80000), 16));
  EXPECT_FALSE(has_creation_bound(fixtures::Creator(200, 400, 100, false, 80001), 16));
  EXPECT_EQ(kinds_of(fixtures::Creator(200, 400, 100, false, 80001), 16),
            (std::vector{DiagnosisKind::WhatIfGain}));
  // Tasks of 6000 every 400: (400 + 6000) / 400 = 16 threads, the target.
  EXPECT_TRUE(has_creation_bound(fixtures::Creator(200, 400, 5999), 16.01));
  EXPECT_FALSE(has_creation_bound(fixtures::Creator(200, 400, 6000), 16));
  // Tasks of 4000 every 400 (bound 11) after serial code of 200000: S = 284000, W = 1080000,
  // parallelism 3.8, under half the bound.
  const fixtures::Creator late(200, 400, 4000, false, 0, 200000);
  ASSERT_LT(2 * late.profile.parallelism, 11.0);
  EXPECT_FALSE(has_creation_bound(late, 16));
  const fixtures::Creator early(200, 400, 4000, false, 0, 80000);  // parallelism 5.85
  ASSERT_GE(2 * early.profile.parallelism, 11.0);
  EXPECT_TRUE(has_creation_bound(early, 16));
}

// advise's steps through the creator: a step whose fragment is mostly its creating strands (the
// 200 strands of 400 in fragment group 1, beside its taskwait strand of 0 there) is one, a step
// through the tasks' fragment (group 2) is not. The creator's figures come with them.
TEST(Diagnosis, AdviseStepsThroughACreatorsCreationsAreFound) {
  fixtures::Creator c(200, 400, 100);
  c.m.fragments = {{0, 0}, {0x10, 0x10}, {0x20, 0}};
  for (model::Strand& st : c.m.strands)
    st.fragment = st.site == fixtures::Creator::kSingle ? 1
                  : st.site == fixtures::Creator::kTask ? 2
                                                        : 0;
  const std::vector<uint32_t> group_of = {0, 1, 2};
  analysis::Advice advice;
  advice.steps.resize(2);
  advice.steps[0].group = 2;
  advice.steps[1].group = 1;
  analysis::CreationBound creator;
  const auto steps = analysis::creation_steps(c.m, c.profile, group_of, advice, 16, &creator);
  ASSERT_EQ(steps.size(), 1u);
  EXPECT_EQ(steps[0].index, 1u);
  EXPECT_DOUBLE_EQ(steps[0].share, 1.0);
  EXPECT_EQ(creator.site, fixtures::Creator::kSingle);
  EXPECT_EQ(creator.gap, 400u);
  // Tasks large enough for the target: no creator, no steps.
  const fixtures::Creator large(200, 400, 6000);
  EXPECT_TRUE(
      analysis::creation_steps(large.m, large.profile, group_of, advice, 16, nullptr).empty());
}

analysis::UnitDiff unit(std::string name, SiteKind kind, double ratio, int64_t inflation,
                        double cost_percent) {
  analysis::UnitDiff u;
  u.name = std::move(name);
  u.site_kind = kind;
  analysis::MetricDiff x;
  x.ratio = ratio;
  x.inflation = inflation;
  x.cost_percent = cost_percent;
  u.metrics = {x};
  return u;
}

// The sites of diff, sorted by cost: the program's unit is passed over, and of the others only
// the first that grew 1.3x and costs 10% is said.
TEST(Diagnosis, WorkInflationNamesTheCostliestConstructThatGrew) {
  const SerialThenTasks a;
  analysis::Diff d;
  d.base.threads = 1;
  d.other.threads = 2;
  d.sites = {unit("<program>", SiteKind::Program, 5, 9000, 90),
             unit("a.c:5", SiteKind::Loop, 1.2, 100, 60),
             unit("a.c:12", SiteKind::Task, 3, 2000, 40),
             unit("a.c:20", SiteKind::Task, 4, 3000, 30)};
  analysis::DiagnosisInput in = a.input(1);
  in.base = &d;
  const auto findings = analysis::diagnose(in);
  ASSERT_EQ(kinds(findings), (std::vector{DiagnosisKind::WorkInflation})) << said(findings);
  const auto& f = std::get<analysis::WorkInflation>(findings[0].figures);
  EXPECT_EQ(f.unit, 2u);
  EXPECT_DOUBLE_EQ(f.ratio, 3.0);
  EXPECT_EQ(f.inflation, 2000);
  EXPECT_DOUBLE_EQ(f.cost_percent, 40.0);
  EXPECT_EQ(f.base_threads, 1u);
  EXPECT_EQ(f.other_threads, 2u);
  EXPECT_DOUBLE_EQ(findings[0].weight, 0.4);
}

// Everything that disturbs a recording, in one finding: an incomplete trace or lost data weigh
// 1 (they qualify every other line), the rest 0.3.
TEST(Diagnosis, ADisturbedRecordingIsOneUntrustworthyFinding) {
  Model m = fixtures::fork_join_model(std::vector<uint64_t>(10, 100));
  const analysis::Profile profile = analysis::compute_profile(m);
  ASSERT_DOUBLE_EQ(profile.parallelism, 10.0);
  analysis::Clipping clipping;
  clipping.strands.resize(3);
  analysis::DiagnosisInput in = diagnosis_input(m, profile, 1);
  in.clipping = &clipping;
  in.measured.parallelism = 12;  // moved by 20%
  m.complete = false;
  m.losses.resize(2);
  m.recorder_stalled = 60;  // 6% of the work
  m.switches_lost = 4;
  m.host_steal_percent = 12.5;
  auto findings = analysis::diagnose(in);
  ASSERT_EQ(kinds(findings), (std::vector{DiagnosisKind::Untrustworthy})) << said(findings);
  const auto& f = std::get<analysis::Untrustworthy>(findings[0].figures);
  EXPECT_TRUE(f.incomplete);
  EXPECT_EQ(f.losses, 2u);
  EXPECT_EQ(f.clipped, 3u);
  EXPECT_DOUBLE_EQ(f.measured_parallelism, 12.0);
  EXPECT_EQ(f.recorder_stalled, 60u);
  EXPECT_EQ(f.switches_lost, 4u);
  EXPECT_DOUBLE_EQ(f.host_steal_percent, 12.5);
  EXPECT_DOUBLE_EQ(findings[0].weight, 1.0);
  // Complete, nothing lost: the other disturbances weigh 0.3.
  m.complete = true;
  m.losses.clear();
  findings = analysis::diagnose(in);
  ASSERT_EQ(findings.size(), 1u);
  const auto& rest = std::get<analysis::Untrustworthy>(findings[0].figures);
  EXPECT_FALSE(rest.incomplete);
  EXPECT_EQ(rest.losses, 0u);
  EXPECT_EQ(rest.clipped, 3u);
  EXPECT_DOUBLE_EQ(findings[0].weight, analysis::kDisturbedWeight);
  // Nothing disturbed: no finding.
  m.recorder_stalled = m.switches_lost = 0;
  m.host_steal_percent = -1;
  in.clipping = nullptr;
  EXPECT_TRUE(analysis::diagnose(in).empty());
}

// The heaviest first, equal weights in the order the findings are made (untrustworthy before
// work-inflation), at most kDiagnosisLines.
TEST(Diagnosis, FindingsComeHeaviestFirstAtMostFive) {
  // An incomplete trace (weight 1) and a unit costing all of the critical path (1.0).
  const SerialThenTasks a;
  Model m = a.m;
  m.complete = false;
  analysis::Diff d;
  d.sites = {unit("a.c:12", SiteKind::Task, 2, 100, 100)};
  analysis::DiagnosisInput in = diagnosis_input(m, a.profile, 16);
  in.fragment_group = &a.group_of;
  in.fragment_groups = a.groups;
  in.base = &d;
  auto findings = analysis::diagnose(in);
  EXPECT_EQ(kinds(findings),
            (std::vector{DiagnosisKind::Untrustworthy, DiagnosisKind::WorkInflation,
                         DiagnosisKind::SerialCode, DiagnosisKind::LowParallelism}))
      << said(findings);

  // Seven task types with too few tasks, 10% to 16% of the work: the five largest, by weight.
  ModelBuilder b;
  for (int k = 0; k < 7; ++k) b.add_site(SiteKind::Task);
  b.strand(10000);
  Model many = b.finish();
  many.thread_count = 2;
  const analysis::Profile profile = analysis::compute_profile(many);
  std::vector<analysis::TypeSizes> sizes;
  for (uint32_t k = 0; k < 7; ++k) sizes.push_back(type_sizes(1 + k, 1, 0, 1000 + 100 * k, 0));
  in = diagnosis_input(many, profile, 1);
  in.task_sizes = &sizes;
  findings = analysis::diagnose(in);
  ASSERT_EQ(findings.size(), analysis::kDiagnosisLines);
  for (size_t i = 0; i < findings.size(); ++i) {
    EXPECT_EQ(std::get<analysis::FewTasks>(findings[i].figures).site, 7 - i) << i;
    EXPECT_DOUBLE_EQ(findings[i].weight, 0.4 * (1600 - 100.0 * i) / 10000) << i;
  }
}

TEST(Diagnosis, SerialGroupsAreListedByCriticalWeightThenWork) {
  // Group 1: 600 on the path; group 2 (the tasks, not serial) is not listed.
  const SerialThenTasks a;
  auto groups = analysis::serial_groups(a.m, a.profile, a.group_of, a.groups);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].group, 1u);
  EXPECT_EQ(groups[0].work, 600u);
  EXPECT_EQ(groups[0].critical, 600u);

  // Three serial strands in a row, of groups 2 (50), 0 (300) and 1 (300), then one off the path
  // beside them (group 2, 40): by critical weight, then by work; at most `limit`.
  ModelBuilder b;
  const uint32_t s0 = b.strand(50);
  const uint32_t s1 = b.strand(300, {s0});
  const uint32_t s2 = b.strand(300, {s1});
  b.strand(40, {s0}, 1);
  b.strand(0, {s2});
  Model m = b.finish();
  m.fragments.resize(4);
  const std::vector<uint32_t> group_of = {2, 0, 1, 2};
  for (uint32_t s = 0; s < 4; ++s) m.strands[s].fragment = s;
  m.strands[4].fragment = 0;
  const analysis::Profile profile = analysis::compute_profile(m);
  groups = analysis::serial_groups(m, profile, group_of, 3);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].group, 0u);
  EXPECT_EQ(groups[0].critical, 300u);
  EXPECT_EQ(groups[1].group, 1u);
  EXPECT_EQ(groups[2].group, 2u);
  EXPECT_EQ(groups[2].work, 90u);
  EXPECT_EQ(groups[2].critical, 50u);
  EXPECT_EQ(analysis::serial_groups(m, profile, group_of, 3, 1).size(), 1u);
}

TEST(Diagnosis, RegionsEnteredTooOftenAreMarkedBySite) {
  const Entries e(60);
  EXPECT_EQ(analysis::regions_entered_too_often(e.m, e.profile), (std::vector<uint8_t>{0, 1, 0}));
  // Whatever the target: the mark is for advise too.
  const Entries few(60, 10);
  EXPECT_EQ(analysis::regions_entered_too_often(few.m, few.profile),
            (std::vector<uint8_t>{0, 0, 0}));
}

// advise's steps, by fragment group: group 1 is region 1's start, group 2 its end, group 3 the
// chunks, group 4 region 3's start and end. Steps 0 and 3 run region 1's own code, step 2 region
// 3's: the regions come in the order of their first step.
TEST(Diagnosis, AdviseStepsThroughARegionsOwnCodeAreFoundByRegion) {
  ModelBuilder b;
  const uint32_t one = b.add_site(SiteKind::Parallel);
  const uint32_t loop = b.add_site(SiteKind::Loop);
  const uint32_t three = b.add_site(SiteKind::Parallel);
  uint32_t prev = b.strand(10);
  for (int i = 0; i < 100; ++i) {
    for (uint32_t region : {three, one}) {
      b.open(NodeKind::Parallel, region);
      const uint32_t fork = b.strand(30, {prev});
      b.open(NodeKind::Loop, loop);
      const uint32_t c0 = b.strand(100, {fork}, 0), c1 = b.strand(100, {fork}, 1);
      b.close();
      prev = b.strand(30, {c0, c1});
      b.close();
    }
  }
  Model m = b.finish();
  m.thread_count = 2;
  m.ticks_per_second = 1e9;
  m.fragments.resize(5);
  for (uint32_t s = 0; s < m.strands.size(); ++s) {
    model::Strand& st = m.strands[s];
    const bool start = s + 1 < m.strands.size() && m.strands[s + 1].site == loop;
    st.fragment = st.site == loop ? 3 : st.site == three ? 4 : st.site == one ? (start ? 1 : 2) : 0;
  }
  const std::vector<uint32_t> group_of = {0, 1, 2, 3, 4};
  const analysis::Profile profile = analysis::compute_profile(m);
  analysis::Advice advice;
  for (uint32_t g : {1, 3, 4, 2, 0}) advice.steps.push_back({.group = g});
  const auto regions = analysis::region_entry_steps(m, profile, group_of, advice);
  ASSERT_EQ(regions.size(), 2u);
  EXPECT_EQ(regions[0].site, one);
  EXPECT_EQ(regions[0].entries, 100u);
  ASSERT_EQ(regions[0].steps.size(), 2u);
  EXPECT_EQ(regions[0].steps[0].index, 0u);
  EXPECT_DOUBLE_EQ(regions[0].steps[0].share, 1.0);
  EXPECT_EQ(regions[0].steps[1].index, 3u);
  EXPECT_EQ(regions[1].site, three);
  ASSERT_EQ(regions[1].steps.size(), 1u);
  EXPECT_EQ(regions[1].steps[0].index, 2u);
  // No step: nothing to say.
  EXPECT_TRUE(analysis::region_entry_steps(m, profile, group_of, {}).empty());
}

TEST(Diagnosis, TheTargetIs8TimesTheCoresOrTheThreadsRecorded) {
  EXPECT_EQ(analysis::parallelism_target(2, 4), 32);
  EXPECT_EQ(analysis::parallelism_target(16, 4), 128);
  EXPECT_EQ(analysis::parallelism_target(0, 1), 8);
  Model m;
  m.thread_count = 1;
  EXPECT_EQ(analysis::parallelism_target(m), 8.0 * analysis::machine_cores());
  // The input's target, when given, is the one judged against; 0 takes the model's.
  const SerialThenTasks a;
  EXPECT_TRUE(analysis::diagnose(a.input(1)).empty());
  EXPECT_FALSE(analysis::diagnose(a.input(0)).empty());
}

}  // namespace
}  // namespace tasklens
