// Differential analysis: see diff.hpp for the definitions. Units are grouped per recording with
// one linear pass over the strands (a unit index per strand), so every sum is O(V) per metric; a
// cost is one longest-path pass over other's DAG with the unit's strands rescaled in place.
#include "analysis/diff.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <stdexcept>
#include <unordered_map>

#include "analysis/profile.hpp"

namespace tasklens::analysis {
namespace {

using model::kNone;
using model::Model;

// The units of one kind (sites or fragment groups) of one recording.
struct Units {
  std::vector<std::string> names;
  std::vector<model::SiteKind> site_kinds;
  std::vector<std::vector<uint32_t>> ids;  // site indexes / fragment groups
  std::unordered_map<std::string, uint32_t> by_key;
  std::vector<uint32_t> of_strand;  // unit of each strand (kNone: none)
  // Strands of each unit (CSR): strands[begin[u] .. begin[u + 1]).
  std::vector<uint32_t> begin, strands;
  std::vector<std::vector<uint64_t>> sums;  // [unit][common metric]
};

// One recording: its metric amounts per strand, spans, critical paths and units.
struct Side {
  const Model* m = nullptr;
  std::vector<std::vector<uint64_t>> weights;  // [common metric][strand]
  std::vector<uint64_t> work, span;
  std::vector<std::vector<uint8_t>> on_path;  // [common metric][strand]
  Units sites, fragments;
};

void finish_units(const Model& m, Units& u, size_t metrics,
                  const std::vector<std::vector<uint64_t>>& weights) {
  const size_t n = u.names.size();
  u.begin.assign(n + 1, 0);
  for (uint32_t x : u.of_strand)
    if (x != kNone) ++u.begin[x + 1];
  for (size_t i = 0; i < n; ++i) u.begin[i + 1] += u.begin[i];
  u.strands.assign(u.begin[n], 0);
  std::vector<uint32_t> fill(u.begin.begin(), u.begin.end() - 1);
  for (uint32_t s = 0; s < m.strands.size(); ++s)
    if (u.of_strand[s] != kNone) u.strands[fill[u.of_strand[s]]++] = s;
  u.sums.assign(n, std::vector<uint64_t>(metrics, 0));
  for (size_t k = 0; k < metrics; ++k)
    for (uint32_t s = 0; s < m.strands.size(); ++s)
      if (u.of_strand[s] != kNone) u.sums[u.of_strand[s]][k] += weights[k][s];
}

Side make_side(const DiffInput& in, const std::vector<std::string>& metrics) {
  Side side;
  const Model& m = *in.model;
  side.m = &m;
  const std::vector<std::string> own = metric_names(m);
  const size_t n = m.strands.size();
  for (const std::string& name : metrics) {
    const size_t index = static_cast<size_t>(std::find(own.begin(), own.end(), name) - own.begin());
    std::vector<uint64_t> w(n);
    uint64_t total = 0;
    for (uint32_t s = 0; s < n; ++s) total += w[s] = metric_amount(m, index, s);
    std::vector<uint32_t> path;
    side.span.push_back(longest_path(m, &path, w.data()));
    std::vector<uint8_t> on(n, 0);
    for (uint32_t s : path) on[s] = 1;
    side.on_path.push_back(std::move(on));
    side.work.push_back(total);
    side.weights.push_back(std::move(w));
  }
  // Sites, by name and kind.
  std::vector<uint32_t> unit_of_site(m.sites.size(), kNone);
  for (uint32_t x = 0; x < m.sites.size(); ++x) {
    const std::string name = x < in.site_names.size() ? in.site_names[x] : "";
    auto [it, inserted] = side.sites.by_key.try_emplace(
        site_key(name, m.sites[x].kind), static_cast<uint32_t>(side.sites.names.size()));
    if (inserted) {
      side.sites.names.push_back(name);
      side.sites.site_kinds.push_back(m.sites[x].kind);
      side.sites.ids.emplace_back();
    }
    side.sites.ids[it->second].push_back(x);
    unit_of_site[x] = it->second;
  }
  // Fragment groups, by name.
  std::vector<uint32_t> unit_of_group(in.fragment_names.size(), kNone);
  for (uint32_t g = 0; g < in.fragment_names.size(); ++g) {
    auto [it, inserted] = side.fragments.by_key.try_emplace(
        in.fragment_names[g], static_cast<uint32_t>(side.fragments.names.size()));
    if (inserted) {
      side.fragments.names.push_back(in.fragment_names[g]);
      side.fragments.site_kinds.push_back(model::SiteKind::Program);
      side.fragments.ids.emplace_back();
    }
    side.fragments.ids[it->second].push_back(g);
    unit_of_group[g] = it->second;
  }
  side.sites.of_strand.assign(n, kNone);
  side.fragments.of_strand.assign(n, kNone);
  for (uint32_t s = 0; s < n; ++s) {
    const model::Strand& st = m.strands[s];
    if (st.site < unit_of_site.size()) side.sites.of_strand[s] = unit_of_site[st.site];
    if (st.fragment < in.fragment_group.size()) {
      const uint32_t g = in.fragment_group[st.fragment];
      if (g < unit_of_group.size()) side.fragments.of_strand[s] = unit_of_group[g];
    }
  }
  finish_units(m, side.sites, metrics.size(), side.weights);
  finish_units(m, side.fragments, metrics.size(), side.weights);
  return side;
}

DiffSide summary(const Side& side, const DiffInput& in, const std::vector<std::string>& metrics) {
  const Model& m = *in.model;
  DiffSide d;
  d.threads = m.thread_count;
  d.strands = m.strands.size();
  d.tasks = m.task_count;
  d.work = side.work;
  d.span = side.span;
  const std::vector<std::string> own = metric_names(m);
  for (const std::string& name : metrics)
    d.metric_index.push_back(
        static_cast<size_t>(std::find(own.begin(), own.end(), name) - own.begin()));
  std::vector<uint32_t> threads;
  uint64_t first = std::numeric_limits<uint64_t>::max(), last = 0;
  for (const model::Strand& st : m.strands) {
    if (st.thread != kNone) threads.push_back(st.thread);
    if (st.start != 0) first = std::min(first, st.start);
    if (st.end != 0) last = std::max(last, st.end);
  }
  std::sort(threads.begin(), threads.end());
  d.workers = static_cast<uint32_t>(std::unique(threads.begin(), threads.end()) - threads.begin());
  d.elapsed = last > first ? last - first : 0;
  return d;
}

// A recording's units as diff_of takes them: their sums, and their part of each critical path.
std::vector<DiffUnitFigures> unit_figures(const Side& side, const Units& u) {
  std::vector<DiffUnitFigures> out(u.names.size());
  const size_t metrics = side.span.size();
  for (uint32_t x = 0; x < out.size(); ++x) {
    DiffUnitFigures& f = out[x];
    f.name = u.names[x];
    f.site_kind = u.site_kinds[x];
    f.ids = u.ids[x];
    f.strands = u.begin[x + 1] - u.begin[x];
    f.work = u.sums[x];
    f.critical.assign(metrics, 0);
    f.on_path.assign(metrics, 0);
    for (size_t k = 0; k < metrics; ++k)
      for (uint32_t i = u.begin[x]; i < u.begin[x + 1]; ++i) {
        const uint32_t s = u.strands[i];
        if (!side.on_path[k][s]) continue;
        f.critical[k] += path_weight(*side.m, s, side.weights[k][s]);
        ++f.on_path[k];
      }
  }
  return out;
}

// Other's span in metric k with the given strands scaled by base / other (their unit's work),
// restoring the weights afterwards.
uint64_t scaled_span(Side& other, size_t k, const uint32_t* strands, size_t count, uint64_t base,
                     uint64_t other_work) {
  std::vector<uint64_t>& w = other.weights[k];
  std::vector<uint64_t> saved(count);
  for (size_t i = 0; i < count; ++i) {
    saved[i] = w[strands[i]];
    w[strands[i]] = scale_amount(saved[i], base, other_work);
  }
  const uint64_t span = longest_path(*other.m, nullptr, w.data());
  for (size_t i = 0; i < count; ++i) w[strands[i]] = saved[i];
  return span;
}

double ratio_of(uint64_t other, uint64_t base) {
  return base == 0 ? std::numeric_limits<double>::quiet_NaN()
                   : static_cast<double>(other) / static_cast<double>(base);
}

// A span to ask for (`request`) and the figure it goes to.
struct Pending {
  ScaledSpan request;
  UnitDiff* unit;
};

// The metric columns of a matched unit (its cost is asked for, unless it has none: small, the
// same work, no work in other, or more work and nothing on other's critical path).
void fill_metrics(UnitDiff& u, uint32_t other_unit, const std::vector<uint64_t>& base_work,
                  const std::vector<uint64_t>& other_work,
                  const std::vector<uint64_t>& other_critical,
                  const std::vector<uint64_t>& other_on_path, std::vector<Pending>& pending) {
  u.metrics.resize(base_work.size());
  for (size_t k = 0; k < base_work.size(); ++k) {
    MetricDiff& d = u.metrics[k];
    d.base = base_work[k];
    d.other = other_work[k];
    d.ratio = ratio_of(d.other, d.base);
    d.inflation = static_cast<int64_t>(d.other) - static_cast<int64_t>(d.base);
    d.critical = other_critical[k];
    const bool no_cost =
        u.small || d.other == d.base || d.other == 0 || (d.other > d.base && other_on_path[k] == 0);
    if (!no_cost) pending.push_back({{u.kind, other_unit, k, d.base, d.other}, &u});
  }
}

std::vector<UnitDiff> match(DiffUnitKind kind, const DiffFigures& base, const DiffFigures& other,
                            size_t sort, double min_share, Diff& out,
                            std::vector<Pending>& pending) {
  const bool sites = kind == DiffUnitKind::Site;
  const std::vector<DiffUnitFigures>& bu = sites ? base.sites : base.fragments;
  const std::vector<DiffUnitFigures>& ou = sites ? other.sites : other.fragments;
  auto key = [sites](const DiffUnitFigures& u) {
    return sites ? site_key(u.name, u.site_kind) : u.name;
  };
  std::unordered_map<std::string, uint32_t> other_by_key;
  for (uint32_t o = 0; o < ou.size(); ++o) other_by_key.emplace(key(ou[o]), o);
  std::vector<uint8_t> matched(ou.size(), 0);
  std::vector<UnitDiff> rows;
  rows.reserve(bu.size());  // `pending` points into it
  for (const DiffUnitFigures& b : bu) {
    auto it = other_by_key.find(key(b));
    if (it == other_by_key.end()) {
      out.only_base.push_back({kind, b.name, b.site_kind, b.ids, b.work[sort]});
      continue;
    }
    const DiffUnitFigures& o = ou[it->second];
    matched[it->second] = 1;
    UnitDiff& u = rows.emplace_back();
    u.kind = kind;
    u.name = b.name;
    u.site_kind = b.site_kind;
    u.base_ids = b.ids;
    u.other_ids = o.ids;
    u.base_strands = b.strands;
    u.other_strands = o.strands;
    u.small =
        static_cast<double>(b.work[sort]) < min_share * static_cast<double>(base.side.work[sort]) &&
        static_cast<double>(o.work[sort]) < min_share * static_cast<double>(other.side.work[sort]);
    fill_metrics(u, it->second, b.work, o.work, o.critical, o.on_path, pending);
    if (sites && u.site_kind != model::SiteKind::Program) ++out.matched_construct_sites;
  }
  for (uint32_t o = 0; o < ou.size(); ++o)
    if (!matched[o])
      out.only_other.push_back({kind, ou[o].name, ou[o].site_kind, ou[o].ids, ou[o].work[sort]});
  return rows;
}

// Small units apart, each list in its order (diff.hpp's "Order").
void place(std::vector<UnitDiff> rows, size_t sort, std::vector<UnitDiff>& big,
           std::vector<UnitDiff>& small) {
  for (UnitDiff& u : rows) (u.small ? small : big).push_back(std::move(u));
  std::sort(big.begin(), big.end(), [sort](const UnitDiff& a, const UnitDiff& b) {
    const MetricDiff &x = a.metrics[sort], &y = b.metrics[sort];
    if (x.cost != y.cost) return x.cost > y.cost;
    if (x.inflation != y.inflation) return x.inflation > y.inflation;
    if (a.name != b.name) return a.name < b.name;
    return a.site_kind < b.site_kind;
  });
  std::sort(small.begin(), small.end(), [sort](const UnitDiff& a, const UnitDiff& b) {
    if (a.metrics[sort].other != b.metrics[sort].other)
      return a.metrics[sort].other > b.metrics[sort].other;
    if (a.name != b.name) return a.name < b.name;
    return a.site_kind < b.site_kind;
  });
}

DiffFigures figures_of(const Side& side, const DiffInput& in,
                       const std::vector<std::string>& metrics) {
  DiffFigures f;
  f.side = summary(side, in, metrics);
  f.sites = unit_figures(side, side.sites);
  f.fragments = unit_figures(side, side.fragments);
  return f;
}

// The spans of other rescaled, unit by unit, on its DAG (`other` is shared with the caller's
// function, which may outlive this call).
std::vector<uint64_t> rescaled_spans(Side& other, const std::vector<ScaledSpan>& requests) {
  std::vector<uint32_t> all(other.m->strands.size());
  for (uint32_t s = 0; s < all.size(); ++s) all[s] = s;
  std::vector<uint64_t> out;
  for (const ScaledSpan& r : requests) {
    const Units& u = r.kind == DiffUnitKind::Site ? other.sites : other.fragments;
    const bool program = r.kind == DiffUnitKind::Program;
    const uint32_t* strands = program ? all.data() : u.strands.data() + u.begin[r.unit];
    const size_t count = program ? all.size() : u.begin[r.unit + 1] - u.begin[r.unit];
    out.push_back(scaled_span(other, r.metric, strands, count, r.base, r.other));
  }
  return out;
}

}  // namespace

std::string site_key(const std::string& name, model::SiteKind kind) {
  return name + '\x1f' + model::to_string(kind);
}

const char* to_string(DiffUnitKind kind) {
  switch (kind) {
    case DiffUnitKind::Program:
      return "program";
    case DiffUnitKind::Site:
      return "site";
    case DiffUnitKind::Fragment:
      return "fragment";
  }
  return "unknown";
}

std::vector<std::string> metric_names(const Model& m) {
  std::vector<std::string> names{m.metric};
  names.insert(names.end(), m.extra_metrics.begin(), m.extra_metrics.end());
  return names;
}

std::vector<std::string> common_metrics(const Model& base, const Model& other) {
  const std::vector<std::string> theirs = metric_names(other);
  std::vector<std::string> common;
  for (const std::string& name : metric_names(base))
    if (std::find(theirs.begin(), theirs.end(), name) != theirs.end() &&
        std::find(common.begin(), common.end(), name) == common.end())
      common.push_back(name);
  return common;
}

uint64_t metric_amount(const Model& m, size_t index, uint32_t s) {
  if (index == 0) return m.strands[s].work;
  const size_t at = (index - 1) * m.strands.size() + s;
  return at < m.extra_work.size() ? m.extra_work[at] : 0;
}

uint64_t scale_amount(uint64_t amount, uint64_t base, uint64_t other) {
  const double scale = other == 0 ? 1.0 : static_cast<double>(base) / static_cast<double>(other);
  return static_cast<uint64_t>(std::llround(static_cast<double>(amount) * scale));
}

std::pair<std::vector<std::string>, size_t> diff_metrics(const std::vector<std::string>& base,
                                                         const std::vector<std::string>& other,
                                                         const std::string& sort_metric) {
  std::vector<std::string> common;
  for (const std::string& name : base)
    if (std::find(other.begin(), other.end(), name) != other.end() &&
        std::find(common.begin(), common.end(), name) == common.end())
      common.push_back(name);
  if (common.empty()) throw std::invalid_argument("the two recordings have no metric in common");
  size_t sort = 0;
  if (!sort_metric.empty()) {
    auto it = std::find(common.begin(), common.end(), sort_metric);
    if (it == common.end())
      throw std::invalid_argument("metric " + sort_metric + " is not in both recordings");
    sort = static_cast<size_t>(it - common.begin());
  }
  return {common, sort};
}

Diff diff_of(const DiffFigures& base, const DiffFigures& other,
             const std::vector<std::string>& metrics, size_t sort, const DiffOptions& opt,
             const ScaledSpans& spans) {
  Diff d;
  d.metrics = metrics;
  d.sort_metric = sort;
  d.min_share = opt.min_share;
  d.base = base.side;
  d.other = other.side;
  std::vector<Pending> pending;
  // The program: every strand; its work on other's critical path is that path.
  d.program.kind = DiffUnitKind::Program;
  d.program.name = "<whole program>";
  d.program.base_strands = base.side.strands;
  d.program.other_strands = other.side.strands;
  const std::vector<uint64_t> path_strands(metrics.size(), other.side.strands > 0 ? 1 : 0);
  fill_metrics(d.program, 0, base.side.work, other.side.work, other.side.span, path_strands,
               pending);
  std::vector<UnitDiff> sites =
      match(DiffUnitKind::Site, base, other, sort, opt.min_share, d, pending);
  std::vector<UnitDiff> fragments =
      match(DiffUnitKind::Fragment, base, other, sort, opt.min_share, d, pending);
  std::vector<ScaledSpan> requests;
  for (const Pending& p : pending) requests.push_back(p.request);
  const std::vector<uint64_t> scaled = requests.empty() ? std::vector<uint64_t>() : spans(requests);
  if (scaled.size() != requests.size())
    throw std::logic_error("diff_of: the spans asked for did not all come back");
  for (size_t i = 0; i < pending.size(); ++i) {
    const size_t k = pending[i].request.metric;
    pending[i].unit->metrics[k].cost =
        static_cast<int64_t>(other.side.span[k]) - static_cast<int64_t>(scaled[i]);
  }
  for (std::vector<UnitDiff>* rows : {&sites, &fragments})
    for (UnitDiff& u : *rows)
      for (size_t k = 0; k < u.metrics.size(); ++k)
        u.metrics[k].cost_percent = other.side.span[k]
                                        ? 100.0 * static_cast<double>(u.metrics[k].cost) /
                                              static_cast<double>(other.side.span[k])
                                        : 0.0;
  for (size_t k = 0; k < d.program.metrics.size(); ++k)
    d.program.metrics[k].cost_percent =
        other.side.span[k] ? 100.0 * static_cast<double>(d.program.metrics[k].cost) /
                                 static_cast<double>(other.side.span[k])
                           : 0.0;
  place(std::move(sites), sort, d.sites, d.small_sites);
  place(std::move(fragments), sort, d.fragments, d.small_fragments);
  auto by_work = [](const UnmatchedUnit& a, const UnmatchedUnit& b) {
    if (a.kind != b.kind) return a.kind < b.kind;
    if (a.work != b.work) return a.work > b.work;
    return a.name < b.name;
  };
  std::sort(d.only_base.begin(), d.only_base.end(), by_work);
  std::sort(d.only_other.begin(), d.only_other.end(), by_work);
  return d;
}

DiffFigures dag_diff_figures(const DiffInput& in, const std::vector<std::string>& metrics) {
  return figures_of(make_side(in, metrics), in, metrics);
}

ScaledSpans dag_scaled_spans(const DiffInput& other, const std::vector<std::string>& metrics) {
  auto side = std::make_shared<Side>(make_side(other, metrics));
  return
      [side](const std::vector<ScaledSpan>& requests) { return rescaled_spans(*side, requests); };
}

Diff compute_diff(const DiffInput& base_in, const DiffInput& other_in, const DiffOptions& opt) {
  const auto [metrics, sort] =
      diff_metrics(metric_names(*base_in.model), metric_names(*other_in.model), opt.sort_metric);
  Side base = make_side(base_in, metrics);
  Side other = make_side(other_in, metrics);
  return diff_of(figures_of(base, base_in, metrics), figures_of(other, other_in, metrics), metrics,
                 sort, opt,
                 [&other](const std::vector<ScaledSpan>& r) { return rescaled_spans(other, r); });
}

}  // namespace tasklens::analysis
