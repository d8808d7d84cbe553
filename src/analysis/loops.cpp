#include "analysis/loops.hpp"

#include <algorithm>
#include <unordered_map>

namespace tasklens::analysis {

using model::kNone;
using model::Model;
using model::NodeKind;

std::vector<LoopFacts> loop_facts(const Model& m) {
  const uint32_t num_sites = static_cast<uint32_t>(m.sites.size());
  std::vector<LoopFacts> facts(num_sites);
  std::vector<uint8_t> said(num_sites, 0);
  for (const model::DivisibleStrand& d : m.divisible) {
    if (d.strand >= m.strands.size()) continue;
    const uint32_t site = m.strands[d.strand].site;
    if (site >= num_sites) continue;
    ++facts[site].strands_together;
    facts[site].iterations_together += d.iterations;
    said[site] = 1;
  }

  // The divisible strands in [b, e): their index range in Model::divisible.
  const auto divisible_in = [&](uint32_t b, uint32_t e) {
    const auto less = [](const model::DivisibleStrand& d, uint32_t s) { return d.strand < s; };
    auto first = std::lower_bound(m.divisible.begin(), m.divisible.end(), b, less);
    auto last = std::lower_bound(first, m.divisible.end(), e, less);
    return std::make_pair(first, last);
  };
  // Static shares, by loop instance: (work, iterations) of each thread's one share.
  struct Shares {
    uint32_t site = kNone;
    std::vector<std::pair<uint64_t, uint64_t>> shares;
    bool static_like = true;
  };
  std::unordered_map<uint32_t, Shares> instances;
  const uint32_t num_nodes = static_cast<uint32_t>(m.nodes.size());
  for (uint32_t v = 0; v < num_nodes; ++v) {
    const model::Node& node = m.nodes[v];
    if (node.kind == NodeKind::Loop && node.instance != kNone && node.site < num_sites &&
        !m.divisible.empty()) {
      Shares& x = instances[node.instance];
      x.site = node.site;
      const auto [first, last] = divisible_in(node.strand_begin, node.strand_end);
      // One share: one strand seen together, in the loop itself or in its one chunk.
      if (last - first != 1 || node.subtree_size > 2) {
        x.static_like = false;
        continue;
      }
      x.shares.emplace_back(m.strands[first->strand].work, first->iterations);
    } else if (node.kind == NodeKind::Phase && node.parent != kNone && node.subtree_size > 1) {
      // Team-bound: every implicit task of the phase is one strand and no construct.
      bool bound = true;
      uint64_t work = 0;
      for (uint32_t c = v + 1; c < v + node.subtree_size && bound; ++c) {
        const model::Node& task = m.nodes[c];
        bound = task.kind == NodeKind::ImplicitTask && task.subtree_size == 1 &&
                task.strand_end == task.strand_begin + 1;
        if (bound) work += m.strands[task.strand_begin].work;
      }
      const uint32_t site = m.nodes[node.parent].site;
      if (!bound || site >= num_sites || work == 0) continue;
      facts[site].team_bound_work += work;
      facts[site].team = std::max(facts[site].team, node.subtree_size - 1);
      said[site] = 1;
    }
  }
  std::vector<double> excess(num_sites, 0), mean_sum(num_sites, 0);
  for (const auto& [instance, x] : instances) {
    if (!x.static_like || x.shares.size() < 2) continue;
    uint64_t iterations = 0;
    for (auto [w, c] : x.shares) iterations += c;
    const double per_share = static_cast<double>(iterations) / x.shares.size();
    double max_time = 0, sum = 0;
    for (auto [w, c] : x.shares) {
      const double t =
          static_cast<double>(w) / static_cast<double>(std::max<uint64_t>(c, 1)) * per_share;
      max_time = std::max(max_time, t);
      sum += t;
    }
    const double mean = sum / x.shares.size();
    excess[x.site] += max_time - mean;
    mean_sum[x.site] += mean;
    ++facts[x.site].static_instances;
    said[x.site] = 1;
  }
  std::vector<LoopFacts> out;
  for (uint32_t x = 0; x < num_sites; ++x) {
    if (!said[x]) continue;
    facts[x].site = x;
    facts[x].share_imbalance = mean_sum[x] > 0 ? excess[x] / mean_sum[x] : 0.0;
    out.push_back(facts[x]);
  }
  return out;
}

std::vector<LoopFacts> loop_facts_by_site(const Model& m) {
  std::vector<LoopFacts> by_site(m.sites.size());
  for (const LoopFacts& f : loop_facts(m))
    if (f.site < by_site.size()) by_site[f.site] = f;
  return by_site;
}

bool team_bound(const LoopFacts& f, uint64_t region_work) {
  return f.team_bound_work > 0 && static_cast<double>(f.team_bound_work) >=
                                      kTeamBoundShare * static_cast<double>(region_work);
}

}  // namespace tasklens::analysis
