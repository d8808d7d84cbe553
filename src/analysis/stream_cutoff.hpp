// The cut-off advice (cutoff.hpp) on a recording read in passes, for recordings whose DAG does
// not fit in memory: the same recursions, depths and figures as the DAG's reading wherever the
// passes can compute them exactly, and a reason where they cannot.
//
// The DAG's reading relaxes the strands in the serial elision's order, which a pass (strands in
// a topological order of the recorded run) does not have. What a pass can do instead: with the
// cut at depth D, a task of depth D runs its whole subtree as calls, one serial chain from its
// first strand's start to that plus the subtree's weight; above D the recorded edges are the
// cut-off program's. So every strand of depth t is a plain strand for each cut D > t (a distance
// each, as the recorded DAG's) and inside the chain of its depth-D ancestor for D <= t (its weight
// added to that chain). One pass evaluates every candidate depth at once. It is exact when
// nothing enters a chain's middle from outside it (a dependence from another subtree), no task of
// another site or construct of a team runs inside one (the cut-off keeps those), a chain is read
// only once its subtree is done, and nothing reads a chain's middle from outside; the pass
// checks each and gives no figure for a depth where one fails (CutoffDepthNotExact).
//
// Passes: (1) CutoffScan: the recursions (the site graph of nested tasks) and each code
// fragment's mean work for the pacing (cutoff.cpp's paced_work); (2) CutoffExtents: per
// recursion its tasks per depth and its scope, and the pacing's slices; (3) StreamCutoffPass per
// recursion, for a set of depths; more such passes when the adviser's search asks for a depth not
// evaluated yet. Not in passes: the size cut-off (its program inlines by subtree size, known
// only once a subtree has run) and the grouped form (not built: its calls would be chains per
// creating task); the leaves' median is a quantile sketch's (at most 1/128 below the exact one).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis/cutoff.hpp"
#include "analysis/quantile_sketch.hpp"
#include "model/strand_sink.hpp"

namespace tasklens::analysis {

// Whether a site (as the pass numbers it) is a task construct's: asked during the passes.
using TaskSiteTest = std::function<bool(uint32_t site)>;

// A depth the passes cannot evaluate exactly, and why.
class CutoffDepthNotExact : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The passes' common part: they want the construct tree and each strand's times (which come
// just before the strand).
class NodesAndTimesSink : public model::OptionalCallsSink {
 public:
  bool wants_nodes() const override { return true; }
  bool wants_times() const override { return true; }
  void times(uint64_t start, uint64_t end, uint32_t thread) override {
    start_ = start;
    end_ = end;
    thread_ = thread;
  }

 protected:
  uint64_t start_ = 0, end_ = 0;
  uint32_t thread_ = ~0u;  // (model::kNone: untimed)
};

// Pass 1: the recursions' site groups and the pacing's fragment means.
class CutoffScan final : public NodesAndTimesSink {
 public:
  explicit CutoffScan(TaskSiteTest is_task_site) : is_task_site_(std::move(is_task_site)) {}
  void node(uint64_t key, uint64_t parent, uint8_t kind, uint32_t site, uint32_t) override;
  void node_done(uint64_t key) override { nodes_.erase(key); }
  Strand strand(uint64_t work, uint64_t, uint32_t, const Strand*, uint32_t, const Instance*,
                uint32_t, uint64_t, uint32_t fragment, uint64_t) override;
  // The recursions' site groups (sites ascending, tasks counted; not yet max_depth or scope)
  // and the pacing's means and range.
  std::vector<Recursion> recursions() const;
  PaceTable pace() const;
  // The timed strands' first start and last end (analysis::run_loss's).
  uint64_t first_start() const { return first_start_; }
  uint64_t last_end() const { return last_end_; }

 private:
  struct Node {
    uint8_t kind;
    uint32_t nearest_site;  // the site of the nearest explicit task ancestor-or-self (kNone)
  };
  TaskSiteTest is_task_site_;
  std::unordered_map<uint64_t, Node> nodes_;
  std::vector<std::vector<uint32_t>> next_;
  std::vector<uint64_t> count_;
  std::vector<uint8_t> self_loop_;
  PaceTable pace_;
  uint64_t first_start_ = UINT64_MAX, last_end_ = 0;
};

// What one recursion's passes need beside its sites: its tasks per depth, its deepest task and
// its scope (as node keys of the passes).
struct RecursionExtent {
  std::vector<uint64_t> tasks_at;  // by depth (index 0 unused)
  uint32_t max_depth = 0;
  uint64_t scope = model::StrandSink::kNoNode;
  uint32_t scope_site = ~0u;  // the scope's site or the nearest one around it (~0u: none)
};

// Pass 2: every recursion's extent and the pacing's slices (the means from pass 1).
class CutoffExtents final : public NodesAndTimesSink {
 public:
  CutoffExtents(const std::vector<Recursion>& recursions, TaskSiteTest is_task_site,
                PaceTable pace);
  void node(uint64_t key, uint64_t parent, uint8_t kind, uint32_t site, uint32_t) override;
  void node_done(uint64_t key) override { nodes_.erase(key); }
  Strand strand(uint64_t work, uint64_t, uint32_t, const Strand*, uint32_t, const Instance*,
                uint32_t, uint64_t, uint32_t fragment, uint64_t) override;
  std::vector<RecursionExtent> extents() const;
  const PaceTable& pace() const { return pace_; }

 private:
  struct Node {
    uint64_t parent;
    uint32_t site;
    uint8_t kind;
    std::vector<uint32_t> depth;  // per recursion
  };
  std::vector<std::vector<uint8_t>> in_set_;
  TaskSiteTest is_task_site_;
  PaceTable pace_;
  std::unordered_map<uint64_t, Node> nodes_;
  std::vector<RecursionExtent> extents_;
  // Per recursion, the path from the root to the innermost node holding every depth-1 task so
  // far (keys, root first) and the sites along it.
  std::vector<std::vector<std::pair<uint64_t, uint32_t>>> scope_path_;
};

// Pass 3: one recursion's span and burdened span at each of `cuts` (ascending depths >= 1),
// with the tasks of the recursion deeper than the cut inlined; per_task charged to every task
// still made. The pacing from pass 2.
class StreamCutoffPass final : public NodesAndTimesSink {
 public:
  StreamCutoffPass(const Recursion& recursion, const RecursionExtent& extent,
                   TaskSiteTest is_task_site, const PaceTable& pace, std::vector<uint32_t> cuts,
                   uint64_t per_task);
  ~StreamCutoffPass() override;
  bool wants_task_starts() const override { return true; }
  void node(uint64_t key, uint64_t parent, uint8_t kind, uint32_t site, uint32_t) override;
  void node_done(uint64_t key) override;
  void strand_node(uint64_t key) override { strand_node_ = key; }
  void task_start() override { task_start_ = true; }
  Strand strand(uint64_t work, uint64_t span_weight, uint32_t site, const Strand* preds,
                uint32_t pred_count, const Instance* instances, uint32_t instance_count,
                uint64_t iterations, uint32_t fragment, uint64_t order) override;
  Strand open_join() override;
  void fold(Strand join, Strand pred) override;
  void release(Strand s) override;

  struct Result {
    uint64_t work = 0;  // the scope's, paced
    // By cut (as given): the level, unfinished (parallelism unset) and without tasks_kept;
    // `exact` false with `why` when the pass could not compute it.
    std::vector<CutoffLevel> levels;
    std::vector<uint8_t> exact;
    std::vector<std::string> why;
  };
  Result finish();

 private:
  struct State;
  std::unique_ptr<State> s_;
  uint64_t strand_node_ = kNoNode;
  bool task_start_ = false;
};

// The cut-off advice of the recursions with the most tasks (at most `recursions`), each with its
// depths evaluated in passes over the recording: `scan` has read it once; `read` reads it once
// more into the sink it is given (the same events in the same order each time). `per_task`: the
// tasking overhead; `machine` as advise_cutoff's. A recursion whose advice needs a depth the passes
// cannot evaluate exactly is left out, with its reason in `not_evaluated`.
struct StreamCutoffAdvice {
  std::vector<CutoffAdvice> cutoffs;
  std::vector<std::string> not_evaluated;
  size_t passes = 0;  // after the scan
};
StreamCutoffAdvice stream_advise_cutoffs(const CutoffScan& scan,
                                         const std::function<void(model::StrandSink&)>& read,
                                         const TaskSiteTest& is_task_site, size_t recursions,
                                         double target, uint64_t per_task,
                                         const CutoffMachine& machine);

}  // namespace tasklens::analysis
