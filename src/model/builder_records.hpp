// The model builder's provisional records (strands, nodes, tasks, regions) and the OMPT values
// it interprets: what builder_state.hpp's Builder keeps per item before finalize() numbers
// them. Apart from the Builder so that each reads on its own. Internal to src/model.
#pragma once

#include <cstdint>
#include <vector>

#include "model/dep_table.hpp"
#include "model/model.hpp"

namespace tasklens::model::detail {

// OMPT values (omp-tools.h) the builder interprets.
constexpr uint64_t kTaskInitial = 0x1;
constexpr uint64_t kTaskUndeferred = 0x08000000;
constexpr uint64_t kStatusComplete = 1, kStatusCancel = 3, kStatusDetach = 4,
                   kStatusEarlyFulfill = 5, kStatusLateFulfill = 6;
constexpr uint64_t kSyncBarrier = 1, kSyncBarrierImplicit = 2, kSyncBarrierExplicit = 3,
                   kSyncBarrierImplementation = 4, kSyncTaskwait = 5, kSyncTaskgroup = 6,
                   kSyncBarrierImplicitWorkshare = 8, kSyncBarrierImplicitParallel = 9,
                   kSyncBarrierTeams = 10;
constexpr uint64_t kWorkLoop = 1, kWorkSections = 2, kWorkSingleExecutor = 3, kWorkSingleOther = 4,
                   kWorkTaskloop = 7, kWorkLoopStatic = 10, kWorkLoopDynamic = 11,
                   kWorkLoopGuided = 12, kWorkLoopOther = 13;
constexpr uint64_t kMutexOrdered = 7;  // ompt_mutex_ordered
constexpr uint64_t kDispatchSection = 2, kDispatchWsLoopChunk = 3, kDispatchTaskloopChunk = 4,
                   kDispatchDistributeChunk = 5;
constexpr uint64_t kDepIn = 1, kDepSource = 5, kDepSink = 6;

inline bool is_barrier(uint64_t kind) {
  return kind == kSyncBarrier || kind == kSyncBarrierImplicit || kind == kSyncBarrierExplicit ||
         kind == kSyncBarrierImplementation || kind == kSyncBarrierImplicitWorkshare ||
         kind == kSyncBarrierImplicitParallel || kind == kSyncBarrierTeams;
}
inline bool is_loop(uint64_t w) {
  return w == kWorkLoop || (w >= kWorkLoopStatic && w <= kWorkLoopOther);
}

constexpr uint32_t kNodeBit = 0x80000000u;  // item entries: node vs strand
// Edge source "the end of task i" (resolved in finalize, once every task has ended). Strand ids
// and task indexes stay below 2^31.
constexpr uint32_t kTaskRef = 0x80000000u;

struct PStrand {
  uint64_t work = 0, start = 0, end = 0;
  uint32_t thread = kNone, node = 0;
  // Code address ids (Builder::code_id) of its two events. finalize() replaces begin_code with
  // the strand's fragment.
  uint32_t begin_code = 0, end_code = 0;
};

struct PNode {
  NodeKind kind;
  uint32_t parent;
  uint32_t site = kNone;
  uint32_t instance = kNone;
  uint32_t item_count = 0;       // strands and child nodes appended to this node
  uint32_t last_item = kNone;    // the last of them (strand id, or node id | kNodeBit)
  uint32_t tail_strand = kNone;  // emitted after the items (a barrier's join strand)
  uint32_t join_strand = kNone;  // Taskgroup / Phase: where escaped descendants join
  uint32_t region = kNone;       // Phase: its parallel region
};

// What only some tasks need: implicit tasks (their region, barriers and worksharing), tasks
// with undeferred children or depend clauses, oneTBB tasks that run chunks. Apart, so that the
// state every task has stays one cache line (millions of tasks: a third less memory to touch).
struct TaskExtra {
  uint32_t region = kNone;          // implicit tasks: their parallel region
  uint32_t phase = 0;               // implicit tasks: barriers passed
  uint32_t ws_seq = 0;              // implicit tasks: worksharing constructs met (instance key)
  uint32_t loop_fork = kNone;       // strand before the current worksharing loop
  uint32_t ordered_return = kNone;  // the scope to go back to when an ordered part ends
  // oneTBB: the strand before the task's current chunk, and its chunks' last strands (each
  // joins the task's last strand, not the chunk after it).
  uint32_t chunk_fork = kNone;
  // A detached task fulfilled before its body ended: the strand that stands for the fulfilment
  // (Builder::on_fulfill), which becomes the task's end when its body ends.
  uint32_t fulfill_join = kNone;
  // When a wait that joins the task (a oneTBB group's wait, a taskwait) first ended while the
  // task had begun and not ended: its end, if never recorded, came before (close_unended).
  uint64_t joined_at = ~uint64_t{0};
  RefList next_preds;  // joins into the next strand this task opens
  std::vector<uint32_t>* loop_members = nullptr;
  DepTable* deps = nullptr;  // for its children's depend clauses
  std::vector<uint32_t>* chunks = nullptr;
  TaskExtra() = default;
  TaskExtra(const TaskExtra&) = delete;
  TaskExtra& operator=(const TaskExtra&) = delete;
  ~TaskExtra() {
    delete loop_members;
    delete deps;
    delete chunks;
  }
};

// What made a task that has an end of its own to record (close_unended): an OpenMP explicit
// task (TaskCreate) or a oneTBB task (TbbSpawn); 0 for the others (implicit and initial tasks,
// the program's own threads).
enum TaskOrigin : uint8_t { kOriginOther = 0, kOriginOpenMP = 1, kOriginTbb = 2 };

struct TaskState {
  uint32_t node = kNone;   // the task's own node
  uint32_t scope = kNone;  // innermost open construct node of this task
  uint32_t open = kNone;   // strand being executed
  uint32_t prev = kNone;   // last closed strand
  uint32_t parent = kNone;
  uint32_t creator_strand = kNone;
  uint32_t pending_head = kNone;  // children not yet joined by a taskwait (linked list)
  uint32_t pending_next = kNone;
  uint32_t pre_wait = kNone;
  uint32_t team_size = 1;  // size of the team the task belongs to
  uint32_t flags = 0;      // ompt_task_flag_t
  bool started = false, done = false, waiting = false, implicit = false;
  // Joined by a taskwait of its parent in the scope it was created in: its end then reaches the
  // enclosing taskgroup or barrier through the parent, so it needs no join edge of its own.
  bool joined_in_scope = false;
  uint8_t tbb_kind = 0;  // oneTBB: the task's kind (trace::TbbKind)
  uint8_t origin = 0;    // TaskOrigin: what made it (explicit tasks only)
  // Owned; a plain pointer keeps TaskState trivially movable in its vector (finalize frees it).
  TaskExtra* extra = nullptr;

  TaskExtra& more() {
    if (!extra) extra = new TaskExtra();
    return *extra;
  }
  const TaskExtra& peek() const {
    static const TaskExtra none;
    return extra ? *extra : none;
  }
};
static_assert(sizeof(TaskState) == 64, "TaskState: one cache line");

struct Region {
  uint32_t node = kNone;
  uint32_t encountering = kNone;
  uint32_t fork_strand = kNone;
  uint32_t post_strand = kNone;
  std::vector<uint32_t> phases;    // Phase node per barrier interval
  std::vector<uint32_t> implicit;  // implicit task indexes
  uint32_t team_size = 1;
  bool ended = false;
};

}  // namespace tasklens::model::detail
