// What a one-pass consumer of the strand DAG implements: the builder's streaming mode
// (model::build_streaming, builder.hpp) hands it every strand once the strand is final, in a
// topological order, and holds only what later strands can still reach, never the whole DAG.
// analysis/stream_profile.hpp's StreamProfile is one (the parallelism profile in one pass).
//
// The calls, and when the builder makes them:
//  * open_instance(site) before the first strand of a construct instance, close_instance once
//    no strand of it is to come; not_outermost(i) when the instance lies inside another of the
//    same site (a recursion), before its close.
//  * strand(...) for every strand, after each of its predecessors, with the instances around it
//    (for each site, the outermost open instance of that site, outermost first).
//  * open_join() for a join whose predecessors arrive one by one (the tasks a taskwait, a
//    taskgroup or a barrier waits for): fold(join, s) adds strand s to it, and the join is then
//    passed among a strand's predecessors like a strand.
//  * release(s) once no later strand or join takes s (or the join s) as a predecessor.
//  * task(t) for every task and loop chunk that ran a strand, once its last strand was handed
//    over (its size, waiting and idle times as analysis/tasks.hpp defines them), when the sink
//    wants_tasks().
//  * task_start() just before the strand() of a task's first strand (a Task node's, not a loop
//    chunk's: the strand analysis::burdened charges the tasking overhead), when the sink
//    wants_task_starts().
//  * times(start, end, thread) just before every strand(): the strand's Strand::start, end and
//    thread (kNone: none), when the sink wants_times().
//  * task_key(key) just before every strand(): a number naming the strand's task (its innermost
//    Task, ImplicitTask or Chunk node, else the Program node: analysis/predict.hpp's "task"),
//    equal for two strands exactly when they lie in one task, when the sink wants_task_keys().
//  * region_work(region, work) just before a strand() for each user region the strand did work
//    in (Model::region_work's entries of that strand: a region may come more than once, each
//    with work > 0), when the sink wants_regions().
//  * node(key, parent, kind, site, instance) once for every node of the construct tree
//    (Model::nodes: each one, none merged or left out), after its parent's and before any strand
//    inside it; strand_node(key) just before every strand(): its innermost node (Strand::node);
//    and node_done(key) once no strand or node inside it is to come. `key` is a serial number
//    (0 the program's node), never reused; `parent` kNoNode for the root; `kind` a NodeKind;
//    `site` the node's own construct site (Node::site, kNoSite for a structural node; a library's
//    site that counts for the one around it is that one, as report::attribute_library_sites has
//    it), `instance` its construct instance (Node::instance, kNoInstance for a structural node;
//    a library's construct's: the one around it). When the sink wants_nodes().
#pragma once

#include <cstdint>

namespace tasklens::model {

class StrandSink {
 public:
  using Strand = uint32_t;    // a live strand or join (the sink may recycle it after release)
  using Instance = uint32_t;  // an open instance (likewise after close)
  virtual ~StrandSink() = default;
  virtual Instance open_instance(uint32_t site) = 0;
  virtual void not_outermost(Instance i) = 0;
  virtual void close_instance(Instance i) = 0;
  // work: what the strand adds to work sums; span_weight: its weight on paths; site: the
  // innermost construct site around it (Strand::site); iterations: the loop iterations it stands
  // for, seen only together (Model::divisible): on paths it then weighs one iteration's share of
  // span_weight (analysis/algebra.hpp's iteration_span). 1 for any other strand. fragment: its
  // code fragment (Strand::fragment; in the streaming mode numbered as met, BuildOptions::
  // place_fragment). order: the order the builder met it in (Model::strand_order; a strand is
  // handed over later, once final), which breaks ties between paths of equal length.
  virtual Strand strand(uint64_t work, uint64_t span_weight, uint32_t site, const Strand* preds,
                        uint32_t pred_count, const Instance* instances, uint32_t instance_count,
                        uint64_t iterations, uint32_t fragment, uint64_t order) = 0;
  virtual Strand open_join() = 0;
  virtual void fold(Strand join, Strand pred) = 0;
  virtual void release(Strand s) = 0;

  // A task (a Task node) or an OpenMP loop chunk, as analysis::TaskSample has it: the site of its
  // type (its own, or the nearest around it), its own strands' work, and the TSC ticks from when
  // it was ready to its first strand's start and from its thread's previous strand's end to
  // then (kNoTime when unknown).
  static constexpr uint64_t kNoTime = ~uint64_t{0};
  struct Task {
    uint32_t site = 0;
    bool chunk = false;
    uint64_t size = 0;
    uint64_t wait = kNoTime;
    uint64_t idle = kNoTime;
  };
  // Asked once, before the first call: a sink that does not want tasks costs the builder
  // nothing for them.
  virtual bool wants_tasks() const { return false; }
  virtual void task(const Task&) {}
  virtual bool wants_task_starts() const { return false; }
  virtual void task_start() {}
  virtual bool wants_times() const { return false; }
  virtual void times(uint64_t /*start*/, uint64_t /*end*/, uint32_t /*thread*/) {}
  virtual bool wants_task_keys() const { return false; }
  virtual void task_key(uint64_t /*key*/) {}
  virtual bool wants_regions() const { return false; }
  virtual void region_work(uint32_t /*region*/, uint64_t /*work*/) {}
  static constexpr uint64_t kNoNode = ~uint64_t{0};
  static constexpr uint32_t kNoSite = ~uint32_t{0};
  static constexpr uint32_t kNoInstance = ~uint32_t{0};
  virtual bool wants_nodes() const { return false; }
  virtual void node(uint64_t /*key*/, uint64_t /*parent*/, uint8_t /*kind*/, uint32_t /*site*/,
                    uint32_t /*instance*/) {}
  virtual void strand_node(uint64_t /*key*/) {}
  virtual void node_done(uint64_t /*key*/) {}
};

// The base of a sink that wants only some of the optional calls (times, regions, ...): the
// strands, joins and instances go unweighed.
class OptionalCallsSink : public StrandSink {
 public:
  Instance open_instance(uint32_t) override { return 0; }
  void not_outermost(Instance) override {}
  void close_instance(Instance) override {}
  Strand strand(uint64_t, uint64_t, uint32_t, const Strand*, uint32_t, const Instance*, uint32_t,
                uint64_t, uint32_t, uint64_t) override {
    return 0;
  }
  Strand open_join() override { return 0; }
  void fold(Strand, Strand) override {}
  void release(Strand) override {}
};

}  // namespace tasklens::model
