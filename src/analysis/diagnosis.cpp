#include "analysis/diagnosis.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <utility>

#include "analysis/algebra.hpp"
#include "analysis/loops.hpp"

namespace tasklens::analysis {
namespace {

using model::SiteKind;

// DiagnosisFinding::kind() is the index of the figures' alternative.
template <DiagnosisKind kind, typename Figures>
constexpr bool kind_is =
    std::is_same_v<std::variant_alternative_t<static_cast<size_t>(kind), FindingFigures>, Figures>;
static_assert(kind_is<DiagnosisKind::SerialCode, SerialCode> &&
              kind_is<DiagnosisKind::TinyTasks, TinyTasks> &&
              kind_is<DiagnosisKind::FewTasks, FewTasks> &&
              kind_is<DiagnosisKind::UnevenShares, UnevenShares> &&
              kind_is<DiagnosisKind::TeamBound, TeamBound> &&
              kind_is<DiagnosisKind::RegionEntries, RegionEntries> &&
              kind_is<DiagnosisKind::WorkInflation, WorkInflation> &&
              kind_is<DiagnosisKind::WhatIfGain, WhatIfGain> &&
              kind_is<DiagnosisKind::LowParallelism, LowParallelism> &&
              kind_is<DiagnosisKind::Untrustworthy, Untrustworthy> &&
              kind_is<DiagnosisKind::CreationBound, CreationBound> &&
              std::variant_size_v<FindingFigures> == 11);

// The strand's code is outside every construct (the Program site).
bool is_serial(const model::Model& m, const model::Strand& st) {
  return st.site < m.sites.size() && m.sites[st.site].kind == SiteKind::Program;
}

void add(std::vector<DiagnosisFinding>& out, double weight, FindingFigures figures) {
  out.push_back({weight, std::move(figures)});
}

// Critical-path code outside every construct, by fragment group: the largest group and what the
// parallelism would be without it.
void serial_code(const DiagnosisInput& in, double target, std::vector<DiagnosisFinding>& out) {
  const model::Model& m = *in.model;
  const Profile& p = *in.profile;
  if (p.span == 0 || in.fragment_groups == 0 || !in.fragment_group) return;
  const std::vector<uint32_t>& group_of = *in.fragment_group;
  std::vector<uint64_t> crit(in.fragment_groups, 0);
  uint64_t serial = 0;
  for (uint32_t s : p.critical_path) {
    const model::Strand& st = m.strands[s];
    if (!is_serial(m, st) || st.fragment >= group_of.size()) continue;
    const uint64_t w = path_weight(m, s, st.work);
    crit[group_of[st.fragment]] += w;
    serial += w;
  }
  // Above the target the span does not limit the speedup on this machine (nor on 8 times its
  // cores): otherwise a fine-grained fib with a parallelism in the thousands on 2 cores has its
  // printing at the end, tens of microseconds, named first as half of its critical path.
  if (serial * 100 < kSerialCodePercent * p.span || p.parallelism >= target) return;
  SerialCode f;
  f.group = static_cast<uint32_t>(std::max_element(crit.begin(), crit.end()) - crit.begin());
  // The parallelism if that code took no time: one longest path without it.
  std::vector<uint64_t> weights(m.strands.size());
  for (uint32_t s = 0; s < m.strands.size(); ++s) {
    const model::Strand& st = m.strands[s];
    const bool mine =
        is_serial(m, st) && st.fragment < group_of.size() && group_of[st.fragment] == f.group;
    weights[s] = mine ? 0 : st.work;
  }
  uint64_t work_without = 0;
  for (uint64_t w : weights) work_without += w;
  f.serial = serial;
  f.group_critical = crit[f.group];
  f.span = p.span;
  f.parallelism = p.parallelism;
  f.parallelism_without = parallelism_of(work_without, longest_path(m, nullptr, weights.data()));
  // The share of the time on `target` cores that the serial code explains: that time is about
  // work / target + span (Brent), of which the span is 1 / (parallelism / target + 1).
  const double weight =
      static_cast<double>(serial) / static_cast<double>(p.span) / (p.parallelism / target + 1);
  add(out, weight, f);
}

// The workers' delay share, and how it was known: from the schedule (time between tasks with
// work ready), else, for a time metric, the share of the workers' time outside the program's
// code over the run (the runtime's overhead, and idling when there was nothing to run).
std::pair<DelaySource, double> workers_delay(const DiagnosisInput& in) {
  const model::Model& m = *in.model;
  if (in.schedule && in.schedule->cumulative > 0) {
    const SchedComponents& c = in.schedule->total;
    return {DelaySource::Schedule, static_cast<double>(c.delay + c.no_work_sched) /
                                       static_cast<double>(in.schedule->cumulative)};
  }
  if (m.thread_count > 0) {
    uint64_t first = UINT64_MAX, last = 0;
    for (const model::Strand& st : m.strands)
      if (model::is_timed(st)) {
        first = std::min(first, st.start);
        last = std::max(last, st.end);
      }
    const double capacity = last > first ? static_cast<double>(last - first) * m.thread_count : 0;
    if (capacity > 0 && m.metric_is_time)
      return {DelaySource::Capacity,
              std::clamp(1.0 - static_cast<double>(in.profile->work) / capacity, 0.0, 1.0)};
  }
  return {DelaySource::Unknown, kUnknownDelay};
}

// Task types whose tasks are mostly tiny; those of one recursion (fib's two spawns) are one
// finding, whose advice is the cut-off to write (analysis/cutoff.hpp); the recursions are found
// only when needed.
void tiny_tasks(const DiagnosisInput& in, double target, std::vector<DiagnosisFinding>& out) {
  if (!in.task_sizes || in.tiny_size == 0) return;
  const model::Model& m = *in.model;
  const uint64_t work = in.profile->work;
  std::vector<const TypeSizes*> tiny;
  for (const TypeSizes& type : *in.task_sizes)
    if (type.count >= kTinyTasksMin && type.tiny * 100 >= kTinyTasksPercent * type.count &&
        type.site < m.sites.size())
      tiny.push_back(&type);
  if (tiny.empty()) return;
  const auto [source, delay] = workers_delay(in);
  const bool any_tasks = std::any_of(tiny.begin(), tiny.end(), [](auto* t) { return !t->chunks; });
  const std::vector<Recursion> recursions =
      any_tasks ? find_recursions(m) : std::vector<Recursion>();
  auto recursion_of = [&](const TypeSizes& type) -> size_t {
    for (size_t r = 0; r < recursions.size() && !type.chunks; ++r)
      if (std::binary_search(recursions[r].sites.begin(), recursions[r].sites.end(), type.site))
        return r;
    return recursions.size();
  };
  uint64_t per_task = 0;
  CutoffMachine machine;
  bool overhead_known = false;
  std::vector<uint8_t> done(recursions.size(), 0);
  for (const TypeSizes* first : tiny) {
    const size_t r = recursion_of(*first);
    if (r < recursions.size() && done[r]) continue;
    std::vector<const TypeSizes*> group{first};
    if (r < recursions.size()) {
      done[r] = 1;
      for (const TypeSizes* other : tiny)
        if (other != first && recursion_of(*other) == r) group.push_back(other);
    }
    TinyTasks f;
    f.chunks = first->chunks;
    const TypeSizes* largest = first;
    for (const TypeSizes* t : group) {
      f.count += t->count;
      f.tiny += t->tiny;
      f.total += t->total;
      f.sites.push_back(t->site);
      if (t->count > largest->count) largest = t;
    }
    f.largest_site = largest->site;
    f.median = largest->median;
    f.tiny_size = in.tiny_size;
    f.delay_source = source;
    f.delay = delay;
    if (first->chunks) {
      f.advice = TinyAdvice::LargerChunks;
    } else if (r < recursions.size()) {
      if (!overhead_known) {
        per_task = estimate_task_overhead(m).per_task;
        // The recorded threads' cost per task, as `advise` finds it (the same depth for them).
        machine = cutoff_machine(run_loss(m, work, in.profile->span, per_task), per_task);
        overhead_known = true;
      }
      f.advice = TinyAdvice::Cutoff;
      f.cutoff = advise_cutoff(m, recursions[r], target, per_task, 0, machine);
    } else {
      f.advice = TinyAdvice::LargerTasks;
    }
    f.work_share = work ? static_cast<double>(f.total) / static_cast<double>(work) : 0;
    add(out, f.work_share * std::max(delay, kTinyTasksDelayFloor), std::move(f));
  }
}

// Task types with too few tasks for the workers, or one task larger than a worker's share.
void few_tasks(const DiagnosisInput& in, std::vector<DiagnosisFinding>& out) {
  if (!in.task_sizes) return;
  const model::Model& m = *in.model;
  const uint64_t work = in.profile->work;
  const uint32_t workers = m.thread_count;
  if (workers < 2 || work == 0) return;
  for (const TypeSizes& type : *in.task_sizes) {
    // Loop chunks are not counted: their number is the schedule's (a static loop has one per
    // thread whatever its iterations); uneven-shares says what matters about them.
    if (type.chunks || type.site >= m.sites.size() || type.count == 0) continue;
    FewTasks f;
    f.work_share = static_cast<double>(type.total) / static_cast<double>(work);
    f.few = type.count < kFewTasksPerWorker * workers && f.work_share >= kFewTasksWorkShare;
    f.dominant = type.count >= 2 && type.max * workers > type.total;
    if (!f.few && !f.dominant) continue;
    f.site = type.site;
    f.count = type.count;
    f.max = type.max;
    f.total = type.total;
    f.workers = workers;
    add(out, kFewTasksWeight * f.work_share, f);
  }
}

// analysis/loops.hpp's findings, site by site in the profile's order.
void loops(const DiagnosisInput& in, const std::vector<LoopFacts>& facts,
           std::vector<DiagnosisFinding>& out) {
  const Profile& p = *in.profile;
  for (const SiteRow& row : p.sites) {
    if (row.site >= facts.size()) continue;
    const LoopFacts& lf = facts[row.site];
    if (lf.static_instances > 0 && lf.share_imbalance >= kImbalanceNote) {
      UnevenShares f;
      f.site = row.site;
      f.imbalance = lf.share_imbalance;
      f.span_share = p.span ? static_cast<double>(row.span) / static_cast<double>(p.span) : 0;
      add(out, f.imbalance / (1 + f.imbalance) * f.span_share, f);
    }
    if (team_bound(lf, row.work)) {
      TeamBound f;
      f.site = row.site;
      f.team_bound_work = lf.team_bound_work;
      f.work = row.work;
      f.parallelism = row.parallelism;
      f.team = lf.team;
      f.program_work = p.work;
      add(out, p.work ? static_cast<double>(lf.team_bound_work) / p.work : 0, f);
    }
  }
}

std::vector<uint8_t> entered_too_often(const model::Model& m, const Profile& p,
                                       const std::vector<LoopFacts>& facts) {
  std::vector<uint8_t> out(m.sites.size(), 0);
  for (const SiteRow& row : p.sites) {
    if (row.site >= m.sites.size() || m.sites[row.site].kind != SiteKind::Parallel ||
        row.count < kRegionEntries || row.critical_path_percent < kRegionEntryPercent)
      continue;
    // (Not team_bound(): a region without team-bound work but without work either is skipped.)
    if (row.site < facts.size() && static_cast<double>(facts[row.site].team_bound_work) >=
                                       kTeamBoundShare * static_cast<double>(row.work))
      continue;
    const double per_entry =
        static_cast<double>(row.critical_work) / static_cast<double>(row.count);
    // A metric without a time equivalent (a counter): the count and the share decide alone.
    out[row.site] = !m.metric_is_time || m.ticks_per_second <= 0 ||
                    per_entry <= kRegionEntryMax * m.ticks_per_second;
  }
  return out;
}

void region_entries(const DiagnosisInput& in, double target, const std::vector<uint8_t>& too_often,
                    std::vector<DiagnosisFinding>& out) {
  const Profile& p = *in.profile;
  if (p.span == 0 || p.parallelism >= target) return;
  for (const SiteRow& row : p.sites) {
    if (!too_often[row.site]) continue;
    RegionEntries f;
    f.site = row.site;
    f.entries = row.count;
    f.critical_work = row.critical_work;
    f.per_entry = row.critical_work / row.count;
    f.critical_percent = row.critical_path_percent;
    f.parallelism = p.parallelism;
    f.target = target;
    add(out, row.critical_path_percent / 100.0 / (p.parallelism / target + 1), f);
  }
}

// The first site of the profile (by critical path) that is a construct, holds more than
// `min_percent` of the critical path (at least, with `at_least`) and is not a region entered too
// often (region-entries says what to do about those: its own strands are not work to split).
const SiteRow* top_site(const model::Model& m, const Profile& p,
                        const std::vector<uint8_t>& too_often, double min_percent, bool at_least) {
  for (const SiteRow& row : p.sites)
    if (m.sites[row.site].kind != SiteKind::Program && !too_often[row.site] &&
        (at_least ? row.critical_path_percent >= min_percent
                  : row.critical_path_percent > min_percent))
      return &row;
  return nullptr;
}

// The node contains node `n` (preorder ranges).
bool contains(const model::Model& m, uint32_t node, uint32_t n) {
  return node != model::kNone && n >= node && n < node + m.nodes[node].subtree_size;
}

void creation_bound(const DiagnosisInput& in, double target, std::vector<uint8_t>& pass_over,
                    std::vector<DiagnosisFinding>& out) {
  const Profile& p = *in.profile;
  if (const auto f = find_creation_bound(*in.model, p, target, pass_over)) {
    pass_over[f->site] = 1;
    add(out, f->critical_percent / 100.0 / (p.parallelism / target + 1), *f);
  }
}

void low_parallelism(const DiagnosisInput& in, double target, const std::vector<uint8_t>& too_often,
                     std::vector<DiagnosisFinding>& out) {
  const model::Model& m = *in.model;
  const Profile& p = *in.profile;
  if (p.span == 0 || p.parallelism >= target) return;
  LowParallelism f;
  f.parallelism = p.parallelism;
  f.target = target;
  f.work = p.work;
  f.span = p.span;
  if (const SiteRow* top = top_site(m, p, too_often, 0, /*at_least=*/false)) {
    f.site = top->site;
    f.site_kind = m.sites[top->site].kind;
    f.site_critical_percent = top->critical_path_percent;
  }
  add(out, kLowParallelismWeight * (1 - p.parallelism / target), f);
}

void inflation(const DiagnosisInput& in, std::vector<DiagnosisFinding>& out) {
  if (!in.base) return;
  const Diff& d = *in.base;
  const size_t k = d.sort_metric;
  for (size_t i = 0; i < d.sites.size(); ++i) {  // sorted by cost
    const UnitDiff& u = d.sites[i];
    if (u.site_kind == SiteKind::Program || k >= u.metrics.size()) continue;
    const MetricDiff& x = u.metrics[k];
    if (!(x.ratio >= kInflationRatio) || x.cost_percent < kInflationCostPercent) continue;
    WorkInflation f;
    f.unit = i;
    f.ratio = x.ratio;
    f.inflation = x.inflation;
    f.cost_percent = x.cost_percent;
    f.base_threads = d.base.threads;
    f.other_threads = d.other.threads;
    add(out, x.cost_percent / 100.0, f);
    return;  // the largest one
  }
}

void whatif_gain(const DiagnosisInput& in, double target, const std::vector<uint8_t>& too_often,
                 std::vector<DiagnosisFinding>& out) {
  const model::Model& m = *in.model;
  const Profile& p = *in.profile;
  if (p.span == 0 || p.parallelism >= target) return;
  const SiteRow* top = top_site(m, p, too_often, kWhatIfSitePercent, /*at_least=*/true);
  if (!top) return;
  const Unit unit = unit_of_sites(m, {top->site}, "");
  const Weights w = apply_units(m, {&unit}, kWhatIfSplit, WhatIfMode::Parallelize);
  uint64_t work = 0;
  for (uint64_t x : w.work) work += x;
  WhatIfGain f;
  f.after = parallelism_of(work, longest_path(m, nullptr, w.span.data()));
  if (f.after < kWhatIfGain * p.parallelism) return;
  f.site = top->site;
  f.site_kind = m.sites[top->site].kind;
  f.critical_percent = top->critical_path_percent;
  f.before = p.parallelism;
  add(out, (1 - p.parallelism / f.after) / 3, f);
}

void trust(const DiagnosisInput& in, std::vector<DiagnosisFinding>& out) {
  const model::Model& m = *in.model;
  const Profile& p = *in.profile;
  Untrustworthy f;
  double weight = 0;
  bool any = false;
  if (!m.complete) {
    f.incomplete = true;
    weight = 1;
    any = true;
  }
  if (!m.losses.empty()) {
    f.losses = m.losses.size();
    weight = 1;
    any = true;
  }
  if (in.clipping && !in.clipping->strands.empty() && p.parallelism > 0) {
    const double raw = in.measured.parallelism;
    const double moved = std::abs(raw - p.parallelism) / p.parallelism;
    if (moved >= kClippingMovePercent / 100) {
      f.clipped = in.clipping->strands.size();
      f.measured_parallelism = raw;
      weight = std::max(weight, kDisturbedWeight);
      any = true;
    }
  }
  if (m.recorder_stalled * 100 > kRecorderStallPercent * p.work && p.work > 0) {
    f.recorder_stalled = m.recorder_stalled;
    weight = std::max(weight, kDisturbedWeight);
    any = true;
  }
  if (m.switches_lost > 0) {
    f.switches_lost = m.switches_lost;
    weight = std::max(weight, kDisturbedWeight);
    any = true;
  }
  if (m.host_steal_percent >= model::kHostStealDisturbing) {
    f.host_steal_percent = m.host_steal_percent;
    weight = std::max(weight, kDisturbedWeight);
    any = true;
  }
  if (any) add(out, weight, f);
}

}  // namespace

unsigned machine_cores() { return std::max(1u, std::thread::hardware_concurrency()); }

double parallelism_target(uint32_t threads_recorded, unsigned cores) {
  return kTargetPerCore * std::max<unsigned>(threads_recorded, cores);
}

double parallelism_target(const model::Model& m) {
  return parallelism_target(m.thread_count, machine_cores());
}

const char* to_string(DiagnosisKind kind) {
  switch (kind) {
    case DiagnosisKind::SerialCode:
      return "serial-code";
    case DiagnosisKind::TinyTasks:
      return "tiny-tasks";
    case DiagnosisKind::FewTasks:
      return "few-tasks";
    case DiagnosisKind::UnevenShares:
      return "uneven-shares";
    case DiagnosisKind::TeamBound:
      return "team-bound";
    case DiagnosisKind::RegionEntries:
      return "region-entries";
    case DiagnosisKind::WorkInflation:
      return "work-inflation";
    case DiagnosisKind::WhatIfGain:
      return "whatif-gain";
    case DiagnosisKind::LowParallelism:
      return "low-parallelism";
    case DiagnosisKind::Untrustworthy:
      return "untrustworthy";
    case DiagnosisKind::CreationBound:
      return "creation-bound";
  }
  return "?";
}

std::vector<DiagnosisFinding> diagnose(const DiagnosisInput& in) {
  std::vector<DiagnosisFinding> out;
  if (!in.model || !in.profile) return out;
  const double target = in.target > 0 ? in.target : parallelism_target(*in.model);
  trust(in, out);
  serial_code(in, target, out);
  tiny_tasks(in, target, out);
  few_tasks(in, out);
  const std::vector<LoopFacts> facts = loop_facts_by_site(*in.model);
  std::vector<uint8_t> too_often = entered_too_often(*in.model, *in.profile, facts);
  loops(in, facts, out);
  region_entries(in, target, too_often, out);
  // (A creator too slow for its tasks is not work to split: whatif-gain and low-parallelism pass
  // over it, as over a region entered too often.)
  creation_bound(in, target, too_often, out);
  inflation(in, out);
  whatif_gain(in, target, too_often, out);
  // (The what-if names the site and the gain, a creator too slow for its tasks why the
  // parallelism is low: the plain statement would repeat them.)
  if (std::none_of(out.begin(), out.end(), [](const DiagnosisFinding& d) {
        return d.kind() == DiagnosisKind::WhatIfGain || d.kind() == DiagnosisKind::CreationBound;
      }))
    low_parallelism(in, target, too_often, out);
  std::stable_sort(
      out.begin(), out.end(),
      [](const DiagnosisFinding& a, const DiagnosisFinding& b) { return a.weight > b.weight; });
  if (out.size() > kDiagnosisLines) out.resize(kDiagnosisLines);
  return out;
}

std::vector<SerialGroup> serial_groups(const model::Model& m, const Profile& p,
                                       const std::vector<uint32_t>& group_of,
                                       uint32_t fragment_groups, size_t limit) {
  std::vector<SerialGroup> groups(fragment_groups);
  for (uint32_t g = 0; g < groups.size(); ++g) groups[g].group = g;
  std::vector<uint8_t> on_path(m.strands.size(), 0);
  for (uint32_t s : p.critical_path) on_path[s] = 1;
  for (uint32_t s = 0; s < m.strands.size(); ++s) {
    const model::Strand& st = m.strands[s];
    if (!is_serial(m, st)) continue;
    if (st.fragment >= group_of.size() || st.thread == model::kNone) continue;
    SerialGroup& g = groups[group_of[st.fragment]];
    g.work += st.work;
    if (on_path[s]) g.critical += path_weight(m, s, st.work);
  }
  std::erase_if(groups, [](const SerialGroup& g) { return g.work == 0; });
  std::stable_sort(groups.begin(), groups.end(), [](const SerialGroup& a, const SerialGroup& b) {
    return a.critical != b.critical ? a.critical > b.critical : a.work > b.work;
  });
  if (groups.size() > limit) groups.resize(limit);
  return groups;
}

// A task's creator is the predecessor of its first strand that lies in a node around the task
// (the strand that ended in its creation); its other predecessors are dependences.
std::optional<CreationBound> find_creation_bound(const model::Model& m, const Profile& p,
                                                 double target,
                                                 const std::vector<uint8_t>& pass_over,
                                                 std::vector<uint8_t>* creating) {
  if (p.span == 0 || p.parallelism >= target || m.nodes.empty()) return std::nullopt;
  const SiteRow* top = top_site(m, p, pass_over, kWhatIfSitePercent, /*at_least=*/true);
  if (!top) return std::nullopt;
  const uint32_t site = top->site;
  std::vector<uint8_t> on_path(m.strands.size(), 0);
  for (uint32_t s : p.critical_path) on_path[s] = 1;
  std::vector<uint8_t> mine(m.strands.size(), 0);  // the site's strands that created a task
  std::unordered_map<uint32_t, uint64_t> by_task_site;
  uint64_t created = 0, creating_work = 0, created_work = 0, with_dependences = 0;
  for (uint32_t n = 0; n < m.nodes.size(); ++n) {
    const model::Node& node = m.nodes[n];
    if (node.kind != model::NodeKind::Task || node.site == site ||
        node.strand_begin >= node.strand_end)
      continue;
    uint32_t creator = model::kNone;
    bool waits = false;
    for (uint32_t q : m.preds_of(node.strand_begin)) {
      const uint32_t qn = m.strands[q].node;
      if (creator == model::kNone && contains(m, qn, n) && !contains(m, n, qn))
        creator = q;
      else
        waits = true;
    }
    if (creator == model::kNone || m.strands[creator].site != site) continue;
    mine[creator] = 1;
    if (!on_path[creator]) continue;
    ++created;
    ++by_task_site[node.site];
    with_dependences += waits;
    for (uint32_t s = node.strand_begin; s < node.strand_end; ++s)
      created_work += m.strands[s].work;
  }
  for (uint32_t s : p.critical_path)
    if (mine[s]) creating_work += path_weight(m, s, m.strands[s].work);
  if (creating) *creating = std::move(mine);
  if (created < kCreationMin || creating_work == 0 ||
      static_cast<double>(creating_work) < kCreationShare * static_cast<double>(top->critical_work))
    return std::nullopt;
  CreationBound f;
  f.site = site;
  f.site_kind = m.sites[site].kind;
  f.created = created;
  f.creating_work = creating_work;
  f.gap = creating_work / created;
  f.task_mean = created_work / created;
  f.bound = static_cast<double>(creating_work + created_work) / static_cast<double>(creating_work);
  if (f.bound >= target || f.bound > kCreationExplains * p.parallelism) return std::nullopt;
  f.task_site =
      std::max_element(by_task_site.begin(), by_task_site.end(), [](const auto& x, const auto& y) {
        return x.second < y.second || (x.second == y.second && x.first > y.first);
      })->first;
  f.critical_percent = top->critical_path_percent;
  f.dependences = 2 * with_dependences > created;
  f.task_cost = m.task_cost;
  f.parallelism = p.parallelism;
  f.target = target;
  return f;
}

std::vector<StepShare> creation_steps(const model::Model& m, const Profile& profile,
                                      const std::vector<uint32_t>& group_of, const Advice& advice,
                                      double target, CreationBound* found) {
  std::vector<StepShare> out;
  if (advice.steps.empty()) return out;
  std::vector<uint8_t> creating;
  const auto f =
      find_creation_bound(m, profile, target, regions_entered_too_often(m, profile), &creating);
  if (!f) return out;
  if (found) *found = *f;
  // Each step's group: its work, and that of the creator's creating strands in it.
  std::unordered_map<uint32_t, std::pair<uint64_t, uint64_t>> by_group;  // all, creating
  for (const AdviceStep& step : advice.steps) by_group[step.group];
  for (uint32_t s = 0; s < m.strands.size(); ++s) {
    const model::Strand& st = m.strands[s];
    if (st.fragment >= group_of.size()) continue;
    auto it = by_group.find(group_of[st.fragment]);
    if (it == by_group.end()) continue;
    it->second.first += st.work;
    if (creating[s]) it->second.second += st.work;
  }
  for (size_t i = 0; i < advice.steps.size(); ++i) {
    const auto [all, mine] = by_group[advice.steps[i].group];
    if (mine > 0 && kRegionStepPart * mine >= all)
      out.push_back({i, static_cast<double>(mine) / static_cast<double>(all)});
  }
  return out;
}

std::vector<uint8_t> regions_entered_too_often(const model::Model& model, const Profile& profile) {
  return entered_too_often(model, profile, loop_facts_by_site(model));
}

std::vector<RegionEntrySteps> region_entry_steps(const model::Model& m, const Profile& profile,
                                                 const std::vector<uint32_t>& group_of,
                                                 const Advice& advice) {
  std::vector<RegionEntrySteps> out;
  if (advice.steps.empty()) return out;
  const std::vector<uint8_t> too_often = regions_entered_too_often(m, profile);
  if (std::none_of(too_often.begin(), too_often.end(), [](uint8_t x) { return x != 0; }))
    return out;
  // Each step's group: the work of each site in it, from one pass over the strands.
  std::unordered_map<uint32_t, std::unordered_map<uint32_t, uint64_t>> work_by_group;
  for (const AdviceStep& step : advice.steps) work_by_group[step.group];
  for (const model::Strand& st : m.strands) {
    if (st.fragment >= group_of.size()) continue;
    auto it = work_by_group.find(group_of[st.fragment]);
    if (it != work_by_group.end()) it->second[st.site] += st.work;
  }
  // The region entered too often with the most of the step's fragment's work (the lowest site
  // of equals), when it holds 1 / kRegionStepPart of it.
  for (size_t i = 0; i < advice.steps.size(); ++i) {
    uint32_t site = model::kNone;
    uint64_t most = 0, all = 0;
    for (const auto& [s, w] : work_by_group[advice.steps[i].group]) {
      all += w;
      if (s >= too_often.size() || !too_often[s]) continue;
      if (w > most || (w == most && s < site)) {
        site = s;
        most = w;
      }
    }
    if (site == model::kNone || most == 0 || kRegionStepPart * most < all) continue;
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const RegionEntrySteps& r) { return r.site == site; });
    if (it == out.end()) {
      it = out.insert(out.end(), RegionEntrySteps{});
      it->site = site;
      for (const SiteRow& row : profile.sites)
        if (row.site == site) it->entries = row.count;
    }
    it->steps.push_back({i, static_cast<double>(most) / static_cast<double>(all)});
  }
  return out;
}

}  // namespace tasklens::analysis
