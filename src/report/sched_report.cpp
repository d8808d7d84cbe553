#include "report/sched_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "report/json_text.hpp"

namespace tasklens::report {
namespace {

using analysis::SchedComponents;
using analysis::SchedPoint;
using Json = nlohmann::ordered_json;

constexpr size_t kSparkWidth = 64;  // the table's sparklines

// A value of `per_second` units per second as a duration; a plain count when 0.
std::string amount(double v, double per_second) { return format_amount(v, per_second); }

double percent(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0.0; }

// Metric units per second when the metric is a time (T1, T-infinity as time), else 0.
double work_rate(const model::Model& m) { return m.metric_is_time ? m.ticks_per_second : 0; }

std::string time_str(const SchedRun& r, double ticks) { return amount(ticks, r.tsc_hz); }
std::string work_str(const SchedRun& r, double v) { return amount(v, work_rate(*r.model)); }

// Brent: a greedy schedule on P workers takes at most T1/P + T-infinity, and no schedule takes
// less than max(T1/P, T-infinity).
double greedy_bound(const SchedRun& r) {
  const uint32_t p = r.schedule->workers;
  return p ? double(r.work) / p + double(r.span) : 0.0;
}
double lower_bound(const SchedRun& r) {
  const uint32_t p = r.schedule->workers;
  return p ? std::max(double(r.work) / p, double(r.span)) : 0.0;
}
// Seconds of a metric value and of TSC ticks (NaN when unknown).
double work_seconds(const SchedRun& r, double v) {
  const double rate = work_rate(*r.model);
  return rate > 0 ? v / rate : NAN;
}
double tick_seconds(const SchedRun& r, double ticks) {
  return r.tsc_hz > 0 ? ticks / r.tsc_hz : NAN;
}
Json num_or_null(double x) { return std::isnan(x) ? Json(nullptr) : Json(x); }

Json components_json(const SchedComponents& c) {
  return {{"work", c.work},
          {"delay", c.delay},
          {"no_work_sched", c.no_work_sched},
          {"no_work_app", c.no_work_app},
          {"no_work", c.no_work()},
          {"cumulative", c.total()}};
}

}  // namespace

std::vector<std::string> sched_notes(const SchedRun& r) {
  std::vector<std::string> notes;
  const analysis::Schedule& s = *r.schedule;
  if (s.workers == 1)
    notes.push_back(
        "one worker ran every strand: the breakdown is trivial (no other worker could have run "
        "a ready strand); record with more threads (OMP_NUM_THREADS) to see scheduling delays");
  if (r.model->preempted > s.total.work / 100)
    notes.push_back(fmt::format(
        "{} of the work column is preemption by other processes (a preempted strand still "
        "holds its worker); T1 excludes it",
        amount(double(r.model->preempted), r.tsc_hz)));
  if (work_rate(*r.model) <= 0)
    notes.push_back(fmt::format(
        "metric {} is not a time: T1 and T-infinity are in its unit and the greedy bound does "
        "not compare with the elapsed time",
        r.model->metric));
  return notes;
}

std::string sparkline(const std::vector<double>& values, double top) {
  static const char* const kBlocks[] = {"\u2581", "\u2582", "\u2583", "\u2584",
                                        "\u2585", "\u2586", "\u2587", "\u2588"};
  std::string out;
  for (double v : values) {
    if (!(v > 0) || !(top > 0)) {
      out += ' ';
      continue;
    }
    const int level = std::clamp(static_cast<int>(std::ceil(v / top * 8.0)) - 1, 0, 7);
    out += kBlocks[level];
  }
  return out;
}

std::string render_sched(const SchedRun& r, Format format) {
  const model::Model& m = *r.model;
  const analysis::Schedule& s = *r.schedule;
  const std::vector<std::string> notes = sched_notes(r);
  const double bound = greedy_bound(r), lower = lower_bound(r);
  const double bound_s = work_seconds(r, bound), observed_s = tick_seconds(r, double(s.elapsed));
  const double lower_s = work_seconds(r, lower);

  if (format == Format::Json) {
    Json j;
    j["tasklens_version"] = TASKLENS_VERSION;
    j["trace"] = r.info.trace_path;
    j["executable"] = r.info.program;
    j["metric"] = m.metric;
    j["ticks_per_second"] = m.ticks_per_second;
    j["tsc_per_second"] = r.tsc_hz;
    j["complete"] = m.complete;
    j["threads"] = m.thread_count;
    j["workers"] = s.workers;
    j["strands"] = s.timed_strands;
    j["warnings"] = m.warnings;
    j["notes"] = notes;
    j["first"] = s.first;
    j["last"] = s.last;
    j["elapsed"] = s.elapsed;
    j["elapsed_seconds"] = num_or_null(observed_s);
    j["cumulative"] = s.cumulative;
    j["preempted"] = m.preempted;
    j["breakdown"] = components_json(s.total);
    Json workers = Json::array();
    for (const analysis::SchedWorker& w : s.per_worker) {
      workers.push_back({{"thread", w.thread},
                         {"strands", w.strands},
                         {"work", w.time.work},
                         {"delay", w.time.delay},
                         {"no_work_sched", w.time.no_work_sched},
                         {"no_work_app", w.time.no_work_app},
                         {"no_work", w.time.no_work()},
                         {"cumulative", w.time.total()}});
    }
    j["per_worker"] = workers;
    j["bounds"] = {
        {"work", r.work},
        {"span", r.span},
        {"parallelism", r.span ? double(r.work) / double(r.span) : 0.0},
        {"lower_bound", lower},
        {"greedy_bound", bound},
        {"work_seconds", num_or_null(work_seconds(r, double(r.work)))},
        {"span_seconds", num_or_null(work_seconds(r, double(r.span)))},
        {"lower_bound_seconds", num_or_null(lower_s)},
        {"greedy_bound_seconds", num_or_null(bound_s)},
        {"observed_seconds", num_or_null(observed_s)},
        {"observed_over_bound",
         std::isnan(bound_s) || !(bound_s > 0) ? Json(nullptr) : Json(observed_s / bound_s)}};
    j["ready_path"] = {{"strands", s.path.length},
                       {"work", s.path.work},
                       {"scheduler_delay", s.path.scheduler_delay},
                       {"busy_delay", s.path.busy_delay},
                       {"before", s.path.before}};
    const std::vector<SchedPoint> pts = analysis::points(s, r.points);
    Json series = Json::array();
    for (const SchedPoint& p : pts)
      series.push_back({{"begin", p.begin},
                        {"end", p.end},
                        {"running", p.running},
                        {"ready", p.ready},
                        {"running_max", p.running_max},
                        {"ready_max", p.ready_max}});
    j["parallelism"] = {{"points", pts.size()},
                        {"running_ticks", s.running_ticks},
                        {"ready_ticks", s.ready_ticks},
                        {"running_average", s.elapsed ? double(s.running_ticks) / s.elapsed : 0.0},
                        {"ready_average", s.elapsed ? double(s.ready_ticks) / s.elapsed : 0.0},
                        {"running_max", s.max_running},
                        {"ready_max", s.max_ready},
                        {"series", series}};
    return json_text(j, 2) + "\n";
  }

  if (format == Format::Csv) {
    // Three tables separated by a blank line: the breakdown per worker (and the total), the
    // bounds (name,value), the time series.
    std::string out = "worker,thread,strands,work,delay,no_work_sched,no_work_app,cumulative\n";
    for (size_t w = 0; w < s.per_worker.size(); ++w) {
      const analysis::SchedWorker& x = s.per_worker[w];
      out += fmt::format("{},{},{},{},{},{},{},{}\n", w, x.thread, x.strands, x.time.work,
                         x.time.delay, x.time.no_work_sched, x.time.no_work_app, x.time.total());
    }
    out += fmt::format("total,,{},{},{},{},{},{}\n", s.timed_strands, s.total.work, s.total.delay,
                       s.total.no_work_sched, s.total.no_work_app, s.total.total());
    out += "\nname,value\n";
    auto opt = [](double x) { return std::isnan(x) ? std::string() : fmt::format("{:.9g}", x); };
    out += fmt::format(
        "workers,{}\nelapsed,{}\ncumulative,{}\npreempted,{}\nwork,{}\nspan,{}\nlower_bound,{:.6g}"
        "\n"
        "greedy_bound,{:.6g}\n",
        s.workers, s.elapsed, s.cumulative, m.preempted, r.work, r.span, lower, bound);
    out += fmt::format("elapsed_seconds,{}\nlower_bound_seconds,{}\ngreedy_bound_seconds,{}\n",
                       opt(observed_s), opt(lower_s), opt(bound_s));
    out +=
        fmt::format("path_work,{}\npath_scheduler_delay,{}\npath_busy_delay,{}\npath_before,{}\n",
                    s.path.work, s.path.scheduler_delay, s.path.busy_delay, s.path.before);
    out += "\nbegin,end,running,ready,running_max,ready_max\n";
    for (const SchedPoint& p : analysis::points(s, r.points))
      out += fmt::format("{},{},{:.6g},{:.6g},{},{}\n", p.begin, p.end, p.running, p.ready,
                         p.running_max, p.ready_max);
    return out;
  }

  std::string out =
      fmt::format("tasklens sched: {} (pid {}), {} threads, {} workers, metric {}{}\n",
                  basename_of(r.info.program), r.info.pid, m.thread_count, s.workers, m.metric,
                  m.complete ? "" : ", INCOMPLETE trace");
  for (const std::string& w : m.warnings) out += fmt::format("warning: {}\n", w);
  for (const std::string& n : notes) out += fmt::format("note: {}\n", n);
  out += fmt::format(
      "\nelapsed {} (first strand start to last strand end) x {} workers = {} cumulative\n\n",
      time_str(r, double(s.elapsed)), s.workers, time_str(r, double(s.cumulative)));
  out += fmt::format("  {:<10} {:>20} {:>20} {:>20} {:>20}\n", "worker", "work", "delay",
                     "no-work-sched", "no-work-app");
  auto cell = [&](uint64_t v, uint64_t whole) {
    return fmt::format("{} {:>5.1f}%", time_str(r, double(v)), percent(double(v), double(whole)));
  };
  auto row = [&](const std::string& name, const SchedComponents& c, uint64_t whole) {
    return fmt::format("  {:<10} {:>20} {:>20} {:>20} {:>20}\n", name, cell(c.work, whole),
                       cell(c.delay, whole), cell(c.no_work_sched, whole),
                       cell(c.no_work_app, whole));
  };
  for (const analysis::SchedWorker& w : s.per_worker)
    out += row(fmt::format("thread {}", w.thread), w.time, s.elapsed);
  out += row("total", s.total, s.cumulative);

  out += fmt::format("\n  T1 (work) {}, T-infinity (span) {}, parallelism {:.2f}\n",
                     work_str(r, double(r.work)), work_str(r, double(r.span)),
                     r.span ? double(r.work) / double(r.span) : 0.0);
  if (!std::isnan(bound_s) && !std::isnan(observed_s)) {
    out += fmt::format(
        "  observed {}; greedy bound T1/P + T-infinity = {} ({:.2f}x: {}); lower bound "
        "max(T1/P, T-infinity) = {}\n",
        amount(observed_s, 1), amount(bound_s, 1), bound_s > 0 ? observed_s / bound_s : 0.0,
        observed_s > bound_s ? "above it, a greedy schedule would have been faster" : "within it",
        amount(lower_s, 1));
  } else {
    out += fmt::format(
        "  observed {}; greedy bound T1/P + T-infinity = {}; lower bound max(T1/P, T-infinity) = "
        "{} ({})\n",
        time_str(r, double(s.elapsed)), work_str(r, bound), work_str(r, lower), m.metric);
  }
  out += fmt::format("  ready path ({} strands): work {}, scheduler delay {}, busy delay {}{}\n",
                     s.path.length, time_str(r, double(s.path.work)),
                     time_str(r, double(s.path.scheduler_delay)),
                     time_str(r, double(s.path.busy_delay)),
                     s.path.before ? ", before it " + time_str(r, double(s.path.before)) : "");

  const std::vector<SchedPoint> pts = analysis::points(s, kSparkWidth);
  std::vector<double> run, rdy;
  double rdy_top = 0;
  for (const SchedPoint& p : pts) {
    run.push_back(p.running);
    rdy.push_back(p.ready);
    rdy_top = std::max(rdy_top, p.ready);
  }
  out += fmt::format("\nparallelism over time ({} columns of {} each, time-weighted averages)\n",
                     pts.size(), time_str(r, pts.empty() ? 0.0 : double(s.elapsed) / pts.size()));
  out += fmt::format(
      "  running |{}|  avg {:.2f}, max {} (full: {} workers)\n", sparkline(run, s.workers),
      s.elapsed ? double(s.running_ticks) / s.elapsed : 0.0, s.max_running, s.workers);
  out += fmt::format("  ready   |{}|  avg {:.2f}, max {} (full: {:.2f})\n", sparkline(rdy, rdy_top),
                     s.elapsed ? double(s.ready_ticks) / s.elapsed : 0.0, s.max_ready, rdy_top);
  out +=
      "\nwork: a worker runs a strand; delay: it is idle while a ready strand waits; no-work: "
      "idle\n"
      "with none ready, -sched while the ready path waits for a worker, -app otherwise (after "
      "Huynh)\n";
  return out;
}

std::vector<size_t> sched_point_counts(size_t points) { return {kSparkWidth, points}; }

}  // namespace tasklens::report
