#include "report/predict_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "report/json_text.hpp"

namespace tasklens::report {
namespace {

using Json = nlohmann::ordered_json;

double seconds(const PredictView& v, double ticks) { return v.tsc_hz > 0 ? ticks / v.tsc_hz : NAN; }
Json num_or_null(double x) { return std::isnan(x) ? Json(nullptr) : Json(x); }
std::string time_str(const PredictView& v, double ticks) { return format_amount(ticks, v.tsc_hz); }

Json cost_json(const PredictView& v, const analysis::OverheadCost& c) {
  return {{"ticks", c.ticks},
          {"seconds", num_or_null(seconds(v, c.ticks))},
          {"samples", c.samples},
          {"measured", c.measured}};
}

std::string cost_text(const PredictView& v, const analysis::OverheadCost& c) {
  if (!c.measured) return fmt::format("{} (not measured)", time_str(v, c.ticks));
  return fmt::format("{} ({} samples)", time_str(v, c.ticks), c.samples);
}

}  // namespace

std::string render_predict(const PredictView& v, Format format) {
  const PredictRecording& from = v.recordings[v.simulated_from];
  if (format == Format::Json) {
    Json j;
    j["tasklens_version"] = TASKLENS_VERSION;
    j["metric"] = v.metric;
    j["tsc_per_second"] = v.tsc_hz;
    Json recs = Json::array();
    for (const PredictRecording& r : v.recordings)
      recs.push_back(
          {{"trace", r.info.trace_path},
           {"executable", r.info.program},
           {"threads", r.threads},
           {"tasks", r.tasks},
           {"elapsed", r.elapsed},
           {"elapsed_seconds", num_or_null(seconds(v, double(r.elapsed)))},
           {"elapsed_removed", r.removed},
           {"elapsed_program", r.elapsed - r.removed},
           {"elapsed_program_seconds", num_or_null(seconds(v, double(r.elapsed - r.removed)))}});
    j["recordings"] = recs;
    j["simulated_from"] = from.info.trace_path;
    if (!from.info.span_mode.empty()) j["span_mode"] = from.info.span_mode;
    j["work"] = v.work_ticks;
    j["span"] = v.span_ticks;
    j["parallelism"] = v.span_ticks ? double(v.work_ticks) / double(v.span_ticks) : 0.0;
    j["overheads"] = {{"spawn", cost_json(v, v.overheads.spawn)},
                      {"steal", cost_json(v, v.overheads.steal)},
                      {"sync", cost_json(v, v.overheads.sync)},
                      {"continue", cost_json(v, v.overheads.cont)},
                      {"inside_strands", v.overheads.inside},
                      {"one_worker_task", v.overheads.one_worker_task}};
    // What the simulation charged per start: the program's one-thread costs when the
    // recording's contention was left out (analysis::without_contention), else `overheads`.
    const analysis::Overheads& so = v.simulated_overheads;
    j["simulated_overheads"] = {{"spawn", so.spawn.ticks},
                                {"steal", so.steal.ticks},
                                {"sync", so.sync.ticks},
                                {"continue", so.cont.ticks},
                                {"contention_removed", so.contention_removed}};
    j["simulated_graph"] = {{"read", v.graph.one_pass ? "one pass" : "dag"},
                            {"strands", v.graph.strands},
                            {"nodes", v.graph.nodes},
                            {"grain", v.graph.grain},
                            {"span", v.graph.span}};
    j["notes"] = v.notes;
    j["warnings"] = v.warnings;
    Json rows = Json::array();
    for (const PredictRow& r : v.rows) {
      Json row;
      row["threads"] = r.threads;
      row["simulated"] = r.simulated.time;
      row["simulated_seconds"] = num_or_null(seconds(v, double(r.simulated.time)));
      row["speedup"] = r.speedup;
      row["steals"] = r.simulated.steals;
      row["overhead"] = r.simulated.overhead;
      row["with_contention"] = r.with_contention ? Json(r.with_contention->time) : Json(nullptr);
      row["with_contention_seconds"] =
          r.with_contention ? num_or_null(seconds(v, double(r.with_contention->time)))
                            : Json(nullptr);
      row["with_contention_speedup"] =
          r.with_contention ? Json(r.with_contention_speedup) : Json(nullptr);
      row["lower_bound"] = r.lower_bound;
      row["greedy_bound"] = r.greedy_bound;
      row["measured"] = r.measured ? Json(*r.measured) : Json(nullptr);
      row["measured_seconds"] =
          r.measured ? num_or_null(seconds(v, double(*r.measured))) : Json(nullptr);
      row["simulated_error_percent"] =
          r.measured && *r.measured
              ? Json(100.0 * (double(r.simulated.time) - double(*r.measured)) / double(*r.measured))
              : Json(nullptr);
      row["with_contention_error_percent"] =
          r.measured && *r.measured && r.with_contention
              ? Json(100.0 * (double(r.with_contention->time) - double(*r.measured)) /
                     double(*r.measured))
              : Json(nullptr);
      row["extrapolated"] = r.extrapolated ? Json(*r.extrapolated) : Json(nullptr);
      row["extrapolated_seconds"] =
          r.extrapolated ? num_or_null(seconds(v, *r.extrapolated)) : Json(nullptr);
      row["extrapolated_speedup"] =
          r.extrapolated_speedup ? Json(*r.extrapolated_speedup) : Json(nullptr);
      rows.push_back(row);
    }
    j["predictions"] = rows;
    return json_text(j, 2) + "\n";
  }

  if (format == Format::Csv) {
    std::string out =
        "threads,simulated,speedup,steals,overhead,lower_bound,greedy_bound,measured,"
        "extrapolated,extrapolated_speedup,with_contention,with_contention_speedup\n";
    for (const PredictRow& r : v.rows) {
      out += fmt::format(
          "{},{},{:.6g},{},{},{:.6g},{:.6g},{},{},{},{},{}\n", r.threads, r.simulated.time,
          r.speedup, r.simulated.steals, r.simulated.overhead, r.lower_bound, r.greedy_bound,
          r.measured ? std::to_string(*r.measured) : std::string(),
          r.extrapolated ? fmt::format("{:.6g}", *r.extrapolated) : std::string(),
          r.extrapolated_speedup ? fmt::format("{:.6g}", *r.extrapolated_speedup) : std::string(),
          r.with_contention ? std::to_string(r.with_contention->time) : std::string(),
          r.with_contention ? fmt::format("{:.6g}", r.with_contention_speedup) : std::string());
    }
    return out;
  }

  std::string out;
  for (const PredictRecording& r : v.recordings) {
    out += fmt::format("recording: {} ({}, {} worker{}, {} tasks, elapsed {})\n", r.info.trace_path,
                       basename_of(r.info.program), r.threads, r.threads == 1 ? "" : "s", r.tasks,
                       time_str(v, double(r.elapsed)));
    if (r.removed > r.elapsed / 100)
      out += fmt::format(
          "  of which {} per worker was tasklens's own recording cost or other processes' "
          "preemption (taken out of the work): the program's own time was {}, what `measured` "
          "shows\n",
          time_str(v, double(r.removed)), time_str(v, double(r.elapsed - r.removed)));
  }
  out += fmt::format(
      "simulated from {}: work {}, span {}, parallelism {:.2f}\n"
      "overheads measured per strand start: spawn {}, steal {}, sync {}, continue {}\n",
      from.info.trace_path, time_str(v, double(v.work_ticks)), time_str(v, double(v.span_ticks)),
      v.span_ticks ? double(v.work_ticks) / double(v.span_ticks) : 0.0,
      cost_text(v, v.overheads.spawn), cost_text(v, v.overheads.steal),
      cost_text(v, v.overheads.sync), cost_text(v, v.overheads.cont));
  for (const std::string& w : v.warnings) out += "warning: " + w + "\n";
  for (const std::string& n : v.notes) out += "note: " + n + "\n";
  const bool extra = v.recordings.size() >= 2;
  bool any_measured = false;
  for (const PredictRow& r : v.rows) any_measured = any_measured || r.measured.has_value();
  out += "\n";
  const bool contention = v.simulated_overheads.contention_removed;
  std::string head = fmt::format("{:>7}  {:>11} {:>8}", "threads", "predicted", "speedup");
  if (contention) head += fmt::format("  {:>15} {:>8}", "with contention", "speedup");
  head += fmt::format("  {:>11} {:>11}", "lower bound", "greedy bound");
  if (any_measured) head += fmt::format("  {:>11} {:>7}", "measured", "error");
  if (extra) head += fmt::format("  {:>12} {:>8}", "extrapolated", "speedup");
  out += head + "\n";
  for (const PredictRow& r : v.rows) {
    std::string line = fmt::format("{:>7}  {:>11} {:>7.2f}x", r.threads,
                                   time_str(v, double(r.simulated.time)), r.speedup);
    if (contention) {
      if (r.with_contention)
        line += fmt::format("  {:>15} {:>7.2f}x", time_str(v, double(r.with_contention->time)),
                            r.with_contention_speedup);
      else
        line += fmt::format("  {:>15} {:>8}", "-", "");
    }
    line += fmt::format("  {:>11} {:>11}", time_str(v, r.lower_bound), time_str(v, r.greedy_bound));
    if (any_measured) {
      // Against the prediction for the recorded machine: with its contention when shown.
      const uint64_t predicted = r.with_contention ? r.with_contention->time : r.simulated.time;
      if (r.measured && *r.measured)
        line +=
            fmt::format("  {:>11} {:>+6.1f}%", time_str(v, double(*r.measured)),
                        100.0 * (double(predicted) - double(*r.measured)) / double(*r.measured));
      else
        line += fmt::format("  {:>11} {:>7}", "-", "");
    }
    if (extra) {
      if (r.extrapolated)
        line += fmt::format("  {:>12} {:>7.2f}x", time_str(v, *r.extrapolated),
                            r.extrapolated_speedup.value_or(0.0));
      else
        line += fmt::format("  {:>12} {:>8}", "-", "");
    }
    out += line + "\n";
  }
  if (contention)
    out +=
        "\npredicted: a greedy work-stealing schedule of the recorded DAG on P workers, each task "
        "charged\nwhat it costs the program's runtime on one thread, each steal that times the "
        "recording's\nsteal/spawn ratio; speedup against the prediction at 1 worker.\nwith "
        "contention: the same schedule, each strand start charged the gap measured for its "
        "kind\non the recording's workers (see the note); error: measured against it.\n";
  else
    out +=
        "\npredicted: a greedy work-stealing schedule of the recorded DAG on P workers, each "
        "strand start\ncharged the overhead measured for its kind; speedup against the "
        "prediction at 1 worker.\n";
  out += "lower bound max(T1/P, Tinf) and greedy bound T1/P + Tinf ignore overheads.\n";
  if (extra)
    out +=
        "extrapolated: Hoffmann and Rauber's linear extrapolation of each task type's count, mean "
        "size\nand idle time from the recordings' thread counts.\n";
  return out;
}

std::optional<std::string> removed_time_note(const std::string& path, double removed_share) {
  if (!(removed_share >= 0.5)) return std::nullopt;
  const std::string share =
      removed_share >= 1 ? std::string("all") : fmt::format("{:.0f}%", 100 * removed_share);
  return fmt::format(
      "{} of {}'s elapsed time is tasklens's own cost and other processes' preemption, taken "
      "out: its measured time is mostly an estimate; record it again on an idle machine",
      share, path);
}

std::optional<std::string> preemption_note(const model::Model& m, uint64_t work_ticks,
                                           bool contention_removed) {
  const char* which = contention_removed ? "the `with contention` predictions" : "predictions";
  // Oversubscription (more threads than CPUs) shows as preemption inside the strands: the gaps
  // between a worker's strands then hold other workers' turns too.
  const uint64_t work = std::max<uint64_t>(1, work_ticks);
  if (m.preempted > 0 && m.preempted * 100 > kSwitchedOutPercent * work)
    return fmt::format(
        "the recording's workers were switched out for other threads for {:.0f}% of their work "
        "(more threads than free CPUs?): the overheads measured between strands include those "
        "waits, so {} are pessimistic; record with at most as many threads as idle CPUs",
        100.0 * double(m.preempted) / double(work), which);
  // Switched out between strands (in the runtime, waiting for work) leaves the strands' work
  // alone but stretches the gaps every overhead is measured from, so the predictions follow the
  // machine's load rather than the program.
  if (m.threads_time > 0 && m.preempted_in_run * 100 >= kSwitchedOutPercent * m.threads_time)
    return fmt::format(
        "other processes held the CPUs for {:.0f}% of the recording's threads' time during the "
        "run: the gaps between strands that the overheads are measured from hold those waits, "
        "so {} are pessimistic and move from one recording to the next; record it again on an "
        "idle machine",
        100.0 * double(m.preempted_in_run) / double(m.threads_time), which);
  return std::nullopt;
}

}  // namespace tasklens::report
