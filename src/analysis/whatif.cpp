#include "analysis/whatif.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>

#include "analysis/algebra.hpp"

namespace tasklens::analysis {
namespace {

using model::kNone;
using model::Model;

// Span weights of applying the units; *work receives the program's work under the what-if.
// Each strand is rounded once, from the exact sum of what its units keep.
std::vector<uint64_t> span_weights(const Model& m, const std::vector<const Unit*>& units,
                                   double factor, WhatIfMode mode, uint64_t* work) {
  const size_t n = m.strands.size();
  std::vector<uint64_t> covered(n, 0);  // part of each strand inside some unit (capped)
  std::vector<double> kept(n, 0.0);     // what remains of that part on paths
  for (const Unit* unit : units) {
    const double k = unit->factor > 0 ? unit->factor : factor;
    for (auto [s, u] : unit->parts) {
      if (s >= n) continue;
      u = std::min(u, m.strands[s].work - covered[s]);
      covered[s] += u;
      kept[s] += std::isinf(k) ? 0.0 : static_cast<double>(u) / std::max(k, 1.0);
    }
  }
  std::vector<uint64_t> span(n);
  uint64_t total = 0;
  for (size_t s = 0; s < n; ++s) {
    const uint64_t w = m.strands[s].work;
    span[s] = covered[s] ? w - covered[s] + round_nonnegative(kept[s]) : w;
    total += mode == WhatIfMode::Speedup ? span[s] : w;
  }
  if (work) *work = total;
  return span;
}

}  // namespace

uint64_t divide_by_factor(uint64_t w, double k) {
  if (std::isinf(k)) return 0;
  if (k <= 1) return w;
  return round_nonnegative(static_cast<double>(w) / k);
}

const char* to_string(WhatIfMode mode) {
  return mode == WhatIfMode::Parallelize ? "parallelize" : "speedup";
}

const char* to_string(AdviseStop stop) {
  switch (stop) {
    case AdviseStop::TargetReached:
      return "target-reached";
    case AdviseStop::AlreadyReached:
      return "already-reached";
    case AdviseStop::TooSmall:
      return "candidate-too-small";
    case AdviseStop::NothingLeft:
      return "nothing-left";
    case AdviseStop::MaxSteps:
      return "max-steps";
  }
  return "unknown";
}

Unit unit_of_sites(const Model& m, const std::vector<uint32_t>& sites, std::string name) {
  Unit u;
  u.name = std::move(name);
  std::vector<uint8_t> in(m.sites.size(), 0);
  for (uint32_t x : sites)
    if (x < in.size()) in[x] = 1;
  for (uint32_t s = 0; s < m.strands.size(); ++s) {
    const model::Strand& st = m.strands[s];
    if (st.site < in.size() && in[st.site] && st.work) u.parts.emplace_back(s, st.work);
  }
  return u;
}

Unit unit_of_fragments(const Model& m, const std::vector<uint32_t>& fragments, std::string name) {
  Unit u;
  u.name = std::move(name);
  std::vector<uint8_t> in(m.fragments.size(), 0);
  for (uint32_t f : fragments)
    if (f < in.size()) in[f] = 1;
  for (uint32_t s = 0; s < m.strands.size(); ++s) {
    const model::Strand& st = m.strands[s];
    if (st.fragment < in.size() && in[st.fragment] && st.work) u.parts.emplace_back(s, st.work);
  }
  return u;
}

Unit unit_of_region(const Model& m, uint32_t region, std::string name) {
  Unit u;
  u.name = std::move(name);
  for (const model::RegionWork& r : m.region_work) {
    if (r.region != region || r.strand >= m.strands.size()) continue;
    if (!u.parts.empty() && u.parts.back().first == r.strand)
      u.parts.back().second += r.work;
    else
      u.parts.emplace_back(r.strand, r.work);
  }
  return u;
}

Weights apply_units(const Model& m, const std::vector<const Unit*>& units, double factor,
                    WhatIfMode mode) {
  Weights w;
  w.span = span_weights(m, units, factor, mode, nullptr);
  if (mode == WhatIfMode::Speedup) {
    w.work = w.span;
  } else {
    w.work.resize(m.strands.size());
    for (size_t s = 0; s < m.strands.size(); ++s) w.work[s] = m.strands[s].work;
  }
  return w;
}

std::vector<WhatIfCurve> whatif_curves(const Model& m, const std::vector<Unit>& units,
                                       const std::vector<double>& factors, WhatIfMode mode) {
  std::vector<uint32_t> path;
  longest_path(m, &path);
  std::vector<uint8_t> on_path(m.strands.size(), 0);
  for (uint32_t s : path) on_path[s] = 1;

  // Alone, a unit follows the factors (its own factor is for the combination); together, each
  // unit takes its own factor where it has one.
  std::vector<Unit> alone(units);
  for (Unit& u : alone) u.factor = 0;
  std::vector<std::vector<const Unit*>> sets;
  for (const Unit& u : alone) sets.push_back({&u});
  bool own = std::any_of(units.begin(), units.end(), [](const Unit& u) { return u.factor > 0; });
  if (units.size() > 1 || own) {
    sets.emplace_back();
    for (const Unit& u : units) sets.back().push_back(&u);
  }
  std::vector<WhatIfCurve> curves;
  for (const auto& set : sets) {
    WhatIfCurve c;
    c.unit = &set == &sets.back() && (units.size() > 1 || own) ? "all" : set[0]->name;
    // A strand is counted once even when several units cover it.
    std::vector<uint64_t> covered(m.strands.size(), 0);
    for (const Unit* u : set)
      for (auto [s, part] : u->parts)
        if (s < covered.size()) covered[s] = std::min(m.strands[s].work, covered[s] + part);
    for (uint32_t s = 0; s < covered.size(); ++s) {
      c.unit_work += covered[s];
      if (on_path[s]) c.unit_critical += path_weight(m, s, covered[s]);
    }
    for (double k : factors) {
      WhatIfPoint p;
      p.factor = k;
      std::vector<uint64_t> w = span_weights(m, set, k, mode, &p.work);
      p.span = longest_path(m, nullptr, w.data());
      p.parallelism = parallelism_of(p.work, p.span);
      c.points.push_back(p);
    }
    curves.push_back(std::move(c));
  }
  return curves;
}

const char* to_string(OverheadSource source) {
  switch (source) {
    case OverheadSource::Calibration:
      return "calibration";
    case OverheadSource::Strands:
      return "strands";
    case OverheadSource::None:
      break;
  }
  return "none";
}

Overhead estimate_task_overhead(const Model& m) {
  if (m.task_cost > 0) return Overhead{m.task_cost, m.task_cost_tasks, OverheadSource::Calibration};
  std::vector<uint64_t> works;
  for (const model::Strand& s : m.strands)
    if (s.thread != kNone && s.node < m.nodes.size() &&
        m.nodes[s.node].kind == model::NodeKind::Task)
      works.push_back(s.work);
  Overhead o;
  if (works.size() < 100) return o;
  auto nth = works.begin() + static_cast<std::ptrdiff_t>(works.size() / 20);
  std::nth_element(works.begin(), nth, works.end());
  // The runtime's cost that the model took out of the strands (builder_runtime_cost.cpp) is
  // part of what a task costs: its mean per strand goes back on.
  const uint64_t inside =
      m.strands.empty() ? 0 : (m.runtime_removed + m.strands.size() / 2) / m.strands.size();
  o.per_task = *nth + inside;
  o.samples = works.size();
  o.source = OverheadSource::Strands;
  return o;
}

Burdened burdened(const Model& m, const uint64_t* span_weights, uint64_t work, uint64_t per_task) {
  const size_t n = m.strands.size();
  std::vector<uint64_t> w(n);
  for (size_t s = 0; s < n; ++s) w[s] = span_weights ? span_weights[s] : m.strands[s].work;
  // Every task's first strand pays the cost of creating and scheduling the task.
  std::vector<uint8_t> first(n, 0);
  for (const model::Node& node : m.nodes)
    if (node.kind == model::NodeKind::Task && node.strand_begin < node.strand_end &&
        node.strand_begin < n) {
      first[node.strand_begin] = 1;
      w[node.strand_begin] += per_task;
    }
  Burdened b;
  std::vector<uint32_t> path;
  b.span = longest_path(m, &path, w.data());
  b.parallelism = parallelism_of(work, b.span);
  for (uint32_t s : path)
    if (first[s]) b.overhead_on_path += per_task;
  b.overhead_percent = percent_of(b.overhead_on_path, b.span);
  return b;
}

RunLoss run_loss(const Model& m, uint64_t work, uint64_t span, uint64_t per_task) {
  uint64_t first = UINT64_MAX, last = 0;
  for (const model::Strand& st : m.strands)
    if (model::is_timed(st)) {
      first = std::min(first, st.start);
      last = std::max(last, st.end);
    }
  return run_loss(m, first, last, work, span, per_task);
}

RunLoss run_loss(const Model& m, uint64_t first, uint64_t last, uint64_t work, uint64_t span,
                 uint64_t per_task) {
  RunLoss l;
  l.threads = m.thread_count;
  l.tasks = m.task_count;
  if (!m.metric_is_time || l.threads == 0 || l.tasks == 0) return l;
  if (last <= first) return l;
  // The threads switched out anywhere in the run (in strands, in the runtime, idle) when the
  // recording saw it: said beside the loss, not taken out of it (a thread switched out for
  // another of the program's, or yielding, is the program's time).
  const uint64_t switched_out = m.threads_time > 0 ? m.preempted_in_run : m.preempted;
  l.switched_out_share =
      std::max(static_cast<double>(switched_out) / static_cast<double>((last - first) * l.threads),
               m.host_steal_percent / 100);
  // What the model took out of the strands as not the program's (predict's `removed`).
  const uint64_t removed =
      (m.probe_removed + m.recorder_stalled + m.preempted + m.slow_faults) / l.threads;
  l.elapsed = last - first > removed ? last - first - removed : 0;
  l.greedy_bound = work / l.threads + span;
  if (l.elapsed <= l.greedy_bound) return l;
  const uint64_t lost = l.elapsed - l.greedy_bound;
  l.per_task = lost * l.threads / l.tasks;
  l.lost_share = static_cast<double>(lost) / static_cast<double>(l.elapsed);
  l.most_lost = per_task > 0 && l.lost_share >= kMostLost &&
                static_cast<double>(lost) >= kMinLostSeconds * m.ticks_per_second &&
                static_cast<double>(l.per_task) >= kLossMultiple * static_cast<double>(per_task);
  return l;
}

double advise_factor(const AdviseOptions& opt) {
  return opt.factor > 0 ? opt.factor : std::max(2.0, opt.target);
}

Advice advise_steps(const AdviseEvaluator& evaluator, const Overhead& overhead,
                    const AdviseOptions& opt) {
  Advice a;
  a.factor = advise_factor(opt);
  a.overhead = overhead;
  std::vector<uint8_t> chosen;
  AdviseEvaluation now = evaluator.evaluate(chosen);
  a.work = now.work;
  a.span = now.span;
  a.parallelism = parallelism_of(now.work, now.span);
  a.burdened_before = evaluator.burdened();
  a.burdened_after = a.burdened_before;
  if (a.parallelism >= opt.target) {
    a.stop = AdviseStop::AlreadyReached;
    return a;
  }
  for (;;) {
    if (a.steps.size() >= opt.max_steps) {
      a.stop = AdviseStop::MaxSteps;
      break;
    }
    uint32_t best = kNone;
    for (uint32_t g = 0; g < now.critical.size(); ++g) {
      if ((g < chosen.size() && chosen[g]) || now.critical[g] == 0) continue;
      if (best == kNone || now.critical[g] > now.critical[best] ||
          (now.critical[g] == now.critical[best] && evaluator.first_in_ties &&
           evaluator.first_in_ties(g, best)))
        best = g;
    }
    if (best == kNone) {
      a.stop = AdviseStop::NothingLeft;
      break;
    }
    const uint64_t mean = now.critical[best] / now.on_path[best];
    if (a.overhead.samples &&
        static_cast<double>(mean) <
            opt.min_overhead_multiple * static_cast<double>(a.overhead.per_task)) {
      a.stop = AdviseStop::TooSmall;
      a.stop_group = best;
      a.stop_group_work = mean;
      break;
    }
    AdviceStep step;
    step.group = best;
    step.critical_work = now.critical[best];
    step.critical_percent = percent_of(now.critical[best], now.span);
    step.strands_on_path = now.on_path[best];
    if (chosen.size() <= best) chosen.resize(best + 1, 0);
    chosen[best] = 1;
    now = evaluator.evaluate(chosen);
    step.work = now.work;
    step.span = now.span;
    step.parallelism = parallelism_of(now.work, now.span);
    a.steps.push_back(step);
    if (step.parallelism >= opt.target) {
      a.stop = AdviseStop::TargetReached;
      break;
    }
  }
  if (!a.steps.empty()) a.burdened_after = evaluator.burdened();
  return a;
}

Advice advise(const Model& m, const std::vector<uint32_t>& group_of, uint32_t group_count,
              const AdviseOptions& opt,
              const std::function<bool(uint32_t, uint32_t)>& first_in_ties) {
  const size_t n = m.strands.size();
  auto group = [&](uint32_t s) {
    uint32_t f = m.strands[s].fragment;
    return f < group_of.size() ? group_of[f] : kNone;
  };
  const double factor = advise_factor(opt);
  std::vector<uint64_t> span(n);  // the last evaluation's weights
  AdviseEvaluator e;
  e.first_in_ties = first_in_ties;
  e.evaluate = [&](const std::vector<uint8_t>& chosen) {
    AdviseEvaluation r;
    for (size_t s = 0; s < n; ++s) {
      const uint32_t g = group(static_cast<uint32_t>(s));
      const bool divided = g < chosen.size() && chosen[g];
      span[s] = divided ? divide_by_factor(m.strands[s].work, factor) : m.strands[s].work;
      r.work += opt.mode == WhatIfMode::Speedup ? span[s] : m.strands[s].work;
    }
    std::vector<uint32_t> path;
    r.span = longest_path(m, &path, span.data());
    r.critical.assign(group_count, 0);
    r.on_path.assign(group_count, 0);
    for (uint32_t s : path) {
      const uint32_t g = group(s);
      if (g >= group_count) continue;
      r.critical[g] += path_weight(m, s, span[s]);
      ++r.on_path[g];
    }
    return r;
  };
  const Overhead overhead = estimate_task_overhead(m);
  e.burdened = [&] {
    uint64_t work = 0;
    for (size_t s = 0; s < n; ++s)
      work += opt.mode == WhatIfMode::Speedup ? span[s] : m.strands[s].work;
    return burdened(m, span.data(), work, overhead.per_task);
  };
  Advice a = advise_steps(e, overhead, opt);
  if (a.steps.empty()) return a;
  std::vector<std::vector<std::pair<uint32_t, uint64_t>>> group_regions(group_count);
  std::vector<uint64_t> group_work(group_count, 0);
  for (uint32_t s = 0; s < n; ++s)
    if (group(s) < group_count) group_work[group(s)] += m.strands[s].work;
  for (const model::RegionWork& r : m.region_work)
    if (r.strand < n && group(r.strand) < group_count)
      group_regions[group(r.strand)].emplace_back(r.region, r.work);
  name_step_regions(a, group_regions, group_work);
  return a;
}

void name_step_regions(Advice& advice,
                       const std::vector<std::vector<std::pair<uint32_t, uint64_t>>>& group_regions,
                       const std::vector<uint64_t>& group_work) {
  for (AdviceStep& step : advice.steps) {
    if (step.group >= group_regions.size()) continue;
    std::map<uint32_t, uint64_t> in_region;  // (by id: ties go to the lower one)
    for (const auto& [region, w] : group_regions[step.group]) in_region[region] += w;
    for (const auto& [region, w] : in_region)
      if (step.region == kNone || w > step.region_work) {
        step.region = region;
        step.region_work = w;
      }
    step.region_percent =
        percent_of(step.region_work, step.group < group_work.size() ? group_work[step.group] : 0);
  }
}

}  // namespace tasklens::analysis
