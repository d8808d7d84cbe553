// The condensed structure of a run that `view` draws (report/html_view.hpp says what each figure
// means): the construct tree aggregated by root paths of (site, node kind), cut breadth first at
// a budget, and the per-worker timeline as slices or merged buckets. Both the DAG in memory
// (report::structure_json) and one pass over the recording (analysis/stream_structure.hpp) fill
// these two, so the page gets the same figures either way.
//
// ConstructTrie: every node is added once, after its parent; a node's group under its parent's
// group is the child with its (site, kind), made at the first such node: "in order of first
// appearance" is the order nodes are added in (the model's preorder for the DAG; the order the
// builder met them for one pass). The trie keeps per group its member count and the work,
// strands and critical-path weight of the strands whose innermost node is a member.
// aggregates() then lists the groups breadth first, a group's children by their subtrees' work
// (the heaviest first; ties: more strands, more nodes, then by kind and site), within
// `max_nodes`: a group
// whose children do not all fit gets none and is `cut`; its totals cover its whole subtree.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "model/model.hpp"

namespace tasklens::analysis {

class ConstructTrie {
 public:
  static constexpr uint32_t kNoGroup = UINT32_MAX;
  // `max_groups`: when more groups than that are kept, the deepest levels are folded into
  // their ancestors (each group's totals into its ancestor's at the deepest level kept: whole
  // levels, so the shallow ones stay exact whatever order nodes come in), and nodes below that
  // depth count in their ancestors' groups from then on (capped() and depth_limit() say so).
  explicit ConstructTrie(uint32_t max_groups = uint32_t{1} << 20) : max_groups_(max_groups) {}
  // The groups kept for a tree listed within `max_nodes` aggregates: 16 times as many (at least
  // 65,536), so that the levels the list reaches are whole but for long narrow chains.
  static uint32_t groups_for(size_t max_nodes) {
    return static_cast<uint32_t>(
        std::clamp<uint64_t>(uint64_t{16} * max_nodes, uint64_t{1} << 16, uint64_t{1} << 24));
  }

  // The group of a new node under the node whose group is `parent_group` (kNoGroup: the root).
  // `member`: false when the node only counts below its parent's group (over the cap).
  struct Placed {
    uint32_t group;
    bool member;
  };
  Placed add_node(uint32_t parent_group, uint32_t site, model::NodeKind kind);
  // A strand whose innermost node was placed so; `critical`: its weight on the critical path
  // when it is on it, else 0.
  void add_strand(Placed node, uint64_t work, uint64_t critical) {
    if (groups_[node.group].folded_into != kNoGroup) node = {resolve(node.group), false};
    Group& g = groups_[node.group];
    if (node.member) {
      g.own_work += work;
      g.own_strands += 1;
      g.own_critical += critical;
    } else {
      g.below_work += work;
      g.below_strands += 1;
      g.below_critical += critical;
    }
  }
  bool capped() const { return capped_; }
  uint32_t depth_limit() const { return depth_limit_; }  // when capped(): the deepest level kept
  uint32_t groups() const { return static_cast<uint32_t>(active_); }  // groups kept

  struct Aggregate {
    uint32_t group = 0;          // the trie's group
    uint32_t parent = kNoGroup;  // its parent aggregate
    uint32_t depth = 0;
    model::NodeKind kind = model::NodeKind::Program;
    uint32_t site = model::kNone;
    uint64_t count = 0, work = 0, own_work = 0, strands = 0, critical = 0;
    bool cut = false;
  };
  // The aggregates breadth first within max_nodes (at least the root's), and per group its
  // aggregate or its nearest listed ancestor's (`listed_of`).
  std::vector<Aggregate> aggregates(size_t max_nodes, std::vector<uint32_t>& listed_of) const;

 private:
  struct Group {
    uint32_t parent = kNoGroup;
    uint32_t depth = 0;
    model::NodeKind kind = model::NodeKind::Program;
    uint32_t site = model::kNone;
    uint64_t count = 0;
    uint64_t own_work = 0, own_strands = 0, own_critical = 0;
    uint64_t below_work = 0, below_strands = 0, below_critical = 0;
    std::vector<uint32_t> children;   // in order of first appearance
    uint32_t folded_into = kNoGroup;  // below the depth kept: the ancestor at that depth
  };
  uint32_t resolve(uint32_t group) const;  // where a folded group's nodes count now
  void fold_deepest();                     // lowers the depth kept, folding what is below
  std::vector<Group> groups_;
  std::vector<uint64_t> at_depth_;  // groups kept per depth
  uint64_t active_ = 0;             // groups kept
  uint32_t depth_limit_ = UINT32_MAX;
  std::unordered_map<uint64_t, uint32_t> child_of_;  // (parent group, site, kind) -> group
  uint32_t max_groups_;
  bool capped_ = false;
};

// The timeline's slices of one run: per worker (a thread that ran a timed strand), every strand
// as a slice when there are at most `max_slices` timed strands, else merged per worker into
// max_slices / workers buckets of equal width over [first, last]. The bounds come before the
// strands (the DAG's strands, or a first pass). A strand is timed when it has a thread, a start
// and an end not before it. Slices are per worker in time order (ties by the rest of the slice);
// a merged bucket names the site with the most strand time in it (ties: the smaller site) and the
// group of that site's longest piece (ties: the earliest piece, then the smaller group).
struct TimelineBounds {
  uint64_t first = UINT64_MAX, last = 0, timed = 0;
  std::vector<uint32_t> threads;  // sorted, unique
  static bool timed_strand(uint64_t start, uint64_t end, uint32_t thread) {
    return thread != model::kNone && start != 0 && end >= start;
  }
  void add(uint64_t start, uint64_t end, uint32_t thread);  // threads then need finish()
  void finish();
  size_t unique_threads_ = 0;  // threads' size when last made unique
};

class TimelineSlices {
 public:
  struct Slice {
    uint64_t begin = 0, end = 0, busy = 0;
    uint32_t site = 0;
    uint32_t group = 0;  // the caller's number (a trie group), mapped when written
    uint64_t strands = 0;
    bool operator<(const Slice& o) const;
  };
  TimelineSlices(const TimelineBounds& bounds, size_t max_slices);
  // Nothing to draw: no timed strand, or no time elapsed.
  bool empty() const { return bounds_.timed == 0 || bounds_.last <= bounds_.first; }
  void add(uint64_t start, uint64_t end, uint32_t thread, uint32_t site, uint32_t group);
  // Per worker (bounds.threads' order) its slices in time order; busy ticks and strand count.
  struct Worker {
    uint32_t thread = 0;
    uint64_t strands = 0, busy = 0;
    std::vector<Slice> slices;
  };
  std::vector<Worker> finish();
  bool merged() const { return merged_; }
  uint64_t width() const { return width_; }
  uint64_t buckets() const { return buckets_; }

 private:
  struct BucketSite {
    uint32_t site = 0;
    uint64_t time = 0, longest = 0, longest_at = 0;
    uint32_t group = 0;
  };
  struct Bucket {
    uint64_t begin = UINT64_MAX, end = 0, busy = 0, strands = 0;
    std::vector<BucketSite> sites;
  };
  size_t worker_of(uint32_t thread) const;
  TimelineBounds bounds_;
  bool merged_ = false;
  uint64_t buckets_ = 0, width_ = 0;
  std::vector<Worker> workers_;
  std::vector<std::vector<Bucket>> grid_;
};

}  // namespace tasklens::analysis
