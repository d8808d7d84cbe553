// analysis/structure.hpp: the construct tree's groups and the timeline's slices come out the same
// whatever order the nodes and strands are added in (the DAG adds them in the model's order, one
// pass in the order the builder meets them), the budget cuts the lightest groups and the totals
// still cover every strand, and the trie's cap keeps what it drops in its parents' totals.
// (Against the DAG's structure on every trace the model tests build:
// support/one_pass_mismatch.hpp; against brute force: view_test.cpp.)
#include "analysis/structure.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <tuple>
#include <vector>

namespace tasklens {
namespace {

using analysis::ConstructTrie;
using analysis::TimelineBounds;
using analysis::TimelineSlices;

// A random tree of nodes (parents first), each with strands of random work.
struct Tree {
  std::vector<uint32_t> parent, site;
  std::vector<model::NodeKind> kind;
  std::vector<std::vector<uint64_t>> strands;  // per node, its own strands' work
};
Tree random_tree(uint64_t seed, uint32_t nodes) {
  std::mt19937_64 rng(seed);
  Tree t;
  for (uint32_t v = 0; v < nodes; ++v) {
    t.parent.push_back(v == 0 ? model::kNone : static_cast<uint32_t>(rng() % v));
    t.site.push_back(static_cast<uint32_t>(rng() % 3));
    t.kind.push_back(rng() % 2 ? model::NodeKind::Task : model::NodeKind::Taskgroup);
    t.strands.emplace_back();
    for (uint64_t k = 0, n = rng() % 4; k < n; ++k) t.strands.back().push_back(rng() % 1000000007);
  }
  return t;
}

// The nodes added in `order` (parents before children), each one's strands right after it;
// a strand whose work is a multiple of 3 is on the critical path, weighing half its work.
std::vector<ConstructTrie::Aggregate> aggregates_of(const Tree& t,
                                                    const std::vector<uint32_t>& order,
                                                    size_t max_nodes, ConstructTrie& trie) {
  std::vector<ConstructTrie::Placed> placed(t.parent.size());
  for (uint32_t v : order) {
    const uint32_t p = t.parent[v];
    placed[v] = p == model::kNone  ? trie.add_node(ConstructTrie::kNoGroup, t.site[v], t.kind[v])
                : placed[p].member ? trie.add_node(placed[p].group, t.site[v], t.kind[v])
                                   : placed[p];
    for (uint64_t w : t.strands[v]) trie.add_strand(placed[v], w, w % 3 == 0 ? w / 2 : 0);
  }
  std::vector<uint32_t> listed_of;
  std::vector<ConstructTrie::Aggregate> aggs = trie.aggregates(max_nodes, listed_of);
  for (ConstructTrie::Aggregate& a : aggs) a.group = 0;  // (the trie's own numbering)
  return aggs;
}

auto fields(const ConstructTrie::Aggregate& a) {
  return std::make_tuple(a.parent, a.depth, a.kind, a.site, a.count, a.work, a.own_work, a.strands,
                         a.critical, a.cut);
}

// A topological order of the tree other than the ids': a random pick among the nodes whose
// parent was added.
std::vector<uint32_t> shuffled_order(const Tree& t, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<uint32_t>> children(t.parent.size());
  for (uint32_t v = 1; v < t.parent.size(); ++v) children[t.parent[v]].push_back(v);
  std::vector<uint32_t> ready = {0}, order;
  while (!ready.empty()) {
    std::swap(ready[rng() % ready.size()], ready.back());
    const uint32_t v = ready.back();
    ready.pop_back();
    order.push_back(v);
    ready.insert(ready.end(), children[v].begin(), children[v].end());
  }
  return order;
}

TEST(ConstructTrie, TheSameGroupsWhateverTheOrderNodesCameIn) {
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    const Tree t = random_tree(seed, 1 + static_cast<uint32_t>(seed * 7 % 300));
    std::vector<uint32_t> ids(t.parent.size());
    std::iota(ids.begin(), ids.end(), 0);
    uint64_t total = 0;
    for (const auto& s : t.strands) total = std::accumulate(s.begin(), s.end(), total);
    for (size_t budget : {size_t{100000}, size_t{12}, size_t{1}}) {
      ConstructTrie a, b;
      const auto x = aggregates_of(t, ids, budget, a);
      const auto y = aggregates_of(t, shuffled_order(t, seed), budget, b);
      ASSERT_EQ(x.size(), y.size()) << "seed " << seed << ", budget " << budget;
      for (size_t i = 0; i < x.size(); ++i)
        EXPECT_EQ(fields(x[i]), fields(y[i])) << "seed " << seed << ", aggregate " << i;
      EXPECT_LE(x.size(), budget);
      EXPECT_EQ(x[0].work, total);  // the root covers every strand, cut or not
      EXPECT_EQ(x[0].count, 1u);
      // Siblings come heaviest first.
      for (size_t i = 1; i + 1 < x.size(); ++i)
        if (x[i].parent == x[i + 1].parent) {
          EXPECT_GE(x[i].work, x[i + 1].work);
        }
    }
  }
}

// Over the cap, whole levels are folded from the deepest up, whatever order the nodes came in:
// the first levels stay exact (here a recursion of two sites, its left branch met first and
// deepest, as a depth-first run meets it), the deeper ones count in their ancestors.
TEST(ConstructTrie, OverTheCapTheFirstLevelsStayExact) {
  // A binary tree of depth 8 (511 nodes, each its own group: two sites), one strand each.
  Tree t;
  for (uint32_t v = 0; v < 511; ++v) {
    t.parent.push_back(v == 0 ? model::kNone : (v - 1) / 2);
    t.site.push_back(v % 2);
    t.kind.push_back(v == 0 ? model::NodeKind::Program : model::NodeKind::Task);
    t.strands.push_back({v + 1});
  }
  std::vector<uint32_t> depth_first;  // preorder: the left branch to the bottom first
  std::vector<uint32_t> stack = {0};
  while (!stack.empty()) {
    const uint32_t v = stack.back();
    stack.pop_back();
    depth_first.push_back(v);
    if (2 * v + 2 < 511) stack.push_back(2 * v + 2);
    if (2 * v + 1 < 511) stack.push_back(2 * v + 1);
  }
  const uint64_t total = 511 * 512 / 2;
  ConstructTrie exact, capped(40);
  const auto x = aggregates_of(t, depth_first, 100000, exact);
  const auto y = aggregates_of(t, depth_first, 100000, capped);
  EXPECT_FALSE(exact.capped());
  ASSERT_TRUE(capped.capped());
  EXPECT_LE(capped.groups(), 40u);
  // When the 41st group came (the left branch down to the bottom, and some of level 4), levels
  // 0-4 fit in three quarters of 40: they are kept (31 groups once all are met), deeper ones
  // are folded into them.
  EXPECT_EQ(capped.depth_limit(), 4u);
  EXPECT_EQ(capped.groups(), 31u);
  ASSERT_EQ(y.size(), 31u);
  for (size_t i = 0; i < y.size(); ++i) {
    // The exact trie's first 31 aggregates (listed level by level), with whole subtree totals.
    EXPECT_EQ(std::make_tuple(y[i].parent, y[i].depth, y[i].kind, y[i].site, y[i].count, y[i].work,
                              y[i].own_work, y[i].strands, y[i].critical),
              std::make_tuple(x[i].parent, x[i].depth, x[i].kind, x[i].site, x[i].count, x[i].work,
                              x[i].own_work, x[i].strands, x[i].critical))
        << i;
  }
  EXPECT_EQ(y[0].work, total);
  // Another order (the right branch first) keeps the same levels.
  ConstructTrie other(40);
  std::vector<uint32_t> reversed = depth_first;
  std::stable_partition(reversed.begin() + 1, reversed.end(),
                        [&](uint32_t v) {  // the root's right subtree first
                          uint32_t u = v;
                          while (u > 2) u = (u - 1) / 2;
                          return u == 2;
                        });
  const auto z = aggregates_of(t, reversed, 100000, other);
  ASSERT_EQ(z.size(), y.size());
  for (size_t i = 0; i < y.size(); ++i) EXPECT_EQ(fields(z[i]), fields(y[i])) << i;
}

struct Piece {
  uint64_t start, end;
  uint32_t thread, site, group;
};

std::vector<std::tuple<uint32_t, uint64_t, uint64_t, std::vector<TimelineSlices::Slice>>> slices_of(
    const std::vector<Piece>& pieces, size_t max_slices) {
  TimelineBounds bounds;
  for (const Piece& p : pieces) bounds.add(p.start, p.end, p.thread);
  TimelineSlices t(bounds, max_slices);
  for (const Piece& p : pieces) t.add(p.start, p.end, p.thread, p.site, p.group);
  std::vector<std::tuple<uint32_t, uint64_t, uint64_t, std::vector<TimelineSlices::Slice>>> out;
  for (auto& w : t.finish()) out.emplace_back(w.thread, w.strands, w.busy, std::move(w.slices));
  return out;
}

bool same(const std::vector<TimelineSlices::Slice>& a,
          const std::vector<TimelineSlices::Slice>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [](auto& x, auto& y) { return !(x < y) && !(y < x); });
}

TEST(TimelineSlices, TheSameSlicesWhateverTheOrderStrandsCameIn) {
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    std::mt19937_64 rng(seed);
    std::vector<Piece> pieces;
    // Per thread, strands one after the other; some of no length, several at one instant (ties
    // between groups and sites in a bucket), and an untimed one.
    for (uint32_t thread : {0u, 3u, 5u}) {
      uint64_t at = 1000 + rng() % 50;
      for (int k = 0, n = 1 + static_cast<int>(rng() % 60); k < n; ++k) {
        const uint64_t length = rng() % 4 == 0 ? 0 : rng() % 500;
        pieces.push_back({at, at + length, thread, static_cast<uint32_t>(rng() % 3),
                          static_cast<uint32_t>(rng() % 5)});
        at += length + (rng() % 3 == 0 ? 0 : rng() % 100);
      }
    }
    pieces.push_back({0, 0, model::kNone, 0, 0});
    std::vector<Piece> shuffled = pieces;
    std::shuffle(shuffled.begin(), shuffled.end(), rng);
    for (size_t max_slices : {size_t{100000}, size_t{30}, size_t{3}}) {
      const auto a = slices_of(pieces, max_slices), b = slices_of(shuffled, max_slices);
      ASSERT_EQ(a.size(), 3u);
      ASSERT_EQ(a.size(), b.size());
      uint64_t busy = 0;
      for (size_t w = 0; w < a.size(); ++w) {
        EXPECT_EQ(std::get<0>(a[w]), std::get<0>(b[w]));
        EXPECT_EQ(std::get<1>(a[w]), std::get<1>(b[w]));
        EXPECT_EQ(std::get<2>(a[w]), std::get<2>(b[w]));
        EXPECT_TRUE(same(std::get<3>(a[w]), std::get<3>(b[w])))
            << "seed " << seed << ", " << max_slices << " slices, worker " << w;
        for (const TimelineSlices::Slice& s : std::get<3>(a[w])) busy += s.busy;
        for (size_t k = 1; k < std::get<3>(a[w]).size(); ++k)  // in time order
          EXPECT_LE(std::get<3>(a[w])[k - 1].begin, std::get<3>(a[w])[k].begin);
      }
      uint64_t expected = 0;
      for (const Piece& p : pieces) expected += p.end - p.start;
      EXPECT_EQ(busy, expected) << "seed " << seed;  // merged or not, no strand time is lost
    }
  }
}

}  // namespace
}  // namespace tasklens
