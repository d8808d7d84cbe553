// Work, span and per-site profile over the strand DAG. Everything here is a handful of linear
// passes over flat arrays, in strand or node order: models of millions of strands must profile
// in well under a second, so there is no per-strand or per-node allocation, no hashing, and no
// pass per site or per instance (those jump around memory once instances are small).
#include "analysis/profile.hpp"

#include <algorithm>
#include <memory>
#include <utility>

#include "analysis/algebra.hpp"

namespace tasklens::analysis {
namespace {

using model::kNone;
using model::Model;
using model::Node;

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
    while (!open.empty() &&
           v >= static_cast<uint64_t>(open.back()) + m.nodes[open.back()].subtree_size) {
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

// Strand ids are a topological order, so every predecessor's distance is final when a strand is
// reached: one forward pass.
uint64_t longest_path(const Model& m, std::vector<uint32_t>* path) {
  if (path) path->clear();
  const uint32_t n = static_cast<uint32_t>(m.strands.size());
  if (n == 0) return 0;
  std::vector<uint64_t> dist(n);
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

Profile compute_profile(const Model& m) {
  Profile profile;
  const uint32_t n = static_cast<uint32_t>(m.strands.size());
  const uint32_t num_sites = static_cast<uint32_t>(m.sites.size());
  const uint32_t num_nodes = static_cast<uint32_t>(m.nodes.size());

  for (const model::Strand& strand : m.strands) profile.work += strand.work;
  profile.span = longest_path(m, &profile.critical_path);
  profile.parallelism = parallelism_of(profile.work, profile.span);

  std::vector<SiteRow> rows(num_sites);
  std::vector<uint8_t> present(num_sites, 0);
  for (uint32_t s : profile.critical_path) {
    const uint32_t site = m.strands[s].site;
    if (site < num_sites) rows[site].critical_work += m.strands[s].work;
  }

  // Instances. Instance ids are global (0 .. instance_count-1), so one slot per id groups the
  // nodes in a single pass; the site check only guards against an id reused by another site.
  uint32_t max_instance = 0;
  for (const Node& node : m.nodes) {
    if (node.instance != kNone) max_instance = std::max(max_instance, node.instance + 1);
  }
  const std::vector<uint8_t> nested = nested_nodes(m, num_sites);
  std::vector<uint32_t> group_of(num_nodes, kNone);
  std::vector<uint32_t> group_site;
  std::vector<uint8_t> group_outermost;
  {
    std::vector<uint32_t> slot(max_instance, kNone);
    for (uint32_t v = 0; v < num_nodes; ++v) {
      const Node& node = m.nodes[v];
      if (node.site >= num_sites) continue;
      uint32_t g = node.instance == kNone ? kNone : slot[node.instance];
      if (g == kNone || group_site[g] != node.site) {
        g = static_cast<uint32_t>(group_site.size());
        group_site.push_back(node.site);
        group_outermost.push_back(1);
        if (node.instance != kNone) slot[node.instance] = g;
      }
      group_of[v] = g;
      if (nested[v]) group_outermost[g] = 0;
    }
  }
  const uint32_t num_groups = static_cast<uint32_t>(group_site.size());
  for (uint32_t g = 0; g < num_groups; ++g) {
    ++rows[group_site[g]].count;
    present[group_site[g]] = 1;
  }
  // The Program site without a node of its own: the root (the whole run) is its instance.
  const bool root_for_program = num_sites > 0 && num_nodes > 0 && rows[0].count == 0;

  // The outermost instances containing a strand are those of the nodes on its Strand::node's
  // ancestor chain (at most one per site: outermost instances of a site are disjoint). up[v] is
  // the innermost node at or above v in an outermost instance; above[u] continues from there.
  std::vector<uint32_t> up(num_nodes, kNone), above(num_nodes, kNone);
  for (uint32_t v = 0; v < num_nodes; ++v) {
    const uint32_t parent = m.nodes[v].parent;
    const uint32_t from_parent = parent < v ? up[parent] : kNone;
    const uint32_t g = group_of[v];
    if (g != kNone && group_outermost[g]) {
      up[v] = v;
      above[v] = from_parent;
    } else {
      up[v] = from_parent;
    }
  }
  auto chain_of = [&](uint32_t s) {
    const uint32_t node = m.strands[s].node;
    return node < num_nodes ? up[node] : kNone;
  };

  // One forward pass computes every instance's restricted longest path at once: strand s keeps
  // one (instance, distance) entry per outermost instance containing it, and an edge p -> s
  // counts for an instance only if p has an entry for it too. Sequential over the strands, so
  // cache friendly however the instances interleave.
  std::vector<uint64_t> entry_begin(static_cast<size_t>(n) + 1, 0);
  for (uint32_t s = 0; s < n; ++s) {
    uint64_t k = 0;
    for (uint32_t u = chain_of(s); u != kNone; u = above[u]) ++k;
    entry_begin[s + 1] = entry_begin[s] + k;
  }
  struct Entry {
    uint32_t group;
    uint64_t dist;  // longest path ending at this strand inside the group's instance
  };
  // Left uninitialized on purpose: every entry is written before it is read, and zeroing a
  // buffer of this size costs as much as a pass.
  const std::unique_ptr<Entry[]> entries(new Entry[entry_begin[n]]);
  std::vector<uint64_t> group_work(num_groups, 0), group_span(num_groups, 0);
  std::vector<uint32_t> chain(num_sites + 1);  // the current strand's groups, inner to outer
  std::vector<uint64_t> longest(num_sites + 1);
  const uint32_t* pred_begin = m.pred_begin.data();
  const uint32_t* preds = m.preds.data();
  for (uint32_t s = 0; s < n; ++s) {
    const uint64_t work = m.strands[s].work;
    if (m.strands[s].site < num_sites) present[m.strands[s].site] = 1;
    uint32_t k = 0;
    for (uint32_t u = chain_of(s); u != kNone; u = above[u]) {
      chain[k] = group_of[u];
      longest[k++] = 0;
    }
    if (k == 0) continue;
    // Predecessors outermost in the loop: each is looked up once, whatever the chain length.
    for (uint32_t i = pred_begin[s], ie = pred_begin[s + 1]; i < ie; ++i) {
      const uint32_t p = preds[i];
      for (uint64_t e = entry_begin[p], ee = entry_begin[p + 1]; e < ee; ++e) {
        for (uint32_t j = 0; j < k; ++j) {
          if (entries[e].group == chain[j]) {
            longest[j] = std::max(longest[j], entries[e].dist);
            break;
          }
        }
      }
    }
    Entry* out = &entries[entry_begin[s]];
    for (uint32_t j = 0; j < k; ++j) {
      const uint32_t g = chain[j];
      const uint64_t here = longest[j] + work;
      out[j] = {g, here};
      group_work[g] += work;
      group_span[g] = std::max(group_span[g], here);
    }
  }

  for (uint32_t g = 0; g < num_groups; ++g) {
    if (!group_outermost[g]) continue;
    rows[group_site[g]].work += group_work[g];
    rows[group_site[g]].span += group_span[g];
  }
  if (root_for_program) {
    rows[0].count = 1;
    rows[0].work = profile.work;
    rows[0].span = profile.span;
    present[0] = 1;
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
