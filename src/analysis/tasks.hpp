// Task sizes and waiting times per task type (Hoffmann and Rauber, "Profiling of
// task-based applications on shared memory machines"), for `tasklens tasks`.
//
// Definitions (all over model::Model; deterministic, no I/O):
//  * A task is a node of NodeKind::Task, or an OpenMP loop chunk (a NodeKind::Chunk node whose
//    parent is a NodeKind::Loop). A task that never ran (no strand of its own) is not counted.
//  * Its task type is its construct site: the node's own site, or the nearest ancestor's that is
//    set (taskloop's tasks carry none: their Taskloop node has the site; a chunk's is its loop's).
//    Only sites of kind task, taskloop, loop (chunks) and the oneTBB kinds parallel_for,
//    parallel_reduce, parallel_invoke, parallel_sort, tbb_algorithm and arena_execute are task
//    types; other tasks (a thread of the program's own calling into oneTBB, which the builder
//    hangs under the program) are left out.
//  * The task's own strands are the strands whose innermost task (Task node or loop chunk, walking
//    up from Strand::node) is this one: not its children's, not its loop chunks'. Its first strand
//    is the own strand with the smallest id (the serial elision numbers a task's strands in the
//    order they ran, and the first one starts when a worker takes the task).
//  * task size = the sum of Strand::work over the task's own strands, in the metric's unit.
//  * waiting time = first.start - ready, in TSC ticks, where ready = the latest end among the
//    first strand's predecessors (the creator strand, which ends at the creation; for a task with
//    dependences, the last predecessor task; for a loop chunk, the strand before the loop). A
//    predecessor without timestamps (a synthetic join strand) counts with the latest end of its
//    own predecessors. Negative differences (clock skew) count as 0. A task whose first strand has
//    no timestamp or no timed predecessor has no waiting time.
//  * idle before start (Hoffmann and Rauber's own "waiting time": time the worker spent in the task
//    pool before it started the task) = first.start - the latest end of the strands its thread ran
//    before (by start time), in TSC ticks; none for the first strand a thread runs.
//  * Statistics: mean = total / samples; median and p90 are nearest-rank percentiles (the value at
//    rank ceil(p/100 * n) of the sorted samples, 1-based); min and max.
//  * Histograms: log2 bins. A value v lies in octave bit_width(v) (0 -> 0, 1 -> 1, 2..3 -> 2,
//    2^(k-1)..2^k-1 -> k). The octaves from the smallest to the largest non-zero value are split
//    into at most `bins` bins of w = ceil(octaves / bins) consecutive octaves each; bin i covers
//    [2^(lo + i w - 1), 2^(lo + (i+1) w - 1)), except that bin 0 starts at 0 (zeros go there).
//    Sizes, waits and idle times of a type share their bins when they have the same unit (metric
//    tsc); otherwise waits and idle times share theirs.
//  * Types are sorted by total size desc, then site, tasks before chunks.
// Cost: O(V + E + N log N) for N nodes and V strands (one sort of the timed strands by thread).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "model/model.hpp"

namespace tasklens::analysis {

inline constexpr uint64_t kNoTime = ~uint64_t{0};

// One task, for tests and tools: the node, its type's site, its size and its times.
struct TaskSample {
  uint32_t node = 0;  // Task or loop Chunk node
  uint32_t site = 0;  // the task type's site (index into Model::sites)
  bool chunk = false;
  uint64_t size = 0;        // metric units
  uint64_t wait = kNoTime;  // TSC ticks
  uint64_t idle = kNoTime;  // TSC ticks
};
// Every counted task, in node order.
std::vector<TaskSample> task_samples(const model::Model& model);

// Task sizes only, per task type (as above: tasks and loop chunks by site), for what needs no
// times: one pass over the nodes and the strands and a selection per type, several times
// cheaper than compute_tasks (report's diagnosis). Types in site order, tasks before chunks.
struct TypeSizes {
  uint32_t site = 0;
  bool chunks = false;
  uint64_t count = 0, tiny = 0;  // tasks, and those smaller than `tiny_size`
  uint64_t total = 0, max = 0, median = 0;
};
std::vector<TypeSizes> task_sizes(const model::Model& model, uint64_t tiny_size);

// Is `kind` a task type's site kind (see above; Loop for loop chunks)?
bool is_task_site_kind(model::SiteKind kind);

struct Stats {
  uint64_t samples = 0;
  uint64_t total = 0;
  double mean = 0;
  uint64_t min = 0, median = 0, p90 = 0, max = 0;
};
// Sorts `values` and summarizes them (all 0 when empty).
Stats stats_of(std::vector<uint64_t>& values);
// Nearest-rank percentile of sorted values (0 when empty): rank ceil(p/100 * n), at least 1.
uint64_t percentile(const std::vector<uint64_t>& sorted, double p);

struct Histogram {
  int lo = 1;     // first octave
  int width = 1;  // octaves per bin
  std::vector<uint64_t> counts;
  double lower(size_t bin) const;  // inclusive (0 for bin 0)
  double upper(size_t bin) const;  // exclusive
};
// Histograms of several sets of values over shared log2 bins (at most max_bins >= 1 of them);
// no bins at all when every set is empty.
std::vector<Histogram> log2_histograms(const std::vector<const std::vector<uint64_t>*>& sets,
                                       unsigned max_bins);
// The same from each set's count of values per octave (bit_width(v): 0 -> 0, 1 -> 1, ...).
std::vector<Histogram> log2_histograms_of_octaves(
    const std::vector<const std::array<uint64_t, 65>*>& sets, unsigned max_bins);

struct TaskType {
  uint32_t site = 0;
  bool chunks = false;      // OpenMP loop chunks rather than tasks
  Stats size;               // count = size.samples, total size = size.total
  Stats wait;               // over the tasks with a waiting time
  Stats idle;               // over the tasks with an idle time
  uint64_t tiny = 0;        // tasks smaller than TaskOptions::tiny_size
  uint64_t long_waits = 0;  // tasks that waited past the RareLongWaits threshold (see above)
  uint64_t long_wait_threshold = 0;  // that threshold, TSC ticks
  Histogram size_hist, wait_hist, idle_hist;
  // Tasks per octave of their size (see Histogram), for comparing recordings.
  std::array<uint64_t, 65> size_octaves{};
};

// Hoffmann and Rauber's readings of a type's histograms (thresholds in TaskOptions):
//  * ManyTinyTasks: at least tiny_share of its tasks (and min_tasks of them) are smaller than
//    tiny_size: the tasking overhead dominates.
//  * IdleLongerThanRunning: (min_tasks tasks, and not ManyTinyTasks, whose overhead it would
//    only restate) workers spend a median idle time before the type's tasks longer than their
//    median size: not enough parallelism, or scheduling overhead.
//  * QueuedLongerThanRunning: (min_tasks tasks, and neither of the above) the median wait is
//    longer than the median size while workers are busy: more ready tasks than workers.
//  * FewLargeTasks: with 2 workers or more, fewer than few_per_worker tasks per worker in a type
//    holding at least few_work_share of the program's work: limited parallelism, imbalance.
//  * DominantTask: with 2 workers or more and 2 tasks or more, the largest task is larger than the
//    type's total size divided by the workers: it alone bounds the type's time (imbalance).
//  * RareLongWaits: (min_tasks tasks) a few of the type's tasks — at least one, at most
//    long_wait_share of them (at least one allowed) — waited from ready to start longer than
//    long_wait_factor x the type's p90 wait and than long_wait_ticks: Hoffmann and Rauber's reading
//    of their "few larger waiting times" (the task pool growing its structures, starting its
//    threads, or the OS), not of the program's parallelism. TaskType::long_waits counts them.
enum class FindingKind {
  ManyTinyTasks,
  IdleLongerThanRunning,
  QueuedLongerThanRunning,
  FewLargeTasks,
  DominantTask,
  RareLongWaits
};
const char* to_string(FindingKind kind);  // "many-tiny-tasks", ...

struct Finding {
  FindingKind kind;
  size_t type = 0;  // index into TaskProfile::types
};

struct TaskOptions {
  unsigned bins = 12;          // most bins per histogram (>= 1)
  uint64_t tiny_size = 0;      // metric units; 0: no ManyTinyTasks finding
  double ticks_to_work = 1.0;  // metric units per TSC tick, to compare times with sizes
  bool same_unit = true;       // sizes are TSC ticks too: all histograms of a type share bins
  double tiny_share = 0.5;
  uint64_t min_tasks = 8;
  uint32_t few_per_worker = 4;
  double few_work_share = 0.1;
  double long_wait_factor = 10;
  double long_wait_share = 0.01;
  uint64_t long_wait_ticks = 0;      // TSC ticks; default_task_options: 100 us
  bool tiny_from_task_cost = false;  // tiny_size came from Model::task_cost (else: 1 us)
};
// A task is tiny when it is smaller than this many times what one task costs the program
// (Model::task_cost): the tasking overhead is then more than 1/20 = 5% of it.
inline constexpr uint64_t kTinyTaskCosts = 20;
// Options for the model's metric, given the TSC rate `tsc_hz` (0 if unknown): tiny_size =
// kTinyTaskCosts x the tasking overhead `record` measured (Model::task_cost, in the metric's
// unit, for a time-like metric), else 1 us (the TSC ticks of 1 us for tsc, and for cycles and
// instructions, counted as about one per tick; 1000 ns for task-clock; 0, no finding, when the
// rate is unknown); ticks_to_work = 1
// (task-clock: ns per tick), same_unit for tsc only, long_wait_ticks = 100 us (1 when the rate is
// unknown). Other metrics count events (cache misses, page faults...): tiny_size 0 and
// ticks_to_work 0, no finding that compares sizes with times.
TaskOptions default_task_options(const model::Model& model, double tsc_hz, unsigned bins = 12);
// The same from the model's metric (Model::metric) and task_cost alone (a one-pass reading
// knows them before its model: model::metric_of, model::task_cost_of).
TaskOptions default_task_options(const std::string& metric, uint64_t task_cost, double tsc_hz,
                                 unsigned bins = 12);

struct TaskProfile {
  std::vector<TaskType> types;
  uint64_t tasks = 0;             // counted tasks (of every type)
  uint64_t task_work = 0;         // their total size
  uint64_t work = 0;              // the program's work (every strand)
  uint32_t workers = 0;           // threads that ran a strand
  bool timestamps = false;        // some task has a waiting or idle time
  std::vector<Finding> findings;  // in type order, then kind order
  // Read in one pass (analysis/stream_tasks.hpp): the medians and 90th percentiles are within
  // sketch_error of the exact ones (never above them); long_wait_threshold is within that much
  // above the exact one (never below), and long_waits may miss the waits that close to it;
  // everything else is exact. 0: all exact.
  double sketch_error = 0;
};
TaskProfile compute_tasks(const model::Model& model, const TaskOptions& options);
// What compute_tasks does once its types are made: sorts them (total size desc, then site,
// tasks before chunks) and reads their findings (above) into p.findings. Shared with the
// one-pass reading (analysis/stream_tasks.hpp).
void add_findings(TaskProfile& p, const TaskOptions& options);
// A type's RareLongWaits threshold (TaskType::long_wait_threshold), from its waits' p90.
uint64_t long_wait_threshold(const Stats& wait, const TaskOptions& options);

// Two recordings of the same program (after Hoffmann and Rauber: the shape of a type's size
// histogram should not depend on the number of threads; sizes that grow point at contention). Types
// are matched by key (the caller's label of the site plus its kind, one per site index); a key that
// names several types of one recording matches its largest.
struct TypeComparison {
  size_t base = 0, other = 0;  // indexes into each profile's types
  double mean_ratio = 0;       // other mean size / base mean size (NaN when base's is 0)
  double median_ratio = 0;     // same for medians
  // Total variation distance between the two size distributions over octaves: 0 = same shape,
  // 1 = no octave in common.
  double shape_distance = 0;
};
enum class ComparisonKind { SizeInflation, SizeDeflation, CountChanged, ShapeChanged };
const char* to_string(ComparisonKind kind);  // "size-inflation", ...
struct ComparisonFinding {
  ComparisonKind kind;
  size_t row = 0;  // index into TaskComparison::rows
};
struct CompareOptions {
  double inflation = 1.25;    // median or mean ratio at least this: SizeInflation
  double deflation = 0.8;     // both at most this: SizeDeflation
  double count_change = 0.1;  // counts differing by more than this share: CountChanged
  double shape_change = 0.5;  // shape distance above this: ShapeChanged
};
struct TaskComparison {
  std::vector<TypeComparison> rows;  // in base's type order
  std::vector<size_t> only_base, only_other;
  std::vector<ComparisonFinding> findings;  // in row order, then kind order
};
TaskComparison compare_tasks(const TaskProfile& base, const std::vector<std::string>& base_keys,
                             const TaskProfile& other, const std::vector<std::string>& other_keys,
                             const CompareOptions& options = {});

}  // namespace tasklens::analysis
