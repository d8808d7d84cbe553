#include "cli/advise_cmd.hpp"

#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "analysis/cutoff.hpp"
#include "analysis/diagnosis.hpp"
#include "analysis/profile.hpp"
#include "analysis/stream_advise.hpp"
#include "analysis/stream_cutoff.hpp"
#include "analysis/stream_robust.hpp"
#include "analysis/whatif.hpp"
#include "cli/command_support.hpp"
#include "errors.hpp"
#include "load/recording.hpp"
#include "load/timings.hpp"
#include "model/tee_sink.hpp"
#include "report/diagnosis_report.hpp"

namespace tasklens::cli {
namespace {

using load::Loaded;

// What a step's line cannot say (one profile of the recording for both):
//  - a step whose fragment is mostly the own code of a parallel region entered again and again
//    (report's region-entries: the team's start and end) is parallelized by entering the team
//    fewer times;
//  - a step whose fragment is mostly the time between two creations of a creator too slow for
//    its tasks (report's creation-bound) is shortened by fewer, larger tasks, not by splitting.
std::vector<std::string> step_notes(const load::Loaded& l, const report::FragmentLabels& fl,
                                    const analysis::Advice& advice, double target) {
  if (advice.steps.empty()) return {};  // (no profile to compute)
  const analysis::Profile profile = analysis::compute_profile(l.model);
  std::vector<std::string> notes = report::region_entry_notes(
      analysis::region_entry_steps(l.model, profile, fl.group_of, advice), advice, fl, l.labels);
  analysis::CreationBound creator;
  const auto steps =
      analysis::creation_steps(l.model, profile, fl.group_of, advice, target, &creator);
  for (std::string& note :
       report::creation_step_notes(steps, creator, advice, fl, l.labels, l.model))
    notes.push_back(std::move(note));
  return notes;
}

// advise's cut-off section covers the recursions with the most tasks: a program has one or two.
constexpr size_t kCutoffRecursions = 3;

constexpr const char* kOnePassWarning =
    "read in one pass per step (--stream, or its DAG does not fit in the memory): the advice as "
    "measured, without the robust span or the notes on regions entered again and again or on "
    "creators too slow for their tasks; the "
    "cut-off advice by depth alone (not the size cut-off or tasks made several calls at a time) "
    "and its leaves' median work within 1% below the exact one";
constexpr const char* kPassesWarning =
    "read in one pass per step (--stream, or its DAG does not fit in the memory), after one for "
    "the robust span: without the notes on regions entered again and again or on creators too "
    "slow for their tasks; the cut-off advice "
    "by depth alone (not the size cut-off or tasks made several calls at a time) and its leaves' "
    "median work within 1% below the exact one";

}  // namespace

// advise on a recording read in one pass per step (analysis/stream_advise.hpp).
std::string advise_streamed_text(const AdviseOptions& opt, report::Format format,
                                 const load::StreamClipping* clipping_decided) {
  // The target (from the threads recorded) and the tasking overhead (what `record` measured; a
  // recording without that measure has none here: the DAG's estimate needs every task strand)
  // come from the trace's records, before any pass.
  model::Model header;
  {
    const trace::TraceFile trace = trace::TraceFile::open(opt.trace, /*events_in_memory=*/false);
    header.thread_count = trace.stream_count();
    header.task_cost = model::task_cost_of(trace);
    if (header.task_cost > 0) header.task_cost_tasks = trace.task_cost().tasks;
  }
  report::AdviceReport r = advice_options(opt, header);
  // The robust span: its clipping decided first, then every pass reads through it.
  const load::StreamClipping clip =
      clipping_decided ? *clipping_decided
                       : load::clipping_in_passes(opt.trace, load::span_mode(opt.raw_span));
  std::optional<analysis::ClippingSink> clipping;
  auto clipped = [&](model::StrandSink& sink) -> model::StrandSink& {
    return analysis::through_clipping(clipping, sink, clip.clipping, clip.fragments);
  };
  std::optional<load::Streamed> first;  // the first pass's model, labels and trace
  report::FragmentLabels fl;            // the fragments' groups, from the first pass
  analysis::StreamAdvisePass::Result last;
  // Of the first pass: by group, its work and its work inside user regions (name_step_regions).
  std::vector<uint64_t> group_work;
  std::vector<std::vector<std::pair<uint32_t, uint64_t>>> group_regions;
  // The cut-off advice's first pass runs beside the first step's (its recursions and pacing).
  const report::SitesAsTheyCome* sites_now = nullptr;  // the current pass's
  const analysis::TaskSiteTest is_task_site = [&sites_now](uint32_t site) {
    return sites_now && sites_now->is_task(site);
  };
  analysis::CutoffScan scan(is_task_site);
  std::unique_ptr<model::TeeSink> tee;
  analysis::AdviseEvaluator e;
  e.first_in_ties = [&fl](uint32_t a, uint32_t b) { return report::label_first(fl, a, b); };
  size_t passes = 0;
  e.evaluate = [&](const std::vector<uint8_t>& chosen_groups) {
    ++passes;
    // The chosen groups' fragments: each pass numbers the fragments as the first did (the same
    // events in the same order).
    std::vector<uint8_t> chosen(fl.group_of.size(), 0);
    for (size_t f = 0; f < chosen.size(); ++f)
      chosen[f] = fl.group_of[f] < chosen_groups.size() && chosen_groups[fl.group_of[f]];
    std::unique_ptr<analysis::StreamAdvisePass> sink;
    load::Streamed st = load::read_in_one_pass(
        opt.trace, passes == 1 ? "advising on" : fmt::format("advising (step {}) on", passes - 1),
        [&](const report::SitesAsTheyCome& sites, const trace::TraceFile&) -> model::StrandSink& {
          sites_now = &sites;
          sink = std::make_unique<analysis::StreamAdvisePass>(
              chosen, analysis::advise_factor(r.options), r.options.mode, header.task_cost);
          if (passes > 1) return clipped(*sink);
          tee =
              std::make_unique<model::TeeSink>(std::vector<model::StrandSink*>{sink.get(), &scan});
          return clipped(*tee);
        });
    last = sink->finish();
    if (!first) {
      first = std::move(st);
      fl = report::group_fragments(first->fragment_labels, first->fragment_functions);
      group_work.assign(fl.label.size(), 0);
      group_regions.assign(fl.label.size(), {});
      for (size_t f = 0; f < last.fragment_work.size() && f < fl.group_of.size(); ++f) {
        group_work[fl.group_of[f]] += last.fragment_work[f];
        auto& in = group_regions[fl.group_of[f]];
        in.insert(in.end(), last.fragment_regions[f].begin(), last.fragment_regions[f].end());
      }
    } else {
      load::check_read_alike(*first, st);
    }
    // The fragments' figures, by group.
    analysis::AdviseEvaluation by_group = last.evaluation;
    by_group.critical.assign(fl.label.size(), 0);
    by_group.on_path.assign(fl.label.size(), 0);
    for (size_t f = 0; f < last.evaluation.critical.size() && f < fl.group_of.size(); ++f) {
      by_group.critical[fl.group_of[f]] += last.evaluation.critical[f];
      by_group.on_path[fl.group_of[f]] += last.evaluation.on_path[f];
    }
    return by_group;
  };
  e.burdened = [&last] { return last.burdened; };
  r.advice = analysis::advise_steps(e, analysis::estimate_task_overhead(header), r.options);
  analysis::name_step_regions(r.advice, group_regions, group_work);
  model::Model& m = first->model;
  const uint64_t per_task = r.advice.overhead.per_task;
  r.loss = analysis::run_loss(m, scan.first_start(), scan.last_end(), r.advice.work, r.advice.span,
                              per_task);
  load::Timings::global().lap("advise");
  // The cut-off advice: more passes (analysis/stream_cutoff.hpp).
  const analysis::StreamCutoffAdvice cutoffs = analysis::stream_advise_cutoffs(
      scan,
      [&](model::StrandSink& sink) {
        ++passes;
        const load::Streamed st =
            load::read_in_one_pass(opt.trace, "advising on its cut-off in",
                                   [&](const report::SitesAsTheyCome& sites,
                                       const trace::TraceFile&) -> model::StrandSink& {
                                     sites_now = &sites;
                                     return clipped(sink);
                                   });
        load::check_read_alike(*first, st);
      },
      is_task_site, kCutoffRecursions, r.options.target, per_task,
      analysis::cutoff_machine(r.loss, per_task));
  r.cutoffs = cutoffs.cutoffs;
  load::Timings::global().lap("cut-off");
  load::add_clipping_warning(m, clip.clipping);
  m.warnings.push_back(clip.robust ? kPassesWarning : kOnePassWarning);
  for (const std::string& why : cutoffs.not_evaluated)
    m.warnings.push_back("a recursion's cut-off advice needs its DAG in memory (" + why +
                         "): read the recording without --stream where its DAG fits in the memory");
  if (header.task_cost == 0)
    m.warnings.push_back(
        "the recording has no measured tasking overhead (recorded with --no-runtime-calibration, "
        "a metric other than time, or by an older tasklens): read in one pass, the burdened "
        "figures charge none and no step is judged too small; without --stream they charge an "
        "estimate from the shortest task strands");
  r.site_labels = &first->labels;
  report::RunInfo info = report::run_info(*first->trace);
  info.span_mode = clip.robust ? "robust" : "raw";
  warn_beside_csv(format, m.warnings);
  return report::render_advice(m, r, fl, info, format);
}

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
  if (opt.stream) write_and_exit(advise_streamed_text(opt, format));
  load::Loaded l;
  try {
    l = load::load(opt.trace, load::span_mode(opt.raw_span));
  } catch (const OutOfMemoryError&) {
    // Too large for the DAG: one pass per step, when the recording allows it.
    read_in_one_pass_instead(opt.trace, [&] { write_and_exit(advise_streamed_text(opt, format)); });
  }
  report::AdviceReport r = advice_options(opt, l.model);
  report::FragmentLabels fl = report::label_fragments(l.model, l.trace->modules(), l.labels);
  r.advice =
      analysis::advise(l.model, fl.group_of, static_cast<uint32_t>(fl.label.size()), r.options,
                       [&fl](uint32_t a, uint32_t b) { return report::label_first(fl, a, b); });
  r.notes = step_notes(l, fl, r.advice, r.options.target);
  r.loss = analysis::run_loss(l.model, r.advice.work, r.advice.span, r.advice.overhead.per_task);
  load::Timings::global().lap("advise");
  // The cut-off of the recursions with the most tasks (a program has one or two).
  std::vector<analysis::Recursion> recursions = analysis::find_recursions(l.model);
  if (recursions.size() > kCutoffRecursions) recursions.resize(kCutoffRecursions);
  for (const analysis::Recursion& rec : recursions)
    r.cutoffs.push_back(
        analysis::advise_cutoff(l.model, rec, r.options.target, r.advice.overhead.per_task, 2,
                                analysis::cutoff_machine(r.loss, r.advice.overhead.per_task)));
  r.site_labels = &l.labels;
  load::Timings::global().lap("cut-off");
  warn_beside_csv(format, l.model.warnings);
  write_and_exit(report::render_advice(l.model, r, fl, load::run_info_of(l), format));
}

}  // namespace tasklens::cli
