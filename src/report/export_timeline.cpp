#include "report/export_timeline.hpp"

namespace tasklens::report {

using model::kNone;

TimelineSlice Timeline::slice(size_t i) const {
  if (!dag) return slices[i];
  const uint32_t s = dag_strands[i];
  const model::Strand& st = dag->strands[s];
  const model::Node& node = dag->nodes[st.node];
  return TimelineSlice{st.start,      st.end,
                       st.work,       s,
                       order(i),      st.thread,
                       st.site,       st.fragment,
                       node.instance, static_cast<uint8_t>(node.kind)};
}

Timeline timeline_of(const model::Model& m, const ExportClock& clock, const TimeWindow& window) {
  Timeline t;
  t.window = window;
  t.dag = &m;
  const uint32_t n = static_cast<uint32_t>(m.strands.size());
  t.strands = n;
  std::vector<uint32_t> slice_of(n, kNone);
  for (uint32_t s = 0; s < n; ++s) {
    const model::Strand& st = m.strands[s];
    if (!is_timed(st)) continue;
    ++t.timed;
    t.first_start = std::min(t.first_start, st.start);
    const auto [start_ns, end_ns] = clock.slice_ns(st.start, st.end);
    if (window.given && !window.holds(start_ns, end_ns)) continue;
    slice_of[s] = static_cast<uint32_t>(t.dag_strands.size());
    t.dag_strands.push_back(s);
  }
  const Flows flows = compute_flows(m);
  for (const Flow& f : flows.flows)
    if (slice_of[f.from] != kNone && slice_of[f.to] != kNone)
      t.flows.push_back(TimelineFlow{slice_of[f.from], slice_of[f.to], f.kind, f.via != kNone});
  if (!window.given) {
    t.continuations_hidden = flows.continuations_hidden;
    return t;
  }
  // Within a window: the hidden continuations between two of its slices.
  const std::vector<uint32_t> owner = owner_nodes(m);
  for (uint32_t s : t.dag_strands)
    for (uint32_t p : m.preds_of(s))
      if (slice_of[p] != kNone && m.strands[p].thread == m.strands[s].thread &&
          classify_edge(m, owner, p, s) == FlowKind::Continuation)
        ++t.continuations_hidden;
  return t;
}

}  // namespace tasklens::report
