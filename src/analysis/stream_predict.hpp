// `predict` on a recording read in one pass (model::build_streaming; docs/design-scale.md,
// "Collapsed subgraphs for predict"): the simulation of analysis/predict.hpp needs a DAG, which
// a recording of a billion tasks does not fit in memory as strands. This sink builds the
// simulator's graph (SimGraph) from the strands as they come, and collapses it so that it holds
// at most `max_nodes` nodes whatever the strand count:
//  * A strand whose predecessors all lie in one node joins that node, if the node's duration
//    plus its own is at most the grain, and neither stands for loop iterations seen together.
//    Only a node's first strand then has predecessors outside it, so the graph stays acyclic and
//    a node is ready when its first strand would be: collapsing delays no node's start, it only
//    runs the node's strands one after another on one worker, and holds its successors until
//    the last of them is done. (DAG Recorder's collapsed subgraphs, by size, not by who ran them.)
//  * The grain starts at 0 (no strand joins another: the simulator's graph is the strand DAG,
//    with a node per join). When the graph reaches max_nodes, the grain grows (four times the
//    mean duration per node the budget allows, at least twice the last grain) and the graph is
//    collapsed again by the same rule, until it holds at most half the budget.
//  * What collapsing can cost the simulation is bounded by what it adds to the longest path:
//    `collapsed_span` against `span` (Brent: a greedy schedule takes at most T1/P + Tinf, and
//    Tinf grows by that much). The report prints both.
// The overheads (analysis/predict.hpp's four classes) are measured in the same pass, from the
// gaps between a worker's strands in the order they started (through a window of strands per
// thread, `gap_window_`: the builder hands some over late, up to a taskloop's tasks); their
// trimmed means are exact, with bounded memory, unless a class has more than a million gaps of
// 2^16 ticks or more (GapSketch).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "analysis/predict.hpp"
#include "analysis/quantile_sketch.hpp"
#include "analysis/stream_tasks.hpp"
#include "model/model.hpp"
#include "model/strand_sink.hpp"

namespace tasklens::analysis {

// The mean of a distribution's values after dropping the largest 1% and any over 16 times its
// median (predict.hpp's trimmed_mean), exactly: the values themselves while it holds at most
// `exact_limit` of them (8 MB by default); then a count per value below kSmall ticks (512 KB) and
// the larger values themselves, up to `exact_limit` of those; only past that, the larger values
// in buckets of counts and sums (within QuantileSketch::kRelativeError). The mean is the exact
// sum's while that sum is below 2^53 ticks (where adding the values one by one as doubles, as
// the in-memory reading does, rounds nothing).
class GapSketch {
 public:
  static constexpr uint64_t kSmall = uint64_t{1} << 16;
  explicit GapSketch(size_t exact_limit = size_t{1} << 20) : exact_limit_(exact_limit) {}
  void add(uint64_t v) {
    ++count_;
    if (count_ <= exact_limit_) {
      exact_.push_back(v);
      return;
    }
    if (small_.empty()) {  // too many to keep one by one: counted by value from now on
      small_.assign(kSmall, 0);
      std::vector<uint64_t> kept;
      kept.swap(exact_);
      for (uint64_t x : kept) add_counted(x);
    }
    add_counted(v);
  }
  uint64_t count() const { return count_; }
  // Whether trimmed_mean() is exact: no larger value went into a bucket.
  bool exact() const { return bucketed_ == 0; }
  OverheadCost trimmed_mean();

 private:
  void add_counted(uint64_t v) {
    if (v < kSmall) {
      ++small_[v];
    } else if (large_.size() < exact_limit_ && bucketed_ == 0) {
      large_.push_back(v);
    } else {
      if (bucketed_ == 0) {  // (the larger values kept so far go too: one kind of account)
        std::vector<uint64_t> kept;
        kept.swap(large_);
        for (uint64_t x : kept) add_to_buckets(x);
      }
      add_to_buckets(v);
    }
  }
  void add_to_buckets(uint64_t v) {
    const size_t b = QuantileSketch::bucket_of(v);
    if (b >= counts_.size()) {
      counts_.resize(b + 1, 0);
      sums_.resize(b + 1, 0);
    }
    ++counts_[b];
    sums_[b] += v;
    ++bucketed_;
  }
  OverheadCost counted_trimmed_mean();
  size_t exact_limit_;
  std::vector<uint64_t> exact_;          // every value, while there are few
  std::vector<uint64_t> small_;          // then: a count per value below kSmall
  std::vector<uint64_t> large_;          // and the others, while there are few
  std::vector<uint64_t> counts_, sums_;  // or in buckets
  uint64_t bucketed_ = 0;
  uint64_t count_ = 0;
};

class StreamPredict final : public model::StrandSink {
 public:
  static constexpr uint32_t kDefaultMaxNodes = uint32_t{1} << 22;
  // `tsc`: the metric is the TSC (a strand's duration is its work; else its end - start).
  // `tasks`: a task profile to feed too (the extrapolation's), or null.
  // `threads`: the recording's threads (its streams), which share the gaps' windows.
  // `grain`: the first grain (0: none; predict_grain() estimates one from the trace).
  StreamPredict(uint32_t max_nodes, bool tsc, uint32_t threads, StreamTasks* tasks = nullptr,
                uint64_t grain = 0);

  Instance open_instance(uint32_t) override { return 0; }
  void not_outermost(Instance) override {}
  void close_instance(Instance) override {}
  bool wants_times() const override { return true; }
  void times(uint64_t start, uint64_t end, uint32_t thread) override;
  bool wants_task_keys() const override { return true; }
  void task_key(uint64_t key) override { key_ = key; }
  bool wants_tasks() const override { return tasks_ != nullptr; }
  void task(const Task& t) override { tasks_->task(t); }
  Strand strand(uint64_t work, uint64_t span_weight, uint32_t site, const Strand* preds,
                uint32_t pred_count, const Instance* instances, uint32_t instance_count,
                uint64_t iterations, uint32_t fragment, uint64_t order) override;
  Strand open_join() override;
  void fold(Strand join, Strand pred) override;
  void release(Strand s) override;

  struct Result {
    SimGraph graph;
    uint64_t strands = 0;          // strands handed over
    uint64_t timed_strands = 0;    // of which timed (a thread and a time)
    uint64_t work = 0, span = 0;   // the durations' sum and longest path (predict's T1, Tinf)
    uint64_t collapsed_span = 0;   // the longest path of the graph's nodes, each run whole
    uint64_t grain = 0;            // the collapsing's last grain (0: nothing collapsed)
    uint64_t divisible = 0;        // strands standing for loop iterations seen together
    uint32_t workers = 0;          // threads that ran a timed strand
    uint64_t first = 0, last = 0;  // the timed strands' earliest start and latest end
    Overheads overheads;           // measured; finish_overheads (predict.hpp) still to apply
    bool overheads_exact = true;   // every class's trimmed mean exact (GapSketch::exact)
    // The most bytes the graph's arrays and the collapsing's held at once (their capacities):
    // bounded by the node budget, not by the strand count (the tests check it).
    uint64_t peak_graph_bytes = 0;
    // The most nodes a join's folds or a task's region listed at once (push_node): bounded by
    // about twice the graph's nodes, not by the tasks a barrier or a loop of creates joins.
    uint64_t longest_list = 0;
  };
  // Once every strand was handed over. Once.
  Result finish();

 private:
  static constexpr uint32_t kNoNode = ~uint32_t{0};
  static constexpr Strand kNoStrand = ~Strand{0};
  // A node holds at most grain / kSlackShare beside its longest path.
  static constexpr uint64_t kSlackShare = 8;
  // A join's folds and a task's region are kept as they come up to this many nodes, then
  // without repeats (push_node).
  static constexpr size_t kListKeptAsItComes = 1024;
  // The timed strand whose end made a strand ready (sched.hpp's ready time, with its tie rule
  // by the order strands were met in).
  struct ReadyEnd {
    uint64_t end = 0, order = 0;
    uint32_t thread = model::kNone;  // model::kNone: no timed strand before it
  };
  static bool later(const ReadyEnd& a, const ReadyEnd& b) {
    return a.thread != model::kNone &&
           (b.thread == model::kNone || a.end > b.end || (a.end == b.end && a.order > b.order));
  }
  struct Live {
    uint32_t node = kNoNode;  // its graph node (a join: once a strand names it)
    uint64_t task = ~uint64_t{0};
    bool timed = false, join = false;
    uint64_t dist = 0;     // the longest path of durations ending with it
    uint64_t dist_in = 0;  // the same inside its node
    uint64_t order = 0;    // Model::strand_order (a join: the first strand folded into it)
    ReadyEnd ready;        // its effective end: its own if timed, else its predecessors' latest
    std::vector<uint32_t> folds;  // a join's: the nodes folded into it, until it has a node
    // A strand's: its task's nodes since the task's first strand or its last wait (carried by
    // the task's latest strand), which a wait may collapse with the children it joins.
    std::vector<uint32_t> region;
  };
  Live& live(Strand s) {
    if (s >= live_.size()) live_.resize(s + 1);
    return live_[s];
  }
  Strand take_handle();
  uint32_t node_of(Strand s, uint64_t order);  // a join gets its node now, met at `order`
  // The node a node was collapsed into (union-find over the graph's nodes).
  uint32_t find(uint32_t v) {
    while (rep_[v] != v) v = rep_[v] = rep_[rep_[v]];
    return v;
  }
  bool merge_region(const Strand* preds, uint32_t count, Strand same, const SimGraph::Node& mine,
                    uint32_t& into);
  void compact();
  void end_rewrite(uint32_t nodes, size_t preds);
  uint32_t add_node(const uint32_t* preds, uint32_t count, SimGraph::Node node);
  void push_node(std::vector<uint32_t>& list, uint32_t node);
  // Room for `more` elements in a graph array: doubling up to an eighth of `limit` elements (the
  // budget's), then the budget, then an eighth more at a time, so that an array never holds
  // twice the budget for one element over it.
  template <class T>
  void make_room(std::vector<T>& v, size_t more, size_t limit);
  uint64_t graph_bytes() const;
  bool can_join(uint32_t node, uint64_t duration, uint64_t iterations, uint64_t span_in) const;
  void absorb(uint32_t node, const SimGraph::Node& strand_or_node, bool is_node, uint64_t span_in);
  void collapse_again();

  const uint32_t max_nodes_;
  const bool tsc_;
  StreamTasks* const tasks_;
  uint64_t grain_ = 0;
  SimGraph graph_;
  // Per node: the node it was collapsed into (itself while it stands), and the strands' edges
  // from it to other nodes (a wait's folds not counted: see merge_region).
  std::vector<uint32_t> rep_, out_edges_;
  uint64_t dead_ = 0;  // nodes collapsed into others since the graph was last compacted
  // compact() and collapse_again() rewrite the graph in place (a node's new number is never
  // above its old one), with these per old node: its new number, and (collapsing) the longest
  // path inside its new node ending at its end; old spans of the live strands' nodes.
  std::vector<uint32_t> new_of_;
  std::vector<uint64_t> end_in_;
  std::vector<uint64_t> live_span_;
  uint64_t peak_graph_bytes_ = 0;
  std::vector<uint32_t> members_, children_;
  uint64_t total_duration_ = 0;
  std::vector<Live> live_;
  std::vector<Strand> free_;
  std::vector<uint32_t> scratch_;
  // The next strand's times() and task_key().
  uint64_t start_ = 0, end_ = 0;
  uint32_t thread_ = model::kNone;
  uint64_t key_ = ~uint64_t{0};
  Result r_;
  // Per thread: its timed strands not yet measured, the earliest start first (with the order
  // met for ties), so that they are taken in the order they started though the builder hands
  // some over late (held back); and the latest end of those taken (kNoTime: none yet).
  struct Started {
    uint64_t start, order, end, ready;
    uint32_t ready_thread;  // the thread of the timed strand that made it ready (kNone: none)
    uint8_t start_class;
    bool operator>(const Started& o) const {
      return start != o.start ? start > o.start : order > o.order;
    }
  };
  struct ThreadGaps {
    // A heap (std::push_heap with std::greater: the earliest on top), reserved at the window's
    // size once rather than grown by doubling.
    std::vector<Started> pending;
    uint64_t busy_until = kNoTime;
  };
  // A strand handed over after this many later-started strands of its thread is measured out
  // of order (its gap against what those did). The builder holds at most a taskloop's tasks
  // back (model::kMaxTaskloopHeld) and a few strands per loop; the window is that many strands
  // per thread while the threads' windows fit in 160 MB (40 bytes a strand), less beyond.
  size_t gap_window_ = 4096;
  void take_gap(uint32_t thread);
  std::vector<ThreadGaps> threads_;
  GapSketch spawn_, steal_, sync_, cont_;
};

}  // namespace tasklens::analysis
