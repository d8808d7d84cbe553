// Renders what-if curves and the adviser's steps as a table, CSV or JSON (contract in
// docs/report-json.md), and names code fragments (file:line-line) for them.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/cutoff.hpp"
#include "analysis/whatif.hpp"
#include "report/profile_report.hpp"

namespace tasklens::report {

// Fragments as users see them: "fib.c:12-14" (file:first line-last line), with the function.
// Fragments whose two ends symbolize alike are one group.
struct FragmentLabels {
  std::vector<uint32_t> group_of;       // per Model::fragments entry
  std::vector<std::string> label;       // per group
  std::vector<std::string> function;    // per group (may be empty)
  std::vector<std::string> begin_file;  // per group: full path of the first line's file
};
// `site_labels` name the function of fragments that run in outlined construct bodies.
FragmentLabels label_fragments(const model::Model& model,
                               const std::vector<trace::ModuleInfo>& modules,
                               const std::vector<SiteLabel>& site_labels);

// label_fragments' groups for a reading in one pass, which labels each fragment as it meets it
// (by fragment index: its label, "" for one not placed, and its function): one group per label,
// named by the first function found, "<unknown>" for an empty label. No begin_file.
FragmentLabels group_fragments(const std::vector<std::string>& labels,
                               const std::vector<std::string>& functions);

// Whether fragment group a's label comes before b's (byte order): the adviser's order among groups
// with equal work on the path (analysis::advise's first_in_ties), the same whatever numbered the
// groups (the DAG, or a reading in one pass).
inline bool label_first(const FragmentLabels& fl, uint32_t a, uint32_t b) {
  return fl.label[a] < fl.label[b];
}

// The labels label_fragments gives the named fragments (indices into Model::fragments), without
// the pass over every strand that finds each fragment's function.
std::vector<std::string> label_some_fragments(const model::Model& model,
                                              const std::vector<trace::ModuleInfo>& modules,
                                              const std::vector<uint32_t>& fragments);

// One fragment's label and function, as label_fragments gives them, for a reading that meets
// the fragments as it goes (SitesAsTheyCome::place_fragment). `site_function`: the function of
// the site of a strand running it (for an outlined construct body), or null. `symbolizer`: the
// caller's, kept between fragments (resolve_return_addresses).
std::pair<std::string, std::string> label_fragment(
    const model::Fragment& fragment, const std::vector<trace::ModuleInfo>& modules,
    const std::unordered_map<uint64_t, model::SourceName>& synthetic,
    const std::string* site_function, const symbols::Symbolizer* symbolizer = nullptr);

struct WhatIfReport {
  analysis::WhatIfMode mode = analysis::WhatIfMode::Parallelize;
  std::vector<double> factors;
  std::vector<std::string> unit_kinds;  // per unit: "region", "site" or "fragment"
  analysis::Profile before;             // the recorded profile (program totals are used)
  std::vector<analysis::WhatIfCurve> curves;
  double after_factor = 0;  // the largest finite factor
  analysis::Profile after;  // profile after all units at after_factor
};
std::string render_whatif(const model::Model& model, const WhatIfReport& report,
                          const std::vector<SiteLabel>& labels, const RunInfo& info, Format format,
                          size_t top);

struct AdviceReport {
  analysis::Advice advice;
  analysis::AdviseOptions options;
  std::string target_origin;  // how the target was chosen ("8 x 2 cores", "--target")
  // What a step's line cannot say (a step whose fragment is a region's own code, entered again
  // and again): after the table, and as JSON "notes".
  std::vector<std::string> notes;
  // The cut-off of each recursion (analysis/cutoff.hpp), named with `site_labels`.
  std::vector<analysis::CutoffAdvice> cutoffs;
  // What the recorded run lost beyond its DAG (analysis::run_loss); threads == 0: not known (a
  // reading in one pass, which has no strands' times).
  analysis::RunLoss loss;
  const std::vector<SiteLabel>* site_labels = nullptr;
};
std::string render_advice(const model::Model& model, const AdviceReport& report,
                          const FragmentLabels& fragments, const RunInfo& info, Format format);

// "inf" or the number as written by a person (2, 2.5).
std::string factor_name(double factor);

}  // namespace tasklens::report
