#include "report/whatif_report.hpp"

#include <fmt/format.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>

#include "report/cutoff_report.hpp"
#include "report/json_text.hpp"

namespace tasklens::report {
namespace {

using Json = nlohmann::ordered_json;

Json factor_json(double k) {
  if (std::isinf(k)) return "inf";
  return k;
}

// gcc names a construct's body "fn._omp_fn.N"; clang ".omp_outlined..." (not a user name).
std::string user_function(std::string f) {
  size_t gcc = f.find("._omp_fn.");
  if (gcc != std::string::npos) f.resize(gcc);
  return f;
}
bool is_outlined(const std::string& f) {
  return f.rfind(".omp_outlined", 0) == 0 || f.rfind("__omp_outlined", 0) == 0 ||
         f.rfind(".omp_task_entry", 0) == 0;
}

Json program_json(const model::Model& m, uint64_t work, uint64_t span, double parallelism) {
  return {{"work", work},
          {"span", span},
          {"parallelism", parallelism},
          {"work_seconds", seconds_of(m, work)},
          {"span_seconds", seconds_of(m, span)}};
}

// The fields every JSON output starts with.
Json json_head(const model::Model& m, const RunInfo& info) {
  Json j;
  j["tasklens_version"] = TASKLENS_VERSION;
  j["trace"] = info.trace_path;
  j["metric"] = m.metric;
  j["complete"] = m.complete;
  j["warnings"] = m.warnings;
  if (!info.span_mode.empty()) j["span_mode"] = info.span_mode;
  return j;
}

std::string header_line(const model::Model& m, const RunInfo& info, const char* command) {
  std::string out = fmt::format("tasklens {}: {} (pid {}), {} threads, {} tasks, metric {}{}\n",
                                command, basename_of(info.program), info.pid, m.thread_count,
                                m.task_count, m.metric, m.complete ? "" : ", INCOMPLETE trace");
  for (const std::string& w : m.warnings) out += fmt::format("warning: {}\n", w);
  return out;
}

}  // namespace

std::string factor_name(double k) {
  if (std::isinf(k)) return "inf";
  return fmt::format("{:g}", k);
}

namespace {

// A shared library's code without line information (a runtime's own code): its nearest symbol
// is often not the function the address is in (stripped libraries keep only their exported
// names), so it names neither the fragment nor its function.
bool in_library_without_lines(uint64_t address, const symbols::Location& l,
                              const std::vector<trace::ModuleInfo>& modules) {
  if (address == 0 || (!l.file.empty() && l.line)) return false;
  for (const auto& mod : modules)
    if (address >= mod.begin && address < mod.end)
      return basename_of(mod.path).find(".so") != std::string::npos;
  return false;
}

// "file:line" of a code address; "" for address 0. Without line information: "module+0x..."
// in the program itself, as sites do; in a shared library (a runtime's code without debug
// information, such as libtbb's own parallel_pipeline) only the library's name: its offsets
// mean nothing to the user, and its code there is one fragment end as far as the user can act.
std::string where(uint64_t address, const symbols::Location& l,
                  const std::vector<trace::ModuleInfo>& modules) {
  if (address == 0) return "";
  if (!l.file.empty() && l.line) return fmt::format("{}:{}", basename_of(l.file), l.line);
  for (const auto& mod : modules)
    if (address >= mod.begin && address < mod.end)
      return in_library_without_lines(address, l, modules)
                 ? basename_of(mod.path)
                 : fmt::format("{}+0x{:x}", basename_of(mod.path), address - mod.base);
  return fmt::format("0x{:x}", address);
}

// A fragment's label from its two ends (addresses and their locations).
std::string fragment_label(const model::Fragment& f, const symbols::Location& b,
                           const symbols::Location& e,
                           const std::vector<trace::ModuleInfo>& modules) {
  const std::string begin = where(f.begin, b, modules), end = where(f.end, e, modules);
  if (begin.empty() && end.empty()) return "<unknown>";
  if (begin.empty()) return "start-" + end;  // from the start of the program's initial task
  if (end.empty()) return begin + "-end";    // the strand ran to the end of its task
  if (b.file == e.file && b.line && e.line) return fmt::format("{}-{}", begin, e.line);
  return begin + "-" + end;
}

// The function a fragment's code ran in, as users name it: that of its end (a task's first
// strand starts at the creation site, in the parent), or of its start without an end; for an
// outlined construct body, `site_function` (the function around the construct); empty if none.
// A fragment with no code address (`<unknown>`: strands the runtime gave no return address) has
// none: its strands lie in any construct, and naming one's function would name whichever strand
// was looked at first, which the DAG and a reading in one pass do not agree on.
std::string fragment_function(const model::Fragment& f, const symbols::Location& b,
                              const symbols::Location& e,
                              const std::vector<trace::ModuleInfo>& modules,
                              const std::string* site_function) {
  if (f.begin == 0 && f.end == 0) return "";
  const uint64_t at = f.end ? f.end : f.begin;
  std::string fn = in_library_without_lines(at, f.end ? e : b, modules)
                       ? std::string()
                       : user_function(f.end ? e.function : b.function);
  if ((is_outlined(fn) || fn.empty()) && site_function) fn = *site_function;
  if (is_outlined(fn)) fn.clear();
  return fn;
}

}  // namespace

std::pair<std::string, std::string> label_fragment(
    const model::Fragment& f, const std::vector<trace::ModuleInfo>& modules,
    const std::unordered_map<uint64_t, model::SourceName>& synthetic,
    const std::string* site_function, const symbols::Symbolizer* symbolizer) {
  const std::vector<symbols::Location> locs =
      resolve_return_addresses({f.begin, f.end}, modules, synthetic, symbolizer);
  return {fragment_label(f, locs[0], locs[1], modules),
          fragment_function(f, locs[0], locs[1], modules, site_function)};
}

std::vector<std::string> label_some_fragments(const model::Model& m,
                                              const std::vector<trace::ModuleInfo>& modules,
                                              const std::vector<uint32_t>& fragments) {
  std::vector<uint64_t> addresses;
  for (uint32_t f : fragments) {
    const model::Fragment fr = f < m.fragments.size() ? m.fragments[f] : model::Fragment{};
    addresses.push_back(fr.begin);
    addresses.push_back(fr.end);
  }
  const std::vector<symbols::Location> locs =
      resolve_return_addresses(addresses, modules, m.synthetic_sites);
  std::vector<std::string> labels;
  for (size_t i = 0; i < fragments.size(); ++i)
    labels.push_back(fragment_label({addresses[2 * i], addresses[2 * i + 1]}, locs[2 * i],
                                    locs[2 * i + 1], modules));
  return labels;
}

FragmentLabels label_fragments(const model::Model& m, const std::vector<trace::ModuleInfo>& modules,
                               const std::vector<SiteLabel>& site_labels) {
  std::vector<uint64_t> addresses;
  for (const model::Fragment& f : m.fragments) {
    addresses.push_back(f.begin);
    addresses.push_back(f.end);
  }
  std::vector<symbols::Location> locs =
      resolve_return_addresses(addresses, modules, m.synthetic_sites);
  // Each fragment's site (from one of its strands): its function is the user's name for the
  // code around an outlined construct body.
  std::vector<uint32_t> site_of(m.fragments.size(), model::kNone);
  for (const model::Strand& st : m.strands)
    if (st.fragment < site_of.size() && site_of[st.fragment] == model::kNone)
      site_of[st.fragment] = st.site;
  FragmentLabels out;
  std::map<std::string, uint32_t> index;
  for (size_t f = 0; f < m.fragments.size(); ++f) {
    const symbols::Location& b = locs[2 * f];
    const symbols::Location& e = locs[2 * f + 1];
    const std::string label = fragment_label(m.fragments[f], b, e, modules);
    const std::string fn = fragment_function(
        m.fragments[f], b, e, modules,
        site_of[f] < site_labels.size() ? &site_labels[site_of[f]].function : nullptr);
    auto [it, inserted] = index.try_emplace(label, static_cast<uint32_t>(out.label.size()));
    if (inserted) {
      out.label.push_back(label);
      out.function.push_back(fn);
      out.begin_file.push_back(m.fragments[f].begin ? b.file : e.file);
    } else if (out.function[it->second].empty()) {
      out.function[it->second] = fn;
    }
    out.group_of.push_back(it->second);
  }
  return out;
}

FragmentLabels group_fragments(const std::vector<std::string>& labels,
                               const std::vector<std::string>& functions) {
  FragmentLabels out;
  std::map<std::string, uint32_t> index;
  for (size_t f = 0; f < labels.size(); ++f) {
    const std::string& name = labels[f].empty() ? "<unknown>" : labels[f];
    const auto [it, inserted] = index.try_emplace(name, static_cast<uint32_t>(out.label.size()));
    if (inserted) {
      out.label.push_back(name);
      out.function.emplace_back();
    }
    if (out.function[it->second].empty() && f < functions.size())
      out.function[it->second] = functions[f];
    out.group_of.push_back(it->second);
  }
  return out;
}

std::string render_whatif(const model::Model& m, const WhatIfReport& r,
                          const std::vector<SiteLabel>& labels, const RunInfo& info, Format format,
                          size_t top) {
  const char* mode = analysis::to_string(r.mode);
  if (format == Format::Json) {
    Json j = json_head(m, info);
    j["mode"] = mode;
    Json factors = Json::array();
    for (double k : r.factors) factors.push_back(factor_json(k));
    j["factors"] = factors;
    j["program"] = program_json(m, r.before.work, r.before.span, r.before.parallelism);
    Json units = Json::array();
    for (size_t i = 0; i < r.curves.size(); ++i) {
      const analysis::WhatIfCurve& c = r.curves[i];
      Json points = Json::array();
      for (const analysis::WhatIfPoint& p : c.points)
        points.push_back({{"factor", factor_json(p.factor)},
                          {"work", p.work},
                          {"span", p.span},
                          {"parallelism", p.parallelism}});
      units.push_back(
          {{"unit", c.unit},
           {"kind", i < r.unit_kinds.size() ? r.unit_kinds[i] : "all"},
           {"work", c.unit_work},
           {"critical_work", c.unit_critical},
           {"critical_path_percent",
            r.before.span ? 100.0 * double(c.unit_critical) / double(r.before.span) : 0.0},
           {"points", points}});
    }
    j["units"] = units;
    Json after;
    after["factor"] = factor_json(r.after_factor);
    after["program"] = program_json(m, r.after.work, r.after.span, r.after.parallelism);
    after["sites"] = site_rows_json(m, r.after, labels, top);
    j["after"] = after;
    return json_text(j, 2) + "\n";
  }
  if (format == Format::Csv) {
    std::string out = "unit,kind,unit_work,unit_critical_work,factor,work,span,parallelism\n";
    for (size_t i = 0; i < r.curves.size(); ++i) {
      const analysis::WhatIfCurve& c = r.curves[i];
      for (const analysis::WhatIfPoint& p : c.points)
        out += fmt::format("{},{},{},{},{},{},{},{:.6g}\n", csv_escape(c.unit),
                           i < r.unit_kinds.size() ? r.unit_kinds[i] : "all", c.unit_work,
                           c.unit_critical, factor_name(p.factor), p.work, p.span, p.parallelism);
    }
    return out;
  }
  std::string out = header_line(m, info, "whatif");
  out += fmt::format(
      "mode {}: {}\n", mode,
      r.mode == analysis::WhatIfMode::Parallelize
          ? "each unit is split k ways (work unchanged, its time on every path divided by k)"
          : "each unit becomes k times faster (its work and its time on every path / k)");
  out += fmt::format("recorded: work {}, span {}, parallelism {:.2f}\n\n",
                     format_work(m, r.before.work), format_work(m, r.before.span),
                     r.before.parallelism);
  out += fmt::format("{:<28} {:>12} {:>8}", "unit", "work", "crit.%");
  for (double k : r.factors) out += fmt::format(" {:>9}", "k=" + factor_name(k));
  out += "\n";
  for (const analysis::WhatIfCurve& c : r.curves) {
    double crit = r.before.span ? 100.0 * double(c.unit_critical) / double(r.before.span) : 0;
    out += fmt::format("{:<28} {:>12} {:>7.1f}%", c.unit, format_work(m, c.unit_work), crit);
    for (const analysis::WhatIfPoint& p : c.points) out += fmt::format(" {:>9.2f}", p.parallelism);
    out += "\n";
  }
  out += "(columns k=...: the program's parallelism if the unit were sped up that way)\n\n";
  out += fmt::format("Profile with all units at k={}: work {}, span {}, parallelism {:.2f}\n",
                     factor_name(r.after_factor), format_work(m, r.after.work),
                     format_work(m, r.after.span), r.after.parallelism);
  out += site_rows_table(m, r.after, labels, top);
  return out;
}

std::string render_advice(const model::Model& m, const AdviceReport& r, const FragmentLabels& fl,
                          const RunInfo& info, Format format) {
  const analysis::Advice& a = r.advice;
  auto label = [&](uint32_t g) { return g < fl.label.size() ? fl.label[g] : "<unknown>"; };
  auto function = [&](uint32_t g) { return g < fl.function.size() ? fl.function[g] : ""; };
  if (format == Format::Json) {
    Json j = json_head(m, info);
    j["mode"] = analysis::to_string(r.options.mode);
    j["target"] = r.options.target;
    j["target_origin"] = r.target_origin;
    j["factor"] = factor_json(a.factor);
    j["program"] = program_json(m, a.work, a.span, a.parallelism);
    j["task_overhead"] = {{"per_task", a.overhead.per_task},
                          {"per_task_seconds", seconds_of(m, a.overhead.per_task)},
                          {"samples", a.overhead.samples},
                          {"source", analysis::to_string(a.overhead.source)},
                          {"k", r.options.min_overhead_multiple}};
    Json steps = Json::array();
    for (const analysis::AdviceStep& s : a.steps)
      steps.push_back(
          {{"fragment", label(s.group)},
           {"function", function(s.group)},
           {"region", s.region < m.region_names.size() ? m.region_names[s.region] : std::string()},
           {"region_percent", s.region_percent},
           {"critical_work", s.critical_work},
           {"critical_path_percent", s.critical_percent},
           {"work", s.work},
           {"span", s.span},
           {"parallelism", s.parallelism}});
    j["steps"] = steps;
    j["notes"] = r.notes;
    j["stop"] = analysis::to_string(a.stop);
    if (a.stop == analysis::AdviseStop::TooSmall)
      j["stop_candidate"] = {{"fragment", label(a.stop_group)},
                             {"work_per_strand", a.stop_group_work}};
    j["burdened"] = {{"before",
                      {{"span", a.burdened_before.span},
                       {"parallelism", a.burdened_before.parallelism},
                       {"overhead_percent", a.burdened_before.overhead_percent}}},
                     {"after",
                      {{"span", a.burdened_after.span},
                       {"parallelism", a.burdened_after.parallelism},
                       {"overhead_percent", a.burdened_after.overhead_percent}}}};
    if (r.loss.threads > 0)
      j["run_loss"] = {{"threads", r.loss.threads},
                       {"tasks", r.loss.tasks},
                       {"elapsed", r.loss.elapsed},
                       {"greedy_bound", r.loss.greedy_bound},
                       {"per_task", r.loss.per_task},
                       {"per_task_seconds", seconds_of(m, r.loss.per_task)},
                       {"lost_percent", 100.0 * r.loss.lost_share},
                       {"switched_out_percent", 100.0 * r.loss.switched_out_share},
                       {"most_lost", r.loss.most_lost}};
    else
      j["run_loss"] = nullptr;
    j["cutoffs"] = r.site_labels ? cutoff_json(m, r.cutoffs, *r.site_labels) : Json::array();
    return json_text(j, 2) + "\n";
  }
  if (format == Format::Csv) {
    std::string out =
        "step,fragment,function,critical_work,critical_path_percent,work,span,"
        "parallelism\n";
    out += fmt::format("0,<recorded>,,,,{},{},{:.6g}\n", a.work, a.span, a.parallelism);
    for (size_t i = 0; i < a.steps.size(); ++i) {
      const analysis::AdviceStep& s = a.steps[i];
      out += fmt::format("{},{},{},{},{:.4f},{},{},{:.6g}\n", i + 1, csv_escape(label(s.group)),
                         csv_escape(function(s.group)), s.critical_work, s.critical_percent, s.work,
                         s.span, s.parallelism);
    }
    return out;
  }
  std::string out = header_line(m, info, "advise");
  out += fmt::format(
      "target parallelism {:g} ({}); each step {} the fragment {} ways\n", r.options.target,
      r.target_origin,
      r.options.mode == analysis::WhatIfMode::Parallelize ? "parallelizes" : "speeds up",
      factor_name(a.factor));
  out += fmt::format("recorded: work {}, span {}, parallelism {:.2f}\n", format_work(m, a.work),
                     format_work(m, a.span), a.parallelism);
  if (a.overhead.source == analysis::OverheadSource::Calibration)
    out += fmt::format(
        "tasking overhead: {} per task (what a task costs over a plain call on one thread, "
        "measured on this runtime when recording); fragments below {:g} x that are not worth "
        "parallelizing\n",
        format_work(m, a.overhead.per_task), r.options.min_overhead_multiple);
  else if (a.overhead.source == analysis::OverheadSource::Strands)
    out += fmt::format(
        "tasking overhead: {} per task (estimated from {} task strands: the recording has no "
        "measure of it, record it again for one); fragments below {:g} x that are not worth "
        "parallelizing\n",
        format_work(m, a.overhead.per_task), a.overhead.samples, r.options.min_overhead_multiple);
  else
    out += "tasking overhead: not measurable (fewer than 100 task strands); not used\n";
  out += "\n";
  out += fmt::format("{:>4}  {:<32} {:<20} {:>12} {:>8} {:>12}\n", "step", "fragment", "function",
                     "on crit.", "crit.%", "parallelism");
  out += fmt::format("{:>4}  {:<32} {:<20} {:>12} {:>8} {:>12.2f}\n", 0, "(as recorded)", "", "",
                     "", a.parallelism);
  for (size_t i = 0; i < a.steps.size(); ++i) {
    const analysis::AdviceStep& s = a.steps[i];
    out += fmt::format(
        "{:>4}  {:<32} {:<20} {:>12} {:>7.1f}% {:>12.2f}{}\n", i + 1, label(s.group),
        function(s.group), format_work(m, s.critical_work), s.critical_percent, s.parallelism,
        s.region < m.region_names.size() ? fmt::format("  (region {}: {:.0f}% of it)",
                                                       m.region_names[s.region], s.region_percent)
                                         : "");
  }
  out +=
      "(crit.%: the fragment's share of the critical path before the step; parallelism: "
      "after it)\n";
  for (const std::string& note : r.notes) out += fmt::format("note: {}\n", note);
  out += "\n";
  switch (a.stop) {
    case analysis::AdviseStop::TargetReached:
      out += "stopped: the target parallelism is reached\n";
      break;
    case analysis::AdviseStop::AlreadyReached:
      out += "stopped: the program already reaches the target parallelism\n";
      break;
    case analysis::AdviseStop::TooSmall:
      out += fmt::format(
          "stopped: the next candidate, {}, does {} per strand on the critical path, less than "
          "{:g} x the tasking overhead\n",
          label(a.stop_group), format_work(m, a.stop_group_work), r.options.min_overhead_multiple);
      break;
    case analysis::AdviseStop::NothingLeft:
      out += "stopped: no fragment left on the critical path to optimize\n";
      break;
    case analysis::AdviseStop::MaxSteps:
      out += "stopped: --max-steps reached\n";
      break;
  }
  out += fmt::format(
      "burdened parallelism (every task start charged the overhead): {:.2f} as recorded "
      "(overhead {:.1f}% of its critical path), {:.2f} after the steps ({:.1f}%)\n",
      a.burdened_before.parallelism, a.burdened_before.overhead_percent,
      a.burdened_after.parallelism, a.burdened_after.overhead_percent);
  if (r.loss.most_lost) {
    out += fmt::format(
        "but this run lost {:.1f}% of its time beyond its work and critical path: on {} threads "
        "it took {} where a schedule of its DAG without overheads needs at most {} (work / "
        "threads + span); the rest is {} per task over the threads, {:.0f} times the {} a task "
        "costs on one thread, which is all the burdened figures charge.",
        100.0 * r.loss.lost_share, r.loss.threads, format_work(m, r.loss.elapsed),
        format_work(m, r.loss.greedy_bound), format_work(m, r.loss.per_task),
        a.overhead.per_task ? double(r.loss.per_task) / double(a.overhead.per_task) : 0.0,
        format_work(m, a.overhead.per_task));
    if (r.loss.switched_out_share >= 0.1)
      out += fmt::format(
          " Its threads were switched out {:.0f}% of the run (for other programs on a busy "
          "machine, or for each other): record again on a quiet machine to tell the machine's "
          "share from the tasks'.",
          100.0 * r.loss.switched_out_share);
    out += r.cutoffs.empty()
               ? " Where the tasks cost that much (they contend for the runtime or for shared "
                 "data), make fewer, larger ones, then record again\n"
               : " Where the tasks cost that much (they contend for the runtime or for shared "
                 "data), make fewer of them: the cut-off below is the most the target needs, "
                 "and fewer may run faster on this many threads; record again to check\n";
  }
  if (r.site_labels) out += cutoff_table(m, r.cutoffs, *r.site_labels);
  return out;
}

}  // namespace tasklens::report
