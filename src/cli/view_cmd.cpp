#include "cli/view_cmd.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>

#include "analysis/profile.hpp"
#include "analysis/sched.hpp"
#include "analysis/tasks.hpp"
#include "analysis/whatif.hpp"
#include "cli/advise_cmd.hpp"
#include "cli/command_support.hpp"
#include "cli/diff_cmd.hpp"
#include "cli/whatif_cmd.hpp"
#include "errors.hpp"
#include "load/progress.hpp"
#include "load/recording.hpp"
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
  size_t sites = 0;
  std::vector<std::string> taken;
  for (const analysis::SiteRow& row : p.sites) {
    if (m.sites[row.site].kind == model::SiteKind::Program) continue;
    if (sites >= kDefaultSites || (sites > 0 && row.critical_path_percent <= 0)) break;
    const std::string& label = l.labels[row.site].site;
    if (std::find(taken.begin(), taken.end(), label) != taken.end()) continue;
    taken.push_back(label);
    // Like `whatif --site`: every site at that location (of every kind but the program's).
    std::vector<uint32_t> matches;
    for (uint32_t x = 0; x < l.labels.size(); ++x)
      if (l.labels[x].site == label && m.sites[x].kind != model::SiteKind::Program)
        matches.push_back(x);
    units.push_back(analysis::unit_of_sites(m, matches, label));
    kinds.push_back("site");
    ++sites;
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
  const analysis::TaskProfile& tasks = diagnosed.tasks;
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

  // The recordings stay allocated: the process ends right after writing (write_and_exit's
  // reason), so their models are never freed.
  auto base = std::make_unique<Recording>();
  std::vector<report::ViewRun> runs;
  runs.push_back(view_run(opt.trace, *base, opt, factors, mode));
  if (!opt.compare.empty()) {
    auto other = std::make_unique<Recording>();
    runs.push_back(view_run(opt.compare, *other, opt, factors, mode));
    // One differential table for the pair, kept with the first run (the diff's base).
    runs[0].sections.push_back({"diff", diff_section(*base, *other, opt)});
    other.release();
  }
  base.release();
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
  std::_Exit(0);
}

}  // namespace tasklens::cli
