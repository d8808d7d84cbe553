// `tasklens whatif`: the parallelism if named code (a region, a site, a fragment) were split k
// ways or made k times faster; `--list` names the units.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "analysis/stream_whatif.hpp"
#include "analysis/whatif.hpp"
#include "load/recording.hpp"
#include "report/whatif_report.hpp"

namespace tasklens::cli {

struct WhatIfOptions {
  std::string trace = "tasklens.data";
  std::vector<std::string> regions, sites, fragments;  // NAME[=FACTOR]
  std::string factors = "2,4,8,16,32,inf";
  std::string mode = "parallelize";
  std::string format = "table";
  size_t top = 0;
  bool list = false;
  bool raw_span = false;
  bool stream = false;  // read in one pass (--site units only)
};

// Writes the what-if report to stdout and ends the process (write_and_exit).
[[noreturn]] void run_whatif(const WhatIfOptions& options);

// The units named by whatif's --region, --site and --fragment, in that order, with their kinds
// ("region", "site", "fragment") appended to `kinds`. Throws UsageError for a unit not found.
// whatif in one pass (--stream, or when the DAG does not fit), but --list: the text in `format`.
std::string whatif_streamed_text(const WhatIfOptions& options, report::Format format,
                                 analysis::WhatIfMode mode, const std::vector<double>& factors);
// The same in a pass shared with other sinks (`view`'s): the units are resolved when it is made
// (throws UsageError for a region the trace has not), sink() gives the sink for the pass's
// make_sink, text() the text once the pass is over (throws UsageError for a site or fragment
// the pass did not meet).
class WhatIfPass {
 public:
  WhatIfPass(const WhatIfOptions& options, analysis::WhatIfMode mode, std::vector<double> factors);
  ~WhatIfPass();
  model::StrandSink& sink(const report::SitesAsTheyCome& sites);
  std::string text(const load::Streamed& read, report::Format format, size_t top);

 private:
  struct Wanted {
    const char* option;  // "--region", "--site" or "--fragment"
    bool fragment;
    std::string label;
    double factor;
    uint32_t region = model::kNone;
  };
  std::vector<Wanted> wanted_;
  analysis::WhatIfMode mode_;
  std::vector<double> factors_;
  std::unique_ptr<analysis::StreamWhatIf> sink_;
};

std::vector<analysis::Unit> resolve_units(const load::Loaded& loaded,
                                          const report::FragmentLabels& fl,
                                          const WhatIfOptions& options,
                                          std::vector<std::string>& kinds);
// The what-if report of `units` (curves at every factor, the profile after all of them).
report::WhatIfReport whatif_report(const model::Model& model,
                                   const std::vector<analysis::Unit>& units,
                                   std::vector<std::string> kinds, std::vector<double> factors,
                                   analysis::WhatIfMode mode);

}  // namespace tasklens::cli
