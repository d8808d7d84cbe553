#include "report/export_flows.hpp"

#include <algorithm>

namespace tasklens::report {

using model::kNone;
using model::NodeKind;

const char* to_string(FlowKind kind) {
  switch (kind) {
    case FlowKind::Continuation:
      return "continuation";
    case FlowKind::Spawn:
      return "spawn";
    case FlowKind::Join:
      return "join";
    case FlowKind::Dependence:
      return "dependence";
    case FlowKind::Barrier:
      return "barrier";
  }
  return "unknown";
}

std::vector<uint32_t> owner_nodes(const model::Model& m) {
  std::vector<uint32_t> owner(m.nodes.size(), 0);
  for (uint32_t v = 0; v < m.nodes.size(); ++v) {  // parents come before children
    const model::Node& n = m.nodes[v];
    const bool owns = n.kind == NodeKind::Program || n.kind == NodeKind::ImplicitTask ||
                      n.kind == NodeKind::Task || n.kind == NodeKind::Chunk;
    owner[v] = owns || n.parent == kNone ? v : owner[n.parent];
  }
  return owner;
}

namespace {

// a is a proper ancestor of b (preorder: b lies in a's subtree range).
bool below(const model::Model& m, uint32_t b, uint32_t a) {
  return b > a && b < a + m.nodes[a].subtree_size;
}

}  // namespace

FlowKind classify_edge(const model::Model& m, const std::vector<uint32_t>& owner, uint32_t p,
                       uint32_t s) {
  const uint32_t op = owner[m.strands[p].node], os = owner[m.strands[s].node];
  if (op == os) return FlowKind::Continuation;
  if (below(m, os, op)) return FlowKind::Spawn;
  if (below(m, op, os)) return FlowKind::Join;
  return FlowKind::Dependence;
}

Flows compute_flows(const model::Model& m) {
  const uint32_t n = static_cast<uint32_t>(m.strands.size());
  const std::vector<uint32_t> owner = owner_nodes(m);
  Flows out;
  out.begin.assign(n + 1, 0);
  // Timed sources of every untimed strand (CSR; predecessors come first in id order, so their
  // lists are complete when a strand is reached).
  std::vector<uint32_t> src_begin(n + 1, 0), src;
  std::vector<uint32_t> scratch;
  for (uint32_t u = 0; u < n; ++u) {
    src_begin[u] = static_cast<uint32_t>(src.size());
    if (is_timed(m.strands[u])) continue;
    scratch.clear();
    for (uint32_t p : m.preds_of(u)) {
      if (is_timed(m.strands[p]))
        scratch.push_back(p);
      else
        scratch.insert(scratch.end(), src.begin() + src_begin[p], src.begin() + src_begin[p + 1]);
    }
    std::sort(scratch.begin(), scratch.end());
    scratch.erase(std::unique(scratch.begin(), scratch.end()), scratch.end());
    src.insert(src.end(), scratch.begin(), scratch.end());
  }
  src_begin[n] = static_cast<uint32_t>(src.size());

  auto thread = [&](uint32_t s) { return m.strands[s].thread; };
  for (uint32_t s = 0; s < n; ++s) {
    out.begin[s] = static_cast<uint32_t>(out.flows.size());
    if (!is_timed(m.strands[s])) continue;
    const size_t first = out.flows.size();
    // One flow per pair (preferred_flow): a source met again replaces its flow when preferred.
    auto add = [&](const Flow& f) {
      for (size_t k = first; k < out.flows.size(); ++k) {
        Flow& had = out.flows[k];
        if (had.from != f.from) continue;
        if (preferred_flow(f.via != kNone, f.kind, had.via != kNone, had.kind)) had = f;
        return;
      }
      out.flows.push_back(f);
    };
    for (uint32_t p : m.preds_of(s)) {
      if (is_timed(m.strands[p])) {
        ++out.edges;
        const Flow f{p, s, kNone, classify_edge(m, owner, p, s)};
        if (drawn(f.kind, thread(p), thread(s)))
          add(f);
        else
          ++out.continuations_hidden;
        continue;
      }
      const FlowKind leg2 = classify_edge(m, owner, p, s);
      for (uint32_t i = src_begin[p]; i < src_begin[p + 1]; ++i) {
        const uint32_t q = src[i];
        const Flow f{q, s, p, routed_kind(classify_edge(m, owner, q, p), leg2)};
        if (drawn(f.kind, thread(q), thread(s))) add(f);
      }
    }
    for (size_t k = first; k < out.flows.size(); ++k) out.routed += out.flows[k].via != kNone;
  }
  out.begin[n] = static_cast<uint32_t>(out.flows.size());
  return out;
}

}  // namespace tasklens::report
