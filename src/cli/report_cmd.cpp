#include "cli/report_cmd.hpp"

#include <fmt/format.h>

#include <future>
#include <limits>
#include <optional>

#include "analysis/diff.hpp"
#include "analysis/profile.hpp"
#include "cli/command_support.hpp"
#include "errors.hpp"
#include "load/recording.hpp"
#include "load/timings.hpp"
#include "model/builder.hpp"
#include "report/diagnosis_report.hpp"
#include "report/profile_report.hpp"

namespace tasklens::cli {
namespace {

using load::Loaded;

// report --base: base's and this recording's units compared (analysis/diff.hpp), refused like
// `diff` refuses two programs or two recordings without a metric in common.
analysis::Diff compare_with_base(const load::Loaded& base,
                                 const report::FragmentLabels& base_fragments,
                                 const load::Loaded& other, const report::FragmentLabels& fragments,
                                 const std::string& base_path, const std::string& other_path) {
  if (analysis::common_metrics(base.model, other.model).empty())
    throw UsageError(
        fmt::format("--base {}: it measures another metric than {}; record both with "
                    "the same --metric",
                    base_path, other_path));
  analysis::Diff d = analysis::compute_diff(load::diff_input(base, base_fragments),
                                            load::diff_input(other, fragments));
  bool constructs = false;
  for (const auto* list : {&d.only_base, &d.only_other})
    for (const analysis::UnmatchedUnit& u : *list)
      constructs |=
          u.kind == analysis::DiffUnitKind::Site && u.site_kind != model::SiteKind::Program;
  if (d.matched_construct_sites == 0 && constructs)
    throw UsageError(
        fmt::format("--base {}: no construct site in common with {}: not the same "
                    "program? give a recording of this program (say with "
                    "OMP_NUM_THREADS=1)",
                    base_path, other_path));
  return d;
}

}  // namespace

// The profile of a recording read in passes: no DAG, so no diagnosis; the robust span unless
// --raw-span (load::load_streaming).
[[noreturn]] void report_streamed(const ReportOptions& opt, report::Format format) {
  if (!opt.base.empty())
    throw UsageError("--base needs the DAG in memory: leave out --stream (or --base)");
  load::Streamed st = load::load_streaming(opt.trace, load::span_mode(opt.raw_span));
  report::RunInfo info = report::run_info(*st.trace);
  info.span_mode = st.robust ? "robust" : "raw";
  report::SpanAccount account;
  account.clipping = &st.clipping;
  account.measured = st.measured;
  for (uint32_t f : st.clipped_fragments)
    account.fragments.push_back(f < st.fragment_labels.size() ? st.fragment_labels[f] : "");
  size_t top = opt.top                           ? opt.top
               : format == report::Format::Table ? 20
                                                 : std::numeric_limits<size_t>::max();
  warn_beside_csv(format, st.model.warnings);
  write_and_exit(
      report::render_profile(st.model, st.profile, st.labels, info, format, top, &account));
}

void run_report(const ReportOptions& opt) {
  report::Format format = parse_format(opt.format);
  if (opt.stream) report_streamed(opt, format);
  load::Loaded l;
  try {
    l = load::load(opt.trace, load::span_mode(opt.raw_span));
  } catch (const OutOfMemoryError&) {
    // Too large for the DAG: the profile in one pass, when the recording allows it.
    if (!opt.base.empty()) throw;
    read_in_one_pass_instead(opt.trace, [&] { report_streamed(opt, format); });
  }
  // The span as measured is one more longest path: beside the profile, on the other core.
  std::future<uint64_t> measured;
  if (!l.clipping.strands.empty())
    measured = std::async(std::launch::async,
                          [&l] { return analysis::measured_span(l.model, l.clipping); });
  // The diagnosis's inputs that do not need the profile: beside it, on the other core.
  std::future<load::Diagnosed> inputs;
  if (format != report::Format::Csv)
    inputs = std::async(std::launch::async, [&l] { return load::diagnosis_inputs(l); });
  analysis::Profile p = analysis::compute_profile(l.model);
  const report::SpanAccount account =
      load::span_account(l, p, measured.valid() ? &measured : nullptr);
  load::Timings::global().lap("profile");
  std::vector<report::DiagnosisItem> verdict;
  report::ProfileExtras extras;
  extras.diagnosis = &verdict;
  if (inputs.valid()) {
    const load::Diagnosed d = inputs.get();
    // --base: where work grows from the base recording to this one (diff's units and costs).
    std::optional<analysis::Diff> comparison;
    load::Loaded base;
    report::FragmentLabels base_fragments;
    if (!opt.base.empty()) {
      base = load::load(opt.base, load::span_mode(opt.raw_span));
      base_fragments = report::label_fragments(base.model, base.trace->modules(), base.labels);
      comparison = compare_with_base(base, base_fragments, l, d.fragments, opt.base, opt.trace);
    }
    const analysis::Diff* base_diff = comparison ? &*comparison : nullptr;
    verdict = report::diagnosis_items(
        l.model, load::diagnose(l, p, account, d, base_diff),
        {.sites = &l.labels, .fragments = &d.fragments, .account = &account, .base = base_diff});
    extras.serial = report::serial_fragments(l.model, p, d.fragments);
    load::Timings::global().lap("diagnosis");
  }
  size_t top = opt.top                           ? opt.top
               : format == report::Format::Table ? 20
                                                 : std::numeric_limits<size_t>::max();
  warn_beside_csv(format, l.model.warnings);
  write_and_exit(report::render_profile(l.model, p, l.labels, load::run_info_of(l), format, top,
                                        &account, &extras));
}

}  // namespace tasklens::cli
