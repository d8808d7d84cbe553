#include "cli/analyze.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>
#include <unordered_map>

#include "analysis/algebra.hpp"
#include "analysis/cutoff.hpp"
#include "analysis/profile.hpp"
#include "analysis/whatif.hpp"
#include "cli/errors.hpp"
#include "cli/huge_blocks.hpp"
#include "cli/memory_budget.hpp"
#include "cli/timings.hpp"
#include "model/builder.hpp"
#include "report/diagnosis.hpp"
#include "report/printable.hpp"
#include "report/profile_report.hpp"
#include "report/whatif_report.hpp"
#include "trace/reader.hpp"

namespace tasklens::cli {

report::Format parse_format(const std::string& f) {
  if (f == "table") return report::Format::Table;
  if (f == "csv") return report::Format::Csv;
  if (f == "json") return report::Format::Json;
  throw UsageError("--format " + f + ": unknown format; use table, csv or json");
}

void print_timings(const char* last_phase) {
  Timings& timings = Timings::global();
  if (!timings.enabled()) return;
  timings.lap(last_phase);
  fmt::print(stderr, "tasklens: timings: {}\n", timings.summary());
}

// Writes a command's output and ends the process without tearing down its data: a model of
// millions of strands takes a tenth of a second or more to free (munmap of hundreds of MB),
// which is pure waste at exit. A failed write (closed pipe, full disk) is an error.
void write_and_exit(const std::string& out) {
  // The command's analysis, unless it timed it on its own, and its rendering.
  Timings::global().lap("render");
  bool ok = std::fwrite(out.data(), 1, out.size(), stdout) == out.size();
  ok = std::fflush(stdout) == 0 && ok;
  print_timings("write");
  if (!ok) std::fputs("tasklens: could not write the report to standard output\n", stderr);
  std::fflush(stderr);
  std::_Exit(ok ? 0 : 1);
}

ModelSettings& model_settings() {
  static ModelSettings settings;
  return settings;
}

SpanMode span_mode(bool raw_span) { return raw_span ? SpanMode::Raw : SpanMode::Robust; }

report::RunInfo run_info_of(const Loaded& l) {
  report::RunInfo info = report::run_info(*l.trace);
  info.span_mode = l.robust ? "robust" : "raw";
  return info;
}

Loaded load(const std::string& path, SpanMode mode) {
  Loaded l;
  Timings& timings = Timings::global();
  l.trace = std::make_unique<trace::TraceFile>(trace::TraceFile::open(path));
  check_model_fits(*l.trace, path);  // before the kernel's out-of-memory killer would
  timings.lap("open");
  l.model = model::build_model(*l.trace, {.huge_pages = big_blocks_in_huge_pages(),
                                          .blocked_as_work = model_settings().blocked_as_work,
                                          .keep_slow_faults = model_settings().keep_slow_faults,
                                          .keep_runtime_cost = model_settings().keep_runtime_cost});
  timings.lap("model");
  l.labels = report::label_sites(l.model, l.trace->modules());
  report::merge_sites_by_location(l.model, l.labels);
  // Without the wrappers a oneTBB algorithm's subranges are invisible (no chunk events). (The
  // nodes are walked only when a site is such an algorithm's: there are millions.)
  auto tbb_algorithm = [](model::SiteKind k) {
    return k == model::SiteKind::ParallelFor || k == model::SiteKind::ParallelReduce ||
           k == model::SiteKind::ParallelSort || k == model::SiteKind::TbbAlgorithm;
  };
  bool tbb_algorithms = false, tbb_chunks = false;
  const bool any_tbb_algorithm =
      std::any_of(l.model.sites.begin(), l.model.sites.end(),
                  [&](const model::Site& s) { return tbb_algorithm(s.kind); });
  const size_t walked = any_tbb_algorithm ? l.model.nodes.size() : 0;
  for (size_t v = 0; v < walked; ++v) {
    const model::Node& n = l.model.nodes[v];
    if (n.kind == model::NodeKind::Chunk && n.parent != model::kNone &&
        l.model.nodes[n.parent].kind == model::NodeKind::Task)
      tbb_chunks = true;
    if (n.site == model::kNone || n.site >= l.model.sites.size()) continue;
    tbb_algorithms |= tbb_algorithm(l.model.sites[n.site].kind);
  }
  if (tbb_algorithms && !tbb_chunks)
    l.model.warnings.push_back(
        "oneTBB algorithms were recorded without include/tasklens/tbb.h: the subranges one task "
        "ran count as one strand, so a loop's parallelism is at most its number of tasks (the "
        "wrappers give the logical one)");
  if (size_t n = report::attribute_library_sites(l.model, l.labels))
    l.model.warnings.push_back(fmt::format(
        "{} call site{} inside a library's code (its headers: oneTBB's range splits, calls into "
        "oneTBB or std::thread the compiler did not inline; or a shared library without line "
        "information) count for the construct around them",
        n, n == 1 ? "" : "s"));
  // Region names are the program's text: shown (and selected with --region) as printable.
  for (std::string& name : l.model.region_names) name = report::printable(name);
  timings.lap("symbols");
  if (mode == SpanMode::Robust) {
    l.clipping = analysis::clip_outliers(l.model);
    l.robust = l.clipping.tested;
    if (size_t n = l.clipping.strands.size())
      l.model.warnings.push_back(fmt::format(
          "{} strand{} held far more work than the rest of {} code fragment (over 20 times "
          "the fragment's 99th percentile, or 5 times while another thread's strand was "
          "stretched too: a paused machine, page faults, interrupts): counted at the "
          "fragment's median, {} of work in all, so that one disturbance does not decide the "
          "critical path (--raw-span counts {} as measured)",
          n, n == 1 ? "" : "s", n == 1 ? "its" : "their",
          report::format_work(l.model, l.clipping.clipped_work), n == 1 ? "it" : "them"));
    timings.lap("robust");
  }
  return l;
}

namespace {

analysis::WhatIfMode parse_mode(const std::string& mode) {
  if (mode == "parallelize") return analysis::WhatIfMode::Parallelize;
  if (mode == "speedup") return analysis::WhatIfMode::Speedup;
  throw UsageError("--mode " + mode + ": unknown mode; use parallelize or speedup");
}

std::string base(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// "NAME=FACTOR" -> (NAME, FACTOR); without a factor suffix: (text, 0).
std::pair<std::string, double> split_unit(const std::string& text, const std::string& option) {
  size_t eq = text.rfind('=');
  if (eq == std::string::npos || eq == 0) return {text, 0.0};
  return {text.substr(0, eq), parse_factor(text.substr(eq + 1), option + " " + text)};
}

// "dir/fib.c:12" -> "fib.c:12": labels name files by their base name.
std::string normalize_location(const std::string& spec) {
  size_t colon = spec.rfind(':');
  if (colon == std::string::npos) return spec;
  // A fragment "a.c:3-b.c:9" has two files: normalize both halves.
  size_t dash = spec.find('-', spec.find(':'));
  if (dash != std::string::npos && spec.find(':', dash) != std::string::npos)
    return normalize_location(spec.substr(0, dash)) + "-" +
           normalize_location(spec.substr(dash + 1));
  size_t first = spec.find(':');
  return base(spec.substr(0, first)) + spec.substr(first);
}

std::string list_units(const Loaded& l, const report::FragmentLabels& fl, size_t top) {
  const model::Model& m = l.model;
  analysis::Profile p = analysis::compute_profile(m);
  std::vector<uint8_t> on_path(m.strands.size(), 0);
  for (uint32_t s : p.critical_path) on_path[s] = 1;
  std::string out =
      fmt::format("Units for --region, --site and --fragment in {}:\n\n", l.trace->path());
  out += "regions (TASKLENS_REGION_BEGIN/END):\n";
  if (m.region_names.empty()) out += "  (none recorded)\n";
  for (uint32_t r = 0; r < m.region_names.size(); ++r) {
    analysis::Unit u = analysis::unit_of_region(m, r, m.region_names[r]);
    uint64_t work = 0, crit = 0;
    for (auto [s, w] : u.parts) {
      work += w;
      if (on_path[s]) crit += analysis::path_weight(m, s, w);
    }
    out += fmt::format("  {:<30} work {:>12}  crit.% {:5.1f}\n", m.region_names[r],
                       report::format_work(m, work), p.span ? 100.0 * crit / p.span : 0.0);
  }
  out += "\nsites (as in `tasklens report`):\n";
  for (const analysis::SiteRow& r : p.sites) {
    if (m.sites[r.site].kind == model::SiteKind::Program) continue;
    out += fmt::format("  {:<30} {:<9} work {:>12}  crit.% {:5.1f}  {}\n", l.labels[r.site].site,
                       model::to_string(m.sites[r.site].kind), report::format_work(m, r.work),
                       r.critical_path_percent, l.labels[r.site].function);
  }
  // Fragments by their work on the critical path, then by work.
  std::vector<uint64_t> work(fl.label.size()), crit(fl.label.size());
  for (uint32_t s = 0; s < m.strands.size(); ++s) {
    uint32_t g = fl.group_of[m.strands[s].fragment];
    work[g] += m.strands[s].work;
    if (on_path[s]) crit[g] += analysis::path_weight(m, s, m.strands[s].work);
  }
  std::vector<uint32_t> order(fl.label.size());
  for (uint32_t g = 0; g < order.size(); ++g) order[g] = g;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return crit[a] != crit[b] ? crit[a] > crit[b] : work[a] > work[b];
  });
  size_t rows = top ? top : 20;
  out += "\nfragments (code between two runtime events), by share of the critical path:\n";
  for (size_t i = 0; i < order.size() && i < rows; ++i) {
    uint32_t g = order[i];
    out += fmt::format("  {:<30} work {:>12}  crit.% {:5.1f}  {}\n", fl.label[g],
                       report::format_work(m, work[g]), p.span ? 100.0 * crit[g] / p.span : 0.0,
                       fl.function[g]);
  }
  if (order.size() > rows)
    out += fmt::format("  ({} more; --top {} shows all)\n", order.size() - rows, order.size());
  return out;
}

}  // namespace

double parse_factor(const std::string& text, const std::string& what) {
  if (text == "inf" || text == "infinity") return analysis::kInfiniteFactor;
  size_t used = 0;
  double k = 0;
  try {
    k = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !std::isfinite(k))
    throw UsageError(what + ": '" + text + "' is not a factor; use a number such as 4 or inf");
  if (k < 1) throw UsageError(what + ": a factor must be 1 or more (or inf), not " + text);
  return k;
}

report::SpanAccount span_account(const Loaded& l, const analysis::Profile& p,
                                 std::future<uint64_t>* measured_span) {
  report::SpanAccount a;
  a.clipping = &l.clipping;
  a.measured = {p.work, p.span, p.parallelism};
  // Blocked time of the critical path's strands, per fragment (few strands block).
  if (!l.model.blocked_work.empty()) {
    std::map<uint32_t, uint64_t> by_fragment;
    for (uint32_t s : p.critical_path) {
      auto it = std::lower_bound(
          l.model.blocked_work.begin(), l.model.blocked_work.end(), s,
          [](const model::StrandBlocked& b, uint32_t strand) { return b.strand < strand; });
      if (it != l.model.blocked_work.end() && it->strand == s)
        by_fragment[l.model.strands[s].fragment] += it->ticks;
    }
    std::vector<std::pair<uint64_t, uint32_t>> order;
    for (auto [fragment, ticks] : by_fragment) order.emplace_back(ticks, fragment);
    std::sort(order.rbegin(), order.rend());
    std::vector<uint32_t> fragments;
    for (auto [ticks, fragment] : order) fragments.push_back(fragment);
    const std::vector<std::string> names =
        report::label_some_fragments(l.model, l.trace->modules(), fragments);
    for (size_t i = 0; i < order.size(); ++i)
      a.blocked_critical.push_back({i < names.size() ? names[i] : std::string(), order[i].first});
  }
  if (l.clipping.strands.empty()) return a;
  a.measured.work = p.work + l.clipping.clipped_work;
  a.measured.span =
      measured_span ? measured_span->get() : analysis::measured_span(l.model, l.clipping);
  a.measured.parallelism = analysis::parallelism_of(a.measured.work, a.measured.span);
  std::vector<uint32_t> fragments;
  for (const analysis::ClippedStrand& c : l.clipping.strands)
    fragments.push_back(l.model.strands[c.strand].fragment);
  a.fragments = report::label_some_fragments(l.model, l.trace->modules(), fragments);
  return a;
}

analysis::DiffInput diff_input(const Loaded& l, const report::FragmentLabels& fragments) {
  analysis::DiffInput in;
  in.model = &l.model;
  for (const report::SiteLabel& label : l.labels) in.site_names.push_back(label.site);
  in.fragment_group = fragments.group_of;
  in.fragment_names = fragments.label;
  return in;
}

// report --base: base's and this recording's units compared (analysis/diff.hpp), refused like
// `diff` refuses two programs or two recordings without a metric in common.
analysis::Diff compare_with_base(const Loaded& base, const report::FragmentLabels& base_fragments,
                                 const Loaded& other, const report::FragmentLabels& fragments,
                                 const std::string& base_path, const std::string& other_path) {
  if (analysis::common_metrics(base.model, other.model).empty())
    throw UsageError(
        fmt::format("--base {}: it measures another metric than {}; record both with "
                    "the same --metric",
                    base_path, other_path));
  analysis::Diff d =
      analysis::compute_diff(diff_input(base, base_fragments), diff_input(other, fragments));
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

Diagnosed diagnosis_inputs(const Loaded& l, bool full) {
  Diagnosed d;
  d.fragments = report::label_fragments(l.model, l.trace->modules(), l.labels);
  const analysis::TaskOptions options = analysis::default_task_options(l.model, l.trace->tsc_hz());
  d.tiny_size = options.tiny_size;
  d.task_sizes = analysis::task_sizes(l.model, options.tiny_size);
  if (full) {
    d.tasks = analysis::compute_tasks(l.model, options);
    d.schedule = analysis::compute_schedule(l.model);
  }
  return d;
}

std::vector<report::DiagnosisItem> diagnose(const Loaded& l, const analysis::Profile& p,
                                            const report::SpanAccount& account, const Diagnosed& d,
                                            const analysis::Diff* base) {
  report::DiagnosisInput in;
  in.model = &l.model;
  in.profile = &p;
  in.labels = &l.labels;
  in.fragments = &d.fragments;
  in.account = &account;
  in.task_sizes = &d.task_sizes;
  in.tiny_size = d.tiny_size;
  in.schedule = d.schedule.timestamps ? &d.schedule : nullptr;
  in.base = base;
  return report::diagnose(in);
}

void run_report(const ReportOptions& opt) {
  report::Format format = parse_format(opt.format);
  Loaded l = load(opt.trace, span_mode(opt.raw_span));
  // The span as measured is one more longest path: beside the profile, on the other core.
  std::future<uint64_t> measured;
  if (!l.clipping.strands.empty())
    measured = std::async(std::launch::async,
                          [&l] { return analysis::measured_span(l.model, l.clipping); });
  // The diagnosis's inputs that do not need the profile: beside it, on the other core.
  std::future<Diagnosed> inputs;
  if (format != report::Format::Csv)
    inputs = std::async(std::launch::async, [&l] { return diagnosis_inputs(l); });
  analysis::Profile p = analysis::compute_profile(l.model);
  const report::SpanAccount account = span_account(l, p, measured.valid() ? &measured : nullptr);
  Timings::global().lap("profile");
  std::vector<report::DiagnosisItem> verdict;
  report::ProfileExtras extras;
  extras.diagnosis = &verdict;
  if (inputs.valid()) {
    const Diagnosed d = inputs.get();
    // --base: where work grows from the base recording to this one (diff's units and costs).
    std::optional<analysis::Diff> comparison;
    Loaded base;
    report::FragmentLabels base_fragments;
    if (!opt.base.empty()) {
      base = load(opt.base, span_mode(opt.raw_span));
      base_fragments = report::label_fragments(base.model, base.trace->modules(), base.labels);
      comparison = compare_with_base(base, base_fragments, l, d.fragments, opt.base, opt.trace);
    }
    verdict = diagnose(l, p, account, d, comparison ? &*comparison : nullptr);
    extras.serial = report::serial_fragments(l.model, p, d.fragments);
    Timings::global().lap("diagnosis");
  }
  size_t top = opt.top                           ? opt.top
               : format == report::Format::Table ? 20
                                                 : std::numeric_limits<size_t>::max();
  write_and_exit(
      report::render_profile(l.model, p, l.labels, run_info_of(l), format, top, &account, &extras));
}

std::vector<double> parse_factors(const std::string& list) {
  std::vector<double> factors;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    factors.push_back(parse_factor(list.substr(pos, comma - pos), "--factors"));
    pos = comma + 1;
  }
  return factors;
}

std::vector<analysis::Unit> resolve_units(const Loaded& l, const report::FragmentLabels& fl,
                                          const WhatIfOptions& opt,
                                          std::vector<std::string>& kinds) {
  const model::Model& m = l.model;
  std::vector<analysis::Unit> units;
  // A unit named twice (`--site X=4 --site X`) would have two factors; which one the user meant
  // cannot be guessed.
  std::set<std::string> named;
  auto once = [&](const std::string& option, const std::string& name) {
    if (!named.insert(option + " " + name).second)
      throw UsageError(option + " " + name + " is given twice; name each unit once, with its " +
                       "factor if it has one (" + option + " " + name + "=4)");
  };
  for (const std::string& spec : opt.regions) {
    // A region's name may hold '=' itself ("phase=2"): a spec that names a region whole has no
    // factor; otherwise the text after the last '=' is the factor.
    auto [name, k] =
        std::find(m.region_names.begin(), m.region_names.end(), spec) != m.region_names.end()
            ? std::pair<std::string, double>{spec, 0.0}
            : split_unit(spec, "--region");
    once("--region", name);
    auto it = std::find(m.region_names.begin(), m.region_names.end(), name);
    if (it == m.region_names.end())
      throw UsageError(
          m.region_names.empty()
              ? "--region " + name +
                    ": the trace has no regions; mark them with TASKLENS_REGION_BEGIN/END "
                    "(include/tasklens/tasklens.h)"
              : "--region " + name +
                    ": no region of that name; `tasklens whatif --list` "
                    "shows the recorded ones");
    units.push_back(analysis::unit_of_region(m, static_cast<uint32_t>(it - m.region_names.begin()),
                                             "region " + name));
    units.back().factor = k;
    kinds.push_back("region");
  }
  for (const std::string& spec : opt.sites) {
    auto [name, k] = split_unit(spec, "--site");
    std::string want = normalize_location(name);
    once("--site", want);
    std::vector<uint32_t> matches;
    for (uint32_t x = 0; x < l.labels.size(); ++x)
      if (l.labels[x].site == want && m.sites[x].kind != model::SiteKind::Program)
        matches.push_back(x);
    if (matches.empty())
      throw UsageError("--site " + name +
                       ": no construct site there; `tasklens report` lists the sites");
    units.push_back(analysis::unit_of_sites(m, matches, want));
    units.back().factor = k;
    kinds.push_back("site");
  }
  for (const std::string& spec : opt.fragments) {
    auto [name, k] = split_unit(spec, "--fragment");
    std::string want = normalize_location(name);
    once("--fragment", want);
    std::vector<uint32_t> matches;
    for (uint32_t f = 0; f < fl.group_of.size(); ++f)
      if (fl.label[fl.group_of[f]] == want) matches.push_back(f);
    if (matches.empty())
      throw UsageError("--fragment " + name +
                       ": no code fragment file:L1-L2 like that; `tasklens whatif --list` shows "
                       "them");
    units.push_back(analysis::unit_of_fragments(m, matches, want));
    units.back().factor = k;
    kinds.push_back("fragment");
  }
  return units;
}

report::WhatIfReport whatif_report(const model::Model& m, const std::vector<analysis::Unit>& units,
                                   std::vector<std::string> kinds, std::vector<double> factors,
                                   analysis::WhatIfMode mode) {
  report::WhatIfReport r;
  r.unit_kinds = std::move(kinds);
  r.mode = mode;
  r.factors = std::move(factors);
  r.before = analysis::compute_profile(m);
  r.curves = analysis::whatif_curves(m, units, r.factors, mode);
  r.after_factor = 0;
  for (double k : r.factors)
    if (!std::isinf(k)) r.after_factor = std::max(r.after_factor, k);
  if (r.after_factor == 0) r.after_factor = analysis::kInfiniteFactor;
  std::vector<const analysis::Unit*> all;
  for (const analysis::Unit& u : units) all.push_back(&u);
  analysis::Weights w = analysis::apply_units(m, all, r.after_factor, mode);
  r.after = analysis::compute_profile(m, &w);
  return r;
}

void run_whatif(const WhatIfOptions& opt) {
  report::Format format = parse_format(opt.format);
  analysis::WhatIfMode mode = parse_mode(opt.mode);
  std::vector<double> factors = parse_factors(opt.factors);
  if (!opt.list && opt.regions.empty() && opt.sites.empty() && opt.fragments.empty())
    throw UsageError(
        "whatif: name at least one unit with --region, --site or --fragment; "
        "`tasklens whatif --list` shows them");
  Loaded l = load(opt.trace, span_mode(opt.raw_span));
  const model::Model& m = l.model;
  report::FragmentLabels fl = report::label_fragments(m, l.trace->modules(), l.labels);
  if (opt.list) write_and_exit(list_units(l, fl, opt.top));

  std::vector<std::string> kinds;
  std::vector<analysis::Unit> units = resolve_units(l, fl, opt, kinds);
  report::WhatIfReport r = whatif_report(m, units, std::move(kinds), factors, mode);
  size_t top = opt.top                           ? opt.top
               : format == report::Format::Table ? 20
                                                 : std::numeric_limits<size_t>::max();
  write_and_exit(report::render_whatif(m, r, l.labels, run_info_of(l), format, top));
}

// A step whose fragment is mostly the own code of a parallel region entered again and again
// (report's region-entries: the team's start and end) is parallelized by entering the team
// fewer times, which the step's line cannot say.
std::vector<std::string> entered_region_notes(const Loaded& l, const report::FragmentLabels& fl,
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

// advise's cut-off section covers the recursions with the most tasks: a program has one or two.
constexpr size_t kCutoffRecursions = 3;

void run_advise(const AdviseOptions& opt) {
  report::Format format = parse_format(opt.format);
  if (opt.target < 0) throw UsageError("--target must be positive");  // before a long read
  Loaded l = load(opt.trace, span_mode(opt.raw_span));
  report::AdviceReport r = advice_options(opt, l.model);
  report::FragmentLabels fl = report::label_fragments(l.model, l.trace->modules(), l.labels);
  r.advice =
      analysis::advise(l.model, fl.group_of, static_cast<uint32_t>(fl.label.size()), r.options);
  r.notes = entered_region_notes(l, fl, r.advice);
  Timings::global().lap("advise");
  // The cut-off of the recursions with the most tasks (a program has one or two).
  std::vector<analysis::Recursion> recursions = analysis::find_recursions(l.model);
  if (recursions.size() > kCutoffRecursions) recursions.resize(kCutoffRecursions);
  for (const analysis::Recursion& rec : recursions)
    r.cutoffs.push_back(
        analysis::advise_cutoff(l.model, rec, r.options.target, r.advice.overhead.per_task));
  r.site_labels = &l.labels;
  Timings::global().lap("cut-off");
  write_and_exit(report::render_advice(l.model, r, fl, run_info_of(l), format));
}

}  // namespace tasklens::cli
