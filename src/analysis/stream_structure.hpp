// `view`'s structure (analysis/structure.hpp) from a recording read in passes, for a recording
// whose DAG does not fit (or `view --stream`). The timeline's buckets need the run's bounds before
// the strands, and the tree's critical-path figures the path, so it takes two passes:
//  * StreamTimelineBounds beside the profile's pass (a TeeSink): the timed strands' bounds and
//    workers;
//  * StreamStructure in a second pass: the construct tree's groups from the builder's nodes
//    (StrandSink::node), their work, strands and critical-path weight (the first pass's path,
//    by arrival index), and the timeline's slices.
// The figures are those of the DAG in memory but for the members' spans (not computed: they
// need each node's strands together) and the order of a group's children, which is the order the
// builder met them rather than the model's preorder (so a cut of the tree at its budget may
// fall on other groups).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "analysis/structure.hpp"
#include "model/strand_sink.hpp"

namespace tasklens::analysis {

class StreamTimelineBounds final : public model::OptionalCallsSink {
 public:
  bool wants_times() const override { return true; }
  void times(uint64_t start, uint64_t end, uint32_t thread) override {
    bounds_.add(start, end, thread);
  }
  TimelineBounds finish() {
    bounds_.finish();
    return bounds_;
  }

 private:
  TimelineBounds bounds_;
};

// The work of each user region (StrandSink::region_work's parts added up, as whatif --list has
// it), for `view`'s default what-if units: beside the first pass, at the cost of a sum.
class StreamRegionWork final : public model::OptionalCallsSink {
 public:
  bool wants_regions() const override { return true; }
  void region_work(uint32_t region, uint64_t work) override {
    if (region >= work_.size()) work_.resize(region + 1, 0);
    work_[region] += work;
  }
  const std::vector<uint64_t>& work() const { return work_; }  // by region id

 private:
  std::vector<uint64_t> work_;
};

class StreamStructure final : public model::OptionalCallsSink {
 public:
  // `path`: the critical path's strands as (arrival index, weight on the path), sorted
  // (StreamProfile::finish's path_weights).
  // `max_nodes`: the aggregates the tree will be listed within (ConstructTrie::groups_for).
  StreamStructure(const TimelineBounds& bounds, size_t max_slices, size_t max_nodes,
                  std::vector<std::pair<uint64_t, uint64_t>> path);

  Strand strand(uint64_t work, uint64_t span_weight, uint32_t site, const Strand* preds,
                uint32_t pred_count, const Instance* instances, uint32_t instance_count,
                uint64_t iterations, uint32_t fragment, uint64_t order) override;
  bool wants_times() const override { return true; }
  void times(uint64_t start, uint64_t end, uint32_t thread) override {
    start_ = start;
    end_ = end;
    thread_ = thread;
  }
  bool wants_nodes() const override { return true; }
  void node(uint64_t key, uint64_t parent, uint8_t kind, uint32_t site, uint32_t instance) override;
  void strand_node(uint64_t key) override;
  void node_done(uint64_t key) override { live_.erase(key); }

  const ConstructTrie& trie() const { return trie_; }
  TimelineSlices& timeline() { return timeline_; }
  uint64_t nodes() const { return nodes_; }
  // Live nodes at most: what the pass held.
  size_t peak_live_nodes() const { return peak_live_; }

 private:
  ConstructTrie trie_;
  TimelineSlices timeline_;
  std::vector<std::pair<uint64_t, uint64_t>> path_;
  size_t next_on_path_ = 0;
  uint64_t arrivals_ = 0, nodes_ = 0;
  std::unordered_map<uint64_t, ConstructTrie::Placed> live_;  // by node key
  ConstructTrie::Placed current_{0, true};
  size_t peak_live_ = 0;
  uint64_t start_ = 0, end_ = 0;
  uint32_t thread_ = UINT32_MAX;
};

}  // namespace tasklens::analysis
