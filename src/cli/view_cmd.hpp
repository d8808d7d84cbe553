// `tasklens view`: one self-contained HTML file (report/html_view.hpp, docs/view.md) with the
// profile, what-if curves and the adviser's steps, the scheduling breakdown and parallelism over
// time, the task histograms, the per-worker timeline and the construct hierarchy; with
// --compare, two runs side by side.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace tasklens::cli {

struct ViewOptions {
  std::string trace = "tasklens.data";
  std::string output = "tasklens.html";  // "-": standard output
  std::string compare;                   // a second trace shown beside the first
  // What-if units as `tasklens whatif` takes them; none: the default units (view_cmd.cpp).
  std::vector<std::string> regions, sites, fragments;
  // `--whatif UNIT[=FACTOR]`: any of the three, told apart by classify_whatif_unit.
  std::vector<std::string> whatif;
  std::string factors = "2,4,8,16,32,inf";
  std::string mode = "parallelize";
  size_t tree_nodes = 4000;  // aggregates of the construct tree
  size_t slices = 4000;      // timeline slices before merging into time buckets
  bool raw_span = false;     // --raw-span: every strand as measured (load::SpanMode)
  // --stream: read the recordings in passes (view_cmd.cpp's view_streamed), as view does by
  // itself when their DAGs do not fit.
  bool stream = false;
};

// What a `--whatif` unit names: "region:NAME", "site:FILE:LINE" and "fragment:FILE:L1-L2" say
// it; otherwise FILE:L1-L2 (digits on both sides of the dash) is a fragment, FILE:LINE a site and
// anything else a user region. A "=FACTOR" suffix stays on the returned name. Header-only so that
// the tests can call it.
enum class WhatIfUnitKind { Region, Site, Fragment };
inline std::pair<WhatIfUnitKind, std::string> classify_whatif_unit(const std::string& text) {
  for (const auto& [prefix, kind] :
       {std::pair<const char*, WhatIfUnitKind>{"region:", WhatIfUnitKind::Region},
        {"site:", WhatIfUnitKind::Site},
        {"fragment:", WhatIfUnitKind::Fragment}}) {
    const std::string p = prefix;
    if (text.compare(0, p.size(), p) == 0) return {kind, text.substr(p.size())};
  }
  const std::string name = text.substr(0, text.rfind('='));
  const size_t colon = name.rfind(':');
  if (colon == std::string::npos || colon == 0) return {WhatIfUnitKind::Region, text};
  const std::string tail = name.substr(colon + 1);
  const auto digits = [](const std::string& d) {
    return !d.empty() && d.find_first_not_of("0123456789") == std::string::npos;
  };
  const size_t dash = tail.find('-');
  if (dash != std::string::npos && digits(tail.substr(0, dash)) && digits(tail.substr(dash + 1)))
    return {WhatIfUnitKind::Fragment, text};
  if (digits(tail)) return {WhatIfUnitKind::Site, text};
  return {WhatIfUnitKind::Region, text};
}

// Writes the page and ends the process (like run_report). Throws UsageError on bad options or a
// unit not in a trace, and the trace's and model's errors.
[[noreturn]] void run_view(const ViewOptions& options);

}  // namespace tasklens::cli
