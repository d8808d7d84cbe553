// `tasklens tasks`: task sizes and waiting times per task type (after Hoffmann and Rauber), from
// one recording, or the task-size inflation between two recordings of the same program (base,
// other).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "analysis/stream_tasks.hpp"
#include "load/recording.hpp"
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

// The task profile in a pass shared with other sinks (`view`'s): sink() gives the sink for the
// pass's make_sink, tasks_text_of the text in `format` (every type; the sketches' note among the
// warnings) once the pass is over. Throws UsageError on a trace without tasks or timestamps.
struct TasksPass {
  explicit TasksPass(unsigned histogram_bins) : bins(histogram_bins) {}
  model::StrandSink& sink(const trace::TraceFile& trace);  // (the options from the trace)
  unsigned bins;
  analysis::TaskOptions options;
  std::unique_ptr<analysis::StreamTasks> stream;
};
std::string tasks_text_of(TasksPass& pass, const load::Streamed& read, report::Format format);

}  // namespace tasklens::cli
