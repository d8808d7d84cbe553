#include "cli/export_cmd.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "cli/command_support.hpp"
#include "errors.hpp"
#include "load/progress.hpp"
#include "load/recording.hpp"
#include "platform/platform.hpp"
#include "report/export_dump.hpp"
#include "report/export_flows.hpp"
#include "report/export_perfetto.hpp"
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

std::string human_bytes(uint64_t b) {
  if (b < 10240) return fmt::format("{} B", b);
  if (b < 10485760) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{:.1f} MiB", b / 1048576.0);
}

// Preempted intervals come in CLOCK_MONOTONIC ns; the clock syncs map them onto the TSC (as the
// model builder does).
std::vector<std::vector<std::pair<uint64_t, uint64_t>>> preemptions_in_tsc(
    const trace::TraceFile& t) {
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> out;
  const auto& syncs = t.clock_syncs();
  const double hz = t.tsc_hz();
  if (syncs.size() < 2 || hz <= 0) return out;
  const trace::ClockSync& s0 = syncs.front();
  auto to_tsc = [&](uint64_t ns) {
    double v = double(s0.tsc) + (double(ns) - double(s0.monotonic_ns)) * hz / 1e9;
    return v <= 0 ? uint64_t(0) : static_cast<uint64_t>(v);
  };
  out.resize(t.preemptions().size());
  for (size_t i = 0; i < out.size(); ++i)
    for (auto [from, to] : t.preemptions()[i]) out[i].emplace_back(to_tsc(from), to_tsc(to));
  return out;
}

}  // namespace

void run_export(const ExportOptions& opt) {
  const ExportFormat format = parse_export_format(opt.format);
  // Opened before the trace is read: a path that cannot be written is reported at once.
  auto file = std::make_unique<platform::OutputFile>(opt.output.empty() ? "-" : opt.output,
                                                     opt.format == "csv" ? "run.csv" : "run.json");
  const bool to_stdout = file->to_stdout();

  load::Loaded l = load::load(opt.trace);
  const model::Model& m = l.model;
  const report::FragmentLabels fragments = report::label_fragments(m, l.trace->modules(), l.labels);
  report::ExportRun run;
  run.model = &m;
  run.labels = &l.labels;
  run.fragments = &fragments;
  run.info = report::run_info(*l.trace);
  run.tsc_hz = l.trace->tsc_hz();
  run.thread_types.assign(m.thread_count, 2);
  run.os_tids.assign(m.thread_count, 0);
  for (const trace::ThreadInfo& t : l.trace->threads()) {
    if (t.thread >= m.thread_count) continue;
    run.thread_types[t.thread] = t.type;
    run.os_tids[t.thread] = t.os_tid;
  }

  // Its progress line says so while a file is written; output on the terminal erases it first.
  if (to_stdout)
    load::Progress::global().stop();
  else
    load::Progress::global().phase("writing " + opt.output);
  report::ExportWriter out(file->file());
  std::string summary;
  if (format == ExportFormat::Perfetto) {
    uint64_t first = UINT64_MAX;
    for (const model::Strand& s : m.strands)
      if (report::is_timed(s)) first = std::min(first, s.start);
    if (first == UINT64_MAX)
      throw UsageError(opt.trace +
                       ": no strand has a start or end time (the trace was recorded without "
                       "timestamps): a timeline needs them; record it again with `tasklens "
                       "record`");
    // Time 0 is the start of the recording (the runtime's start-up shows as the time before
    // the first slice), unless the header's start is not before the first strand.
    const uint64_t start = l.trace->header().start_tsc;
    run.origin = start != 0 && start <= first ? start : first;
    run.preemptions = preemptions_in_tsc(*l.trace);
    if (run.tsc_hz <= 0)
      fmt::print(stderr,
                 "tasklens: note: {} has no measured TSC rate (a run too short for two clock "
                 "syncs): timestamps are taken as ns\n",
                 opt.trace);
    const report::PerfettoStats st = report::write_perfetto(run, out);
    summary =
        fmt::format("{} slices on {} worker tracks, {} flows", st.slices, st.tracks, st.flows);
  } else if (format == ExportFormat::Json) {
    report::write_dag_json(run, out);
    summary = fmt::format("{} strands, {} nodes", m.strands.size(), m.nodes.size());
  } else {
    report::write_strands_csv(run, out);
    summary = fmt::format("{} strands", m.strands.size());
  }
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

}  // namespace tasklens::cli
