// `tasklens export --format perfetto` in one pass (export --stream, or a recording whose DAG does
// not fit): the timeline of export_timeline.hpp made from the strands as the builder hands them
// over, holding the slices of the time window asked for and, of the rest of the run, only what
// can still lead to a flow between two of them.
//
// What the sink keeps per live strand (or join) is the *sources* it carries towards later
// strands: a slice of the window itself, and for an untimed strand (a barrier's) or a join the
// window's slices behind it, each with the construct node it came from and the untimed strand it
// was routed through. A flow's kind needs the owners of the nodes at both ends and whether one
// lies below the other (export_flows.hpp), so the construct tree's nodes are kept while a node
// inside them or a source naming them is alive: memory follows what the run had live, plus the
// window's slices and flows.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "model/strand_sink.hpp"
#include "report/export_timeline.hpp"

namespace tasklens::report {

class TimelineSink final : public model::StrandSink {
 public:
  // Slices in `window` (ns since clock.origin), at most `max_slices` of them: one more throws
  // WindowTooLarge.
  TimelineSink(const ExportClock& clock, const TimeWindow& window, uint64_t max_slices);

  // The window holds more slices than max_slices.
  class WindowTooLarge : public std::runtime_error {
   public:
    explicit WindowTooLarge(uint64_t max_slices)
        : std::runtime_error("the timeline holds too many slices"), max_slices(max_slices) {}
    uint64_t max_slices;
  };

  Instance open_instance(uint32_t) override { return 0; }
  void not_outermost(Instance) override {}
  void close_instance(Instance) override {}
  Strand strand(uint64_t work, uint64_t span_weight, uint32_t site, const Strand* preds,
                uint32_t pred_count, const Instance* instances, uint32_t instance_count,
                uint64_t iterations, uint32_t fragment, uint64_t order) override;
  Strand open_join() override;
  void fold(Strand join, Strand pred) override;
  void release(Strand s) override;
  bool wants_times() const override { return true; }
  void times(uint64_t start, uint64_t end, uint32_t thread) override;
  bool wants_nodes() const override { return true; }
  void node(uint64_t key, uint64_t parent, uint8_t kind, uint32_t site, uint32_t instance) override;
  void strand_node(uint64_t key) override { current_node_ = key; }
  void node_done(uint64_t key) override { unref(key); }

  // The timeline, once the pass is over.
  Timeline take();
  size_t peak_live_nodes() const { return peak_nodes_; }

 private:
  // A slice of the window that a live strand carries on: reached from `node` (its strand's),
  // through the untimed strand of node `via` (kNoNode: directly).
  struct Source {
    uint32_t slice;
    uint64_t node;
    uint64_t via;
  };
  struct NodeInfo {
    uint64_t parent;
    uint64_t owner;  // the innermost owning node around it (export_flows.hpp), itself included
    uint32_t refs;   // itself until done, its live children, the sources that name it
    uint32_t depth;  // in the construct tree (the root 0)
    uint32_t instance;
    uint8_t kind;
  };
  FlowKind classify(uint64_t from_node, uint64_t to_node) const;
  void ref(uint64_t key);
  void unref(uint64_t key);
  void add_source(std::vector<Source>& to, const Source& s);  // (holds its nodes)
  Strand take_handle();

  ExportClock clock_;
  TimeWindow window_;
  uint64_t max_slices_;
  Timeline out_;
  std::unordered_map<uint64_t, NodeInfo> nodes_;
  size_t peak_nodes_ = 0;
  std::vector<std::vector<Source>> carried_;  // per handle
  std::vector<uint8_t> is_join_;              // per handle: an open_join()'s
  // Per slice: the last strand of a task its parent's taskwait joined where the task was made.
  // The builder cannot tell at a task's end whether its parent will wait for it, so it also
  // folds that end into the join of the taskgroup or phase around (an edge the span does not
  // see); the DAG has that edge only for a task no such taskwait joined (Builder's
  // joined_in_scope), and so do the flows.
  std::vector<uint8_t> joined_in_scope_;
  bool skipped(Strand pred, const Source& s) const {
    return is_join_[pred] && s.via == kNoNode && joined_in_scope_[s.slice];
  }
  void mark_joined(const Strand* preds, uint32_t pred_count);
  std::vector<Strand> free_;
  // The next strand's, from times() and strand_node().
  uint64_t start_ = 0, end_ = 0;
  uint32_t thread_ = model::kNone;
  uint64_t current_node_ = kNoNode;
  // Candidate flows into one slice (scratch).
  struct Candidate {
    uint32_t from;
    FlowKind kind;
    bool routed;
  };
  std::vector<Candidate> candidates_;
  std::vector<Source> scratch_;
};

}  // namespace tasklens::report
