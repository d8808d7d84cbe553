// Scheduling delays (Huynh, "Analyzing performance differences of task parallel runtime
// systems based on scheduling delays"), for `tasklens sched`.
//
// Definitions (all over model::Model; deterministic, no I/O; every time in TSC ticks):
//  * A timed strand has a worker (Strand::thread != kNone) and a timestamp (start or end not 0).
//    The workers are the threads that ran a timed strand; P is their number.
//  * The run's timeline is [first, last): first = the earliest start, last = the latest end of a
//    timed strand; elapsed = last - first. The cumulative time is P x elapsed.
//  * A strand is running on its worker during [start, end). A worker is busy at t when one of its
//    strands runs at t (overlapping strands of one worker count once), idle otherwise.
//  * A strand's ready time is the latest end among its predecessors (a predecessor without
//    timestamps, a synthetic join strand, counts with the latest end of its own predecessors,
//    recursively). A strand is ready at t when ready <= t < start. A strand without a timed
//    predecessor is never ready before it starts (it is the program's first strand, or a thread's
//    entry into the runtime). R(t) = the ready strands at t.
//  * At each instant, with I idle workers: min(I, R) of them are in **delay** (a ready strand
//    existed to feed them), the others in **no-work**. Which idle workers get the delay: the ones
//    idle the longest (earliest idle since, then lowest thread); a worker is idle since `first`
//    before its first strand. Busy workers are in **work**. So per worker and in total,
//    work + delay + no-work = elapsed (x P for the total), exactly in integer ticks.
//  * Ties: a strand made ready by several predecessors ending at once takes the one the builder
//    met last (Model::strand_order; the id when the model has no order) as its last-ready
//    predecessor, and of the strands ending last the path starts at the one met last, so that a
//    reading in one pass (stream_sched.hpp), which meets the strands in the same order, walks the
//    same path.
//  * The ready path (Huynh's): from the strand ending last, walk back to its last-ready
//    predecessor (the timed strand whose end made it ready), and so on until a strand without a
//    timed predecessor. Along it, a strand is always running or ready: the path's time is split
//    into its work (a path strand runs), scheduler delay (a path strand is ready and at least one
//    worker is idle) and busy delay (ready, every worker busy). The time before the path's first
//    strand starts (if any) is `before`. No-work during the path's scheduler delay is
//    **no-work-sched** (the scheduler was late with the one strand that could have created more
//    work); no-work at any other time (the path's work, or before the path) is **no-work-app**
//    (the application had no more parallelism). During busy delay no worker is idle.
//  * Running and ready parallelism over time: the step function (number of running strands,
//    number of ready strands) over [first, last); `downsample` averages it over equal intervals,
//    time-weighted.
// Cost: O((V + E) + V log V + S * P log P) for V strands, E edges, S distinct event times and P
// workers (the idle workers are ordered only when some but not all of them are in delay).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "model/model.hpp"

namespace tasklens::analysis {

struct SchedComponents {
  uint64_t work = 0;
  uint64_t delay = 0;
  uint64_t no_work_sched = 0;
  uint64_t no_work_app = 0;
  uint64_t no_work() const { return no_work_sched + no_work_app; }
  uint64_t total() const { return work + delay + no_work_sched + no_work_app; }
};

struct SchedWorker {
  uint32_t thread = 0;   // trace thread index
  uint64_t strands = 0;  // timed strands it ran
  SchedComponents time;  // sums to elapsed
};

// From `time` on (until the next step's time, or `last`), `running` strands run and `ready`
// strands are ready.
struct SchedStep {
  uint64_t time = 0;
  uint32_t running = 0;
  uint32_t ready = 0;
};

struct ReadyPath {
  uint64_t length = 0;            // its strands
  std::vector<uint32_t> strands;  // in time order (in memory only: a one-pass reading counts them)
  uint64_t work = 0;
  uint64_t scheduler_delay = 0;
  uint64_t busy_delay = 0;
  uint64_t before = 0;  // from `first` to the start of the path's first strand
};

// One interval of a downsampled series: [begin, end), the integrals of running and ready strands
// over it (strand-ticks), their time-weighted averages and their maxima.
struct SchedPoint {
  uint64_t begin = 0, end = 0;
  uint64_t running_ticks = 0, ready_ticks = 0;
  double running = 0, ready = 0;
  uint32_t running_max = 0, ready_max = 0;
};

struct Schedule {
  bool timestamps = false;  // there is a timed strand with last > first
  uint32_t workers = 0;     // P
  uint64_t timed_strands = 0;
  uint64_t first = 0, last = 0, elapsed = 0;
  uint64_t cumulative = 0;              // P x elapsed
  SchedComponents total;                // sums to cumulative
  std::vector<SchedWorker> per_worker;  // by thread
  std::vector<SchedStep> steps;         // starts at `first` (empty without timestamps)
  // A one-pass reading keeps no steps (they grow with the strands): the step function averaged
  // over the interval counts asked for (downsample's), by count. points() reads either.
  std::vector<std::pair<size_t, std::vector<SchedPoint>>> sampled;
  uint64_t running_ticks = 0;  // integral of running strands over time (sum of strand durations)
  uint64_t ready_ticks = 0;    // integral of ready strands (sum of ready -> start waits)
  uint32_t max_running = 0, max_ready = 0;
  ReadyPath path;
};

// The workers (threads that ran a timed strand, sorted) and [first, last) as defined above,
// without the sweep.
struct Timeline {
  std::vector<uint32_t> threads;
  uint64_t timed_strands = 0;
  uint64_t first = 0, last = 0;
};
Timeline timeline_of(const model::Model& model);

Schedule compute_schedule(const model::Model& model);

// Every strand's ready time (above) and the timed strand whose end made it ready (its last-ready
// predecessor; kNone for a strand without a timed predecessor, whose ready time is 0).
struct ReadyTimes {
  std::vector<uint64_t> ready;
  std::vector<uint32_t> source;
};
ReadyTimes ready_times(const model::Model& model);

// The step function averaged over n = min(points, last - first) intervals of (nearly) equal length:
// interval k is [first + (last-first) k / n, first + (last-first) (k+1) / n) (integer division),
// so the intervals tile [first, last) exactly and the integrals add up to the step function's.
// Empty when points is 0 or last <= first.
std::vector<SchedPoint> downsample(const std::vector<SchedStep>& steps, uint64_t first,
                                   uint64_t last, size_t points);

// The same, from the steps as they come (in time order), for a reading that does not keep them.
class Downsampler {
 public:
  Downsampler(uint64_t first, uint64_t last, size_t points);
  void step(const SchedStep& s);
  std::vector<SchedPoint> finish();  // once every step came

 private:
  void segment(const SchedStep& s, uint64_t begin, uint64_t end);  // s holds over [begin, end)
  std::vector<SchedPoint> out_;
  size_t next_ = 0;  // the first interval a later segment can reach
  bool any_ = false;
  SchedStep held_;  // the step in effect, whose end is the next step's time
};

// `schedule`'s step function over `points` intervals: downsampled from its steps, or as a
// one-pass reading sampled it (empty when it sampled no such count).
std::vector<SchedPoint> points(const Schedule& schedule, size_t points);

// One event of the timeline, as the sweep takes them: in time order, events at one time in any
// order (the sweep takes them all before it weighs the time up to the next).
enum class PathState : uint8_t { None, Running, Waiting };
struct SchedEvent {
  enum Kind : uint8_t { kEnd, kStart, kReady, kPath };
  static constexpr uint32_t kHadReady = 0x80000000u;
  uint64_t time = 0;  // a time before the run's first counts as its first (a clipped ready time)
  // kStart, kEnd: the strand's thread, kStart with kHadReady when the strand had a kReady event;
  // kPath: the ready path's PathState from then on.
  uint32_t arg = 0;
  uint8_t kind = kEnd;
};

// The sweep of compute_schedule over the events, shared by the readings in memory and in one
// pass. `out` has its workers, per_worker (threads and strand counts), first and last set; the
// sweep adds the components, the integrals, the maxima and the path's split, and hands each step
// of the step function to `on_step` once it is final.
class ScheduleSweep {
 public:
  ScheduleSweep(Schedule& out, std::function<void(const SchedStep&)> on_step);
  void add(const SchedEvent& e);
  void finish();

 private:
  void close_time(uint64_t next);  // the events at t_ are in (sched.cpp)
  Schedule& out_;
  std::function<void(const SchedStep&)> on_step_;
  std::vector<uint32_t> worker_of_;  // by thread
  std::vector<uint32_t> busy_;       // running strands per worker
  std::vector<uint64_t> idle_since_;
  std::vector<uint32_t> touched_, idle_;
  uint32_t running_ = 0, ready_ = 0, busy_workers_ = 0;
  PathState path_state_ = PathState::None;
  bool open_ = false;  // events at t_ came
  uint64_t t_ = 0;
  bool step_held_ = false;
  SchedStep step_;  // the last step, handed on once a different one follows
};

}  // namespace tasklens::analysis
