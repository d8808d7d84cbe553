// Renders `tasklens tasks`: task sizes and waiting times per task type with their histograms and
// Hoffmann and Rauber's findings, and the comparison of two recordings, as a table, CSV or JSON
// (the JSON contract is in docs/report-json.md).
#pragma once

#include <string>
#include <vector>

#include "analysis/tasks.hpp"
#include "model/model.hpp"
#include "report/profile_report.hpp"

namespace tasklens::report {

// One recording as the renderers need it. Sizes are in the model's metric; waiting and idle
// times in TSC ticks, shown as time with `tsc_hz` (0: shown as ticks).
struct TasksRun {
  const model::Model* model = nullptr;
  const analysis::TaskProfile* profile = nullptr;
  const std::vector<SiteLabel>* labels = nullptr;
  analysis::TaskOptions options;
  RunInfo info;
  double tsc_hz = 0;
};

// Per site index: the key that matches task types across recordings ("fib.c:31|task").
std::vector<std::string> task_type_keys(const model::Model& model,
                                        const std::vector<SiteLabel>& labels);

// One line, Hoffmann and Rauber's reading of a finding ("many tiny tasks: 80% of the tasks of
// fib.c:31 run under 1 us: ...").
std::string finding_text(const TasksRun& run, const analysis::Finding& finding);
std::string comparison_text(const TasksRun& base, const TasksRun& other,
                            const analysis::TaskComparison& comparison,
                            const analysis::ComparisonFinding& finding);

// `top` limits the task types shown (the findings cover every type).
std::string render_tasks(const TasksRun& run, Format format, size_t top);
std::string render_task_comparison(const TasksRun& base, const TasksRun& other,
                                   const analysis::TaskComparison& comparison, Format format,
                                   size_t top);

}  // namespace tasklens::report
