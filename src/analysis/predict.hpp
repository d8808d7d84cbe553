// Predicted time and speedup on P cores (`tasklens predict`): a simulation of a greedy
// work-stealing schedule of one recording's DAG, and an extrapolation from several
// recordings at different thread counts (Hoffmann and Rauber, "Profiling of task-based
// applications on shared memory machines", section 4.2).
//
// Definitions (all over model::Model; deterministic, no I/O; every time in TSC ticks):
//  * A strand's duration: its work when the metric is tsc (preemption by other processes is
//    already removed from it); for other metrics its recorded end - start (0 when untimed).
//    Timed strands are those of sched.hpp (a worker and a timestamp); the others (synthetic join
//    strands) take no time and no worker in the simulation.
//  * A strand's task is its innermost Task, ImplicitTask or Chunk node (the Program node for the
//    serial part). Successor u of strand s is s's *continuation* when both are in the same task.
//  * Measured overheads (Overheads): for each timed strand u that is not the first strand of its
//    worker, free = max(u's ready time, the latest end of the strands its worker started before
//    it) (ready
//    time as in sched.hpp) and gap = u.start - free (0 when negative). The gap is the runtime's
//    cost of getting u running, classified by u's last-ready predecessor p (the timed strand
//    whose end made u ready; none: not classified):
//      steal    p ran on another worker (a stolen task, or a join completed by another worker);
//      sync     u has two timed predecessors or more, or one through a synthetic join strand
//               (the strand after a taskwait, taskgroup, barrier or wait);
//      spawn    u is the first strand of a task p created (p is in another task);
//      continue u continues p's task.
//    Each cost is the mean of its class's gaps after dropping the largest 1% and any over 16
//    times the class's median (a page fault, a thread's creation, a sleeping worker woken to
//    steal: not a per-task cost). A class without samples costs 0, except
//    steal, which then costs the spawn cost (a one-worker recording never steals) and is marked
//    not measured.
//  * The simulation (simulate): P workers, each with a deque. A strand with no predecessor is
//    ready at time 0 on worker 0's deque. A worker that finishes strand s at time t makes the
//    successors whose last predecessor that was is s ready: it runs the continuation next if
//    it became ready (paying the continue cost), and pushes the others on the bottom of its
//    deque in strand order. An idle worker pops the bottom of its own deque (paying the spawn or
//    sync cost of the strand) or, if it is empty, steals the top of the deque of the next worker
//    (round robin from its own index) that has one (paying the steal cost). Untimed strands
//    complete the moment they become ready, on the worker that readied them. Ties between
//    workers finishing at the same time go to the lower index. The predicted time is the time
//    the last strand finishes; the simulation at P = 1 replays the recorded order up to the
//    deque discipline, so predicted(1) is close to a one-worker recording's elapsed time.
//  * No strand starts for less on P workers than on one: it pays the larger of the cost of how
//    it starts in the P-worker schedule and what it paid in the one-worker schedule. (A stolen
//    task was created all the same, and a taskwait whose children are done still ran its
//    bookkeeping; a measured steal cost below the spawn cost, or a continuation that was a sync
//    on one worker, would otherwise make many workers do less of the runtime's work than one.)
//    So P x predicted(P) >= the workers' busy time plus their overheads >= predicted(1): the
//    predicted speedup is never above P.
//  * One worker on a recording of several (Overheads::one_worker_task): the measured task cost per
//    spawned strand replaces the four classes as what each strand pays on one worker, in run(1)
//    and as the floor above, so the bound holds and the speedups' base is the one-thread run.
//  * `predict`'s headline simulates with without_contention(measured) (below): on a recording of
//    several workers every task pays that task cost on P workers too, a steal that cost times the
//    measured steal/spawn ratio; the measured classes give the `with contention` figures beside it.
//  * Loop iterations seen only together (Model::divisible: a thread's static share, a chunk, a
//    taskloop task): a worker that starts such a strand of c iterations splits it into
//    k = min(c, P) shares of its iterations as even as whole iterations allow (durations in
//    proportion, adding up to the strand's exactly), runs the first and pushes the others on its
//    deque, where idle workers steal them; the strand completes when its last share does. Shares
//    pay the spawn cost when popped and the steal cost when stolen. At P = 1 nothing is split.
//  * Bounds: with T1 = the sum of durations and Tinf = the longest path of durations,
//    max(T1 / P, Tinf) is a lower bound of any schedule without overheads and T1 / P + Tinf the
//    greedy upper bound.
//  * Extrapolation (extrapolate, after Hoffmann and Rauber): given recordings at thread counts
//    p_1 < ... < p_k (k >= 2) of one program, each task type's count, mean size and mean idle time
//    before a task (tasks.hpp; sizes in TSC ticks) and the serial time (ExtrapolationInput::serial)
//    are extrapolated to P linearly from each pair of consecutive thread counts; the pairs' values
//    are combined weighted by 1 / (1 + distance of the pair's midpoint to P). Negative values are
//    clamped to 0. The predicted time is serial + sum over types of count (size + idle) / P.
// Cost of one simulation: O(V + E + V log P) for V strands and E edges (a heap of running
// workers), plus O(P) per steal.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "model/model.hpp"

namespace tasklens::analysis {

struct OverheadCost {
  double ticks = 0;      // the mean cost per occurrence
  uint64_t samples = 0;  // gaps it was measured from
  bool measured = true;  // false: assumed (see above)
};
struct Overheads {
  OverheadCost spawn, steal, sync, cont;
  // The runtime's own cost that the model took out of the strands (Model::runtime_removed), per
  // timed strand: already included in each of the four, since it too is paid per strand.
  double inside = 0;
  // What one task costs the program on one worker (Model::task_cost: creating, running and
  // joining it over a plain call, measured by `record` without the recorder), in TSC ticks; 0
  // when not used. Set for a recording of several workers with explicit tasks: its gaps hold the
  // workers' contention for the runtime's task queues, which one worker does not have. One
  // worker then pays this per spawned strand and nothing for syncs and continuations, instead of
  // the four classes: the speedups' base is what the program's own one-thread run costs.
  double one_worker_task = 0;
  // Set by without_contention: the four classes are what the program's runtime costs per start
  // on one thread, not the recording's gaps.
  bool contention_removed = false;
};
// A gap this many times its class's median is not what a start costs: a worker that slept
// (libomp's threads sleep after their blocktime) woken for a steal, a page fault. A few of those
// would decide the mean of a class that has few samples (steals).
inline constexpr uint64_t kGapOutlier = 16;
// The mean of the gaps after dropping the largest 1% and any over kGapOutlier times their median
// (sorts them).
OverheadCost trimmed_mean(std::vector<uint64_t>& gaps);
Overheads measure_overheads(const model::Model& model);
// The end of measure_overheads, given the four classes' means: a steal cost when none was
// measured, the runtime's cost taken out of the strands (Model::runtime_removed) spread over the
// `timed_strands`, what a task costs one worker when `threads` > 1 (Overheads::one_worker_task).
// Shared with the one-pass reading (analysis/stream_predict.hpp).
void finish_overheads(Overheads& o, const model::Model& model, uint64_t timed_strands,
                      uint32_t threads);

// What each start costs the program on any number of workers, without the contention the
// recording's workers met (predictions that are the program's, not the recorded machine's: the
// gaps of a recording of several workers hold how hard its workers fought over the runtime's task
// queues, which moves from one recording, build and machine to the next: docs/benchmarks.md,
// "Predictions across recordings and builds"). Given a recording of several workers with a measured
// task cost (Overheads::one_worker_task > 0): a spawned strand pays that cost, a sync or a
// continuation nothing (the cost is a task's creation, start and join together), and a steal the
// task cost times what a steal cost over a spawn in the recording (its measured steal / spawn
// ratio, 1 when either is not measured), never less than the task cost nor more than the measured
// steal; contention_removed is set. Otherwise (one worker, no measure) the measured overheads,
// unchanged: one worker has no contention.
Overheads without_contention(const Overheads& measured);

// The strands' durations in TSC ticks (see above).
std::vector<uint64_t> strand_durations(const model::Model& model);

struct SimulationResult {
  uint32_t workers = 0;
  uint64_t time = 0;         // makespan
  uint64_t busy = 0;         // ticks the workers ran strands (the sum of durations)
  uint64_t overhead = 0;     // ticks the workers paid in overheads
  uint64_t steals = 0;       // strands a worker took from another's deque
  uint64_t strands_run = 0;  // timed strands executed
};
SimulationResult simulate(const model::Model& model, const std::vector<uint64_t>& durations,
                          const Overheads& overheads, uint32_t workers);

// How a strand becomes runnable, from the DAG alone (the steal class depends on the schedule):
// no predecessor; one, in its own task; one, in another task; several, or one through a
// synthetic join strand.
enum class StartClass : uint8_t { First, Continue, Spawn, Sync };

// What the simulator runs when the DAG is not in memory (analysis/stream_predict.hpp builds it
// in one pass, and graph_of from a model in memory): nodes in a topological order, each a strand
// or a collapsed set of strands run one after another by one worker. A node's predecessors are
// earlier nodes (the same one may come twice: a model's strand names a predecessor once per
// edge).
struct SimGraph {
  struct Node {
    uint64_t duration = 0;    // its strands' durations, added up
    uint64_t span = 0;        // the longest path among its strands (collapsing only)
    uint32_t iterations = 1;  // SimStrand::iterations (a collapsed node has 1)
    // The order the builder met its first strand in (Model::strand_order; a join's node: the
    // strand that first named it): ties between ready nodes go to the lower.
    uint32_t order = 0;
    uint8_t start_class = 0;  // its first strand's StartClass
    bool timed = false;       // it holds a timed strand
    // The strands collapsed into it after its first, by StartClass (Continue, Spawn, Sync):
    // each pays what it pays on one worker, on whichever worker runs the node.
    uint32_t inner[3] = {};
  };
  // A predecessor: the node's index | kSameTask when its last strand lies in the task of the
  // node's first strand (the node is its continuation if it readies it).
  static constexpr uint32_t kSameTask = 0x80000000u;
  std::vector<Node> nodes;
  std::vector<uint32_t> pred_begin{0};  // node v's: preds[pred_begin[v] .. pred_begin[v + 1])
  std::vector<uint32_t> preds;
  bool collapsed() const { return has_inner; }
  bool has_inner = false;  // some node holds more than one strand
};

// The same, for several worker counts and overheads: the DAG's successors, tasks and start
// kinds are worked out once.
class Simulator {
 public:
  Simulator(const model::Model& model, std::vector<uint64_t> durations);
  // From a graph: its nodes stand for the strands (SimGraph::Node::order breaks ties).
  explicit Simulator(const SimGraph& graph);
  SimulationResult run(uint32_t workers, const Overheads& overheads) const;
  // run() works out one worker in closed form (below); this simulates every worker count, for
  // the tests that check the two agree.
  SimulationResult run_events(uint32_t workers, const Overheads& overheads) const;

 private:
  // One worker is never idle and never steals: it runs the strands in the order its deque gives
  // them whatever their durations and overheads. The constructor replays that order once,
  // counting how each strand is started (as a continuation, or popped, by start class); run(1)
  // is then the sum of durations and of those counts times the overheads. The strands are also
  // renumbered in that order: every later simulation walks a subtree of it per worker, so the
  // arrays are read nearly in sequence (in the model's numbering a work-first schedule jumps
  // over whole subtrees, missing the cache on most reads).
  void number_in_one_worker_order();
  // Strand s completes: decrements its successors' remaining predecessor counts. Untimed
  // successors that become ready complete at once (on_untimed(u) is called for each, then
  // their own successors are visited); timed ones go to `ready`, in model order, except s's
  // continuation (same task, readied by s), which is returned (kNone if none).
  template <class OnUntimed>
  uint32_t complete_strand(uint32_t s, uint32_t* remaining, std::vector<uint32_t>& stack,
                           std::vector<uint32_t>& ready, OnUntimed&& on_untimed) const;
  uint64_t one_worker_busy_ = 0, one_worker_strands_ = 0;
  uint64_t one_worker_starts_[5] = {};  // popped strands per StartClass; [4]: continuations
  // The fewest gaps a class's cost is measured on for a collapsed node's strands to pay it.
  static constexpr uint64_t kInnerClassSamples = 32;
  // A graph's collapsed nodes (SimGraph::Node::inner), by the simulator's numbering; empty when
  // none is. Their strands are added to one_worker_starts_ too.
  std::vector<std::array<uint32_t, 3>> inner_;
  // What node u's inner strands pay on one worker (what they pay on any).
  uint64_t inner_cost(uint32_t u, uint64_t c_cont, uint64_t c_spawn, uint64_t c_sync) const {
    if (inner_.empty()) return 0;
    const std::array<uint32_t, 3>& n = inner_[u];
    return n[0] * c_cont + n[1] * c_spawn + n[2] * c_sync;
  }
  std::vector<uint32_t> roots_;  // strands without predecessors, in model order
  // What a simulation reads of a strand, in one place: a simulation follows the schedule, not
  // the strand order, so every array it reads per strand costs a cache miss.
  struct SimStrand {
    uint64_t duration = 0;
    uint32_t succ_begin = 0;  // successors: succ_[succ_begin .. next strand's succ_begin)
    uint32_t model_id = 0;    // the order ties are broken in: Model::strand_order, else the id
    uint8_t start_class = 0;
    // How it started on one worker: its start class when popped, 4 when run as its
    // predecessor's continuation. What it paid then is the least it pays on any number.
    uint8_t one_worker_start = 0;
    bool timed = false;
    // Loop iterations seen only together (Model::divisible): on P workers the strand runs as
    // min(iterations, P) even shares, like a static schedule on P threads. 1 otherwise.
    uint32_t iterations = 1;
  };
  // A successor u of strand s: u | kSuccTimed if u is timed | kSuccSameTask if s is timed and
  // in u's task (u is s's continuation if s's end readies it), so that completing s reads
  // nothing of u but its remaining predecessor count.
  static constexpr uint32_t kSuccTimed = 0x80000000u, kSuccSameTask = 0x40000000u,
                            kSuccStrand = 0x3fffffffu;
  std::vector<SimStrand> strands_;  // one more than the model's (the last succ_begin)
  std::vector<uint32_t> succ_, preds_;
};

// One recording reduced to what the extrapolation needs.
struct ExtrapolationInput {
  uint32_t threads = 0;  // workers of the recording
  uint64_t elapsed = 0;  // its elapsed time (sched.hpp), TSC ticks
  // Time not spent in tasks: elapsed minus (the tasks' total size + idle time) / threads,
  // clamped at 0 (the serial parts and the runtime outside the task pool).
  uint64_t serial = 0;
  struct Type {
    std::string key;  // the task type's label (matches across recordings)
    double count = 0, mean_size = 0, mean_idle = 0;  // sizes and idle times in TSC ticks
  };
  std::vector<Type> types;
};
struct ExtrapolationPoint {
  uint32_t threads = 0;
  double time = 0;  // predicted elapsed ticks
  double serial = 0;
  double task_time = 0;  // sum over types of count (size + idle), before dividing by P
};
// `runs` sorted by threads, with distinct thread counts, at least two. Types missing from a
// recording count as absent (count 0) there.
ExtrapolationPoint extrapolate(const std::vector<ExtrapolationInput>& runs, uint32_t threads);

// Linear extrapolation of (x_i, y_i) (x sorted, distinct, at least 2 points) to x as above:
// each consecutive pair's line evaluated at x, weighted by 1 / (1 + |x - midpoint|).
double extrapolate_value(const std::vector<double>& xs, const std::vector<double>& ys, double x);

}  // namespace tasklens::analysis
