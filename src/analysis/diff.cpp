// Differential analysis: see diff.hpp for the definitions. Units are grouped per recording with
// one linear pass over the strands (a unit index per strand), so every sum is O(V) per metric; a
// cost is one longest-path pass over other's DAG with the unit's strands rescaled in place.
#include "analysis/diff.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
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

std::string site_key(const std::string& name, model::SiteKind kind) {
  return name + '\x1f' + model::to_string(kind);
}

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

double ratio_of(uint64_t other, uint64_t base) {
  return base == 0 ? std::numeric_limits<double>::quiet_NaN()
                   : static_cast<double>(other) / static_cast<double>(base);
}

// Other's span in metric k with the given strands scaled by base / other (their unit's work),
// restoring the weights afterwards.
uint64_t scaled_span(Side& other, size_t k, const uint32_t* strands, size_t count, uint64_t base,
                     uint64_t other_work) {
  std::vector<uint64_t>& w = other.weights[k];
  std::vector<uint64_t> saved(count);
  const double scale =
      other_work == 0 ? 1.0 : static_cast<double>(base) / static_cast<double>(other_work);
  for (size_t i = 0; i < count; ++i) {
    saved[i] = w[strands[i]];
    w[strands[i]] = static_cast<uint64_t>(std::llround(static_cast<double>(saved[i]) * scale));
  }
  const uint64_t span = longest_path(*other.m, nullptr, w.data());
  for (size_t i = 0; i < count; ++i) w[strands[i]] = saved[i];
  return span;
}

// The metric columns of a matched unit; costs are left 0 for small units.
void fill_metrics(UnitDiff& u, Side& other, const std::vector<uint64_t>& base_sums,
                  const std::vector<uint64_t>& other_sums, const uint32_t* strands, size_t count) {
  const size_t metrics = base_sums.size();
  u.metrics.resize(metrics);
  for (size_t k = 0; k < metrics; ++k) {
    MetricDiff& d = u.metrics[k];
    d.base = base_sums[k];
    d.other = other_sums[k];
    d.ratio = ratio_of(d.other, d.base);
    d.inflation = static_cast<int64_t>(d.other) - static_cast<int64_t>(d.base);
    bool on_path = false;
    for (size_t i = 0; i < count; ++i)
      if (other.on_path[k][strands[i]]) {
        d.critical += path_weight(*other.m, strands[i], other.weights[k][strands[i]]);
        on_path = true;
      }
    const bool no_cost =
        u.small || d.other == d.base || d.other == 0 || (d.other > d.base && !on_path);
    if (!no_cost) {
      const uint64_t span = scaled_span(other, k, strands, count, d.base, d.other);
      d.cost = static_cast<int64_t>(other.span[k]) - static_cast<int64_t>(span);
    }
    d.cost_percent = other.span[k] ? 100.0 * static_cast<double>(d.cost) / other.span[k] : 0.0;
  }
}

void match(DiffUnitKind kind, Side& base, Side& other, Units& bu, Units& ou, double min_share,
           size_t sort, Diff& out) {
  std::vector<uint8_t> matched(ou.names.size(), 0);
  std::vector<UnitDiff> rows;
  for (uint32_t b = 0; b < bu.names.size(); ++b) {
    const std::string key =
        kind == DiffUnitKind::Site ? site_key(bu.names[b], bu.site_kinds[b]) : bu.names[b];
    auto it = ou.by_key.find(key);
    if (it == ou.by_key.end()) {
      out.only_base.push_back({kind, bu.names[b], bu.site_kinds[b], bu.ids[b], bu.sums[b][sort]});
      continue;
    }
    const uint32_t o = it->second;
    matched[o] = 1;
    UnitDiff u;
    u.kind = kind;
    u.name = bu.names[b];
    u.site_kind = bu.site_kinds[b];
    u.base_ids = bu.ids[b];
    u.other_ids = ou.ids[o];
    u.base_strands = bu.begin[b + 1] - bu.begin[b];
    u.other_strands = ou.begin[o + 1] - ou.begin[o];
    const double bw = static_cast<double>(bu.sums[b][sort]);
    const double ow = static_cast<double>(ou.sums[o][sort]);
    u.small = bw < min_share * static_cast<double>(base.work[sort]) &&
              ow < min_share * static_cast<double>(other.work[sort]);
    fill_metrics(u, other, bu.sums[b], ou.sums[o], ou.strands.data() + ou.begin[o],
                 ou.begin[o + 1] - ou.begin[o]);
    if (kind == DiffUnitKind::Site && u.site_kind != model::SiteKind::Program)
      ++out.matched_construct_sites;
    rows.push_back(std::move(u));
  }
  for (uint32_t o = 0; o < ou.names.size(); ++o)
    if (!matched[o])
      out.only_other.push_back({kind, ou.names[o], ou.site_kinds[o], ou.ids[o], ou.sums[o][sort]});
  std::vector<UnitDiff>& big = kind == DiffUnitKind::Site ? out.sites : out.fragments;
  std::vector<UnitDiff>& small = kind == DiffUnitKind::Site ? out.small_sites : out.small_fragments;
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

}  // namespace

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

Diff compute_diff(const DiffInput& base_in, const DiffInput& other_in, const DiffOptions& opt) {
  Diff d;
  d.metrics = common_metrics(*base_in.model, *other_in.model);
  if (d.metrics.empty()) throw std::invalid_argument("the two recordings have no metric in common");
  if (!opt.sort_metric.empty()) {
    auto it = std::find(d.metrics.begin(), d.metrics.end(), opt.sort_metric);
    if (it == d.metrics.end())
      throw std::invalid_argument("metric " + opt.sort_metric + " is not in both recordings");
    d.sort_metric = static_cast<size_t>(it - d.metrics.begin());
  }
  d.min_share = opt.min_share;
  Side base = make_side(base_in, d.metrics);
  Side other = make_side(other_in, d.metrics);
  d.base = summary(base, base_in, d.metrics);
  d.other = summary(other, other_in, d.metrics);

  // The program: every strand.
  d.program.kind = DiffUnitKind::Program;
  d.program.name = "<whole program>";
  d.program.base_strands = base_in.model->strands.size();
  d.program.other_strands = other_in.model->strands.size();
  std::vector<uint32_t> all(other_in.model->strands.size());
  for (uint32_t s = 0; s < all.size(); ++s) all[s] = s;
  fill_metrics(d.program, other, base.work, other.work, all.data(), all.size());

  match(DiffUnitKind::Site, base, other, base.sites, other.sites, opt.min_share, d.sort_metric, d);
  match(DiffUnitKind::Fragment, base, other, base.fragments, other.fragments, opt.min_share,
        d.sort_metric, d);
  auto by_work = [](const UnmatchedUnit& a, const UnmatchedUnit& b) {
    if (a.kind != b.kind) return a.kind < b.kind;
    if (a.work != b.work) return a.work > b.work;
    return a.name < b.name;
  };
  std::sort(d.only_base.begin(), d.only_base.end(), by_work);
  std::sort(d.only_other.begin(), d.only_other.end(), by_work);
  return d;
}

}  // namespace tasklens::analysis
