#include "cli/whatif_cmd.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "analysis/algebra.hpp"
#include "analysis/profile.hpp"
#include "cli/command_support.hpp"
#include "errors.hpp"

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

std::string list_units(const load::Loaded& l, const report::FragmentLabels& fl, size_t top) {
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
  load::Loaded l = load::load(opt.trace, load::span_mode(opt.raw_span));
  const model::Model& m = l.model;
  report::FragmentLabels fl = report::label_fragments(m, l.trace->modules(), l.labels);
  if (opt.list) write_and_exit(list_units(l, fl, opt.top));

  std::vector<std::string> kinds;
  std::vector<analysis::Unit> units = resolve_units(l, fl, opt, kinds);
  report::WhatIfReport r = whatif_report(m, units, std::move(kinds), factors, mode);
  size_t top = opt.top                           ? opt.top
               : format == report::Format::Table ? 20
                                                 : std::numeric_limits<size_t>::max();
  write_and_exit(report::render_whatif(m, r, l.labels, load::run_info_of(l), format, top));
}

}  // namespace tasklens::cli
