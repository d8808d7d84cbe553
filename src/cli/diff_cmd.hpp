// `tasklens diff base other`: the differential analysis (as in OMP-WHIP) of two recordings of the
// same program (typically 1 thread, the oracle, against P threads): per construct site and code
// fragment, the work in each and its inflation, sorted by the inflation's cost on other's
// critical path (analysis/diff.hpp).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "cli/command_support.hpp"
#include "load/recording.hpp"
#include "report/profile_report.hpp"
#include "report/whatif_report.hpp"

namespace tasklens::cli {

struct DiffOptions {
  std::vector<std::string> traces;  // exactly two: base other
  std::string format = "table";
  size_t top = 0;          // rows per list; 0: 15 for the table, all for csv/json
  double min_share = 1.0;  // percent of the program's work under which a unit is noise
  std::string metric;      // the metric that sorts; empty: the first common one
  bool raw_span = false;   // --raw-span: every strand as measured (load::SpanMode)
  // Three passes (analysis/stream_diff.hpp): each recording's units, then other's costs; diff
  // also reads so recordings whose DAGs do not fit together.
  bool stream = false;
};

// `tasklens diff`'s output for two loaded recordings (run_diff prints it; `tasklens view
// --compare` embeds its JSON): `options.traces` name them in messages, `top` limits the rows of
// each list. Throws UsageError with the reason when they cannot be compared: no metric in common,
// construct sites and none in common (not the same program), --metric not in both.
// diff in passes (--stream, or when the two DAGs do not fit together): the text in `format`.
std::string diff_in_passes_text(const DiffOptions& options, report::Format format, size_t top);

std::string compare_recordings(const load::Loaded& base,
                               const report::FragmentLabels& base_fragments,
                               const load::Loaded& other,
                               const report::FragmentLabels& other_fragments,
                               const DiffOptions& options, report::Format format, size_t top);

// Writes the report to stdout and ends the process (like run_report). Throws UsageError on bad
// options, on recordings with no metric or no construct site in common (not the same program).
[[noreturn]] void run_diff(const DiffOptions& options);

}  // namespace tasklens::cli
