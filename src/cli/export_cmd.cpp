#include "cli/export_cmd.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>

#include "cli/command_support.hpp"
#include "errors.hpp"
#include "load/progress.hpp"
#include "load/recording.hpp"
#include "model/off_cpu_stream.hpp"
#include "platform/platform.hpp"
#include "report/export_dump.hpp"
#include "report/export_flows.hpp"
#include "report/export_perfetto.hpp"
#include "report/export_stream.hpp"
#include "report/whatif_report.hpp"

namespace tasklens::cli {
namespace {

enum class ExportFormat { Perfetto, Json, Csv };

ExportFormat parse_export_format(const std::string& f) {
  if (f == "perfetto") return ExportFormat::Perfetto;
  if (f == "json") return ExportFormat::Json;
  if (f == "csv") return ExportFormat::Csv;
  throw UsageError("--format " + f + ": unknown export format; use perfetto, json or csv");
}

// Preempted intervals come in CLOCK_MONOTONIC ns; the clock syncs map them onto the TSC (as the
// model builder does). With `window` given, only those the timeline draws (a busy machine's long
// recording has millions: the window's export keeps its memory small).
std::vector<std::vector<std::pair<uint64_t, uint64_t>>> preemptions_in_tsc(
    const trace::TraceFile& t, const report::TimeWindow& window = {},
    const report::ExportClock& clock = {}) {
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> out;
  model::detail::MonotonicToTsc to_tsc;
  if (!model::detail::MonotonicToTsc::of(t, to_tsc)) return out;
  out.resize(t.off_cpu_threads(trace::OffCpuKind::Preempted));
  for (uint32_t i = 0; i < out.size(); ++i) {
    trace::OffCpuCursor c = t.off_cpu(trace::OffCpuKind::Preempted, i);
    uint64_t from, to;
    while (c.next(from, to)) {
      const uint64_t a = to_tsc(from), b = to_tsc(to);
      if (window.given) {
        const auto [a_ns, b_ns] = clock.slice_ns(a, b);
        if (!window.holds(a_ns, b_ns)) continue;
      }
      out[i].emplace_back(a, b);
    }
  }
  return out;
}

// The run's facts every format writes, from a trace and its model (the DAG, or the facts of a
// reading in one pass).
report::ExportRun export_run(const trace::TraceFile& trace, const model::Model& m,
                             const std::vector<report::SiteLabel>& labels,
                             const report::FragmentLabels& fragments) {
  report::ExportRun run;
  run.model = &m;
  run.labels = &labels;
  run.fragments = &fragments;
  run.info = report::run_info(trace);
  run.tsc_hz = trace.tsc_hz();
  run.thread_types.assign(m.thread_count, 2);
  run.os_tids.assign(m.thread_count, 0);
  for (const trace::ThreadInfo& t : trace.threads()) {
    if (t.thread >= m.thread_count) continue;
    run.thread_types[t.thread] = t.type;
    run.os_tids[t.thread] = t.os_tid;
  }
  return run;
}

report::TimeWindow time_window(const std::string& text) {
  report::TimeWindow w;
  if (text.empty()) return w;
  const WindowBounds b = parse_window(text);
  w.given = true;
  if (!b.open_from) w.from = b.from;
  if (!b.open_to) w.to = b.to;
  return w;
}

[[noreturn]] void no_timestamps(const std::string& trace) {
  throw UsageError(trace +
                   ": no strand has a start or end time (the trace was recorded without "
                   "timestamps): a timeline needs them; record it again with `tasklens "
                   "record`");
}

void no_rate_note(const std::string& trace, double tsc_hz) {
  if (tsc_hz <= 0)
    fmt::print(stderr,
               "tasklens: note: {} has no measured TSC rate (a run too short for two clock "
               "syncs): timestamps are taken as ns\n",
               trace);
}

// Writes what `write` makes into the output and ends the process.
[[noreturn]] void write_export(const ExportOptions& opt, std::unique_ptr<platform::OutputFile> file,
                               const std::function<std::string(report::ExportWriter&)>& write) {
  const bool to_stdout = file->to_stdout();
  // Its progress line says so while a file is written; output on the terminal erases it first.
  if (to_stdout)
    load::Progress::global().stop();
  else
    load::Progress::global().phase("writing " + opt.output);
  report::ExportWriter out(file->file());
  const std::string summary = write(out);
  load::Progress::global().stop();
  if (!out.finish()) {
    fmt::print(stderr, "tasklens: could not write the export to {}: {}\n",
               to_stdout ? std::string("standard output") : opt.output,
               errno ? std::strerror(errno) : "write error");
    std::fflush(stderr);
    file.reset();
    std::_Exit(1);
  }
  if (!file->commit()) {
    fmt::print(stderr, "tasklens: could not write {}: {}\n",
               to_stdout ? std::string("standard output") : opt.output, std::strerror(errno));
    std::fflush(stderr);
    std::_Exit(1);
  }
  if (!to_stdout)
    fmt::print(stderr, "tasklens: wrote {} ({}, {})\n", opt.output, human_bytes(out.bytes()),
               summary);
  print_timings("export");
  std::fflush(stderr);
  // Like write_and_exit: no teardown of a model of millions of strands.
  std::_Exit(0);
}

std::string perfetto_summary(const report::PerfettoStats& st) {
  return fmt::format("{} slices on {} worker tracks, {} flows", st.slices, st.tracks, st.flows);
}

// What a slice of the timeline read in one pass holds, with the writer's sort arrays and about
// two flows: the window's share of the memory.
constexpr uint64_t kBytesPerSlice = 192;

// The timeline in one pass (`--stream`, or a DAG too large for the memory).
[[noreturn]] void export_streamed(const ExportOptions& opt,
                                  std::unique_ptr<platform::OutputFile> file) {
  const report::TimeWindow window = time_window(opt.window);
  // Half the memory for the window's slices; the pass's own needs are the rest.
  uint64_t max_slices = std::numeric_limits<uint32_t>::max() - 1;
  if (const auto budget = platform::memory_budget())
    max_slices = std::min(max_slices, budget->bytes / 2 / kBytesPerSlice);
  // The run's length and task count, to say which window would fit.
  std::error_code not_regular;
  trace::TraceFile::Scan scan;
  if (std::filesystem::is_regular_file(opt.trace, not_regular))
    scan = trace::TraceFile::scan(opt.trace);
  const auto too_large = [&](uint64_t slices) {
    std::string hint = "say --window 0ms:100ms";
    // About two slices per task, a task's strands around its spawns and waits, evenly spread.
    if (const double seconds = scan.run_seconds(); seconds > 0 && scan.tasks_created > 0) {
      const double fits = seconds * double(slices) / (2.0 * double(scan.tasks_created));
      hint = fmt::format(
          "the run lasted {} and made {} tasks: a window of about {} holds some {} "
          "slices",
          report::format_amount(seconds, 1), scan.tasks_created, report::format_amount(fits / 2, 1),
          slices / 2);
    }
    return OutOfMemoryError(fmt::format(
        "{}: the timeline {} holds more than {} slices, more than the memory can sort and "
        "write: export a shorter part of the run with --window FROM:TO ({})",
        opt.trace, window.given ? "of this window" : "of the whole run", slices, hint));
  };
  // The whole run's slices (about two per task) are known not to fit before the pass.
  if (!window.given && scan.has_finish && 2 * scan.tasks_created > max_slices)
    throw too_large(max_slices);
  std::unique_ptr<report::TimelineSink> sink;
  uint64_t origin = 0;
  load::Streamed st;
  try {
    st = load::read_in_one_pass(
        opt.trace, "drawing the timeline of",
        [&](const report::SitesAsTheyCome&, const trace::TraceFile& trace) -> model::StrandSink& {
          // Time 0 is the recording's start; the window needs it before the first strand.
          report::ExportClock clock;
          clock.origin = origin = trace.header().start_tsc;
          clock.ns_per_tick = trace.tsc_hz() > 0 ? 1e9 / trace.tsc_hz() : 1.0;
          if (origin == 0 && window.given)
            throw UsageError(opt.trace +
                             ": the trace has no start time, from which --window counts: "
                             "export it without --window and --stream");
          sink = std::make_unique<report::TimelineSink>(clock, window, max_slices);
          return *sink;
        },
        0, 0, 0);
  } catch (const report::TimelineSink::WindowTooLarge& e) {
    throw too_large(e.max_slices);
  }
  report::Timeline timeline = sink->take();
  sink.reset();
  if (timeline.timed == 0) no_timestamps(opt.trace);
  const report::FragmentLabels fragments =
      report::group_fragments(st.fragment_labels, st.fragment_functions);
  report::ExportRun run = export_run(*st.trace, st.model, st.labels, fragments);
  // As from the DAG: the recording's start, unless a strand started before it.
  run.origin = origin != 0 && origin <= timeline.first_start ? origin : 0;
  report::ExportClock clock;  // as write_perfetto draws them
  clock.origin = run.origin                                 ? run.origin
                 : timeline.first_start == report::kNoStart ? 0
                                                            : timeline.first_start;
  clock.ns_per_tick = run.tsc_hz > 0 ? 1e9 / run.tsc_hz : 1.0;
  run.preemptions = preemptions_in_tsc(*st.trace, timeline.window, clock);
  no_rate_note(opt.trace, run.tsc_hz);
  write_export(opt, std::move(file), [&](report::ExportWriter& out) {
    return perfetto_summary(report::write_perfetto(run, timeline, out));
  });
}

}  // namespace

WindowBounds parse_window(const std::string& text) {
  const auto bad = [&](const std::string& why) {
    return UsageError("--window " + text + ": " + why +
                      "; give FROM:TO since the recording's start with a unit (s, ms, us, ns), "
                      "say 1.2s:1.5s, 300ms: or :40ms");
  };
  const size_t colon = text.find(':');
  if (colon == std::string::npos || text.find(':', colon + 1) != std::string::npos)
    throw bad("not FROM:TO");
  auto time_of = [&](const std::string& part, bool& open) -> int64_t {
    open = part.empty();
    if (open) return 0;
    size_t used = 0;
    double v = 0;
    try {
      v = std::stod(part, &used);
    } catch (const std::exception&) {
      throw bad("'" + part + "' is not a time");
    }
    const std::string unit = part.substr(used);
    const double scale = unit == "s"    ? 1e9
                         : unit == "ms" ? 1e6
                         : unit == "us" ? 1e3
                         : unit == "ns" ? 1.0
                                        : -1;
    if (scale < 0) throw bad("'" + part + "' has no unit (s, ms, us or ns)");
    const double ns = v * scale;
    if (!(ns >= 0) || ns > 9e18) throw bad("'" + part + "' is not a time since the start");
    return static_cast<int64_t>(std::llround(ns));
  };
  WindowBounds b{};
  b.from = time_of(text.substr(0, colon), b.open_from);
  b.to = time_of(text.substr(colon + 1), b.open_to);
  if (!b.open_from && !b.open_to && b.to <= b.from) throw bad("it ends before it starts");
  return b;
}

void run_export(const ExportOptions& opt) {
  const ExportFormat format = parse_export_format(opt.format);
  if (format != ExportFormat::Perfetto && (opt.stream || !opt.window.empty()))
    throw UsageError(std::string(opt.stream ? "--stream" : "--window") +
                     " is for --format perfetto: the json and csv exports are the whole DAG");
  const report::TimeWindow window = time_window(opt.window);  // (checked before the trace is read)
  // Opened before the trace is read: a path that cannot be written is reported at once.
  auto file = std::make_unique<platform::OutputFile>(opt.output.empty() ? "-" : opt.output,
                                                     opt.format == "csv" ? "run.csv" : "run.json");
  if (opt.stream) export_streamed(opt, std::move(file));
  load::Loaded l;
  try {
    l = load::load(opt.trace);
  } catch (const OutOfMemoryError&) {
    // Too large for the DAG: the timeline in one pass, when the recording allows it.
    if (format != ExportFormat::Perfetto) throw;
    fmt::print(stderr,
               "tasklens: note: {}: its DAG does not fit in the memory: the timeline is read in "
               "one pass (as with --stream: strands numbered in the order met)\n",
               opt.trace);
    read_in_one_pass_instead(opt.trace, [&] { export_streamed(opt, std::move(file)); });
  }
  const model::Model& m = l.model;
  const report::FragmentLabels fragments = report::label_fragments(m, l.trace->modules(), l.labels);
  report::ExportRun run = export_run(*l.trace, m, l.labels, fragments);
  if (format == ExportFormat::Perfetto) {
    uint64_t first = UINT64_MAX;
    for (const model::Strand& s : m.strands)
      if (report::is_timed(s)) first = std::min(first, s.start);
    if (first == UINT64_MAX) no_timestamps(opt.trace);
    // Time 0 is the start of the recording (the runtime's start-up shows as the time before
    // the first slice), unless the header's start is not before the first strand.
    const uint64_t start = l.trace->header().start_tsc;
    run.origin = start != 0 && start <= first ? start : first;
    no_rate_note(opt.trace, run.tsc_hz);
    report::ExportClock clock;
    clock.origin = run.origin;
    clock.ns_per_tick = run.tsc_hz > 0 ? 1e9 / run.tsc_hz : 1.0;
    run.preemptions = preemptions_in_tsc(*l.trace, window, clock);
    const report::Timeline timeline = report::timeline_of(m, clock, window);
    write_export(opt, std::move(file), [&](report::ExportWriter& out) {
      return perfetto_summary(report::write_perfetto(run, timeline, out));
    });
  }
  write_export(opt, std::move(file), [&](report::ExportWriter& out) {
    if (format == ExportFormat::Json) {
      report::write_dag_json(run, out);
      return fmt::format("{} strands, {} nodes", m.strands.size(), m.nodes.size());
    }
    report::write_strands_csv(run, out);
    return fmt::format("{} strands", m.strands.size());
  });
}

}  // namespace tasklens::cli
