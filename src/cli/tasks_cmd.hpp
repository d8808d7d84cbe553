// `tasklens tasks`: task sizes and waiting times per task type (after Hoffmann and Rauber), from
// one recording, or the task-size inflation between two recordings of the same program (base,
// other).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "report/profile_report.hpp"

namespace tasklens::cli {

struct TasksOptions {
  std::vector<std::string> traces;  // none: tasklens.data; two: base and other
  unsigned bins = 12;               // most histogram bins (log2 of time)
  std::string format = "table";
  size_t top = 0;  // task types shown; 0: 10 for the table, all for csv/json
  bool stream =
      false;  // read in one pass (analysis/stream_tasks.hpp), as when the DAG is too large
};

// Writes the report to stdout and ends the process (like run_report). Throws UsageError on bad
// options, on a trace without tasks or timestamps, and on two recordings with nothing in common.
[[noreturn]] void run_tasks(const TasksOptions& options);

// The task profile read in one pass (the sketches' note among the warnings): the text in
// `format`, every type. Throws UsageError on a trace without tasks or timestamps.
std::string tasks_streamed_text(const std::string& path, unsigned bins, report::Format format);

}  // namespace tasklens::cli
