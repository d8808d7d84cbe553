// `tasklens view`: one self-contained HTML file (report/html_view.hpp, docs/view.md) with the
// profile, what-if curves and the adviser's steps, the scheduling breakdown and parallelism over
// time, the task histograms, the per-worker timeline and the construct hierarchy; with
// --compare, two runs side by side.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tasklens::cli {

struct ViewOptions {
  std::string trace = "tasklens.data";
  std::string output = "tasklens.html";  // "-": standard output
  std::string compare;                   // a second trace shown beside the first
  // What-if units as `tasklens whatif` takes them; none: the default units (view_cmd.cpp).
  std::vector<std::string> regions, sites, fragments;
  std::string factors = "2,4,8,16,32,inf";
  std::string mode = "parallelize";
  size_t tree_nodes = 4000;  // aggregates of the construct tree
  size_t slices = 4000;      // timeline slices before merging into time buckets
};

// Writes the page and ends the process (like run_report). Throws UsageError on bad options or a
// unit not in a trace, and the trace's and model's errors.
[[noreturn]] void run_view(const ViewOptions& options);

}  // namespace tasklens::cli
