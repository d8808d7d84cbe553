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
  for (uint8_t u = 0; u < units_.size(); ++u) {
    all_units_.push_back(u);
    if (units_[u].region != model::kNone) wants_regions_ = true;
  }
  part_.resize(units_.size());
  capped_.resize(units_.size());
  scratch_.resize(points_);
  // span_weights divides by max(k, 1) and keeps nothing at an infinite k.
  const auto divisor = [](double k) { return std::isinf(k) ? 0.0 : std::max(k, 1.0); };
  for (const double k : factors_) divisor_.push_back(divisor(k));
  for (const StreamUnit& u : units_) own_divisor_.push_back(divisor(u.factor));
  after_divisor_ = divisor(after_factor_);
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
      in[u] = units_[u].region == model::kNone && units_[u].by_fragment == fragments &&
                      units_[u].has(index)
                  ? 1
                  : 0;
  }
  return in;
}

void StreamWhatIf::region_work(uint32_t region, uint64_t work) {
  region_parts_.emplace_back(region, work);
}

uint64_t StreamWhatIf::cap_parts(uint64_t w, const std::vector<uint8_t>& set) {
  uint64_t covered = 0;
  for (const uint8_t u : set) {
    capped_[u] = std::min(part_[u], w - covered);
    covered += capped_[u];
  }
  return covered;
}

// As span_weights (whatif.cpp): what is left outside the units, and round(sum of u / k) of the
// parts (0 at infinity, u itself at k <= 1). A strand one unit covers whole weighs round(w / k).
// `divisor` is max(k, 1), 0 for an infinite k; a unit's own factor is its own_divisor_.
// Inlined into strand()'s loop over the points (called sets x factors times per strand); a set of
// one unit at the curve's factor (every set but "all") keeps covered / k without the loop.
__attribute__((always_inline)) inline uint64_t StreamWhatIf::weight(uint64_t w, uint64_t covered,
                                                                    const std::vector<uint8_t>& set,
                                                                    bool own,
                                                                    double divisor) const {
  if (covered == 0) return w;
  if (!own && set.size() == 1)
    return w - covered +
           round_nonnegative(divisor != 0 ? static_cast<double>(covered) / divisor : 0);
  double kept = 0;
  for (const uint8_t u : set) {
    const double d = own && units_[u].factor > 0 ? own_divisor_[u] : divisor;
    if (d != 0) kept += static_cast<double>(capped_[u]) / d;
  }
  return w - covered + round_nonnegative(kept);
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
  // Each unit's part of the strand: its whole work for a site or fragment unit that has it (a
  // strand without work is in none, as in unit_of_sites), its work inside the region for a
  // region unit (unit_of_region).
  const uint8_t* by_site = members(site_members_, site_known_, site, false);
  const uint8_t* by_fragment = members(fragment_members_, fragment_known_, fragment, true);
  for (size_t u = 0; u < units_.size(); ++u) {
    part_[u] = 0;
    if (units_[u].region == model::kNone) {
      part_[u] = by_site[u] | by_fragment[u] ? work : 0;
      continue;
    }
    for (const auto& [region, w] : region_parts_)
      if (region == units_[u].region) part_[u] += w;
  }
  region_parts_.clear();
  const bool in_some_unit =
      std::any_of(part_.begin(), part_.end(), [](uint64_t part) { return part != 0; });

  // The curves' points: every set at every factor. covered_of[i]: set i's capped parts' sum.
  // A strand in no unit (most, with a few units) weighs its work at every point.
  scratch_covered_.assign(sets_.size(), 0);
  if (!in_some_unit) {
    const uint64_t span = iteration_span(work, iterations);
    std::fill(scratch_.begin(), scratch_.end(), span);
    for (uint64_t& w : work_) w += work;
  }
  for (size_t i = 0; i < sets_.size() && in_some_unit; ++i) {
    const uint64_t covered = cap_parts(work, sets_[i]);
    scratch_covered_[i] = covered;
    unit_work_[i] += covered;
    const bool own = has_all_ && i + 1 == sets_.size();
    for (size_t f = 0; f < factors_.size(); ++f) {
      const size_t p = i * factors_.size() + f;
      const uint64_t w = weight(work, covered, sets_[i], own, divisor_[f]);
      work_[p] += mode_ == WhatIfMode::Speedup ? w : work;
      scratch_[p] = iteration_span(w, iterations);
    }
  }
  // The "after" profile: every unit, each at its own factor or at after_factor.
  const uint64_t after_span =
      in_some_unit ? weight(work, cap_parts(work, all_units_), all_units_, true, after_divisor_)
                   : work;
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
  for (size_t i = 0; i < sets_.size(); ++i)
    me[i] = (winner ? winner[i] : 0) +
            (scratch_covered_[i] ? iteration_span(scratch_covered_[i], iterations) : 0);
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

void StreamUnitList::region_work(uint32_t region, uint64_t work) {
  add_region_part(parts_, region, work);
}

void StreamUnitList::more_regions(uint32_t count) {
  // Every live entry takes the new stride (rare: a region met for the first time).
  const size_t slots = has_path_.size();
  std::vector<uint64_t> wider(slots * count, 0);
  for (size_t s = 0; s < slots && region_count_ > 0; ++s)
    std::copy_n(paths_.data() + s * region_count_, region_count_, wider.data() + s * count);
  paths_ = std::move(wider);
  best_.resize(count, 0);
  region_count_ = count;
}

void StreamUnitList::grow(Strand s) {
  if (has_path_.size() <= s) has_path_.resize((size_t{s} + 1) * 2, 0);
  paths_.resize(has_path_.size() * region_count_, 0);  // (the same size but when either grew)
}

uint64_t* StreamUnitList::path_of(Strand s) {
  grow(s);
  return paths_.data() + size_t{s} * region_count_;
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
  for (const auto& [region, w] : parts_) {
    if (region >= region_count_) more_regions(region + 1);
    if (regions_units_.work.size() <= region) regions_units_.work.resize(size_t{region} + 1, 0);
    regions_units_.work[region] += w;
  }
  const Strand s = same(first_.strand(work, span_weight, site, preds, pred_count, instances,
                                      instance_count, iterations, fragment, order),
                        second_.strand(work, span_weight, fragment, preds, pred_count, nullptr, 0,
                                       iterations, fragment, order));
  if (region_count_ > 0) {
    // Along the recorded path: the first profile's winner among the predecessors, then this
    // strand's parts as they weigh on paths (path_weight).
    const uint32_t won = first_.last_winner();
    uint64_t* me = path_of(s);
    if (won == StreamProfile::kNoWinner)
      std::fill(me, me + region_count_, 0);
    else
      std::copy_n(path_of(preds[won]), region_count_, me);
    for (const auto& [region, w] : parts_) me[region] += iteration_span(w, iterations);
    if (first_.last_ended_path()) std::copy_n(me, region_count_, best_.begin());
  }
  grow(s);
  has_path_[s] = 1;
  parts_.clear();
  return s;
}

StreamUnitList::Strand StreamUnitList::open_join() {
  const Strand j = TwinProfiles::open_join();
  if (region_count_ > 0) std::fill_n(path_of(j), region_count_, 0);
  grow(j);
  has_path_[j] = 0;  // nothing folded yet: it brings no path
  return j;
}

void StreamUnitList::fold(Strand join, Strand pred) {
  TwinProfiles::fold(join, pred);
  if (!has_path_[pred]) return;  // an empty join
  if (region_count_ > 0 && first_.last_fold_won())
    std::copy_n(path_of(pred), region_count_, path_of(join));
  has_path_[join] = 1;
}

StreamUnitList::Result StreamUnitList::finish() {
  Result r;
  r.sites = std::move(sites_);
  r.fragments = std::move(fragments_);
  r.regions = std::move(regions_units_);
  r.regions.work.resize(region_count_, 0);
  r.regions.critical = best_;
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
