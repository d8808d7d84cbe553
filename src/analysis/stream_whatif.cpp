// What-if profiles in one pass (stream_whatif.hpp).
#include "analysis/stream_whatif.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "analysis/algebra.hpp"

namespace tasklens::analysis {

TwinProfiles::TwinProfiles()
    : first_(StreamProfile::kSitesAsTheyCome, uint64_t{1} << 18),
      second_(StreamProfile::kSitesAsTheyCome, uint64_t{1} << 18) {}

uint32_t TwinProfiles::same(uint32_t first, uint32_t second) {
  if (first != second) throw std::logic_error("TwinProfiles: the two profiles' slots went apart");
  return first;
}

TwinProfiles::Instance TwinProfiles::open_instance(uint32_t site) {
  return same(first_.open_instance(site), second_.open_instance(site));
}

void TwinProfiles::not_outermost(Instance i) {
  first_.not_outermost(i);
  second_.not_outermost(i);
}

void TwinProfiles::close_instance(Instance i) {
  first_.close_instance(i);
  second_.close_instance(i);
}

TwinProfiles::Strand TwinProfiles::open_join() {
  return same(first_.open_join(), second_.open_join());
}

void TwinProfiles::fold(Strand join, Strand pred) {
  first_.fold(join, pred);
  second_.fold(join, pred);
}

void TwinProfiles::release(Strand s) {
  first_.release(s);
  second_.release(s);
}

StreamWhatIf::StreamWhatIf(std::vector<StreamUnit> units, std::vector<double> factors,
                           WhatIfMode mode, double after_factor)
    : units_(std::move(units)),
      factors_(std::move(factors)),
      mode_(mode),
      after_factor_(after_factor) {
  if (units_.size() >= kNoUnit) throw std::invalid_argument("StreamWhatIf: at most 254 units");
  // As whatif_curves: each unit alone, then all together when there are several or one has its
  // own factor.
  for (uint8_t u = 0; u < units_.size(); ++u) sets_.push_back({u});
  has_all_ = units_.size() > 1 || std::any_of(units_.begin(), units_.end(),
                                              [](const StreamUnit& u) { return u.factor > 0; });
  if (has_all_) {
    sets_.emplace_back();
    for (uint8_t u = 0; u < units_.size(); ++u) sets_.back().push_back(u);
  }
  points_ = static_cast<uint32_t>(sets_.size() * factors_.size());
  stride_ = static_cast<uint32_t>(sets_.size()) + points_;
  best_.assign(points_, 0);
  work_.assign(points_, 0);
  unit_work_.assign(sets_.size(), 0);
  best_covered_.assign(sets_.size(), 0);
  covered_.resize(units_.size());
  decider_.resize(sets_.size());
  scratch_.resize(points_);
}

const uint8_t* StreamWhatIf::members(std::vector<uint8_t>& table, std::vector<uint8_t>& known,
                                     uint32_t index, bool fragments) {
  const size_t n = units_.size();
  if (index >= known.size()) {
    known.resize(size_t{index} + 1, 0);
    table.resize(known.size() * n, 0);
  }
  uint8_t* in = &table[index * n];
  if (!known[index]) {
    known[index] = 1;
    for (size_t u = 0; u < n; ++u)
      in[u] = units_[u].by_fragment == fragments && units_[u].has(index) ? 1 : 0;
  }
  return in;
}

// As span_weights (whatif.cpp) for a strand one unit covers whole: round(w / k), 0 at infinity.
uint64_t StreamWhatIf::weight(uint64_t w, uint8_t unit, double k) {
  return unit == kNoUnit ? w : divide_by_factor(w, k);
}

uint64_t* StreamWhatIf::entry(Strand s) {
  if (has_path_.size() <= s) {
    has_path_.resize((size_t{s} + 1) * 2, 0);
    live_.resize(has_path_.size() * stride_, 0);
  }
  return &live_[size_t{s} * stride_];
}

StreamWhatIf::Strand StreamWhatIf::strand(uint64_t work, uint64_t span_weight, uint32_t site,
                                          const Strand* preds, uint32_t pred_count,
                                          const Instance* instances, uint32_t instance_count,
                                          uint64_t iterations, uint32_t fragment, uint64_t order) {
  // Which units cover the strand (a strand without work is in none, as in unit_of_sites), and
  // in each set the first of them: it decides the strand's factor, as in span_weights.
  const uint8_t* by_site = members(site_members_, site_known_, site, false);
  const uint8_t* by_fragment = members(fragment_members_, fragment_known_, fragment, true);
  for (size_t u = 0; u < units_.size(); ++u) covered_[u] = work && (by_site[u] | by_fragment[u]);
  for (size_t i = 0; i < sets_.size(); ++i) {
    decider_[i] = kNoUnit;
    for (const uint8_t u : sets_[i])
      if (covered_[u]) {
        decider_[i] = u;
        break;
      }
  }
  uint8_t after_decider = kNoUnit;
  for (size_t u = 0; u < units_.size() && after_decider == kNoUnit; ++u)
    if (covered_[u]) after_decider = static_cast<uint8_t>(u);

  // The curves' points: every set at every factor.
  for (size_t i = 0; i < sets_.size(); ++i) {
    const uint8_t unit = decider_[i];
    if (unit != kNoUnit) unit_work_[i] += work;
    const bool own =
        has_all_ && i + 1 == sets_.size() && unit != kNoUnit && units_[unit].factor > 0;
    for (size_t f = 0; f < factors_.size(); ++f) {
      const size_t p = i * factors_.size() + f;
      const uint64_t w = weight(work, unit, own ? units_[unit].factor : factors_[f]);
      work_[p] += mode_ == WhatIfMode::Speedup ? w : work;
      scratch_[p] = iteration_span(w, iterations);
    }
  }
  // The "after" profile: every unit, each at its own factor or at after_factor.
  const uint64_t after_span = weight(work, after_decider,
                                     after_decider != kNoUnit && units_[after_decider].factor > 0
                                         ? units_[after_decider].factor
                                         : after_factor_);
  const uint64_t after_work = mode_ == WhatIfMode::Speedup ? after_span : work;

  const Strand s = same(first_.strand(work, span_weight, site, preds, pred_count, instances,
                                      instance_count, iterations, fragment, order),
                        second_.strand(after_work, after_span, site, preds, pred_count, instances,
                                       instance_count, iterations, fragment, order));
  // The recorded path's winner among the predecessors: the recorded profile's.
  // (entry(s) may grow the table, a predecessor's never does: it came first.)
  uint64_t* me = entry(s);
  std::fill(me, me + stride_, 0);
  const uint32_t won = first_.last_winner();
  const uint64_t* winner = won == StreamProfile::kNoWinner ? nullptr : entry(preds[won]);
  const uint64_t on_path = iteration_span(work, iterations);
  for (size_t i = 0; i < sets_.size(); ++i)
    me[i] = (winner ? winner[i] : 0) + (decider_[i] != kNoUnit ? on_path : 0);
  has_path_[s] = 1;
  if (first_.last_ended_path()) std::copy(me, me + sets_.size(), best_covered_.begin());
  uint64_t* dist = me + sets_.size();
  for (uint32_t k = 0; k < pred_count; ++k) {
    const uint64_t* pred = entry(preds[k]) + sets_.size();
    for (uint32_t p = 0; p < points_; ++p) dist[p] = std::max(dist[p], pred[p]);
  }
  for (uint32_t p = 0; p < points_; ++p) {
    dist[p] += scratch_[p];
    best_[p] = std::max(best_[p], dist[p]);
  }
  return s;
}

StreamWhatIf::Strand StreamWhatIf::open_join() {
  const Strand j = TwinProfiles::open_join();
  uint64_t* me = entry(j);
  std::fill(me, me + stride_, 0);
  has_path_[j] = 0;  // nothing folded yet: it brings no path
  return j;
}

void StreamWhatIf::fold(Strand join, Strand pred) {
  TwinProfiles::fold(join, pred);
  if (!has_path_[pred]) return;  // an empty join
  uint64_t* j = entry(join);
  const uint64_t* p = entry(pred);
  // The recorded path: the recorded profile's winner.
  if (first_.last_fold_won()) std::copy(p, p + sets_.size(), j);
  has_path_[join] = 1;
  for (uint32_t k = static_cast<uint32_t>(sets_.size()); k < stride_; ++k)
    j[k] = std::max(j[k], p[k]);
}

StreamWhatIf::Result StreamWhatIf::finish() {
  Result r;
  r.before = first_.finish(false);
  r.after = second_.finish(false);
  for (size_t i = 0; i < sets_.size(); ++i) {
    WhatIfCurve c;
    c.unit = has_all_ && i + 1 == sets_.size() ? "all" : units_[sets_[i][0]].name;
    c.unit_work = unit_work_[i];
    c.unit_critical = best_covered_[i];
    for (size_t f = 0; f < factors_.size(); ++f) {
      const size_t p = i * factors_.size() + f;
      WhatIfPoint point;
      point.factor = factors_[f];
      point.work = work_[p];
      point.span = best_[p];
      point.parallelism = parallelism_of(point.work, point.span);
      c.points.push_back(point);
    }
    r.curves.push_back(std::move(c));
  }
  return r;
}

StreamUnitList::Strand StreamUnitList::strand(uint64_t work, uint64_t span_weight, uint32_t site,
                                              const Strand* preds, uint32_t pred_count,
                                              const Instance* instances, uint32_t instance_count,
                                              uint64_t iterations, uint32_t fragment,
                                              uint64_t order) {
  for (auto [units, index] : {std::pair{&sites_, site}, std::pair{&fragments_, fragment}}) {
    if (units->work.size() <= index) {
      units->work.resize(size_t{index} + 1, 0);
      units->strands.resize(size_t{index} + 1, 0);
    }
    units->work[index] += work;
    ++units->strands[index];
  }
  return same(first_.strand(work, span_weight, site, preds, pred_count, instances, instance_count,
                            iterations, fragment, order),
              second_.strand(work, span_weight, fragment, preds, pred_count, nullptr, 0, iterations,
                             fragment, order));
}

StreamUnitList::Result StreamUnitList::finish() {
  Result r;
  r.sites = std::move(sites_);
  r.fragments = std::move(fragments_);
  r.profile = first_.finish(false, &r.sites.on_path);
  const Profile by_fragment = second_.finish(false, &r.fragments.on_path);
  using Rows = std::pair<Units*, const Profile*>;
  for (auto [units, profile] : {Rows{&r.sites, &r.profile}, Rows{&r.fragments, &by_fragment}}) {
    const size_t n = std::max(units->work.size(), units->on_path.size());
    for (std::vector<uint64_t>* v :
         {&units->work, &units->strands, &units->critical, &units->on_path})
      v->resize(n, 0);
    for (const SiteRow& row : profile->sites)
      if (row.site < n) units->critical[row.site] = row.critical_work;
  }
  return r;
}

}  // namespace tasklens::analysis
