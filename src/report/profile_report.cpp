#include "report/profile_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>

#include "analysis/algebra.hpp"
#include "report/diagnosis_report.hpp"
#include "report/json_text.hpp"
#include "report/loop_report.hpp"
#include "report/printable.hpp"
#include "report/whatif_report.hpp"
#include "symbols/symbolizer.hpp"

namespace tasklens::report {
namespace {

std::string basename(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

double seconds(const model::Model& m, uint64_t v) {
  return m.ticks_per_second > 0 ? double(v) / m.ticks_per_second : 0.0;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

bool is_clang_outlined(const std::string& f) {
  return f.rfind(".omp_outlined", 0) == 0 || f.rfind("__omp_outlined", 0) == 0 ||
         f.rfind(".omp_task_entry", 0) == 0;
}

// Compilers move the body of a parallel region or task into a function of their own
// (".omp_outlined." for clang, "main._omp_fn.0" for gcc). Users know the function they wrote:
// name the site after it (gcc keeps it in the name; for clang, take the enclosing site's).
void name_outlined_functions(const model::Model& m, std::vector<SiteLabel>& labels) {
  for (SiteLabel& l : labels) {
    size_t gcc = l.function.find("._omp_fn.");
    if (gcc != std::string::npos) l.function.resize(gcc);
  }
  // The site enclosing each site (from any one of its nodes; a site without a node: where it
  // was first met).
  std::vector<uint32_t> enclosing(labels.size(), model::kNone);
  for (size_t i = 0; i < labels.size() && i < m.sites.size(); ++i)
    if (m.sites[i].enclosing != i) enclosing[i] = m.sites[i].enclosing;
  std::vector<bool> seen(labels.size(), false);
  for (const model::Node& n : m.nodes) {
    if (n.site == model::kNone || seen[n.site]) continue;
    seen[n.site] = true;
    for (uint32_t p = n.parent; p != model::kNone; p = m.nodes[p].parent) {
      uint32_t ps = m.nodes[p].site;
      if (ps != model::kNone && ps != n.site) {
        enclosing[n.site] = ps;
        break;
      }
    }
  }
  std::vector<std::string> resolved(labels.size());
  for (size_t i = 0; i < labels.size(); ++i) {
    if (!is_clang_outlined(labels[i].function)) continue;
    uint32_t e = enclosing[i];
    for (int depth = 0; e != model::kNone && depth < 64; ++depth, e = enclosing[e]) {
      if (!labels[e].function.empty() && !is_clang_outlined(labels[e].function) &&
          m.sites[e].kind != model::SiteKind::Program) {
        resolved[i] = labels[e].function;
        break;
      }
    }
  }
  for (size_t i = 0; i < labels.size(); ++i)
    if (!resolved[i].empty()) labels[i].function = resolved[i];
}

}  // namespace

std::vector<uint64_t> blocked_by_site(const model::Model& m) {
  if (m.one_pass.read) return m.one_pass.blocked_by_site;
  std::vector<uint64_t> by_site(m.sites.size(), 0);
  for (const model::StrandBlocked& b : m.blocked_work)
    if (b.strand < m.strands.size() && m.strands[b.strand].site < by_site.size())
      by_site[m.strands[b.strand].site] += b.ticks;
  return by_site;
}

nlohmann::ordered_json site_rows_json(const model::Model& m, const analysis::Profile& p,
                                      const std::vector<SiteLabel>& labels, size_t rows,
                                      const std::vector<SerialFragment>* serial) {
  nlohmann::ordered_json sites = nlohmann::ordered_json::array();
  const std::vector<uint64_t> blocked = blocked_by_site(m);
  const std::vector<analysis::LoopFacts> loops = analysis::loop_facts_by_site(m);
  for (size_t i = 0; i < std::min(rows, p.sites.size()); ++i) {
    const analysis::SiteRow& r = p.sites[i];
    const SiteLabel& l = labels[r.site];
    sites.push_back({{"site", l.site},
                     {"file", l.file},
                     {"line", l.line},
                     {"function", l.function},
                     {"kind", model::to_string(m.sites[r.site].kind)},
                     {"count", r.count},
                     {"work", r.work},
                     {"span", r.span},
                     {"parallelism", r.parallelism},
                     {"work_seconds", seconds(m, r.work)},
                     {"span_seconds", seconds(m, r.span)},
                     {"critical_work", r.critical_work},
                     {"critical_path_percent", r.critical_path_percent},
                     {"blocked", blocked[r.site]}});
    if (!l.library_site.empty()) sites.back()["library_site"] = l.library_site;
    add_loop_keys(sites.back(), m, r, loops[r.site]);
    if (serial && !serial->empty() && m.sites[r.site].kind == model::SiteKind::Program) {
      nlohmann::ordered_json fragments = nlohmann::ordered_json::array();
      for (const SerialFragment& f : *serial)
        fragments.push_back({{"fragment", f.label},
                             {"function", f.function},
                             {"work", f.work},
                             {"critical_work", f.critical},
                             {"critical_path_percent", analysis::percent_of(f.critical, p.span)}});
      sites.back()["fragments"] = fragments;
    }
  }
  return sites;
}

std::string site_rows_table(const model::Model& m, const analysis::Profile& p,
                            const std::vector<SiteLabel>& labels, size_t rows,
                            const std::vector<SerialFragment>* serial) {
  rows = std::min(rows, p.sites.size());
  // The blocked column only when threads blocked for more than 1% of the work.
  const bool show_blocked = m.blocked > 0 && m.blocked >= p.work / 100;
  const std::vector<uint64_t> blocked = show_blocked ? blocked_by_site(m) : std::vector<uint64_t>();
  const std::vector<analysis::LoopFacts> loops = analysis::loop_facts_by_site(m);
  auto blocked_cell = [&](uint64_t v) {
    return show_blocked ? fmt::format(" {:>12}", v ? format_work(m, v) : "-") : std::string();
  };
  std::string out;
  out += fmt::format("{:>8} {:>12} {:>12} {:>12}{} {:>10}  {:<15} {:<24} {}\n", "crit.%",
                     "parallelism", "work", "span",
                     show_blocked ? fmt::format(" {:>12}", "blocked") : "", "count", "kind", "site",
                     "function");
  out += fmt::format("{:>8} {:>12.2f} {:>12} {:>12}{} {:>10}  {:<15} {:<24} {}\n", "100.0%",
                     p.parallelism, format_work(m, p.work), format_work(m, p.span),
                     blocked_cell(m.blocked), 1, "program", "<whole program>", "");
  for (size_t i = 0; i < rows; ++i) {
    const analysis::SiteRow& r = p.sites[i];
    const SiteLabel& l = labels[r.site];
    // The serial code outside every construct is named by its largest fragment, the others
    // on a line of their own.
    const bool program = m.sites[r.site].kind == model::SiteKind::Program;
    const bool fragments = program && serial && !serial->empty();
    out += fmt::format(
        "{:>7.1f}% {:>12.2f} {:>12} {:>12}{} {:>10}  {:<15} {:<24} {}\n", r.critical_path_percent,
        r.parallelism, format_work(m, r.work), format_work(m, r.span),
        show_blocked ? blocked_cell(blocked[r.site]) : "", r.count, kind_label(m, r, loops[r.site]),
        fragments ? serial->front().label : l.site,
        fragments                ? (serial->front().function.empty()
                                        ? std::string("(serial, outside any construct)")
                                        : serial->front().function + " (serial, outside any construct)")
        : l.library_site.empty() ? l.function
                                 : l.function + " (via " + l.library_site + ")");
    if (fragments && serial->size() > 1 && r.critical_path_percent >= 1.0) {
      std::string more;
      for (size_t k = 0; k < serial->size() && k < 4; ++k)
        more += fmt::format("{}{} {:.1f}%", k ? ", " : "", (*serial)[k].label,
                            analysis::percent_of((*serial)[k].critical, p.span));
      out +=
          fmt::format("{:>9}serial code by fragment (share of the critical path): {}\n", "", more);
    }
  }
  if (rows < p.sites.size())
    out += fmt::format("({} more sites; use --top {} to see all)\n", p.sites.size() - rows,
                       p.sites.size());
  if (show_blocked)
    out +=
        "blocked = time the site's own strands spent blocked (sleep, I/O, waits the runtime "
        "does not see): not work.\n";
  return out;
}

std::string basename_of(const std::string& path) { return basename(path); }

std::string format_amount(double v, double per_second) {
  if (per_second > 0) {
    const double s = v / per_second;
    // (Thresholds a hair below the unit: 2600 ticks at 2.6 GHz shows as 1.000 us.)
    if (s >= 0.9995) return fmt::format("{:.3f} s", s);
    if (s >= 0.9995e-3) return fmt::format("{:.3f} ms", s * 1e3);
    if (s >= 0.9995e-6) return fmt::format("{:.3f} us", s * 1e6);
    return fmt::format("{:.0f} ns", s * 1e9);
  }
  if (v >= 1e10) return fmt::format("{:.2f} G", v / 1e9);
  if (v >= 1e7) return fmt::format("{:.2f} M", v / 1e6);
  if (v >= 1e4) return fmt::format("{:.2f} k", v / 1e3);
  return fmt::format("{:.0f}", v);
}

double seconds_of(const model::Model& m, uint64_t v) { return seconds(m, v); }

std::string csv_escape(const std::string& s) { return csv_field(s); }

symbols::Symbolizer symbolizer_of(const std::vector<trace::ModuleInfo>& modules) {
  std::vector<symbols::Module> mods;
  for (const auto& m : modules) mods.push_back(symbols::Module{m.path, m.base, m.begin, m.end});
  return symbols::Symbolizer(std::move(mods));
}

std::vector<symbols::Location> resolve_return_addresses(
    const std::vector<uint64_t>& addresses, const std::vector<trace::ModuleInfo>& modules,
    const std::unordered_map<uint64_t, model::SourceName>& synthetic,
    const symbols::Symbolizer* kept) {
  std::optional<symbols::Symbolizer> own;
  if (!kept) own.emplace(symbolizer_of(modules));
  const symbols::Symbolizer& symbolizer = kept ? *kept : *own;
  std::vector<uint64_t> real = addresses;
  for (uint64_t& a : real)
    if (a & trace::kSyntheticSite) a = 0;
  std::vector<symbols::Location> locs = symbolizer.resolve(real);
  // Compiler-generated code around a call can carry line 0: the instruction at the return
  // address itself usually has the statement's line.
  std::vector<uint64_t> retry;
  std::vector<size_t> retry_index;
  for (size_t i = 0; i < locs.size(); ++i)
    if (real[i] && locs[i].line == 0 && !locs[i].module.empty()) {
      retry.push_back(real[i] + 1);
      retry_index.push_back(i);
    }
  if (!retry.empty()) {
    std::vector<symbols::Location> again = symbolizer.resolve(retry);
    for (size_t k = 0; k < again.size(); ++k)
      if (again[k].line != 0) locs[retry_index[k]] = again[k];
  }
  for (size_t i = 0; i < addresses.size(); ++i) {
    if (!(addresses[i] & trace::kSyntheticSite)) continue;
    auto it = synthetic.find(addresses[i]);
    if (it == synthetic.end()) continue;
    locs[i].file = it->second.file;
    locs[i].line = it->second.line;
    locs[i].function = it->second.function;
  }
  return locs;
}

namespace {

// A construct of a site in a library's code counts for the construct around it, unless nothing
// of the program's is around it but the program itself (a oneTBB flow graph fed from main through
// a try_put that clang++ did not inline): folded in, the library's parallel work would read as
// serial code. A construct named by a line of the library's headers keeps its row then; not a
// task_arena::execute the library makes for itself (a graph's wait_for_all), which is only a
// wait.
bool folds(const SiteLabel& label, model::SiteKind kind, bool outer_is_program) {
  return label.library &&
         !(outer_is_program && label.line != 0 && kind != model::SiteKind::ArenaExecute);
}

}  // namespace

std::string library_sites_warning(size_t n) {
  return fmt::format(
      "{} call site{} inside a library's code (its headers: oneTBB's range splits, calls into "
      "oneTBB or std::thread the compiler did not inline; or a shared library without line "
      "information) count for the construct around them",
      n, n == 1 ? "" : "s");
}

bool SitesAsTheyCome::folds_into_enclosing(uint32_t index, bool outer_is_program) {
  if (index >= labels_.size() || !folds(labels_[index], kinds_[index], outer_is_program))
    return false;
  folded_.insert(index);
  return true;
}

size_t attribute_library_sites(model::Model& m, const std::vector<SiteLabel>& labels) {
  // Most programs have no such site: then there is nothing to walk (millions of nodes).
  if (std::none_of(labels.begin(), labels.end(), [](const SiteLabel& l) { return l.library; }))
    return 0;
  size_t moved = 0;
  std::vector<uint8_t> seen(m.sites.size(), 0);
  for (uint32_t v = 0; v < m.nodes.size(); ++v) {  // parents come before children
    model::Node& n = m.nodes[v];
    if (n.site == model::kNone || n.site >= labels.size() || !labels[n.site].library) continue;
    uint32_t up = n.parent;
    while (up != model::kNone && m.nodes[up].site == model::kNone) up = m.nodes[up].parent;
    uint32_t outer = up == model::kNone ? 0 : m.nodes[up].site;
    const bool outer_is_program =
        outer < m.sites.size() && m.sites[outer].kind == model::SiteKind::Program;
    if (!folds(labels[n.site], m.sites[n.site].kind, outer_is_program)) continue;
    if (!seen[n.site]) {
      seen[n.site] = 1;
      ++moved;
    }
    n.site = outer;
    if (up != model::kNone) n.instance = m.nodes[up].instance;
  }
  if (!moved) return 0;
  // Strands count for the innermost site around them.
  for (model::Strand& s : m.strands) {
    uint32_t v = s.node;
    while (v != model::kNone && m.nodes[v].site == model::kNone) v = m.nodes[v].parent;
    s.site = v == model::kNone ? 0 : m.nodes[v].site;
  }
  return moved;
}

namespace {

// A site's label from its location (before name_outlined_functions and printable).
SiteLabel label_of(const model::Site& s, const symbols::Location& loc,
                   const std::vector<trace::ModuleInfo>& modules) {
  SiteLabel l;
  if (s.kind == model::SiteKind::Program) {
    l.site = "<program>";
    l.function = "(outside any construct)";
    return l;
  }
  {
    l.file = loc.file;
    l.line = loc.line;
    l.function = loc.function;
    l.library = loc.in_library_header;
    if (!loc.in_library_header) l.library_site = loc.library_frame;
    if (!loc.file.empty() && loc.line)
      l.site = fmt::format("{}:{}", basename(loc.file), loc.line);
    else if (!loc.module.empty()) {
      uint64_t base = 0;
      for (const auto& m : modules)
        if (m.path == loc.module && s.address >= m.begin && s.address < m.end) base = m.base;
      l.site = fmt::format("{}+0x{:x}", basename(loc.module), s.address - base);
      // A construct inside a shared library without line information (the OpenMP runtime's own
      // code, a library built without -g) says nothing about the program: it counts for the
      // enclosing construct, like code in a library's headers (attribute_library_sites).
      const std::string name = basename(loc.module);
      if (name.find(".so") != std::string::npos) l.library = true;
    } else
      l.site = s.address ? fmt::format("0x{:x}", s.address) : "<unknown>";
  }
  return l;
}

void make_printable(SiteLabel& l) {
  l.site = printable(l.site);
  l.file = printable(l.file);
  l.function = printable(l.function);
}

// merge_sites_by_location's key: sites with a source line merge by their place and kind.
std::string merge_key(const SiteLabel& l, uint32_t index) {
  return l.line ? l.site + "|" + l.file + "|" + l.function : fmt::format("#{}", index);
}

}  // namespace

std::vector<SiteLabel> label_sites(const model::Model& model,
                                   const std::vector<trace::ModuleInfo>& modules) {
  std::vector<uint64_t> addresses;
  for (const auto& s : model.sites) addresses.push_back(s.address);
  std::vector<symbols::Location> locs =
      resolve_return_addresses(addresses, modules, model.synthetic_sites);
  std::vector<SiteLabel> labels(model.sites.size());
  for (size_t i = 0; i < model.sites.size(); ++i)
    labels[i] = label_of(model.sites[i], locs[i], modules);
  name_outlined_functions(model, labels);
  for (SiteLabel& l : labels) make_printable(l);
  return labels;
}

SitesAsTheyCome::SitesAsTheyCome(const trace::TraceFile& trace)
    : modules_(trace.modules()), symbolizer_(symbolizer_of(modules_)) {
  for (const auto& [address, name] : trace.site_names())
    synthetic_[address] = model::SourceName{name.file, name.line, name.function};
  // Site 0, the program's, is the builder's own.
  labels_.push_back(label_of(model::Site{}, symbols::Location{}, modules_));
  kinds_.push_back(model::SiteKind::Program);
}

uint32_t SitesAsTheyCome::place(const model::Site& site, uint32_t index, uint32_t enclosing) {
  const std::vector<symbols::Location> loc =
      resolve_return_addresses({site.address}, modules_, synthetic_, &symbolizer_);
  SiteLabel l = label_of(site, loc[0], modules_);
  // As name_outlined_functions does: a function the compiler made for a construct's body is
  // named after the function around it (the enclosing site's, named so already).
  const size_t gcc = l.function.find("._omp_fn.");
  if (gcc != std::string::npos) l.function.resize(gcc);
  if (is_clang_outlined(l.function) && enclosing < labels_.size() &&
      kinds_[enclosing] != model::SiteKind::Program && !labels_[enclosing].function.empty() &&
      !is_clang_outlined(labels_[enclosing].function))
    l.function = labels_[enclosing].function;
  make_printable(l);
  const auto [it, inserted] =
      index_.try_emplace({merge_key(l, index), static_cast<int>(site.kind)}, index);
  if (!inserted) return it->second;
  std::lock_guard<std::mutex> lock(mutex_);  // (read on the one-pass sink's thread)
  if (labels_.size() <= index) {
    labels_.resize(index + 1);
    kinds_.resize(index + 1, model::SiteKind::Program);
  }
  labels_[index] = std::move(l);
  kinds_[index] = site.kind;
  return index;
}

void SitesAsTheyCome::place_fragment(const model::Fragment& fragment, uint32_t index,
                                     uint32_t site) {
  auto [label, function] =
      label_fragment(fragment, modules_, synthetic_,
                     is_construct(site) ? &labels_[site].function : nullptr, &symbolizer_);
  std::lock_guard<std::mutex> lock(mutex_);  // (read on the one-pass sink's thread)
  if (fragment_labels_.size() <= index) {
    fragment_labels_.resize(size_t{index} + 1);
    fragment_functions_.resize(size_t{index} + 1);
  }
  fragment_labels_[index] = std::move(label);
  fragment_functions_[index] = std::move(function);
}

void merge_sites_by_location(model::Model& m, std::vector<SiteLabel>& labels) {
  std::map<std::pair<std::string, int>, uint32_t> index;
  std::vector<uint32_t> remap(m.sites.size());
  std::vector<model::Site> sites;
  std::vector<SiteLabel> merged;
  for (uint32_t i = 0; i < m.sites.size(); ++i) {
    const SiteLabel& l = labels[i];
    // Only sites with a source line merge: without debug info the address is all we know.
    std::string key = merge_key(l, i);
    auto [it, inserted] = index.try_emplace({key, static_cast<int>(m.sites[i].kind)},
                                            static_cast<uint32_t>(sites.size()));
    if (inserted) {
      sites.push_back(m.sites[i]);
      merged.push_back(l);
    }
    remap[i] = it->second;
  }
  if (sites.size() == m.sites.size()) return;
  for (model::Node& n : m.nodes)
    if (n.site != model::kNone) n.site = remap[n.site];
  for (model::Strand& st : m.strands) st.site = remap[st.site];
  m.sites = std::move(sites);
  labels = std::move(merged);
}

RunInfo run_info(const trace::TraceFile& trace) {
  RunInfo r;
  r.trace_path = trace.path();
  if (!trace.modules().empty()) r.program = printable(trace.modules().front().path);
  r.pid = trace.header().pid;
  r.runtime = printable(trace.runtime_version());
  if (trace.has_launch_status()) {
    r.has_exit = true;
    r.exit_code = trace.launch_status().exit_code;
    r.exit_signal = trace.launch_status().signal;
  }
  return r;
}

namespace {

std::vector<std::string> all_metrics(const model::Model& m) {
  std::vector<std::string> names{m.metric};
  names.insert(names.end(), m.extra_metrics.begin(), m.extra_metrics.end());
  return names;
}

uint64_t extra_total(const model::Model& m, size_t x) {
  uint64_t total = 0;
  const size_t n = m.strands.size();
  for (size_t s = 0; s < n && x * n + s < m.extra_work.size(); ++s)
    total += m.extra_work[x * n + s];
  return total;
}

// An amount of extra metric x: time for the TSC and task-clock, a count otherwise.
std::string format_metric_amount(const model::Model& m, size_t x, uint64_t v) {
  model::Model unit;  // format_work's view of the metric
  const std::string& name = m.extra_metrics[x];
  unit.metric_is_time = name == "tsc" || name == "task-clock";
  unit.ticks_per_second = name == "tsc" ? m.tsc_per_second : name == "task-clock" ? 1e9 : 0;
  return format_work(unit, v);
}

}  // namespace

std::string format_work(const model::Model& m, uint64_t v) {
  if (m.metric_is_time && m.ticks_per_second > 0) {
    double s = double(v) / m.ticks_per_second;
    if (s >= 1) return fmt::format("{:.3f} s", s);
    if (s >= 1e-3) return fmt::format("{:.3f} ms", s * 1e3);
    if (s >= 1e-6) return fmt::format("{:.3f} us", s * 1e6);
    return fmt::format("{:.0f} ns", s * 1e9);
  }
  if (v >= 10'000'000'000ull) return fmt::format("{:.2f} G", v / 1e9);
  if (v >= 10'000'000ull) return fmt::format("{:.2f} M", v / 1e6);
  if (v >= 10'000ull) return fmt::format("{:.2f} k", v / 1e3);
  return fmt::format("{}", v);
}

namespace {

// The clipped strands the JSON lists: the largest clips first (what moved the span most), equal
// clips by their start and thread (an order every reading gives: the strands' ids are the DAG's
// with it in memory, the order met in passes).
constexpr size_t kClippedListed = 20;

nlohmann::ordered_json clipped_json(const SpanAccount* a) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  if (!a || !a->clipping) return list;
  const std::vector<analysis::ClippedStrand>& cs = a->clipping->strands;
  std::vector<size_t> order(cs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto excess = [&](size_t i) { return cs[i].work_raw - cs[i].work_clipped; };
  std::sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    if (excess(x) != excess(y)) return excess(x) > excess(y);
    if (cs[x].begin != cs[y].begin) return cs[x].begin < cs[y].begin;
    if (cs[x].thread != cs[y].thread) return cs[x].thread < cs[y].thread;
    return x < y;
  });
  order.resize(std::min(order.size(), kClippedListed));
  for (size_t i : order) {
    list.push_back({{"strand", cs[i].strand},
                    {"thread", cs[i].thread},
                    {"fragment", i < a->fragments.size() ? a->fragments[i] : std::string()},
                    {"work_raw", cs[i].work_raw},
                    {"work_clipped", cs[i].work_clipped},
                    {"fragment_p99", cs[i].fragment_quantile},
                    {"fragment_strands", cs[i].fragment_samples},
                    {"simultaneous", cs[i].simultaneous},
                    {"begin", cs[i].begin},
                    {"end", cs[i].end}});
  }
  return list;
}

// The robust span beside the measured one, and a warning when they tell different stories.
std::string span_lines(const model::Model& m, const analysis::Profile& p, const SpanAccount* a) {
  if (!a || !a->clipping || a->clipping->strands.empty()) return "";
  const analysis::SpanFigures& raw = a->measured;
  const size_t n = a->clipping->strands.size();
  std::string out = fmt::format(
      "span {} (robust; {} as measured: {} strand{} clipped, see --raw-span), parallelism {:.2f} "
      "({:.2f} as measured)\n",
      format_work(m, p.span), format_work(m, raw.span), n, n == 1 ? "" : "s", p.parallelism,
      raw.parallelism);
  const double larger = std::max(p.parallelism, raw.parallelism);
  if (larger > 0 && std::abs(p.parallelism - raw.parallelism) > 0.1 * larger)
    out += fmt::format(
        "warning: the parallelism as measured ({:.2f}) differs from the robust one ({:.2f}) by "
        "{:.0f}%: {} of work in {} strand{} far longer than the rest of their code fragment (a "
        "paused machine, page faults, interrupts) would decide the critical path; the report "
        "counts them at their fragment's median (--format json lists them)\n",
        raw.parallelism, p.parallelism, 100.0 * std::abs(p.parallelism - raw.parallelism) / larger,
        format_work(m, a->clipping->clipped_work), n, n == 1 ? "" : "s");
  return out;
}

}  // namespace

std::string render_profile(const model::Model& m, const analysis::Profile& p,
                           const std::vector<SiteLabel>& labels, const RunInfo& info, Format format,
                           size_t top, const SpanAccount* account, const ProfileExtras* extras) {
  const std::vector<DiagnosisItem> none;
  const std::vector<DiagnosisItem>& verdict =
      extras && extras->diagnosis ? *extras->diagnosis : none;
  const std::vector<SerialFragment>* serial = extras ? &extras->serial : nullptr;
  size_t rows = std::min(top, p.sites.size());
  const bool clipped = account && account->clipping && !account->clipping->strands.empty();
  const analysis::SpanFigures raw =
      clipped ? account->measured : analysis::SpanFigures{p.work, p.span, p.parallelism};
  if (format == Format::Json) {
    nlohmann::ordered_json j;  // keys in the documented order
    j["tasklens_version"] = TASKLENS_VERSION;
    j["trace"] = info.trace_path;
    j["executable"] = info.program;
    j["pid"] = info.pid;
    j["runtime"] = info.runtime;
    j["metric"] = m.metric;
    j["metrics"] = all_metrics(m);
    j["ticks_per_second"] = m.ticks_per_second;
    j["complete"] = m.complete;
    j["threads"] = m.thread_count;
    j["tasks"] = m.task_count;
    j["strands"] = m.one_pass.read ? m.one_pass.strands : m.strands.size();
    j["loops_have_chunks"] = m.loops_have_chunks;
    j["preemption_removed"] = m.preempted;
    j["threads_preempted_percent"] =
        m.threads_time ? 100.0 * double(m.preempted_in_run) / double(m.threads_time) : 0.0;
    j["blocked_removed"] = m.blocked;
    j["slow_faults_removed"] = m.slow_faults;
    j["recorder_stalls"] = m.recorder_stalls;
    j["recorder_stalls_time"] = m.recorder_stall_ticks;
    j["recorder_stalls_removed"] = m.recorder_stalled;
    j["switches_lost"] = m.switches_lost;
    if (m.host_steal_percent >= 0)
      j["host_steal_percent"] = m.host_steal_percent;
    else
      j["host_steal_percent"] = nullptr;
    j["probe_cost_per_event"] = m.probe_per_event;
    j["probe_removed"] = m.probe_removed;
    j["probe_cost_source"] = m.probe_measured_in_run ? "run" : "start-up";
    j["runtime_overhead_removed"] = m.runtime_removed;
    j["runtime_cost_kinds"] = m.runtime_cost_kinds;
    j["runtime_cost_scale"] = m.runtime_cost_scale;
    j["runtime_waits_in_strands"] = m.runtime_waited;
    if (m.task_cost > 0)
      j["task_cost"] = m.task_cost;
    else
      j["task_cost"] = nullptr;
    j["diagnosis"] = diagnosis_json(verdict);
    j["warnings"] = m.warnings;
    // Each way the recording lost data, by cause (none: an empty list).
    nlohmann::ordered_json losses = nlohmann::ordered_json::array();
    for (const trace::Loss& l : m.losses) {
      nlohmann::ordered_json e;
      e["cause"] = l.cause;
      if (l.error) e["errno"] = l.error, e["error"] = std::strerror(l.error);
      if (l.from_seconds >= 0) e["from_seconds"] = l.from_seconds;
      if (l.count) e["count"] = l.count;
      e["message"] = l.message;
      losses.push_back(e);
    }
    j["data_loss"] = losses;
    if (!info.span_mode.empty()) j["span_mode"] = info.span_mode;
    if (info.has_exit) j["exit"] = {{"code", info.exit_code}, {"signal", info.exit_signal}};
    j["program"] = {{"work", p.work},
                    {"span", p.span},
                    {"parallelism", p.parallelism},
                    {"work_seconds", seconds(m, p.work)},
                    {"span_seconds", seconds(m, p.span)},
                    {"work_raw", raw.work},
                    {"span_raw", raw.span},
                    {"parallelism_raw", raw.parallelism}};
    j["notes"] = loop_notes(m, p, labels, analysis::loop_facts_by_site(m));
    j["sites"] = site_rows_json(m, p, labels, rows, serial);
    j["clipped_count"] = clipped ? account->clipping->strands.size() : 0;
    j["clipped_work"] = clipped ? account->clipping->clipped_work : 0;
    j["clipped_strands"] = clipped_json(clipped ? account : nullptr);
    nlohmann::ordered_json blocked_critical = nlohmann::ordered_json::array();
    if (account)
      for (const SpanAccount::Blocked& b : account->blocked_critical)
        blocked_critical.push_back({{"fragment", b.fragment},
                                    {"blocked", b.ticks},
                                    {"blocked_seconds", seconds(m, b.ticks)}});
    j["blocked_critical"] = blocked_critical;
    return json_text(j, 2) + "\n";
  }
  if (format == Format::Csv) {
    std::string out =
        "site,file,line,function,kind,count,work,span,parallelism,critical_path_percent\n";
    out +=
        fmt::format("<whole program>,,,,total,1,{},{},{:.6g},100\n", p.work, p.span, p.parallelism);
    for (size_t i = 0; i < rows; ++i) {
      const analysis::SiteRow& r = p.sites[i];
      const SiteLabel& l = labels[r.site];
      out += fmt::format("{},{},{},{},{},{},{},{},{:.6g},{:.4f}\n", csv_field(l.site),
                         csv_field(l.file), l.line, csv_field(l.function),
                         model::to_string(m.sites[r.site].kind), r.count, r.work, r.span,
                         r.parallelism, r.critical_path_percent);
    }
    return out;
  }
  std::string out;
  std::string unit = m.metric == "tsc" && m.ticks_per_second > 0
                         ? fmt::format("tsc ({:.2f} GHz)", m.ticks_per_second / 1e9)
                     : m.metric == "task-clock" ? std::string("task-clock (CPU time)")
                                                : m.metric;
  out += fmt::format("tasklens {}: {} (pid {}), {} threads, {} tasks, metric {}{}\n",
                     TASKLENS_VERSION, basename(info.program), info.pid, m.thread_count,
                     m.task_count, unit, m.complete ? "" : ", INCOMPLETE trace");
  if (!m.extra_metrics.empty()) {
    // The report is in the primary metric; the others' program totals say what was recorded.
    std::string also;
    for (size_t x = 0; x < m.extra_metrics.size(); ++x)
      also += fmt::format("{}{} {}", x ? ", " : "", m.extra_metrics[x],
                          format_metric_amount(m, x, extra_total(m, x)));
    out += fmt::format("also recorded (program totals): {}\n", also);
  }
  out += diagnosis_table(verdict);
  for (const std::string& w : m.warnings) out += fmt::format("warning: {}\n", w);
  if (m.preempted > p.work / 100)
    out += fmt::format("note: {} of preemption by other threads was removed from the work\n",
                       format_work(m, m.preempted));
  if (m.blocked > p.work / 100)
    out += fmt::format(
        "note: {} that threads spent blocked inside tasks (sleeping, I/O, waiting on a lock "
        "or condition the runtime does not see) was removed from the work\n",
        format_work(m, m.blocked));
  if (m.probe_removed > p.work / 100)
    out += fmt::format(
        "note: {} of recording cost ({} per event, measured {}) was taken out of the work\n",
        format_work(m, m.probe_removed), format_work(m, m.probe_per_event),
        m.probe_measured_in_run ? "during the run" : "at start-up");
  if (m.runtime_removed > p.work / 100)
    out += fmt::format(
        "note: {} of the OpenMP runtime's own cost (creating, starting and joining tasks, "
        "fetching loop chunks: timed on empty tasks after the run) was taken out of the work, "
        "{:.0f}% of what the strands measured: the tasks' own code is the rest "
        "(--keep-runtime-cost keeps it)\n",
        format_work(m, m.runtime_removed),
        100.0 * double(m.runtime_removed) /
            double(std::max<uint64_t>(1, p.work + m.runtime_removed)));
  if (m.recorder_stalled > p.work / 1000)
    out += fmt::format(
        "note: {} that threads spent inside tasklens getting event buffers ({} waits for its "
        "writer) was removed from the work\n",
        format_work(m, m.recorder_stalled), m.recorder_stalls);
  if (m.slow_faults > p.work / 1000 || m.slow_faults * 20 > p.span)
    out += fmt::format(
        "note: {} that threads spent in page faults far slower than their usual ones (the "
        "machine held the thread: paging memory in, reclaiming or clearing it) was removed from "
        "the work (--keep-slow-faults keeps it)\n",
        format_work(m, m.slow_faults));
  out += span_lines(m, p, clipped ? account : nullptr);
  // Blocked time in the critical path's strands: not in the span, but the program waited it
  // out on its longest chain, so the wall time holds it whatever the thread count.
  if (account) {
    uint64_t on_path = 0;
    for (const SpanAccount::Blocked& b : account->blocked_critical) on_path += b.ticks;
    size_t shown = 0;
    for (const SpanAccount::Blocked& b : account->blocked_critical) {
      if (shown == 3 || b.ticks * 20 < p.span + on_path) break;  // under 5%: not worth a line
      out += fmt::format(
          "note: {} blocked (sleeping, I/O, waiting) in {} on the critical path: it bounds the "
          "wall time, not the parallelism (not counted as work; --blocked-as-work counts it)\n",
          format_work(m, b.ticks), b.fragment);
      ++shown;
    }
  }
  const std::vector<analysis::LoopFacts> loops = analysis::loop_facts_by_site(m);
  for (const std::string& note : loop_notes(m, p, labels, loops))
    out += fmt::format("note: {}\n", note);
  out += "\n";
  out += site_rows_table(m, p, labels, rows, serial);
  out += "\n" + loop_legend(m, p, loops, rows);
  out +=
      "crit.% = share of the critical path spent directly in the site (sums to 100%);\n"
      "work/span of a site = its outermost instances (recursion counted once).\n";
  if (m.metric == "tsc" && m.ticks_per_second > 0)
    out += "Work and span are TSC ticks shown as time; --format json or csv gives the ticks.\n";
  return out;
}

}  // namespace tasklens::report
