// The verdict that opens `report` and `view` (what a newcomer reads first) as decisions:
// which findings hold, with the figures behind each, weighed by the share of the program's time
// it explains, most important first, at most kDiagnosisLines of them. No sentence is written here:
// report/diagnosis_report.hpp says each finding in words, names its code and gives the advice.
//
// The findings, each weighed by the share of the program's time it explains (the weight orders
// them; `target` is the parallelism aimed at, parallelism_target below):
//  * serial-code: critical-path strands outside every construct (the Program site), by code
//    fragment group; found when they hold at least kSerialCodePercent of the span and the
//    program's parallelism is below the target (above it the span does not limit the speedup).
//    Weight: their share of the span times the span's share of the time on `target` cores,
//    1 / (parallelism / target + 1). Figures: the largest group's time on the path and the
//    parallelism if it took no time (one longest path without it).
//  * tiny-tasks: a task type (analysis::task_sizes) of kTinyTasksMin tasks or more, at least
//    kTinyTasksPercent of them under the tiny size (tasks.hpp's ManyTinyTasks); the task types of
//    one recursion (fib's two spawns) are one finding, whose advice is a cut-off
//    (analysis/cutoff.hpp). Weight: the types' share of the program's work, times the share of
//    the workers' time spent in delay when it is known (else kUnknownDelay), at least
//    kTinyTasksDelayFloor.
//  * few-tasks: a task type (not loop chunks, whose number is the schedule's) with fewer than
//    kFewTasksPerWorker tasks per recorded thread holding kFewTasksWorkShare of the work or more,
//    or one task larger than a worker's share (tasks.hpp's FewLargeTasks and DominantTask).
//    Weight: kFewTasksWeight x the type's share of the work.
//  * uneven-shares, team-bound: analysis/loops.hpp's findings (kImbalanceNote, kTeamBoundShare).
//    Weight: the loop's imbalance / (1 + imbalance) times its share of the span; the team-bound
//    work's share of the program's work.
//  * region-entries: a parallel region entered kRegionEntries times or more whose own strands
//    (the team's start and end, the code around the constructs inside it) hold
//    kRegionEntryPercent or more of the critical path, at most kRegionEntryMax seconds per entry,
//    below the target: enter the team fewer times. Weight: that share times the span's share of
//    the time on `target` cores (as serial-code). whatif-gain and low-parallelism pass over such
//    a site.
//  * creation-bound: below the target, the construct site holding most of the critical path (at
//    least kWhatIfSitePercent of it) creates, along the path, kCreationMin or more tasks of
//    other sites, one after another, its strands that end in a creation holding
//    kCreationShare or more of its time there, and its tasks end faster than it makes them: at
//    most (gap + task) / gap threads can be busy (gap: its time on the path per task created;
//    task: the created tasks' mean work), below the target and at most kCreationExplains x the
//    program's parallelism (it is what holds the program back). A single that creates every
//    task of a tiled loop nest is the usual case; with `depend` clauses the runtime's handling
//    of each task's dependences adds to the time between creations. Splitting the site
//    (whatif-gain) is not the advice: fewer, larger tasks are, so whatif-gain and low-parallelism
//    pass over it. Weight: its share of the critical path times the span's share of the time on
//    `target` cores (as serial-code).
//  * work-inflation (report --base): the construct site (diff's unit) whose work grew the most
//    from the base recording, costing kInflationCostPercent or more of this recording's critical
//    path and at least kInflationRatio x the base's work. Weight: that cost's share of the span.
//  * whatif-gain: below the target, the construct site holding most of the critical path (at
//    least kWhatIfSitePercent of it), if splitting it kWhatIfSplit ways (whatif --site,
//    parallelize mode) would raise the program's parallelism kWhatIfGain times or more.
//    Weight: (1 - before / after) / 3.
//  * low-parallelism: the program's parallelism is below the target; the site holding most of
//    the critical path is named. Weight: kLowParallelismWeight x (1 - parallelism / target) (the
//    other findings say why, when they can). Not given with a whatif-gain finding, which names
//    the site and more.
//  * untrustworthy: the recording is disturbed: an incomplete trace, lost data (weight 1: it
//    qualifies every other line), strands clipped by the robust span that moved the parallelism
//    by kClippingMovePercent or more, recorder stalls over kRecorderStallPercent of the work,
//    lost context switches, a host that stole model::kHostStealDisturbing of the CPUs' time
//    (weight kDisturbedWeight).
// Equal weights keep the order the findings are made in: untrustworthy, serial-code, tiny-tasks,
// few-tasks, the loops' (site by site), region-entries, creation-bound, work-inflation,
// whatif-gain, low-parallelism.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "analysis/cutoff.hpp"
#include "analysis/diff.hpp"
#include "analysis/profile.hpp"
#include "analysis/robust.hpp"
#include "analysis/sched.hpp"
#include "analysis/tasks.hpp"
#include "analysis/whatif.hpp"
#include "model/model.hpp"

namespace tasklens::analysis {

// At most this many findings: the verdict is read before the table, so it stays a screenful.
inline constexpr size_t kDiagnosisLines = 5;

// The parallelism aimed at is this many times the cores: on P cores a run takes about
// work / P + span (Brent), of which the span is then 1/9: it no longer limits the speedup much.
inline constexpr double kTargetPerCore = 8;

// serial-code: serial code holding less than a tenth of the critical path is not what limits the
// program first (without it the span would shrink by less than 10%).
inline constexpr uint64_t kSerialCodePercent = 10;

// tiny-tasks: half of a type's tasks under the tiny size, and 8 of them or more (a handful of
// small tasks costs nothing worth saying). The same as tasks.hpp's TaskOptions defaults for
// ManyTinyTasks, so that `tasks` says the same of the type (a copy: keep them equal).
inline constexpr uint64_t kTinyTasksPercent = 50;
inline constexpr uint64_t kTinyTasksMin = 8;
// The workers' delay share assumed when it cannot be measured (neither the schedule nor a time
// metric with timestamps): an even guess between all overhead and none.
inline constexpr double kUnknownDelay = 0.5;
// The least delay share a tiny-task type is weighed with, so that a type measured with almost no
// delay (its overhead inside the tasks' own time) still weighs by its share of the work.
inline constexpr double kTinyTasksDelayFloor = 0.1;

// few-tasks: with fewer than 4 tasks per worker the workers cannot even out their loads (the last
// task to end decides the type's time), which matters when the type holds a tenth of the work or
// more. The same as TaskOptions' defaults for FewLargeTasks (a copy: keep them equal).
inline constexpr uint64_t kFewTasksPerWorker = 4;
inline constexpr double kFewTasksWorkShare = 0.1;
// Less than the type's share of the work: few tasks leave workers idle only when nothing else
// runs beside them, which the share alone does not tell.
inline constexpr double kFewTasksWeight = 0.4;

// region-entries. A parallel region entered again and again (`#pragma omp parallel for` inside a
// time-step loop) whose own strands hold a sizeable share of the critical path, a little at each
// entry: the team's start and end, and the code around the constructs inside it. Splitting that
// code (what whatif-gain would propose for the site holding most of the path) cannot help;
// entering the team fewer times does. Fewer entries than kRegionEntries are not "again and
// again"; a region whose entries hold more than kRegionEntryMax each on the path does real work
// of its own there, which the other findings cover.
inline constexpr uint64_t kRegionEntries = 64;
inline constexpr double kRegionEntryPercent = 10;  // % of the critical path, directly in the site
inline constexpr double kRegionEntryMax = 50e-6;   // seconds on the critical path per entry

// creation-bound. A creator is too slow for its tasks only when it makes many of them one after
// another: a few creations say nothing of a rate. Its strands that end in a creation must hold
// half of its time on the path, or the rest of its code (what whatif-gain would split) is the
// matter. And the bound it sets must explain the program's parallelism, within a factor of 2.
inline constexpr uint64_t kCreationMin = 100;
inline constexpr double kCreationShare = 0.5;
inline constexpr double kCreationExplains = 2;
// advise: a step runs a region's own code when the region's own strands hold at least 1 /
// kRegionStepPart of the step's fragment's work. Not the most of any site: a region's own strands
// often share their code fragment with its loop's chunks (both run from the region's line to the
// loop's), whose work is about as large and moves with the machine from one recording to the
// next (the most flipped between the region and its loop).
inline constexpr uint64_t kRegionStepPart = 3;

// low-parallelism says that the program lacks parallelism, not why: the findings that say why
// come before it (a quarter of its shortfall from the target).
inline constexpr double kLowParallelismWeight = 0.25;

// work-inflation: the work must grow by 30% or more (less is within what the same code's work
// moves with the machine's load between two recordings), and cost a tenth of the critical path
// (less is not where the time went).
inline constexpr double kInflationRatio = 1.3;
inline constexpr double kInflationCostPercent = 10;

// whatif-gain: the site split 8 ways (what a parallel loop or tasks over its work might give)
// must raise the parallelism by half to be worth a rewrite. A site holding less than a fifth of
// the critical path cannot: split 8 ways it raises the parallelism at most 1 / (1 - 0.2 x 7/8) =
// 1.21x, so that gate changes no verdict; it spares the what-if's longest path.
inline constexpr double kWhatIfSitePercent = 20;
inline constexpr double kWhatIfSplit = 8;
inline constexpr double kWhatIfGain = 1.5;

// untrustworthy: a robust span that moved the parallelism by a tenth, or recorder stalls over a
// twentieth of the work, are disturbances large enough to move the figures the other findings
// rest on.
inline constexpr double kClippingMovePercent = 10;
inline constexpr uint64_t kRecorderStallPercent = 5;
// A disturbance that may not have moved the figures much weighs less than a lost part of the run.
inline constexpr double kDisturbedWeight = 0.3;

// The parallelism the findings and `advise` aim at unless told otherwise: kTargetPerCore x the
// cores, of this machine or the threads recorded if there were more (a recording made on a larger
// machine is judged for it).
double parallelism_target(uint32_t threads_recorded, unsigned cores);
double parallelism_target(const model::Model& m);  // with machine_cores()
unsigned machine_cores();                          // at least 1

enum class DiagnosisKind : uint8_t {
  SerialCode,
  TinyTasks,
  FewTasks,
  UnevenShares,
  TeamBound,
  RegionEntries,
  WorkInflation,
  WhatIfGain,
  LowParallelism,
  Untrustworthy,
  CreationBound,
};
// The JSON's "kind": "serial-code", "tiny-tasks", ...
const char* to_string(DiagnosisKind kind);

struct SerialCode {
  uint32_t group = 0;              // the fragment group holding most of it on the path
  uint64_t serial = 0;             // all serial code's weight on the critical path
  uint64_t group_critical = 0;     // that group's
  uint64_t span = 0;               // the program's
  double parallelism = 0;          // the program's
  double parallelism_without = 0;  // with that group's code taking no time
};

// What a tiny-task finding's advice is.
enum class TinyAdvice : uint8_t {
  LargerChunks,  // loop chunks: a larger chunk size
  Cutoff,        // a recursion: TinyTasks::cutoff
  LargerTasks,   // other tasks: fewer, larger ones
};
// How the workers' delay share was known.
enum class DelaySource : uint8_t {
  Unknown,   // kUnknownDelay
  Schedule,  // the schedule's delay (work ready, no worker on it) over the workers' time
  Capacity,  // 1 - work / (threads x the run's duration): time outside the program's code
};
struct TinyTasks {
  bool chunks = false;          // loop chunks (TypeSizes::chunks)
  std::vector<uint32_t> sites;  // the task types' sites (several: one recursion's), as found
  uint32_t largest_site = 0;    // the type with most tasks (the first of equals)
  uint64_t median = 0;          // its median task
  uint64_t count = 0, tiny = 0, total = 0;  // summed over the types: tasks, tiny ones, work
  uint64_t tiny_size = 0;                   // what "tiny" meant (DiagnosisInput::tiny_size)
  double work_share = 0;                    // total / the program's work
  DelaySource delay_source = DelaySource::Unknown;
  double delay = kUnknownDelay;  // the workers' delay share
  TinyAdvice advice = TinyAdvice::LargerTasks;
  CutoffAdvice cutoff;  // TinyAdvice::Cutoff only
};

struct FewTasks {
  uint32_t site = 0;
  uint64_t count = 0, max = 0, total = 0;  // the type's tasks, its largest one, their work
  uint32_t workers = 0;                    // Model::thread_count
  double work_share = 0;                   // total / the program's work
  bool few = false;                        // fewer than kFewTasksPerWorker per worker
  bool dominant = false;                   // a task larger than a worker's share
};

struct UnevenShares {
  uint32_t site = 0;
  double imbalance = 0;   // LoopFacts::share_imbalance
  double span_share = 0;  // the loop's span / the program's
};

struct TeamBound {
  uint32_t site = 0;
  uint64_t team_bound_work = 0;  // LoopFacts::team_bound_work
  uint64_t work = 0;             // the region's
  double parallelism = 0;        // the region's
  uint32_t team = 0;             // LoopFacts::team
  uint64_t program_work = 0;
};

struct RegionEntries {
  uint32_t site = 0;
  uint64_t entries = 0;         // SiteRow::count
  uint64_t critical_work = 0;   // its own strands' on the critical path
  uint64_t per_entry = 0;       // critical_work / entries
  double critical_percent = 0;  // SiteRow::critical_path_percent
  double parallelism = 0;       // the program's
  double target = 0;
};

struct WorkInflation {
  size_t unit = 0;  // index into Diff::sites
  double ratio = 0;
  int64_t inflation = 0;
  double cost_percent = 0;
  uint32_t base_threads = 0, other_threads = 0;
};

struct WhatIfGain {
  uint32_t site = 0;
  model::SiteKind site_kind = model::SiteKind::Program;
  double critical_percent = 0;  // the site's share of the critical path
  double split = kWhatIfSplit;
  double before = 0, after = 0;  // the program's parallelism
};

struct LowParallelism {
  double parallelism = 0, target = 0;
  uint64_t work = 0, span = 0;
  uint32_t site = model::kNone;  // the site holding most of the critical path; kNone: none
  model::SiteKind site_kind = model::SiteKind::Program;
  double site_critical_percent = 0;
};

struct CreationBound {
  uint32_t site = 0;  // the creator
  model::SiteKind site_kind = model::SiteKind::Program;
  uint32_t task_site = 0;       // the site of most of the tasks it created on the path
  uint64_t created = 0;         // tasks it created along the critical path (of other sites)
  uint64_t creating_work = 0;   // the work of its strands on the path that end in those creations
  uint64_t gap = 0;             // creating_work / created: its time per task created
  uint64_t task_mean = 0;       // the created tasks' mean work (their whole subtrees)
  double bound = 0;             // (gap + task_mean) / gap: threads its tasks can keep busy
  double critical_percent = 0;  // the site's share of the critical path
  bool dependences = false;     // most created tasks wait for others (`depend`)
  uint64_t task_cost = 0;       // Model::task_cost (0: not measured)
  double parallelism = 0, target = 0;
};

struct Untrustworthy {
  bool incomplete = false;  // !Model::complete
  size_t losses = 0;        // Model::losses, every one said
  size_t clipped = 0;       // strands the robust span clipped, when it moved the parallelism
  double measured_parallelism = 0;  // the parallelism as measured (clipped > 0)
  uint64_t recorder_stalled = 0;    // said when non-zero
  uint64_t switches_lost = 0;       // said when non-zero
  double host_steal_percent = -1;   // said when >= model::kHostStealDisturbing
};

// The figures of a finding: one alternative per DiagnosisKind, in its order.
using FindingFigures =
    std::variant<SerialCode, TinyTasks, FewTasks, UnevenShares, TeamBound, RegionEntries,
                 WorkInflation, WhatIfGain, LowParallelism, Untrustworthy, CreationBound>;
struct DiagnosisFinding {
  double weight = 0;  // the share of the run it explains (the order)
  FindingFigures figures;
  DiagnosisKind kind() const { return static_cast<DiagnosisKind>(figures.index()); }
};

struct DiagnosisInput {
  const model::Model* model = nullptr;
  const Profile* profile = nullptr;
  double target = 0;  // the parallelism aimed at; 0: parallelism_target(*model)
  // The code fragment groups (per Model::fragments entry, its group, as advise takes them) and
  // their number; none (0 groups): no serial-code finding.
  const std::vector<uint32_t>* fragment_group = nullptr;
  uint32_t fragment_groups = 0;
  const Clipping* clipping = nullptr;  // the robust span's, may be null
  SpanFigures measured;                // the figures as measured, when something was clipped
  const std::vector<TypeSizes>* task_sizes = nullptr;  // may be null: no tiny-tasks, few-tasks
  uint64_t tiny_size = 0;  // what "tiny" means, metric units (tasks.hpp's default_task_options)
  const Schedule* schedule = nullptr;  // may be null
  const Diff* base = nullptr;          // report --base's comparison; may be null
};

// The findings, most important first (by weight; equal weights as said at the top), at most
// kDiagnosisLines. Needs the model and the profile (none without).
std::vector<DiagnosisFinding> diagnose(const DiagnosisInput& input);

// The serial code outside every construct (strands of the Program site) by fragment group: the
// groups with work, by critical-path weight then work, at most `limit` of them.
struct SerialGroup {
  uint32_t group = 0;
  uint64_t work = 0;      // of the group's strands outside every construct
  uint64_t critical = 0;  // of those on the critical path (path weight)
};
std::vector<SerialGroup> serial_groups(const model::Model& model, const Profile& profile,
                                       const std::vector<uint32_t>& fragment_group,
                                       uint32_t fragment_groups, size_t limit = 8);

// The parallel regions region-entries names, by site index (1 for those), whatever the
// program's parallelism. A region whose loops gcc split by the team itself (team-bound) has its
// loops' work in its own strands: that is work, not entries.
std::vector<uint8_t> regions_entered_too_often(const model::Model& model, const Profile& profile);

// A step of advise's and the share of its fragment's work a note is about.
struct StepShare {
  size_t index = 0;  // into Advice::steps
  double share = 0;  // of the step's fragment's work
};

// creation-bound's figures, when the site holding most of the critical path (not one of
// `pass_over`'s) is such a creator; `creating`, when given, receives per strand whether it is
// one of that site's strands that ended in a creation (anywhere, on the path or not).
std::optional<CreationBound> find_creation_bound(const model::Model& model, const Profile& profile,
                                                 double target,
                                                 const std::vector<uint8_t>& pass_over,
                                                 std::vector<uint8_t>* creating = nullptr);

// advise's steps whose fragment is mostly the time between two creations of a creator too slow
// for its tasks (its creating strands hold 1 / kRegionStepPart of the fragment's work or more,
// as for regions): the runtime's creating the tasks as much as the program's code, shortened by
// fewer, larger tasks, which the step's line cannot say. The creator's figures (for advise's
// target) go to `found` when there are such steps.
std::vector<StepShare> creation_steps(const model::Model& model, const Profile& profile,
                                      const std::vector<uint32_t>& fragment_group,
                                      const Advice& advice, double target, CreationBound* found);

// advise's steps that run the own code of a region entered too often (the region's own strands
// hold 1 / kRegionStepPart of their fragment's work or more): what parallelizes them is entering
// the team fewer times, which the step's line cannot say.
struct RegionEntrySteps {
  uint32_t site = 0;             // the region
  uint64_t entries = 0;          // SiteRow::count
  std::vector<StepShare> steps;  // in step order; the share in the region's own strands
};
// In the order the regions first come in the steps. `fragment_group` as advise's.
std::vector<RegionEntrySteps> region_entry_steps(const model::Model& model, const Profile& profile,
                                                 const std::vector<uint32_t>& fragment_group,
                                                 const Advice& advice);

}  // namespace tasklens::analysis
