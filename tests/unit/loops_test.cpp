// analysis/loops.hpp on hand-built models: loops seen together, uneven static shares, and
// regions whose threads split their work without a construct (team-bound).
#include "analysis/loops.hpp"

#include <gtest/gtest.h>

#include "model_fixtures.hpp"

namespace tasklens {
namespace {

using fixtures::ModelBuilder;
using model::NodeKind;
using model::SiteKind;

const analysis::LoopFacts* facts_of(const std::vector<analysis::LoopFacts>& all, uint32_t site) {
  for (const analysis::LoopFacts& f : all)
    if (f.site == site) return &f;
  return nullptr;
}

// Two threads' static shares of 32 iterations, 3200 and 6400: per share 3200 and 6400 against
// a mean of 4800, so the slowest share is 33% above the mean.
TEST(Loops, UnevenStaticSharesAreMeasuredPerIteration) {
  ModelBuilder b;
  const uint32_t loop = b.add_site(SiteKind::Loop);
  const uint32_t before = b.strand(10);
  const uint32_t instance = b.new_instance();
  b.open(NodeKind::Loop, loop, instance);
  b.open(NodeKind::Chunk);
  const uint32_t a = b.strand(3200, {before});
  b.close();
  b.close();
  b.open(NodeKind::Loop, loop, instance);
  const uint32_t c = b.strand(6400, {before}, 1);  // a one-thread team's share: no chunk node
  b.close();
  b.strand(0, {a, c});
  model::Model m = b.finish();
  m.divisible = {{a, 32}, {c, 32}};
  const auto all = analysis::loop_facts(m);
  const analysis::LoopFacts* f = facts_of(all, loop);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->strands_together, 2u);
  EXPECT_EQ(f->iterations_together, 64u);
  EXPECT_EQ(f->static_instances, 1u);
  EXPECT_NEAR(f->share_imbalance, 1.0 / 3, 1e-9);
  // Shares of different iteration counts compare per iteration: 16 iterations of 3200 against
  // 48 of 6400 is 200 against 133 per iteration.
  m.divisible = {{a, 16}, {c, 48}};
  const auto uneven = analysis::loop_facts(m);
  f = facts_of(uneven, loop);
  ASSERT_NE(f, nullptr);
  const double t0 = 3200.0 / 16 * 32, t1 = 6400.0 / 48 * 32, mean = (t0 + t1) / 2;
  EXPECT_NEAR(f->share_imbalance, (t0 - mean) / mean, 1e-9);
}

// A dynamic loop (several chunks per thread) has no static shares to compare.
TEST(Loops, ChunkedSharesAreNotStatic) {
  ModelBuilder b;
  const uint32_t loop = b.add_site(SiteKind::Loop);
  const uint32_t instance = b.new_instance();
  std::vector<uint32_t> chunks;
  for (uint32_t t = 0; t < 2; ++t) {
    b.open(NodeKind::Loop, loop, instance);
    for (int k = 0; k < 2; ++k) {
      b.open(NodeKind::Chunk);
      chunks.push_back(b.strand(400 * (t + 1), {}, t));
      b.close();
    }
    b.close();
  }
  model::Model m = b.finish();
  for (uint32_t s : chunks) m.divisible.push_back({s, 4});
  const auto all = analysis::loop_facts(m);
  const analysis::LoopFacts* f = facts_of(all, loop);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->strands_together, 4u);
  EXPECT_EQ(f->static_instances, 0u);
  EXPECT_EQ(f->share_imbalance, 0.0);
}

// A region whose phase is two one-strand implicit tasks is team-bound; one with a loop is not.
TEST(Loops, PhasesWithoutConstructsAreTeamBound) {
  ModelBuilder b;
  const uint32_t bound = b.add_site(SiteKind::Parallel), seen = b.add_site(SiteKind::Parallel);
  const uint32_t loop = b.add_site(SiteKind::Loop);
  b.open(NodeKind::Parallel, bound);
  b.open(NodeKind::Phase);
  for (uint32_t t = 0; t < 2; ++t) {
    b.open(NodeKind::ImplicitTask);
    b.strand(500, {}, t);
    b.close();
  }
  b.close();
  b.close();
  b.open(NodeKind::Parallel, seen);
  b.open(NodeKind::Phase);
  for (uint32_t t = 0; t < 2; ++t) {
    b.open(NodeKind::ImplicitTask);
    b.open(NodeKind::Loop, loop);
    b.strand(500, {}, t);
    b.close();
    b.close();
  }
  model::Model m = b.finish();
  const auto all = analysis::loop_facts(m);
  const analysis::LoopFacts* f = facts_of(all, bound);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->team_bound_work, 1000u);
  EXPECT_EQ(f->team, 2u);
  EXPECT_EQ(facts_of(all, seen), nullptr);
}

// A site's imbalance over several static instances: the excess of each instance's slowest share
// over its mean, summed, over the sum of the means. Instance 1: shares of 3200 and 6400 (32
// iterations each): mean 4800, excess 1600; instance 2: 1000 and 1000: mean 1000, excess 0.
// So 1600 / 5800. A loop of one share (a one-thread team's) has no shares to compare.
TEST(Loops, ASitesImbalanceSumsItsStaticInstancesExcessOverTheirMeans) {
  ModelBuilder b;
  const uint32_t loop = b.add_site(SiteKind::Loop), alone = b.add_site(SiteKind::Loop);
  std::vector<model::DivisibleStrand> divisible;
  const uint64_t works[2][2] = {{3200, 6400}, {1000, 1000}}, iterations[2] = {32, 10};
  for (uint32_t i = 0; i < 2; ++i) {
    const uint32_t instance = b.new_instance();
    for (uint32_t t = 0; t < 2; ++t) {
      b.open(NodeKind::Loop, loop, instance);
      divisible.push_back({b.strand(works[i][t], {}, t), uint32_t(iterations[i])});
      b.close();
    }
  }
  b.open(NodeKind::Loop, alone);
  divisible.push_back({b.strand(640), 64});
  b.close();
  model::Model m = b.finish();
  m.divisible = divisible;  // (in strand order already)
  const auto all = analysis::loop_facts(m);
  const analysis::LoopFacts* f = facts_of(all, loop);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->strands_together, 4u);
  EXPECT_EQ(f->iterations_together, 2u * 32 + 2 * 10);
  EXPECT_EQ(f->static_instances, 2u);
  EXPECT_NEAR(f->share_imbalance, 1600.0 / 5800, 1e-12);
  const analysis::LoopFacts* g = facts_of(all, alone);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->strands_together, 1u);
  EXPECT_EQ(g->iterations_together, 64u);
  EXPECT_EQ(g->static_instances, 0u);
  EXPECT_EQ(g->share_imbalance, 0.0);
}

// A parallel site's team-bound work sums its team-bound phases and its team is the largest of
// their teams: phases of 2 and 3 one-strand implicit tasks. A phase where an implicit task has
// two strands (something the runtime reported split it) is not team-bound, nor is one of no
// work.
TEST(Loops, TeamBoundWorkSumsTheBoundPhasesAndTheTeamIsTheLargest) {
  ModelBuilder b;
  const uint32_t region = b.add_site(SiteKind::Parallel), idle = b.add_site(SiteKind::Parallel);
  b.open(NodeKind::Parallel, region);
  const std::vector<std::vector<uint64_t>> phases = {{100, 200}, {10, 20, 30}, {1000, 1000}};
  for (size_t k = 0; k < phases.size(); ++k) {
    b.open(NodeKind::Phase);
    for (uint32_t t = 0; t < phases[k].size(); ++t) {
      b.open(NodeKind::ImplicitTask);
      b.strand(phases[k][t], {}, t);
      if (k == 2 && t == 0) b.strand(5, {}, t);  // the third phase: split by an event
      b.close();
    }
    b.close();
  }
  b.close();
  b.open(NodeKind::Parallel, idle);
  b.open(NodeKind::Phase);
  for (uint32_t t = 0; t < 4; ++t) {
    b.open(NodeKind::ImplicitTask);
    b.strand(0, {}, t);
    b.close();
  }
  const model::Model m = b.finish();
  const auto all = analysis::loop_facts(m);
  const analysis::LoopFacts* f = facts_of(all, region);
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->team_bound_work, 300u + 60);
  EXPECT_EQ(f->team, 3u);
  EXPECT_EQ(facts_of(all, idle), nullptr);
}

}  // namespace
}  // namespace tasklens
