#include "report/diff_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "analysis/algebra.hpp"
#include "report/json_text.hpp"

namespace tasklens::report {
namespace {

using analysis::Diff;
using analysis::DiffSide;
using analysis::DiffUnitKind;
using analysis::MetricDiff;
using analysis::UnitDiff;
using analysis::UnmatchedUnit;
using Json = nlohmann::ordered_json;

Json num_or_null(double x) { return std::isnan(x) ? Json(nullptr) : Json(x); }
std::string ratio_str(double x) { return std::isnan(x) ? "-" : fmt::format("{:.2f}x", x); }

// The function a unit's code is in (the first of its sites or fragment groups that has one).
std::string function_of(const DiffRun& r, DiffUnitKind kind, const std::vector<uint32_t>& ids) {
  for (uint32_t id : ids) {
    if (kind == DiffUnitKind::Site && r.labels && id < r.labels->size() &&
        !(*r.labels)[id].function.empty())
      return (*r.labels)[id].function;
    if (kind == DiffUnitKind::Fragment && r.fragments && id < r.fragments->function.size() &&
        !r.fragments->function[id].empty())
      return r.fragments->function[id];
  }
  return "";
}

const char* kind_name(DiffUnitKind kind, model::SiteKind site_kind) {
  return kind == DiffUnitKind::Site ? model::to_string(site_kind) : analysis::to_string(kind);
}

// An amount of metric k, and a signed one (+/-).
std::string amount(const DiffRun& r, const Diff& d, size_t k, double v) {
  return format_amount(v, metric_rate(r, d.metrics[k]));
}
std::string signed_amount(const DiffRun& r, const Diff& d, size_t k, double v) {
  return (v < 0 ? "-" : "+") + amount(r, d, k, std::fabs(v));
}

Json side_json(const DiffRun& r, const DiffSide& s, const Diff& d) {
  const model::Model& m = *r.model;
  Json j;
  j["trace"] = r.info.trace_path;
  j["executable"] = r.info.program;
  j["pid"] = r.info.pid;
  j["metrics"] = analysis::metric_names(m);
  j["complete"] = m.complete;
  j["warnings"] = m.warnings;
  j["threads"] = s.threads;
  j["workers"] = s.workers;
  j["tasks"] = s.tasks;
  j["strands"] = s.strands;
  j["elapsed"] = s.elapsed;
  j["preemption_removed"] = m.preempted;
  j["elapsed_seconds"] = r.tsc_hz > 0 ? Json(double(s.elapsed) / r.tsc_hz) : Json(nullptr);
  Json work, span, par;
  for (size_t k = 0; k < d.metrics.size(); ++k) {
    work[d.metrics[k]] = s.work[k];
    span[d.metrics[k]] = s.span[k];
    par[d.metrics[k]] = analysis::parallelism_of(s.work[k], s.span[k]);
  }
  j["work"] = work;
  j["span"] = span;
  j["parallelism"] = par;
  // So that a reader (tasklens view) shows amounts as this report does: per common metric, its
  // units per second when it is a time (metric_rate), 0 for a count.
  Json rates;
  for (const std::string& metric : d.metrics) rates[metric] = metric_rate(r, metric);
  j["units_per_second"] = rates;
  return j;
}

Json metrics_json(const Diff& d, const UnitDiff& u) {
  Json j;
  for (size_t k = 0; k < d.metrics.size(); ++k) {
    const MetricDiff& x = u.metrics[k];
    j[d.metrics[k]] = {{"base", x.base},
                       {"other", x.other},
                       {"ratio", num_or_null(x.ratio)},
                       {"inflation", x.inflation},
                       {"critical", x.critical},
                       {"cost", x.cost},
                       {"cost_percent", x.cost_percent}};
  }
  return j;
}

Json unit_json(const DiffRun& base, const DiffRun& other, const Diff& d, const UnitDiff& u) {
  Json j;
  j["unit"] = u.name;
  j["kind"] = kind_name(u.kind, u.site_kind);
  std::string fn = function_of(base, u.kind, u.base_ids);
  if (fn.empty()) fn = function_of(other, u.kind, u.other_ids);
  j["function"] = fn;
  j["base_strands"] = u.base_strands;
  j["other_strands"] = u.other_strands;
  j["metrics"] = metrics_json(d, u);
  return j;
}

Json units_json(const DiffRun& base, const DiffRun& other, const Diff& d,
                const std::vector<UnitDiff>& rows, size_t top) {
  Json a = Json::array();
  for (size_t i = 0; i < rows.size() && i < top; ++i)
    a.push_back(unit_json(base, other, d, rows[i]));
  return a;
}

Json unmatched_json(const DiffRun& r, const std::vector<UnmatchedUnit>& units) {
  Json a = Json::array();
  for (const UnmatchedUnit& u : units)
    a.push_back({{"unit", u.name},
                 {"kind", kind_name(u.kind, u.site_kind)},
                 {"function", function_of(r, u.kind, u.ids)},
                 {"work", u.work}});
  return a;
}

// One table of units: cost, its share of other's span, the sort metric's ratio, base and other
// work, inflation, the unit's work on other's critical path, then the other metrics' ratios.
std::string units_table(const DiffRun& base, const DiffRun& other, const Diff& d,
                        const std::vector<UnitDiff>& rows, size_t top, bool costs) {
  const size_t k = d.sort_metric;
  std::string out = fmt::format("  {:>12} {:>7} {:>8} {:>12} {:>12} {:>13} {:>12}", "cost", "cost%",
                                "ratio", "base", "other", "inflation", "crit.work");
  for (size_t m = 0; m < d.metrics.size(); ++m)
    if (m != k) out += fmt::format(" {:>12}", "x " + d.metrics[m]);
  out += fmt::format("  {:<15} {:<28} {}\n", "kind", "unit", "function");
  for (size_t i = 0; i < rows.size() && i < top; ++i) {
    const UnitDiff& u = rows[i];
    const MetricDiff& x = u.metrics[k];
    std::string fn = function_of(base, u.kind, u.base_ids);
    if (fn.empty()) fn = function_of(other, u.kind, u.other_ids);
    out += fmt::format("  {:>12} {:>6.1f}% {:>8} {:>12} {:>12} {:>13} {:>12}",
                       costs ? signed_amount(other, d, k, double(x.cost)) : "-",
                       costs ? x.cost_percent : 0.0, ratio_str(x.ratio),
                       amount(base, d, k, double(x.base)), amount(other, d, k, double(x.other)),
                       signed_amount(other, d, k, double(x.inflation)),
                       amount(other, d, k, double(x.critical)));
    for (size_t m = 0; m < d.metrics.size(); ++m)
      if (m != k) out += fmt::format(" {:>12}", ratio_str(u.metrics[m].ratio));
    out += fmt::format("  {:<15} {:<28} {}\n", kind_name(u.kind, u.site_kind), u.name, fn);
  }
  if (rows.size() > top)
    out += fmt::format("  ({} more; use --top {} to see all)\n", rows.size() - top, rows.size());
  return out;
}

std::string unmatched_list(const std::vector<UnmatchedUnit>& units, const DiffRun& r, const Diff& d,
                           size_t top) {
  std::string s;
  for (size_t i = 0; i < units.size() && i < top; ++i)
    s += fmt::format("{}{} {} ({})", i ? ", " : "", kind_name(units[i].kind, units[i].site_kind),
                     units[i].name, amount(r, d, d.sort_metric, double(units[i].work)));
  if (units.size() > top) s += fmt::format(", and {} more", units.size() - top);
  return s;
}

void csv_rows(std::string& out, const DiffRun& base, const DiffRun& other,
              const std::vector<UnitDiff>& rows, size_t top, bool small) {
  for (size_t i = 0; i < rows.size() && i < top; ++i) {
    const UnitDiff& u = rows[i];
    std::string fn = function_of(base, u.kind, u.base_ids);
    if (fn.empty()) fn = function_of(other, u.kind, u.other_ids);
    out += fmt::format("{},{},{},{},{},{},{}", analysis::to_string(u.kind), csv_escape(u.name),
                       kind_name(u.kind, u.site_kind), csv_escape(fn), small ? 1 : 0,
                       u.base_strands, u.other_strands);
    for (const MetricDiff& x : u.metrics)
      out += fmt::format(",{},{},{},{},{},{},{:.6g}", x.base, x.other,
                         std::isnan(x.ratio) ? std::string() : fmt::format("{:.6g}", x.ratio),
                         x.inflation, x.critical, x.cost, x.cost_percent);
    out += "\n";
  }
}

}  // namespace

double metric_rate(const DiffRun& r, const std::string& metric) {
  const model::Model& m = *r.model;
  if (metric == m.metric) return m.metric_is_time ? m.ticks_per_second : 0;
  if (metric == "tsc") return r.tsc_hz;
  if (metric == "task-clock") return 1e9;  // perf counts it in ns
  return 0;
}

std::vector<std::string> diff_notes(const DiffRun& base, const DiffRun& other, const Diff& d) {
  std::vector<std::string> notes;
  if (d.base.workers > 1)
    notes.push_back(
        fmt::format("base ran on {} workers: it is not a contention-free oracle; record it with "
                    "OMP_NUM_THREADS=1 for one",
                    d.base.workers));
  if (d.other.workers <= 1 && d.base.workers <= 1)
    notes.push_back(
        "both recordings ran on one worker: no secondary effect of parallel execution can show");
  // Preempted time inside strands, against the workers' time: threads that were not running
  // could not contend, so effects of running together show only in part.
  const double other_time = double(d.other.elapsed) * std::max<uint32_t>(d.other.workers, 1);
  if (other.model->preempted > 0.05 * other_time && other_time > 0)
    notes.push_back(fmt::format(
        "other processes preempted other's threads for {:.0f}% of their time: they did not all "
        "run at once, so contention and false sharing show only in part; record on a quiet "
        "machine",
        100.0 * double(other.model->preempted) / other_time));
  // The work the model reports leaves out the runtime's own cost between events, estimated per
  // kind of interval (docs/model.md): per task it grows with the team (a team of several threads
  // queues, steals and waits where a one-thread team runs each task at once), so a recording on
  // more threads may show less work than the oracle, and a user must know that the comparison
  // is of the tasks' own code.
  const auto per_task_ns = [](const DiffRun& r) {
    const model::Model& m = *r.model;
    return m.task_count && r.tsc_hz > 0
               ? double(m.runtime_removed) / double(m.task_count) / r.tsc_hz * 1e9
               : 0.0;
  };
  if (base.model->runtime_removed > 0 || other.model->runtime_removed > 0)
    notes.push_back(fmt::format(
        "the OpenMP runtime's own cost was taken out of the work ({:.0f} ns per task in base, "
        "{:.0f} in other): the work compared is the tasks' own code; --keep-runtime-cost compares "
        "what the strands measured, the runtime's cost included (which grows with the team: "
        "queuing, stealing and waiting for tasks)",
        per_task_ns(base), per_task_ns(other)));
  if (basename_of(base.info.program) != basename_of(other.info.program))
    notes.push_back(fmt::format("different executables ({} and {}): units are matched by name",
                                basename_of(base.info.program), basename_of(other.info.program)));
  auto only = [&](const model::Model& m, const char* which) {
    for (const std::string& name : analysis::metric_names(m))
      if (std::find(d.metrics.begin(), d.metrics.end(), name) == d.metrics.end())
        notes.push_back(fmt::format("metric {} is only in {}: not compared", name, which));
  };
  only(*base.model, "base");
  only(*other.model, "other");
  return notes;
}

std::string render_diff(const DiffRun& base, const DiffRun& other, const Diff& d, Format format,
                        size_t top) {
  const std::vector<std::string> notes = diff_notes(base, other, d);
  const size_t k = d.sort_metric;
  if (format == Format::Json) {
    Json j;
    j["tasklens_version"] = TASKLENS_VERSION;
    j["base"] = side_json(base, d.base, d);
    j["other"] = side_json(other, d.other, d);
    j["metrics"] = d.metrics;
    j["sort_metric"] = d.metrics[k];
    j["min_share_percent"] = 100.0 * d.min_share;
    if (!base.info.span_mode.empty()) j["span_mode"] = base.info.span_mode;
    j["notes"] = notes;
    j["program"] = metrics_json(d, d.program);
    j["sites"] = units_json(base, other, d, d.sites, top);
    j["fragments"] = units_json(base, other, d, d.fragments, top);
    j["small_sites"] = units_json(base, other, d, d.small_sites, top);
    j["small_fragments"] = units_json(base, other, d, d.small_fragments, top);
    j["only_in_base"] = unmatched_json(base, d.only_base);
    j["only_in_other"] = unmatched_json(other, d.only_other);
    return json_text(j, 2) + "\n";
  }
  if (format == Format::Csv) {
    std::string out = "unit_kind,unit,kind,function,small,base_strands,other_strands";
    for (const std::string& m : d.metrics)
      for (const char* f :
           {"base", "other", "ratio", "inflation", "critical", "cost", "cost_percent"})
        out += fmt::format(",{}_{}", m, f);
    out += "\n";
    csv_rows(out, base, other, {d.program}, 1, false);
    csv_rows(out, base, other, d.sites, top, false);
    csv_rows(out, base, other, d.fragments, top, false);
    csv_rows(out, base, other, d.small_sites, top, true);
    csv_rows(out, base, other, d.small_fragments, top, true);
    return out;
  }

  auto who = [](const DiffRun& r, const DiffSide& s) {
    return fmt::format("{} ({}, {} thread{})", r.info.trace_path, basename_of(r.info.program),
                       s.threads, s.threads == 1 ? "" : "s");
  };
  std::string metrics;
  for (size_t m = 0; m < d.metrics.size(); ++m) metrics += (m ? ", " : "") + d.metrics[m];
  std::string out =
      fmt::format("tasklens diff: base {} against other {}, metric{} {}\n", who(base, d.base),
                  who(other, d.other), d.metrics.size() == 1 ? "" : "s", metrics);
  for (const std::string& w : base.model->warnings) out += fmt::format("warning: base: {}\n", w);
  for (const std::string& w : other.model->warnings) out += fmt::format("warning: other: {}\n", w);
  if (!base.model->complete) out += "warning: base: INCOMPLETE trace\n";
  if (!other.model->complete) out += "warning: other: INCOMPLETE trace\n";
  for (const std::string& n : notes) out += fmt::format("note: {}\n", n);

  out += fmt::format("\n  {:<8} {:>7} {:>7} {:>9} {:>12} {:>12} {:>12} {:>11}\n", "", "threads",
                     "workers", "tasks", "work", "span", "elapsed", "parallelism");
  auto side_row = [&](const char* name, const DiffRun& r, const DiffSide& s) {
    return fmt::format(
        "  {:<8} {:>7} {:>7} {:>9} {:>12} {:>12} {:>12} {:>11.2f}\n", name, s.threads, s.workers,
        s.tasks, amount(r, d, k, double(s.work[k])), amount(r, d, k, double(s.span[k])),
        format_amount(double(s.elapsed), r.tsc_hz), analysis::parallelism_of(s.work[k], s.span[k]));
  };
  out += side_row("base", base, d.base);
  out += side_row("other", other, d.other);
  auto x = [](double a, double b) { return b > 0 ? fmt::format("{:.2f}x", a / b) : "-"; };
  out += fmt::format("  {:<8} {:>7} {:>7} {:>9} {:>12} {:>12} {:>12}\n", "other/base", "", "", "",
                     x(double(d.other.work[k]), double(d.base.work[k])),
                     x(double(d.other.span[k]), double(d.base.span[k])),
                     x(double(d.other.elapsed), double(d.base.elapsed)));

  const MetricDiff& p = d.program.metrics[k];
  out += fmt::format("\nwhole program ({}): work {} in base, {} in other ({}, {});\n", d.metrics[k],
                     amount(base, d, k, double(p.base)), amount(other, d, k, double(p.other)),
                     ratio_str(p.ratio), signed_amount(other, d, k, double(p.inflation)));
  if (p.cost >= 0)
    out += fmt::format(
        "  scaled back to base's work, other's span would be {} shorter ({:.1f}% of it): the "
        "inflation's cost on the critical path\n",
        amount(other, d, k, double(p.cost)), p.cost_percent);
  else
    out += fmt::format(
        "  other did less work than base: scaled back to base's, its span would be {} longer "
        "({:.1f}% more)\n",
        amount(other, d, k, double(-p.cost)), -p.cost_percent);
  for (size_t m = 0; m < d.metrics.size(); ++m)
    if (m != k)
      out += fmt::format("  {}: work {} -> {} ({}), span {} -> {}\n", d.metrics[m],
                         amount(base, d, m, double(d.program.metrics[m].base)),
                         amount(other, d, m, double(d.program.metrics[m].other)),
                         ratio_str(d.program.metrics[m].ratio),
                         amount(base, d, m, double(d.base.span[m])),
                         amount(other, d, m, double(d.other.span[m])));

  out += fmt::format(
      "\nconstruct sites, by the cost of their inflation on other's critical path ({}):\n",
      d.metrics[k]);
  out += units_table(base, other, d, d.sites, top, true);
  out += fmt::format("\ncode fragments, by the cost of their inflation ({}):\n", d.metrics[k]);
  out += units_table(base, other, d, d.fragments, top, true);
  const size_t small = d.small_sites.size() + d.small_fragments.size();
  if (small)
    out += fmt::format(
        "\n{} site{} and {} fragment{} below {:g}% of the work in both recordings are left out "
        "(ratios of little work are noise; --min-share 0 shows them)\n",
        d.small_sites.size(), d.small_sites.size() == 1 ? "" : "s", d.small_fragments.size(),
        d.small_fragments.size() == 1 ? "" : "s", 100.0 * d.min_share);
  if (!d.only_base.empty())
    out += "only in base: " + unmatched_list(d.only_base, base, d, top) + "\n";
  if (!d.only_other.empty())
    out += "only in other: " + unmatched_list(d.only_other, other, d, top) + "\n";
  out +=
      "\nratio = other's work / base's; inflation = other - base; crit.work = the unit's work on "
      "other's\ncritical path; cost = how much shorter other's critical path would be if the "
      "unit did only\nbase's work there (OMP-WHIP's differential analysis).\n";
  return out;
}

}  // namespace tasklens::report
