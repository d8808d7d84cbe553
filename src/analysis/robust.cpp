#include "analysis/robust.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <future>

#include "analysis/algebra.hpp"
#include "analysis/profile.hpp"

namespace tasklens::analysis {

using model::kNone;
using model::Model;

uint64_t outlier_floor(const Model& m, double seconds) {
  double rate = 0;
  if (m.metric_is_time)
    rate = m.ticks_per_second;
  else if (m.metric == "cycles" || m.metric == "ref-cycles")
    rate = m.tsc_per_second;
  if (!(rate > 0) || !(seconds > 0)) return 0;
  return std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(seconds * rate)));
}

size_t quantile_rank(double q, size_t size) {
  const size_t others = size - 1;
  const size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(others)));
  return std::clamp<size_t>(rank, 1, others) - 1;
}

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

namespace {

// Runs part(0) and part(1) at once, the second on another thread, when `two`; else part(0)
// alone. (The passes over millions of strands are memory-bound: two cores read twice as fast.)
template <class F>
void in_parts(bool two, F&& part) {
  if (!two) {
    part(0);
    return;
  }
  auto other = std::async(std::launch::async, [&part] { part(1); });
  part(0);
  other.get();
}

// Pass 1 over one part of the strands: strands per fragment, and those above the floor.
struct Census {
  std::vector<uint32_t> count;  // per fragment
  std::vector<uint32_t> above;  // strand ids, increasing
  uint64_t max_work = 0;        // of the strands above the floor
};

// The fragments measured (a strand above the floor, enough samples): their strands' work
// gathered by fragment, and each one's q (the rule's quantile of the others, nearest rank) and
// median. A suspect lies above q, hence above position r of the sorted fragment, so the others'
// r-th smallest is the whole fragment's: one selection serves every strand of the fragment.
struct Measured {
  std::vector<uint32_t> slot;      // per fragment: its index here, or kNone
  std::vector<uint32_t> fragment;  // per index
  std::vector<uint64_t> offset;    // per index, into the gathered works; one more at the end
  std::vector<uint64_t> quantile, median;
};

template <class T>
void measure(const Model& m, const std::vector<Census>& parts, double q, Measured& x) {
  const size_t measured = x.fragment.size();
  std::vector<T> works(x.offset.back());
  const model::Strand* st = m.strands.data();
  const size_t n = m.strands.size(), fragments = x.slot.size();
  const size_t count = parts.size();
  in_parts(count == 2, [&](size_t p) {
    // Each part fills its own stretch of each fragment's range: after the earlier parts'.
    std::vector<uint64_t> fill(measured);
    for (size_t i = 0; i < measured; ++i) {
      fill[i] = x.offset[i];
      for (size_t e = 0; e < p; ++e) fill[i] += parts[e].count[x.fragment[i]];
    }
    for (size_t s = n * p / count, end = n * (p + 1) / count; s < end; ++s) {
      const uint32_t f = st[s].fragment;
      if (f < fragments && x.slot[f] != kNone)
        works[fill[x.slot[f]]++] = static_cast<T>(st[s].work);
    }
  });
  // The selections, the largest fragments shared between the parts.
  std::vector<uint32_t> order(measured);
  for (uint32_t i = 0; i < measured; ++i) order[i] = i;
  auto size_of = [&](uint32_t i) { return x.offset[i + 1] - x.offset[i]; };
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return size_of(a) > size_of(b); });
  std::vector<uint8_t> part_of(measured, 0);
  uint64_t load[2] = {0, 0};
  for (uint32_t i : order) {
    const uint8_t p = count == 2 && load[1] < load[0] ? 1 : 0;
    part_of[i] = p;
    load[p] += size_of(i);
  }
  x.quantile.assign(measured, 0);
  x.median.assign(measured, 0);
  in_parts(count == 2, [&](size_t p) {
    for (uint32_t i = 0; i < measured; ++i) {
      if (part_of[i] != p) continue;
      T* b = works.data() + x.offset[i];
      const size_t size = size_of(i);
      const size_t rank = quantile_rank(q, size);
      std::nth_element(b, b + rank, b + size);
      x.quantile[i] = b[rank];
      const size_t mid = median_rank(size);
      if (mid < rank) std::nth_element(b, b + mid, b + rank);
      x.median[i] = b[mid];
    }
  });
}

}  // namespace

Clipping find_outliers(const Model& m, const OutlierRule& rule, uint32_t two_threads_from) {
  Clipping c;
  c.floor = outlier_floor(m, rule.floor_seconds);
  if (c.floor == 0) return c;
  c.tested = true;
  const size_t n = m.strands.size();
  const size_t fragments = m.fragments.size();
  if (n == 0 || fragments < 2) return c;

  // Pass 1: strands per fragment, and the strands above the floor. (On most traces the latter
  // are few or none, and this pass is all the rule costs.)
  const model::Strand* st = m.strands.data();
  std::vector<Census> parts(n >= two_threads_from && n >= 2 ? 2 : 1);
  in_parts(parts.size() == 2, [&](size_t p) {
    Census& part = parts[p];
    part.count.assign(fragments, 0);
    for (size_t s = n * p / parts.size(), end = n * (p + 1) / parts.size(); s < end; ++s) {
      const uint32_t f = st[s].fragment;
      if (f >= fragments) continue;
      ++part.count[f];
      if (st[s].work > c.floor) {
        part.above.push_back(static_cast<uint32_t>(s));
        part.max_work = std::max(part.max_work, st[s].work);
      }
    }
  });
  std::vector<uint32_t> count = parts[0].count;
  std::vector<uint32_t> above = parts[0].above;
  uint64_t max_work = parts[0].max_work;
  for (size_t p = 1; p < parts.size(); ++p) {
    for (size_t f = 0; f < fragments; ++f) count[f] += parts[p].count[f];
    above.insert(above.end(), parts[p].above.begin(), parts[p].above.end());
    max_work = std::max(max_work, parts[p].max_work);
  }
  // (Two at least: a strand is compared with the others.)
  const uint32_t min_samples = std::max<uint32_t>(rule.min_samples, 2);
  // Fragments to measure: known, with enough samples, holding a strand above the floor.
  Measured x;
  x.slot.assign(fragments, kNone);
  x.offset = {0};
  for (uint32_t s : above) {
    const uint32_t f = st[s].fragment;
    if (f == 0 || st[s].thread == kNone || count[f] < min_samples || x.slot[f] != kNone) continue;
    x.slot[f] = static_cast<uint32_t>(x.fragment.size());
    x.fragment.push_back(f);
    x.offset.push_back(x.offset.back() + count[f]);
  }
  if (x.fragment.empty()) return c;

  // Pass 2: the work of every strand of those fragments, their p99 and median. (In 32 bits
  // when every work fits, as it nearly always does: half the memory to fill and select in.)
  if (max_work <= UINT32_MAX)
    measure<uint32_t>(m, parts, rule.quantile, x);
  else
    measure<uint64_t>(m, parts, rule.quantile, x);
  const std::vector<uint32_t>& slot = x.slot;
  const std::vector<uint64_t>& quantile = x.quantile;
  const std::vector<uint64_t>& median = x.median;

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
  for (const Suspect& sus : suspects) {
    // Without timestamps a strand overlaps nothing we can see.
    const bool timed = model::is_timed(st[sus.strand]);
    if (!sus.strong && !(timed && sus.overlap)) continue;
    const uint32_t i = slot[st[sus.strand].fragment];
    ClippedStrand cs;
    cs.strand = sus.strand;
    cs.thread = sus.thread;
    cs.begin = sus.start;
    cs.end = sus.end;
    cs.work_raw = st[sus.strand].work;
    cs.work_clipped = std::min(median[i], cs.work_raw);
    cs.fragment_quantile = quantile[i];
    cs.fragment_samples = count[st[sus.strand].fragment];
    cs.simultaneous = timed && sus.overlap;
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
        [](const model::RegionWork& r, uint64_t strand) { return r.strand < strand; });
    for (; it != m.region_work.end() && it->strand == cs.strand; ++it)
      it->work = cs.work_raw ? static_cast<uint64_t>(static_cast<double>(it->work) *
                                                     static_cast<double>(cs.work_clipped) /
                                                     static_cast<double>(cs.work_raw))
                             : 0;
  }
}

Clipping clip_outliers(Model& m, const OutlierRule& rule, uint32_t two_threads_from) {
  Clipping c = find_outliers(m, rule, two_threads_from);
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

uint64_t measured_span(const Model& m, const Clipping& c) {
  // longest_path's loop, with the clipped strands' measured work put back as it goes (they are
  // sorted by id): no per-strand weight array to fill.
  const uint32_t n = static_cast<uint32_t>(m.strands.size());
  std::vector<uint64_t> dist(n);
  uint64_t* d = dist.data();
  const uint32_t* begin = m.pred_begin.data();
  const uint32_t* preds = m.preds.data();
  auto next = c.strands.begin();
  // Loop iterations seen only together weigh one iteration, as in longest_path.
  auto divisible = m.divisible.begin();
  uint64_t best = 0;
  for (uint32_t s = 0; s < n; ++s) {
    uint64_t longest = 0;
    for (uint32_t i = begin[s], e = begin[s + 1]; i < e; ++i)
      longest = std::max(longest, d[preds[i]]);
    uint64_t w = m.strands[s].work;
    if (next != c.strands.end() && next->strand == s) w = (next++)->work_raw;
    if (divisible != m.divisible.end() && divisible->strand == s)
      w = iteration_span(w, (divisible++)->iterations);
    d[s] = longest + w;
    best = std::max(best, d[s]);
  }
  return best;
}

SpanFigures measured_figures(const Model& m, const Clipping& c, uint64_t work, uint64_t span) {
  SpanFigures f{work, span, parallelism_of(work, span)};
  if (c.strands.empty()) return f;
  f.work = work + c.clipped_work;
  f.span = measured_span(m, c);
  f.parallelism = parallelism_of(f.work, f.span);
  return f;
}

}  // namespace tasklens::analysis
