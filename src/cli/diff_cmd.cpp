#include "cli/diff_cmd.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <future>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>

#include "analysis/diff.hpp"
#include "analysis/stream_diff.hpp"
#include "analysis/stream_robust.hpp"
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

// Why two recordings cannot be compared, if they cannot: no metric in common, --metric not in
// both (UsageError).
void check_metrics(const model::Model& bm, const model::Model& om, const DiffOptions& opt) {
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
}

// Construct sites, and none in common: not the same program (UsageError).
void check_same_program(const analysis::Diff& d, const DiffOptions& opt) {
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
}

// One recording read for diff: its units' figures (analysis/stream_diff.hpp), in one pass, or
// in the robust span's passes (load::read_with_robust_span) with the clipped strands' works.
struct Measured {
  load::Streamed st;
  report::FragmentLabels fragments;
  analysis::DiffFigures figures;
};

Measured measure_in_passes(const std::string& path, load::SpanMode mode) {
  Measured r;
  std::optional<analysis::StreamUnitList> list;
  r.st = load::read_with_robust_span(
      path, "measuring the units of", mode,
      [&list](const report::SitesAsTheyCome&, const trace::TraceFile&) -> model::StrandSink& {
        return list.emplace();
      },
      /*need_measured=*/false, /*replayable=*/true);
  r.fragments = report::group_fragments(r.st.fragment_labels, r.st.fragment_functions);
  analysis::DiffInput names;
  for (const report::SiteLabel& label : r.st.labels) names.site_names.push_back(label.site);
  names.fragment_group = r.fragments.group_of;
  names.fragment_names = r.fragments.label;
  r.figures = analysis::diff_figures(list->finish(), r.st.model, names);
  return r;
}

constexpr const char* kOnePassWarning =
    "read in passes (--stream, or the two DAGs do not fit in the memory together): the figures "
    "as measured, without the robust span";
constexpr const char* kPassesWarning =
    "read in passes (--stream, or the two DAGs do not fit in the memory together): each "
    "recording's units beside the robust span's census, again with the strands it clipped, and "
    "other's costs with them clipped";

}  // namespace

// diff on recordings read in passes: each once for its units, then other once more for the
// spans its costs need (one longest path per unit costed, all in that pass).
std::string diff_in_passes_text(const DiffOptions& opt, report::Format format, size_t top) {
  const load::SpanMode mode = load::span_mode(opt.raw_span);
  Measured base = measure_in_passes(opt.traces[0], mode);
  Measured other = measure_in_passes(opt.traces[1], mode);
  check_metrics(base.st.model, other.st.model, opt);
  const auto [metrics, sort] = analysis::diff_metrics(
      analysis::metric_names(base.st.model), analysis::metric_names(other.st.model), opt.metric);
  analysis::DiffOptions dopt;
  dopt.min_share = opt.min_share / 100.0;
  const analysis::Diff d = analysis::diff_of(
      base.figures, other.figures, metrics, sort, dopt,
      [&](const std::vector<analysis::ScaledSpan>& requests) {
        // The pass numbers sites and fragments as the first pass over other did (the same
        // events in the same order; check_read_alike makes sure), so its units' ids hold.
        analysis::StreamScaledSpans spans(
            analysis::rescaled_paths(requests, other.figures, other.fragments.group_of));
        std::optional<analysis::ClippingSink> clipped;  // (its strands as the units saw them)
        const load::Streamed again = load::read_in_one_pass(
            opt.traces[1], "costing the units of",
            [&](const report::SitesAsTheyCome&, const trace::TraceFile&) -> model::StrandSink& {
              return analysis::through_clipping(clipped, spans, other.st.clipping,
                                                other.st.clipped_fragments);
            });
        load::check_read_alike(other.st, again);
        return spans.finish();
      });
  check_same_program(d, opt);
  auto run = [](Measured& m) {
    m.st.model.warnings.push_back(m.st.robust ? kPassesWarning : kOnePassWarning);
    report::DiffRun r;
    r.model = &m.st.model;
    r.labels = &m.st.labels;
    r.fragments = &m.fragments;
    r.info = report::run_info(*m.st.trace);
    r.info.span_mode = m.st.robust ? "robust" : "raw";
    r.tsc_hz = m.st.trace->tsc_hz();
    return r;
  };
  const report::DiffRun base_run = run(base), other_run = run(other);
  warn_beside_csv(format, base_run.model->warnings, "base: ");
  warn_beside_csv(format, other_run.model->warnings, "other: ");
  return report::render_diff(base_run, other_run, d, format, top);
}

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
  if (opt.stream) write_and_exit(diff_in_passes_text(opt, format, top));
  // The two recordings load at once (reading, building and symbolizing each is independent):
  // the comparison then takes about as long as a report of the larger one. Base's error, if
  // both fail, is the one shown.
  const load::SpanMode mode = load::span_mode(opt.raw_span);
  std::unique_ptr<Recording> base, other;
  try {
    load::check_models_fit_together(opt.traces);  // both models are held at once
    auto base_loading = std::async(std::launch::async, load_recording, opt.traces[0], mode);
    std::exception_ptr other_error;
    try {
      other = load_recording(opt.traces[1], mode);
    } catch (...) {
      other_error = std::current_exception();
    }
    base = base_loading.get();
    if (other_error) std::rethrow_exception(other_error);
  } catch (const OutOfMemoryError&) {
    // Too large for the two DAGs: in passes, when the recordings allow it.
    read_in_one_pass_instead(opt.traces[0] + " and " + opt.traces[1],
                             [&] { write_and_exit(diff_in_passes_text(opt, format, top)); });
  }
  std::string out = compare_recordings(base->loaded, base->fragments, other->loaded,
                                       other->fragments, opt, format, top);
  warn_beside_csv(format, base->loaded.model.warnings, "base: ");
  warn_beside_csv(format, other->loaded.model.warnings, "other: ");
  write_and_exit(out);
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
  check_metrics(base.model, other.model, opt);
  analysis::DiffOptions dopt;
  dopt.min_share = opt.min_share / 100.0;
  dopt.sort_metric = opt.metric;
  const analysis::Diff d = analysis::compute_diff(base_input, other_input, dopt);
  check_same_program(d, opt);
  return report::render_diff(diff_run(base, base_fragments), diff_run(other, other_fragments), d,
                             format, top);
}

}  // namespace tasklens::cli
