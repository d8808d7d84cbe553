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

}  // namespace
}  // namespace tasklens
