// Task sizes and waiting times per task type: linear passes over nodes and strands, one sort of
// the timed strands by thread (for idle times), and one sort per type's samples (percentiles).
#include "analysis/tasks.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <map>
#include <utility>

namespace tasklens::analysis {
namespace {

using model::kNone;
using model::Model;
using model::NodeKind;
using model::SiteKind;

using model::is_timed;

int octave(uint64_t v) { return static_cast<int>(std::bit_width(v)); }

double ratio(double a, double b) {
  return b == 0 ? std::numeric_limits<double>::quiet_NaN() : a / b;
}

}  // namespace

bool is_task_site_kind(SiteKind kind) {
  switch (kind) {
    case SiteKind::Task:
    case SiteKind::Taskloop:
    case SiteKind::Loop:
    case SiteKind::ParallelFor:
    case SiteKind::ParallelReduce:
    case SiteKind::ParallelInvoke:
    case SiteKind::ParallelSort:
    case SiteKind::TbbAlgorithm:
    case SiteKind::ArenaExecute:
      return true;
    default:
      return false;
  }
}

// Per node: the innermost task (Task node or loop chunk) containing it, itself included, the
// nearest site set on it or above it, and whether it is a loop chunk. Parents come before
// children (preorder).
static void task_owners(const Model& m, std::vector<uint32_t>& owner,
                        std::vector<uint32_t>& site_of, std::vector<uint8_t>& chunk) {
  const uint32_t num_nodes = static_cast<uint32_t>(m.nodes.size());
  owner.assign(num_nodes, kNone);
  site_of.assign(num_nodes, 0);
  chunk.assign(num_nodes, 0);
  for (uint32_t v = 0; v < num_nodes; ++v) {
    const model::Node& node = m.nodes[v];
    const uint32_t parent = node.parent < v ? node.parent : kNone;
    const bool is_chunk =
        node.kind == NodeKind::Chunk && parent != kNone && m.nodes[parent].kind == NodeKind::Loop;
    chunk[v] = is_chunk;
    owner[v] = node.kind == NodeKind::Task || is_chunk ? v
               : parent == kNone                       ? kNone
                                                       : owner[parent];
    site_of[v] = node.site < m.sites.size() ? node.site : parent == kNone ? 0 : site_of[parent];
  }
}

std::vector<TypeSizes> task_sizes(const Model& m, uint64_t tiny_size) {
  const uint32_t num_nodes = static_cast<uint32_t>(m.nodes.size());
  // Per node: its innermost task (as task_samples), and per task node its own strands' work.
  std::vector<uint32_t> owner, site_of;
  std::vector<uint8_t> chunk;
  task_owners(m, owner, site_of, chunk);
  std::vector<uint64_t> size(num_nodes, 0);
  std::vector<uint8_t> ran(num_nodes, 0);
  for (const model::Strand& st : m.strands) {
    const uint32_t u = st.node < num_nodes ? owner[st.node] : kNone;
    if (u == kNone) continue;
    size[u] += st.work;
    ran[u] = 1;
  }
  std::map<std::pair<uint32_t, bool>, std::vector<uint64_t>> groups;
  for (uint32_t v = 0; v < num_nodes; ++v)
    if (ran[v] && owner[v] == v && is_task_site_kind(m.sites[site_of[v]].kind))
      groups[{site_of[v], chunk[v] != 0}].push_back(size[v]);
  std::vector<TypeSizes> out;
  for (auto& [key, sizes] : groups) {
    TypeSizes t;
    t.site = key.first;
    t.chunks = key.second;
    t.count = sizes.size();
    for (uint64_t x : sizes) {
      t.total += x;
      t.max = std::max(t.max, x);
      if (x < tiny_size) ++t.tiny;
    }
    auto mid = sizes.begin() + static_cast<std::ptrdiff_t>((sizes.size() - 1) / 2);
    std::nth_element(sizes.begin(), mid, sizes.end());
    t.median = *mid;
    out.push_back(t);
  }
  return out;
}

std::vector<TaskSample> task_samples(const Model& m) {
  const uint32_t num_nodes = static_cast<uint32_t>(m.nodes.size());
  const uint32_t n = static_cast<uint32_t>(m.strands.size());
  std::vector<uint32_t> owner, site_of;
  std::vector<uint8_t> chunk;
  task_owners(m, owner, site_of, chunk);

  // Effective end of every strand: its end when timed, else the latest of its predecessors'.
  std::vector<uint64_t> eff_end(n, 0);
  for (uint32_t s = 0; s < n; ++s) {
    if (is_timed(m.strands[s])) {
      eff_end[s] = m.strands[s].end;
      continue;
    }
    for (uint32_t p : m.preds_of(s)) eff_end[s] = std::max(eff_end[s], eff_end[p]);
  }

  // Per task node: its sample index; sizes and first strands.
  std::vector<uint32_t> index(num_nodes, kNone), first(num_nodes, kNone);
  std::vector<TaskSample> samples;
  for (uint32_t s = 0; s < n; ++s) {
    const uint32_t node = m.strands[s].node;
    const uint32_t u = node < num_nodes ? owner[node] : kNone;
    if (u == kNone) continue;
    if (index[u] == kNone) {
      if (!is_task_site_kind(m.sites[site_of[u]].kind)) continue;
      index[u] = static_cast<uint32_t>(samples.size());
      first[u] = s;
      TaskSample t;
      t.node = u;
      t.site = site_of[u];
      t.chunk = chunk[u];
      samples.push_back(t);
    }
    samples[index[u]].size += m.strands[s].work;
  }

  // Idle before start: the latest end among the strands each thread ran before (by start).
  std::vector<uint32_t> order;
  for (uint32_t s = 0; s < n; ++s)
    if (is_timed(m.strands[s])) order.push_back(s);
  std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    const model::Strand &x = m.strands[a], &y = m.strands[b];
    if (x.thread != y.thread) return x.thread < y.thread;
    if (x.start != y.start) return x.start < y.start;
    return a < b;
  });
  std::vector<uint64_t> busy_until(n, kNoTime);  // kNoTime: the thread's first strand
  for (size_t i = 1; i < order.size(); ++i) {
    const model::Strand& prev = m.strands[order[i - 1]];
    if (prev.thread != m.strands[order[i]].thread) continue;
    const uint64_t before = busy_until[order[i - 1]];
    busy_until[order[i]] = before == kNoTime ? prev.end : std::max(before, prev.end);
  }

  for (TaskSample& t : samples) {
    const uint32_t f = first[t.node];
    const model::Strand& st = m.strands[f];
    if (!is_timed(st) || st.start == 0) continue;
    uint64_t ready = 0;
    for (uint32_t p : m.preds_of(f)) ready = std::max(ready, eff_end[p]);
    if (ready != 0) t.wait = st.start > ready ? st.start - ready : 0;
    if (busy_until[f] != kNoTime) t.idle = st.start > busy_until[f] ? st.start - busy_until[f] : 0;
  }
  return samples;
}

uint64_t percentile(const std::vector<uint64_t>& sorted, double p) {
  if (sorted.empty()) return 0;
  const double n = static_cast<double>(sorted.size());
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * n - 1e-9));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

Stats stats_of(std::vector<uint64_t>& values) {
  Stats st;
  if (values.empty()) return st;
  std::sort(values.begin(), values.end());
  st.samples = values.size();
  for (uint64_t v : values) st.total += v;
  st.mean = static_cast<double>(st.total) / static_cast<double>(st.samples);
  st.min = values.front();
  st.max = values.back();
  st.median = percentile(values, 50);
  st.p90 = percentile(values, 90);
  return st;
}

double Histogram::lower(size_t bin) const {
  return bin == 0 ? 0.0 : std::ldexp(1.0, lo + static_cast<int>(bin) * width - 1);
}

double Histogram::upper(size_t bin) const {
  return std::ldexp(1.0, lo + static_cast<int>(bin + 1) * width - 1);
}

std::vector<Histogram> log2_histograms(const std::vector<const std::vector<uint64_t>*>& sets,
                                       unsigned max_bins) {
  std::vector<std::array<uint64_t, 65>> octaves(sets.size());
  for (size_t k = 0; k < sets.size(); ++k) {
    octaves[k].fill(0);
    for (uint64_t v : *sets[k]) ++octaves[k][static_cast<size_t>(octave(v))];
  }
  std::vector<const std::array<uint64_t, 65>*> of;
  for (const auto& o : octaves) of.push_back(&o);
  return log2_histograms_of_octaves(of, max_bins);
}

std::vector<Histogram> log2_histograms_of_octaves(
    const std::vector<const std::array<uint64_t, 65>*>& sets, unsigned max_bins) {
  max_bins = std::max(1u, max_bins);
  int lo = 65, hi = 0;
  bool any = false;
  for (const auto* set : sets)
    for (int o = 0; o < 65; ++o) {
      if ((*set)[static_cast<size_t>(o)] == 0) continue;
      any = true;
      if (o == 0) continue;
      lo = std::min(lo, o);
      hi = std::max(hi, o);
    }
  std::vector<Histogram> out(sets.size());
  if (!any) return out;
  if (hi == 0) lo = hi = 0;  // only zeros: one bin [0, 1)
  const int octaves = hi - lo + 1;
  const int width = (octaves + static_cast<int>(max_bins) - 1) / static_cast<int>(max_bins);
  const int bins = (octaves + width - 1) / width;
  for (size_t k = 0; k < sets.size(); ++k) {
    Histogram& h = out[k];
    h.lo = lo;
    h.width = width;
    h.counts.assign(static_cast<size_t>(bins), 0);
    for (int o = 0; o < 65; ++o)
      if (const uint64_t n = (*sets[k])[static_cast<size_t>(o)])
        h.counts[static_cast<size_t>((std::max(o, lo) - lo) / width)] += n;
  }
  return out;
}

const char* to_string(FindingKind kind) {
  switch (kind) {
    case FindingKind::ManyTinyTasks:
      return "many-tiny-tasks";
    case FindingKind::IdleLongerThanRunning:
      return "idle-longer-than-running";
    case FindingKind::QueuedLongerThanRunning:
      return "queued-longer-than-running";
    case FindingKind::FewLargeTasks:
      return "few-large-tasks";
    case FindingKind::DominantTask:
      return "dominant-task";
    case FindingKind::RareLongWaits:
      return "rare-long-waits";
  }
  return "?";
}

const char* to_string(ComparisonKind kind) {
  switch (kind) {
    case ComparisonKind::SizeInflation:
      return "size-inflation";
    case ComparisonKind::SizeDeflation:
      return "size-deflation";
    case ComparisonKind::CountChanged:
      return "count-changed";
    case ComparisonKind::ShapeChanged:
      return "shape-changed";
  }
  return "?";
}

TaskOptions default_task_options(const Model& m, double tsc_hz, unsigned bins) {
  return default_task_options(m.metric, m.task_cost, tsc_hz, bins);
}

TaskOptions default_task_options(const std::string& metric, uint64_t task_cost, double tsc_hz,
                                 unsigned bins) {
  TaskOptions o;
  o.bins = bins;
  const bool tsc = metric == "tsc";
  o.same_unit = tsc;
  if (metric == "task-clock") {
    o.tiny_size = 1000;  // ns of CPU time
    o.ticks_to_work = tsc_hz > 0 ? 1e9 / tsc_hz : 0;
  } else if (tsc || metric == "cycles" || metric == "ref-cycles" || metric == "instructions") {
    // tsc: exact; cycles and instructions: about one per TSC tick.
    o.tiny_size = tsc_hz > 0 ? static_cast<uint64_t>(std::llround(tsc_hz * 1e-6)) : 0;
    o.ticks_to_work = 1.0;
  } else {
    // Counts of events (cache misses, page faults, ...: `record --metric` lists): no size is
    // tiny in them, and no time compares with them.
    o.tiny_size = 0;
    o.ticks_to_work = 0;
  }
  // What a task costs this program's runtime, measured, decides what is tiny where there is
  // such a measure (a time-like metric): the same figure advise and the report use.
  if (o.tiny_size > 0 && task_cost > 0) {
    o.tiny_size = task_cost * kTinyTaskCosts;
    o.tiny_from_task_cost = true;
  }
  o.long_wait_ticks = tsc_hz > 0 ? static_cast<uint64_t>(std::llround(tsc_hz * 100e-6)) : 1;
  return o;
}

TaskProfile compute_tasks(const Model& m, const TaskOptions& opt) {
  TaskProfile p;
  for (const model::Strand& s : m.strands) p.work += s.work;
  {
    std::vector<uint8_t> seen;
    for (const model::Strand& s : m.strands) {
      if (s.thread == kNone) continue;
      if (s.thread >= seen.size()) seen.resize(s.thread + 1, 0);
      if (!seen[s.thread]) ++p.workers;
      seen[s.thread] = 1;
    }
  }
  std::vector<TaskSample> samples = task_samples(m);
  p.tasks = samples.size();

  // Group by (site, chunk) in a deterministic order.
  std::map<std::pair<uint32_t, bool>, std::vector<uint32_t>> groups;
  for (uint32_t i = 0; i < samples.size(); ++i)
    groups[{samples[i].site, samples[i].chunk}].push_back(i);
  for (const auto& [key, members] : groups) {
    TaskType t;
    t.site = key.first;
    t.chunks = key.second;
    std::vector<uint64_t> sizes, waits, idles;
    for (uint32_t i : members) {
      const TaskSample& s = samples[i];
      sizes.push_back(s.size);
      ++t.size_octaves[static_cast<size_t>(octave(s.size))];
      if (s.size < opt.tiny_size) ++t.tiny;
      if (s.wait != kNoTime) waits.push_back(s.wait);
      if (s.idle != kNoTime) idles.push_back(s.idle);
    }
    if (!waits.empty() || !idles.empty()) p.timestamps = true;
    if (opt.same_unit) {
      auto h = log2_histograms({&sizes, &waits, &idles}, opt.bins);
      t.size_hist = h[0];
      t.wait_hist = h[1];
      t.idle_hist = h[2];
    } else {
      t.size_hist = log2_histograms({&sizes}, opt.bins)[0];
      auto h = log2_histograms({&waits, &idles}, opt.bins);
      t.wait_hist = h[0];
      t.idle_hist = h[1];
    }
    t.size = stats_of(sizes);
    t.wait = stats_of(waits);  // sorts waits
    t.long_wait_threshold = long_wait_threshold(t.wait, opt);
    t.long_waits = static_cast<uint64_t>(
        waits.end() - std::upper_bound(waits.begin(), waits.end(), t.long_wait_threshold));
    t.idle = stats_of(idles);
    p.task_work += t.size.total;
    p.types.push_back(std::move(t));
  }
  add_findings(p, opt);
  return p;
}

uint64_t long_wait_threshold(const Stats& wait, const TaskOptions& opt) {
  // Saturated: a damaged trace's p90 near 2^64 ticks times the factor is past uint64_t (the
  // fuzzer's finding; the cast of such a double is undefined behaviour).
  const double threshold = std::ceil(opt.long_wait_factor * static_cast<double>(wait.p90));
  return std::max(opt.long_wait_ticks, !(threshold > 0) ? uint64_t{0}
                                       : threshold >= 18446744073709551615.0
                                           ? ~uint64_t{0}
                                           : static_cast<uint64_t>(threshold));
}

void add_findings(TaskProfile& p, const TaskOptions& opt) {
  std::sort(p.types.begin(), p.types.end(), [](const TaskType& a, const TaskType& b) {
    if (a.size.total != b.size.total) return a.size.total > b.size.total;
    if (a.site != b.site) return a.site < b.site;
    return a.chunks < b.chunks;
  });
  p.findings.clear();
  for (size_t i = 0; i < p.types.size(); ++i) {
    const TaskType& t = p.types[i];
    const uint64_t count = t.size.samples;
    const double median = static_cast<double>(t.size.median);
    auto add = [&](FindingKind k) { p.findings.push_back({k, i}); };
    const bool tiny = opt.tiny_size > 0 && count >= opt.min_tasks &&
                      static_cast<double>(t.tiny) >= opt.tiny_share * static_cast<double>(count);
    if (tiny) add(FindingKind::ManyTinyTasks);
    // Idle and waiting times around tiny tasks are the overhead the first finding names already.
    const bool idle_long = !tiny && count >= opt.min_tasks && t.idle.samples > 0 &&
                           static_cast<double>(t.idle.median) * opt.ticks_to_work > median;
    if (idle_long) add(FindingKind::IdleLongerThanRunning);
    if (!tiny && !idle_long && count >= opt.min_tasks && t.wait.samples > 0 &&
        static_cast<double>(t.wait.median) * opt.ticks_to_work > median)
      add(FindingKind::QueuedLongerThanRunning);
    if (p.workers >= 2 && count < uint64_t{opt.few_per_worker} * p.workers && p.work > 0 &&
        static_cast<double>(t.size.total) >= opt.few_work_share * static_cast<double>(p.work))
      add(FindingKind::FewLargeTasks);
    if (p.workers >= 2 && count >= 2 && t.size.max * p.workers > t.size.total)
      add(FindingKind::DominantTask);
    const double allowed =
        std::max(1.0, std::floor(opt.long_wait_share * static_cast<double>(t.wait.samples)));
    if (count >= opt.min_tasks && t.long_waits >= 1 && static_cast<double>(t.long_waits) <= allowed)
      add(FindingKind::RareLongWaits);
  }
}

TaskComparison compare_tasks(const TaskProfile& base, const std::vector<std::string>& base_keys,
                             const TaskProfile& other, const std::vector<std::string>& other_keys,
                             const CompareOptions& opt) {
  auto key_of = [](const TaskProfile& p, const std::vector<std::string>& keys, size_t i) {
    const TaskType& t = p.types[i];
    std::string k = t.site < keys.size() ? keys[t.site] : std::to_string(t.site);
    return k + (t.chunks ? "|chunks" : "|tasks");
  };
  // Types are sorted by total size: the first with a key is the largest.
  std::map<std::string, size_t> in_other;
  for (size_t i = 0; i < other.types.size(); ++i) in_other.emplace(key_of(other, other_keys, i), i);
  TaskComparison c;
  std::vector<uint8_t> matched(other.types.size(), 0);
  std::map<std::string, bool> seen;
  for (size_t i = 0; i < base.types.size(); ++i) {
    const std::string k = key_of(base, base_keys, i);
    auto it = in_other.find(k);
    if (it == in_other.end() || !seen.emplace(k, true).second) {
      c.only_base.push_back(i);
      continue;
    }
    matched[it->second] = 1;
    const TaskType &a = base.types[i], &b = other.types[it->second];
    TypeComparison r;
    r.base = i;
    r.other = it->second;
    r.mean_ratio = ratio(b.size.mean, a.size.mean);
    r.median_ratio = ratio(static_cast<double>(b.size.median), static_cast<double>(a.size.median));
    double distance = 0;
    for (size_t o = 0; o < a.size_octaves.size(); ++o) {
      const double pa = a.size.samples ? double(a.size_octaves[o]) / double(a.size.samples) : 0;
      const double pb = b.size.samples ? double(b.size_octaves[o]) / double(b.size.samples) : 0;
      distance += std::fabs(pa - pb);
    }
    r.shape_distance = distance / 2;
    const size_t row = c.rows.size();
    c.rows.push_back(r);
    auto add = [&](ComparisonKind k) { c.findings.push_back({k, row}); };
    // NaN compares false: a zero base size is neither inflation nor deflation.
    if (r.median_ratio >= opt.inflation || r.mean_ratio >= opt.inflation)
      add(ComparisonKind::SizeInflation);
    else if (r.median_ratio <= opt.deflation && r.mean_ratio <= opt.deflation)
      add(ComparisonKind::SizeDeflation);
    const double ca = double(a.size.samples), cb = double(b.size.samples);
    if (std::fabs(cb - ca) > opt.count_change * std::max(ca, cb)) add(ComparisonKind::CountChanged);
    if (r.shape_distance > opt.shape_change) add(ComparisonKind::ShapeChanged);
  }
  for (size_t i = 0; i < other.types.size(); ++i)
    if (!matched[i]) c.only_other.push_back(i);
  return c;
}

}  // namespace tasklens::analysis
