// "What cut-off should I write?": the adviser's answer for recursive task programs, from one
// recording.
//
// A recursion is a set of task sites whose tasks nest in each other's (fib's two spawns, a
// sort's two halves): two sites are in one recursion when a task of one is the nearest task
// ancestor of a task of the other, or of its own site. A task's depth is the number of tasks of
// its recursion it is nested in, itself included: the tasks a top-level call creates have depth
// 1. A cut-off at depth D keeps the tasks of depth D or less and runs the deeper ones as plain
// calls, where they were created (BOTS's "manual" cut-off: `if (depth < D)` around the task).
//
// The work, span and parallelism are those of the recursion's scope (Recursion::scope): what a
// cut-off changes, judged apart from the serial code of the program around it, which has
// findings of its own. (Tasks recorded with tiny work are also recorded with costs a plain call
// does not have; judged alone, the recursion's parallelism keeps its proportions, where the
// program's would be diluted by code whose share grows when those costs go.)
//
// The program with that cut-off is computed from the recorded DAG, not guessed: an inlined
// task's strands run one after the other, in the serial order, right where it was created;
// what followed its creation in the creating task (the creating strand's successors: the rest of
// that task, a later task it creates, a wait for that task's end) starts after the inlined call
// returns. Every recorded edge is kept (a dependence still holds). The work is unchanged: the
// tasks' own code still runs, only the tasks are no longer made. The burdened figures charge the
// tasking overhead once per task still made, as analysis::burdened does.
//
// Cost: one pass over the strands and edges per depth evaluated (a binary search for the
// recommended one, plus the few around it that the table shows).
#pragma once

#include <cstdint>
#include <vector>

#include "model/model.hpp"

namespace tasklens::analysis {

struct CutoffLevel {
  uint32_t depth = 0;             // tasks nested at most this deep are kept
  uint64_t min_work = 0;          // > 0: of those, only the tasks whose subtree does this much
  uint64_t tasks_kept = 0;        // tasks of the recursion still made
  uint64_t leaf_tasks = 0;        // of them, those of depth `depth` (each runs its subtree)
  uint64_t leaf_median_work = 0;  // their median work, their inlined calls included
  uint64_t leaf_smallest_work = 0;
  uint64_t span = 0;           // of the recursion's scope with this cut-off
  double parallelism = 0;      // the scope's work / span
  uint64_t burdened_span = 0;  // every task still made charged the tasking overhead
  double burdened_parallelism = 0;
};

struct Recursion {
  std::vector<uint32_t> sites;  // its task sites (Model::sites indexes), ascending
  uint64_t tasks = 0;           // its tasks in the recording
  uint32_t max_depth = 0;       // the deepest one recorded
  // The innermost construct node holding all its tasks (the `single` whose code makes the top
  // call, say): the recursion's work and span are that node's, which the code outside it (the
  // program's serial part, that a cut-off does not change) does not dilute.
  uint32_t scope = 0;
};

// The recursions of a model: groups of task sites nested in each other at least once. A task
// site whose tasks never nest in tasks of the same group (a loop of tasks) is no recursion and
// is not listed. Sorted by task count, descending.
std::vector<Recursion> find_recursions(const model::Model& m);

enum class CutoffVerdict {
  Reached,            // the shallowest depth whose burdened parallelism reaches the target
  ReachedUnburdened,  // none reaches it burdened; the shallowest that does without the burden
  NotReached,         // no depth reaches the target: the shallowest with 98% of the most there is
};
const char* to_string(CutoffVerdict verdict);

struct CutoffAdvice {
  Recursion recursion;
  uint64_t work = 0;  // the recursion's scope's
  uint64_t per_task = 0;
  double target = 0;
  CutoffLevel recorded;             // depth = max_depth: the recording as it is
  std::vector<CutoffLevel> levels;  // evaluated depths, ascending (recommended among them)
  uint32_t recommended = 0;         // a depth of `levels`
  CutoffVerdict verdict = CutoffVerdict::NotReached;
  // False when the recommended depth still makes more than half of the recursion's tasks: its
  // tasks are spread over its levels (a deep, narrow or unbalanced tree), not gathered at its
  // bottom, so no depth both removes the small tasks and keeps the parallelism.
  bool depth_helps = true;
  // Then, when one reaches what the recommended depth reaches (the verdict's bar) with fewer
  // tasks: a size cut-off at every depth, a task only for a call whose subtree does
  // `size_cutoff.min_work` or more (a power of two; the largest that reaches it). Inlining a
  // task that waits for its children inlines its whole subtree, so a rule by level (a task at
  // one level in a few) does not help such trees: only the size of what is inlined does.
  // `size_cutoff.min_work` == 0: none.
  CutoffLevel size_cutoff;
};

// The program's span and burdened span with the tasks of `recursion` deeper than `depth` inlined
// (depth >= max_depth: the recording itself). `per_task`: the tasking overhead charged to every
// task still made, of any site (0: none).
CutoffLevel evaluate_cutoff(const model::Model& m, const Recursion& recursion, uint32_t depth,
                            uint64_t per_task);

// The program with a task of `recursion` made only for a call whose subtree (the task's work,
// the calls under it included, as recorded) does `min_work` or more, the others inlined as
// plain calls, at every depth.
CutoffLevel evaluate_size_cutoff(const model::Model& m, const Recursion& recursion,
                                 uint64_t min_work, uint64_t per_task);

// The recommended cut-off of one recursion for `target` parallelism (see CutoffVerdict), with
// the depths around it (`neighbours` on each side, within 1 .. max_depth) in `levels`.
CutoffAdvice advise_cutoff(const model::Model& m, const Recursion& recursion, double target,
                           uint64_t per_task, uint32_t neighbours = 2);

}  // namespace tasklens::analysis
