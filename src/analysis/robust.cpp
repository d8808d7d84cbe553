#include "analysis/robust.hpp"

#include <algorithm>
#include <cmath>

#include "analysis/algebra.hpp"
#include "analysis/profile.hpp"

namespace tasklens::analysis {
namespace {

using model::kNone;
using model::Model;

// The floor in metric units, or 0 when the metric has none (see robust.hpp).
uint64_t floor_of(const Model& m, double seconds) {
  double rate = 0;
  if (m.metric_is_time)
    rate = m.ticks_per_second;
  else if (m.metric == "cycles" || m.metric == "ref-cycles")
    rate = m.tsc_per_second;
  if (!(rate > 0) || !(seconds > 0)) return 0;
  return std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(seconds * rate)));
}

// A strand the rule looked at closely: above the floor and above the lower factor.
struct Suspect {
  uint32_t strand;
  uint32_t thread;
  uint64_t start, end;
  bool strong;  // above the full factor: an outlier by itself
  bool overlap = false;
};

// Marks the suspects that overlap in time a suspect of another thread. Sorted by start, a
// suspect overlaps an earlier one of another thread iff the latest end among the earlier ones of
// other threads is after its start, and a later one iff the earliest start among the later ones
// of other threads is before its end. Keeping the best two of distinct threads answers "among
// other threads" in O(1), so the sweep is O(k log k).
void mark_overlaps(std::vector<Suspect>& sus) {
  std::sort(sus.begin(), sus.end(), [](const Suspect& a, const Suspect& b) {
    return a.start != b.start ? a.start < b.start : a.strand < b.strand;
  });
  struct Best {
    uint64_t value;
    uint32_t thread = kNone;
  };
  // Forward: the two latest ends of distinct threads.
  Best e1{0}, e2{0};
  for (Suspect& s : sus) {
    const Best& other = e1.thread != s.thread ? e1 : e2;
    if (other.thread != kNone && other.value > s.start) s.overlap = true;
    if (e1.thread == kNone || s.end > e1.value) {
      if (e1.thread != s.thread) e2 = e1;
      e1 = {s.end, s.thread};
    } else if (s.thread != e1.thread && (e2.thread == kNone || s.end > e2.value)) {
      e2 = {s.end, s.thread};
    }
  }
  // Backward: the two earliest starts of distinct threads.
  Best b1{0}, b2{0};
  for (auto it = sus.rbegin(); it != sus.rend(); ++it) {
    Suspect& s = *it;
    const Best& other = b1.thread != s.thread ? b1 : b2;
    if (other.thread != kNone && other.value < s.end) s.overlap = true;
    if (b1.thread == kNone || s.start < b1.value) {
      if (b1.thread != s.thread) b2 = b1;
      b1 = {s.start, s.thread};
    } else if (s.thread != b1.thread && (b2.thread == kNone || s.start < b2.value)) {
      b2 = {s.start, s.thread};
    }
  }
}

}  // namespace

Clipping find_outliers(const Model& m, const OutlierRule& rule) {
  Clipping c;
  c.floor = floor_of(m, rule.floor_seconds);
  if (c.floor == 0) return c;
  c.tested = true;
  const size_t n = m.strands.size();
  const size_t fragments = m.fragments.size();
  if (n == 0 || fragments < 2) return c;

  // Pass 1: strands per fragment, and the strands above the floor. (On most traces the latter
  // are few or none, and this pass is all the rule costs.)
  std::vector<uint32_t> count(fragments, 0);
  std::vector<uint32_t> above;
  const model::Strand* st = m.strands.data();
  for (size_t s = 0; s < n; ++s) {
    const uint32_t f = st[s].fragment;
    if (f >= fragments) continue;
    ++count[f];
    if (st[s].work > c.floor) above.push_back(static_cast<uint32_t>(s));
  }
  // (Two at least: a strand is compared with the others.)
  const uint32_t min_samples = std::max<uint32_t>(rule.min_samples, 2);
  // Fragments to measure: known, with enough samples, holding a strand above the floor.
  std::vector<uint32_t> slot(fragments, kNone);  // index into `offset`, per fragment
  std::vector<uint64_t> offset{0};
  for (uint32_t s : above) {
    const uint32_t f = st[s].fragment;
    if (f == 0 || st[s].thread == kNone || count[f] < min_samples || slot[f] != kNone) continue;
    slot[f] = static_cast<uint32_t>(offset.size() - 1);
    offset.push_back(offset.back() + count[f]);
  }
  if (offset.size() == 1) return c;

  // Pass 2: the work of every strand of those fragments, grouped by fragment.
  std::vector<uint64_t> works(offset.back());
  std::vector<uint64_t> fill(offset.begin(), offset.end() - 1);
  for (size_t s = 0; s < n; ++s) {
    const uint32_t f = st[s].fragment;
    if (f < fragments && slot[f] != kNone) works[fill[slot[f]]++] = st[s].work;
  }
  // Per measured fragment: q (p99 of the others, nearest rank) and the median. A suspect lies
  // above q, hence above position r of the sorted fragment, so the others' r-th smallest is the
  // whole fragment's: one selection serves every strand of the fragment.
  const size_t measured = offset.size() - 1;
  std::vector<uint64_t> quantile(measured), median(measured);
  for (size_t i = 0; i < measured; ++i) {
    uint64_t* b = works.data() + offset[i];
    const size_t size = offset[i + 1] - offset[i];
    const size_t others = size - 1;
    size_t rank = static_cast<size_t>(std::ceil(rule.quantile * static_cast<double>(others)));
    rank = std::clamp<size_t>(rank, 1, others) - 1;
    std::nth_element(b, b + rank, b + size);
    quantile[i] = b[rank];
    const size_t mid = size / 2;  // (the upper median: a strand's work, never an average)
    if (mid < rank) std::nth_element(b, b + mid, b + rank);
    median[i] = b[mid];
  }

  std::vector<Suspect> suspects;
  for (uint32_t s : above) {
    const uint32_t f = st[s].fragment;
    if (slot[f] == kNone || st[s].thread == kNone) continue;
    const double q = static_cast<double>(quantile[slot[f]]);
    const double w = static_cast<double>(st[s].work);
    if (w <= rule.simultaneous_factor * q) continue;
    suspects.push_back({s, st[s].thread, st[s].start, st[s].end, w > rule.factor * q});
  }
  if (suspects.empty()) return c;
  mark_overlaps(suspects);
  for (const Suspect& x : suspects) {
    // Without timestamps a strand overlaps nothing we can see.
    const bool timed = model::is_timed(st[x.strand]);
    if (!x.strong && !(timed && x.overlap)) continue;
    const uint32_t i = slot[st[x.strand].fragment];
    ClippedStrand cs;
    cs.strand = x.strand;
    cs.thread = x.thread;
    cs.begin = x.start;
    cs.end = x.end;
    cs.work_raw = st[x.strand].work;
    cs.work_clipped = std::min(median[i], cs.work_raw);
    cs.fragment_quantile = quantile[i];
    cs.fragment_samples = count[st[x.strand].fragment];
    cs.simultaneous = timed && x.overlap;
    c.clipped_work += cs.work_raw - cs.work_clipped;
    c.strands.push_back(cs);
  }
  std::sort(c.strands.begin(), c.strands.end(),
            [](const ClippedStrand& a, const ClippedStrand& b) { return a.strand < b.strand; });
  return c;
}

void apply_clipping(Model& m, const Clipping& c) {
  for (const ClippedStrand& cs : c.strands) {
    if (cs.strand >= m.strands.size()) continue;
    m.strands[cs.strand].work = cs.work_clipped;
    // Region work is sorted by strand: the clipped strand's entries shrink in proportion.
    auto it = std::lower_bound(
        m.region_work.begin(), m.region_work.end(), cs.strand,
        [](const model::RegionWork& r, uint32_t strand) { return r.strand < strand; });
    for (; it != m.region_work.end() && it->strand == cs.strand; ++it)
      it->work = cs.work_raw ? static_cast<uint64_t>(static_cast<double>(it->work) *
                                                     static_cast<double>(cs.work_clipped) /
                                                     static_cast<double>(cs.work_raw))
                             : 0;
  }
}

Clipping clip_outliers(Model& m, const OutlierRule& rule) {
  Clipping c = find_outliers(m, rule);
  apply_clipping(m, c);
  return c;
}

std::vector<uint64_t> measured_work(const Model& m, const Clipping& c) {
  std::vector<uint64_t> w(m.strands.size());
  for (size_t s = 0; s < w.size(); ++s) w[s] = m.strands[s].work;
  for (const ClippedStrand& cs : c.strands)
    if (cs.strand < w.size()) w[cs.strand] = cs.work_raw;
  return w;
}

SpanFigures measured_figures(const Model& m, const Clipping& c, uint64_t work, uint64_t span) {
  SpanFigures f{work, span, parallelism_of(work, span)};
  if (c.strands.empty()) return f;
  f.work = work + c.clipped_work;
  const std::vector<uint64_t> w = measured_work(m, c);
  f.span = longest_path(m, nullptr, w.data());
  f.parallelism = parallelism_of(f.work, f.span);
  return f;
}

}  // namespace tasklens::analysis
