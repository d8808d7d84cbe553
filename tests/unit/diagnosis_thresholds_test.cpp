// analysis/diagnosis.hpp's thresholds, each just at and just past its boundary on hand-built
// models (the findings' figures and order are diagnosis_test.cpp's).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <variant>

#include "analysis/diagnosis.hpp"
#include "analysis/loops.hpp"
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
using fixtures::type_sizes;
using model::Model;
using model::SiteKind;

bool has(const std::vector<DiagnosisFinding>& findings, DiagnosisKind kind) {
  for (const DiagnosisFinding& f : findings)
    if (f.kind() == kind) return true;
  return false;
}

double above(double x) { return std::nextafter(x, std::numeric_limits<double>::infinity()); }
double below(double x) { return std::nextafter(x, 0.0); }

// Serial code of 100 before 4 tasks of 900 is 10% of the 1000 critical path: said. 99 of 999:
// not.
TEST(DiagnosisThresholds, SerialCodeHoldsATenthOfTheCriticalPath) {
  static_assert(analysis::kSerialCodePercent == 10);
  const SerialThenTasks at(100, 900);
  ASSERT_EQ(at.profile.span, 1000u);
  EXPECT_TRUE(has(analysis::diagnose(at.input(16)), DiagnosisKind::SerialCode));
  const SerialThenTasks under(99, 900);
  EXPECT_FALSE(has(analysis::diagnose(under.input(16)), DiagnosisKind::SerialCode));
}

// The findings about the program's parallelism are given below the target only: at it, none.
TEST(DiagnosisThresholds, ParallelismFindingsAreBelowTheTarget) {
  const SerialThenTasks a;  // parallelism 1000 / 700
  const double p = a.profile.parallelism;
  auto findings = analysis::diagnose(a.input(above(p)));
  EXPECT_TRUE(has(findings, DiagnosisKind::SerialCode));
  EXPECT_TRUE(has(findings, DiagnosisKind::LowParallelism));
  EXPECT_TRUE(analysis::diagnose(a.input(p)).empty());

  const Entries e(60);
  const double q = e.profile.parallelism;
  findings = analysis::diagnose(e.input(above(q)));
  EXPECT_TRUE(has(findings, DiagnosisKind::RegionEntries));
  EXPECT_TRUE(has(findings, DiagnosisKind::WhatIfGain));
  EXPECT_TRUE(analysis::diagnose(e.input(q)).empty());
}

// A task type is tiny with 8 tasks or more, half of them tiny or more.
TEST(DiagnosisThresholds, TinyTasksAreHalfOfEightOrMore) {
  static_assert(analysis::kTinyTasksMin == 8 && analysis::kTinyTasksPercent == 50);
  const Model m = fixtures::fork_join_model({100, 100, 100, 100});
  const analysis::Profile profile = analysis::compute_profile(m);
  auto tiny = [&](uint64_t count, uint64_t small) {
    const std::vector<analysis::TypeSizes> sizes = {type_sizes(1, count, small, 100, 10)};
    analysis::DiagnosisInput in = diagnosis_input(m, profile, 1);
    in.task_sizes = &sizes;
    in.tiny_size = 20;
    return has(analysis::diagnose(in), DiagnosisKind::TinyTasks);
  };
  EXPECT_TRUE(tiny(8, 4));
  EXPECT_FALSE(tiny(7, 7));
  EXPECT_FALSE(tiny(8, 3));
  EXPECT_TRUE(tiny(9, 5));
  EXPECT_FALSE(tiny(9, 4));
  // No tiny size: no finding.
  const std::vector<analysis::TypeSizes> sizes = {type_sizes(1, 8, 8, 100, 10)};
  analysis::DiagnosisInput in = diagnosis_input(m, profile, 1);
  in.task_sizes = &sizes;
  EXPECT_FALSE(has(analysis::diagnose(in), DiagnosisKind::TinyTasks));
}

// The workers' delay weighs a tiny-task type from kTinyTasksDelayFloor up. Loop chunks are told
// to be larger (no recursion is looked for).
TEST(DiagnosisThresholds, TinyTasksWeighAtLeastATenthOfTheirShare) {
  const Model m = fixtures::fork_join_model({100, 100, 100, 100});
  const analysis::Profile profile = analysis::compute_profile(m);
  const std::vector<analysis::TypeSizes> sizes = {type_sizes(1, 8, 8, 200, 10, 5, true)};
  auto weight = [&](uint64_t delay) {
    analysis::Schedule schedule;
    schedule.cumulative = 1000;
    schedule.total.delay = delay;
    analysis::DiagnosisInput in = diagnosis_input(m, profile, 1);
    in.task_sizes = &sizes;
    in.tiny_size = 20;
    in.schedule = &schedule;
    const auto findings = analysis::diagnose(in);
    EXPECT_EQ(findings.size(), 1u);
    if (findings.empty()) return -1.0;
    EXPECT_EQ(std::get<analysis::TinyTasks>(findings[0].figures).advice,
              analysis::TinyAdvice::LargerChunks);
    return findings[0].weight;
  };
  EXPECT_DOUBLE_EQ(weight(50), 0.5 * 0.1);
  EXPECT_DOUBLE_EQ(weight(100), 0.5 * 0.1);
  EXPECT_DOUBLE_EQ(weight(200), 0.5 * 0.2);
}

// 2 workers: fewer than 8 tasks holding a tenth of the work or more; or a task over the type's
// total / workers.
TEST(DiagnosisThresholds, FewTasksAreUnderFourPerWorkerWithATenthOfTheWork) {
  static_assert(analysis::kFewTasksPerWorker == 4);
  ModelBuilder b;
  b.add_site(SiteKind::Task);
  b.strand(1000);
  Model m = b.finish();
  m.thread_count = 2;
  const analysis::Profile profile = analysis::compute_profile(m);
  auto few = [&](uint64_t count, uint64_t total, uint64_t max) {
    const std::vector<analysis::TypeSizes> sizes = {type_sizes(1, count, 0, total, max)};
    analysis::DiagnosisInput in = diagnosis_input(m, profile, 1);
    in.task_sizes = &sizes;
    const auto findings = analysis::diagnose(in);
    return findings.empty()                                        ? std::string("none")
           : std::get<analysis::FewTasks>(findings[0].figures).few ? std::string("few")
                                                                   : std::string("dominant");
  };
  EXPECT_EQ(few(7, 100, 1), "few");
  EXPECT_EQ(few(8, 100, 1), "none");
  EXPECT_EQ(few(7, 99, 1), "none");
  EXPECT_EQ(few(8, 100, 51), "dominant");
  EXPECT_EQ(few(8, 100, 50), "none");
  EXPECT_EQ(few(1, 99, 99), "none");  // one task dominates nothing
}

// Static shares 10% apart: 900 and 1100 (the slowest 100 above the mean of 1000); 901 and 1099:
// not.
TEST(DiagnosisThresholds, UnevenSharesAreATenthApart) {
  static_assert(analysis::kImbalanceNote == 0.10);
  const StaticShares at(900, 1100);
  EXPECT_TRUE(
      has(analysis::diagnose(diagnosis_input(at.m, at.profile, 1)), DiagnosisKind::UnevenShares));
  const StaticShares under(901, 1099);
  EXPECT_FALSE(has(analysis::diagnose(diagnosis_input(under.m, under.profile, 1)),
                   DiagnosisKind::UnevenShares));
}

// Team-bound phases holding 10% of the region's work: 1000 of 10000; 999 of 9999: not.
TEST(DiagnosisThresholds, TeamBoundWorkIsATenthOfTheRegions) {
  static_assert(analysis::kTeamBoundShare == 0.10);
  const TeamRegion at(500, 500, 4500);
  ASSERT_EQ(at.profile.work, 10000u);
  EXPECT_TRUE(
      has(analysis::diagnose(diagnosis_input(at.m, at.profile, 1)), DiagnosisKind::TeamBound));
  const TeamRegion under(500, 499, 4500);
  EXPECT_FALSE(has(analysis::diagnose(diagnosis_input(under.m, under.profile, 1)),
                   DiagnosisKind::TeamBound));
}

// A region is entered too often from 64 entries.
TEST(DiagnosisThresholds, RegionEntriesFrom64Entries) {
  static_assert(analysis::kRegionEntries == 64);
  EXPECT_TRUE(has(analysis::diagnose(Entries(60, 64).input(16)), DiagnosisKind::RegionEntries));
  EXPECT_FALSE(has(analysis::diagnose(Entries(60, 63).input(16)), DiagnosisKind::RegionEntries));
}

// ... holding 10% of the critical path: 100 entries of 20 own and chunks of 100 after a lead of
// 8000 are 2000 of 20000; with a lead of 8001, not.
TEST(DiagnosisThresholds, RegionEntriesHoldATenthOfTheCriticalPath) {
  const Entries at(20, 100, 100, 8000);
  ASSERT_EQ(at.profile.span, 20000u);
  EXPECT_TRUE(has(analysis::diagnose(at.input(16)), DiagnosisKind::RegionEntries));
  EXPECT_FALSE(
      has(analysis::diagnose(Entries(20, 100, 100, 8001).input(16)), DiagnosisKind::RegionEntries));
}

// ... at most 50 us each on the critical path (1 tick = 1 ns: 50000). A counter metric has no
// time: the entries and the share decide alone.
TEST(DiagnosisThresholds, RegionEntriesCostAtMost50usEach) {
  EXPECT_TRUE(has(analysis::diagnose(Entries(50000).input(16)), DiagnosisKind::RegionEntries));
  Entries heavy(50001);
  EXPECT_FALSE(has(analysis::diagnose(heavy.input(16)), DiagnosisKind::RegionEntries));
  heavy.m.metric_is_time = false;
  EXPECT_TRUE(has(analysis::diagnose(heavy.input(16)), DiagnosisKind::RegionEntries));
  EXPECT_TRUE(has(analysis::diagnose(Entries(50001, 100, 100, 10, 0).input(16)),
                  DiagnosisKind::RegionEntries));
}

// A region whose own strands are team-bound work (gcc's static loops) is not entered too often:
// 100 entries of a team-bound phase of 2 x 50.
TEST(DiagnosisThresholds, ATeamBoundRegionIsNotEnteredTooOften) {
  ModelBuilder b;
  const uint32_t region = b.add_site(SiteKind::Parallel);
  uint32_t prev = b.strand(10);
  for (int i = 0; i < 100; ++i) {
    b.open(model::NodeKind::Parallel, region);
    b.open(model::NodeKind::Phase);
    std::vector<uint32_t> ends;
    for (uint32_t t = 0; t < 2; ++t) {
      b.open(model::NodeKind::ImplicitTask);
      ends.push_back(b.strand(50, {prev}, t));
      b.close();
    }
    b.close();
    b.close();
    prev = b.strand(0, ends);
  }
  Model m = b.finish();
  m.thread_count = 2;
  m.ticks_per_second = 1e9;
  const analysis::Profile profile = analysis::compute_profile(m);
  const auto findings = analysis::diagnose(diagnosis_input(m, profile, 16));
  EXPECT_TRUE(has(findings, DiagnosisKind::TeamBound));
  EXPECT_FALSE(has(findings, DiagnosisKind::RegionEntries));
  EXPECT_EQ(analysis::regions_entered_too_often(m, profile), (std::vector<uint8_t>{0, 0}));
}

analysis::Diff one_unit(double ratio, double cost_percent) {
  analysis::Diff d;
  analysis::UnitDiff u;
  u.name = "a.c:12";
  u.site_kind = SiteKind::Task;
  analysis::MetricDiff x;
  x.ratio = ratio;
  x.cost_percent = cost_percent;
  u.metrics = {x};
  d.sites = {u};
  return d;
}

// Work that grew 1.3x or more, costing 10% of the critical path or more.
TEST(DiagnosisThresholds, WorkInflationIs1Point3TimesAndATenthOfThePath) {
  static_assert(analysis::kInflationRatio == 1.3 && analysis::kInflationCostPercent == 10);
  const SerialThenTasks a;
  auto inflated = [&](double ratio, double cost) {
    const analysis::Diff d = one_unit(ratio, cost);
    analysis::DiagnosisInput in = a.input(1);
    in.base = &d;
    return has(analysis::diagnose(in), DiagnosisKind::WorkInflation);
  };
  EXPECT_TRUE(inflated(1.3, 10));
  EXPECT_FALSE(inflated(below(1.3), 10));
  EXPECT_FALSE(inflated(1.3, below(10)));
  EXPECT_FALSE(inflated(std::nan(""), 50));  // nothing in the base
}

// Splitting the top site 8 ways must raise the parallelism 1.5x: serial code of 1300 then one
// task of 800 (p = 1) gives 2100 / (1300 + 100) = 1.5; with 1301, 2101 / 1401 < 1.5 (then
// low-parallelism is said instead).
TEST(DiagnosisThresholds, WhatIfGainRaisesTheParallelismHalfAgain) {
  static_assert(analysis::kWhatIfGain == 1.5 && analysis::kWhatIfSplit == 8);
  auto findings = analysis::diagnose(SerialThenTasks(1300, 800, 1).input(16));
  ASSERT_TRUE(has(findings, DiagnosisKind::WhatIfGain));
  EXPECT_FALSE(has(findings, DiagnosisKind::LowParallelism));
  for (const DiagnosisFinding& f : findings) {
    if (f.kind() == DiagnosisKind::WhatIfGain) {
      EXPECT_DOUBLE_EQ(std::get<analysis::WhatIfGain>(f.figures).after, 1.5);
    }
  }
  findings = analysis::diagnose(SerialThenTasks(1301, 800, 1).input(16));
  EXPECT_FALSE(has(findings, DiagnosisKind::WhatIfGain));
  EXPECT_TRUE(has(findings, DiagnosisKind::LowParallelism));
}

// A robust span that moved the parallelism by 10% or more (10 as clipped, 11 or 9 measured);
// recorder stalls over 5% of the work (1000); a host that stole 10% of the CPUs' time.
TEST(DiagnosisThresholds, ARecordingIsDisturbedFromATenthOrATwentieth) {
  static_assert(analysis::kClippingMovePercent == 10 && analysis::kRecorderStallPercent == 5);
  Model m = fixtures::fork_join_model(std::vector<uint64_t>(10, 100));
  const analysis::Profile profile = analysis::compute_profile(m);
  ASSERT_DOUBLE_EQ(profile.parallelism, 10.0);
  analysis::Clipping clipping;
  clipping.strands.resize(1);
  auto disturbed = [&](double measured) {
    analysis::DiagnosisInput in = diagnosis_input(m, profile, 1);
    in.clipping = &clipping;
    in.measured.parallelism = measured;
    return has(analysis::diagnose(in), DiagnosisKind::Untrustworthy);
  };
  EXPECT_TRUE(disturbed(11));
  EXPECT_TRUE(disturbed(9));
  EXPECT_FALSE(disturbed(below(11)));
  EXPECT_FALSE(disturbed(above(9)));
  clipping.strands.clear();  // nothing clipped: the measured figures are the profile's
  EXPECT_FALSE(disturbed(20));

  const analysis::DiagnosisInput in = diagnosis_input(m, profile, 1);
  m.recorder_stalled = 50;
  EXPECT_FALSE(has(analysis::diagnose(in), DiagnosisKind::Untrustworthy));
  m.recorder_stalled = 51;
  EXPECT_TRUE(has(analysis::diagnose(in), DiagnosisKind::Untrustworthy));
  m.recorder_stalled = 0;
  m.host_steal_percent = below(model::kHostStealDisturbing);
  EXPECT_FALSE(has(analysis::diagnose(in), DiagnosisKind::Untrustworthy));
  m.host_steal_percent = model::kHostStealDisturbing;
  EXPECT_TRUE(has(analysis::diagnose(in), DiagnosisKind::Untrustworthy));
  m.host_steal_percent = -1;
  m.switches_lost = 1;
  EXPECT_TRUE(has(analysis::diagnose(in), DiagnosisKind::Untrustworthy));
}

// An advise step runs a region's own code when the region's own strands hold a third of its
// fragment's work: own code of 100 and two chunks of 100 in one fragment; with chunks of 101,
// not.
TEST(DiagnosisThresholds, AnAdviseStepThroughARegionIsAThirdOfItsWork) {
  static_assert(analysis::kRegionStepPart == 3);
  auto steps = [](uint64_t chunk) {
    Entries e(100, 100, chunk);
    e.m.fragments.resize(2);
    for (model::Strand& s : e.m.strands) s.fragment = s.site == 0 ? 0 : 1;
    const std::vector<uint32_t> group_of = {0, 1};
    analysis::Advice advice;
    advice.steps.push_back({.group = 1});
    return analysis::region_entry_steps(e.m, e.profile, group_of, advice);
  };
  const auto at = steps(100);
  ASSERT_EQ(at.size(), 1u);
  ASSERT_EQ(at[0].steps.size(), 1u);
  EXPECT_DOUBLE_EQ(at[0].steps[0].share, 1.0 / 3);
  EXPECT_TRUE(steps(101).empty());
}

}  // namespace
}  // namespace tasklens
