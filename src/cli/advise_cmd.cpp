#include "cli/advise_cmd.hpp"

#include <fmt/format.h>

#include "analysis/cutoff.hpp"
#include "analysis/diagnosis.hpp"
#include "analysis/profile.hpp"
#include "analysis/whatif.hpp"
#include "cli/command_support.hpp"
#include "errors.hpp"
#include "load/recording.hpp"
#include "load/timings.hpp"
#include "report/diagnosis_report.hpp"

namespace tasklens::cli {
namespace {

using load::Loaded;

// A step whose fragment is mostly the own code of a parallel region entered again and again
// (report's region-entries: the team's start and end) is parallelized by entering the team
// fewer times, which the step's line cannot say.
std::vector<std::string> entered_region_notes(const load::Loaded& l,
                                              const report::FragmentLabels& fl,
                                              const analysis::Advice& advice) {
  if (advice.steps.empty()) return {};  // (no profile to compute)
  const analysis::Profile profile = analysis::compute_profile(l.model);
  return report::region_entry_notes(
      analysis::region_entry_steps(l.model, profile, fl.group_of, advice), advice, fl, l.labels);
}

// advise's cut-off section covers the recursions with the most tasks: a program has one or two.
constexpr size_t kCutoffRecursions = 3;

}  // namespace

report::AdviceReport advice_options(const AdviseOptions& opt, const model::Model& m) {
  report::AdviceReport r;
  r.options.mode = parse_mode(opt.mode);
  if (opt.target > 0) {  // (a negative one is refused by run_advise, before the trace is read)
    r.options.target = opt.target;
    r.target_origin = "--target";
  } else {  // the report's findings aim at the same
    r.options.target = analysis::parallelism_target(m);
    r.target_origin = report::parallelism_target_origin(m);
  }
  if (opt.factor != 0) r.options.factor = parse_factor(fmt::format("{:g}", opt.factor), "--factor");
  if (opt.k < 0) throw UsageError("--k must be 0 or more");
  r.options.max_steps = opt.max_steps;
  r.options.min_overhead_multiple = opt.k;
  return r;
}

void run_advise(const AdviseOptions& opt) {
  report::Format format = parse_format(opt.format);
  if (opt.target < 0) throw UsageError("--target must be positive");  // before a long read
  load::Loaded l = load::load(opt.trace, load::span_mode(opt.raw_span));
  report::AdviceReport r = advice_options(opt, l.model);
  report::FragmentLabels fl = report::label_fragments(l.model, l.trace->modules(), l.labels);
  r.advice =
      analysis::advise(l.model, fl.group_of, static_cast<uint32_t>(fl.label.size()), r.options);
  r.notes = entered_region_notes(l, fl, r.advice);
  load::Timings::global().lap("advise");
  // The cut-off of the recursions with the most tasks (a program has one or two).
  std::vector<analysis::Recursion> recursions = analysis::find_recursions(l.model);
  if (recursions.size() > kCutoffRecursions) recursions.resize(kCutoffRecursions);
  for (const analysis::Recursion& rec : recursions)
    r.cutoffs.push_back(
        analysis::advise_cutoff(l.model, rec, r.options.target, r.advice.overhead.per_task));
  r.site_labels = &l.labels;
  load::Timings::global().lap("cut-off");
  write_and_exit(report::render_advice(l.model, r, fl, load::run_info_of(l), format));
}

}  // namespace tasklens::cli
