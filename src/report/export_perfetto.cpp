#include "report/export_perfetto.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

#include "report/export_flows.hpp"

namespace tasklens::report {
namespace {

using model::kNone;

// ns as microseconds with 3 decimals: exact, no floating-point formatting.
void put_us(ExportWriter& w, int64_t ns) {
  uint64_t magnitude = static_cast<uint64_t>(ns);
  if (ns < 0) {
    w.put('-');
    magnitude = 0 - magnitude;  // (INT64_MIN too)
  }
  w.num(magnitude / 1000);
  const unsigned frac = static_cast<unsigned>(magnitude % 1000);
  const char digits[4] = {'.', char('0' + frac / 100), char('0' + frac / 10 % 10),
                          char('0' + frac % 10)};
  w.put(std::string_view(digits, 4));
}

// A flow's "s" event (or a preemption slice), merged into the slices' time order.
struct Pending {
  int64_t ts;
  uint32_t order;  // position of the slice it binds to (kNone: a preemption interval)
  uint32_t then;   // the flow's destination's position, or the preemption interval's index
  uint32_t index;  // flow index, or preemption interval index
};

std::string thread_label(const ExportRun& r, uint32_t t) {
  if (t < r.thread_types.size() && r.thread_types[t] == 1) return "main thread";
  return fmt::format("worker {}", t);
}

}  // namespace

PerfettoStats write_perfetto(const ExportRun& r, const Timeline& t, ExportWriter& w) {
  const model::Model& m = *r.model;
  const std::vector<SiteLabel>& labels = *r.labels;
  const uint64_t pid = r.info.pid ? r.info.pid : 1;
  PerfettoStats stats;

  // Slices in time order: by start, the longer first (it encloses the other), then in the order
  // the strands were met.
  const uint32_t n = static_cast<uint32_t>(t.size());
  ExportClock clock;
  clock.origin = r.origin ? r.origin : t.first_start == kNoStart ? 0 : t.first_start;
  clock.ns_per_tick = r.tsc_hz > 0 ? 1e9 / r.tsc_hz : 1.0;
  std::vector<int64_t> start_ns(n), end_ns(n);
  for (uint32_t i = 0; i < n; ++i) {
    const TimelineSlice x = t.slice(i);
    std::tie(start_ns[i], end_ns[i]) = clock.slice_ns(x.start, x.end);
  }
  std::vector<uint32_t> slices(n);
  for (uint32_t i = 0; i < n; ++i) slices[i] = i;
  std::sort(slices.begin(), slices.end(), [&](uint32_t a, uint32_t b) {
    if (start_ns[a] != start_ns[b]) return start_ns[a] < start_ns[b];
    if (end_ns[a] != end_ns[b]) return end_ns[a] > end_ns[b];
    return t.order(a) < t.order(b);
  });
  std::vector<uint32_t> position(n);
  for (uint32_t i = 0; i < n; ++i) position[slices[i]] = i;

  std::vector<Pending> pending;
  pending.reserve(t.flows.size());
  for (uint32_t f = 0; f < t.flows.size(); ++f) {
    const uint32_t src = t.flows[f].from, dst = t.flows[f].to;
    // The source's last ns, but not after the destination's start (overlapping clocks): the "s"
    // must come first.
    const int64_t ts = std::max(start_ns[src], std::min(end_ns[src] - 1, start_ns[dst]));
    pending.push_back(Pending{ts, position[src], position[dst], f});
  }
  std::vector<std::pair<int64_t, int64_t>> preempt_ns;  // flattened intervals
  std::vector<uint32_t> preempt_thread;
  for (uint32_t th = 0; th < r.preemptions.size(); ++th)
    for (auto [from, to] : r.preemptions[th]) {
      if (to <= from) continue;
      const auto [from_ns, to_ns] = clock.slice_ns(from, to);
      if (t.window.given && !t.window.holds(from_ns, to_ns)) continue;
      const uint32_t index = static_cast<uint32_t>(preempt_ns.size());
      pending.push_back(Pending{from_ns, kNone, index, index});
      preempt_ns.emplace_back(from_ns, to_ns);
      preempt_thread.push_back(th);
    }
  std::sort(pending.begin(), pending.end(), [](const Pending& a, const Pending& b) {
    if (a.ts != b.ts) return a.ts < b.ts;
    if (a.order != b.order) return a.order < b.order;
    return a.then < b.then;
  });
  // A flow's id is its rank in the order its "s" events come in; its "f" events come with their
  // destinations, grouped by them, by source.
  std::vector<uint32_t> flow_id(t.flows.size());
  {
    uint32_t next_id = 0;
    for (const Pending& p : pending)
      if (p.order != kNone) flow_id[p.index] = next_id++;
  }
  std::vector<uint32_t> into_begin(n + 1, 0), into(t.flows.size());
  for (const TimelineFlow& f : t.flows) ++into_begin[position[f.to] + 1];
  for (uint32_t i = 0; i < n; ++i) into_begin[i + 1] += into_begin[i];
  {
    std::vector<uint32_t> cursor(into_begin.begin(), into_begin.end() - 1);
    for (uint32_t f = 0; f < t.flows.size(); ++f) into[cursor[position[t.flows[f].to]]++] = f;
  }
  for (uint32_t i = 0; i < n; ++i)
    std::sort(into.begin() + into_begin[i], into.begin() + into_begin[i + 1],
              [&](uint32_t a, uint32_t b) { return flow_id[a] < flow_id[b]; });

  // Per-site and per-fragment strings, escaped once.
  std::vector<std::string> site_name(m.sites.size()), site_cat(m.sites.size()),
      site_function(m.sites.size());
  for (size_t i = 0; i < m.sites.size(); ++i) {
    const SiteLabel& l = labels[i];
    const char* kind = model::to_string(m.sites[i].kind);
    std::string name;
    if (m.sites[i].kind == model::SiteKind::Program)
      name = "<program>";
    else if (l.line != 0 || l.function.empty())
      name = l.site + " " + kind;
    else
      name = l.function + " " + kind;
    site_name[i] = json_string(name);
    site_cat[i] = json_string(kind);
    site_function[i] = l.function.empty() ? "" : json_string(l.function);
  }
  std::vector<std::string> group_label, group_function;
  if (r.fragments) {
    for (const std::string& s : r.fragments->label) group_label.push_back(json_string(s));
    for (const std::string& s : r.fragments->function)
      group_function.push_back(s.empty() ? "" : json_string(s));
  }
  std::vector<std::string> node_kind;
  for (int k = 0; k <= static_cast<int>(model::NodeKind::Masked); ++k)
    node_kind.push_back(json_string(model::to_string(static_cast<model::NodeKind>(k))));
  const std::string work_key = json_string("work_" + m.metric);

  // Header and run facts.
  uint64_t per_kind[5] = {0, 0, 0, 0, 0}, routed = 0;
  for (const TimelineFlow& f : t.flows) {
    ++per_kind[static_cast<int>(f.kind)];
    routed += f.routed;
  }
  // Tracks: every thread with a slice (also one beyond thread_count in an inconsistent model).
  uint32_t tracks = m.thread_count;
  for (uint32_t i = 0; i < n; ++i) tracks = std::max(tracks, t.thread(i) + 1);
  std::vector<uint8_t> has_slice(tracks, 0);
  for (uint32_t i = 0; i < n; ++i) has_slice[t.thread(i)] = 1;
  for (uint8_t h : has_slice) stats.tracks += h;
  w.put("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"tasklens_version\":");
  append_json_string(w.buf(), TASKLENS_VERSION);
  w.put(",\"trace\":");
  append_json_string(w.buf(), r.info.trace_path);
  w.put(",\"executable\":");
  append_json_string(w.buf(), r.info.program);
  w.print(",\"pid\":{},\"metric\":", pid);
  append_json_string(w.buf(), m.metric);
  w.print(
      ",\"tsc_per_second\":{},\"timestamps_assumed_ns\":{},\"origin_tsc\":{},\"complete\":{},"
      "\"threads\":{},\"workers\":{},\"tasks\":{},\"strands\":{},\"slices\":{},"
      "\"untimed_strands\":{},\"flows\":{{\"spawn\":{},\"join\":{},\"dependence\":{},"
      "\"barrier\":{},\"continuation\":{}}},\"routed_flows\":{},\"continuations_not_drawn\":{},"
      "\"preempted_ticks\":{},\"strand_ids\":\"{}\",",
      r.tsc_hz > 0 ? r.tsc_hz : 0.0, r.tsc_hz > 0 ? "false" : "true", clock.origin,
      m.complete ? "true" : "false", m.thread_count, stats.tracks, m.task_count, t.strands, n,
      t.strands - t.timed, per_kind[int(FlowKind::Spawn)], per_kind[int(FlowKind::Join)],
      per_kind[int(FlowKind::Dependence)], per_kind[int(FlowKind::Barrier)],
      per_kind[int(FlowKind::Continuation)], routed, t.continuations_hidden, m.preempted,
      t.ids_met ? "met" : "serial");
  if (t.window.given) {
    w.put("\"window\":{\"from_us\":");
    if (t.window.from == std::numeric_limits<int64_t>::min())
      w.put("null");
    else
      put_us(w, t.window.from);
    w.put(",\"to_us\":");
    if (t.window.to == std::numeric_limits<int64_t>::max())
      w.put("null");
    else
      put_us(w, t.window.to);
    w.print(",\"slices_in_run\":{}}},", t.timed);
  }
  w.put("\"warnings\":[");
  for (size_t i = 0; i < m.warnings.size(); ++i) {
    if (i) w.put(',');
    append_json_string(w.buf(), m.warnings[i]);
  }
  w.put("]},\"traceEvents\":[\n");

  // Metadata events: the process and its tracks.
  w.print("{{\"ph\":\"M\",\"pid\":{},\"tid\":0,\"name\":\"process_name\",\"args\":{{\"name\":",
          pid);
  append_json_string(
      w.buf(),
      "tasklens: " + basename_of(r.info.program.empty() ? std::string("program") : r.info.program));
  w.put("}}");
  for (uint32_t th = 0; th < has_slice.size(); ++th) {
    if (!has_slice[th]) continue;
    w.print(",\n{{\"ph\":\"M\",\"pid\":{},\"tid\":{},\"name\":\"thread_name\",\"args\":{{\"name\":",
            pid, th);
    append_json_string(w.buf(), thread_label(r, th));
    w.print(
        "}}}},\n{{\"ph\":\"M\",\"pid\":{},\"tid\":{},\"name\":\"thread_sort_index\","
        "\"args\":{{\"sort_index\":{}}}}}",
        pid, th, th);
  }
  {
    std::vector<uint8_t> named(r.preemptions.size(), 0);
    for (uint32_t th : preempt_thread) {
      if (named[th]) continue;
      named[th] = 1;
      w.print(
          ",\n{{\"ph\":\"M\",\"pid\":{},\"tid\":{},\"name\":\"thread_name\","
          "\"args\":{{\"name\":",
          pid, kPreemptionTidBase + th);
      append_json_string(w.buf(), thread_label(r, th) + ": preempted");
      w.print(
          "}}}},\n{{\"ph\":\"M\",\"pid\":{},\"tid\":{},\"name\":\"thread_sort_index\","
          "\"args\":{{\"sort_index\":{}}}}}",
          pid, kPreemptionTidBase + th, th);
    }
  }

  // The hot path writes with put() and num(): no format string to parse per event.
  const std::string pid_tid = fmt::format("\"pid\":{},\"tid\":", pid);
  auto flow_event = [&](char ph, uint32_t f, uint32_t slice, int64_t ts) {
    const std::string_view kind = to_string(t.flows[f].kind);
    w.put(ph == 'f' ? std::string_view(",\n{\"ph\":\"f\",\"bp\":\"e\",")
                    : std::string_view(",\n{\"ph\":\"s\","));
    w.put(pid_tid);
    w.num(t.thread(slice));
    w.put(",\"ts\":");
    put_us(w, ts);
    w.put(",\"id\":");
    w.num(flow_id[f]);
    w.put(",\"name\":\"");
    w.put(kind);
    w.put("\",\"cat\":\"");
    w.put(kind);
    w.put("\"}");
  };
  size_t next = 0;
  // Emits the pending events that come before key (ts, order).
  auto drain = [&](int64_t ts, uint32_t order) {
    for (; next < pending.size(); ++next) {
      const Pending& p = pending[next];
      if (p.ts > ts || (p.ts == ts && p.order >= order)) break;
      if (p.order == kNone) {
        const auto [from, to] = preempt_ns[p.index];
        w.print(",\n{{\"ph\":\"X\",\"pid\":{},\"tid\":{},\"ts\":", pid,
                kPreemptionTidBase + preempt_thread[p.index]);
        put_us(w, from);
        w.put(",\"dur\":");
        put_us(w, to - from);
        w.put(",\"name\":\"preempted\",\"cat\":\"preemption\"}");
        ++stats.preemption_slices;
      } else {
        flow_event('s', p.index, t.flows[p.index].from, p.ts);
      }
      w.maybe_flush();
    }
  };
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t s = slices[i];
    const TimelineSlice st = t.slice(s);
    drain(start_ns[s], i);
    w.put(",\n{\"ph\":\"X\",");
    w.put(pid_tid);
    w.num(st.thread);
    w.put(",\"ts\":");
    put_us(w, start_ns[s]);
    w.put(",\"dur\":");
    put_us(w, end_ns[s] - start_ns[s]);
    w.put(",\"name\":");
    w.put(site_name[st.site]);
    w.put(",\"cat\":");
    w.put(site_cat[st.site]);
    w.put(",\"args\":{\"strand\":");
    w.num(st.id);
    w.put(',');
    w.put(work_key);
    w.put(':');
    w.num(st.work);
    w.put(",\"node\":");
    w.put(node_kind[st.node_kind < node_kind.size() ? st.node_kind : 0]);
    if (st.instance != kNone) {
      w.put(",\"instance\":");
      w.num(st.instance);
    }
    const uint32_t group = r.fragments && st.fragment < r.fragments->group_of.size()
                               ? r.fragments->group_of[st.fragment]
                               : kNone;
    const std::string* function = &site_function[st.site];
    if (group != kNone && !group_function[group].empty()) function = &group_function[group];
    if (!function->empty()) {
      w.put(",\"function\":");
      w.put(*function);
    }
    if (group != kNone && st.fragment != 0) {
      w.put(",\"fragment\":");
      w.put(group_label[group]);
    }
    w.put("}}");
    ++stats.slices;
    for (uint32_t k = into_begin[i]; k < into_begin[i + 1]; ++k) {
      flow_event('f', into[k], s, start_ns[s]);
      ++stats.flows;
    }
    w.maybe_flush();
  }
  drain(std::numeric_limits<int64_t>::max(), kNone);
  w.put("\n]}\n");
  return stats;
}

PerfettoStats write_perfetto(const ExportRun& r, ExportWriter& w) {
  // (Without a window the clock's origin does not choose the slices.)
  ExportClock clock;
  clock.ns_per_tick = r.tsc_hz > 0 ? 1e9 / r.tsc_hz : 1.0;
  return write_perfetto(r, timeline_of(*r.model, clock, TimeWindow{}), w);
}

}  // namespace tasklens::report
