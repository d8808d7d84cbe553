// The parallelism profile against brute force on random DAG models, and against hand-computed
// values on small shapes (chain, fork/join, recursion, nesting, loop shares, zero work).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "analysis/algebra.hpp"
#include "analysis/profile.hpp"
#include "model_fixtures.hpp"

namespace tasklens {
namespace {

using analysis::compute_profile;
using analysis::longest_path;
using analysis::Profile;
using analysis::SiteRow;
using fixtures::ModelBuilder;
using model::kNone;
using model::Model;
using model::NodeKind;
using model::SiteKind;

// ---- Brute force, written independently of the implementation: it follows successor lists
// (not the topological numbering) and uses ordered containers instead of flat scratch arrays.

// A strand's weight on paths: its work, or for loop iterations seen only together
// (Model::divisible, looked up linearly) one iteration's share, rounded up.
uint64_t path_weight_of(const Model& m, uint32_t s) {
  for (const model::DivisibleStrand& d : m.divisible)
    if (d.strand == s) return (m.strands[s].work + d.iterations - 1) / d.iterations;
  return m.strands[s].work;
}

std::vector<std::vector<uint32_t>> successors(const Model& m, const std::vector<bool>& in) {
  std::vector<std::vector<uint32_t>> succ(m.strands.size());
  for (uint32_t s = 0; s < m.strands.size(); ++s) {
    if (!in[s]) continue;
    for (uint32_t p : m.preds_of(s)) {
      if (in[p]) succ[p].push_back(s);
    }
  }
  return succ;
}

// Longest path over the strands in `in`, using only edges with both ends in `in`: memoized
// "longest path starting here" over successors.
uint64_t brute_span(const Model& m, const std::vector<bool>& in) {
  const auto succ = successors(m, in);
  std::vector<int64_t> memo(m.strands.size(), -1);
  std::function<uint64_t(uint32_t)> from = [&](uint32_t s) -> uint64_t {
    if (memo[s] >= 0) return memo[s];
    uint64_t best = 0;
    for (uint32_t t : succ[s]) best = std::max(best, from(t));
    memo[s] = static_cast<int64_t>(best + path_weight_of(m, s));
    return memo[s];
  };
  uint64_t span = 0;
  for (uint32_t s = 0; s < m.strands.size(); ++s) {
    if (in[s]) span = std::max(span, from(s));
  }
  return span;
}

// Every path from every strand, enumerated (only for tiny models: exponential).
uint64_t exhaustive_span(const Model& m) {
  const auto succ = successors(m, std::vector<bool>(m.strands.size(), true));
  uint64_t best = 0;
  std::function<void(uint32_t, uint64_t)> walk = [&](uint32_t s, uint64_t sum) {
    sum += path_weight_of(m, s);
    best = std::max(best, sum);
    for (uint32_t t : succ[s]) walk(t, sum);
  };
  for (uint32_t s = 0; s < m.strands.size(); ++s) walk(s, 0);
  return best;
}

struct BruteRow {
  uint64_t count = 0, work = 0, span = 0, critical_work = 0;
};

// Per-site rows straight from the definitions in profile.hpp.
std::map<uint32_t, BruteRow> brute_rows(const Model& m, const std::vector<uint32_t>& path) {
  // (site, instance key) -> nodes; a node without instance id is keyed by -(node + 1).
  using Key = std::pair<uint32_t, int64_t>;
  auto key_of = [&](uint32_t v) -> Key {
    const auto& node = m.nodes[v];
    return {node.site, node.instance == kNone ? -static_cast<int64_t>(v) - 1 : node.instance};
  };
  std::map<Key, std::vector<uint32_t>> instances;
  for (uint32_t v = 0; v < m.nodes.size(); ++v) {
    if (m.nodes[v].site != kNone) instances[key_of(v)].push_back(v);
  }
  bool program_has_node = false;
  for (const auto& [key, nodes] : instances) program_has_node |= key.first == 0;
  if (!program_has_node && !m.nodes.empty()) instances[{0, -1}] = {0};

  std::map<uint32_t, BruteRow> rows;
  for (const auto& strand : m.strands) rows[strand.site];
  for (uint32_t s : path) rows[m.strands[s].site].critical_work += path_weight_of(m, s);
  for (const auto& [key, nodes] : instances) {
    BruteRow& row = rows[key.first];
    ++row.count;
    bool outermost = true;
    for (uint32_t v : nodes) {
      for (uint32_t u = m.nodes[v].parent; u != kNone; u = m.nodes[u].parent) {
        if (m.nodes[u].site == key.first && key_of(u) != key) outermost = false;
      }
    }
    if (!outermost) continue;
    std::vector<bool> in(m.strands.size(), false);
    for (uint32_t v : nodes) {
      for (uint32_t s = m.nodes[v].strand_begin; s < m.nodes[v].strand_end; ++s) in[s] = true;
    }
    for (uint32_t s = 0; s < m.strands.size(); ++s) {
      if (in[s]) row.work += m.strands[s].work;
    }
    row.span += brute_span(m, in);
  }
  return rows;
}

bool has_edge(const Model& m, uint32_t from, uint32_t to) {
  for (uint32_t p : m.preds_of(to)) {
    if (p == from) return true;
  }
  return false;
}

// Everything the profile promises, checked against brute force. `tiny` adds path enumeration.
void check_profile(const Model& m, bool tiny) {
  ASSERT_EQ(fixtures::check_model(m), "");
  const Profile p = compute_profile(m);
  const uint32_t n = static_cast<uint32_t>(m.strands.size());

  uint64_t work = 0;
  for (const auto& s : m.strands) work += s.work;
  EXPECT_EQ(p.work, work);
  const uint64_t span = brute_span(m, std::vector<bool>(n, true));
  EXPECT_EQ(p.span, span);
  if (tiny) {
    EXPECT_EQ(p.span, exhaustive_span(m));
  }
  EXPECT_EQ(longest_path(m), span);
  if (span > 0) {
    EXPECT_DOUBLE_EQ(p.parallelism, static_cast<double>(work) / static_cast<double>(span));
  } else {
    EXPECT_EQ(p.parallelism, 0.0);
  }

  // The critical path: an actual source-to-sink path of weight span.
  ASSERT_EQ(p.critical_path.empty(), n == 0);
  if (n > 0) {
    EXPECT_EQ(m.pred_begin[p.critical_path.front()], m.pred_begin[p.critical_path.front() + 1]);
    for (uint32_t s = p.critical_path.back() + 1; s < n; ++s) {
      EXPECT_FALSE(has_edge(m, p.critical_path.back(), s)) << "path does not end at a sink";
    }
  }
  uint64_t weight = 0;
  for (size_t i = 0; i < p.critical_path.size(); ++i) {
    ASSERT_LT(p.critical_path[i], n);
    weight += path_weight_of(m, p.critical_path[i]);
    if (i > 0) {
      EXPECT_TRUE(has_edge(m, p.critical_path[i - 1], p.critical_path[i])) << i;
    }
  }
  EXPECT_EQ(weight, span);
  std::vector<uint32_t> path;
  longest_path(m, &path);
  EXPECT_EQ(path, p.critical_path);

  // Site rows; measured on two threads, they are the same.
  const Profile shared = compute_profile(m, nullptr, /*shared_sites_from=*/0);
  EXPECT_EQ(shared.span, p.span);
  EXPECT_EQ(shared.critical_path, p.critical_path);
  ASSERT_EQ(shared.sites.size(), p.sites.size());
  for (size_t i = 0; i < p.sites.size(); ++i) {
    EXPECT_EQ(shared.sites[i].site, p.sites[i].site) << i;
    EXPECT_EQ(shared.sites[i].count, p.sites[i].count) << i;
    EXPECT_EQ(shared.sites[i].work, p.sites[i].work) << i;
    EXPECT_EQ(shared.sites[i].span, p.sites[i].span) << i;
    EXPECT_EQ(shared.sites[i].critical_work, p.sites[i].critical_work) << i;
  }
  const auto expected = brute_rows(m, p.critical_path);
  ASSERT_EQ(p.sites.size(), expected.size());
  double percent_sum = 0;
  for (size_t i = 0; i < p.sites.size(); ++i) {
    const SiteRow& row = p.sites[i];
    SCOPED_TRACE("site " + std::to_string(row.site));
    ASSERT_TRUE(expected.count(row.site));
    const BruteRow& want = expected.at(row.site);
    EXPECT_EQ(row.count, want.count);
    EXPECT_EQ(row.work, want.work);
    EXPECT_EQ(row.span, want.span);
    EXPECT_EQ(row.critical_work, want.critical_work);
    EXPECT_LE(row.work, p.work) << "site work exceeds program work";
    EXPECT_LE(row.span, row.work);
    EXPECT_FALSE(std::isnan(row.parallelism));
    EXPECT_FALSE(std::isnan(row.critical_path_percent));
    if (row.span > 0) {
      EXPECT_DOUBLE_EQ(row.parallelism, static_cast<double>(row.work) / row.span);
    }
    percent_sum += row.critical_path_percent;
    if (i > 0) {
      const SiteRow& prev = p.sites[i - 1];
      const bool ordered =
          prev.critical_path_percent > row.critical_path_percent ||
          (prev.critical_path_percent == row.critical_path_percent &&
           (prev.work > row.work || (prev.work == row.work && prev.site < row.site)));
      EXPECT_TRUE(ordered) << "rows out of order at " << i;
    }
  }
  if (span > 0) {
    EXPECT_NEAR(percent_sum, 100.0, 1e-9);
  } else {
    EXPECT_EQ(percent_sum, 0.0);
  }
}

const SiteRow* find_row(const Profile& p, uint32_t site) {
  for (const auto& row : p.sites) {
    if (row.site == site) return &row;
  }
  return nullptr;
}

// ---- Random models against brute force.

TEST(ProfileRandomTest, TinyModelsMatchExhaustivePaths) {
  std::mt19937_64 rng(1);
  fixtures::RandomModelOptions opt;
  opt.max_strands = 12;
  opt.min_strands = 6;
  opt.max_depth = 4;
  opt.share_probability = 0.5;
  for (int i = 0; i < 1500; ++i) {
    SCOPED_TRACE("model " + std::to_string(i));
    check_profile(fixtures::random_model(rng, opt), /*tiny=*/true);
    if (HasFailure()) return;
  }
}

// Loop iterations seen only together weigh one iteration on every path (site spans, the
// program's span, the critical path's shares).
TEST(ProfileRandomTest, ModelsWithIterationsSeenTogetherMatchBruteForce) {
  std::mt19937_64 rng(7);
  fixtures::RandomModelOptions opt;
  opt.max_strands = 60;
  opt.min_strands = 10;
  opt.max_depth = 6;
  opt.max_work = 40;
  for (int i = 0; i < 600; ++i) {
    SCOPED_TRACE("model " + std::to_string(i));
    Model m = fixtures::random_model(rng, opt);
    fixtures::add_divisible(rng, m, 0.3);
    check_profile(m, /*tiny=*/false);
    if (HasFailure()) return;
  }
}

TEST(ProfileTest, IterationSpanIsOneIterationRoundedUp) {
  using analysis::iteration_span;
  EXPECT_EQ(iteration_span(100, 0), 100u);
  EXPECT_EQ(iteration_span(100, 1), 100u);
  EXPECT_EQ(iteration_span(100, 4), 25u);
  EXPECT_EQ(iteration_span(101, 4), 26u);
  EXPECT_EQ(iteration_span(3, 64), 1u);
  EXPECT_EQ(iteration_span(0, 64), 0u);
}

// A loop of two static shares of 32 iterations (work 3200 and 6400) after a serial strand of
// 50: the span is 50 + 6400 / 32, not 50 + 6400; the path's shares and path_weight agree.
TEST(ProfileTest, AStaticShareWeighsOneIterationOnPaths) {
  ModelBuilder b;
  const uint32_t loop = b.add_site(model::SiteKind::Loop, 0x100);
  const uint32_t s0 = b.strand(50);
  const uint32_t instance = b.new_instance();
  b.open(model::NodeKind::Loop, loop, instance);
  const uint32_t a = b.strand(3200, {s0});
  b.close();
  b.open(model::NodeKind::Loop, loop, instance);
  const uint32_t c = b.strand(6400, {s0}, 1);
  b.close();
  b.strand(0, {a, c});
  Model m = b.finish();
  m.divisible = {{1, 32}, {2, 32}};
  const Profile p = compute_profile(m);
  EXPECT_EQ(p.work, 9650u);
  EXPECT_EQ(p.span, 250u);
  EXPECT_EQ(longest_path(m), 250u);
  EXPECT_EQ(analysis::path_weight(m, 2, 6400), 200u);
  EXPECT_EQ(analysis::path_weight(m, 0, 50), 50u);
  const SiteRow* row = find_row(p, loop);
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->span, 200u);
  EXPECT_EQ(row->critical_work, 200u);
  EXPECT_NEAR(row->critical_path_percent, 80.0, 1e-9);
}

TEST(ProfileRandomTest, MediumModelsMatchBruteForce) {
  std::mt19937_64 rng(2);
  fixtures::RandomModelOptions opt;
  opt.max_strands = 120;
  opt.min_strands = 40;
  opt.max_depth = 7;
  for (int i = 0; i < 400; ++i) {
    SCOPED_TRACE("model " + std::to_string(i));
    check_profile(fixtures::random_model(rng, opt), /*tiny=*/false);
    if (HasFailure()) return;
  }
}

// One or two sites nested deeply: heavy recursion and many shared instances, where double
// counting and the outermost rule matter most.
TEST(ProfileRandomTest, RecursiveSharedInstancesMatchBruteForce) {
  std::mt19937_64 rng(3);
  fixtures::RandomModelOptions opt;
  opt.max_strands = 80;
  opt.min_strands = 30;
  opt.max_depth = 9;
  opt.child_probability = 0.6;
  opt.structural_probability = 0.1;
  opt.share_probability = 0.6;
  opt.own_instance_probability = 0.2;
  for (int i = 0; i < 400; ++i) {
    opt.site_count = 1 + i % 2;
    SCOPED_TRACE("model " + std::to_string(i));
    check_profile(fixtures::random_model(rng, opt), /*tiny=*/false);
    if (HasFailure()) return;
  }
}

// Dense edges, many sources and zero works: ties everywhere in the longest path.
TEST(ProfileRandomTest, DenseTiedModelsMatchBruteForce) {
  std::mt19937_64 rng(4);
  fixtures::RandomModelOptions opt;
  opt.max_strands = 40;
  opt.min_strands = 20;
  opt.max_extra_preds = 6;
  opt.chain_probability = 0.3;
  opt.source_probability = 0.2;
  opt.max_work = 2;
  opt.zero_work_probability = 0.4;
  for (int i = 0; i < 400; ++i) {
    SCOPED_TRACE("model " + std::to_string(i));
    check_profile(fixtures::random_model(rng, opt), /*tiny=*/false);
    if (HasFailure()) return;
  }
}

// ---- Hand-built shapes with known answers.

TEST(ProfileTest, ChainHasParallelismOne) {
  const Model m = fixtures::chain_model({3, 5, 2});
  const Profile p = compute_profile(m);
  EXPECT_EQ(p.work, 10u);
  EXPECT_EQ(p.span, 10u);
  EXPECT_DOUBLE_EQ(p.parallelism, 1.0);
  EXPECT_EQ(p.critical_path, (std::vector<uint32_t>{0, 1, 2}));
  ASSERT_EQ(p.sites.size(), 1u);
  EXPECT_EQ(p.sites[0].site, 0u);
  EXPECT_EQ(p.sites[0].count, 1u);
  EXPECT_EQ(p.sites[0].work, 10u);
  EXPECT_EQ(p.sites[0].span, 10u);
  EXPECT_DOUBLE_EQ(p.sites[0].critical_path_percent, 100.0);
  check_profile(m, true);
}

TEST(ProfileTest, EqualForkJoinHasParallelismN) {
  const Model m = fixtures::fork_join_model({5, 5, 5, 5});
  const Profile p = compute_profile(m);
  EXPECT_EQ(p.work, 20u);
  EXPECT_EQ(p.span, 5u);
  EXPECT_DOUBLE_EQ(p.parallelism, 4.0);
  const SiteRow* task = find_row(p, 1);
  ASSERT_NE(task, nullptr);
  EXPECT_EQ(task->count, 4u);
  EXPECT_EQ(task->work, 20u);
  EXPECT_EQ(task->span, 20u);  // four sibling outermost instances: their spans add
  EXPECT_DOUBLE_EQ(task->parallelism, 1.0);
  EXPECT_DOUBLE_EQ(task->critical_path_percent, 100.0);
  EXPECT_EQ(p.sites[0].site, 1u);  // the whole critical path is in the tasks
  check_profile(m, true);
}

TEST(ProfileTest, UnequalForkJoinFollowsLongestTask) {
  const Model m = fixtures::fork_join_model({2, 7, 3});
  const Profile p = compute_profile(m);
  EXPECT_EQ(p.span, 7u);
  // fork, the second task's strand, join (the join has the largest id: the path ends there).
  EXPECT_EQ(p.critical_path, (std::vector<uint32_t>{0, 2, 4}));
  check_profile(m, true);
}

TEST(ProfileTest, RecursionIsNotDoubleCounted) {
  uint32_t site = 0;
  const Model m = fixtures::fib_model(6, &site);
  // W(n) = 2 + W(n-1) + W(n-2), S(n) = 2 + S(n-1), C(n) = 1 + C(n-1) + C(n-2); 1 for n < 2.
  const uint64_t w[] = {1, 1, 4, 7, 13, 22, 37};
  const uint64_t s[] = {1, 1, 3, 5, 7, 9, 11};
  const uint64_t c[] = {1, 1, 3, 5, 9, 15, 25};
  const Profile p = compute_profile(m);
  EXPECT_EQ(p.work, w[6] + 2);
  EXPECT_EQ(p.span, s[6] + 2);
  const SiteRow* fib = find_row(p, site);
  ASSERT_NE(fib, nullptr);
  EXPECT_EQ(fib->count, c[6]);
  EXPECT_EQ(fib->work, w[6]);  // the top call only: every other call is nested in it
  EXPECT_EQ(fib->span, s[6]);
  EXPECT_EQ(fib->critical_work, s[6]);
  const SiteRow* program = find_row(p, 0);
  ASSERT_NE(program, nullptr);
  EXPECT_EQ(program->work, p.work);
  EXPECT_EQ(program->span, p.span);
  EXPECT_EQ(program->critical_work, 2u);
  check_profile(m, false);
}

// Parallel site P (one instance) with two implicit tasks, each running one instance of task
// site T: T is nested in P, and P in the program.
TEST(ProfileTest, TwoLevelNestedSites) {
  ModelBuilder b;
  const uint32_t par = b.add_site(SiteKind::Parallel);
  const uint32_t task = b.add_site(SiteKind::Task);
  const uint32_t start = b.strand(1);
  b.open(NodeKind::Parallel, par);
  b.open(NodeKind::ImplicitTask);
  const uint32_t a = b.strand(2, {start});
  b.open(NodeKind::Task, task);
  const uint32_t t1 = b.strand(4, {a});
  const uint32_t t2 = b.strand(4, {t1});
  b.close();
  const uint32_t a_end = b.strand(1, {t2});
  b.close();
  b.open(NodeKind::ImplicitTask);
  const uint32_t c = b.strand(3, {start});
  b.open(NodeKind::Task, task);
  const uint32_t t3 = b.strand(5, {c});
  b.close();
  const uint32_t c_end = b.strand(1, {t3});
  b.close();
  b.close();
  b.strand(0, {a_end, c_end});
  const Model m = b.finish();

  const Profile p = compute_profile(m);
  EXPECT_EQ(p.work, 21u);
  EXPECT_EQ(p.span, 12u);
  ASSERT_EQ(p.sites.size(), 3u);
  // Ordered by critical share: T (8 of 12), P (3), program (1).
  EXPECT_EQ(p.sites[0].site, task);
  EXPECT_EQ(p.sites[0].count, 2u);
  EXPECT_EQ(p.sites[0].work, 13u);
  EXPECT_EQ(p.sites[0].span, 13u);
  EXPECT_EQ(p.sites[0].critical_work, 8u);
  EXPECT_EQ(p.sites[1].site, par);
  EXPECT_EQ(p.sites[1].count, 1u);
  EXPECT_EQ(p.sites[1].work, 20u);
  EXPECT_EQ(p.sites[1].span, 11u);
  EXPECT_DOUBLE_EQ(p.sites[1].parallelism, 20.0 / 11.0);
  EXPECT_EQ(p.sites[1].critical_work, 3u);
  EXPECT_DOUBLE_EQ(p.sites[1].critical_path_percent, 25.0);
  EXPECT_EQ(p.sites[2].site, 0u);
  EXPECT_EQ(p.sites[2].critical_work, 1u);
  check_profile(m, true);
}

// One worksharing loop instance made of two per-thread shares (two nodes, one instance id).
Model loop_shares_model(bool ordered, uint32_t* loop_site) {
  ModelBuilder b;
  const uint32_t par = b.add_site(SiteKind::Parallel);
  *loop_site = b.add_site(SiteKind::Loop);
  const uint32_t loop = b.new_instance();
  const uint32_t start = b.strand(1);
  b.open(NodeKind::Parallel, par);
  b.open(NodeKind::ImplicitTask);
  b.open(NodeKind::Loop, *loop_site, loop);
  const uint32_t x1 = b.strand(5, {start});
  const uint32_t x2 = b.strand(5, {x1});
  b.close();
  b.close();
  b.open(NodeKind::ImplicitTask);
  b.open(NodeKind::Loop, *loop_site, loop);
  const uint32_t y = ordered ? b.strand(7, {start, x2}) : b.strand(7, {start});
  b.close();
  b.close();
  b.close();
  b.strand(0, {x2, y});
  return b.finish();
}

TEST(ProfileTest, LoopSharesAreOneInstance) {
  uint32_t loop = 0;
  const Model m = loop_shares_model(false, &loop);
  const Profile p = compute_profile(m);
  const SiteRow* row = find_row(p, loop);
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->count, 1u);
  EXPECT_EQ(row->work, 17u);
  EXPECT_EQ(row->span, 10u);  // the longer share; two separate instances would sum to 17
  EXPECT_DOUBLE_EQ(row->parallelism, 1.7);
  check_profile(m, true);
}

TEST(ProfileTest, EdgesBetweenSharesCountInTheInstanceSpan) {
  uint32_t loop = 0;
  const Model m = loop_shares_model(true, &loop);
  const Profile p = compute_profile(m);
  const SiteRow* row = find_row(p, loop);
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->span, 17u);
  EXPECT_EQ(p.span, 18u);
  check_profile(m, true);
}

// One loop instance in two nodes (strands of `first`, then of `second`, each strand's
// predecessor the strand of the same index in `first`), with `between` a strand outside the
// loop between them (0: none), after the first node's first strand and before the second
// node's first strand. Returns the profile's row of the loop's site.
struct TwoNodeLoop {
  Model model;
  Profile profile;
  SiteRow row;
};
TwoNodeLoop two_node_loop(const std::vector<uint64_t>& first, uint64_t between,
                          const std::vector<uint64_t>& second) {
  ModelBuilder b;
  const uint32_t site = b.add_site(SiteKind::Loop);
  const uint32_t loop = b.new_instance();
  std::vector<uint32_t> firsts;
  b.open(NodeKind::Loop, site, loop);
  for (uint64_t w : first) firsts.push_back(b.strand(w));
  b.close();
  const uint32_t outside = between ? b.strand(between, {firsts[0]}) : kNone;
  b.open(NodeKind::Loop, site, loop);
  for (size_t i = 0; i < second.size(); ++i)
    b.strand(second[i], {outside != kNone ? outside : firsts[i]});
  b.close();
  TwoNodeLoop l{b.finish(), {}, {}};
  l.profile = compute_profile(l.model);
  const SiteRow* row = find_row(l.profile, site);
  EXPECT_NE(row, nullptr);
  if (row) l.row = *row;
  return l;
}

// Edges leaving an instance and coming back do not make the instance's span longer.
TEST(ProfileTest, InstanceSpanIgnoresPathsThroughOtherStrands) {
  const TwoNodeLoop l = two_node_loop({4}, 100, {3});
  EXPECT_EQ(l.row.count, 1u);
  EXPECT_EQ(l.row.span, 4u);
  EXPECT_EQ(l.profile.span, 107u);
  check_profile(l.model, true);
}

// An instance made of every strand takes the program's span without a pass of its own: here
// the loop's two nodes hold all the strands between them, with edges from the first to the
// second.
TEST(ProfileTest, AnInstanceOfEveryStrandHasTheProgramSpan) {
  const TwoNodeLoop l = two_node_loop({5, 2}, 0, {7, 1});
  EXPECT_EQ(l.row.count, 1u);
  EXPECT_EQ(l.row.work, 15u);
  EXPECT_EQ(l.profile.span, 12u);
  EXPECT_EQ(l.row.span, 12u);
  check_profile(l.model, true);
}

TEST(ProfileTest, ZeroWorkDividesByNothing) {
  const Model m = fixtures::fork_join_model({0, 0, 0});
  const Profile p = compute_profile(m);
  EXPECT_EQ(p.work, 0u);
  EXPECT_EQ(p.span, 0u);
  EXPECT_EQ(p.parallelism, 0.0);
  // Every path is as long as every other: the tie goes to the strand met first (here the ids'
  // order), the fork's continuation straight to the join.
  EXPECT_EQ(p.critical_path, (std::vector<uint32_t>{0, 4}));
  for (const auto& row : p.sites) {
    EXPECT_EQ(row.parallelism, 0.0);
    EXPECT_EQ(row.critical_path_percent, 0.0);
  }
  check_profile(m, true);
}

TEST(ProfileTest, EmptyModels) {
  const Profile none = compute_profile(Model{});
  EXPECT_EQ(none.work, 0u);
  EXPECT_EQ(none.span, 0u);
  EXPECT_TRUE(none.critical_path.empty());
  EXPECT_TRUE(none.sites.empty());

  // Only the root, no strand: the program site still has its instance.
  const Model root_only = ModelBuilder().finish();
  const Profile p = compute_profile(root_only);
  EXPECT_TRUE(p.critical_path.empty());
  ASSERT_EQ(p.sites.size(), 1u);
  EXPECT_EQ(p.sites[0].count, 1u);
  EXPECT_EQ(p.sites[0].work, 0u);
}

// A structural root (no site): the program site's row still covers the whole run.
TEST(ProfileTest, ProgramSiteFallsBackToRoot) {
  Model m = fixtures::fork_join_model({2, 3});
  m.nodes[0].site = kNone;
  const Profile p = compute_profile(m);
  const SiteRow* program = find_row(p, 0);
  ASSERT_NE(program, nullptr);
  EXPECT_EQ(program->count, 1u);
  EXPECT_EQ(program->work, p.work);
  EXPECT_EQ(program->span, p.span);
  check_profile(m, true);
}

// A site with strands attributed to it but no node of its own still gets a row (count 0).
TEST(ProfileTest, SiteWithStrandsButNoInstanceHasARow) {
  Model m = fixtures::chain_model({1, 2});
  m.sites.push_back({0x2000, SiteKind::Single, "", 0, ""});
  m.strands[1].site = 1;
  const Profile p = compute_profile(m);
  const SiteRow* row = find_row(p, 1);
  ASSERT_NE(row, nullptr);
  EXPECT_EQ(row->count, 0u);
  EXPECT_EQ(row->work, 0u);
  EXPECT_EQ(row->critical_work, 2u);
  EXPECT_EQ(p.sites[0].site, 1u);
  check_profile(m, true);
}

}  // namespace
}  // namespace tasklens
