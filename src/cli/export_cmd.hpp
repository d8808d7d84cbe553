// `tasklens export`: the recorded run as data for other tools: a timeline for Perfetto /
// chrome://tracing (Chrome Trace Event JSON), or the raw DAG and construct tree as JSON or CSV
// (report/export_perfetto.hpp, report/export_dump.hpp; docs/export.md).
#pragma once

#include <string>

namespace tasklens::cli {

struct ExportOptions {
  std::string trace = "tasklens.data";
  std::string format = "perfetto";  // perfetto | json | csv
  std::string output;               // empty or "-": standard output
};

// Writes the export and ends the process (like run_report). Throws UsageError on a bad format,
// an output that cannot be written, and (perfetto) a trace without timestamps.
[[noreturn]] void run_export(const ExportOptions& options);

}  // namespace tasklens::cli
