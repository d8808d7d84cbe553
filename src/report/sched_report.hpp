// Renders `tasklens sched`: the cumulative time P x elapsed split into work, delay, no-work-sched
// and no-work-app (after Huynh) per worker and in total, the work/span bounds beside the observed
// time, the ready path, and the running and ready parallelism over time, as a table (with text
// sparklines), CSV or JSON (the JSON contract is in docs/report-json.md).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "analysis/sched.hpp"
#include "model/model.hpp"
#include "report/profile_report.hpp"

namespace tasklens::report {

// One recording as the renderers need it. Times in TSC ticks (shown as time with `tsc_hz`; 0:
// ticks); work and span (T1, T-infinity from analysis::compute_profile) in the model's metric.
struct SchedRun {
  const model::Model* model = nullptr;
  const analysis::Schedule* schedule = nullptr;
  uint64_t work = 0;  // T1
  uint64_t span = 0;  // T-infinity
  RunInfo info;
  double tsc_hz = 0;
  size_t points = 200;  // time series points (csv/json)
};

// The notes the report prints (one line each): a single worker, a metric that is not time.
std::vector<std::string> sched_notes(const SchedRun& run);

// Text sparkline of `values` scaled to `top` (values >= top show as the full block): one
// character per value, ' ' for 0, then U+2581..U+2588.
std::string sparkline(const std::vector<double>& values, double top);

std::string render_sched(const SchedRun& run, Format format);

// The point counts render_sched samples the step function at, for a schedule that keeps no steps
// (Schedule::sampled): the table's sparklines and the csv or json series of `points`.
std::vector<size_t> sched_point_counts(size_t points);

}  // namespace tasklens::report
