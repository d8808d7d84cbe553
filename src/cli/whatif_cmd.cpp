#include "cli/whatif_cmd.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include "analysis/algebra.hpp"
#include "analysis/profile.hpp"
#include "analysis/stream_whatif.hpp"
#include "cli/command_support.hpp"
#include "errors.hpp"
#include "load/recording.hpp"

namespace tasklens::cli {
namespace {

using load::Loaded;

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

// --list's regions (every name the model has), with their work and share of the critical path:
// work[r] and critical[r] by region id (shorter: 0).
std::string list_regions(const model::Model& m, const std::vector<uint64_t>& work,
                         const std::vector<uint64_t>& critical, uint64_t span) {
  std::string out = "regions (TASKLENS_REGION_BEGIN/END):\n";
  if (m.region_names.empty()) out += "  (none recorded)\n";
  for (uint32_t r = 0; r < m.region_names.size(); ++r) {
    const uint64_t w = r < work.size() ? work[r] : 0, crit = r < critical.size() ? critical[r] : 0;
    out += fmt::format("  {:<30} work {:>12}  crit.% {:5.1f}\n", m.region_names[r],
                       report::format_work(m, w), span ? 100.0 * crit / span : 0.0);
  }
  return out;
}

// --list's sites, with their work and share of the critical path.
std::string list_sites(const model::Model& m, const analysis::Profile& p,
                       const std::vector<report::SiteLabel>& labels) {
  std::string out = "\nsites (as in `tasklens report`):\n";
  for (const analysis::SiteRow& r : p.sites) {
    if (m.sites[r.site].kind == model::SiteKind::Program) continue;
    out += fmt::format("  {:<30} {:<9} work {:>12}  crit.% {:5.1f}  {}\n", labels[r.site].site,
                       model::to_string(m.sites[r.site].kind), report::format_work(m, r.work),
                       r.critical_path_percent, labels[r.site].function);
  }
  return out;
}

std::string list_fragments(const model::Model& m, const std::vector<std::string>& label,
                           const std::vector<std::string>& function,
                           const std::vector<uint64_t>& work, const std::vector<uint64_t>& crit,
                           uint64_t span, size_t top);

std::string list_units(const load::Loaded& l, const report::FragmentLabels& fl, size_t top) {
  const model::Model& m = l.model;
  analysis::Profile p = analysis::compute_profile(m);
  std::vector<uint8_t> on_path(m.strands.size(), 0);
  for (uint32_t s : p.critical_path) on_path[s] = 1;
  std::string out =
      fmt::format("Units for --region, --site and --fragment in {}:\n\n", l.trace->path());
  std::vector<uint64_t> region_work(m.region_names.size(), 0),
      region_crit(m.region_names.size(), 0);
  for (uint32_t r = 0; r < m.region_names.size(); ++r)
    for (auto [s, w] : analysis::unit_of_region(m, r, m.region_names[r]).parts) {
      region_work[r] += w;
      if (on_path[s]) region_crit[r] += analysis::path_weight(m, s, w);
    }
  out += list_regions(m, region_work, region_crit, p.span);
  out += list_sites(m, p, l.labels);
  std::vector<uint64_t> work(fl.label.size()), crit(fl.label.size());
  for (uint32_t s = 0; s < m.strands.size(); ++s) {
    uint32_t g = fl.group_of[m.strands[s].fragment];
    work[g] += m.strands[s].work;
    if (on_path[s]) crit[g] += analysis::path_weight(m, s, m.strands[s].work);
  }
  return out + list_fragments(m, fl.label, fl.function, work, crit, p.span, top);
}

// --list's fragments (groups: label, function, work, work on the critical path), by their work
// on the critical path, then by work.
std::string list_fragments(const model::Model& m, const std::vector<std::string>& label,
                           const std::vector<std::string>& function,
                           const std::vector<uint64_t>& work, const std::vector<uint64_t>& crit,
                           uint64_t span, size_t top) {
  std::vector<uint32_t> order(label.size());
  for (uint32_t g = 0; g < order.size(); ++g) order[g] = g;
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return crit[a] != crit[b] ? crit[a] > crit[b] : work[a] > work[b];
  });
  size_t rows = top ? top : 20;
  std::string out =
      "\nfragments (code between two runtime events), by share of the critical path:\n";
  for (size_t i = 0; i < order.size() && i < rows; ++i) {
    uint32_t g = order[i];
    out += fmt::format("  {:<30} work {:>12}  crit.% {:5.1f}  {}\n", label[g],
                       report::format_work(m, work[g]), span ? 100.0 * crit[g] / span : 0.0,
                       function[g]);
  }
  if (order.size() > rows)
    out += fmt::format("  ({} more; --top {} shows all)\n", order.size() - rows, order.size());
  return out;
}

// The largest finite factor (infinity if none): the "after" profile's, as whatif_report says.
double after_factor_of(const std::vector<double>& factors) {
  double after = 0;
  for (double k : factors)
    if (!std::isinf(k)) after = std::max(after, k);
  return after == 0 ? analysis::kInfiniteFactor : after;
}

constexpr const char* kOnePassWarning =
    "read in one pass (--stream, or its DAG does not fit in the memory): the figures as "
    "measured, without the robust span";
constexpr const char* kPassesWarning =
    "read in passes (--stream, or its DAG does not fit in the memory): the robust span's census "
    "beside the what-ifs, and the what-ifs again with the strands it clipped";

// whatif --list on a recording read in passes (the robust span's: load::read_with_robust_span).
[[noreturn]] void list_streamed(const WhatIfOptions& opt) {
  std::optional<analysis::StreamUnitList> list;
  load::Streamed st = load::read_with_robust_span(
      opt.trace, "finding the critical path of", load::span_mode(opt.raw_span),
      [&list](const report::SitesAsTheyCome&, const trace::TraceFile&) -> model::StrandSink& {
        return list.emplace();
      },
      /*need_measured=*/false, /*replayable=*/true);
  const analysis::StreamUnitList::Result r = list->finish();
  // Fragments with one label are one (label_fragments' groups).
  const report::FragmentLabels fl =
      report::group_fragments(st.fragment_labels, st.fragment_functions);
  std::vector<uint64_t> work(fl.label.size(), 0), crit(fl.label.size(), 0);
  for (size_t f = 0; f < r.fragments.work.size() && f < fl.group_of.size(); ++f) {
    work[fl.group_of[f]] += r.fragments.work[f];
    crit[fl.group_of[f]] += r.fragments.critical[f];
  }
  write_and_exit(fmt::format(
      "Units for --region, --site and --fragment in {} (read without its DAG: it does not fit "
      "in the memory, or --stream):\n\n{}{}{}",
      st.trace->path(), list_regions(st.model, r.regions.work, r.regions.critical, r.profile.span),
      list_sites(st.model, r.profile, st.labels),
      list_fragments(st.model, fl.label, fl.function, work, crit, r.profile.span, opt.top)));
}

}  // namespace

// Regions are named in the trace's own records, before any pass; sites and fragments are tests
// of their labels, asked as the pass meets them. Regions first, then sites, then fragments, as
// resolve_units orders them.
WhatIfPass::WhatIfPass(const WhatIfOptions& opt, analysis::WhatIfMode mode,
                       std::vector<double> factors)
    : mode_(mode), factors_(std::move(factors)) {
  std::vector<Wanted>& wanted = wanted_;
  std::set<std::string> named;
  if (!opt.regions.empty()) {
    const trace::TraceFile trace = trace::TraceFile::open(opt.trace, /*events_in_memory=*/false);
    const std::vector<std::string>& names = trace.region_names();
    // The names the model will have: the trace's, and "region#ID" for an id it met unnamed.
    auto id_of = [&names](const std::string& name) -> uint32_t {
      for (uint32_t r = 0; r < names.size(); ++r)
        if (names[r] == name || (names[r].empty() && name == "region#" + std::to_string(r)))
          return r;
      if (name.rfind("region#", 0) != 0 || name.size() <= 7 || name.size() >= 17 ||
          name.find_first_not_of("0123456789", 7) != std::string::npos)
        return model::kNone;
      const uint64_t id = std::stoull(name.substr(7));
      if (id >= trace::kMaxRegionNames || (id < names.size() && !names[id].empty()))
        return model::kNone;  // (a named region is known by its name)
      return static_cast<uint32_t>(id);
    };
    for (const std::string& spec : opt.regions) {
      // A region's name may hold '=' itself ("phase=2"): a spec that names a region whole has
      // no factor; otherwise the text after the last '=' is the factor.
      auto [name, k] = id_of(spec) != model::kNone ? std::pair<std::string, double>{spec, 0.0}
                                                   : split_unit(spec, "--region");
      if (!named.insert("--region " + name).second)
        throw UsageError("--region " + name +
                         " is given twice; name each unit once, with its factor if it has one "
                         "(--region " +
                         name + "=4)");
      const uint32_t id = id_of(name);
      if (id == model::kNone)
        throw UsageError(names.empty()
                             ? "--region " + name +
                                   ": the trace has no regions; mark them with "
                                   "TASKLENS_REGION_BEGIN/END (include/tasklens/tasklens.h)"
                             : "--region " + name +
                                   ": no region of that name; `tasklens whatif --list` "
                                   "shows the recorded ones");
      wanted.push_back({"--region", false, name, k, id});
    }
  }
  for (const auto& [option, specs] :
       {std::pair<const char*, const std::vector<std::string>*>{"--site", &opt.sites},
        {"--fragment", &opt.fragments}})
    for (const std::string& spec : *specs) {
      auto [name, k] = split_unit(spec, option);
      const std::string label = normalize_location(name);
      if (!named.insert(std::string(option) + " " + label).second)
        throw UsageError(std::string(option) + " " + label +
                         " is given twice; name each unit once, with its factor if it has one (" +
                         option + " " + label + "=4)");
      wanted.push_back({option, option == std::string("--fragment"), label, k});
    }
  if (wanted.size() > 254) throw UsageError("whatif in one pass takes at most 254 units");
}

WhatIfPass::~WhatIfPass() = default;

model::StrandSink& WhatIfPass::sink(const report::SitesAsTheyCome& sites) {
  std::vector<analysis::StreamUnit> units;
  for (const Wanted& w : wanted_) {
    analysis::StreamUnit u{w.label, w.factor, w.fragment, {}};
    if (w.region != model::kNone) {
      u.name = "region " + w.label;
      u.region = w.region;
    } else if (u.by_fragment)
      u.has = [&sites, want = w.label](uint32_t f) { return sites.fragment_is(f, want); };
    else
      u.has = [&sites, want = w.label](uint32_t x) { return sites.construct_site_is(x, want); };
    units.push_back(std::move(u));
  }
  sink_ = std::make_unique<analysis::StreamWhatIf>(std::move(units), factors_, mode_,
                                                   after_factor_of(factors_));
  return *sink_;
}

std::string WhatIfPass::text(const load::Streamed& st, report::Format format, size_t top) {
  std::vector<std::string> kinds;
  for (const Wanted& w : wanted_) {
    if (w.region != model::kNone) {
      kinds.push_back("region");
      // (A region named by its id only: the model has it if the pass met it.)
      if (w.region >= st.model.region_names.size())
        throw UsageError("--region " + w.label +
                         ": no region of that name; `tasklens whatif --list` shows the recorded "
                         "ones");
      continue;
    }
    kinds.push_back(w.fragment ? "fragment" : "site");
    bool found = false;
    if (w.fragment)
      found = std::find(st.fragment_labels.begin(), st.fragment_labels.end(), w.label) !=
              st.fragment_labels.end();
    for (uint32_t x = 0; !w.fragment && x < st.labels.size() && !found; ++x)
      found = st.model.sites[x].kind != model::SiteKind::Program && st.labels[x].site == w.label;
    if (!found)
      throw UsageError(w.fragment ? "--fragment " + w.label +
                                        ": no code fragment file:L1-L2 like that; `tasklens whatif "
                                        "--list` shows them"
                                  : "--site " + w.label +
                                        ": no construct site there; `tasklens report` lists the "
                                        "sites");
  }
  analysis::StreamWhatIf::Result result = sink_->finish();
  report::WhatIfReport r;
  r.unit_kinds = std::move(kinds);
  r.mode = mode_;
  r.factors = factors_;
  r.before = std::move(result.before);
  r.curves = std::move(result.curves);
  r.after_factor = after_factor_of(factors_);
  r.after = std::move(result.after);
  model::Model m = st.model;  // (no DAG: its sites and facts, with this reading's warning)
  m.warnings.push_back(st.robust ? kPassesWarning : kOnePassWarning);
  report::RunInfo info = report::run_info(*st.trace);
  info.span_mode = st.robust ? "robust" : "raw";
  warn_beside_csv(format, m.warnings);
  return report::render_whatif(m, r, st.labels, info, format, top);
}

// whatif on a recording read in passes (analysis/stream_whatif.hpp): region, site and fragment
// units; the robust span's passes around it (load::read_with_robust_span) unless --raw-span.
std::string whatif_streamed_text(const WhatIfOptions& opt, report::Format format,
                                 analysis::WhatIfMode mode, const std::vector<double>& factors) {
  const size_t top = opt.top                           ? opt.top
                     : format == report::Format::Table ? 20
                                                       : std::numeric_limits<size_t>::max();
  WhatIfPass pass(opt, mode, factors);
  const load::Streamed st = load::read_with_robust_span(
      opt.trace, "weighing the what-ifs of", load::span_mode(opt.raw_span),
      [&pass](const report::SitesAsTheyCome& sites, const trace::TraceFile&) -> model::StrandSink& {
        return pass.sink(sites);
      });
  return pass.text(st, format, top);
}

std::vector<analysis::Unit> resolve_units(const load::Loaded& l, const report::FragmentLabels& fl,
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
  r.after_factor = after_factor_of(r.factors);
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
  if (opt.stream) {
    if (opt.list) list_streamed(opt);
    write_and_exit(whatif_streamed_text(opt, format, mode, factors));
  };
  load::Loaded l;
  try {
    l = load::load(opt.trace, load::span_mode(opt.raw_span));
  } catch (const OutOfMemoryError&) {
    // Too large for the DAG: in one pass, when the recording allows it.
    read_in_one_pass_instead(opt.trace, [&] {
      if (opt.list) list_streamed(opt);
      write_and_exit(whatif_streamed_text(opt, format, mode, factors));
    });
  }
  const model::Model& m = l.model;
  report::FragmentLabels fl = report::label_fragments(m, l.trace->modules(), l.labels);
  if (opt.list) write_and_exit(list_units(l, fl, opt.top));

  std::vector<std::string> kinds;
  std::vector<analysis::Unit> units = resolve_units(l, fl, opt, kinds);
  report::WhatIfReport r = whatif_report(m, units, std::move(kinds), factors, mode);
  size_t top = opt.top                           ? opt.top
               : format == report::Format::Table ? 20
                                                 : std::numeric_limits<size_t>::max();
  warn_beside_csv(format, m.warnings);
  write_and_exit(report::render_whatif(m, r, l.labels, load::run_info_of(l), format, top));
}

}  // namespace tasklens::cli
