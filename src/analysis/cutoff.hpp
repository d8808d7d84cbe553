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
#include <functional>
#include <vector>

#include "analysis/whatif.hpp"
#include "model/model.hpp"

namespace tasklens::analysis {

struct CutoffLevel {
  uint32_t depth = 0;     // tasks nested at most this deep are kept
  uint64_t min_work = 0;  // > 0: of those, only the tasks whose subtree does this much
  // > 1: the tasks of depth `depth` made `group` at a time: one task runs that many calls in a
  // row, of those one task created one after the other (CutoffAdvice::group_cutoff).
  uint32_t group = 0;
  uint64_t tasks_kept = 0;        // tasks of the recursion still made
  uint64_t leaf_tasks = 0;        // of them, those of depth `depth` (each runs its subtree)
  uint64_t leaf_median_work = 0;  // their median work, their inlined calls included
  uint64_t leaf_smallest_work = 0;
  uint64_t span = 0;           // of the recursion's scope with this cut-off
  double parallelism = 0;      // the scope's work / span
  uint64_t burdened_span = 0;  // every task still made charged the tasking overhead
  double burdened_parallelism = 0;
  // On CutoffMachine::threads, what this depth adds to the work / P every depth shares (ticks;
  // 0: not predicted): ((P - 1) span + tasks_kept * per_task) / P.
  uint64_t machine_cost = 0;
};

// What each depth would take on the threads the program was recorded with. A task costs the
// program more than its one-thread overhead on several threads that contend (for the runtime's
// queues, for the data its tasks share): the recording says how much, as the time its run took
// beyond Brent's bound W/P + S, over its tasks, times P (RunLoss::per_task, c). With every task
// a cut-off still makes costing that, a depth d's time there is about Graham's bound on a greedy
// schedule, (W - S_d) / P + S_d, plus the tasks' cost shared by the threads:
//   (W + (P - 1) S_d + tasks_d c) / P,
// the recorded time itself, less S / P, at the recorded depth. (Brent's W/P + S_d would charge
// a shallow cut-off, whose span is a large share of its time, half its span too much on two
// threads.) Only the part after W/P is compared and shown: W is the same at every depth in the
// model, and as recorded with tiny tasks it holds what the tasks cost inside their own code
// (their data cold on another thread, the runtime's calls), which a cut-off takes away but one
// recording cannot tell apart. A cut-off for the target parallelism aims at a larger machine;
// this is the one for this one.
struct CutoffMachine {
  uint32_t threads = 0;   // P >= 2 (0: nothing predicted; on one thread, fewer tasks is faster)
  uint64_t per_task = 0;  // TSC ticks: the run's loss per task, at least the one-thread overhead
};

struct Recursion {
  std::vector<uint32_t> sites;  // its task sites (Model::sites indexes), ascending
  uint64_t tasks = 0;           // its tasks in the recording
  uint32_t max_depth = 0;       // the deepest one recorded
  // The innermost construct node holding all its tasks (the `single` whose code makes the top
  // call, say): the recursion's work and span are that node's, which the code outside it (the
  // program's serial part, that a cut-off does not change) does not dilute.
  uint32_t scope = 0;
  // Read in passes (stream_cutoff.hpp), where no node is kept: the site of the scope or of the
  // nearest construct around it with one (model::kNone: none, or `scope` names it).
  uint32_t scope_site = model::kNone;
};

// Each strand's weight on the cut-off's paths: its work at its thread's usual pace (why:
// cutoff.cpp's paced_work). Built in two sweeps over the strands, in any order, each giving
// the same weights whatever the order (the sums are of integers): add_mean() for every strand,
// means(), then add_slice() for every strand, then weight().
class PaceTable {
 public:
  static constexpr size_t kSlices = 256;
  static constexpr uint64_t kFragmentStrands = 200, kSliceStrands = 32;
  static constexpr uint32_t kNoThread = ~0u;
  void add_mean(uint64_t work, uint32_t thread, uint64_t start, uint64_t end, uint32_t fragment);
  void means();
  void add_slice(uint64_t work, uint32_t thread, uint64_t start, uint64_t end, uint32_t fragment);
  uint64_t weight(uint64_t work, uint32_t thread, uint64_t start, uint64_t end,
                  uint32_t fragment) const;

 private:
  // Timed, of a fragment met kFragmentStrands times or more (its mean known).
  bool paced(uint32_t thread, uint64_t start, uint64_t end, uint32_t fragment) const;
  size_t slice(uint32_t thread, uint64_t start) const;
  static constexpr uint64_t kUnknown = ~uint64_t{0};
  struct Fragment {
    unsigned __int128 work = 0;
    uint64_t strands = 0;
    uint64_t mean = kUnknown;  // in 1/65536 of the metric's unit
  };
  std::vector<Fragment> fragments_;
  uint64_t first_ = UINT64_MAX, last_ = 0;
  uint32_t threads_ = 0;
  struct Slice {
    unsigned __int128 work = 0, usual = 0;  // usual: in 1/65536 of the unit
    uint64_t strands = 0;
  };
  std::vector<Slice> slices_;
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
  // When the recommended depth's own tasks are still tiny (their median work, the calls under
  // them included, below kTinyTaskCosts times `per_task`: a wide level of calls that do almost
  // nothing, like a search whose root has thousands of children that are mostly leaves), the
  // same depth with those tasks made `group_cutoff.group` calls at a time (the largest power of
  // two that reaches the verdict's bar, as the size cut-off), when that makes at most half the
  // recommended depth's tasks: fewer, larger tasks.
  // `group_cutoff.group` == 0: none.
  CutoffLevel group_cutoff;
  // False when the reading did not evaluate the size cut-off and the grouped form (a recording
  // read in passes, stream_cutoff.hpp): then `size_cutoff` and `group_cutoff` say nothing.
  bool coarser_forms_evaluated = true;
  // On machine.threads (threads == 0: not predicted): the depth predicted fastest, the one with
  // the least machine_cost (the shallowest whose W/P + machine_cost is within kSameTime of the
  // least), in `levels` with its neighbours; and the depth whose machine_cost is the least (in
  // `levels` too): a deeper one when `fastest` won by its fewer tasks within the margin.
  CutoffMachine machine;
  uint32_t fastest = 0;
  uint32_t least_cost = 0;
};
// The recorded threads' cost per task from the run's loss (`per_task`: the one-thread overhead,
// the least a task costs): none from one thread or when the loss is not known.
CutoffMachine cutoff_machine(const RunLoss& loss, uint64_t per_task);

// The search for the fastest depth on the recorded threads evaluates every depth up to
// kEveryDepthUpTo, a quarter more each step past it, at most kMachineDepths in all: deep trees
// have a thousand levels, and one evaluation is a pass over the strands (stream_cutoff.cpp
// evaluates the same depths in its first pass).
inline constexpr uint32_t kEveryDepthUpTo = 24;
inline constexpr size_t kMachineDepths = 48;

// Predicted times this close count as the same (a run varies more): the fewer tasks win.
inline constexpr double kSameTime = 1.05;

// The program's span and burdened span with the tasks of `recursion` deeper than `depth` inlined
// (depth >= max_depth: the recording itself). `per_task`: the tasking overhead charged to every
// task still made, of any site (0: none).
CutoffLevel evaluate_cutoff(const model::Model& m, const Recursion& recursion, uint32_t depth,
                            uint64_t per_task);

// The depth cut-off at `depth` with its tasks of that depth made `group` calls at a time: of
// the calls one task makes at that depth, one after the other, each task runs `group` (the first
// task's creation, then the calls in order; the calls under them inlined). Every recorded edge
// is kept, as for a depth: a call still starts after what preceded its creation in the creating
// task, which the loop that makes the groups runs anyway. The strand that created a call not
// first of its group, when it created no other task (the loop's step and the task's creation),
// runs in the group's task right before that call, off the creating task's path: the grouped
// loop makes one task per group, so the creating task no longer goes through every call's
// creation before the last group can start.
CutoffLevel evaluate_group_cutoff(const model::Model& m, const Recursion& recursion, uint32_t depth,
                                  uint32_t group, uint64_t per_task);

// The program with a task of `recursion` made only for a call whose subtree (the task's work,
// the calls under it included, as recorded) does `min_work` or more, the others inlined as
// plain calls, at every depth.
CutoffLevel evaluate_size_cutoff(const model::Model& m, const Recursion& recursion,
                                 uint64_t min_work, uint64_t per_task);

// What advise_cutoff asks of a reading of the recording: the DAG in memory (the Model) or
// passes over it (stream_cutoff.hpp). `depth`, `size` and `group` give finished levels
// (parallelism set) of the recursion's scope; `size`, `group` and `widest` may be empty (the
// form is not evaluated in that reading).
struct CutoffSource {
  uint64_t work = 0;                                   // the scope's
  uint32_t max_depth = 0;                              // the deepest task recorded
  uint32_t scope = 0;                                  // Recursion::scope
  std::function<uint64_t(uint32_t cut)> tasks_within;  // the tasks a depth cut-off makes
  std::function<CutoffLevel(uint32_t depth, bool with_burden)> depth;
  std::function<CutoffLevel(uint64_t min_work, bool with_burden)> size;
  std::function<uint32_t(uint32_t depth)> widest;  // the most calls one task makes at a depth
  std::function<CutoffLevel(uint32_t depth, uint32_t group, bool with_burden)> group;
};

// The recommended cut-off of one recursion for `target` parallelism (see CutoffVerdict), with
// the depths around it (`neighbours` on each side, within 1 .. max_depth) in `levels`; with a
// `machine`, the fastest depth there too (and its neighbours), and every level's time there.
CutoffAdvice advise_cutoff(const model::Model& m, const Recursion& recursion, double target,
                           uint64_t per_task, uint32_t neighbours = 2,
                           const CutoffMachine& machine = {});
CutoffAdvice advise_cutoff(const Recursion& recursion, const CutoffSource& source, double target,
                           uint64_t per_task, uint32_t neighbours, const CutoffMachine& machine);

// The strongly connected groups of task sites that form recursions, from the site graph:
// next[a] holds b when a task of site b had a task of site a as its nearest explicit task
// ancestor; count[s] the tasks of site s, self_loop[s] whether one of them nested in another.
// Each group's sites ascending and its task count; max_depth and scope unset; unsorted.
std::vector<Recursion> recursion_groups(const std::vector<std::vector<uint32_t>>& next,
                                        const std::vector<uint64_t>& count,
                                        const std::vector<uint8_t>& self_loop);

}  // namespace tasklens::analysis
