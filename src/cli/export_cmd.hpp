// `tasklens export`: the recorded run as data for other tools: a timeline for Perfetto /
// chrome://tracing (Chrome Trace Event JSON), or the raw DAG and construct tree as JSON or CSV
// (report/export_perfetto.hpp, report/export_dump.hpp; docs/export.md).
#pragma once

#include <cstdint>
#include <string>

namespace tasklens::cli {

struct ExportOptions {
  std::string trace = "tasklens.data";
  std::string format = "perfetto";  // perfetto | json | csv
  std::string output;               // empty or "-": standard output
  std::string window;               // perfetto: "FROM:TO" (times since the recording's start)
  bool stream = false;              // perfetto: in one pass, without the DAG
};

// --window's "FROM:TO": times with a unit (s, ms, us, ns), either side left out for the run's
// start or end ("1.5s:2s", "250ms:", ":10ms"), in ns. Throws UsageError otherwise.
struct WindowBounds {
  int64_t from;
  int64_t to;
  bool open_from, open_to;
};
WindowBounds parse_window(const std::string& text);

// Writes the export and ends the process (like run_report). Throws UsageError on a bad format,
// an output that cannot be written, and (perfetto) a trace without timestamps.
[[noreturn]] void run_export(const ExportOptions& options);

}  // namespace tasklens::cli
