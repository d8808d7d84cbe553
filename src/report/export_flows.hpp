// The DAG's edges as a timeline viewer draws them (`tasklens export --format perfetto`): which
// edges are spawns, joins, dependences or plain continuations, and how edges through strands that
// have no place on a timeline are routed.
//
// Definitions (over model::Model; deterministic, no I/O):
//  * A strand is *timed* when it has a worker and a timestamp (Strand::thread != kNone and start
//    or end is not 0; the same rule as analysis/sched.hpp). Timed strands are the slices of the
//    timeline; the others (the synthetic join strand of a barrier) are not.
//  * The *owner* of a strand is the innermost node around it (its own node included) that is a
//    unit of execution of its own: NodeKind Program, ImplicitTask, Task or Chunk (a loop chunk or
//    a section is forked from the strand before its loop and joined after it, like a task).
//    Taskgroups, loops' per-thread shares, single, masked, sections, taskloop, phases and
//    parallel regions are scopes inside their owner.
//  * An edge p -> s is, with O(x) the owner of x and "below" meaning a proper descendant in the
//    construct tree (preorder ranges, model.hpp):
//      continuation  O(p) == O(s)        the same task goes on (after a spawn, a wait ...)
//      spawn         O(s) below O(p)     a task, implicit task or chunk starts (also a parallel
//                                        region forking its implicit tasks)
//      join          O(p) below O(s)     a task's last strand -> the strand that waited for it
//                                        (taskwait, taskgroup end, task_group::wait, barrier)
//      dependence    otherwise           depend clauses between sibling tasks
//  * An edge into or out of an untimed strand u is routed through it: every timed source of u
//    (its timed predecessors, and recursively the timed sources of its untimed predecessors) gets
//    one flow to every timed successor s of u. Its kind: the kind of u -> s, except that
//    continuation (s goes on in u's task) gives the kind of the first leg (a join into the
//    waiting task), and join then spawn gives `barrier` (a barrier joins the team and releases
//    the next phase). `via` names u. A barrier of P workers followed by P implicit tasks gives
//    P x P flows.
//  * Flows drawn: every spawn, join, dependence and barrier; a continuation only when the task
//    moved to another worker (untied tasks, oneTBB waits): on one worker the next slice of the
//    track is the continuation.
//  * One flow per pair of slices: a source reached both by an edge and through an untimed strand
//    keeps the edge's flow; one reached through several untimed strands, the lowest kind in
//    FlowKind's order. (A rule on the kinds, not on the order the predecessors come in, so that
//    a reading in one pass, which meets them in another order, draws the same flows.)
// Cost: O(V + E) for V strands and E edges, plus the routed flows.
#pragma once

#include <cstdint>
#include <vector>

#include "model/model.hpp"

namespace tasklens::report {

enum class FlowKind : uint8_t { Continuation, Spawn, Join, Dependence, Barrier };
const char* to_string(FlowKind kind);

using model::is_timed;  // a slice: a strand with a worker and a timestamp

// The owner node of every node (see above): owner[v] is v or its nearest owning ancestor.
std::vector<uint32_t> owner_nodes(const model::Model& model);

// The kind of a flow routed through an untimed strand from the kinds of its two legs.
inline FlowKind routed_kind(FlowKind leg1, FlowKind leg2) {
  if (leg2 == FlowKind::Continuation) return leg1;
  if (leg1 == FlowKind::Join && leg2 == FlowKind::Spawn) return FlowKind::Barrier;
  return leg2;
}
// A flow is drawn unless it is a continuation on one worker.
inline bool drawn(FlowKind kind, uint32_t from_thread, uint32_t to_thread) {
  return kind != FlowKind::Continuation || from_thread != to_thread;
}
// Which of two ways to reach one destination from one source is drawn (the rule above): true
// when (routed, kind) comes before (other_routed, other_kind).
inline bool preferred_flow(bool routed, FlowKind kind, bool other_routed, FlowKind other_kind) {
  if (routed != other_routed) return !routed;
  return kind < other_kind;
}

// Kind of the model edge p -> s from the owners of both strands' nodes.
FlowKind classify_edge(const model::Model& model, const std::vector<uint32_t>& owner, uint32_t p,
                       uint32_t s);

struct Flow {
  uint32_t from = 0;            // timed strand
  uint32_t to = 0;              // timed strand
  uint32_t via = model::kNone;  // the untimed strand it was routed through, if any
  FlowKind kind = FlowKind::Continuation;
};

// The flows to draw (the rules above), grouped by destination in increasing strand order:
// flows[begin[s] .. begin[s + 1]) end at strand s. A pair (from, to) appears once.
struct Flows {
  std::vector<Flow> flows;
  std::vector<uint32_t> begin;        // size strands + 1
  uint64_t edges = 0;                 // model edges between two timed strands
  uint64_t continuations_hidden = 0;  // continuation edges on one worker (not drawn)
  uint64_t routed = 0;                // flows routed through an untimed strand
};
Flows compute_flows(const model::Model& model);

}  // namespace tasklens::report
