// The one-pass profile (analysis/stream_profile.hpp) against compute_profile: identical figures,
// rows and critical path on random DAG models (recursion, shared instances, loop iterations seen
// together, what-if weights), on the hand-made shapes, with its path log in memory and spilled;
// and the memory it holds: the live strands follow the recursion's depth, not the task count.
// (Every model the builder makes in the model tests is also compared: trace_builder.hpp.)
#include "analysis/stream_profile.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "analyze_all.hpp"
#include "model_fixtures.hpp"

namespace tasklens {
namespace {

using analysis::compute_profile;
using analysis::Profile;
using analysis::stream_profile_of;
using analysis::StreamProfile;
using fixtures::profile_mismatch;
using model::Model;

void expect_same(const Model& m, const analysis::Weights* weights = nullptr) {
  const Profile expected = compute_profile(m, weights);
  EXPECT_EQ(profile_mismatch(stream_profile_of(m, weights), expected), "");
  // Blocks of 1, 2 and 5 strands: the walk back reads across block boundaries.
  for (uint64_t block : {1, 2, 5})
    EXPECT_EQ(profile_mismatch(stream_profile_of(m, weights, block), expected), "")
        << "path log in blocks of " << block;
}

analysis::Weights random_weights(std::mt19937_64& rng, const Model& m) {
  analysis::Weights w;
  for (const model::Strand& s : m.strands) {
    const uint64_t divisor = std::uniform_int_distribution<uint64_t>(1, 4)(rng);
    w.work.push_back(s.work + std::uniform_int_distribution<uint64_t>(0, 3)(rng));
    w.span.push_back(s.work / divisor);
  }
  return w;
}

// The critical path's log goes to disk as varints: every entry comes back, with no predecessor
// or one far back, the sites up to the last it can hold (those beyond read as kNoSite), weights
// up to the largest, backwards as finish() reads it and in any order.
TEST(StreamProfileTest, PathLogEntriesComeBackFromTheirBlocks) {
  std::mt19937_64 rng(3);
  using analysis::PathLog;
  for (uint64_t block : {1, 3, 100, 5000}) {
    PathLog log(block);
    std::vector<PathLog::Entry> want;
    for (uint64_t i = 0; i < 1000; ++i) {
      PathLog::Entry e;
      e.via = i == 0 || i % 7 == 0 ? PathLog::kNoVia : i - 1 - rng() % i;
      e.site = i % 5 == 0 ? PathLog::kNoSite + uint32_t(rng() % 2) : uint32_t(rng() % 40);
      e.weight = i % 9 == 0 ? ~uint64_t{0} : rng() >> (rng() % 64);
      log.push(e.via, e.site, e.weight);
      if (e.site > PathLog::kNoSite) e.site = PathLog::kNoSite;
      want.push_back(e);
    }
    std::vector<uint64_t> order(want.size());
    std::iota(order.rbegin(), order.rend(), uint64_t{0});
    for (int pass = 0; pass < 2; ++pass) {
      for (uint64_t i : order) {
        const PathLog::Entry got = log.at(i);
        ASSERT_EQ(got.via, want[i].via) << i << ", blocks of " << block;
        ASSERT_EQ(got.site, want[i].site) << i << ", blocks of " << block;
        ASSERT_EQ(got.weight, want[i].weight) << i << ", blocks of " << block;
      }
      std::shuffle(order.begin(), order.end(), rng);
    }
  }
}

TEST(StreamProfileTest, RandomModelsGiveTheSameProfile) {
  std::mt19937_64 rng(11);
  fixtures::RandomModelOptions opt;
  opt.max_strands = 120;
  opt.min_strands = 1;
  opt.max_depth = 7;
  for (int i = 0; i < 500; ++i) {
    SCOPED_TRACE("model " + std::to_string(i));
    expect_same(fixtures::random_model(rng, opt));
    if (HasFailure()) return;
  }
}

TEST(StreamProfileTest, RecursionAndSharedInstancesGiveTheSameProfile) {
  std::mt19937_64 rng(12);
  fixtures::RandomModelOptions opt;
  opt.max_strands = 200;
  opt.min_strands = 50;
  opt.site_count = 2;
  opt.max_depth = 10;
  opt.child_probability = 0.6;
  opt.share_probability = 0.6;
  opt.own_instance_probability = 0.2;
  for (int i = 0; i < 300; ++i) {
    SCOPED_TRACE("model " + std::to_string(i));
    expect_same(fixtures::random_model(rng, opt));
    if (HasFailure()) return;
  }
}

TEST(StreamProfileTest, DenseModelsAndZeroWorkGiveTheSameProfile) {
  std::mt19937_64 rng(13);
  fixtures::RandomModelOptions opt;
  opt.max_strands = 150;
  opt.min_strands = 30;
  opt.max_extra_preds = 6;
  opt.chain_probability = 0.3;
  opt.source_probability = 0.2;
  opt.zero_work_probability = 0.5;
  opt.max_work = 3;  // many ties between paths: the same one must win
  for (int i = 0; i < 300; ++i) {
    SCOPED_TRACE("model " + std::to_string(i));
    expect_same(fixtures::random_model(rng, opt));
    if (HasFailure()) return;
  }
}

TEST(StreamProfileTest, IterationsSeenTogetherAndWhatIfWeightsGiveTheSameProfile) {
  std::mt19937_64 rng(14);
  fixtures::RandomModelOptions opt;
  opt.max_strands = 100;
  opt.min_strands = 10;
  opt.max_work = 60;
  for (int i = 0; i < 300; ++i) {
    SCOPED_TRACE("model " + std::to_string(i));
    Model m = fixtures::random_model(rng, opt);
    fixtures::add_divisible(rng, m, 0.3, 40);
    expect_same(m);
    const analysis::Weights w = random_weights(rng, m);
    expect_same(m, &w);
    if (HasFailure()) return;
  }
}

TEST(StreamProfileTest, HandMadeShapesGiveTheSameProfile) {
  expect_same(fixtures::chain_model({3, 0, 5, 7}));
  expect_same(fixtures::fork_join_model({4, 9, 2, 9}));
  expect_same(fixtures::fib_model(12));
  expect_same(fixtures::unbalanced_tree_model(7));
  expect_same(Model{});  // no strands, no nodes
}

// fib(n)'s strands in serial-elision order: a strand is live until its task's join, so the pass
// holds about three strands per level of the recursion, whatever n.
TEST(StreamProfileTest, LiveStrandsFollowTheDepthNotTheTaskCount) {
  for (uint32_t n : {10u, 16u, 20u}) {
    const Model m = fixtures::fib_model(n);
    uint64_t peak = 0;
    const Profile p = stream_profile_of(m, nullptr, uint64_t{1} << 20, &peak);
    EXPECT_EQ(profile_mismatch(p, compute_profile(m)), "");
    EXPECT_LE(peak, 3u * n + 4) << "fib(" << n << "), " << m.strands.size() << " strands";
    EXPECT_GE(peak, n) << "fib(" << n << ")";
  }
}

// The engine by hand: two instances of one site, one inside the other (a recursion), and a
// second site; figures worked out on paper.
TEST(StreamProfileTest, OuterInstancesCountAndInnerOnesDoNot) {
  StreamProfile stream(3);
  const auto outer = stream.open_instance(1);
  const uint32_t in_outer[] = {outer};
  const auto a = stream.strand(4, 4, 1, nullptr, 0, in_outer, 1);
  const auto inner = stream.open_instance(1);
  stream.not_outermost(inner);
  const auto other = stream.open_instance(2);
  const uint32_t in_both[] = {outer, other};
  const uint32_t from_a[] = {a};
  const auto b = stream.strand(10, 10, 2, from_a, 1, in_both, 2);
  const auto c = stream.strand(6, 6, 2, from_a, 1, in_both, 2);
  stream.close_instance(other);
  stream.close_instance(inner);
  const uint32_t joins[] = {b, c};
  const auto d = stream.strand(1, 1, 1, joins, 2, in_outer, 1);
  stream.close_instance(outer);
  const uint32_t after[] = {d};
  stream.strand(2, 2, 0, after, 1, nullptr, 0);
  for (auto s : {a, b, c, d}) stream.release(s);
  const Profile p = stream.finish();
  EXPECT_EQ(p.work, 23u);
  EXPECT_EQ(p.span, 17u);  // 4 + 10 + 1 + 2
  EXPECT_EQ(p.critical_path, (std::vector<uint32_t>{0, 1, 3, 4}));
  ASSERT_EQ(p.sites.size(), 3u);
  // Site 1: two instances, the outer one measured (work 21, span 15); 5 of the path.
  // Site 2: one instance, b and c side by side (work 16, span 10); 10 of the path.
  EXPECT_EQ(p.sites[0].site, 2u);
  EXPECT_EQ(p.sites[0].count, 1u);
  EXPECT_EQ(p.sites[0].work, 16u);
  EXPECT_EQ(p.sites[0].span, 10u);
  EXPECT_EQ(p.sites[0].critical_work, 10u);
  EXPECT_EQ(p.sites[1].site, 1u);
  EXPECT_EQ(p.sites[1].count, 2u);
  EXPECT_EQ(p.sites[1].work, 21u);
  EXPECT_EQ(p.sites[1].span, 15u);
  EXPECT_EQ(p.sites[1].critical_work, 5u);
  EXPECT_EQ(p.sites[2].site, 0u);
  EXPECT_EQ(p.sites[2].critical_work, 2u);
}

// A strand released and its slot reused by a strand of a later instance of the same slot: the
// old strand's distance inside the closed instance must not count in the new one.
TEST(StreamProfileTest, ARecycledInstanceDoesNotSeeItsPredecessorsDistances) {
  StreamProfile stream(2);
  const auto first = stream.open_instance(1);
  const uint32_t in_first[] = {first};
  const auto a = stream.strand(100, 100, 1, nullptr, 0, in_first, 1);
  stream.close_instance(first);
  const auto second = stream.open_instance(1);  // the same slot, a new serial
  EXPECT_EQ(second, first);
  const uint32_t in_second[] = {second};
  const uint32_t from_a[] = {a};
  const auto b = stream.strand(5, 5, 1, from_a, 1, in_second, 1);
  stream.close_instance(second);
  stream.release(a);
  stream.release(b);
  const Profile p = stream.finish();
  EXPECT_EQ(p.span, 105u);
  ASSERT_EQ(p.sites.size(), 1u);
  EXPECT_EQ(p.sites[0].count, 2u);
  EXPECT_EQ(p.sites[0].span, 105u);  // 100 and 5: each instance alone
}

// A random DAG with nested instances played into StreamProfile, each strand's predecessors
// listed, or (`joins`) a random first part of them folded into a join passed in their place
// (model::StrandSink::open_join, as the builder's streaming mode passes what a taskwait or a
// barrier waits for). The sites: 0 around everything, 1 on runs of strands, 2 inside those and,
// now and then, 1 again inside 1 (a recursion). Each strand is given a random place in the order
// it was "met" (StrandSink's `order`). `shuffled`: the strands come in a random topological order
// instead of the ids' (every instance open from the start to the end), and the critical path is
// given back as strand ids.
Profile play_random(uint64_t seed, bool joins, bool shuffled = false) {
  std::mt19937_64 rng(seed);
  const uint32_t n = 2 + static_cast<uint32_t>(rng() % 80);
  std::vector<std::vector<uint32_t>> preds(n);
  std::vector<uint64_t> work(n);
  for (uint32_t s = 0; s < n; ++s) {
    work[s] = rng() % 4 == 0 ? 0 : rng() % 50;  // zero work: ties
    for (uint32_t k = 0, count = static_cast<uint32_t>(rng() % 5); s > 0 && k < count; ++k)
      preds[s].push_back(static_cast<uint32_t>(rng() % s));
  }
  std::vector<uint64_t> met(n);
  std::iota(met.begin(), met.end(), uint64_t{0});
  std::shuffle(met.begin(), met.end(), rng);
  // Instances as runs [begin, end) of strands, outermost first: (site, begin, end, nested).
  struct Run {
    uint32_t site, begin, end;
    bool nested;
  };
  std::vector<Run> runs{{0, 0, n, false}};
  for (uint32_t b = 0; b < n;) {
    const uint32_t e = std::min(n, b + 1 + static_cast<uint32_t>(rng() % 12));
    if (rng() % 2) {
      runs.push_back({1, b, e, false});
      const uint32_t inner = b + static_cast<uint32_t>(rng() % (e - b));
      runs.push_back({rng() % 3 ? 2u : 1u, inner, e, false});
      runs.back().nested = runs.back().site == 1;
    }
    b = e;
  }
  // The order they come in: the ids', or a random one with every strand after its predecessors.
  std::mt19937_64 play_rng(seed * 7919 + 1);
  std::vector<uint32_t> arrival;
  if (!shuffled) {
    for (uint32_t s = 0; s < n; ++s) arrival.push_back(s);
  } else {
    std::vector<uint32_t> waiting(n), ready;
    std::vector<std::vector<uint32_t>> succs(n);
    for (uint32_t s = 0; s < n; ++s) {
      std::sort(preds[s].begin(), preds[s].end());
      preds[s].erase(std::unique(preds[s].begin(), preds[s].end()), preds[s].end());
      waiting[s] = static_cast<uint32_t>(preds[s].size());
      for (uint32_t p : preds[s]) succs[p].push_back(s);
      if (waiting[s] == 0) ready.push_back(s);
    }
    while (!ready.empty()) {
      const size_t k = play_rng() % ready.size();
      const uint32_t s = ready[k];
      ready.erase(ready.begin() + static_cast<std::ptrdiff_t>(k));
      arrival.push_back(s);
      for (uint32_t q : succs[s])
        if (--waiting[q] == 0) ready.push_back(q);
    }
  }
  StreamProfile stream(3, 4);
  std::vector<StreamProfile::Instance> open(runs.size());
  auto open_run = [&](size_t r) {
    open[r] = stream.open_instance(runs[r].site);
    if (runs[r].nested) stream.not_outermost(open[r]);
  };
  if (shuffled)
    for (size_t r = 0; r < runs.size(); ++r) open_run(r);
  std::vector<StreamProfile::Strand> handle(n);
  for (const uint32_t s : arrival) {
    std::vector<StreamProfile::Instance> around;
    std::vector<uint32_t> sites_around;
    for (size_t r = 0; r < runs.size(); ++r) {
      if (!shuffled && runs[r].begin == s) open_run(r);
      if (runs[r].begin <= s && s < runs[r].end &&
          std::find(sites_around.begin(), sites_around.end(), runs[r].site) == sites_around.end()) {
        around.push_back(open[r]);
        sites_around.push_back(runs[r].site);
      }
    }
    std::vector<StreamProfile::Strand> listed;
    for (uint32_t p : preds[s]) listed.push_back(handle[p]);
    std::shuffle(listed.begin(), listed.end(), play_rng);
    StreamProfile::Strand join = 0;
    const bool joined = joins && listed.size() >= 2;
    if (joined) {
      const size_t folded = 1 + play_rng() % listed.size();
      join = stream.open_join();
      for (size_t k = 0; k < folded; ++k) stream.fold(join, listed[k]);
      listed.erase(listed.begin(), listed.begin() + static_cast<std::ptrdiff_t>(folded));
      listed.insert(listed.begin(), join);
    }
    handle[s] = stream.strand(work[s], work[s], sites_around.back(), listed.data(),
                              static_cast<uint32_t>(listed.size()), around.data(),
                              static_cast<uint32_t>(around.size()), 1, 0, met[s]);
    if (joined) stream.release(join);
    if (!shuffled)
      for (size_t r = runs.size(); r-- > 0;)
        if (runs[r].end == s + 1) stream.close_instance(open[r]);
  }
  if (shuffled)
    for (size_t r = runs.size(); r-- > 0;) stream.close_instance(open[r]);
  Profile p = stream.finish();
  for (uint32_t& s : p.critical_path) s = arrival[s];
  return p;
}

// What a join passes on is what its strands would have, listed: the same distances, inside every
// instance too, and the same ties, so the same critical path.
TEST(StreamProfileTest, PredecessorsFoldedIntoAJoinCountAsIfListed) {
  for (uint64_t seed = 1; seed <= 400; ++seed)
    EXPECT_EQ(profile_mismatch(play_random(seed, true), play_random(seed, false)), "")
        << "seed " << seed;
}

// The DAG in memory and a one-pass reading visit strands in different topological orders; where
// paths of equal length meet (zero work makes many here), the critical path must still be the
// same one, or the sites' shares of it differ: ties go to the strand met first, whatever order
// the strands arrive in and however their predecessors are listed or grouped into joins.
TEST(StreamProfileTest, TiesGoTheSameWayWhateverOrderStrandsComeIn) {
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    const Profile in_order = play_random(seed, false);
    EXPECT_EQ(profile_mismatch(play_random(seed, false, true), in_order), "") << "seed " << seed;
    EXPECT_EQ(profile_mismatch(play_random(seed, true, true), in_order), "") << "seed " << seed;
  }
}

// The same rule in memory: a model whose strands were met in another order than their ids.
TEST(StreamProfileTest, TiesFollowTheOrderStrandsWereMetInMemoryToo) {
  std::mt19937_64 rng(5);
  fixtures::RandomModelOptions opt;
  opt.max_strands = 120;
  opt.min_strands = 1;
  opt.max_depth = 7;
  for (int i = 0; i < 300; ++i) {
    SCOPED_TRACE("model " + std::to_string(i));
    Model m = fixtures::random_model(rng, opt);
    for (model::Strand& s : m.strands) s.work = rng() % 3 == 0 ? 0 : s.work % 4;  // ties
    m.strand_order.resize(m.strands.size());
    std::iota(m.strand_order.begin(), m.strand_order.end(), 0u);
    std::shuffle(m.strand_order.begin(), m.strand_order.end(), rng);
    expect_same(m);
    if (HasFailure()) return;
  }
}

// A join folded into a join, an empty one, and a join whose instance closed before its use.
TEST(StreamProfileTest, JoinsOfJoinsEmptyJoinsAndClosedInstances) {
  StreamProfile stream(2);
  const auto outer = stream.open_instance(0);
  const auto inner = stream.open_instance(1);
  const uint32_t both[] = {outer, inner}, only_outer[] = {outer};
  const auto a = stream.strand(7, 7, 1, nullptr, 0, both, 2);
  const auto b = stream.strand(9, 9, 1, nullptr, 0, both, 2);
  const auto j1 = stream.open_join(), j2 = stream.open_join(), empty = stream.open_join();
  stream.fold(j1, a);
  stream.fold(j2, b);
  stream.fold(j2, empty);  // brings nothing
  stream.fold(j1, j2);
  stream.close_instance(inner);  // its distances go with it
  const auto preds = std::vector<StreamProfile::Strand>{empty, j1};
  const auto c = stream.strand(5, 5, 0, preds.data(), 2, only_outer, 1);
  stream.close_instance(outer);
  for (auto s : {a, b, j1, j2, empty, c}) stream.release(s);
  const Profile p = stream.finish();
  EXPECT_EQ(p.span, 14u);  // b then c
  EXPECT_EQ(p.work, 21u);
  ASSERT_EQ(p.sites.size(), 2u);
  for (const analysis::SiteRow& r : p.sites) {
    if (r.site == 0) {
      EXPECT_EQ(r.span, 14u);  // the outer instance sees b's path
    } else {
      EXPECT_EQ(r.span, 9u);
    }
  }
  EXPECT_EQ(p.critical_path, (std::vector<uint32_t>{1, 2}));  // arrivals: b, c
}

}  // namespace
}  // namespace tasklens
