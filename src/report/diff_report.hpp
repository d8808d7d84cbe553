// Renders `tasklens diff` (analysis/diff.hpp): the two recordings' summaries, the whole
// program's inflation and its cost on the critical path, then the construct sites and the code
// fragments sorted by the cost of their inflation, as a table, CSV or JSON (the JSON contract is
// in docs/report-json.md).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "analysis/diff.hpp"
#include "model/model.hpp"
#include "report/profile_report.hpp"
#include "report/whatif_report.hpp"

namespace tasklens::report {

// One recording as the renderer needs it.
struct DiffRun {
  const model::Model* model = nullptr;
  const std::vector<SiteLabel>* labels = nullptr;  // per site (functions of site units)
  const FragmentLabels* fragments = nullptr;       // per fragment group (their functions)
  RunInfo info;
  double tsc_hz = 0;  // TSC ticks per second (0: unknown)
};

// Units per second of a metric when it is a time (the primary metric's own rate, tsc at the TSC
// rate, task-clock in ns), 0 for counts.
double metric_rate(const DiffRun& run, const std::string& metric);

// What the reader should know before trusting the comparison (one line each): a base that ran
// on several workers (not a contention-free oracle), both on one, other's threads preempted for
// more than 5% of their time, different executables, metrics that only one recording has.
std::vector<std::string> diff_notes(const DiffRun& base, const DiffRun& other,
                                    const analysis::Diff& diff);

// `top` limits the rows of each list (sites, fragments, small units, unmatched units).
std::string render_diff(const DiffRun& base, const DiffRun& other, const analysis::Diff& diff,
                        Format format, size_t top);

}  // namespace tasklens::report
