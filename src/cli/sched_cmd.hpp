// `tasklens sched`: the recorded run's scheduling delays (after Huynh): P x elapsed split into
// work, delay, no-work-sched and no-work-app per worker, the work/span bounds beside the observed
// time, and the running and ready parallelism over time.
#pragma once

#include <cstddef>
#include <string>

#include "analysis/stream_sched.hpp"
#include "load/recording.hpp"
#include "report/profile_report.hpp"

namespace tasklens::cli {

struct SchedOptions {
  std::string trace = "tasklens.data";
  std::string format = "table";
  size_t points = 200;  // time series points in csv/json
  bool stream = false;  // read in one pass (analysis/stream_sched.hpp)
};

// The schedule read in one pass (--stream, or when the DAG does not fit): the text in `format`.
// Throws UsageError on a trace without timestamps.
std::string sched_streamed_text(const SchedOptions& options, report::Format format);
// The same from a StreamSchedule that took part in a pass over `st`'s recording (beside other
// sinks: `view`), finished here.
std::string sched_text_of(analysis::StreamSchedule& sink, const load::Streamed& read,
                          const SchedOptions& options, report::Format format);

// Writes the report to stdout and ends the process (like run_report). Throws UsageError on bad
// options and on a trace without timestamps.
[[noreturn]] void run_sched(const SchedOptions& options);

}  // namespace tasklens::cli
