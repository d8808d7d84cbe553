// The tasklens trace file format (documented in docs/trace-format.md). Shared by the recorder,
// which writes it, and the readers. Everything is little-endian.
//
//   FileHeader
//   Record*            each: RecordHeader{type, size} + payload; size counts the header, so a
//                      reader skips record types it does not know (like perf.data).
//
// Events are not records: they live, compactly encoded, inside EventBlock records, one stream per
// recorded thread. An event is   kind:u8  dtime:varint  dmetric:varint*  field:varint*
// with one dmetric per recorded metric other than the TSC (FileHeader::metrics), and the number of
// fields of each kind given by the EventSchema record of the same file, so a reader can skip
// event kinds it does not know.
#pragma once

#include <cstddef>
#include <cstdint>

namespace tasklens::trace {

inline constexpr char kMagic[8] = {'T', 'L', 'E', 'N', 'S', 'T', 'R', 'C'};
// Version 2 added the data-address field class (EventShape::addr_mask, a sixth schema byte);
// version 3 several metrics (FileHeader::metrics, one dmetric per non-TSC metric). Readers still
// read versions 1 and 2: five-byte schema entries (1), one metric, a dmetric only when it is not
// the TSC (1 and 2). Version 4 the compact oneTBB events (TbbWaitDone to TbbRunBeginIn, which a
// reader of version 3 would skip and so lose every oneTBB task) and LZ4-compressed event
// blocks (Compression::Lz4); its streams otherwise read like version 3's.
inline constexpr uint16_t kVersionMajor = 4;  // readers refuse later majors
// Minor 1: the UserThread* events (threads the program starts itself); readers of 4.0 skip them.
// Minor 2: the RecorderStall event, the Blocked and RecorderStats records (skipped by older
// readers, which then count the recorder's stalls and the program's blocking as work).
// Minor 3: the MutexReleased event (ordered regions; older readers see a loop with `ordered` as
// if it had none).
// Minor 4: the SlowFaults record (older readers count slow page faults as work).
// Minor 5: the RuntimeCost record (older readers keep the runtime's own cost in the work).
// Minor 6: the HostSteal record.
// Minor 7: the TbbNodeBody event (flow graph nodes of limited concurrency; older readers see
// such a node's bodies as independent, so a serial node's chain can break).
// Minor 8: the TbbPipeline and TbbFilterBegin/End events (parallel_pipeline's serial filters;
// older readers see a filter's runs chained only where one spawned the next).
// Minor 9: the OpenAtEnd record (older readers skip it and count a oneTBB task still open at the
// end only up to its thread's last event).
// Minor 10: the TaskCost record (older readers estimate the tasking overhead from the strands).
// Minor 11: the OffCpuPacked record (older readers skip it and count the time a thread spent off
// its CPU as work).
// Minor 12: the DependencesDelta event, which the recorder writes in place of Dependences (older
// readers skip it and see tasks with `depend` clauses as independent).
inline constexpr uint16_t kVersionMinor = 12;  // additions that old readers can skip

// Metrics one trace can hold (the first is the primary one, every analysis's work).
inline constexpr int kMaxMetrics = 8;

#pragma pack(push, 1)
struct FileHeader {
  char magic[8];
  uint16_t version_major;
  uint16_t version_minor;
  uint32_t header_size;  // sizeof(FileHeader) when written; readers skip any extra bytes
  uint64_t pid;
  uint64_t start_tsc;
  uint64_t start_realtime_ns;  // CLOCK_REALTIME at start, for the report's date
  uint8_t metric;              // Metric: the primary one (== metrics[0] from version 3 on)
  uint8_t reserved[7];
  // Version 3 (header_size 64; versions 1 and 2 end here, at 48 bytes, with one metric): every
  // recorded metric in the order `record --metric` was given, metrics[0] being the primary one.
  uint8_t metric_count;
  uint8_t metrics[kMaxMetrics];  // Metric
  uint8_t reserved3[7];
};
static_assert(sizeof(FileHeader) == 64);
inline constexpr uint32_t kFileHeaderV2Size = 48;  // versions 1 and 2

struct RecordHeader {
  uint32_t type;  // RecordType
  uint32_t size;  // bytes, including this header
};
static_assert(sizeof(RecordHeader) == 8);

// Payload of RecordType::EventBlock, followed by the (possibly compressed) event bytes.
struct EventBlockHeader {
  uint32_t thread;      // recorder's thread index (0, 1, ...)
  uint32_t chunk_seq;   // per-thread chunk number: blocks are ordered by (chunk_seq, offset)
  uint32_t offset;      // where its first event starts in the recorder's chunk (of raw events)
  uint32_t raw_size;    // bytes of event data once decompressed
  uint8_t compression;  // Compression
  uint8_t reserved[3];
};
static_assert(sizeof(EventBlockHeader) == 20);

// Payload of RecordType::ClockSync: a TSC reading paired with CLOCK_MONOTONIC, taken together.
// The first and last pair give the TSC frequency.
struct ClockSync {
  uint64_t tsc;
  uint64_t monotonic_ns;
};
static_assert(sizeof(ClockSync) == 16);

// Payload of RecordType::ThreadInfo.
struct ThreadInfo {
  uint32_t thread;  // recorder's thread index
  uint32_t type;    // ompt_thread_t: 1 initial, 2 worker, 3 other
  uint64_t os_tid;
};
static_assert(sizeof(ThreadInfo) == 16);

// Payload of RecordType::ModuleMap: a count, then `count` entries each followed by its path.
struct ModuleEntry {
  uint64_t base;   // load bias (dlpi_addr)
  uint64_t begin;  // executable segments' runtime range
  uint64_t end;
  uint32_t path_size;  // bytes of path that follow (no terminating NUL)
};
static_assert(sizeof(ModuleEntry) == 28);

// Payload of RecordType::Finish: written once, last, by the recorder on a clean end.
struct Finish {
  uint64_t end_tsc;
  uint64_t tasks_created;
  uint64_t events;
  uint64_t events_lost;  // events of threads that could not get buffer memory (normally 0)
  uint32_t reason;       // FinishReason
  uint32_t flags;        // FinishFlags
};
static_assert(sizeof(Finish) == 40);

// Payload of RecordType::LaunchStatus: appended by `tasklens record` after the program ended.
// Payload of RecordType::RecorderStats: written by the recorder at the end, before Finish.
struct RecorderStats {
  uint64_t stalls;         // times a program thread waited for the writer (RecorderStall events)
  uint64_t stall_ticks;    // TSC ticks of those waits and of faulting fresh buffers in, in all
  uint64_t switches_lost;  // context-switch records the kernel dropped (a ring overflowed)
  uint64_t chunks;         // event buffers used at most
  uint64_t chunk_bytes;    // the size of one
  uint64_t write_errors;   // writes to the trace file that failed (e.g. a full disk)
  // Was reserved (zeros in older traces; valid when write_errors > 0, resp. events_lost > 0):
  // the first failed write's errno and when it happened, in ms into the recording (events are
  // not written after it: the trace holds what came before), and when a thread first lost
  // events for want of buffer memory (Finish::events_lost).
  uint32_t first_write_errno;
  uint32_t first_write_error_ms;
  uint32_t first_no_memory_ms;
  uint32_t reserved;
};
static_assert(sizeof(RecorderStats) == 64);

// Payload of RecordType::HostSteal: from the trace's start to its end, over the CPUs the program
// may run on, the "steal" time of /proc/stat (a virtual machine's host running something else on
// them) and all their time, in the kernel's clock ticks (ticks_per_second of them a second).
struct HostSteal {
  uint32_t cpus;
  uint32_t ticks_per_second;
  uint64_t steal_ticks;
  uint64_t total_ticks;
};
static_assert(sizeof(HostSteal) == 24);

// The share of the CPUs' time the host took, 0-100; -1 for a record that says nothing (no time)
// or is damaged (more steal than time).
inline double host_steal_percent(const HostSteal& s) {
  if (s.total_ticks == 0 || s.steal_ticks > s.total_ticks) return -1;
  return 100.0 * static_cast<double>(s.steal_ticks) / static_cast<double>(s.total_ticks);
}

// Payload of RecordType::ProbeCost: what recording one event costs the thread that records it,
// per metric in the file's order (1000ths of the metric's unit per event; 0: not measured).
// Every strand's measured work holds about one such cost per event; the model takes it out
// (version 4.2). The recorder writes one at start-up (a calibration loop) and, when the program
// ends normally, a second one measured during the run (ProbeSource::Run): readers keep the last.
enum class ProbeSource : uint32_t { StartUp = 0, Run = 1 };
struct ProbeCost {
  uint32_t metric_count;
  uint32_t source;  // ProbeSource (0 in traces of before the in-run measurement)
  uint64_t milli_per_event[kMaxMetrics];
};
static_assert(sizeof(ProbeCost) == 72);

// Payload of RecordType::RuntimeCost. An interval of a thread's time between two consecutive
// events lies in a strand and holds the runtime's code after the first event's callback and
// before the second's. `tasklens record` times those intervals in a program of empty tasks
// (src/launch/calibration_program.c) run under the same runtime and recorder, and keeps the
// median of each kind of interval: what the runtime costs there when the program does nothing.
// The model takes that much (at most the interval) out of the same kind of interval of the
// program's strands. An interval's kind is the pair of its events' keys (interval_key below) and
// whether the thread's team has one thread: one-thread teams run tasks at once, along other paths.
struct RuntimeCostHeader {
  uint32_t count;    // entries that follow
  uint32_t samples;  // intervals timed in all
  uint64_t tasks;    // tasks the calibration ran
};
static_assert(sizeof(RuntimeCostHeader) == 16);
struct RuntimeCostEntry {
  uint16_t before;  // interval_key of the event that starts the interval
  uint16_t after;   // interval_key of the event that ends it
  uint8_t solo;     // 1: the thread's team has one thread
  uint8_t reserved[3];
  uint32_t samples;      // intervals of this kind timed
  uint64_t milli_ticks;  // their median, in 1000ths of a TSC tick (after the recorder's own cost)
};
static_assert(sizeof(RuntimeCostEntry) == 20);

// Payload of RecordType::TaskCost: what one task costs the program as a whole on one thread
// (creating, scheduling, running and joining it, over a plain call), measured by `tasklens
// record` after the program with no recorder loaded: the calibration program's empty-task
// recursion against its serial elision, under the program's runtime. The tasking overhead of
// every burdened figure and cut-off; RuntimeCost's intervals cannot add up to it (each sees only
// the runtime's code between two events).
struct TaskCost {
  uint64_t pico_per_task;  // picoseconds per task (wall time: the machine's, not TSC ticks)
  uint32_t tasks;          // tasks per round of the measurement
  uint32_t rounds;         // rounds per measurement (the least round counts)
  uint32_t measurements;   // measurements combined (their median)
  uint32_t reserved;
};
static_assert(sizeof(TaskCost) == 24);

struct LaunchStatus {
  int32_t exit_code;  // valid when signal == 0
  int32_t signal;     // terminating signal, 0 if the program exited
  uint64_t wall_ns;   // wall time of the program as seen by the launcher
};
static_assert(sizeof(LaunchStatus) == 16);
#pragma pack(pop)

enum class RecordType : uint32_t {
  // payload: u32 count, then count x {u8 kind, u8 fixed, u8 repeated, u8 id_mask, u8 ptr_mask,
  // u8 addr_mask} (version 1: without addr_mask)
  EventSchema = 1,
  RuntimeInfo = 2,  // payload: u32 flags (RuntimeFlags), then the runtime's version string
  ThreadInfo = 3,
  EventBlock = 4,
  ClockSync = 5,
  ModuleMap = 6,
  Finish = 7,
  LaunchStatus = 8,
  Preemptions = 9,  // payload: u32 thread, u32 count, count x {u64 out_ns, u64 in_ns} (MONOTONIC)
  // payload: u32 count, then count x {u32 id, u32 size, size bytes of name (no NUL)}. Names of
  // the ids of RegionBegin/RegionEnd events; a file may hold several such records (the recorder
  // writes one per name as it first sees it), ids are unique across them.
  RegionNames = 10,
  // payload: u32 count, then count x {u64 address, u32 line, u32 file_size, u32 function_size,
  // file bytes, function bytes}. Source locations of synthetic code addresses (kSyntheticSite
  // set): call sites the program reported itself (the oneTBB wrappers of include/tasklens/tbb.h
  // capture them at compile time), used in place of return addresses.
  SiteNames = 11,
  // payload like Preemptions: the intervals the thread was switched out while NOT runnable
  // (blocked: sleeping, waiting for I/O, a futex or a lock) (version 4.2).
  Blocked = 12,
  RecorderStats = 13,  // payload: RecorderStats (version 4.2)
  ProbeCost = 14,      // payload: ProbeCost (version 4.2)
  // payload like Preemptions: of each page fault that took far longer than the thread's typical
  // one, the interval beyond that typical time (the thread stayed on its CPU; version 4.4).
  SlowFaults = 15,
  // payload: RuntimeCostHeader, then count x RuntimeCostEntry: the OpenMP runtime's own time
  // between two of the recorder's events, measured by `tasklens record` on empty tasks after the
  // program ran (version 4.5).
  RuntimeCost = 16,
  // payload: HostSteal: the time the hypervisor took the program's CPUs away during the
  // recording (version 4.6).
  HostSteal = 17,
  // payload: u32 count, then count x OpenRun: the oneTBB task each recorded thread was inside
  // when the recording ended (version 4.9). Written at the end, before Finish. oneTBB releases a
  // task's group inside the task's execute, before the task returns to the scheduler where its
  // end is recorded: the group's wait may return, and the program end, while the task's thread
  // is between the two (preempted, say). Such a task has a begin and no end; readers close it at
  // the wait that joined it, else at the recording's end (Finish::end_tsc).
  OpenAtEnd = 18,
  // payload: TaskCost (version 4.10).
  TaskCost = 19,
  // payload: OffCpuPackedHeader, then the intervals of one Preemptions, Blocked or SlowFaults
  // record, packed (version 4.11): `tasklens record` packs them after the run (trace/repack.cpp;
  // the sizes in docs/benchmarks.md).
  OffCpuPacked = 20,
};

#pragma pack(push, 1)
// The intervals: `count` of them, each as two LEB128 varints of zigzag-coded differences (its
// begin minus the previous interval's end, the first's minus first_begin; its end minus its
// begin), `raw_size` bytes in all, compressed with zstd, its frame with a checksum (the rest of
// the record). Empty and reversed intervals (no time) are left out.
struct OffCpuPackedHeader {
  uint32_t thread;
  uint32_t type;         // the RecordType packed: Preemptions, Blocked or SlowFaults
  uint32_t count;        // intervals
  uint32_t raw_size;     // bytes of the varints
  uint64_t first_begin;  // the first interval's begin (0 when count is 0)
  uint64_t last_begin;   // the last one's
  uint8_t in_order;      // 1: no begin is below the one before (the recorder writes them so)
  uint8_t reserved[7];   // 0
};
static_assert(sizeof(OffCpuPackedHeader) == 40);
#pragma pack(pop)

#pragma pack(push, 1)
struct OpenRun {
  uint32_t thread;    // recorder's thread index
  uint32_t reserved;  // 0
  uint64_t task;      // the id of the task of its innermost recorded run (TbbRunBegin)
};
static_assert(sizeof(OpenRun) == 16);
#pragma pack(pop)

// Code addresses with this bit set are not in any module: SiteNames records give their source
// location. Real user-space addresses stay far below it.
inline constexpr uint64_t kSyntheticSite = 1ull << 62;

// Region name ids are dense from 0; the recorder interns at most this many distinct names (the
// events of further names are not recorded) and readers refuse larger ids as corrupted.
inline constexpr uint32_t kMaxRegionNames = 1u << 20;

// How an EventBlock's bytes are stored: LZ4 is the recorder's default (version 4 on).
enum class Compression : uint8_t { None = 0, Zstd = 1, Lz4 = 2 };

// Work metrics, named as perf names them (to_string, metric_from_name). Versions 1 and 2 of the
// format know only the first four.
enum class Metric : uint8_t {
  Tsc = 0,
  Cycles = 1,
  Instructions = 2,
  TaskClock = 3,  // perf software event: CPU time in ns
  CacheReferences = 4,
  CacheMisses = 5,
  Branches = 6,
  BranchMisses = 7,
  RefCycles = 8,
  StalledCyclesFrontend = 9,
  StalledCyclesBackend = 10,
  PageFaults = 11,  // perf software events from here on
  MinorFaults = 12,
  MajorFaults = 13,
  ContextSwitches = 14,
  CpuMigrations = 15,
};
inline constexpr int kMetricCount = 16;

// perf's software events (a read(2) each, no rdpmc); the others but the TSC are hardware events.
inline constexpr bool is_software(Metric m) {
  return m == Metric::TaskClock ||
         static_cast<uint8_t>(m) >= static_cast<uint8_t>(Metric::PageFaults);
}
// Metrics that measure time: the TSC (ticks, rate from the clock syncs) and task-clock (ns).
inline constexpr bool is_time(Metric m) { return m == Metric::Tsc || m == Metric::TaskClock; }

// Exec: the program called exec (execve and the like): what ran before it is in the trace, the
// new program is not recorded.
enum class FinishReason : uint32_t { Exit = 0, ToolFinalize = 2, Exec = 3 };

enum RuntimeFlags : uint32_t {
  kRuntimeHasDispatch = 1u << 0,  // the runtime reports loop chunks (LLVM 16+)
  kRuntimeTbb = 1u << 1,          // the program links oneTBB and its entry points are traced
  // The program links a TBB whose ABI the recorder does not know (the version string says which):
  // its tasks are not traced.
  kRuntimeTbbUnsupported = 1u << 2,
};

enum FinishFlags : uint32_t {
  kFinishThreadsStillRunning = 1u << 0,  // exit() inside a parallel region
};

// Event kinds. Fields are varints; "id" fields are zig-zag deltas against the previous id field
// of the same thread stream, "ptr" fields are zig-zag deltas against the previous ptr field,
// "addr" fields against the previous addr field.
// The numeric values of OpenMP enums (flags, kinds, statuses) are the OMPT ones.
enum class EventKind : uint8_t {
  ThreadBegin = 1,     // type
  ThreadEnd = 2,       // -
  ParallelBegin = 3,   // id encountering_task, id parallel, requested_team_size, flags, ptr
  ParallelEnd = 4,     // id parallel, id encountering_task, flags, ptr
  ImplicitBegin = 5,   // id parallel, id task, team_size, index, flags
  ImplicitEnd = 6,     // id task, index, flags
  TaskCreate = 7,      // id parent, id task, flags, ptr
  TaskSchedule = 8,    // id prior, prior_status, id next
  SyncBegin = 9,       // kind, id task, ptr
  SyncEnd = 10,        // kind, id task, ptr
  WorkBegin = 11,      // work_type, id task, count, ptr
  WorkEnd = 12,        // work_type, id task, ptr
  Dispatch = 13,       // dispatch_kind, id task, a, b   (chunk: start, iterations; section: ptr, 0)
  Dependences = 14,    // id task, count, then count x {address, dependence_type}
  MaskedBegin = 15,    // id task, ptr
  MaskedEnd = 16,      // id task, ptr
  SyncWaitBegin = 17,  // kind, id task        (only for taskgroup: its end is where it waits)
  SyncWaitEnd = 18,    // kind, id task
  Mark = 19,           // mark (MarkKind)
  MutexWaitBegin = 20,  // mutex_kind   (critical, lock, ordered...: the thread starts waiting)
  MutexWaitEnd = 21,    // mutex_kind   (it got the mutex)
  // User regions (include/tasklens/tasklens.h): the name id is plain (not a delta), its text is
  // in a RegionNames record.
  RegionBegin = 22,  // name_id
  RegionEnd = 23,    // name_id
  // oneTBB (src/recorder/tbb_hooks.cpp). A task's execution is a TaskSchedule pair like an OpenMP
  // task's (switch to it, complete back to the task the thread ran before, 0 if none). `group` is
  // the address of the task_group_context the task is spawned into / waited for: a wait joins
  // every task spawned into its group since the group's previous wait. `tbb_kind` is TbbKind.
  TbbSpawn = 24,      // id parent, id task, addr group, tbb_kind, ptr
  TbbWaitBegin = 25,  // id task, addr group, ptr   (the waiting task's strand stops here...)
  TbbWaitEnd = 26,    // id task, addr group, ptr   (...and resumes once the group is done)
  // One call of a TBB algorithm's body on a subrange (the wrappers of include/tasklens/tbb.h):
  // a strand of its own, logically parallel to the task's other chunks.
  ChunkBegin = 27,  // id task
  ChunkEnd = 28,    // id task
  // Compact oneTBB events (version 4): what a thread runs and waits for nests on the thread, so
  // an end needs no fields that its begin gave. The EventDecoder turns them into the full forms
  // above (TbbWaitEnd; TaskSchedule with the OMPT statuses), so no consumer sees them.
  TbbWaitDone = 29,  // -                    (TbbWaitEnd of the thread's innermost open wait)
  TbbRunBegin = 30,  // id prior, id next    (TaskSchedule prior, switch, next)
  TbbRunEnd = 31,    // status               (TaskSchedule next, status, prior of its begin)
  // ... and by the task the thread runs (its innermost open run), which they leave out:
  TbbSpawnIn = 32,      // id task, addr group, tbb_kind, ptr   (TbbSpawn with that parent)
  TbbWaitBeginIn = 33,  // addr group, ptr                      (TbbWaitBegin of that task)
  TbbRunBeginIn = 34,   // id next                              (TbbRunBegin inside that task)
  // Threads the program starts itself (pthread_create, std::thread; version 4.1): created by the
  // task the creating thread runs, started and ended on the new thread around its start
  // routine, and joined (pthread_join) by the task the joining thread runs.
  UserThreadCreate = 35,     // id thread, ptr    (the creator's strand ends here)
  UserThreadStart = 36,      // id thread         (on the new thread: its first strand starts)
  UserThreadEnd = 37,        // id thread         (its start routine returned)
  UserThreadJoinBegin = 38,  // id thread         (the joiner's strand stops here...)
  UserThreadJoinEnd = 39,    // id thread         (...and resumes once the thread ended)
  // The thread spent `ticks` TSC ticks inside the recorder getting an event buffer (waiting for
  // the writer, or faulting a fresh one in), ending at this event's time: not the program's
  // work (version 4.2).
  RecorderStall = 40,  // ticks
  // The end of an ordered region (version 4.3; the recorder writes it for ompt_mutex_ordered
  // only): with MutexWaitBegin/End of that kind, it brackets one iteration's ordered part.
  MutexReleased = 41,  // mutex_kind
  // The thread's next TbbSpawn(In) spawns `task`, a body of the flow graph node at `node` (a
  // function_node or multifunction_node), which runs at most `limit` bodies at once (1:
  // tbb::flow::serial; written only for limited nodes). oneTBB keeps the limit with a counter:
  // a body may start from whichever task put its message while the node had room, with no
  // spawn from the body that made the room; readers chain the node's bodies (version 4.7).
  TbbNodeBody = 42,  // id task, addr node, limit
  // parallel_pipeline (version 4.8). The thread's next root spawn (execute_and_wait) into `group`
  // starts a pipeline, whose stage tasks are spawned into that group. A serial filter (in order
  // or out of order) runs one item at a time, but libtbb may run an item's turn in whichever
  // stage task reaches the filter once it is free, with no spawn from the run before: each run
  // (the filter's operator() on one item, inside the thread's current task) is bracketed, and
  // readers chain the runs of each filter in the order they ran.
  TbbPipeline = 43,     // addr group
  TbbFilterBegin = 44,  // addr filter
  TbbFilterEnd = 45,    // addr filter
  // Dependences with each group's address coded against the address at the same position of the
  // thread's previous DependencesDelta (see kDependenceChains); readers hand it out as
  // Dependences. Version 4.12 on: older readers skip it (tasks with `depend` look independent).
  DependencesDelta = 46,
};

// An event's key for RuntimeCost records: its kind, and where the runtime's path depends on it
// a subtype: TaskCreate the task's flags (1 untied, 2 undeferred, 4 final), TaskSchedule the
// prior task's status, SyncBegin/End and SyncWaitBegin/End the kind of synchronization,
// WorkBegin/End the kind of work, Dispatch its kind (each below 16).
inline constexpr uint16_t interval_key(EventKind kind, uint64_t subtype) {
  return static_cast<uint16_t>(static_cast<uint16_t>(kind) << 4 | (subtype & 15));
}
inline constexpr int kEventKindCount = 47;

// DependencesDelta: one address chain per group position. A task's clauses name the same kind
// of object at the same position from one task to the next (a tiled loop nest's blocks), so an
// address minus the one at its position before is short where the one before in the event is
// not. The recorder writes at most this many groups per event.
inline constexpr int kDependenceChains = 3;
// OMPT's ompt_task_status_t values carried by TaskSchedule.
inline constexpr uint64_t kTaskStatusComplete = 1, kTaskStatusCancel = 3, kTaskStatusSwitch = 7;

// What a TbbSpawn's task is (from the task's C++ class, or from the wrapper that spawned it).
// The values are those of include/tasklens/tbb.h's site kinds.
enum class TbbKind : uint8_t {
  Unknown = 0,
  Task = 1,  // task_group::run / run_and_wait
  ParallelFor = 2,
  ParallelReduce = 3,
  ParallelInvoke = 4,
  ParallelSort = 5,
  Wait = 6,          // only for wrapper sites of task_group::wait
  Other = 7,         // another algorithm (parallel_for_each, parallel_scan, pipeline, flow graph)
  ArenaExecute = 8,  // task_arena::execute: the delegate runs as a task of its own
  Enqueued = 9,      // task_arena::enqueue: fire and forget
};                   // one past the largest kind

enum class MarkKind : uint8_t {
  MainStart = 1,   // main() is about to run: the initial task's user code starts here
  ProgramEnd = 2,  // the recording ends (exit): closes the calling thread's last strand
  // The thread's first call into oneTBB starts its scheduler (thread pool, arena) lazily: the
  // time between these two marks is the runtime's start-up, not program work.
  RuntimeInitBegin = 3,
  RuntimeInitEnd = 4,
  // main() returned: what the thread does until the recording ends (destructors, atexit
  // handlers, the runtimes shutting down their thread pools) is not program work.
  MainReturn = 5,
};

inline constexpr uint8_t kAbsent = 0xff;  // EventShape::fixed of a kind missing from a schema

struct EventShape {
  uint8_t fixed;     // number of fixed varint fields
  uint8_t repeated;  // if > 0: the last fixed field is a count of groups of `repeated` varints
  uint8_t id_mask;   // bit i: fixed field i is an id (zig-zag delta against the previous id)
  uint8_t ptr_mask;  // bit i: fixed field i is a code address (zig-zag delta, likewise)
  // bit i: fixed field i is a data address (zig-zag delta against the previous data address):
  // stack and heap addresses interleaved with code addresses would make both deltas long.
  uint8_t addr_mask = 0;
};

// The schema written into every trace (readers use the file's, not this one).
inline constexpr EventShape kEventShapes[kEventKindCount] = {
    {0, 0, 0, 0},            // 0 unused
    {1, 0, 0, 0},            // ThreadBegin
    {0, 0, 0, 0},            // ThreadEnd
    {5, 0, 0x3, 0x10},       // ParallelBegin
    {4, 0, 0x3, 0x8},        // ParallelEnd
    {5, 0, 0x3, 0},          // ImplicitBegin
    {3, 0, 0x1, 0},          // ImplicitEnd
    {4, 0, 0x3, 0x8},        // TaskCreate
    {3, 0, 0x5, 0},          // TaskSchedule
    {3, 0, 0x2, 0x4},        // SyncBegin
    {3, 0, 0x2, 0x4},        // SyncEnd
    {4, 0, 0x2, 0x8},        // WorkBegin
    {3, 0, 0x2, 0x4},        // WorkEnd
    {4, 0, 0x2, 0},          // Dispatch
    {2, 2, 0x1, 0},          // Dependences
    {2, 0, 0x1, 0x2},        // MaskedBegin
    {2, 0, 0x1, 0x2},        // MaskedEnd
    {2, 0, 0x2, 0},          // SyncWaitBegin
    {2, 0, 0x2, 0},          // SyncWaitEnd
    {1, 0, 0, 0},            // Mark
    {1, 0, 0, 0},            // MutexWaitBegin
    {1, 0, 0, 0},            // MutexWaitEnd
    {1, 0, 0, 0},            // RegionBegin
    {1, 0, 0, 0},            // RegionEnd
    {5, 0, 0x3, 0x10, 0x4},  // TbbSpawn
    {3, 0, 0x1, 0x4, 0x2},   // TbbWaitBegin
    {3, 0, 0x1, 0x4, 0x2},   // TbbWaitEnd
    {1, 0, 0x1, 0},          // ChunkBegin
    {1, 0, 0x1, 0},          // ChunkEnd
    {0, 0, 0, 0},            // TbbWaitDone
    {2, 0, 0x3, 0},          // TbbRunBegin
    {1, 0, 0, 0},            // TbbRunEnd
    {4, 0, 0x1, 0x8, 0x2},   // TbbSpawnIn
    {2, 0, 0, 0x2, 0x1},     // TbbWaitBeginIn
    {1, 0, 0x1, 0},          // TbbRunBeginIn
    {2, 0, 0x1, 0x2},        // UserThreadCreate
    {1, 0, 0x1, 0},          // UserThreadStart
    {1, 0, 0x1, 0},          // UserThreadEnd
    {1, 0, 0x1, 0},          // UserThreadJoinBegin
    {1, 0, 0x1, 0},          // UserThreadJoinEnd
    {1, 0, 0, 0},            // RecorderStall
    {1, 0, 0, 0},            // MutexReleased
    {3, 0, 0x1, 0, 0x2},     // TbbNodeBody
    {1, 0, 0, 0, 0x1},       // TbbPipeline
    {1, 0, 0, 0, 0x1},       // TbbFilterBegin
    {1, 0, 0, 0, 0x1},       // TbbFilterEnd
    {2, 2, 0x1, 0},          // DependencesDelta
};

static_assert(kEventShapes[kEventKindCount - 1].fixed != 0, "every event kind needs its shape");

// Longest encoded event the recorder ever writes (kind, dtime, a dmetric per metric, five fields)
// except Dependences, which it writes in parts sized to fit; buffers keep this much room free.
inline constexpr size_t kMaxEventBytes = 1 + 10 + kMaxMetrics * 10 + 5 * 10;

inline constexpr uint64_t zigzag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline constexpr int64_t unzigzag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

// Writes v as LEB128 at p; returns the new end. p must have 10 bytes of room.
__attribute__((always_inline)) inline uint8_t* put_varint(uint8_t* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<uint8_t>(v) | 0x80;
    v >>= 7;
  }
  *p++ = static_cast<uint8_t>(v);
  return p;
}

const char* to_string(EventKind kind);
const char* to_string(Metric metric);  // perf's name ("tsc" for the TSC)
// perf's name or one of perf's aliases (cpu-cycles, branch-instructions, faults, cs,
// migrations) to the metric; false if `name` is none of them.
bool metric_from_name(const char* name, size_t size, Metric& out);

}  // namespace tasklens::trace
