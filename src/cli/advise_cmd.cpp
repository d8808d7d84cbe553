#include "cli/advise_cmd.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "analysis/cutoff.hpp"
#include "analysis/profile.hpp"
#include "analysis/whatif.hpp"
#include "cli/command_support.hpp"
#include "errors.hpp"
#include "load/recording.hpp"
#include "load/timings.hpp"
#include "report/diagnosis.hpp"

namespace tasklens::cli {
namespace {

using load::Loaded;

// A step whose fragment is mostly the own code of a parallel region entered again and again
// (report's region-entries: the team's start and end) is parallelized by entering the team
// fewer times, which the step's line cannot say.
std::vector<std::string> entered_region_notes(const load::Loaded& l,
                                              const report::FragmentLabels& fl,
                                              const analysis::Advice& advice) {
  std::vector<std::string> notes;
  if (advice.steps.empty()) return notes;
  const analysis::Profile profile = analysis::compute_profile(l.model);
  const std::vector<uint8_t> too_often = report::regions_entered_too_often(l.model, profile);
  if (std::none_of(too_often.begin(), too_often.end(), [](uint8_t x) { return x != 0; }))
    return notes;
  // Each step's group: the site holding most of its work, from one pass over the strands.
  std::unordered_map<uint32_t, std::unordered_map<uint32_t, uint64_t>> work_by_group;
  for (const analysis::AdviceStep& step : advice.steps) work_by_group[step.group];
  for (const model::Strand& st : l.model.strands) {
    if (st.fragment >= fl.group_of.size()) continue;
    auto it = work_by_group.find(fl.group_of[st.fragment]);
    if (it != work_by_group.end()) it->second[st.site] += st.work;
  }
  // The steps of each such region, in the order the regions first come. A region's own strands
  // often share their code fragment with its loop's chunks (both run from the region's line to
  // the loop's), whose work is about as large and moves with the machine from one recording to
  // the next: the region needs a third of the fragment's work, not the most of any site (which
  // flipped between the region and its loop).
  std::vector<std::pair<uint32_t, std::vector<std::pair<size_t, double>>>> by_site;
  for (size_t i = 0; i < advice.steps.size(); ++i) {
    uint32_t site = model::kNone;
    uint64_t most = 0, all = 0;
    for (const auto& [s, w] : work_by_group[advice.steps[i].group]) {
      all += w;
      if (s >= too_often.size() || !too_often[s] || s >= l.labels.size()) continue;
      if (w > most || (w == most && s < site)) {
        site = s;
        most = w;
      }
    }
    if (site == model::kNone || most == 0 || 3 * most < all) continue;
    auto it = std::find_if(by_site.begin(), by_site.end(),
                           [&](const auto& entry) { return entry.first == site; });
    if (it == by_site.end()) it = by_site.insert(by_site.end(), {site, {}});
    it->second.push_back({i, static_cast<double>(most) / static_cast<double>(all)});
  }
  for (const auto& [site, steps] : by_site) {
    uint64_t entries = 0;
    for (const analysis::SiteRow& row : profile.sites)
      if (row.site == site) entries = row.count;
    std::string which;
    for (size_t k = 0; k < steps.size(); ++k)
      which += fmt::format("{}{} ({}, {:.0f}% of its work)",
                           k == 0                  ? ""
                           : k + 1 == steps.size() ? " and "
                                                   : ", ",
                           steps[k].first + 1, fl.label[advice.steps[steps[k].first].group],
                           100 * steps[k].second);
    notes.push_back(fmt::format(
        "step{} {} {} the own code of the parallel region at {}, entered {} times (starting and "
        "ending its team): what parallelizes it is creating the team once, one `#pragma omp "
        "parallel` around the loop that enters it with `#pragma omp for` inside",
        steps.size() == 1 ? "" : "s", which, steps.size() == 1 ? "runs" : "run",
        l.labels[site].site, entries));
  }
  return notes;
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
    r.options.target = report::parallelism_target(m);
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
