// `tasklens report`: the verdict, then work, span, parallelism and critical-path share per
// construct site.
#pragma once

#include <cstddef>
#include <string>

namespace tasklens::cli {

struct ReportOptions {
  std::string trace = "tasklens.data";
  std::string format = "table";
  size_t top = 0;         // 0: 20 rows for the table, all for csv/json
  bool raw_span = false;  // --raw-span: every strand as measured (no clipping of disturbances)
  std::string base;       // --base: a recording to compare with (the diagnosis's work inflation)
  // --stream: read the recording in one pass (load::load_streaming), as report does by itself
  // when the DAG does not fit in the memory.
  bool stream = false;
};

// Writes the report to stdout and ends the process (write_and_exit).
[[noreturn]] void run_report(const ReportOptions& options);

}  // namespace tasklens::cli
