#include "cli/view_cmd.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>

#include "analysis/profile.hpp"
#include "analysis/sched.hpp"
#include "analysis/stream_profile.hpp"
#include "analysis/stream_robust.hpp"
#include "analysis/stream_sched.hpp"
#include "analysis/stream_structure.hpp"
#include "analysis/tasks.hpp"
#include "analysis/whatif.hpp"
#include "cli/advise_cmd.hpp"
#include "cli/command_support.hpp"
#include "cli/diff_cmd.hpp"
#include "cli/sched_cmd.hpp"
#include "cli/tasks_cmd.hpp"
#include "cli/whatif_cmd.hpp"
#include "errors.hpp"
#include "load/progress.hpp"
#include "load/recording.hpp"
#include "model/tee_sink.hpp"
#include "platform/platform.hpp"
#include "report/diagnosis_report.hpp"
#include "report/html_view.hpp"
#include "report/json_text.hpp"
#include "report/profile_report.hpp"
#include "report/sched_report.hpp"
#include "report/tasks_report.hpp"
#include "report/whatif_report.hpp"

namespace tasklens::cli {
namespace {

constexpr size_t kAll = std::numeric_limits<size_t>::max();
constexpr size_t kDefaultRegions = 6;  // default what-if units: the largest user regions ...
constexpr size_t kDefaultSites = 4;    // ... and the sites with most of the critical path

// The units named on the command line, as `tasklens whatif` takes them.
WhatIfOptions named_units(const ViewOptions& opt) {
  WhatIfOptions wi;
  wi.regions = opt.regions;
  wi.sites = opt.sites;
  wi.fragments = opt.fragments;
  for (const std::string& unit : opt.whatif) {
    const auto [kind, name] = classify_whatif_unit(unit);
    (kind == WhatIfUnitKind::Region ? wi.regions
     : kind == WhatIfUnitKind::Site ? wi.sites
                                    : wi.fragments)
        .push_back(name);
  }
  return wi;
}

// The locations of the default sites (below): by share of the critical path, the
// kDefaultSites largest with a share, or the first one when no site has any.
std::vector<std::string> default_site_labels(const model::Model& m, const analysis::Profile& p,
                                             const std::vector<report::SiteLabel>& labels) {
  std::vector<std::string> taken;
  for (const analysis::SiteRow& row : p.sites) {
    if (m.sites[row.site].kind == model::SiteKind::Program) continue;
    if (taken.size() >= kDefaultSites || (!taken.empty() && row.critical_path_percent <= 0)) break;
    const std::string& label = labels[row.site].site;
    if (std::find(taken.begin(), taken.end(), label) == taken.end()) taken.push_back(label);
  }
  return taken;
}

// The what-if units when none are named, so that the curves are never empty on a program with
// constructs: every user region (the kDefaultRegions with most work), and the construct sites
// that `whatif --list` shows first (by share of the critical path: the kDefaultSites largest
// with a share, or the first one when no site has any).
std::vector<analysis::Unit> default_units(const load::Loaded& l, const analysis::Profile& p,
                                          std::vector<std::string>& kinds) {
  const model::Model& m = l.model;
  std::vector<analysis::Unit> units;
  std::vector<analysis::Unit> regions;
  for (uint32_t r = 0; r < m.region_names.size(); ++r)
    regions.push_back(analysis::unit_of_region(m, r, "region " + m.region_names[r]));
  auto work = [](const analysis::Unit& u) {
    uint64_t w = 0;
    for (auto [s, x] : u.parts) w += x;
    return w;
  };
  std::stable_sort(
      regions.begin(), regions.end(),
      [&](const analysis::Unit& a, const analysis::Unit& b) { return work(a) > work(b); });
  for (size_t i = 0; i < regions.size() && i < kDefaultRegions; ++i) {
    units.push_back(std::move(regions[i]));
    kinds.push_back("region");
  }
  for (const std::string& label : default_site_labels(m, p, l.labels)) {
    // Like `whatif --site`: every site at that location (of every kind but the program's).
    std::vector<uint32_t> matches;
    for (uint32_t x = 0; x < l.labels.size(); ++x)
      if (l.labels[x].site == label && m.sites[x].kind != model::SiteKind::Program)
        matches.push_back(x);
    units.push_back(analysis::unit_of_sites(m, matches, label));
    kinds.push_back("site");
  }
  return units;
}

// One trace of the page, loaded once for its own views and for the differential one.
struct Recording {
  load::Loaded loaded;
  report::FragmentLabels fragments;
};

// Every section of one run (see report/html_view.hpp for the names).
report::ViewRun view_run(const std::string& path, Recording& rec, const ViewOptions& opt,
                         const std::vector<double>& factors, analysis::WhatIfMode mode) {
  rec.loaded = load::load(path, load::span_mode(opt.raw_span));
  const load::Loaded& l = rec.loaded;
  const model::Model& m = l.model;
  const report::RunInfo info = load::run_info_of(l);
  const double hz = l.trace->tsc_hz();
  report::ViewRun run;
  run.label = path;
  const analysis::Profile profile = analysis::compute_profile(m);
  const report::SpanAccount account = load::span_account(l, profile);
  // The profile section with its diagnosis, which heads the page (report's, from the same
  // inputs: the fragments' labels, the task types and the schedule, also the page's sections).
  load::Diagnosed diagnosed = load::diagnosis_inputs(l, /*full=*/true);
  const std::vector<report::DiagnosisItem> verdict = report::diagnosis_items(
      m, load::diagnose(l, profile, account, diagnosed),
      {.sites = &l.labels, .fragments = &diagnosed.fragments, .account = &account});
  report::ProfileExtras extras;
  extras.diagnosis = &verdict;
  extras.serial = report::serial_fragments(m, profile, diagnosed.fragments);
  run.sections.push_back(
      {"profile", report::render_profile(m, profile, l.labels, info, report::Format::Json, kAll,
                                         &account, &extras)});

  rec.fragments = std::move(diagnosed.fragments);
  const report::FragmentLabels& fl = rec.fragments;
  std::vector<std::string> kinds;
  const WhatIfOptions wi = named_units(opt);
  const bool named = !wi.regions.empty() || !wi.sites.empty() || !wi.fragments.empty();
  std::vector<analysis::Unit> units;
  try {
    units = named ? resolve_units(l, fl, wi, kinds) : default_units(l, profile, kinds);
  } catch (const UsageError& e) {
    throw UsageError(path + ": " + e.what());
  }
  report::WhatIfReport wr = whatif_report(m, units, std::move(kinds), factors, mode);
  run.sections.push_back(
      {"whatif", report::render_whatif(m, wr, l.labels, info, report::Format::Json, kAll)});

  report::AdviceReport ar = advice_options(AdviseOptions{}, m);
  ar.options.mode = mode;
  ar.advice =
      analysis::advise(m, fl.group_of, static_cast<uint32_t>(fl.label.size()), ar.options,
                       [&fl](uint32_t a, uint32_t b) { return report::label_first(fl, a, b); });
  run.sections.push_back({"advise", report::render_advice(m, ar, fl, info, report::Format::Json)});

  const analysis::Schedule& schedule = diagnosed.schedule;
  if (schedule.timed_strands == 0 || !schedule.timestamps) {
    run.sections.push_back(
        {"sched", report::unavailable_json("the trace has no timestamps (or no time elapsed): "
                                           "no schedule; record it again with tasklens record")});
  } else {
    report::SchedRun sr;
    sr.model = &m;
    sr.schedule = &schedule;
    sr.work = profile.work;
    sr.span = profile.span;
    sr.info = info;
    sr.tsc_hz = hz;
    sr.points = 400;
    run.sections.push_back({"sched", report::render_sched(sr, report::Format::Json)});
  }

  const analysis::TaskOptions topt = analysis::default_task_options(m, hz);
  // The task sizes as measured, as `tasks` and `view --stream` show them (what happened, when):
  // the clipped strands' works put back for this section, the diagnosis above having judged the
  // robust model's.
  analysis::TaskProfile measured_tasks;
  if (!l.clipping.strands.empty()) {
    model::Model& with_measured = rec.loaded.model;
    auto put = [&](bool measured) {
      for (const analysis::ClippedStrand& cs : l.clipping.strands)
        if (cs.strand < with_measured.strands.size())
          with_measured.strands[cs.strand].work = measured ? cs.work_raw : cs.work_clipped;
    };
    put(true);
    measured_tasks = analysis::compute_tasks(with_measured, topt);
    put(false);
  }
  const analysis::TaskProfile& tasks =
      l.clipping.strands.empty() ? diagnosed.tasks : measured_tasks;
  if (tasks.tasks == 0 || !tasks.timestamps) {
    run.sections.push_back(
        {"tasks", report::unavailable_json(
                      tasks.tasks == 0 ? "the trace has no tasks (no OpenMP task, taskloop or "
                                         "loop chunk, no oneTBB task)"
                                       : "the trace has no timestamps: no waiting times")});
  } else {
    report::TasksRun tr;
    tr.model = &m;
    tr.profile = &tasks;
    tr.labels = &l.labels;
    tr.options = topt;
    tr.info = info;
    tr.tsc_hz = hz;
    run.sections.push_back({"tasks", report::render_tasks(tr, report::Format::Json, kAll)});
  }

  report::StructureOptions so;
  so.max_nodes = opt.tree_nodes;
  so.max_slices = opt.slices;
  run.sections.push_back(
      {"structure", report::json_text(report::structure_json(m, profile, l.labels, hz, so))});
  return run;
}

// The "diff" section: `tasklens diff base other --format json` of the two runs (the same
// function, every row), or {"unavailable": why} when diff refuses them (two programs, no metric
// in common): the page still shows both runs.
std::string diff_section(const Recording& base, const Recording& other, const ViewOptions& opt) {
  DiffOptions dopt;
  dopt.traces = {opt.trace, opt.compare};
  dopt.format = "json";
  try {
    return compare_recordings(base.loaded, base.fragments, other.loaded, other.fragments, dopt,
                              report::Format::Json, kAll);
  } catch (const UsageError& e) {
    return report::unavailable_json(e.what());
  }
}

// ---- The page of recordings read in passes (view --stream, or when a DAG does not fit)

// The robust span's clipping decided first (load::clipping_in_passes; nothing with --raw-span),
// then two passes through TeeSinks, each behind a ClippingSink (every section computed on the
// strands as the DAG's robust model has them): the first for the profile, the timeline's
// bounds, the regions' work, the schedule and the tasks; the second, which needs the bounds, the
// critical path and the what-if units of the first, for the structure and the what-if curves.
// Then advise's own passes (one per step). Each section is the text of the command's one-pass
// form.
report::ViewRun view_run_streamed(const std::string& path, const ViewOptions& opt,
                                  const std::vector<double>& factors, analysis::WhatIfMode mode) {
  report::ViewRun run;
  run.label = path;
  const load::StreamClipping clip =
      load::clipping_in_passes(path, load::span_mode(opt.raw_span), /*measure_profile=*/true);
  // The first pass's sinks go once their figures are out (the schedule's buffers above all).
  load::Streamed st;
  analysis::Profile profile;
  std::vector<std::pair<uint64_t, uint64_t>> path_weights;
  analysis::SpanFigures measured;
  analysis::TimelineBounds bounds;
  std::vector<uint64_t> region_work;
  std::string sched, tasks_text;
  {
    analysis::StreamProfile profile_sink(analysis::StreamProfile::kSitesAsTheyCome);
    analysis::StreamTimelineBounds bounds_sink;
    analysis::StreamRegionWork regions_sink;
    analysis::StreamSchedule sched_sink;
    TasksPass tasks(TasksOptions{}.bins);
    std::optional<model::TeeSink> first;
    std::optional<analysis::ClippingSink> clipping;
    st = load::read_in_one_pass(
        path, "finding the critical path of",
        [&](const report::SitesAsTheyCome&, const trace::TraceFile& trace) -> model::StrandSink& {
          first.emplace(std::vector<model::StrandSink*>{&profile_sink, &bounds_sink, &regions_sink,
                                                        &sched_sink, &tasks.sink(trace)});
          return analysis::through_clipping(clipping, *first, clip.clipping, clip.fragments);
        },
        analysis::StreamSchedule::kFixedBytes);
    profile = profile_sink.finish(false, nullptr, &path_weights);
    // (With strands clipped, the figures as measured come from the census's pass.)
    measured = clip.clipping.strands.empty()
                   ? analysis::SpanFigures{profile.work, profile.span, profile.parallelism}
                   : clip.measured;
    bounds = bounds_sink.finish();
    region_work = regions_sink.work();
    SchedOptions so;
    so.trace = path;
    so.points = 400;
    try {
      sched = sched_text_of(sched_sink, st, so, report::Format::Json);
    } catch (const UsageError& e) {
      sched = report::unavailable_json(e.what());
    }
    try {
      tasks_text = tasks_text_of(tasks, st, report::Format::Json);
    } catch (const UsageError& e) {
      tasks_text = report::unavailable_json(e.what());
    }
  }
  {
    model::Model m = st.model;  // (no DAG: its sites and facts, with this reading's warning)
    load::add_clipping_warning(m, clip.clipping);
    m.warnings.push_back(
        clip.robust ? "read in passes (view --stream, or its DAG does not fit in the memory): "
                      "without the diagnosis; the construct tree without its groups' spans"
                    : "read in passes (view --stream, or its DAG does not fit in the memory): the "
                      "figures as measured, without the robust span or the diagnosis; the "
                      "construct tree without its groups' spans");
    report::RunInfo info = report::run_info(*st.trace);
    info.span_mode = clip.robust ? "robust" : "raw";
    report::SpanAccount account;
    account.clipping = &clip.clipping;
    account.measured = measured;
    for (uint32_t f : clip.fragments)
      account.fragments.push_back(f < st.fragment_labels.size() ? st.fragment_labels[f] : "");
    run.sections.push_back(
        {"profile", report::render_profile(m, profile, st.labels, info, report::Format::Json, kAll,
                                           &account)});
  }

  // What-if: the units named, else regions by work and sites by their share of the path, as
  // default_units picks them (sites by their labels: whatif --site takes every site there).
  WhatIfOptions wi = named_units(opt);
  wi.trace = path;
  if (wi.regions.empty() && wi.sites.empty() && wi.fragments.empty()) {
    std::vector<std::pair<uint64_t, uint32_t>> regions;
    for (uint32_t r = 0; r < st.model.region_names.size(); ++r)
      regions.emplace_back(r < region_work.size() ? region_work[r] : 0, r);
    std::stable_sort(regions.begin(), regions.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (size_t i = 0; i < regions.size() && i < kDefaultRegions; ++i)
      wi.regions.push_back(st.model.region_names[regions[i].second]);
    wi.sites = default_site_labels(st.model, profile, st.labels);
  }
  const bool units = !wi.regions.empty() || !wi.sites.empty() || !wi.fragments.empty();
  std::unique_ptr<WhatIfPass> whatif;
  try {
    if (units) whatif = std::make_unique<WhatIfPass>(wi, mode, factors);
  } catch (const UsageError& e) {
    throw UsageError(path + ": " + e.what());
  }

  // The second pass: the structure (with the bounds and the critical path of the first) and the
  // what-if curves.
  report::StructureOptions sto;
  sto.max_nodes = opt.tree_nodes;
  sto.max_slices = opt.slices;
  analysis::StreamStructure structure(bounds, sto.max_slices, sto.max_nodes,
                                      std::move(path_weights));
  std::optional<model::TeeSink> second;
  std::optional<analysis::ClippingSink> clipping;
  load::Streamed again = load::read_in_one_pass(
      path, "drawing the structure and the what-ifs of",
      [&](const report::SitesAsTheyCome& sites, const trace::TraceFile&) -> model::StrandSink& {
        std::vector<model::StrandSink*> sinks = {&structure};
        if (whatif) sinks.push_back(&whatif->sink(sites));
        second.emplace(std::move(sinks));
        return analysis::through_clipping(clipping, *second, clip.clipping, clip.fragments);
      });
  load::check_read_alike(st, again);
  if (clip.robust) {  // (what the what-if section says of its reading)
    again.robust = true;
    again.clipping = clip.clipping;
    again.clipped_fragments = clip.fragments;
    load::add_clipping_warning(again.model, clip.clipping);
  }
  try {
    run.sections.push_back(
        {"whatif", whatif ? whatif->text(again, report::Format::Json, kAll)
                          : report::unavailable_json(
                                "no what-if unit: the run has no construct site or user region")});
  } catch (const UsageError& e) {
    throw UsageError(path + ": " + e.what());
  }
  AdviseOptions ao;
  ao.trace = path;
  ao.mode = opt.mode;
  ao.raw_span = opt.raw_span;
  run.sections.push_back({"advise", advise_streamed_text(ao, report::Format::Json, &clip)});
  run.sections.push_back({"sched", std::move(sched)});
  run.sections.push_back({"tasks", std::move(tasks_text)});

  std::vector<uint32_t> listed_of;
  const std::vector<analysis::ConstructTrie::Aggregate> aggs =
      structure.trie().aggregates(sto.max_nodes, listed_of);
  report::StructureInput in = report::one_pass_structure_input(
      st.model, st.labels, st.trace->tsc_hz(), profile, structure, aggs, listed_of, bounds);
  run.sections.push_back({"structure", report::json_text(report::structure_json_of(in, sto))});
  return run;
}

void write_page(const ViewOptions& opt, std::vector<report::ViewRun>& runs,
                platform::OutputFile& out);

[[noreturn]] void view_streamed(const ViewOptions& opt, const std::vector<double>& factors,
                                analysis::WhatIfMode mode, platform::OutputFile& out) {
  std::vector<report::ViewRun> runs;
  runs.push_back(view_run_streamed(opt.trace, opt, factors, mode));
  if (!opt.compare.empty()) {
    runs.push_back(view_run_streamed(opt.compare, opt, factors, mode));
    DiffOptions dopt;
    dopt.traces = {opt.trace, opt.compare};
    dopt.format = "json";
    dopt.raw_span = opt.raw_span;
    std::string diff;
    try {
      diff = diff_in_passes_text(dopt, report::Format::Json, kAll);
    } catch (const UsageError& e) {
      diff = report::unavailable_json(e.what());
    }
    runs[0].sections.push_back({"diff", std::move(diff)});
  }
  write_page(opt, runs, out);
  std::_Exit(0);
}

// Writes the page (to the file, or standard output) and says so.
void write_page(const ViewOptions& opt, std::vector<report::ViewRun>& runs,
                platform::OutputFile& out) {
  std::string title = "tasklens: " + report::basename_of(opt.trace);
  if (!opt.compare.empty()) title += " vs " + report::basename_of(opt.compare);
  const std::string page = report::render_html(runs, title);
  if (out.to_stdout()) write_and_exit(page);

  // A short write is not committed: the temporary goes, an existing file stays as it was.
  const bool ok =
      std::fwrite(page.data(), 1, page.size(), out.file()) == page.size() && out.commit();
  if (!ok)
    throw UsageError(fmt::format("could not write all of {} ({}); choose another file with -o",
                                 opt.output, errno ? std::strerror(errno) : "disk full?"));
  load::Progress::global().stop();
  fmt::print(stderr, "tasklens: wrote {} ({} KB); open it in a browser\n", opt.output,
             (page.size() + 1023) / 1024);
  print_timings("view");
  std::fflush(stderr);
}

}  // namespace

void run_view(const ViewOptions& opt) {
  const analysis::WhatIfMode mode = opt.mode == "parallelize" ? analysis::WhatIfMode::Parallelize
                                    : opt.mode == "speedup"
                                        ? analysis::WhatIfMode::Speedup
                                        : throw UsageError("--mode " + opt.mode +
                                                           ": unknown mode; use parallelize or "
                                                           "speedup");
  const std::vector<double> factors = parse_factors(opt.factors);
  if (opt.tree_nodes < 1 || opt.tree_nodes > 1000000)
    throw UsageError(
        fmt::format("--tree-nodes {}: use a number from 1 to 1000000", opt.tree_nodes));
  if (opt.slices < 1 || opt.slices > 1000000)
    throw UsageError(fmt::format("--slices {}: use a number from 1 to 1000000", opt.slices));
  if (opt.output.empty()) throw UsageError("-o: give a file name (or - for standard output)");
  // Opened before the traces are read: a path that cannot be written is reported at once.
  platform::OutputFile out(opt.output, "tasklens.html");

  if (opt.stream) view_streamed(opt, factors, mode, out);
  // The recordings stay allocated: the process ends right after writing (write_and_exit's
  // reason), so their models are never freed.
  auto base = std::make_unique<Recording>();
  std::vector<report::ViewRun> runs;
  try {
    runs.push_back(view_run(opt.trace, *base, opt, factors, mode));
    if (!opt.compare.empty()) {
      load::check_models_fit_together({opt.trace, opt.compare});
      auto other = std::make_unique<Recording>();
      runs.push_back(view_run(opt.compare, *other, opt, factors, mode));
      // One differential table for the pair, kept with the first run (the diff's base).
      runs[0].sections.push_back({"diff", diff_section(*base, *other, opt)});
      other.release();
    }
  } catch (const OutOfMemoryError&) {
    // Too large for the DAGs: the page from passes over the recordings, when they allow it.
    base.reset();
    runs.clear();
    read_in_one_pass_instead(opt.compare.empty() ? opt.trace : opt.trace + " and " + opt.compare,
                             [&] { view_streamed(opt, factors, mode, out); });
  }
  base.release();
  write_page(opt, runs, out);
  std::_Exit(0);
}

}  // namespace tasklens::cli
