// Differential analysis (analysis/diff.hpp): ratios and costs on hand-made fork-join models with
// known answers, the costs of every unit of random model pairs against a brute-force
// recomputation (an independent longest path over rescaled weights), matching by name and kind,
// unmatched units, several metrics matched by name, the sort metric, and the threshold.
#include "analysis/diff.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "model_fixtures.hpp"

namespace tasklens {
namespace {

using analysis::compute_diff;
using analysis::Diff;
using analysis::DiffInput;
using analysis::DiffOptions;
using analysis::MetricDiff;
using analysis::UnitDiff;
using fixtures::ModelBuilder;
using model::Model;
using model::NodeKind;
using model::SiteKind;

// fork (work 0, fragment 1) -> task A (site 1, fragment 2) and task B (site 2, fragment 3) ->
// join (work 0, fragment 1). Sites are named "a.c:1" and "a.c:2".
Model two_tasks(uint64_t a, uint64_t b) {
  ModelBuilder mb;
  const uint32_t sa = mb.add_site(SiteKind::Task), sb = mb.add_site(SiteKind::Task);
  const uint32_t fork = mb.strand(0);
  mb.open(NodeKind::Task, sa);
  const uint32_t ta = mb.strand(a, {fork});
  mb.close();
  mb.open(NodeKind::Task, sb);
  const uint32_t tb = mb.strand(b, {fork}, 1);
  mb.close();
  mb.strand(0, {fork, ta, tb});
  Model m = mb.finish();
  m.fragments.resize(4);
  const uint32_t frag[] = {1, 2, 3, 1};
  for (uint32_t s = 0; s < 4; ++s) m.strands[s].fragment = frag[s];
  m.thread_count = 2;
  return m;
}

DiffInput input(const Model& m, std::vector<std::string> sites,
                std::vector<std::string> fragments = {}) {
  DiffInput in;
  in.model = &m;
  in.site_names = std::move(sites);
  for (uint32_t f = 0; f < m.fragments.size(); ++f)
    in.fragment_group.push_back(f < fragments.size() ? f : 0);
  in.fragment_names = fragments.empty() ? std::vector<std::string>{"<unknown>"} : fragments;
  return in;
}

const std::vector<std::string> kSites = {"<program>", "a.c:1", "a.c:2"};
const std::vector<std::string> kFragments = {"<unknown>", "a.c:0-9", "a.c:1-1", "a.c:2-2"};

// Options keeping every unit (no threshold), and sorting by a metric.
DiffOptions every_unit() {
  DiffOptions o;
  o.min_share = 0;
  return o;
}
DiffOptions sorted_by(const std::string& metric) {
  DiffOptions o;
  o.sort_metric = metric;
  return o;
}

const UnitDiff* find(const std::vector<UnitDiff>& rows, const std::string& name) {
  for (const UnitDiff& u : rows)
    if (u.name == name) return &u;
  return nullptr;
}

TEST(Diff, RatiosAndCostsOfTwoTasks) {
  // Base: A = 10, B = 6 (span 10). Other: A = 30 (x3, on the critical path), B = 12 (x2, off it).
  const Model base = two_tasks(10, 6), other = two_tasks(30, 12);
  const Diff d = compute_diff(input(base, kSites, kFragments), input(other, kSites, kFragments));
  ASSERT_EQ(d.metrics, std::vector<std::string>{"tsc"});
  EXPECT_EQ(d.base.work[0], 16u);
  EXPECT_EQ(d.other.work[0], 42u);
  EXPECT_EQ(d.base.span[0], 10u);
  EXPECT_EQ(d.other.span[0], 30u);
  EXPECT_EQ(d.base.workers, 2u);
  // The program: ratio 42/16; scaling every strand back by 16/42 gives A = 11 (11.43 rounded),
  // B = 5 (4.57): span 11, cost 19.
  const MetricDiff& p = d.program.metrics[0];
  EXPECT_DOUBLE_EQ(p.ratio, 42.0 / 16.0);
  EXPECT_EQ(p.inflation, 26);
  EXPECT_EQ(p.cost, 19);
  EXPECT_EQ(p.critical, 30u);
  // A scaled back to 10: B (12) becomes the longest path, so the cost is 18, not 20.
  ASSERT_EQ(d.sites.size(), 2u);
  EXPECT_EQ(d.sites[0].name, "a.c:1");
  const MetricDiff& a = d.sites[0].metrics[0];
  EXPECT_EQ(a.base, 10u);
  EXPECT_EQ(a.other, 30u);
  EXPECT_DOUBLE_EQ(a.ratio, 3.0);
  EXPECT_EQ(a.inflation, 20);
  EXPECT_EQ(a.critical, 30u);
  EXPECT_EQ(a.cost, 18);
  EXPECT_DOUBLE_EQ(a.cost_percent, 60.0);
  // B is inflated too but off the critical path: no cost.
  EXPECT_EQ(d.sites[1].name, "a.c:2");
  EXPECT_DOUBLE_EQ(d.sites[1].metrics[0].ratio, 2.0);
  EXPECT_EQ(d.sites[1].metrics[0].cost, 0);
  EXPECT_EQ(d.sites[1].metrics[0].critical, 0u);
  // The program site has no work in either: small (0 < 1% of the work), ratio NaN.
  ASSERT_EQ(d.small_sites.size(), 1u);
  EXPECT_EQ(d.small_sites[0].name, "<program>");
  EXPECT_TRUE(std::isnan(d.small_sites[0].metrics[0].ratio));
  EXPECT_EQ(d.matched_construct_sites, 2u);
  // Fragments carry the same work as the tasks here.
  ASSERT_EQ(d.fragments.size(), 2u);
  EXPECT_EQ(d.fragments[0].name, "a.c:1-1");
  EXPECT_EQ(d.fragments[0].metrics[0].cost, 18);
  EXPECT_TRUE(d.only_base.empty());
  EXPECT_TRUE(d.only_other.empty());
}

TEST(Diff, AShrunkUnitHasANegativeCost) {
  // Base: A = 10, B = 16; other: A = 10 (as base), B = 4 (ratio 0.25). Scaling B back up to 16
  // makes it the longest path again (16 instead of 10): cost -6.
  const Model base = two_tasks(10, 16), other = two_tasks(10, 4);
  const Diff d = compute_diff(input(base, kSites), input(other, kSites));
  const UnitDiff* b = find(d.sites, "a.c:2");
  ASSERT_NE(b, nullptr);
  EXPECT_DOUBLE_EQ(b->metrics[0].ratio, 0.25);
  EXPECT_EQ(b->metrics[0].inflation, -12);
  EXPECT_EQ(b->metrics[0].cost, -6);
  EXPECT_DOUBLE_EQ(b->metrics[0].cost_percent, -60.0);
  // Sorted by cost: A (0) before B (-6).
  EXPECT_EQ(d.sites.back().name, "a.c:2");
}

TEST(Diff, SameModelAgainstItselfHasRatiosOfOneAndNoCost) {
  std::mt19937_64 rng(7);
  const Model m = fixtures::random_model(rng, {.max_strands = 200, .min_strands = 100});
  std::vector<std::string> names;
  for (uint32_t x = 0; x < m.sites.size(); ++x) names.push_back("s.c:" + std::to_string(x));
  const Diff d = compute_diff(input(m, names), input(m, names), every_unit());
  EXPECT_EQ(d.program.metrics[0].ratio, 1.0);
  EXPECT_EQ(d.program.metrics[0].cost, 0);
  for (const UnitDiff& u : d.sites) {
    if (u.metrics[0].base) {
      EXPECT_EQ(u.metrics[0].ratio, 1.0) << u.name;
    }
    EXPECT_EQ(u.metrics[0].cost, 0) << u.name;
    EXPECT_EQ(u.base_strands, u.other_strands);
  }
  EXPECT_TRUE(d.only_base.empty() && d.only_other.empty());
}

// Independent longest path (weights given), by relaxation over the topological strand order.
uint64_t brute_span(const Model& m, const std::vector<uint64_t>& w) {
  std::vector<uint64_t> dist(m.strands.size(), 0);
  uint64_t best = 0;
  for (uint32_t s = 0; s < m.strands.size(); ++s) {
    uint64_t in = 0;
    for (uint32_t i = m.pred_begin[s]; i < m.pred_begin[s + 1]; ++i)
      in = std::max(in, dist[m.preds[i]]);
    dist[s] = in + w[s];
    best = std::max(best, dist[s]);
  }
  return best;
}

// Each unit's cost by brute force: sums over the strands whose site (fragment group) has the
// unit's name, the weights of those strands rescaled, the span recomputed.
// Counts the positive and negative costs seen (so that the test shows it covered both).
void expect_costs_brute_force(const Diff& d, const Model& base, const Model& other,
                              const std::vector<std::string>& site_names,
                              const std::vector<std::string>& group_names,
                              const std::vector<uint32_t>& group_of, int* positive, int* negative) {
  std::vector<uint64_t> w(other.strands.size());
  for (uint32_t s = 0; s < w.size(); ++s) w[s] = other.strands[s].work;
  const uint64_t span = brute_span(other, w);
  ASSERT_EQ(d.other.span[0], span);
  auto in_unit = [&](const Model& m, const UnitDiff& u, uint32_t s) {
    if (u.kind == analysis::DiffUnitKind::Site)
      return site_names[m.strands[s].site] == u.name &&
             m.sites[m.strands[s].site].kind == u.site_kind;
    return group_names[group_of[m.strands[s].fragment]] == u.name;
  };
  size_t checked = 0;
  for (const auto* rows : {&d.sites, &d.fragments}) {
    for (const UnitDiff& u : *rows) {
      uint64_t b = 0, o = 0;
      for (uint32_t s = 0; s < base.strands.size(); ++s)
        if (in_unit(base, u, s)) b += base.strands[s].work;
      std::vector<uint64_t> scaled = w;
      for (uint32_t s = 0; s < other.strands.size(); ++s)
        if (in_unit(other, u, s)) o += other.strands[s].work;
      for (uint32_t s = 0; s < other.strands.size(); ++s)
        if (in_unit(other, u, s) && o)
          scaled[s] = static_cast<uint64_t>(std::llround(double(w[s]) * double(b) / double(o)));
      const int64_t cost = int64_t(span) - int64_t(brute_span(other, scaled));
      EXPECT_EQ(u.metrics[0].base, b) << u.name;
      EXPECT_EQ(u.metrics[0].other, o) << u.name;
      EXPECT_EQ(u.metrics[0].cost, cost) << u.name << " base " << b << " other " << o;
      *positive += cost > 0;
      *negative += cost < 0;
      ++checked;
    }
  }
  EXPECT_GT(checked, 3u);
}

TEST(Diff, CostsMatchABruteForceRecomputationOnRandomModels) {
  std::mt19937_64 rng(2024);
  int positive = 0, negative = 0;
  for (int round = 0; round < 40; ++round) {
    // The same shape twice (same seed), other's strands of some sites inflated or deflated.
    const uint64_t seed = rng();
    std::mt19937_64 r1(seed), r2(seed);
    const fixtures::RandomModelOptions opt{.max_strands = 60, .min_strands = 20, .site_count = 5};
    Model base = fixtures::random_model(r1, opt);
    Model other = fixtures::random_model(r2, opt);
    std::vector<double> factor(other.sites.size());
    for (double& f : factor) f = std::uniform_real_distribution<double>(0.3, 4.0)(rng);
    for (model::Strand& st : other.strands)
      st.work = static_cast<uint64_t>(std::llround(double(st.work) * factor[st.site]));
    // Fragments: 7 per model, grouped into 4 names (two fragments share a name).
    const std::vector<std::string> groups = {"f.c:1-2", "f.c:3-4", "f.c:5-6", "f.c:7-8"};
    const std::vector<uint32_t> group_of = {0, 1, 2, 3, 0, 1, 2};
    for (Model* m : {&base, &other}) {
      m->fragments.resize(group_of.size());
      std::mt19937_64 same(seed + 1);  // the same fragment per strand in both
      for (model::Strand& st : m->strands)
        st.fragment = std::uniform_int_distribution<uint32_t>(0, 6)(same);
    }
    std::vector<std::string> names;
    for (uint32_t x = 0; x < base.sites.size(); ++x) names.push_back("r.c:" + std::to_string(x));
    DiffInput bi = input(base, names), oi = input(other, names);
    bi.fragment_group = oi.fragment_group = group_of;
    bi.fragment_names = oi.fragment_names = groups;
    const Diff d = compute_diff(bi, oi, every_unit());
    expect_costs_brute_force(d, base, other, names, groups, group_of, &positive, &negative);
    // The program row: every strand scaled by base / other work.
    std::vector<uint64_t> scaled(other.strands.size());
    for (uint32_t s = 0; s < scaled.size(); ++s)
      scaled[s] = d.other.work[0] ? static_cast<uint64_t>(std::llround(
                                        double(other.strands[s].work) * double(d.base.work[0]) /
                                        double(d.other.work[0])))
                                  : 0;
    if (d.other.work[0]) {
      EXPECT_EQ(d.program.metrics[0].cost,
                int64_t(d.other.span[0]) - int64_t(brute_span(other, scaled)));
    }
    // Sorted by cost, descending.
    for (size_t i = 1; i < d.sites.size(); ++i)
      EXPECT_GE(d.sites[i - 1].metrics[0].cost, d.sites[i].metrics[0].cost);
    for (size_t i = 1; i < d.fragments.size(); ++i)
      EXPECT_GE(d.fragments[i - 1].metrics[0].cost, d.fragments[i].metrics[0].cost);
  }
  EXPECT_GT(positive, 20);
  EXPECT_GT(negative, 20);
}

TEST(Diff, MatchesByNameAndKindAndListsUnmatchedUnits) {
  // Base: sites "a.c:1" (task) and "a.c:2" (task); other: "a.c:1" (task), "a.c:2" as a loop
  // (another kind: another unit) and two site indexes named "a.c:1" (one unit, summed).
  const Model base = two_tasks(10, 6);
  ModelBuilder mb;
  const uint32_t s1 = mb.add_site(SiteKind::Task), s2 = mb.add_site(SiteKind::Loop),
                 s3 = mb.add_site(SiteKind::Task);
  const uint32_t fork = mb.strand(0);
  mb.open(NodeKind::Task, s1);
  const uint32_t x = mb.strand(7, {fork});
  mb.close();
  mb.open(NodeKind::Task, s3);
  const uint32_t y = mb.strand(8, {fork});
  mb.close();
  mb.open(NodeKind::Loop, s2);
  const uint32_t z = mb.strand(5, {fork});
  mb.close();
  mb.strand(0, {x, y, z});
  const Model other = mb.finish();
  const Diff d = compute_diff(input(base, kSites),
                              input(other, {"<program>", "a.c:1", "a.c:2", "a.c:1"}), every_unit());
  const UnitDiff* a = find(d.sites, "a.c:1");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->metrics[0].base, 10u);
  EXPECT_EQ(a->metrics[0].other, 15u);
  EXPECT_EQ(a->other_ids, (std::vector<uint32_t>{1, 3}));
  EXPECT_EQ(a->other_strands, 2u);
  // Scaling both strands by 10/15: 5 and 5 (4.67 and 5.33 rounded), the loop (5): span 5.
  EXPECT_EQ(a->metrics[0].cost, 3);
  ASSERT_EQ(d.only_base.size(), 1u);
  EXPECT_EQ(d.only_base[0].name, "a.c:2");
  EXPECT_EQ(d.only_base[0].site_kind, SiteKind::Task);
  EXPECT_EQ(d.only_base[0].work, 6u);
  ASSERT_EQ(d.only_other.size(), 1u);
  EXPECT_EQ(d.only_other[0].site_kind, SiteKind::Loop);
  EXPECT_EQ(d.matched_construct_sites, 1u);

  // Different programs: no construct site in common.
  const Diff none = compute_diff(input(base, kSites), input(base, {"<program>", "b.c:1", "b.c:2"}));
  EXPECT_EQ(none.matched_construct_sites, 0u);
  EXPECT_EQ(none.only_base.size(), 2u);
  EXPECT_EQ(none.only_other.size(), 2u);
}

// Extra metrics: values per strand in extra_work, matched by name whatever their position.
void add_metric(Model& m, const std::string& name, const std::vector<uint64_t>& values) {
  const size_t n = m.strands.size();
  m.extra_metrics.push_back(name);
  m.extra_work.resize(m.extra_metrics.size() * n);
  for (size_t s = 0; s < n; ++s) m.extra_work[(m.extra_metrics.size() - 1) * n + s] = values[s];
}

TEST(Diff, EveryCommonMetricMatchedByName) {
  // Strands: fork, A, B, join. Base measures tsc + instructions + HITM; other measures
  // cycles (primary) + HITM + tsc + instructions. Common, in base's order: tsc,
  // instructions, HITM.
  Model base = two_tasks(10, 6), other = two_tasks(30, 12);
  add_metric(base, "instructions", {0, 100, 100, 0});
  add_metric(base, "hitm", {0, 1, 2, 0});
  other.metric = "cycles";
  const std::vector<uint64_t> tsc = {0, 30, 12, 0};
  for (uint32_t s = 0; s < 4; ++s) other.strands[s].work = 3 * tsc[s];  // cycles
  add_metric(other, "hitm", {0, 1, 40, 0});
  add_metric(other, "tsc", tsc);
  add_metric(other, "instructions", {0, 100, 101, 0});
  const Diff d = compute_diff(input(base, kSites), input(other, kSites));
  ASSERT_EQ(d.metrics, (std::vector<std::string>{"tsc", "instructions", "hitm"}));
  EXPECT_EQ(d.base.metric_index, (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(d.other.metric_index, (std::vector<size_t>{2, 3, 1}));
  EXPECT_EQ(d.other.work, (std::vector<uint64_t>{42, 201, 41}));
  EXPECT_EQ(d.other.span, (std::vector<uint64_t>{30, 101, 40}));
  // tsc sorts by default: A (cost 18) first, as in RatiosAndCostsOfTwoTasks.
  ASSERT_EQ(d.sites.size(), 2u);
  EXPECT_EQ(d.sites[0].name, "a.c:1");
  EXPECT_EQ(d.sites[0].metrics[0].cost, 18);
  // B: instructions 100 -> 101; HITM 2 -> 40 (x20), on HITM's critical path: scaled back to 2,
  // the HITM span becomes 2: cost 38.
  const UnitDiff* b = find(d.sites, "a.c:2");
  ASSERT_NE(b, nullptr);
  EXPECT_DOUBLE_EQ(b->metrics[1].ratio, 1.01);
  EXPECT_DOUBLE_EQ(b->metrics[2].ratio, 20.0);
  EXPECT_EQ(b->metrics[2].cost, 38);
  EXPECT_EQ(b->metrics[2].critical, 40u);
  // Sorting by HITM puts B first.
  const Diff h = compute_diff(input(base, kSites), input(other, kSites), sorted_by("hitm"));
  EXPECT_EQ(h.sort_metric, 2u);
  EXPECT_EQ(h.sites[0].name, "a.c:2");

  // No metric in common, an unknown sort metric: refused.
  Model cyc = two_tasks(1, 1);
  cyc.metric = "cycles";
  EXPECT_THROW(compute_diff(input(base, kSites), input(cyc, kSites)), std::invalid_argument);
  EXPECT_THROW(compute_diff(input(base, kSites), input(other, kSites), sorted_by("cycles")),
               std::invalid_argument);
}

TEST(Diff, UnitsBelowTheThresholdAreSetApart) {
  // A carries almost all the work. B: 0.5% of the work in base and in other (small whatever its
  // ratio); with B = 0.5% in base but 5% in other, it is not small (the work appeared).
  const Model base = two_tasks(995, 5);
  const Model same = two_tasks(995, 5 * 3);  // B: 1.5% of other's work, above 1%: kept
  const Model tiny = two_tasks(2000, 9);     // B: 0.45% of other's work: small (x1.8)
  const Model grew = two_tasks(995, 55);     // B: 5.2% of other's: kept
  for (const auto& [other, small] :
       std::vector<std::pair<const Model*, bool>>{{&same, false}, {&tiny, true}, {&grew, false}}) {
    const Diff d = compute_diff(input(base, kSites), input(*other, kSites));
    const bool in_small = find(d.small_sites, "a.c:2") != nullptr;
    EXPECT_EQ(in_small, small) << "B other work " << other->strands[2].work;
    EXPECT_EQ(find(d.sites, "a.c:2") != nullptr, !small);
    if (small) {
      EXPECT_EQ(find(d.small_sites, "a.c:2")->metrics[0].cost, 0);
    }
    // min_share 0 keeps everything.
    const Diff all = compute_diff(input(base, kSites), input(*other, kSites), every_unit());
    EXPECT_NE(find(all.sites, "a.c:2"), nullptr);
    EXPECT_TRUE(all.small_sites.empty());
  }
}

}  // namespace
}  // namespace tasklens
