#include "report/tasks_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "report/json_text.hpp"

namespace tasklens::report {
namespace {

using analysis::ComparisonKind;
using analysis::FindingKind;
using analysis::Histogram;
using analysis::Stats;
using analysis::TaskType;
using Json = nlohmann::ordered_json;

// A value of `per_second` units per second as a duration; a plain count when 0.
std::string amount(double v, double per_second) { return format_amount(v, per_second); }

// Sizes (metric units) and times (TSC ticks) per second, 0 when not time-like.
double size_rate(const model::Model& m) { return m.metric_is_time ? m.ticks_per_second : 0; }
std::string size_str(const TasksRun& r, double v) { return amount(v, size_rate(*r.model)); }
std::string time_str(const TasksRun& r, double v) { return amount(v, r.tsc_hz); }

const std::string& label_of(const TasksRun& r, const TaskType& t) {
  static const std::string unknown = "<unknown>";
  return t.site < r.labels->size() ? (*r.labels)[t.site].site : unknown;
}
const char* kind_of(const TasksRun& r, const TaskType& t) {
  return model::to_string(r.model->sites[t.site].kind);
}
const char* noun(const TaskType& t) { return t.chunks ? "chunks" : "tasks"; }

double percent(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

std::string ratio_str(double x) { return std::isnan(x) ? "-" : fmt::format("{:.2f}x", x); }

Json ratio_json(double x) { return std::isnan(x) ? Json(nullptr) : Json(x); }

Json stats_json(const Stats& s) {
  return {{"samples", s.samples}, {"total", s.total}, {"mean", s.mean}, {"min", s.min},
          {"median", s.median},   {"p90", s.p90},     {"max", s.max}};
}

Json histogram_json(const Histogram& h) {
  Json bins = Json::array();
  for (size_t i = 0; i < h.counts.size(); ++i)
    bins.push_back({{"lower", h.lower(i)}, {"upper", h.upper(i)}, {"count", h.counts[i]}});
  return bins;
}

std::string bar(uint64_t count, uint64_t most, int width) {
  if (count == 0 || most == 0) return "";
  int n = static_cast<int>(std::llround(double(count) * width / double(most)));
  return std::string(static_cast<size_t>(std::max(n, 1)), '#');
}

uint64_t most_of(const Histogram& h) {
  uint64_t m = 0;
  for (uint64_t c : h.counts) m = std::max(m, c);
  return m;
}

// Rows "[lower, upper)  count bar ..." for histograms sharing their bins (all of `hs`).
std::string histogram_rows(const std::vector<const Histogram*>& hs,
                           const std::vector<std::string>& names, double per_second) {
  const Histogram& first = *hs[0];
  if (first.counts.empty()) return "";
  constexpr int kBar = 14;
  std::string out = fmt::format("  {:<24}", "histogram");
  for (const std::string& n : names) out += fmt::format(" {:>7} {:<{}}", n, "", kBar);
  while (!out.empty() && out.back() == ' ') out.pop_back();
  out += "\n";
  for (size_t i = 0; i < first.counts.size(); ++i) {
    std::string range =
        fmt::format("[{}, {})", i == 0 ? std::string("0") : amount(first.lower(i), per_second),
                    amount(first.upper(i), per_second));
    out += fmt::format("  {:<24}", range);
    for (const Histogram* h : hs)
      out += fmt::format(" {:>7} {:<{}}", h->counts.empty() ? 0 : h->counts[i],
                         bar(h->counts.empty() ? 0 : h->counts[i], most_of(*h), kBar), kBar);
    while (!out.empty() && out.back() == ' ') out.pop_back();
    out += "\n";
  }
  return out;
}

std::string type_table(const TasksRun& r, const TaskType& t) {
  const model::Model& m = *r.model;
  const analysis::TaskProfile& p = *r.profile;
  const SiteLabel* l = t.site < r.labels->size() ? &(*r.labels)[t.site] : nullptr;
  std::string out =
      fmt::format("{} ({}{}{}{}): {} {}, {} ({:.1f}% of the work)\n", label_of(r, t), kind_of(r, t),
                  t.chunks ? " chunks" : "", l && !l->function.empty() ? " in " : "",
                  l ? l->function : "", t.size.samples, noun(t), size_str(r, double(t.size.total)),
                  percent(double(t.size.total), double(p.work)));
  out += fmt::format("  {:<8} {:>12} {:>12} {:>12} {:>12} {:>12}\n", "", "mean", "min", "median",
                     "p90", "max");
  auto row = [&](const char* name, const Stats& s, bool time, const char* note) {
    if (s.samples == 0) return fmt::format("  {:<8} (none{})\n", name, note);
    auto f = [&](double v) { return time ? time_str(r, v) : size_str(r, v); };
    return fmt::format("  {:<8} {:>12} {:>12} {:>12} {:>12} {:>12}{}\n", name, f(s.mean),
                       f(double(s.min)), f(double(s.median)), f(double(s.p90)), f(double(s.max)),
                       note);
  };
  out += row("size", t.size, false, "");
  out += row("wait", t.wait, true, "   (ready -> start)");
  out += row("idle", t.idle, true, "   (worker in the runtime before the start)");
  if (r.options.same_unit) {
    out += histogram_rows({&t.size_hist, &t.wait_hist, &t.idle_hist}, {"size", "wait", "idle"},
                          r.tsc_hz);
  } else {
    out += histogram_rows({&t.size_hist}, {"size"}, size_rate(m));
    out += histogram_rows({&t.wait_hist, &t.idle_hist}, {"wait", "idle"}, r.tsc_hz);
  }
  return out;
}

std::string header_line(const TasksRun& r) {
  const model::Model& m = *r.model;
  std::string out = fmt::format("tasklens tasks: {} (pid {}), {} threads, {} tasks, metric {}{}\n",
                                basename_of(r.info.program), r.info.pid, m.thread_count,
                                m.task_count, m.metric, m.complete ? "" : ", INCOMPLETE trace");
  for (const std::string& w : m.warnings) out += fmt::format("warning: {}\n", w);
  return out;
}

void put_head(Json& j, const TasksRun& r) {
  const model::Model& m = *r.model;
  j["trace"] = r.info.trace_path;
  j["executable"] = r.info.program;
  j["metric"] = m.metric;
  j["ticks_per_second"] = m.ticks_per_second;
  j["tsc_per_second"] = r.tsc_hz;
  j["complete"] = m.complete;
  j["threads"] = m.thread_count;
  j["workers"] = r.profile->workers;
  j["tasks"] = r.profile->tasks;
  j["task_work"] = r.profile->task_work;
  j["program_work"] = r.profile->work;
  j["warnings"] = m.warnings;
  // Read in one pass: the percentiles' bound (analysis::TaskProfile::sketch_error).
  if (r.profile->sketch_error > 0) j["percentile_relative_error"] = r.profile->sketch_error;
}

Json head_json(const TasksRun& r) {
  Json j;
  put_head(j, r);
  return j;
}

}  // namespace

std::vector<std::string> task_type_keys(const model::Model& m,
                                        const std::vector<SiteLabel>& labels) {
  std::vector<std::string> keys(m.sites.size());
  for (size_t i = 0; i < m.sites.size(); ++i)
    keys[i] = (i < labels.size() ? labels[i].site : std::to_string(i)) + "|" +
              model::to_string(m.sites[i].kind);
  return keys;
}

std::string finding_text(const TasksRun& r, const analysis::Finding& f) {
  const TaskType& t = r.profile->types[f.type];
  const std::string& site = label_of(r, t);
  const double median = double(t.size.median);
  switch (f.kind) {
    case FindingKind::ManyTinyTasks: {
      // Say what the threshold stands for when it is the measured overhead's multiple.
      const std::string why =
          r.options.tiny_from_task_cost
              ? fmt::format(" ({} x the {} one task costs)", analysis::kTinyTaskCosts,
                            size_str(r, double(r.model->task_cost)))
              : std::string();
      return fmt::format(
          "many tiny tasks: {:.0f}% of the {} of {} run under {}{} (median {}): tasking "
          "overhead dominates, raise the cut-off (make each task do more)",
          percent(double(t.tiny), double(t.size.samples)), noun(t), site,
          size_str(r, double(r.options.tiny_size)), why, size_str(r, median));
    }
    case FindingKind::IdleLongerThanRunning:
      return fmt::format(
          "waiting longer than running: workers spend a median {} in the runtime before each of "
          "the {} of {} starts, which then runs a median {}: not enough parallelism (too few "
          "ready tasks at times) or scheduling overhead",
          time_str(r, double(t.idle.median)), noun(t), site, size_str(r, median));
    case FindingKind::QueuedLongerThanRunning:
      return fmt::format(
          "waiting longer than running: the {} of {} wait a median {} from ready to start and "
          "run a median {}, while the workers are busy: more ready tasks than the {} workers "
          "(too few workers for this parallelism: more cores would help)",
          noun(t), site, time_str(r, double(t.wait.median)), size_str(r, median),
          r.profile->workers);
    case FindingKind::FewLargeTasks:
      return fmt::format(
          "few large tasks: {} has {} {} for {} workers, mean {} ({:.0f}% of the work): low "
          "overhead but limited parallelism and load imbalance; split them",
          site, t.size.samples, noun(t), r.profile->workers, size_str(r, t.size.mean),
          percent(double(t.size.total), double(r.profile->work)));
    case FindingKind::DominantTask:
      return fmt::format(
          "one task dominates: the largest of the {} of {} runs {}, more than their total shared "
          "among the {} workers ({}): load imbalance, split the large ones",
          noun(t), site, size_str(r, double(t.size.max)), r.profile->workers,
          size_str(r, double(t.size.total) / r.profile->workers));
    case FindingKind::RareLongWaits:
      return fmt::format(
          "rare long waits: {} of the {} {} of {} waited over {} from ready to start (median "
          "wait {}, longest {}): the runtime growing its task pool or starting threads, or the "
          "OS, rather than the program's parallelism; look at the timeline of those moments",
          t.long_waits, t.wait.samples, noun(t), site, time_str(r, double(t.long_wait_threshold)),
          time_str(r, double(t.wait.median)), time_str(r, double(t.wait.max)));
  }
  return "";
}

std::string comparison_text(const TasksRun& base, const TasksRun& other,
                            const analysis::TaskComparison& c,
                            const analysis::ComparisonFinding& f) {
  const analysis::TypeComparison& row = c.rows[f.row];
  const TaskType& a = base.profile->types[row.base];
  const TaskType& b = other.profile->types[row.other];
  const std::string& site = label_of(base, a);
  const std::string threads = fmt::format(
      "{} worker(s) in {} than with {} in {}", other.profile->workers,
      basename_of(other.info.trace_path), base.profile->workers, basename_of(base.info.trace_path));
  switch (f.kind) {
    case ComparisonKind::SizeInflation:
      return fmt::format(
          "task-size inflation: the {} of {} run {} longer (median; mean {}) with {}: the same "
          "work takes longer, which points at contention (memory bandwidth, locks, false "
          "sharing) or lost locality",
          noun(a), site, ratio_str(row.median_ratio), ratio_str(row.mean_ratio), threads);
    case ComparisonKind::SizeDeflation:
      return fmt::format(
          "smaller tasks: the {} of {} run {} as long (median; mean {}) with {}: another input "
          "or cut-off?",
          noun(a), site, ratio_str(row.median_ratio), ratio_str(row.mean_ratio), threads);
    case ComparisonKind::CountChanged:
      return fmt::format(
          "different task counts: {} has {} {} in {} and {} in {}: the task structure depends "
          "on the run (input, cut-off by thread count), sizes compare less directly",
          site, a.size.samples, noun(a), basename_of(base.info.trace_path), b.size.samples,
          basename_of(other.info.trace_path));
    case ComparisonKind::ShapeChanged:
      return fmt::format(
          "different size histograms: the {} of {} changed shape (distance {:.2f}, 0 = same, "
          "1 = disjoint): their sizes depend on the run",
          noun(a), site, row.shape_distance);
  }
  return "";
}

std::string render_tasks(const TasksRun& r, Format format, size_t top) {
  const analysis::TaskProfile& p = *r.profile;
  const size_t rows = std::min(top, p.types.size());
  if (format == Format::Json) {
    Json j;
    j["tasklens_version"] = TASKLENS_VERSION;
    put_head(j, r);
    j["bins"] = r.options.bins;
    j["tiny_threshold"] = r.options.tiny_size;
    // Where the threshold comes from: 20 x the measured tasking overhead, or 1 us.
    j["tiny_threshold_source"] = r.options.tiny_from_task_cost ? "task_cost" : "fixed";
    if (r.model->task_cost > 0)
      j["task_cost"] = r.model->task_cost;
    else
      j["task_cost"] = nullptr;
    Json findings = Json::array();
    for (const analysis::Finding& f : p.findings)
      findings.push_back({{"kind", analysis::to_string(f.kind)},
                          {"site", label_of(r, p.types[f.type])},
                          {"text", finding_text(r, f)}});
    j["findings"] = findings;
    Json types = Json::array();
    for (size_t i = 0; i < rows; ++i) {
      const TaskType& t = p.types[i];
      const SiteLabel* l = t.site < r.labels->size() ? &(*r.labels)[t.site] : nullptr;
      types.push_back({{"site", label_of(r, t)},
                       {"file", l ? l->file : ""},
                       {"line", l ? l->line : 0},
                       {"function", l ? l->function : ""},
                       {"kind", kind_of(r, t)},
                       {"unit", t.chunks ? "chunk" : "task"},
                       {"count", t.size.samples},
                       {"total", t.size.total},
                       {"work_percent", percent(double(t.size.total), double(p.work))},
                       {"tiny", t.tiny},
                       {"long_waits", t.long_waits},
                       {"long_wait_threshold", t.long_wait_threshold},
                       {"size", stats_json(t.size)},
                       {"wait", stats_json(t.wait)},
                       {"idle", stats_json(t.idle)},
                       {"size_histogram", histogram_json(t.size_hist)},
                       {"wait_histogram", histogram_json(t.wait_hist)},
                       {"idle_histogram", histogram_json(t.idle_hist)}});
    }
    j["types"] = types;
    return json_text(j, 2) + "\n";
  }
  if (format == Format::Csv) {
    std::string out =
        "site,file,line,function,kind,unit,count,total,mean,min,median,p90,max,tiny,"
        "wait_samples,wait_mean,wait_median,wait_p90,wait_max,idle_samples,idle_mean,"
        "idle_median,idle_p90,idle_max,size_bins,wait_bins,idle_bins\n";
    // Bins as "lower:count" separated by spaces (lower edges in the histogram's unit).
    auto bins = [](const Histogram& h) {
      std::string s;
      for (size_t i = 0; i < h.counts.size(); ++i)
        s += fmt::format("{}{:.0f}:{}", i ? " " : "", h.lower(i), h.counts[i]);
      return s;
    };
    for (size_t i = 0; i < rows; ++i) {
      const TaskType& t = p.types[i];
      const SiteLabel* l = t.site < r.labels->size() ? &(*r.labels)[t.site] : nullptr;
      out += fmt::format(
          "{},{},{},{},{},{},{},{},{:.6g},{},{},{},{},{},{},{:.6g},{},{},{},{},{:.6g},{},{},{},"
          "{},{},{}\n",
          csv_escape(label_of(r, t)), csv_escape(l ? l->file : ""), l ? l->line : 0,
          csv_escape(l ? l->function : ""), kind_of(r, t), t.chunks ? "chunk" : "task",
          t.size.samples, t.size.total, t.size.mean, t.size.min, t.size.median, t.size.p90,
          t.size.max, t.tiny, t.wait.samples, t.wait.mean, t.wait.median, t.wait.p90, t.wait.max,
          t.idle.samples, t.idle.mean, t.idle.median, t.idle.p90, t.idle.max, bins(t.size_hist),
          bins(t.wait_hist), bins(t.idle_hist));
    }
    return out;
  }
  std::string out = header_line(r);
  out += fmt::format(
      "{} task type{}, {} tasks run by {} worker{}: {} of task work ({:.1f}% of the "
      "program's)\n\n",
      p.types.size(), p.types.size() == 1 ? "" : "s", p.tasks, p.workers, p.workers == 1 ? "" : "s",
      size_str(r, double(p.task_work)), percent(double(p.task_work), double(p.work)));
  out += p.findings.empty() ? "findings: none (sizes and waits look healthy)\n" : "findings:\n";
  for (const analysis::Finding& f : p.findings) out += "  " + finding_text(r, f) + "\n";
  for (size_t i = 0; i < rows; ++i) out += "\n" + type_table(r, p.types[i]);
  if (rows < p.types.size())
    out += fmt::format("\n({} more task types; use --top {} to see all)\n", p.types.size() - rows,
                       p.types.size());
  out +=
      "\nsize = work of the task's own strands (not its children's); wait = from ready (the end "
      "of its\ncreator or last predecessor) to its start; idle = time its worker spent in the "
      "runtime just before.\n";
  return out;
}

std::string render_task_comparison(const TasksRun& base, const TasksRun& other,
                                   const analysis::TaskComparison& c, Format format, size_t top) {
  const size_t rows = std::min(top, c.rows.size());
  auto side = [](const TaskType& t) {
    return Json{{"count", t.size.samples}, {"total", t.size.total}, {"mean", t.size.mean},
                {"median", t.size.median}, {"p90", t.size.p90},     {"max", t.size.max}};
  };
  if (format == Format::Json) {
    Json j;
    j["tasklens_version"] = TASKLENS_VERSION;
    j["base"] = head_json(base);
    j["other"] = head_json(other);
    Json findings = Json::array();
    for (const analysis::ComparisonFinding& f : c.findings)
      findings.push_back({{"kind", analysis::to_string(f.kind)},
                          {"site", label_of(base, base.profile->types[c.rows[f.row].base])},
                          {"text", comparison_text(base, other, c, f)}});
    j["findings"] = findings;
    Json types = Json::array();
    for (size_t i = 0; i < rows; ++i) {
      const analysis::TypeComparison& row = c.rows[i];
      const TaskType& a = base.profile->types[row.base];
      const TaskType& b = other.profile->types[row.other];
      types.push_back({{"site", label_of(base, a)},
                       {"kind", kind_of(base, a)},
                       {"unit", a.chunks ? "chunk" : "task"},
                       {"base", side(a)},
                       {"other", side(b)},
                       {"mean_ratio", ratio_json(row.mean_ratio)},
                       {"median_ratio", ratio_json(row.median_ratio)},
                       {"shape_distance", row.shape_distance}});
    }
    j["types"] = types;
    Json ob = Json::array(), oo = Json::array();
    for (size_t i : c.only_base) ob.push_back(label_of(base, base.profile->types[i]));
    for (size_t i : c.only_other) oo.push_back(label_of(other, other.profile->types[i]));
    j["only_in_base"] = ob;
    j["only_in_other"] = oo;
    return json_text(j, 2) + "\n";
  }
  if (format == Format::Csv) {
    std::string out =
        "site,kind,unit,base_count,other_count,base_mean,other_mean,base_median,other_median,"
        "mean_ratio,median_ratio,shape_distance\n";
    for (size_t i = 0; i < rows; ++i) {
      const analysis::TypeComparison& row = c.rows[i];
      const TaskType& a = base.profile->types[row.base];
      const TaskType& b = other.profile->types[row.other];
      out +=
          fmt::format("{},{},{},{},{},{:.6g},{:.6g},{},{},{:.6g},{:.6g},{:.4f}\n",
                      csv_escape(label_of(base, a)), kind_of(base, a), a.chunks ? "chunk" : "task",
                      a.size.samples, b.size.samples, a.size.mean, b.size.mean, a.size.median,
                      b.size.median, row.mean_ratio, row.median_ratio, row.shape_distance);
    }
    return out;
  }
  auto workers = [](const TasksRun& r) {
    return fmt::format("{} worker{}", r.profile->workers, r.profile->workers == 1 ? "" : "s");
  };
  std::string out = fmt::format("tasklens tasks: {} ({}) against {} ({})\n", base.info.trace_path,
                                workers(base), other.info.trace_path, workers(other));
  for (const std::string& w : base.model->warnings) out += fmt::format("warning: base: {}\n", w);
  for (const std::string& w : other.model->warnings) out += fmt::format("warning: other: {}\n", w);
  out += c.findings.empty() ? "\nfindings: none (task sizes did not change)\n" : "\nfindings:\n";
  for (const analysis::ComparisonFinding& f : c.findings)
    out += "  " + comparison_text(base, other, c, f) + "\n";
  out +=
      fmt::format("\n  {:<24} {:<15} {:>8} {:>8} {:>12} {:>12} {:>12} {:>12} {:>8} {:>8} {:>6}\n",
                  "site", "kind", "count", "count'", "mean", "mean'", "median", "median'", "mean x",
                  "median x", "shape");
  for (size_t i = 0; i < rows; ++i) {
    const analysis::TypeComparison& row = c.rows[i];
    const TaskType& a = base.profile->types[row.base];
    const TaskType& b = other.profile->types[row.other];
    out += fmt::format(
        "  {:<24} {:<15} {:>8} {:>8} {:>12} {:>12} {:>12} {:>12} {:>8} {:>8} {:>6.2f}\n",
        label_of(base, a), std::string(kind_of(base, a)) + (a.chunks ? " chunks" : ""),
        a.size.samples, b.size.samples, size_str(base, a.size.mean), size_str(other, b.size.mean),
        size_str(base, double(a.size.median)), size_str(other, double(b.size.median)),
        ratio_str(row.mean_ratio), ratio_str(row.median_ratio), row.shape_distance);
  }
  if (rows < c.rows.size())
    out +=
        fmt::format("  ({} more; use --top {} to see all)\n", c.rows.size() - rows, c.rows.size());
  auto list = [](const TasksRun& r, const std::vector<size_t>& idx) {
    std::string s;
    for (size_t i : idx) s += (s.empty() ? "" : ", ") + label_of(r, r.profile->types[i]);
    return s;
  };
  if (!c.only_base.empty())
    out += "only in " + base.info.trace_path + ": " + list(base, c.only_base) + "\n";
  if (!c.only_other.empty())
    out += "only in " + other.info.trace_path + ": " + list(other, c.only_other) + "\n";
  out +=
      "\n' = the other recording; x = other / base; shape = distance between the two size "
      "histograms\n(0 = same shape, 1 = disjoint).\n";
  return out;
}

}  // namespace tasklens::report
