// The robust span's rule in passes (stream_robust.hpp).
#include "analysis/stream_robust.hpp"

#include <algorithm>
#include <bit>
#include <string>

#include "model/model.hpp"

namespace tasklens::analysis {
namespace {

constexpr uint32_t kNoSlot = ~uint32_t{0};
// A bucket at most this wide counts its works in an array; a wider one (works of 2^22 ticks
// and more: strands of milliseconds, few by nature) in a map.
constexpr uint64_t kDenseWidth = uint64_t{1} << 16;

// Where `rank` falls in `buckets`: its bucket and the strands below it.
void locate(FragmentMeasure::Rank& r, uint64_t rank, const std::vector<uint64_t>& buckets) {
  r.rank = rank;
  uint64_t below = 0;
  for (uint32_t b = 0; b < buckets.size(); ++b) {
    if (below + buckets[b] > rank) {
      r.bucket = b;
      r.below = below;
      if (WorkBuckets::width(b) <= kDenseWidth) r.dense.assign(WorkBuckets::width(b), 0);
      return;
    }
    below += buckets[b];
  }
}

void count_in(FragmentMeasure::Rank& r, uint32_t bucket, uint64_t work) {
  if (bucket != r.bucket) return;
  if (!r.dense.empty())
    ++r.dense[work - WorkBuckets::low(bucket)];
  else
    ++r.sparse[work];
}

// The work at the rank, from the counts inside its bucket.
uint64_t value_at(const FragmentMeasure::Rank& r) {
  const uint64_t want = r.rank - r.below;
  uint64_t seen = 0;
  if (!r.dense.empty()) {
    for (uint64_t i = 0; i < r.dense.size(); ++i) {
      seen += r.dense[i];
      if (seen > want) return WorkBuckets::low(r.bucket) + i;
    }
  } else {
    for (const auto& [work, count] : r.sparse) {
      seen += count;
      if (seen > want) return work;
    }
  }
  // Only when the passes did not read alike.
  throw ClippingSink::NotReadAlike(
      "the robust span's passes disagree on a code fragment's strands (the file changed)");
}

// find_outliers's last step on the measured fragments (their p99 and median known) and the
// candidates (a superset of the suspects): the suspects, their overlaps, the clipped strands by
// order.
OutlierDecision apply_rule(const std::vector<FragmentMeasure>& measures,
                           const std::vector<uint32_t>& slot,
                           std::vector<OutlierCandidate> candidates, uint64_t floor,
                           const OutlierRule& rule) {
  OutlierDecision d;
  d.clipping.tested = true;
  d.clipping.floor = floor;
  std::vector<Suspect> suspects;
  for (const OutlierCandidate& c : candidates) {
    if (c.fragment >= slot.size() || slot[c.fragment] == kNoSlot) continue;
    const double q = static_cast<double>(measures[slot[c.fragment]].quantile.value);
    const double w = static_cast<double>(c.work);
    if (c.work <= floor || w <= rule.simultaneous_factor * q) continue;
    suspects.push_back({c.strand, c.thread, c.start, c.end, w > rule.factor * q});
  }
  if (suspects.empty()) return d;
  mark_overlaps(suspects);
  // The candidates by strand, to find each suspect's work and fragment.
  std::sort(
      candidates.begin(), candidates.end(),
      [](const OutlierCandidate& a, const OutlierCandidate& b) { return a.strand < b.strand; });
  struct Clipped {
    uint64_t strand;
    const OutlierCandidate* candidate;
    bool simultaneous;
    bool operator<(const Clipped& o) const { return strand < o.strand; }
  };
  std::vector<Clipped> clipped;
  for (const Suspect& s : suspects) {
    const bool timed = s.start != 0 || s.end != 0;  // (model::is_timed: it ran on a worker)
    if (!s.strong && !(timed && s.overlap)) continue;
    const auto it = std::lower_bound(
        candidates.begin(), candidates.end(), s.strand,
        [](const OutlierCandidate& c, uint64_t strand) { return c.strand < strand; });
    clipped.push_back({s.strand, &*it, timed && s.overlap});
  }
  std::sort(clipped.begin(), clipped.end());
  for (const auto& [strand, c, simultaneous] : clipped) {
    const FragmentMeasure& m = measures[slot[c->fragment]];
    ClippedStrand cs;
    cs.strand = strand;
    cs.thread = c->thread;
    cs.begin = c->start;
    cs.end = c->end;
    cs.work_raw = c->work;
    cs.work_clipped = std::min(m.median.value, cs.work_raw);
    cs.fragment_quantile = m.quantile.value;
    cs.fragment_samples = static_cast<uint32_t>(std::min<uint64_t>(m.samples, UINT32_MAX));
    cs.simultaneous = simultaneous;
    d.clipping.clipped_work += cs.work_raw - cs.work_clipped;
    d.clipping.strands.push_back(cs);
    d.fragments.push_back(c->fragment);
  }
  return d;
}

}  // namespace

uint32_t WorkBuckets::of(uint64_t work) {
  const unsigned e = 63 - static_cast<unsigned>(std::countl_zero(work | 1));
  const unsigned shift = e < kExactBits ? 0 : e - (kExactBits - 1);
  return (shift << (kExactBits - 1)) + static_cast<uint32_t>(work >> shift);
}

uint64_t WorkBuckets::low(uint32_t bucket) {
  if (bucket < (1u << kExactBits)) return bucket;
  const unsigned shift = (bucket >> (kExactBits - 1)) - 1;
  return static_cast<uint64_t>(bucket - (shift << (kExactBits - 1))) << shift;
}

uint64_t WorkBuckets::width(uint32_t bucket) {
  if (bucket < (1u << kExactBits)) return 1;
  return uint64_t{1} << ((bucket >> (kExactBits - 1)) - 1);
}

OutlierCensus::Strand OutlierCensus::strand(uint64_t work, uint64_t, uint32_t, const Strand*,
                                            uint32_t, const Instance*, uint32_t, uint64_t,
                                            uint32_t fragment, uint64_t) {
  const uint64_t index = strands_++;
  if (fragment == 0) return 0;  // unknown code: never measured
  if (fragment >= fragments_.size()) fragments_.resize(fragment + 1);
  Fragment& f = fragments_[fragment];
  ++f.count;
  const uint32_t b = WorkBuckets::of(work);
  if (b >= f.buckets.size()) f.buckets.resize(b + 1, 0);
  ++f.buckets[b];
  if (work < Fragment::kDense) {
    if (work >= f.small.size()) f.small.resize(work + 1, 0);
    ++f.small[work];
  } else if (work < kExactBelow) {
    ++f.medium[static_cast<uint32_t>(work)];
  }
  if (thread_ != model::kNone) {
    f.worker_max = std::max(f.worker_max, work);
    if (floor_ && work > floor_ && !overflowed_) {
      if (candidates_.size() < cap_)
        candidates_.push_back({index, work, start_, end_, fragment, thread_});
      else
        overflowed_ = true;
    }
  }
  return 0;
}

std::optional<OutlierDecision> OutlierCensus::decide(uint64_t floor,
                                                     const OutlierRule& rule) const {
  if (floor == 0 || floor != floor_ || overflowed_) return std::nullopt;
  std::vector<FragmentMeasure> measures = plan(floor, rule);
  std::vector<uint32_t> slot;
  for (uint32_t i = 0; i < measures.size(); ++i) {
    FragmentMeasure& m = measures[i];
    const Fragment& f = fragments_[m.fragment];
    // The works under kExactBelow in order: the dense counts, then the map's.
    std::vector<std::pair<uint32_t, uint64_t>> medium(f.medium.begin(), f.medium.end());
    std::sort(medium.begin(), medium.end());
    for (FragmentMeasure::Rank* r : {&m.quantile, &m.median}) {
      uint64_t seen = 0;
      bool found = false;
      for (uint64_t w = 0; w < f.small.size() && !found; ++w)
        if ((seen += f.small[w]) > r->rank) r->value = w, found = true;
      for (size_t k = 0; k < medium.size() && !found; ++k)
        if ((seen += medium[k].second) > r->rank) r->value = medium[k].first, found = true;
      if (!found) return std::nullopt;  // a work of kExactBelow or more: the refining pass
    }
    if (m.fragment >= slot.size()) slot.resize(m.fragment + 1, kNoSlot);
    slot[m.fragment] = i;
  }
  return apply_rule(measures, slot, candidates_, floor, rule);
}

std::vector<FragmentMeasure> OutlierCensus::plan(uint64_t floor, const OutlierRule& rule) const {
  std::vector<FragmentMeasure> out;
  if (floor == 0) return out;
  const uint64_t min_samples = std::max<uint32_t>(rule.min_samples, 2);
  for (uint32_t f = 1; f < fragments_.size(); ++f) {
    const Fragment& x = fragments_[f];
    if (x.count < min_samples || x.worker_max <= floor) continue;
    FragmentMeasure m;
    m.fragment = f;
    m.samples = x.count;
    locate(m.quantile, quantile_rank(rule.quantile, x.count), x.buckets);
    locate(m.median, median_rank(x.count), x.buckets);
    out.push_back(std::move(m));
  }
  return out;
}

OutlierRefine::OutlierRefine(std::vector<FragmentMeasure> measures, uint64_t floor,
                             const OutlierRule& rule)
    : measures_(std::move(measures)), floor_(floor), rule_(rule) {
  for (uint32_t i = 0; i < measures_.size(); ++i) {
    const uint32_t f = measures_[i].fragment;
    if (f >= slot_.size()) slot_.resize(f + 1, kNoSlot);
    slot_[f] = i;
    // q >= its bucket's lower bound, so a suspect's work is above this (a superset, sifted by
    // decide() with q exact).
    suspect_above_.push_back(
        static_cast<uint64_t>(rule.simultaneous_factor *
                              static_cast<double>(WorkBuckets::low(measures_[i].quantile.bucket))));
  }
}

OutlierRefine::Strand OutlierRefine::strand(uint64_t work, uint64_t, uint32_t, const Strand*,
                                            uint32_t, const Instance*, uint32_t, uint64_t,
                                            uint32_t fragment, uint64_t) {
  const uint64_t index = strands_++;
  if (fragment >= slot_.size() || slot_[fragment] == kNoSlot) return 0;
  const uint32_t i = slot_[fragment];
  FragmentMeasure& m = measures_[i];
  const uint32_t b = WorkBuckets::of(work);
  count_in(m.quantile, b, work);
  count_in(m.median, b, work);
  if (thread_ != model::kNone && work > floor_ && work > suspect_above_[i])
    candidates_.push_back({index, work, start_, end_, fragment, thread_});
  return 0;
}

OutlierDecision OutlierRefine::decide() {
  for (FragmentMeasure& m : measures_) {
    m.quantile.value = value_at(m.quantile);
    m.median.value = value_at(m.median);
  }
  return apply_rule(measures_, slot_, std::move(candidates_), floor_, rule_);
}

ClippingSink::ClippingSink(model::StrandSink& target, const Clipping& clipping,
                           const std::vector<uint32_t>& fragments)
    : target_(target), clipping_(clipping), fragments_(fragments) {}

const ClippedStrand* ClippingSink::next_clipped() const {
  if (next_ < clipping_.strands.size() && clipping_.strands[next_].strand == strands_)
    return &clipping_.strands[next_];
  return nullptr;
}

void ClippingSink::region_work(uint32_t region, uint64_t work) {
  // (Given before the strand they belong to: the next one.)
  if (const ClippedStrand* c = next_clipped())
    work = c->work_raw ? static_cast<uint64_t>(static_cast<double>(work) *
                                               static_cast<double>(c->work_clipped) /
                                               static_cast<double>(c->work_raw))
                       : 0;
  if (work > 0) target_.region_work(region, work);
}

ClippingSink::Strand ClippingSink::strand(uint64_t work, uint64_t span_weight, uint32_t site,
                                          const Strand* preds, uint32_t pred_count,
                                          const Instance* instances, uint32_t instance_count,
                                          uint64_t iterations, uint32_t fragment, uint64_t order) {
  if (const ClippedStrand* c = next_clipped()) {
    if (fragment != fragments_[next_] || work != c->work_raw) {
      met_another_ = true;
      throw NotReadAlike("strand " + std::to_string(strands_) +
                         " is not the one the robust span's earlier pass clipped (the file "
                         "changed between the passes)");
    }
    work = span_weight = c->work_clipped;
    ++next_;
  }
  ++strands_;
  return target_.strand(work, span_weight, site, preds, pred_count, instances, instance_count,
                        iterations, fragment, order);
}

}  // namespace tasklens::analysis
