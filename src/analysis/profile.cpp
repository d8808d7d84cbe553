// Work, span and per-site profile over the strand DAG. Everything here is a handful of linear
// passes over flat arrays: models of millions of strands must profile in well under a second, so
// there is no per-strand or per-node allocation and no hashing.
#include "analysis/profile.hpp"

#include <algorithm>
#include <utility>

#include "analysis/algebra.hpp"

namespace tasklens::analysis {
namespace {

using model::kNone;
using model::Model;
using model::Node;

// Forward pass of the longest path. `dist` is scratch of at least strand_count entries (shared
// with the per-instance passes in compute_profile to keep one buffer). Strand ids are a
// topological order, so every predecessor's distance is final when a strand is reached.
uint64_t longest_path_into(const Model& m, std::vector<uint64_t>& dist,
                           std::vector<uint32_t>* path) {
  if (path) path->clear();
  const uint32_t n = static_cast<uint32_t>(m.strands.size());
  if (n == 0) return 0;
  dist.resize(n);
  // The backtracking link is only needed when the caller wants the path itself.
  std::vector<uint32_t> via(path ? n : 0);
  const uint32_t* begin = m.pred_begin.data();
  const uint32_t* preds = m.preds.data();
  uint64_t* d = dist.data();
  uint64_t best = 0;
  uint32_t best_end = 0;
  for (uint32_t s = 0; s < n; ++s) {
    uint64_t longest = 0;
    uint32_t arg = kNone;
    for (uint32_t i = begin[s], e = begin[s + 1]; i < e; ++i) {
      const uint32_t p = preds[i];
      if (arg == kNone || d[p] > longest) {
        longest = d[p];
        arg = p;
      }
    }
    const uint64_t here = longest + m.strands[s].work;
    d[s] = here;
    if (path) via[s] = arg;
    // ">=": the largest id reaching the maximum has no successor reaching it (a successor would
    // be at least as far and later), so the reported path ends at a sink.
    if (here >= best) {
      best = here;
      best_end = s;
    }
  }
  if (path) {
    for (uint32_t s = best_end; s != kNone; s = via[s]) path->push_back(s);
    std::reverse(path->begin(), path->end());
  }
  return best;
}

// For every node with a site: does it lie inside a node of a different instance of the same
// site? One preorder walk that keeps, per site, the innermost open node of that site; a node's
// subtree is [id, id + subtree_size), so leaving a subtree is detected by id alone.
std::vector<uint8_t> nested_nodes(const Model& m, uint32_t num_sites) {
  const uint32_t num_nodes = static_cast<uint32_t>(m.nodes.size());
  std::vector<uint8_t> nested(num_nodes, 0);
  std::vector<uint32_t> innermost(num_sites, kNone);
  std::vector<uint32_t> saved(num_nodes, kNone);  // innermost[site] before this node opened
  std::vector<uint32_t> open;
  for (uint32_t v = 0; v < num_nodes; ++v) {
    while (!open.empty() && v >= static_cast<uint64_t>(open.back()) +
                                     m.nodes[open.back()].subtree_size) {
      const uint32_t u = open.back();
      open.pop_back();
      innermost[m.nodes[u].site] = saved[u];
    }
    const Node& node = m.nodes[v];
    if (node.site >= num_sites) continue;
    const uint32_t outer = innermost[node.site];
    if (outer != kNone) {
      const bool other_instance =
          node.instance == kNone || m.nodes[outer].instance != node.instance;
      // Same instance nested in itself (malformed) inherits the outer node's answer.
      nested[v] = other_instance ? 1 : nested[outer];
    }
    saved[v] = outer;
    innermost[node.site] = v;
    open.push_back(v);
  }
  return nested;
}

}  // namespace

uint64_t longest_path(const Model& model, std::vector<uint32_t>* path) {
  std::vector<uint64_t> dist;
  return longest_path_into(model, dist, path);
}

Profile compute_profile(const Model& m) {
  Profile profile;
  const uint32_t n = static_cast<uint32_t>(m.strands.size());
  const uint32_t num_sites = static_cast<uint32_t>(m.sites.size());
  const uint32_t num_nodes = static_cast<uint32_t>(m.nodes.size());

  // Prefix sums of work: an instance node's work is then one subtraction over its range.
  std::vector<uint64_t> prefix(static_cast<size_t>(n) + 1, 0);
  for (uint32_t s = 0; s < n; ++s) prefix[s + 1] = prefix[s] + m.strands[s].work;
  profile.work = prefix[n];

  std::vector<uint64_t> dist;
  profile.span = longest_path_into(m, dist, &profile.critical_path);
  profile.parallelism = parallelism_of(profile.work, profile.span);

  // Which sites get a row, and their exclusive share of the critical path.
  std::vector<SiteRow> rows(num_sites);
  std::vector<uint8_t> present(num_sites, 0);
  for (uint32_t s = 0; s < n; ++s) {
    const uint32_t site = m.strands[s].site;
    if (site < num_sites) present[site] = 1;
  }
  for (uint32_t s : profile.critical_path) {
    const uint32_t site = m.strands[s].site;
    if (site < num_sites) rows[site].critical_work += m.strands[s].work;
  }

  // Nodes bucketed by site (counting sort keeps node id order inside a bucket).
  std::vector<uint32_t> site_begin(static_cast<size_t>(num_sites) + 1, 0);
  uint32_t max_instance = 0;
  for (const Node& node : m.nodes) {
    if (node.site >= num_sites) continue;
    ++site_begin[node.site + 1];
    if (node.instance != kNone) max_instance = std::max(max_instance, node.instance + 1);
  }
  // The Program site without a node of its own: the root is its instance.
  const bool root_for_program = num_sites > 0 && num_nodes > 0 && site_begin[1] == 0;
  if (root_for_program) site_begin[1] = 1;
  for (uint32_t x = 0; x < num_sites; ++x) site_begin[x + 1] += site_begin[x];
  std::vector<uint32_t> site_nodes(site_begin[num_sites]);
  {
    std::vector<uint32_t> fill(site_begin.begin(), site_begin.end() - 1);
    if (root_for_program) site_nodes[fill[0]++] = 0;
    for (uint32_t v = 0; v < num_nodes; ++v) {
      const uint32_t site = m.nodes[v].site;
      if (site < num_sites) site_nodes[fill[site]++] = v;
    }
  }
  const std::vector<uint8_t> nested = nested_nodes(m, num_sites);

  // Per-site scratch, reused across sites. An instance's nodes are a linked list through
  // next_in_group, in node id order.
  struct Group {
    uint32_t head, tail;
    bool outermost;
  };
  std::vector<Group> groups;
  std::vector<uint32_t> next_in_group(num_nodes, kNone);
  std::vector<uint32_t> slot_site(max_instance, kNone);  // instance id -> site that owns the slot
  std::vector<uint32_t> slot_group(max_instance, 0);     // instance id -> index into groups
  std::vector<std::pair<uint32_t, uint32_t>> ranges;
  // mark[s] == stamp: strand s belongs to the instance being measured.
  std::vector<uint32_t> mark(n, kNone);
  uint32_t stamp = 0;
  const uint32_t* pred_begin = m.pred_begin.data();
  const uint32_t* preds = m.preds.data();
  uint64_t* d = dist.data();

  for (uint32_t x = 0; x < num_sites; ++x) {
    if (site_begin[x] == site_begin[x + 1]) continue;
    present[x] = 1;
    groups.clear();
    for (uint32_t i = site_begin[x]; i < site_begin[x + 1]; ++i) {
      const uint32_t v = site_nodes[i];
      const uint32_t instance = (root_for_program && x == 0) ? kNone : m.nodes[v].instance;
      next_in_group[v] = kNone;
      uint32_t g;
      if (instance != kNone && slot_site[instance] == x) {
        g = slot_group[instance];
        next_in_group[groups[g].tail] = v;
        groups[g].tail = v;
      } else {
        g = static_cast<uint32_t>(groups.size());
        groups.push_back({v, v, true});
        if (instance != kNone) {
          slot_site[instance] = x;
          slot_group[instance] = g;
        }
      }
      if (nested[v]) groups[g].outermost = false;
    }

    SiteRow& row = rows[x];
    row.count = groups.size();
    for (const Group& group : groups) {
      if (!group.outermost) continue;
      ranges.clear();
      for (uint32_t v = group.head; v != kNone; v = next_in_group[v]) {
        const uint32_t b = std::min(m.nodes[v].strand_begin, n);
        const uint32_t e = std::min(m.nodes[v].strand_end, n);
        if (b < e) ranges.emplace_back(b, e);
      }
      // Visiting the instance's strands in increasing id keeps the pass topological. Node order
      // normally is strand order already; sort (and trim overlaps) only if it is not.
      if (!std::is_sorted(ranges.begin(), ranges.end())) std::sort(ranges.begin(), ranges.end());
      const uint32_t id = stamp++;
      uint64_t instance_span = 0;
      uint32_t covered = 0;
      for (auto [b, e] : ranges) {
        b = std::max(b, covered);
        if (b >= e) continue;
        covered = e;
        row.work += prefix[e] - prefix[b];
        for (uint32_t s = b; s < e; ++s) {
          uint64_t longest = 0;
          for (uint32_t k = pred_begin[s], ke = pred_begin[s + 1]; k < ke; ++k) {
            const uint32_t p = preds[k];
            if (mark[p] == id && d[p] > longest) longest = d[p];
          }
          const uint64_t here = longest + m.strands[s].work;
          d[s] = here;
          mark[s] = id;
          instance_span = std::max(instance_span, here);
        }
      }
      row.span += instance_span;
    }
  }

  for (uint32_t x = 0; x < num_sites; ++x) {
    if (!present[x]) continue;
    SiteRow& row = rows[x];
    row.site = x;
    row.parallelism = parallelism_of(row.work, row.span);
    row.critical_path_percent = percent_of(row.critical_work, profile.span);
    profile.sites.push_back(row);
  }
  // critical_work orders exactly like critical_path_percent (same denominator), without the
  // rounding of the division.
  std::sort(profile.sites.begin(), profile.sites.end(), [](const SiteRow& a, const SiteRow& b) {
    if (a.critical_work != b.critical_work) return a.critical_work > b.critical_work;
    if (a.work != b.work) return a.work > b.work;
    return a.site < b.site;
  });
  return profile;
}

}  // namespace tasklens::analysis
