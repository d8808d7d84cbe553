// What-if (causal) profiles and the adviser (after TaskProf and OMP-WHIP), answered from one
// recording.
//
// A what-if question names a *unit* of code — a user region, a construct site, a code fragment —
// and a factor k. Every strand's work w has a part u inside the unit; the what-if gives it
//   span weight  w - u + u/k            (what it costs on any path)
//   work         w            (mode Parallelize: the unit is split k ways, no work is saved)
//                w - u + u/k  (mode Speedup: the unit's code becomes k times faster)
// k = infinity removes the unit from every path (and, when speeding up, from the work). The
// program's span is then the longest path under the span weights.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "analysis/profile.hpp"
#include "model/model.hpp"

namespace tasklens::analysis {

enum class WhatIfMode { Parallelize, Speedup };
const char* to_string(WhatIfMode mode);

inline constexpr double kInfiniteFactor = std::numeric_limits<double>::infinity();

// x >= 0 rounded to the nearest integer, halves up: std::llround's result, inline (the one-pass
// what-if rounds once per strand per point). x - trunc(x) is exact in doubles.
inline uint64_t round_nonnegative(double x) {
  const uint64_t t = static_cast<uint64_t>(x);
  return t + (x - static_cast<double>(t) >= 0.5 ? 1 : 0);
}

// What w becomes divided by the factor k: w / k rounded to the nearest tick; 0 when k is infinite;
// w when k <= 1. The what-ifs, the adviser and their one-pass readings all round so.
uint64_t divide_by_factor(uint64_t w, double k);

// The work of each strand inside a unit: (strand, work) sorted by strand, work <= Strand::work.
struct Unit {
  std::string name;  // as the user named it ("fib.c:12", "region solve", ...)
  std::vector<std::pair<uint32_t, uint64_t>> parts;
  double factor = 0;  // the unit's own factor (FACTOR in --site NAME=FACTOR); 0: the curve's
};

// Strands attributed to one of the given sites (Strand::site), whole.
Unit unit_of_sites(const model::Model& m, const std::vector<uint32_t>& sites, std::string name);
// Strands running one of the given fragments (Strand::fragment), whole.
Unit unit_of_fragments(const model::Model& m, const std::vector<uint32_t>& fragments,
                       std::string name);
// The work inside one user region (Model::region_work).
Unit unit_of_region(const model::Model& m, uint32_t region, std::string name);

// The strand weights of applying every unit at once, each at its own factor if it has one and
// at `factor` otherwise. A strand covered by several units has the parts' sum capped at its
// work (units may overlap: a region inside a site).
Weights apply_units(const model::Model& m, const std::vector<const Unit*>& units, double factor,
                    WhatIfMode mode);

struct WhatIfPoint {
  double factor = 1;
  uint64_t work = 0, span = 0;
  double parallelism = 0;
};
struct WhatIfCurve {
  std::string unit;                 // a unit's name, or "all" for all units together
  uint64_t unit_work = 0;           // the unit's recorded work
  uint64_t unit_critical = 0;       // of it, on the recorded critical path
  std::vector<WhatIfPoint> points;  // one per factor, in the given order
};
// One curve per unit alone (at every factor, whatever its own), then, if there are two units or
// more or a unit has its own factor, one named "all" for all together (each unit at its own
// factor where it has one).
std::vector<WhatIfCurve> whatif_curves(const model::Model& m, const std::vector<Unit>& units,
                                       const std::vector<double>& factors, WhatIfMode mode);

// ---- Tasking overhead and burdened parallelism (Cilkview's burden).
enum class OverheadSource {
  None,         // not measurable: per_task is 0
  Calibration,  // measured by `tasklens record`: a task's whole cost on one thread
  Strands,      // estimated from the recording's shortest task strands (older traces)
};
const char* to_string(OverheadSource source);  // "none", "calibration", "strands"
struct Overhead {
  uint64_t per_task = 0;  // the cost of creating, scheduling and joining one task (metric units)
  uint64_t samples = 0;   // tasks it was measured on, or task strands it was estimated from
  OverheadSource source = OverheadSource::None;
};
// The tasking overhead per task: what `tasklens record` measured (Model::task_cost: the
// runtime's empty-task recursion against its serial elision, on one thread, without the
// recorder), which is what a program pays per task. A trace without that measure gets the
// older estimate: the shortest strands of explicit tasks hold almost nothing but runtime code
// (a task that only returns, the code between two task creations), so their 5th percentile,
// plus the mean per strand of the runtime's cost the model took out of the strands
// (Model::runtime_removed). That sees one interval of a task's path, not the whole: it comes
// out several times too small. It needs 100 task strands or more (otherwise source None).
Overhead estimate_task_overhead(const model::Model& m);

struct Burdened {
  uint64_t span = 0;              // longest path when every task start costs the overhead
  double parallelism = 0;         // work / span
  uint64_t overhead_on_path = 0;  // the overhead charged along that path
  double overhead_percent = 0;    // overhead_on_path / span * 100
};
// `span_weights`: one per strand (nullptr: Strand::work); `work`: the program's work.
Burdened burdened(const model::Model& m, const uint64_t* span_weights, uint64_t work,
                  uint64_t per_task);

// ---- What the recorded run lost beyond its DAG: it took `elapsed` (its timed strands' extent,
// less what the model took out of the strands per thread as tasklens's own cost, other
// processes' preemption and slow page faults, as predict does) where a greedy schedule of its DAG
// without overheads needs at most work / threads + span (Brent). The rest, over the threads and the
// tasks, is what making, scheduling and waiting for its tasks cost in this run: the figure to
// set beside the tasking overhead (what a task costs on one thread), which the burdened figures
// charge. Zero for a metric other than time.
struct RunLoss {
  uint32_t threads = 0;
  uint64_t tasks = 0;
  uint64_t elapsed = 0, greedy_bound = 0;  // TSC ticks
  uint64_t per_task = 0;                   // (elapsed - greedy_bound) * threads / tasks
  double lost_share = 0;                   // (elapsed - greedy_bound) / elapsed
  // The share of the threads' time they were switched out while runnable (for another process,
  // another of the program's threads, a yield) or the hypervisor took their CPUs, the larger:
  // how much of the loss a busy machine may explain, which one recording cannot tell apart.
  double switched_out_share = 0;
  // Most of the run lost (kMostLost), each task kLossMultiple times the one-thread overhead or
  // more (one known), kMinLostSeconds or more in all (a run of a few milliseconds can lose most
  // of them outside its tasks: docs/whatif.md): the tasks cost this many threads far more than
  // the burdened figures say.
  bool most_lost = false;
};
inline constexpr double kMostLost = 0.5;
inline constexpr double kLossMultiple = 10;
inline constexpr double kMinLostSeconds = 0.1;
// `work`, `span`: the program's; `per_task`: the tasking overhead on one thread.
RunLoss run_loss(const model::Model& m, uint64_t work, uint64_t span, uint64_t per_task);
// The same from the timed strands' first start and last end (a recording read in passes keeps no
// strand: analysis::CutoffScan measures them).
RunLoss run_loss(const model::Model& m, uint64_t first_start, uint64_t last_end, uint64_t work,
                 uint64_t span, uint64_t per_task);

// ---- The adviser: greedily parallelize the code fragment with the most work on the current
// critical path until the target parallelism is reached.
struct AdviseOptions {
  double target = 16;  // stop when the parallelism reaches it
  size_t max_steps = 10;
  double factor = 0;                  // each step's what-if factor; 0: the target
  double min_overhead_multiple = 10;  // K: stop at candidates below K x the tasking overhead
  WhatIfMode mode = WhatIfMode::Parallelize;
};
struct AdviceStep {
  uint32_t group = 0;              // the fragment group chosen
  uint64_t critical_work = 0;      // its work on the critical path before the step
  double critical_percent = 0;     // share of that critical path
  uint64_t strands_on_path = 0;    // its strands on that path
  uint32_t region = model::kNone;  // the user region with most of the fragment's work
  uint64_t region_work = 0;        // that work
  double region_percent = 0;       // of the fragment's work
  uint64_t work = 0, span = 0;     // after the step
  double parallelism = 0;
};
enum class AdviseStop { TargetReached, AlreadyReached, TooSmall, NothingLeft, MaxSteps };
const char* to_string(AdviseStop stop);
struct Advice {
  uint64_t work = 0, span = 0;  // before any step
  double parallelism = 0;
  double factor = 0;
  Overhead overhead;
  std::vector<AdviceStep> steps;
  AdviseStop stop = AdviseStop::NothingLeft;
  uint32_t stop_group = model::kNone;  // the candidate that was too small (AdviseStop::TooSmall)
  uint64_t stop_group_work = 0;        // its mean work per strand on the path
  Burdened burdened_before, burdened_after;
};
// `group_of[f]` groups fragments (Strand::fragment) into what the user sees as one fragment
// (same file:line-line); groups are 0 .. group_count-1. Group kNone is never chosen. Of groups
// with equal work on the path, `first_in_ties(a, b)` says whether a goes first (null: the lower
// group; `tasklens advise` gives the label's order, which a reading in one pass, whose groups
// are numbered as met, shares).
Advice advise(const model::Model& m, const std::vector<uint32_t>& group_of, uint32_t group_count,
              const AdviseOptions& options,
              const std::function<bool(uint32_t, uint32_t)>& first_in_ties = nullptr);

// ---- The adviser's loop, apart from how a step is evaluated: advise() evaluates on the DAG in
// memory, stream_advise.hpp in one pass over the recording per step.
struct AdviseEvaluation {
  uint64_t work = 0, span = 0;  // with the chosen groups parallelized (or sped up)
  // Per group (groups the evaluation has not met may be missing): its work on that critical path
  // (each strand's weight on paths) and its strands there.
  std::vector<uint64_t> critical, on_path;
};
struct AdviseEvaluator {
  // The program with the groups marked in `chosen` (indexed by group; missing: not chosen)
  // divided by `factor`.
  std::function<AdviseEvaluation(const std::vector<uint8_t>& chosen)> evaluate;
  // The burdened figures (burdened()) of the last evaluation's program.
  std::function<Burdened()> burdened;
  std::function<bool(uint32_t, uint32_t)> first_in_ties;  // as advise's; null: the lower group
};
// Each step's what-if factor: AdviseOptions::factor, or the target (2 at least).
double advise_factor(const AdviseOptions& options);
// The greedy steps (Advice without the steps' regions) from the evaluator, with `overhead`.
Advice advise_steps(const AdviseEvaluator& evaluator, const Overhead& overhead,
                    const AdviseOptions& options);
// Names each step's user region: of the work of its group's strands inside user regions
// (`group_regions[g]`: (region, work) pairs, a region may come more than once), the region that
// holds the most (ties: the lower id), that work, and its share of the group's work
// (`group_work[g]`: all of its strands'). What advise() does after the steps; a reading in one
// pass gathers the same sums in its pass.
void name_step_regions(Advice& advice,
                       const std::vector<std::vector<std::pair<uint32_t, uint64_t>>>& group_regions,
                       const std::vector<uint64_t>& group_work);

}  // namespace tasklens::analysis
