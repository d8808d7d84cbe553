// The robust span's rule in passes (analysis/stream_robust.hpp) against find_outliers on the
// same strands: the same clipped strands, works, quantiles and medians, exactly, on random
// models with outliers (by themselves and simultaneous), with works over every scale of the
// histogram (its exact buckets, its narrow ones and its wide ones); and ClippingSink's hand-over.
// (e2e_stream_test compares `report --stream` with `report` on real recordings.)
#include "analysis/stream_robust.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "model_fixtures.hpp"
#include "robust_models.hpp"

namespace tasklens {
namespace {

using analysis::Clipping;
using analysis::WorkBuckets;
using model::Model;
using namespace fixtures;  // robust_models.hpp

// How the rule was applied in passes: by the census alone, or after the refining pass.
enum class Way { Either, Refined };

// The passes over `m`'s strands in id order (so a clipped strand's order is its id): the census,
// then its decision when it can give one (unless `way` is Refined), else the refining pass's.
// `decided_at_once`: whether the census decided.
Clipping in_passes(const Model& m, Way way = Way::Either, bool* decided_at_once = nullptr) {
  Clipping none;
  const uint64_t floor = analysis::outlier_floor(m, analysis::OutlierRule{}.floor_seconds);
  if (decided_at_once) *decided_at_once = false;
  if (floor == 0) return none;
  auto play = [&m](model::StrandSink& sink) {
    for (const model::Strand& s : m.strands) {
      sink.times(s.start, s.end, s.thread);
      sink.strand(s.work, s.work, 0, nullptr, 0, nullptr, 0, 1, s.fragment, 0);
    }
  };
  analysis::OutlierCensus census(way == Way::Refined ? 0 : floor);
  play(census);
  std::vector<analysis::FragmentMeasure> plan = census.plan(floor);
  if (plan.empty()) {
    none.tested = true;
    none.floor = floor;
    return none;
  }
  if (std::optional<analysis::OutlierDecision> d = census.decide(floor)) {
    if (decided_at_once) *decided_at_once = true;
    return d->clipping;
  }
  analysis::OutlierRefine refine(std::move(plan), floor);
  play(refine);
  return refine.decide().clipping;
}

// Both ways in passes against find_outliers on `m`: its clipping, and whether the census decided
// by itself.
std::pair<Clipping, bool> expect_passes_match(const Model& m) {
  const Clipping memory = analysis::find_outliers(m);
  bool at_once = false;
  EXPECT_TRUE(same_clipping(in_passes(m, Way::Either, &at_once), memory));
  EXPECT_TRUE(same_clipping(in_passes(m, Way::Refined), memory));
  return {memory, at_once};
}

TEST(WorkBucketsTest, BucketsTileTheWorksInOrder) {
  EXPECT_EQ(WorkBuckets::of(0), 0u);
  EXPECT_EQ(WorkBuckets::of(127), 127u);
  EXPECT_EQ(WorkBuckets::width(127), 1u);
  EXPECT_EQ(WorkBuckets::low(128), 128u);
  for (uint32_t b = 0; WorkBuckets::low(b) < (uint64_t{1} << 62); ++b) {
    const uint64_t low = WorkBuckets::low(b), width = WorkBuckets::width(b);
    ASSERT_EQ(WorkBuckets::of(low), b);
    ASSERT_EQ(WorkBuckets::of(low + width - 1), b);
    ASSERT_EQ(WorkBuckets::low(b + 1), low + width) << "bucket " << b;
    ASSERT_LE(width * 64, std::max<uint64_t>(low, 64)) << "bucket " << b;  // 1/64 octave
  }
  EXPECT_EQ(WorkBuckets::of(~uint64_t{0}), WorkBuckets::of(uint64_t{1} << 63) + 63);
}

TEST(StreamRobustTest, OutliersInPassesAreFindOutliersOnRandomModels) {
  std::mt19937_64 rng(31);
  int clipped = 0, simultaneous = 0;
  for (int i = 0; i < 200; ++i) {
    SCOPED_TRACE("model " + std::to_string(i));
    Model m = random_timed_model(rng);
    const uint32_t n = static_cast<uint32_t>(m.strands.size());
    const int count = std::uniform_int_distribution<int>(0, 6)(rng);
    for (int k = 0; k < count; ++k)  // some 20 x p99 and more, some 5-20 x (clipped if overlapping)
      disturb(m, std::uniform_int_distribution<uint32_t>(0, n - 1)(rng),
              std::uniform_int_distribution<uint64_t>(5'000, 60'000)(rng));
    if (i % 5 == 0) m.strands[0].work = 5'000'000'000;  // a wide bucket
    const auto [memory, at_once] = expect_passes_match(m);
    // (The works are under 2^16 ticks but the one of 5 G: the census decides by itself.)
    EXPECT_TRUE(at_once || memory.strands.empty() && in_passes(m).strands.empty());
    clipped += !memory.strands.empty();
    for (const analysis::ClippedStrand& c : memory.strands) simultaneous += c.simultaneous;
  }
  // Both rules must have been exercised for the comparison to mean anything.
  EXPECT_GT(clipped, 50);
  EXPECT_GT(simultaneous, 5);
}

// Works spread over many octaves (log-uniform from 1 tick to 2^36): every rank falls in a
// bucket of another width, the medians and p99s in wide ones too.
TEST(StreamRobustTest, OrderStatisticsAreExactAtEveryScale) {
  std::mt19937_64 rng(32);
  int census_decided = 0, refined = 0;
  for (int i = 0; i < 100; ++i) {
    SCOPED_TRACE("model " + std::to_string(i));
    Model m = random_timed_model(rng);
    const int top = std::uniform_int_distribution<int>(8, 36)(rng);
    std::uniform_real_distribution<double> exponent(0, top);
    for (model::Strand& s : m.strands) {
      s.work = static_cast<uint64_t>(std::exp2(exponent(rng)));
      s.end = s.start + s.work;
    }
    const uint32_t n = static_cast<uint32_t>(m.strands.size());
    for (int k = 0; k < 3; ++k) {  // far above any p99
      const uint32_t s = std::uniform_int_distribution<uint32_t>(0, n - 1)(rng);
      disturb(m, s, uint64_t{1} << 50);
    }
    (expect_passes_match(m).second ? census_decided : refined) += 1;
  }
  EXPECT_GT(census_decided, 5);  // p99s and medians under 2^16 ticks
  EXPECT_GT(refined, 5);         // and above
}

// More strands above the floor than the census keeps: the refining pass decides, alike.
TEST(StreamRobustTest, TooManyStrandsAboveTheFloorForTheCensusAreRefined) {
  std::mt19937_64 rng(33);
  Model m = random_timed_model(rng);
  const uint32_t n = static_cast<uint32_t>(m.strands.size());
  for (int k = 0; k < 4; ++k)
    disturb(m, std::uniform_int_distribution<uint32_t>(0, n - 1)(rng), 40'000);
  const uint64_t floor = analysis::outlier_floor(m, 2e-6);
  ASSERT_GT(floor, 0u);
  uint64_t above = 0;
  for (const model::Strand& s : m.strands) above += s.work > floor;
  analysis::OutlierCensus small(floor, above - 1), enough(floor, above);
  for (analysis::OutlierCensus* c : {&small, &enough})
    for (const model::Strand& s : m.strands) {
      c->times(s.start, s.end, s.thread);
      c->strand(s.work, s.work, 0, nullptr, 0, nullptr, 0, 1, s.fragment, 0);
    }
  EXPECT_FALSE(small.decide(floor).has_value());
  ASSERT_TRUE(enough.decide(floor).has_value());
  EXPECT_FALSE(enough.decide(floor + 1).has_value());  // not the floor it kept strands above
  const Clipping memory = analysis::find_outliers(m);
  EXPECT_FALSE(memory.strands.empty());
  EXPECT_TRUE(same_clipping(enough.decide(floor)->clipping, memory));
  EXPECT_TRUE(same_clipping(in_passes(m, Way::Refined), memory));
}

TEST(StreamRobustTest, NothingAboveTheFloorNeedsNoSecondPass) {
  Model m = rounds_model(50, 4, usual_works(200), nullptr);
  analysis::OutlierCensus census;
  for (const model::Strand& s : m.strands) {
    census.times(s.start, s.end, s.thread);
    census.strand(s.work, s.work, 0, nullptr, 0, nullptr, 0, 1, s.fragment, 0);
  }
  EXPECT_TRUE(census.plan(analysis::outlier_floor(m, 2e-6)).empty());
  const Clipping c = in_passes(m);
  EXPECT_TRUE(c.tested);
  EXPECT_TRUE(c.strands.empty());
  EXPECT_TRUE(same_clipping(c, analysis::find_outliers(m)));
}

// What a sink was handed: each strand's work and span weight, and the region work before it.
struct Handed final : model::OptionalCallsSink {
  std::vector<std::pair<uint64_t, uint64_t>> strands;
  std::vector<uint64_t> regions;
  bool wants_regions() const override { return true; }
  void region_work(uint32_t, uint64_t work) override { regions.push_back(work); }
  Strand strand(uint64_t work, uint64_t span, uint32_t, const Strand*, uint32_t, const Instance*,
                uint32_t, uint64_t, uint32_t, uint64_t) override {
    strands.emplace_back(work, span);
    return 0;
  }
};

// One strand clipped: the `strand`-th handed over, from 1000 to 10.
Clipping one_clipped(uint64_t strand) {
  Clipping c;
  analysis::ClippedStrand x;
  x.strand = strand;
  x.work_raw = 1000;
  x.work_clipped = 10;
  c.strands = {x};
  return c;
}

TEST(ClippingSinkTest, HandsOverTheClippedWorkAndShrinksItsRegions) {
  const Clipping c = one_clipped(1);
  const std::vector<uint32_t> fragments{7};
  Handed target;
  analysis::ClippingSink sink(target, c, fragments);
  EXPECT_TRUE(sink.wants_regions());
  sink.region_work(0, 50);
  sink.strand(100, 100, 0, nullptr, 0, nullptr, 0, 1, 7, 0);
  sink.region_work(0, 500);
  sink.region_work(1, 50);  // 0.5 after the clip: not handed over (region work is > 0)
  sink.strand(1000, 1000, 0, nullptr, 0, nullptr, 0, 1, 7, 1);
  sink.strand(1000, 1000, 0, nullptr, 0, nullptr, 0, 1, 7, 2);
  ASSERT_EQ(target.strands.size(), 3u);
  EXPECT_EQ(target.strands[0], std::make_pair(uint64_t{100}, uint64_t{100}));
  EXPECT_EQ(target.strands[1], std::make_pair(uint64_t{10}, uint64_t{10}));
  EXPECT_EQ(target.strands[2], std::make_pair(uint64_t{1000}, uint64_t{1000}));
  EXPECT_EQ(target.regions, (std::vector<uint64_t>{50, 5}));
}

TEST(ClippingSinkTest, AStrandNotReadAlikeIsRefused) {
  const Clipping c = one_clipped(0);
  const std::vector<uint32_t> fragments{7};
  Handed target;
  analysis::ClippingSink other_work(target, c, fragments);
  EXPECT_THROW(other_work.strand(999, 999, 0, nullptr, 0, nullptr, 0, 1, 7, 0),
               analysis::ClippingSink::NotReadAlike);
  analysis::ClippingSink other_fragment(target, c, fragments);
  EXPECT_THROW(other_fragment.strand(1000, 1000, 0, nullptr, 0, nullptr, 0, 1, 8, 0),
               analysis::ClippingSink::NotReadAlike);
}

}  // namespace
}  // namespace tasklens
