#include "report/export_dump.hpp"

#include <string>

namespace tasklens::report {
namespace {

using model::kNone;

void put_id(ExportWriter& w, uint32_t id) {
  if (id == kNone)
    w.put("null");
  else
    w.print("{}", id);
}

void put_str(ExportWriter& w, const std::string& s) { append_json_string(w.buf(), s); }

const char* thread_type(const ExportRun& r, uint32_t t) {
  if (t >= r.thread_types.size()) return "unknown";
  switch (r.thread_types[t]) {
    case 1:
      return "initial";
    case 2:
      return "worker";
    case 3:
      return "other";
  }
  return "unknown";
}

uint32_t fragment_group(const ExportRun& r, uint32_t fragment) {
  if (!r.fragments || fragment >= r.fragments->group_of.size()) return kNone;
  return r.fragments->group_of[fragment];
}

}  // namespace

void write_dag_json(const ExportRun& r, ExportWriter& w) {
  const model::Model& m = *r.model;
  const std::vector<SiteLabel>& labels = *r.labels;
  w.put("{\"tasklens_version\":");
  put_str(w, TASKLENS_VERSION);
  w.put(",\"format\":\"tasklens-dag\",\"format_version\":1,\"trace\":");
  put_str(w, r.info.trace_path);
  w.put(",\"executable\":");
  put_str(w, r.info.program);
  w.print(",\"pid\":{},\"metric\":", r.info.pid);
  put_str(w, m.metric);
  w.print(",\"metric_is_time\":{},\"ticks_per_second\":{},\"tsc_per_second\":{},",
          m.metric_is_time ? "true" : "false", m.ticks_per_second, r.tsc_hz);
  w.print("\"complete\":{},\"tasks\":{},\"preempted\":{},\"extra_metrics\":[",
          m.complete ? "true" : "false", m.task_count, m.preempted);
  for (size_t i = 0; i < m.extra_metrics.size(); ++i) {
    if (i) w.put(',');
    put_str(w, m.extra_metrics[i]);
  }
  w.put("],\"warnings\":[");
  for (size_t i = 0; i < m.warnings.size(); ++i) {
    if (i) w.put(',');
    put_str(w, m.warnings[i]);
  }
  w.put("],\n\"threads\":[");
  for (uint32_t t = 0; t < m.thread_count; ++t) {
    w.print("{}{{\"thread\":{},\"type\":\"{}\",\"os_tid\":{}}}", t ? "," : "", t, thread_type(r, t),
            t < r.os_tids.size() ? r.os_tids[t] : 0);
  }
  w.put("],\n\"sites\":[");
  for (size_t i = 0; i < m.sites.size(); ++i) {
    const model::Site& s = m.sites[i];
    const SiteLabel& l = labels[i];
    w.print("{}\n{{\"id\":{},\"kind\":\"{}\",\"label\":", i ? "," : "", i,
            model::to_string(s.kind));
    put_str(w, l.site);
    w.put(",\"file\":");
    put_str(w, l.file);
    w.print(",\"line\":{},\"function\":", l.line);
    put_str(w, l.function);
    w.print(",\"address\":\"0x{:x}\"}}", s.address);
  }
  w.put("],\n\"fragments\":[");
  for (size_t f = 0; f < m.fragments.size(); ++f) {
    const uint32_t g = fragment_group(r, static_cast<uint32_t>(f));
    w.print("{}\n{{\"id\":{},\"begin\":\"0x{:x}\",\"end\":\"0x{:x}\",\"label\":", f ? "," : "", f,
            m.fragments[f].begin, m.fragments[f].end);
    put_str(w, g == kNone ? std::string() : r.fragments->label[g]);
    w.put(",\"function\":");
    put_str(w, g == kNone ? std::string() : r.fragments->function[g]);
    w.put('}');
  }
  w.put("],\n\"nodes\":[");
  for (uint32_t v = 0; v < m.nodes.size(); ++v) {
    const model::Node& n = m.nodes[v];
    w.print("{}\n{{\"id\":{},\"kind\":\"{}\",\"parent\":", v ? "," : "", v,
            model::to_string(n.kind));
    put_id(w, n.parent);
    w.put(",\"site\":");
    put_id(w, n.site);
    w.put(",\"instance\":");
    put_id(w, n.instance);
    w.print(",\"subtree_size\":{},\"strand_begin\":{},\"strand_end\":{}}}", n.subtree_size,
            n.strand_begin, n.strand_end);
    w.maybe_flush();
  }
  w.put("],\n\"strands\":[");
  const size_t n = m.strands.size();
  const bool extra = !m.extra_metrics.empty() && m.extra_work.size() == m.extra_metrics.size() * n;
  for (uint32_t s = 0; s < n; ++s) {
    const model::Strand& st = m.strands[s];
    w.print("{}\n{{\"id\":{},\"work\":{},\"start\":{},\"end\":{},\"thread\":", s ? "," : "", s,
            st.work, st.start, st.end);
    put_id(w, st.thread);
    w.print(",\"node\":{},\"site\":{},\"fragment\":{},\"preds\":[", st.node, st.site, st.fragment);
    bool first = true;
    for (uint32_t p : m.preds_of(s)) {
      w.print("{}{}", first ? "" : ",", p);
      first = false;
    }
    w.put(']');
    if (extra) {
      w.put(",\"extra_work\":[");
      for (size_t k = 0; k < m.extra_metrics.size(); ++k)
        w.print("{}{}", k ? "," : "", m.extra_work[k * n + s]);
      w.put(']');
    }
    w.put('}');
    w.maybe_flush();
  }
  w.put("]}\n");
}

void write_strands_csv(const ExportRun& r, ExportWriter& w) {
  const model::Model& m = *r.model;
  const std::vector<SiteLabel>& labels = *r.labels;
  const size_t n = m.strands.size();
  const bool extra = !m.extra_metrics.empty() && m.extra_work.size() == m.extra_metrics.size() * n;
  w.put(
      "strand,work,start,end,thread,node,node_kind,instance,site,site_label,site_kind,function,"
      "fragment,fragment_label");
  if (extra)
    for (const std::string& name : m.extra_metrics) {
      w.put(',');
      append_csv_field(w.buf(), "work_" + name);
    }
  w.put(",preds\n");
  // Labels escaped once per site and per fragment group.
  std::vector<std::string> site_cols(m.sites.size());
  for (size_t i = 0; i < m.sites.size(); ++i)
    site_cols[i] = csv_field_of(labels[i].site) + "," + model::to_string(m.sites[i].kind) + "," +
                   csv_field_of(labels[i].function);
  std::vector<std::string> group_label;
  if (r.fragments)
    for (const std::string& l : r.fragments->label) group_label.push_back(csv_field_of(l));
  for (uint32_t s = 0; s < n; ++s) {
    const model::Strand& st = m.strands[s];
    const model::Node& node = m.nodes[st.node];
    w.print("{},{},{},{},", s, st.work, st.start, st.end);
    if (st.thread != kNone) w.print("{}", st.thread);
    w.print(",{},{},", st.node, model::to_string(node.kind));
    if (node.instance != kNone) w.print("{}", node.instance);
    w.print(",{},", st.site);
    w.put(site_cols[st.site]);
    w.print(",{},", st.fragment);
    const uint32_t g = fragment_group(r, st.fragment);
    if (g != kNone) w.put(group_label[g]);
    for (size_t k = 0; extra && k < m.extra_metrics.size(); ++k)
      w.print(",{}", m.extra_work[k * n + s]);
    w.put(',');
    bool first = true;
    for (uint32_t p : m.preds_of(s)) {
      w.print("{}{}", first ? "" : " ", p);
      first = false;
    }
    w.put('\n');
    w.maybe_flush();
  }
}

}  // namespace tasklens::report
