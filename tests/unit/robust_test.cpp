// The disturbance-robust span (analysis/robust.hpp): an outlier strand of a code fragment is
// clipped to the fragment's median and no longer decides the span; legitimately long strands
// (a fragment with few samples, or whose strands vary widely, or below the floor) stay; the
// measured figures are still available; random models without outliers are left alone; the
// time-overlap rule agrees with brute force.
#include "analysis/robust.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <vector>

#include "analysis/algebra.hpp"
#include "analysis/profile.hpp"
#include "model_fixtures.hpp"
#include "report/profile_report.hpp"
#include "report/whatif_report.hpp"
#include "robust_models.hpp"

namespace tasklens {
namespace {

using analysis::Clipping;
using analysis::longest_path;
using fixtures::ModelBuilder;
using namespace fixtures;  // robust_models.hpp
using model::kNone;
using model::Model;
using model::NodeKind;
using model::SiteKind;

TEST(RobustSpanTest, AnOutlierOnTheCriticalPathIsClippedToTheUndisturbedSpan) {
  const uint32_t rounds = 50, width = 8;
  std::vector<uint64_t> works = usual_works(rounds * width);
  const uint64_t median = median_of(works);
  std::vector<uint32_t> tasks;
  Model m = rounds_model(rounds, width, works, &tasks);
  const uint64_t undisturbed = longest_path(m);
  // A task of round 7 whose own work is the median, in a round with a longer task: clipped to
  // the median, the round's span is what it was.
  uint32_t victim = model::kNone;
  for (uint32_t i = 7 * width; i < 8 * width; ++i)
    if (works[i] == median) victim = i;
  ASSERT_NE(victim, model::kNone);
  ASSERT_LT(median, *std::max_element(works.begin() + 7 * width, works.begin() + 8 * width));
  disturb(m, tasks[victim], 5'000'000);  // a 5 ms pause in a 1 us strand
  const uint64_t disturbed = longest_path(m);
  ASSERT_GT(disturbed, undisturbed + 4'000'000);

  const Clipping c = analysis::clip_outliers(m);
  EXPECT_TRUE(c.tested);
  EXPECT_EQ(c.floor, 2'000u);
  ASSERT_EQ(c.strands.size(), 1u);
  EXPECT_EQ(c.strands[0].strand, tasks[victim]);
  EXPECT_EQ(c.strands[0].work_raw, 5'000'000u);
  EXPECT_EQ(c.strands[0].work_clipped, median);
  EXPECT_EQ(c.strands[0].thread, victim % width);
  EXPECT_EQ(c.strands[0].fragment_samples, rounds * width);
  EXPECT_FALSE(c.strands[0].simultaneous);
  EXPECT_EQ(c.clipped_work, 5'000'000u - median);
  EXPECT_EQ(m.strands[tasks[victim]].work, median);
  EXPECT_EQ(longest_path(m), undisturbed);

  // The measured figures come back from the clipping: work, span and parallelism as recorded.
  uint64_t work = 0;
  for (const model::Strand& s : m.strands) work += s.work;
  const analysis::SpanFigures raw = analysis::measured_figures(m, c, work, longest_path(m));
  EXPECT_EQ(raw.span, disturbed);
  EXPECT_EQ(raw.work, work + c.clipped_work);
  EXPECT_DOUBLE_EQ(raw.parallelism, analysis::parallelism_of(raw.work, disturbed));
  const std::vector<uint64_t> measured = analysis::measured_work(m, c);
  EXPECT_EQ(measured[tasks[victim]], 5'000'000u);
  EXPECT_EQ(longest_path(m, nullptr, measured.data()), disturbed);
  EXPECT_EQ(analysis::measured_span(m, c), disturbed);

  // Loop iterations seen only together (divisible strands, the clipped one among them) weigh
  // one iteration in the measured span as in every longest path.
  for (uint32_t s : {tasks[0], tasks[victim]})
    if (s != tasks[0] || victim != 0) m.divisible.push_back({s, 4});
  std::sort(m.divisible.begin(), m.divisible.end(),
            [](const model::DivisibleStrand& a, const model::DivisibleStrand& b) {
              return a.strand < b.strand;
            });
  EXPECT_EQ(analysis::measured_span(m, c), longest_path(m, nullptr, measured.data()));
  EXPECT_LT(analysis::measured_span(m, c), disturbed);
}

TEST(RobustSpanTest, WorksBeyond32BitsAreJudgedAlike) {
  std::vector<uint32_t> tasks;
  Model m = rounds_model(50, 8, usual_works(400), &tasks);
  disturb(m, tasks[100], 5'000'000);
  // A 5-second serial strand elsewhere (fragment 2, 101 strands: not judged) makes the works
  // too wide for 32 bits.
  m.strands[0].work = 5'000'000'000;
  const Clipping c = analysis::find_outliers(m);
  ASSERT_EQ(c.strands.size(), 1u);
  EXPECT_EQ(c.strands[0].strand, tasks[100]);
  EXPECT_EQ(c.strands[0].work_clipped, median_of(usual_works(400)));
  EXPECT_EQ(c.strands[0].fragment_quantile, 1100u);
}

TEST(RobustSpanTest, RawModeKeepsTheMeasuredSpan) {
  std::vector<uint32_t> tasks;
  Model m = rounds_model(50, 8, usual_works(400), &tasks);
  disturb(m, tasks[100], 5'000'000);
  const uint64_t measured = longest_path(m);
  // Finding the outliers does not change the model; only applying the clipping does.
  const Clipping c = analysis::find_outliers(m);
  EXPECT_EQ(c.strands.size(), 1u);
  EXPECT_EQ(m.strands[tasks[100]].work, 5'000'000u);
  EXPECT_EQ(longest_path(m), measured);
  // Nothing clipped: the measured figures are the given ones, without a second path.
  const analysis::SpanFigures same = analysis::measured_figures(m, Clipping{}, 123, 45);
  EXPECT_EQ(same.work, 123u);
  EXPECT_EQ(same.span, 45u);
}

TEST(RobustSpanTest, AFragmentWithFewSamplesKeepsItsLongStrand) {
  // 24 x 8 = 192 strands of the fragment: under the 200 samples a typical size needs.
  std::vector<uint32_t> tasks;
  Model m = rounds_model(24, 8, usual_works(192), &tasks);
  disturb(m, tasks[50], 5'000'000);
  const uint64_t measured = longest_path(m);
  const Clipping c = analysis::clip_outliers(m);
  EXPECT_TRUE(c.strands.empty());
  EXPECT_EQ(longest_path(m), measured);
  // With 200 samples the same strand goes.
  std::vector<uint32_t> more;
  Model n = rounds_model(25, 8, usual_works(200), &more);
  disturb(n, more[50], 5'000'000);
  EXPECT_EQ(analysis::clip_outliers(n).strands.size(), 1u);
}

TEST(RobustSpanTest, AFragmentWhoseStrandsVaryWidelyKeepsItsLongStrands) {
  // Strand sizes spread log-uniformly from 1 us to 10 ms (a recursive sort's leaves, say):
  // the longest is no outlier.
  std::mt19937_64 rng(7);
  std::vector<uint64_t> works(800);
  for (uint64_t& w : works)
    w = static_cast<uint64_t>(std::exp(
        std::uniform_real_distribution<double>(std::log(1'000.0), std::log(10'000'000.0))(rng)));
  std::vector<uint32_t> tasks;
  Model m = rounds_model(100, 8, works, &tasks);
  const uint64_t measured = longest_path(m);
  const Clipping c = analysis::clip_outliers(m);
  EXPECT_TRUE(c.tested);
  EXPECT_TRUE(c.strands.empty());
  EXPECT_EQ(longest_path(m), measured);
}

TEST(RobustSpanTest, AStrandUnderTheFloorStays) {
  // 1.8 us in a fragment of 50 ns strands: over 20 times the p99, but under the 2 us floor.
  std::vector<uint32_t> tasks;
  Model m = rounds_model(50, 8, usual_works(400, 50), &tasks);
  disturb(m, tasks[100], 1'800);
  EXPECT_TRUE(analysis::clip_outliers(m).strands.empty());
  // At a slower clock the same ticks are longer than the floor.
  Model slow = rounds_model(50, 8, usual_works(400, 50), &tasks);
  set_rate(slow, 1e8);
  disturb(slow, tasks[100], 1'800);
  EXPECT_EQ(analysis::clip_outliers(slow).strands.size(), 1u);
}

TEST(RobustSpanTest, CountsOtherThanCyclesAreNotJudged) {
  std::vector<uint32_t> tasks;
  Model m = rounds_model(50, 8, usual_works(400), &tasks);
  disturb(m, tasks[100], 5'000'000);
  m.metric = "instructions";
  m.metric_is_time = false;
  m.ticks_per_second = 0;
  Clipping c = analysis::clip_outliers(m);
  EXPECT_FALSE(c.tested);
  EXPECT_TRUE(c.strands.empty());
  // Cycles run at about the TSC's rate: judged with it.
  m.metric = "cycles";
  c = analysis::clip_outliers(m);
  EXPECT_TRUE(c.tested);
  EXPECT_EQ(c.strands.size(), 1u);
}

TEST(RobustSpanTest, UnknownFragmentsAndSyntheticStrandsAreNotJudged) {
  std::vector<uint32_t> tasks;
  Model m = rounds_model(50, 8, usual_works(400), &tasks);
  for (uint32_t s : tasks) m.strands[s].fragment = 0;  // code addresses unknown
  disturb(m, tasks[100], 5'000'000);
  EXPECT_TRUE(analysis::clip_outliers(m).strands.empty());
}

TEST(RobustSpanTest, SimultaneousStrandsOfTwoThreadsAreClippedAtALowerFactor) {
  // 160 us in strands of 20 to 22 us: 7.6 x the p99, under the factor 20, over 5.
  const uint64_t stretched = 160'000;
  const std::vector<uint64_t> works = usual_works(400, 20'000);
  std::vector<uint32_t> tasks;
  Model m = rounds_model(50, 8, works, &tasks);
  disturb(m, tasks[100], stretched);  // round 12, thread 4
  EXPECT_TRUE(analysis::find_outliers(m).strands.empty());
  // Another thread's strand stretched over the same window: one pause of the machine.
  disturb(m, tasks[101], stretched);  // round 12, thread 5
  Clipping c = analysis::find_outliers(m);
  ASSERT_EQ(c.strands.size(), 2u);
  EXPECT_TRUE(c.strands[0].simultaneous);
  EXPECT_TRUE(c.strands[1].simultaneous);
  // The same strand of the same thread (a later round) is no evidence.
  Model same = rounds_model(50, 8, works, &tasks);
  disturb(same, tasks[100], stretched);
  disturb(same, tasks[108], stretched);  // round 13, thread 4
  EXPECT_TRUE(analysis::find_outliers(same).strands.empty());
  // Two threads at different times neither.
  Model apart = rounds_model(50, 8, works, &tasks);
  disturb(apart, tasks[100], stretched);
  disturb(apart, tasks[109], stretched);  // round 13, thread 5
  EXPECT_TRUE(analysis::find_outliers(apart).strands.empty());
}

TEST(RobustSpanTest, ClippedStrandsRegionWorkShrinksWithThem) {
  std::vector<uint32_t> tasks;
  Model m = rounds_model(50, 8, usual_works(400), &tasks);
  disturb(m, tasks[100], 5'000'000);
  m.region_names = {"solve"};
  m.region_work = {{tasks[99], 0, 500}, {tasks[100], 0, 4'000'000}, {tasks[101], 0, 700}};
  const Clipping c = analysis::clip_outliers(m);
  ASSERT_EQ(c.strands.size(), 1u);
  EXPECT_EQ(m.region_work[0].work, 500u);
  EXPECT_EQ(m.region_work[1].work, 4'000'000 * c.strands[0].work_clipped / 5'000'000);
  EXPECT_LE(m.region_work[1].work, m.strands[tasks[100]].work);
  EXPECT_EQ(m.region_work[2].work, 700u);
}

// The rule's bounds, each strict: a fragment of 199 strands is not judged, one of 200 is; a
// strand of exactly 20 x q stays, one tick more goes; a strand of exactly the floor stays. With
// usual_works(400) q is 1100 (36 strands of 1100 fill ranks 364-399 of the 400; q is rank 396
// of the 399 others), and the clipped work is the fragment's upper median, its 201st smallest
// strand: 1050 (37 + 37 + 36 + 36 + 36 strands of 1000 to 1040, the disturbed strand having
// been one of 1040, then 36 of 1050).
TEST(RobustSpanTest, TheRulesBoundsAreStrict) {
  std::vector<uint32_t> tasks;
  for (uint32_t rounds : {199u, 200u}) {
    Model m = rounds_model(rounds, 1, usual_works(rounds), &tasks);
    disturb(m, tasks[50], 5'000'000);
    EXPECT_EQ(analysis::find_outliers(m).strands.size(), rounds >= 200 ? 1u : 0u) << rounds;
  }
  for (uint64_t work : {22'000u, 22'001u}) {
    Model m = rounds_model(50, 8, usual_works(400), &tasks);
    disturb(m, tasks[100], work);
    const Clipping c = analysis::find_outliers(m);
    if (work == 22'000) {
      EXPECT_TRUE(c.strands.empty()) << "exactly 20 x q";
      continue;
    }
    ASSERT_EQ(c.strands.size(), 1u);
    EXPECT_EQ(c.strands[0].fragment_quantile, 1100u);
    EXPECT_EQ(c.strands[0].work_clipped, 1050u);
    EXPECT_EQ(c.clipped_work, 22'001u - 1050);
  }
  // Strands of 50 (q = 50, 20 x q = 1000): the floor of 2000 decides.
  for (uint64_t work : {2'000u, 2'001u}) {
    Model m = rounds_model(50, 8, usual_works(400, 50), &tasks);
    disturb(m, tasks[100], work);
    EXPECT_EQ(analysis::find_outliers(m).strands.size(), work > 2'000 ? 1u : 0u) << work;
  }
}

// Only strands that ran on a worker are judged: a synthetic strand (no thread) is not.
TEST(RobustSpanTest, AStrandOfNoWorkerIsNotJudged) {
  std::vector<uint32_t> tasks;
  Model m = rounds_model(50, 8, usual_works(400), &tasks);
  disturb(m, tasks[100], 5'000'000);
  m.strands[tasks[100]].thread = kNone;
  EXPECT_TRUE(analysis::find_outliers(m).strands.empty());
}

// The lower factor needs the other thread's strand to be a suspect too (above 5 x its q): with
// strands of 20 to 22 us (q = 22'000), a 160 us strand beside another thread's strand of exactly
// 110 us stays; beside one of 110'001 ticks both go.
TEST(RobustSpanTest, TheOtherSimultaneousStrandMustBeAboveFiveTimesItsQuantile) {
  for (uint64_t other : {110'000u, 110'001u}) {
    std::vector<uint32_t> tasks;
    Model m = rounds_model(50, 8, usual_works(400, 20'000), &tasks);
    disturb(m, tasks[100], 160'000);  // round 12, thread 4
    disturb(m, tasks[101], other);    // round 12, thread 5: at the same time
    const Clipping c = analysis::find_outliers(m);
    if (other == 110'000) {
      EXPECT_TRUE(c.strands.empty());
      continue;
    }
    ASSERT_EQ(c.strands.size(), 2u);
    EXPECT_EQ(c.strands[0].strand, tasks[100]);
    EXPECT_EQ(c.strands[1].strand, tasks[101]);
    EXPECT_TRUE(c.strands[0].simultaneous && c.strands[1].simultaneous);
    EXPECT_EQ(c.strands[0].fragment_quantile, 22'000u);
  }
}

// What report shows: both spans and the clipped strands (JSON), the two figures and a warning
// when the parallelisms differ by more than 10% (table); without a clipping, the raw figures are
// the robust ones and the list is empty.
TEST(RobustSpanReportTest, ReportShowsBothSpansAndTheClippedStrands) {
  std::vector<uint32_t> tasks;
  Model m = rounds_model(50, 8, usual_works(400), &tasks);
  disturb(m, tasks[100], 5'000'000);
  const Clipping c = analysis::clip_outliers(m);
  ASSERT_EQ(c.strands.size(), 1u);
  const analysis::Profile p = analysis::compute_profile(m);
  report::SpanAccount account;
  account.clipping = &c;
  account.measured = analysis::measured_figures(m, c, p.work, p.span);
  account.fragments = {"fib.c:31-33"};
  const std::vector<report::SiteLabel> labels(m.sites.size());
  report::RunInfo info;
  info.span_mode = "robust";
  const auto j = nlohmann::json::parse(
      report::render_profile(m, p, labels, info, report::Format::Json, 10, &account));
  EXPECT_EQ(j["span_mode"], "robust");
  EXPECT_EQ(j["program"]["span"], p.span);
  EXPECT_EQ(j["program"]["span_raw"], account.measured.span);
  EXPECT_EQ(j["program"]["work_raw"], p.work + c.clipped_work);
  EXPECT_DOUBLE_EQ(j["program"]["parallelism_raw"].get<double>(), account.measured.parallelism);
  EXPECT_EQ(j["clipped_count"], 1);
  EXPECT_EQ(j["clipped_work"], c.clipped_work);
  ASSERT_EQ(j["clipped_strands"].size(), 1u);
  const auto& x = j["clipped_strands"][0];
  EXPECT_EQ(x["strand"], tasks[100]);
  EXPECT_EQ(x["thread"], 4);
  EXPECT_EQ(x["fragment"], "fib.c:31-33");
  EXPECT_EQ(x["work_raw"], 5'000'000);
  EXPECT_EQ(x["work_clipped"], c.strands[0].work_clipped);
  EXPECT_EQ(x["begin"], m.strands[tasks[100]].start);
  EXPECT_EQ(x["end"], m.strands[tasks[100]].start + 5'000'000);

  const std::string table =
      report::render_profile(m, p, labels, info, report::Format::Table, 10, &account);
  EXPECT_NE(table.find("span " + report::format_work(m, p.span) + " (robust; " +
                       report::format_work(m, account.measured.span) +
                       " as measured: 1 strand clipped, see --raw-span)"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("warning: the parallelism as measured"), std::string::npos) << table;

  // Nothing clipped: the same keys, the raw figures equal to the robust ones, no span line.
  const Clipping none;
  report::SpanAccount empty;
  empty.clipping = &none;
  const auto k = nlohmann::json::parse(
      report::render_profile(m, p, labels, info, report::Format::Json, 10, &empty));
  EXPECT_EQ(k["program"]["span_raw"], p.span);
  EXPECT_EQ(k["clipped_count"], 0);
  EXPECT_TRUE(k["clipped_strands"].empty());
  EXPECT_EQ(report::render_profile(m, p, labels, info, report::Format::Table, 10, &empty)
                .find("as measured"),
            std::string::npos);
}

// The report names clipped strands' fragments without labelling every fragment: the same names.
TEST(RobustSpanReportTest, SomeFragmentsAreLabelledAsAllOfThem) {
  Model m = rounds_model(3, 2, usual_works(6), nullptr);
  m.fragments = {{0, 0}, {0x100, 0x200}, {0, 0x300}, {0x400, 0}, {0x500, 0x500}};
  const std::vector<report::SiteLabel> sites(m.sites.size());
  const report::FragmentLabels all = report::label_fragments(m, {}, sites);
  const std::vector<uint32_t> some{4, 0, 2, 3, 1, 2};
  const std::vector<std::string> labels = report::label_some_fragments(m, {}, some);
  ASSERT_EQ(labels.size(), some.size());
  for (size_t i = 0; i < some.size(); ++i)
    EXPECT_EQ(labels[i], all.label[all.group_of[some[i]]]) << "fragment " << some[i];
  EXPECT_EQ(labels[1], "<unknown>");
  EXPECT_EQ(labels[2], "start-0x300");
  EXPECT_EQ(labels[3], "0x400-end");
}

// ---- Random models.

TEST(RobustSpanRandomTest, WithoutOutliersRobustAndRawSpansAreIdentical) {
  std::mt19937_64 rng(19);
  for (int i = 0; i < 200; ++i) {
    SCOPED_TRACE("model " + std::to_string(i));
    Model m = random_timed_model(rng);
    const Model before = m;
    const uint64_t raw = longest_path(m);
    const Clipping c = analysis::clip_outliers(m);
    ASSERT_TRUE(c.tested);
    EXPECT_TRUE(c.strands.empty());
    EXPECT_EQ(longest_path(m), raw);
    for (uint32_t s = 0; s < m.strands.size(); ++s)
      ASSERT_EQ(m.strands[s].work, before.strands[s].work);
  }
}

TEST(RobustSpanRandomTest, InjectedOutliersAreExactlyTheClippedStrands) {
  std::mt19937_64 rng(20);
  for (int i = 0; i < 200; ++i) {
    SCOPED_TRACE("model " + std::to_string(i));
    Model m = random_timed_model(rng);
    const uint32_t n = static_cast<uint32_t>(m.strands.size());
    // Up to 2 per fragment (of 300 strands or more) stay under 1% of it: its p99 is still an
    // undisturbed strand's.
    std::set<uint32_t> injected;
    std::vector<int> per_fragment(m.fragments.size(), 0);
    const int count = std::uniform_int_distribution<int>(1, 6)(rng);
    while (injected.size() < static_cast<size_t>(count)) {
      const uint32_t s = std::uniform_int_distribution<uint32_t>(0, n - 1)(rng);
      if (!injected.count(s) && per_fragment[m.strands[s].fragment] < 2) {
        ++per_fragment[m.strands[s].fragment];
        injected.insert(s);
      }
    }
    for (uint32_t s : injected) disturb(m, s, 30'000 + s);  // over 20 x 1000, above the floor
    const uint64_t raw = longest_path(m);
    uint64_t work = 0;
    for (const model::Strand& s : m.strands) work += s.work;

    const Clipping c = analysis::clip_outliers(m);
    std::set<uint32_t> clipped;
    for (const analysis::ClippedStrand& x : c.strands) {
      clipped.insert(x.strand);
      EXPECT_LE(x.work_clipped, 1000u);
      EXPECT_EQ(m.strands[x.strand].work, x.work_clipped);
    }
    EXPECT_EQ(clipped, injected);
    const uint64_t robust = longest_path(m);
    EXPECT_LE(robust, raw);
    const analysis::SpanFigures measured =
        analysis::measured_figures(m, c, work - c.clipped_work, robust);
    EXPECT_EQ(measured.span, raw);
    EXPECT_EQ(measured.work, work);
  }
}

// Large models are read on two threads: the same clipping as one thread's.
TEST(RobustSpanRandomTest, TwoThreadsFindTheSameOutliers) {
  std::mt19937_64 rng(22);
  for (int i = 0; i < 100; ++i) {
    SCOPED_TRACE("model " + std::to_string(i));
    Model m = random_timed_model(rng);
    const uint32_t n = static_cast<uint32_t>(m.strands.size());
    for (int k = 0; k < 3; ++k)
      disturb(m, std::uniform_int_distribution<uint32_t>(0, n - 1)(rng), 30'000 + k);
    if (i % 2) m.strands[0].work = 5'000'000'000;  // works beyond 32 bits
    const Clipping one = analysis::find_outliers(m, {}, kNone);
    const Clipping two = analysis::find_outliers(m, {}, 0);
    EXPECT_FALSE(one.strands.empty());
    EXPECT_TRUE(same_clipping(one, two));
  }
}

// The sweep's "overlaps a suspect of another thread" against all pairs: strands at 7 to 17 x
// their fragment's p99 (suspects, not outliers by themselves) on random threads and times.
TEST(RobustSpanRandomTest, SimultaneityMatchesAllPairs) {
  std::mt19937_64 rng(21);
  int with_overlap = 0, without = 0;  // both cases must occur for the test to mean anything
  for (int i = 0; i < 300; ++i) {
    SCOPED_TRACE("model " + std::to_string(i));
    std::vector<uint32_t> tasks;
    Model m = rounds_model(50, 8, usual_works(400, 20'000), &tasks);
    const int count = std::uniform_int_distribution<int>(1, 4)(rng);
    std::set<uint32_t> chosen;
    while (chosen.size() < static_cast<size_t>(count))
      chosen.insert(tasks[std::uniform_int_distribution<uint32_t>(0, 399)(rng)]);
    std::uniform_int_distribution<uint64_t> when(1, 400'000);
    std::uniform_int_distribution<uint32_t> thread(0, 2);
    for (uint32_t s : chosen) {
      const uint64_t start = when(rng);
      fixtures::set_time(m, s, thread(rng), start, start + 150'000 + start % 200'000);
      m.strands[s].work = m.strands[s].end - m.strands[s].start;
    }
    std::set<uint32_t> expected;
    for (uint32_t a : chosen)
      for (uint32_t b : chosen) {
        const model::Strand &x = m.strands[a], &y = m.strands[b];
        if (x.thread != y.thread && x.start < y.end && y.start < x.end) expected.insert(a);
      }
    std::set<uint32_t> got;
    for (const analysis::ClippedStrand& c : analysis::find_outliers(m).strands) {
      got.insert(c.strand);
      EXPECT_TRUE(c.simultaneous);
    }
    EXPECT_EQ(got, expected);
    ++(expected.empty() ? without : with_overlap);
  }
  EXPECT_GT(with_overlap, 30);
  EXPECT_GT(without, 30);
}

}  // namespace
}  // namespace tasklens
