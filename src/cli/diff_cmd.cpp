#include "cli/diff_cmd.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <future>
#include <limits>
#include <memory>
#include <stdexcept>

#include "analysis/diff.hpp"
#include "cli/command_support.hpp"
#include "errors.hpp"
#include "load/recording.hpp"
#include "report/diff_report.hpp"
#include "report/whatif_report.hpp"

namespace tasklens::cli {
namespace {

// One recording with its fragments' labels, as `diff` loads it.
struct Recording {
  load::Loaded loaded;
  report::FragmentLabels fragments;
};

std::unique_ptr<Recording> load_recording(const std::string& path, load::SpanMode mode) {
  auto r = std::make_unique<Recording>();
  r->loaded = load::load(path, mode);
  r->fragments =
      report::label_fragments(r->loaded.model, r->loaded.trace->modules(), r->loaded.labels);
  return r;
}

// The renderer's view of one loaded recording (the analysis' input: load::diff_input).
report::DiffRun diff_run(const load::Loaded& l, const report::FragmentLabels& fragments) {
  report::DiffRun r;
  r.model = &l.model;
  r.labels = &l.labels;
  r.fragments = &fragments;
  r.info = load::run_info_of(l);
  r.tsc_hz = l.trace->tsc_hz();
  return r;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

// The construct sites of a recording (not the program site), largest work first, at most 5.
std::string construct_sites(const analysis::Diff& d, bool base) {
  std::string s;
  size_t n = 0;
  for (const analysis::UnmatchedUnit& u : base ? d.only_base : d.only_other) {
    if (u.kind != analysis::DiffUnitKind::Site || u.site_kind == model::SiteKind::Program) continue;
    if (n++ == 5) {
      s += ", ...";
      break;
    }
    s += (s.empty() ? "" : ", ") + u.name;
  }
  return s.empty() ? "none" : s;
}

}  // namespace

void run_diff(const DiffOptions& opt) {
  report::Format format = parse_format(opt.format);
  if (opt.traces.size() != 2)
    throw UsageError(fmt::format(
        "diff: give two traces, base and other (e.g. recorded with OMP_NUM_THREADS=1 and 4), "
        "not {}",
        opt.traces.size()));
  if (!(opt.min_share >= 0 && opt.min_share <= 100))
    throw UsageError(fmt::format("--min-share {}: use a percent from 0 to 100", opt.min_share));
  const size_t top = opt.top                           ? opt.top
                     : format == report::Format::Table ? 15
                                                       : std::numeric_limits<size_t>::max();
  // The two recordings load at once (reading, building and symbolizing each is independent):
  // the comparison then takes about as long as a report of the larger one. Base's error, if
  // both fail, is the one shown.
  const load::SpanMode mode = load::span_mode(opt.raw_span);
  load::check_models_fit_together(opt.traces);  // both models are held at once
  auto base_loading = std::async(std::launch::async, load_recording, opt.traces[0], mode);
  std::unique_ptr<Recording> other;
  std::exception_ptr other_error;
  try {
    other = load_recording(opt.traces[1], mode);
  } catch (...) {
    other_error = std::current_exception();
  }
  std::unique_ptr<Recording> base = base_loading.get();
  if (other_error) std::rethrow_exception(other_error);
  write_and_exit(compare_recordings(base->loaded, base->fragments, other->loaded, other->fragments,
                                    opt, format, top));
}

std::string compare_recordings(const load::Loaded& base,
                               const report::FragmentLabels& base_fragments,
                               const load::Loaded& other,
                               const report::FragmentLabels& other_fragments,
                               const DiffOptions& opt, report::Format format, size_t top) {
  if (opt.traces.size() != 2)
    throw std::invalid_argument("compare_recordings: options.traces must name the two recordings");
  const analysis::DiffInput base_input = load::diff_input(base, base_fragments);
  const analysis::DiffInput other_input = load::diff_input(other, other_fragments);
  const model::Model& bm = base.model;
  const model::Model& om = other.model;
  const std::vector<std::string> common = analysis::common_metrics(bm, om);
  if (common.empty())
    throw UsageError(fmt::format(
        "diff: {} measures {} and {} measures {}: no metric in common to compare; record both "
        "with the same --metric",
        opt.traces[0], join(analysis::metric_names(bm)), opt.traces[1],
        join(analysis::metric_names(om))));
  if (!opt.metric.empty() && std::find(common.begin(), common.end(), opt.metric) == common.end())
    throw UsageError(fmt::format("--metric {}: not measured by both recordings; they have {}",
                                 opt.metric, join(common)));
  analysis::DiffOptions dopt;
  dopt.min_share = opt.min_share / 100.0;
  dopt.sort_metric = opt.metric;
  const analysis::Diff d = analysis::compute_diff(base_input, other_input, dopt);
  bool any_construct = false;
  for (const auto* list : {&d.only_base, &d.only_other})
    for (const analysis::UnmatchedUnit& u : *list)
      any_construct |=
          u.kind == analysis::DiffUnitKind::Site && u.site_kind != model::SiteKind::Program;
  if (d.matched_construct_sites == 0 && any_construct)
    throw UsageError(fmt::format(
        "diff: {} and {} have no construct site in common ({}: {}; {}: {}): not the same "
        "program? diff compares two recordings of one program",
        opt.traces[0], opt.traces[1], opt.traces[0], construct_sites(d, true), opt.traces[1],
        construct_sites(d, false)));
  return report::render_diff(diff_run(base, base_fragments), diff_run(other, other_fragments), d,
                             format, top);
}

}  // namespace tasklens::cli
