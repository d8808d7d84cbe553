// Renders the parallelism profile as a table, CSV or JSON (the JSON contract is in
// docs/report-json.md; tests and tools rely on it).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/profile.hpp"
#include "analysis/robust.hpp"
#include "model/model.hpp"
#include "symbols/symbolizer.hpp"
#include "trace/reader.hpp"

namespace tasklens::report {

enum class Format { Table, Csv, Json };

// How a site is shown: symbolized once, shared by every format.
struct SiteLabel {
  std::string site;  // "file.c:12", or "module+0x1234" without debug info
  std::string file;  // full path as in the debug info; empty if unknown
  unsigned line = 0;
  std::string function;  // empty if unknown
  bool library = false;  // the site's code is inside a library's headers (see below)
  // The construct was created inside library code inlined into the program's: `site` is the
  // program's line, this the library's (file:line), kept as detail. Empty otherwise.
  std::string library_site;
};

// Symbolizes every site of the model against the trace's module map.
std::vector<SiteLabel> label_sites(const model::Model& model,
                                   const std::vector<trace::ModuleInfo>& modules);

// Compilers duplicate constructs (unrolled loops, inlined functions), but users think in source
// lines: sites that symbolize to the same file:line, function and kind become one site. Runs
// before the analyses, so that counts, work and span are per source site.
void merge_sites_by_location(model::Model& model, std::vector<SiteLabel>& labels);

// The same labels and merges, one site at a time, for a one-pass reading that meets the sites as
// it goes (model::BuildOptions::place_site): each new site is labelled when first met and merged
// into an earlier one with the same source line, function and kind.
class SitesAsTheyCome {
 public:
  explicit SitesAsTheyCome(const trace::TraceFile& trace);
  // `index`: the site's index if it is new; `enclosing`: the site of the construct around it.
  // Returns the index to use: `index`, or the earlier site it merges into.
  uint32_t place(const model::Site& site, uint32_t index, uint32_t enclosing);
  // By site index, once the reading is over.
  const std::vector<SiteLabel>& labels() const { return labels_; }
  // The same for code fragments (model::BuildOptions::place_fragment): each labelled when met,
  // as label_fragments labels it (file:first-last), and its function named; `site`: the site of
  // the first strand running it (its function names an outlined construct body's code).
  void place_fragment(const model::Fragment& fragment, uint32_t index, uint32_t site);
  // By fragment index, during the reading too ("" for an index not placed).
  const std::vector<std::string>& fragment_labels() const { return fragment_labels_; }
  const std::vector<std::string>& fragment_functions() const { return fragment_functions_; }
  // Is `index` a site placed so far, of a construct (not the program's)? During the reading too.
  bool is_construct(uint32_t index) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return index < kinds_.size() && kinds_[index] != model::SiteKind::Program;
  }
  // Is `index` a site placed so far of a task construct (analysis::TaskSiteTest)? During the
  // reading too, from any thread.
  bool is_task(uint32_t index) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return index < kinds_.size() && kinds_[index] == model::SiteKind::Task;
  }
  // Is `index` a construct site labelled `label`, a fragment labelled `label`? During the reading
  // too, from any thread (a one-pass sink runs on a thread of its own: model/sink_thread.hpp).
  bool construct_site_is(uint32_t index, const std::string& label) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return index < kinds_.size() && kinds_[index] != model::SiteKind::Program &&
           labels_[index].site == label;
  }
  bool fragment_is(uint32_t index, const std::string& label) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return index < fragment_labels_.size() && fragment_labels_[index] == label;
  }
  // attribute_library_sites's rule for one construct of site `index` whose innermost construct
  // around it is the program's when `outer_is_program` (model::BuildOptions::
  // folds_into_enclosing): does it count for that construct? On the builder's thread, which
  // places the sites. How many sites it folded so far.
  bool folds_into_enclosing(uint32_t index, bool outer_is_program);
  size_t folded_sites() const { return folded_.size(); }

 private:
  std::vector<trace::ModuleInfo> modules_;
  std::unordered_map<uint64_t, model::SourceName> synthetic_;
  // Sites and fragments come one at a time: one symbolizer, its processes kept between them.
  symbols::Symbolizer symbolizer_;
  std::vector<SiteLabel> labels_;
  std::vector<model::SiteKind> kinds_;
  std::map<std::pair<std::string, int>, uint32_t> index_;
  std::vector<std::string> fragment_labels_, fragment_functions_;
  std::set<uint32_t> folded_;
  mutable std::mutex mutex_;  // place and place_fragment against the queries above
};

// The warning of a reading where `n` library sites counted for the constructs around them.
std::string library_sites_warning(size_t n);

struct RunInfo {
  std::string trace_path;
  std::string program;  // path of the recorded executable
  uint64_t pid = 0;
  std::string runtime;  // the OpenMP runtime's version string
  bool has_exit = false;
  int exit_code = 0;
  int exit_signal = 0;
  // For commands that compute a span: "robust" when disturbed strands were clipped to their
  // fragment's median before the analysis (analysis/robust.hpp), "raw" when every strand counts
  // as measured (--raw-span, or a metric the rule cannot judge). Empty: the JSON leaves it out.
  std::string span_mode;
};

RunInfo run_info(const trace::TraceFile& trace);

// Formats a value of the model's metric: a duration for time-like metrics, a count otherwise.
std::string format_work(const model::Model& model, uint64_t value);

// What the robust span left out (analysis/robust.hpp), for the report to show beside it.
struct SpanAccount {
  const analysis::Clipping* clipping = nullptr;  // the strands clipped in `model`
  analysis::SpanFigures measured;                // the program's figures as measured
  std::vector<std::string> fragments;            // per clipped strand: its fragment's label
  // Time blocked (taken out of the work) in the critical path's strands, per code fragment,
  // largest first: what bounds the wall time without showing in the span.
  struct Blocked {
    std::string fragment;  // its label (file:first-last, as whatif names fragments)
    uint64_t ticks = 0;
  };
  std::vector<Blocked> blocked_critical;
};

// The blocked time (Model::blocked_work) of each site's own strands (Strand::site).
std::vector<uint64_t> blocked_by_site(const model::Model& model);

// `account`: the clipping behind a robust profile; nullptr when nothing was clipped (the
// measured figures are then the profile's).
// The code fragments (whatif's) of the serial code outside every construct, for its row: the
// row then names its code rather than only "(outside any construct)".
struct SerialFragment {
  std::string label;      // file:first-last, as whatif and advise name fragments
  std::string function;   // may be empty
  uint64_t work = 0;      // of the fragment's strands outside every construct
  uint64_t critical = 0;  // of those on the critical path (path weight)
};
// What report adds to the profile when it can: the verdict (report/diagnosis_report.hpp) that opens
// the table and the JSON's "diagnosis" list, and the serial code's fragments, largest share of
// the critical path first.
struct DiagnosisItem;
struct ProfileExtras {
  const std::vector<DiagnosisItem>* diagnosis = nullptr;
  std::vector<SerialFragment> serial;
};
std::string render_profile(const model::Model& model, const analysis::Profile& profile,
                           const std::vector<SiteLabel>& labels, const RunInfo& info, Format format,
                           size_t top, const SpanAccount* account = nullptr,
                           const ProfileExtras* extras = nullptr);

// The site rows of a profile (the first `rows`), shared with the what-if report.
// `serial`: the serial code's fragments (ProfileExtras), shown on the Program site's row.
nlohmann::ordered_json site_rows_json(const model::Model& model, const analysis::Profile& profile,
                                      const std::vector<SiteLabel>& labels, size_t rows,
                                      const std::vector<SerialFragment>* serial = nullptr);
std::string site_rows_table(const model::Model& model, const analysis::Profile& profile,
                            const std::vector<SiteLabel>& labels, size_t rows,
                            const std::vector<SerialFragment>* serial = nullptr);

// Symbolizes return addresses (as recorded: codeptr_ra) against the trace's module map;
// synthetic addresses (trace::kSyntheticSite) take their location from `synthetic`.
// `symbolizer`: one made from `modules` and kept by a caller that resolves a few addresses at a
// time (its addr2line processes stay up between calls); nullptr: one for this call.
std::vector<symbols::Location> resolve_return_addresses(
    const std::vector<uint64_t>& addresses, const std::vector<trace::ModuleInfo>& modules,
    const std::unordered_map<uint64_t, model::SourceName>& synthetic = {},
    const symbols::Symbolizer* symbolizer = nullptr);
// The Symbolizer of a trace's module map.
symbols::Symbolizer symbolizer_of(const std::vector<trace::ModuleInfo>& modules);

// Sites whose code is inside a library's headers (oneTBB's: range splits, or a task_group::run
// the compiler did not inline) say nothing about the program: their nodes count for the nearest
// enclosing construct instead. Returns how many sites were so re-attributed.
size_t attribute_library_sites(model::Model& model, const std::vector<SiteLabel>& labels);

// Small formatting helpers shared by the renderers.
// A time-like amount `v` with `per_second` units per second as s / ms / us / ns; without a
// rate (per_second <= 0), the plain number with k / M / G.
std::string format_amount(double v, double per_second);
std::string basename_of(const std::string& path);
double seconds_of(const model::Model& model, uint64_t value);  // 0 if not time-like
std::string csv_escape(const std::string& field);

}  // namespace tasklens::report
