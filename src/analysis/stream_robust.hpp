// The disturbance-robust span (robust.hpp's rule, exactly) for a recording read in passes, with
// memory bounded by the code fragments, not the strands.
//
// find_outliers gathers every strand's work of a fragment and selects its p99 and median. A
// stream cannot hold them, so the same order statistics come from two passes:
//  1. OutlierCensus (beside the profile as measured, through a TeeSink): per fragment, its
//     strands, the largest work of one that ran on a worker, and a histogram of their work in
//     buckets exact below 128 ticks and 1/64 of an octave wide above (at most a few thousand
//     counters a fragment). plan() then picks the fragments the rule measures (known, 200 strands
//     or more, a worker's strand above the floor) and, for each, the bucket holding the p99's
//     rank and the one holding the median's.
//     The census also counts the works under 2^16 ticks exactly, and keeps the strands above the
//     floor that ran on a worker (up to a million): where the p99s and medians are such works
//     (tens of microseconds on a GHz clock) and the kept strands are all of them, it decides at
//     once.
//  2. Otherwise OutlierRefine: the exact works inside those two buckets (counted by value),
//     hence the exact p99 and median; and the strands that could be suspects (on a worker, above
//     the floor, above 5 times the p99 bucket's lower bound), with their times and the order
//     they came in.
// decide() applies the rule to those suspects (mark_overlaps, as find_outliers): the clipped
// strands, named by the order the passes hand them over in (ClippedStrand::strand).
// When it clips any, one more pass reads the recording through ClippingSink, which hands each
// clipped strand to its target at its clipped work (and shrinks its user regions' work alike,
// as apply_clipping).
//
// Passes are read alike (the builder is deterministic): ClippingSink checks that each strand it
// clips has the fragment and the work the refining pass saw, and throws otherwise.
//
// Cost: a histogram increment and an exact count a strand in pass 1; in pass 2 a bucket test a
// strand of a measured fragment. When no fragment is measured (no strand above the floor, the usual
// case of a quiet machine) the profile of pass 1 is the robust one; when no strand is clipped, too.
// Memory: the histograms (a few kB a fragment), the exact counts (at most 2^16 a fragment, the
// distinct works under 2^16 ticks), the counts inside the chosen buckets (at most their width,
// or their strands), the strands pass 1 keeps (at most a million), and pass 2's suspects:
// strands above 5 times their fragment's p99, by its definition a small share of 1%.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "analysis/robust.hpp"
#include "model/strand_sink.hpp"

namespace tasklens::analysis {

// The histogram's buckets: exact below 2^7, then 64 a power of two.
struct WorkBuckets {
  static constexpr unsigned kExactBits = 7;
  static uint32_t of(uint64_t work);
  static uint64_t low(uint32_t bucket);
  static uint64_t width(uint32_t bucket);
};

// The rule's measurement of one fragment: where its p99 and median lie after pass 1, exact after
// pass 2.
struct FragmentMeasure {
  uint32_t fragment = 0;
  uint64_t samples = 0;
  struct Rank {
    uint64_t rank = 0;                    // 0-based, among the fragment's strands sorted by work
    uint32_t bucket = 0;                  // the histogram bucket holding it
    uint64_t below = 0;                   // the strands in lower buckets
    uint64_t value = 0;                   // after pass 2: the work at that rank
    std::vector<uint64_t> dense;          // counts by work - low(bucket), for narrow buckets
    std::map<uint64_t, uint64_t> sparse;  // counts by work, for wide ones
  } quantile, median;
};

// A strand that may be an outlier: on a worker, above the floor (and, from the refining pass,
// above 5 times its fragment's p99 bucket's lower bound).
struct OutlierCandidate {
  uint64_t strand, work, start, end;
  uint32_t fragment, thread;
};

// The rule applied: the clipped strands (ClippedStrand::strand their order in the pass) and,
// beside each, its fragment.
struct OutlierDecision {
  Clipping clipping;
  std::vector<uint32_t> fragments;  // per clipped strand
};

// Pass 1.
class OutlierCensus final : public model::OptionalCallsSink {
 public:
  // `floor`: the rule's floor when known before the pass (0: not known): the strands above it
  // that ran on a worker are kept, up to `cap` of them, so that decide() may need no second pass.
  explicit OutlierCensus(uint64_t floor = 0, size_t cap = size_t{1} << 20)
      : floor_(floor), cap_(cap) {}
  bool wants_times() const override { return true; }
  void times(uint64_t start, uint64_t end, uint32_t thread) override {
    start_ = start, end_ = end, thread_ = thread;
  }
  Strand strand(uint64_t work, uint64_t, uint32_t, const Strand*, uint32_t, const Instance*,
                uint32_t, uint64_t, uint32_t fragment, uint64_t) override;

  // The fragments the rule measures, by fragment (the others absent), with their ranks' buckets.
  std::vector<FragmentMeasure> plan(uint64_t floor, const OutlierRule& rule = {}) const;
  // The rule applied from this pass alone, when it can be: `floor` is the one it was given, at
  // most `cap` strands were above it, and every measured fragment's p99 and median are under
  // kExactBelow ticks (counted exactly here). Otherwise nothing: OutlierRefine's pass decides.
  static constexpr uint64_t kExactBelow = uint64_t{1} << 16;
  std::optional<OutlierDecision> decide(uint64_t floor, const OutlierRule& rule = {}) const;
  uint64_t strands() const { return strands_; }

 private:
  struct Fragment {
    uint64_t count = 0;
    uint64_t worker_max = 0;  // the largest work of a strand that ran on a worker
    std::vector<uint64_t> buckets;
    // Exact counts of the works under kExactBelow: by work under kDense, else in the map.
    static constexpr uint64_t kDense = 4096;
    std::vector<uint64_t> small;
    std::unordered_map<uint32_t, uint64_t> medium;
  };
  std::vector<Fragment> fragments_;
  uint64_t floor_;
  size_t cap_;
  std::vector<OutlierCandidate> candidates_;
  bool overflowed_ = false;
  uint64_t start_ = 0, end_ = 0, strands_ = 0;
  uint32_t thread_ = ~uint32_t{0};
};

// Pass 2, when pass 1 could not decide.
class OutlierRefine final : public model::OptionalCallsSink {
 public:
  OutlierRefine(std::vector<FragmentMeasure> measures, uint64_t floor,
                const OutlierRule& rule = {});
  bool wants_times() const override { return true; }
  void times(uint64_t start, uint64_t end, uint32_t thread) override {
    start_ = start, end_ = end, thread_ = thread;
  }
  Strand strand(uint64_t work, uint64_t, uint32_t, const Strand*, uint32_t, const Instance*,
                uint32_t, uint64_t, uint32_t fragment, uint64_t) override;
  OutlierDecision decide();

 private:
  std::vector<FragmentMeasure> measures_;
  std::vector<uint32_t> slot_;           // per fragment: its index in measures_, or ~0
  std::vector<uint64_t> suspect_above_;  // per index: 5 x the p99 bucket's lower bound
  std::vector<OutlierCandidate> candidates_;
  uint64_t floor_;
  OutlierRule rule_;
  uint64_t start_ = 0, end_ = 0, strands_ = 0;
  uint32_t thread_ = ~uint32_t{0};
};

// The last pass: hands every call to `target`, the clipped strands at their clipped work.
class ClippingSink final : public model::StrandSink {
 public:
  ClippingSink(model::StrandSink& target, const Clipping& clipping,
               const std::vector<uint32_t>& fragments);
  Instance open_instance(uint32_t site) override { return target_.open_instance(site); }
  void not_outermost(Instance i) override { target_.not_outermost(i); }
  void close_instance(Instance i) override { target_.close_instance(i); }
  Strand strand(uint64_t work, uint64_t span_weight, uint32_t site, const Strand* preds,
                uint32_t pred_count, const Instance* instances, uint32_t instance_count,
                uint64_t iterations, uint32_t fragment, uint64_t order) override;
  Strand open_join() override { return target_.open_join(); }
  void fold(Strand join, Strand pred) override { target_.fold(join, pred); }
  void release(Strand s) override { target_.release(s); }
  bool wants_tasks() const override { return target_.wants_tasks(); }
  void task(const Task& t) override { target_.task(t); }
  bool wants_task_starts() const override { return target_.wants_task_starts(); }
  void task_start() override { target_.task_start(); }
  bool wants_times() const override { return target_.wants_times(); }
  void times(uint64_t start, uint64_t end, uint32_t thread) override {
    target_.times(start, end, thread);
  }
  bool wants_task_keys() const override { return target_.wants_task_keys(); }
  void task_key(uint64_t key) override { target_.task_key(key); }
  bool wants_regions() const override { return target_.wants_regions(); }
  void region_work(uint32_t region, uint64_t work) override;
  bool wants_nodes() const override { return target_.wants_nodes(); }
  void node(uint64_t key, uint64_t parent, uint8_t kind, uint32_t site,
            uint32_t instance) override {
    target_.node(key, parent, kind, site, instance);
  }
  void strand_node(uint64_t key) override { target_.strand_node(key); }
  void node_done(uint64_t key) override { target_.node_done(key); }

  // Thrown when a clipped strand is not the one the refining pass saw (the file changed, or a
  // kept decision is not this recording's: load/clipping_cache.hpp).
  struct NotReadAlike : std::runtime_error {
    using std::runtime_error::runtime_error;
  };
  // Whether it threw NotReadAlike, and whether it met every strand it was to clip (a pass that
  // ended before one of them did not read the recording the clipping was decided on).
  bool met_another_strand() const { return met_another_; }
  bool met_every_clipped_strand() const { return next_ == clipping_.strands.size(); }

 private:
  const ClippedStrand* next_clipped() const;
  model::StrandSink& target_;
  const Clipping& clipping_;
  const std::vector<uint32_t>& fragments_;
  size_t next_ = 0;       // the next clipped strand (they are sorted by order)
  uint64_t strands_ = 0;  // handed over so far
  bool met_another_ = false;
};

// The sink a pass hands its strands to: `target` itself when nothing is clipped, else a
// ClippingSink in front of it, made in `slot` (one per pass).
inline model::StrandSink& through_clipping(std::optional<ClippingSink>& slot,
                                           model::StrandSink& target, const Clipping& clipping,
                                           const std::vector<uint32_t>& fragments) {
  if (clipping.strands.empty()) return target;
  return slot.emplace(target, clipping, fragments);
}

}  // namespace tasklens::analysis
