// The OMPT tool: loaded into the profiled program (LD_PRELOAD by `tasklens record`), it turns
// OpenMP runtime events into compact per-thread event streams (see src/trace/format.hpp).
//
// Hot-path rules: no locks, no allocation, no syscalls per event; one TSC read, a few varints
// into the thread's current chunk, one release store. Anything else (compression, file I/O,
// symbols) happens on the writer thread or at report time. The recorder never throws into or
// aborts the host: every failure turns recording off for the affected thread or process.
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <omp-tools.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "recorder/buffer.hpp"
#include "recorder/metric.hpp"
#include "recorder/regions.hpp"
#include "trace/format.hpp"
#include "trace/reader.hpp"

#define TL_INLINE __attribute__((always_inline)) inline
#define TL_EXPORT extern "C" __attribute__((visibility("default")))

namespace tasklens::recorder {
namespace {

using trace::EventKind;

// LLVM 16 dispatch kinds (newer than the omp-tools.h we may compile against).
constexpr int kDispatchWsLoopChunk = 3;
constexpr int kDispatchTaskloopChunk = 4;
constexpr int kDispatchDistributeChunk = 5;
struct DispatchChunk {
  uint64_t start;
  uint64_t iterations;
};

struct ThreadState {
  ThreadBuffer* buffer = nullptr;
  Chunk* chunk = nullptr;
  uint8_t* pos = nullptr;
  uint8_t* limit = nullptr;
  uint64_t last_time = 0;
  uint64_t last_metric = 0;
  uint64_t last_id = 0;
  uint64_t last_ptr = 0;
  uint64_t next_id = 0;
  uint64_t tasks = 0;
  uint64_t events = 0;
  uint32_t index = 0;
  bool dead = false;       // this thread records nothing (see thread_init, make_room)
  bool no_memory = false;  // ... because it could not get buffer memory: its events are lost
  uint64_t lost = 0;
  // One-thread teams (libomp runs them serialized): sizes of the teams this thread is in, and
  // what lets two events share one TSC read there (see begin_event's reuse_time).
  uint8_t team_depth = 0;
  uint32_t team_one[16] = {};
  uint64_t created_id = 0, created_at_event = ~0ull, wait_at_event = ~0ull;
  PerfCounter counter;
  RegionCache regions;  // user region names seen by this thread (see regions.hpp)
  ThreadState* next = nullptr;
};

// Configuration, read once in the library constructor (before main, single-threaded). It must
// need no dynamic initialization: C++ initializers of this file may run after the constructor.
struct Config {
  bool enabled = false;
  char output[4096] = {};
  trace::Metric metric = trace::Metric::Tsc;
  unsigned flush_ms = 100;
  size_t max_chunks = 1024;
  bool watch_preemptions = true;
};
constinit Config g_config;

enum State : int { kOff = 0, kRecording = 1, kFinished = 2 };
std::atomic<int> g_state{kOff};
pid_t g_pid = 0;
int g_fd = -1;
uint64_t g_start_tsc = 0;
uint32_t g_runtime_flags = 0;
std::string g_runtime_version;
std::atomic<uint32_t> g_thread_count{0};
std::atomic<int> g_open_parallel{0};
std::mutex g_states_mutex;
ThreadState* g_states = nullptr;

thread_local ThreadState* tls_state __attribute__((tls_model("initial-exec"))) = nullptr;

ThreadState* thread_init(int type) {
  auto* t = new (std::nothrow) ThreadState();
  if (!t) return nullptr;
  if (g_state.load() != kRecording || getpid() != g_pid) {
    // After the end of the trace, or in a forked child (which shares the parent's trace file):
    // record nothing, write nothing.
    t->dead = true;
    tls_state = t;
    return t;
  }
  t->index = g_thread_count.fetch_add(1, std::memory_order_relaxed);
  t->next_id = (static_cast<uint64_t>(t->index) + 1) << 40;
  t->last_time = g_start_tsc;
  if (g_config.metric != trace::Metric::Tsc) {
    t->counter.open(g_config.metric);
    t->last_metric = 0;
  }
  // Preemptions only matter for the TSC: perf counters stop while the thread is off the CPU.
  t->buffer = buffer_register(t->index,
                              g_config.metric == trace::Metric::Tsc && g_config.watch_preemptions);
  if (!t->buffer) {
    t->dead = t->no_memory = true;
  } else {
    t->chunk = t->buffer->current.load(std::memory_order_relaxed);
    t->pos = t->chunk->data;
    t->limit = t->chunk->data + kChunkBytes;
  }
  {
    std::lock_guard<std::mutex> lock(g_states_mutex);
    t->next = g_states;
    g_states = t;
  }
  trace::ThreadInfo info{t->index, static_cast<uint32_t>(type),
                         static_cast<uint64_t>(syscall(SYS_gettid))};
  std::vector<uint8_t> rec;
  trace::append_record(rec, trace::RecordType::ThreadInfo, &info, sizeof info);
  writer_append(rec.data(), rec.size());
  tls_state = t;
  return t;
}

TL_INLINE ThreadState* state() {
  ThreadState* t = tls_state;
  if (__builtin_expect(t == nullptr, 0)) t = thread_init(ompt_thread_other);
  return t;
}

TL_INLINE uint64_t new_id(ThreadState* t) { return ++t->next_id; }

TL_INLINE uint64_t id_of(ThreadState* t, ompt_data_t* d) {
  if (!d) return 0;
  if (__builtin_expect(d->value == 0, 0)) d->value = new_id(t);
  return d->value;
}

__attribute__((noinline)) bool make_room(ThreadState* t) {
  Chunk* c = buffer_rotate(t->buffer);
  if (!c) {
    t->dead = t->no_memory = true;
    ++t->lost;
    return false;
  }
  t->chunk = c;
  t->pos = c->data + c->committed.load(std::memory_order_relaxed);
  t->limit = c->data + kChunkBytes;
  return true;
}

TL_INLINE bool in_one_thread_team(const ThreadState* t) {
  return t->team_depth > 0 && t->team_depth <= 16 && t->team_one[t->team_depth - 1];
}

// Starts an event: returns where its fields go, or null if this thread cannot record. With
// `reuse_time` the event takes the previous event's timestamp instead of reading the TSC (15 ns
// here, a quarter of a fine-grained task): only for events that follow the previous one with
// nothing of the program in between.
TL_INLINE uint8_t* begin_event(ThreadState* t, EventKind kind, bool reuse_time = false) {
  if (__builtin_expect(t == nullptr || t->dead, 0)) {
    if (t && t->no_memory) ++t->lost;
    return nullptr;
  }
  if (__builtin_expect(g_state.load(std::memory_order_relaxed) != kRecording, 0)) return nullptr;
  if (__builtin_expect(static_cast<size_t>(t->limit - t->pos) < trace::kMaxEventBytes, 0) &&
      !make_room(t))
    return nullptr;
  uint8_t* p = t->pos;
  *p++ = static_cast<uint8_t>(kind);
  uint64_t now = reuse_time ? t->last_time : read_tsc();
  if (__builtin_expect(now < t->last_time, 0)) now = t->last_time;  // never a negative delta
  p = trace::put_varint(p, now - t->last_time);
  t->last_time = now;
  if (g_config.metric != trace::Metric::Tsc) {
    uint64_t m = t->counter.read();
    if (m < t->last_metric) m = t->last_metric;
    p = trace::put_varint(p, m - t->last_metric);
    t->last_metric = m;
  }
  return p;
}

TL_INLINE uint8_t* put_id(ThreadState* t, uint8_t* p, uint64_t id) {
  p = trace::put_varint(p, trace::zigzag(static_cast<int64_t>(id - t->last_id)));
  t->last_id = id;
  return p;
}

TL_INLINE uint8_t* put_ptr(ThreadState* t, uint8_t* p, const void* ptr) {
  uint64_t v = reinterpret_cast<uint64_t>(ptr);
  p = trace::put_varint(p, trace::zigzag(static_cast<int64_t>(v - t->last_ptr)));
  t->last_ptr = v;
  return p;
}

TL_INLINE void end_event(ThreadState* t, uint8_t* p) {
  t->pos = p;
  ++t->events;
  t->chunk->committed.store(static_cast<uint32_t>(p - t->chunk->data), std::memory_order_release);
}

// ----------------------------------------------------------------------------- callbacks

void on_thread_begin(ompt_thread_t type, ompt_data_t*) {
  ThreadState* t = tls_state ? tls_state : thread_init(type);
  if (uint8_t* p = begin_event(t, EventKind::ThreadBegin)) {
    p = trace::put_varint(p, static_cast<uint64_t>(type));
    end_event(t, p);
  }
}

void on_thread_end(ompt_data_t*) {
  ThreadState* t = state();
  if (uint8_t* p = begin_event(t, EventKind::ThreadEnd)) end_event(t, p);
}

void on_parallel_begin(ompt_data_t* encountering_task, const ompt_frame_t*, ompt_data_t* parallel,
                       unsigned requested, int flags, const void* codeptr) {
  ThreadState* t = state();
  g_open_parallel.fetch_add(1, std::memory_order_relaxed);
  if (!t || t->dead) return;
  if (parallel) parallel->value = new_id(t);
  if (uint8_t* p = begin_event(t, EventKind::ParallelBegin)) {
    p = put_id(t, p, id_of(t, encountering_task));
    p = put_id(t, p, parallel ? parallel->value : 0);
    p = trace::put_varint(p, requested);
    p = trace::put_varint(p, static_cast<uint32_t>(flags));
    p = put_ptr(t, p, codeptr);
    end_event(t, p);
  }
}

void on_parallel_end(ompt_data_t* parallel, ompt_data_t* encountering_task, int flags,
                     const void* codeptr) {
  ThreadState* t = state();
  g_open_parallel.fetch_sub(1, std::memory_order_relaxed);
  if (uint8_t* p = begin_event(t, EventKind::ParallelEnd)) {
    p = put_id(t, p, id_of(t, parallel));
    p = put_id(t, p, id_of(t, encountering_task));
    p = trace::put_varint(p, static_cast<uint32_t>(flags));
    p = put_ptr(t, p, codeptr);
    end_event(t, p);
  }
}

void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t* parallel, ompt_data_t* task,
                      unsigned actual, unsigned index, int flags) {
  ThreadState* t = state();
  if (!t || t->dead) return;
  if (endpoint == ompt_scope_begin) {
    if (task) task->value = new_id(t);
    if (t->team_depth < 16) t->team_one[t->team_depth] = actual == 1;
    ++t->team_depth;
    if (uint8_t* p = begin_event(t, EventKind::ImplicitBegin)) {
      p = put_id(t, p, id_of(t, parallel));
      p = put_id(t, p, task ? task->value : 0);
      p = trace::put_varint(p, actual);
      p = trace::put_varint(p, index);
      p = trace::put_varint(p, static_cast<uint32_t>(flags));
      end_event(t, p);
    }
  } else {
    if (t->team_depth > 0) --t->team_depth;
    if (uint8_t* p = begin_event(t, EventKind::ImplicitEnd)) {
      p = put_id(t, p, id_of(t, task));
      p = trace::put_varint(p, index);
      p = trace::put_varint(p, static_cast<uint32_t>(flags));
      end_event(t, p);
    }
  }
}

void on_task_create(ompt_data_t* encountering_task, const ompt_frame_t*, ompt_data_t* new_task,
                    int flags, int, const void* codeptr) {
  ThreadState* t = state();
  if (!t || t->dead) return;
  uint64_t child = new_id(t);
  if (new_task) new_task->value = child;
  ++t->tasks;
  if (uint8_t* p = begin_event(t, EventKind::TaskCreate)) {
    p = put_id(t, p, id_of(t, encountering_task));
    p = put_id(t, p, child);
    p = trace::put_varint(p, static_cast<uint32_t>(flags));
    p = put_ptr(t, p, codeptr);
    end_event(t, p);
    t->created_id = child;
    t->created_at_event = t->events;
  }
}

void on_task_schedule(ompt_data_t* prior, ompt_task_status_t status, ompt_data_t* next) {
  ThreadState* t = state();
  // A one-thread team runs a task the moment it is created: the switch follows the creation
  // with only runtime code in between.
  bool immediate = t && next && next->value == t->created_id && t->events == t->created_at_event &&
                   in_one_thread_team(t);
  if (uint8_t* p = begin_event(t, EventKind::TaskSchedule, immediate)) {
    p = put_id(t, p, id_of(t, prior));
    p = trace::put_varint(p, static_cast<uint32_t>(status));
    p = put_id(t, p, id_of(t, next));
    end_event(t, p);
  }
}

void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t*,
                    ompt_data_t* task, const void* codeptr) {
  ThreadState* t = state();
  bool begin = endpoint == ompt_scope_begin;
  // In a one-thread team a taskwait with no event inside had nothing to wait for: it returned
  // at once.
  bool empty_wait = t && !begin && kind == ompt_sync_region_taskwait &&
                    t->events == t->wait_at_event && in_one_thread_team(t);
  if (uint8_t* p = begin_event(t, begin ? EventKind::SyncBegin : EventKind::SyncEnd, empty_wait)) {
    p = trace::put_varint(p, static_cast<uint32_t>(kind));
    p = put_id(t, p, id_of(t, task));
    p = put_ptr(t, p, codeptr);
    end_event(t, p);
    if (begin) t->wait_at_event = t->events;
  }
}

// Only a taskgroup has work inside its sync region; for every other kind the whole region is a
// wait, so their wait events would add bytes and nothing else.
void on_sync_region_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t*,
                         ompt_data_t* task, const void*) {
  if (kind != ompt_sync_region_taskgroup) return;
  ThreadState* t = state();
  EventKind ek = endpoint == ompt_scope_begin ? EventKind::SyncWaitBegin : EventKind::SyncWaitEnd;
  if (uint8_t* p = begin_event(t, ek)) {
    p = trace::put_varint(p, static_cast<uint32_t>(kind));
    p = put_id(t, p, id_of(t, task));
    end_event(t, p);
  }
}

void on_work(ompt_work_t type, ompt_scope_endpoint_t endpoint, ompt_data_t*, ompt_data_t* task,
             uint64_t count, const void* codeptr) {
  ThreadState* t = state();
  if (endpoint == ompt_scope_begin) {
    if (uint8_t* p = begin_event(t, EventKind::WorkBegin)) {
      p = trace::put_varint(p, static_cast<uint32_t>(type));
      p = put_id(t, p, id_of(t, task));
      p = trace::put_varint(p, count);
      p = put_ptr(t, p, codeptr);
      end_event(t, p);
    }
  } else if (uint8_t* p = begin_event(t, EventKind::WorkEnd)) {
    p = trace::put_varint(p, static_cast<uint32_t>(type));
    p = put_id(t, p, id_of(t, task));
    p = put_ptr(t, p, codeptr);
    end_event(t, p);
  }
}

void on_dispatch(ompt_data_t*, ompt_data_t* task, ompt_dispatch_t kind, ompt_data_t instance) {
  ThreadState* t = state();
  uint64_t a = 0, b = 0;
  int k = static_cast<int>(kind);
  if ((k == kDispatchWsLoopChunk || k == kDispatchTaskloopChunk || k == kDispatchDistributeChunk) &&
      instance.ptr) {
    const auto* chunk = static_cast<const DispatchChunk*>(instance.ptr);
    a = chunk->start;
    b = chunk->iterations;
  } else {
    a = instance.value;  // section: its code address; iteration: its number
  }
  if (uint8_t* p = begin_event(t, EventKind::Dispatch)) {
    p = trace::put_varint(p, static_cast<uint32_t>(k));
    p = put_id(t, p, id_of(t, task));
    p = trace::put_varint(p, a);
    p = trace::put_varint(p, b);
    end_event(t, p);
  }
}

void on_dependences(ompt_data_t* task, const ompt_dependence_t* deps, int ndeps) {
  ThreadState* t = state();
  if (!t || t->dead || ndeps <= 0) return;
  uint64_t id = id_of(t, task);
  // Written in groups of at most 3 so that an event always fits kMaxEventBytes.
  for (int i = 0; i < ndeps; i += 3) {
    int n = ndeps - i < 3 ? ndeps - i : 3;
    uint8_t* p = begin_event(t, EventKind::Dependences);
    if (!p) return;
    p = put_id(t, p, id);
    p = trace::put_varint(p, static_cast<uint64_t>(n));
    for (int j = 0; j < n; ++j) {
      p = trace::put_varint(p, reinterpret_cast<uint64_t>(deps[i + j].variable.ptr));
      p = trace::put_varint(p, static_cast<uint32_t>(deps[i + j].dependence_type));
    }
    end_event(t, p);
  }
}

void on_masked(ompt_scope_endpoint_t endpoint, ompt_data_t*, ompt_data_t* task,
               const void* codeptr) {
  ThreadState* t = state();
  EventKind ek = endpoint == ompt_scope_begin ? EventKind::MaskedBegin : EventKind::MaskedEnd;
  if (uint8_t* p = begin_event(t, ek)) {
    p = put_id(t, p, id_of(t, task));
    p = put_ptr(t, p, codeptr);
    end_event(t, p);
  }
}

// A thread spinning for a critical section or a lock is not doing the program's work: the
// model leaves the time between these two events out of the strand.
void on_mutex_acquire(ompt_mutex_t kind, unsigned, unsigned, ompt_wait_id_t, const void*) {
  ThreadState* t = state();
  if (uint8_t* p = begin_event(t, EventKind::MutexWaitBegin)) {
    p = trace::put_varint(p, static_cast<uint32_t>(kind));
    end_event(t, p);
  }
}

void on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t, const void*) {
  ThreadState* t = state();
  if (uint8_t* p = begin_event(t, EventKind::MutexWaitEnd)) {
    p = trace::put_varint(p, static_cast<uint32_t>(kind));
    end_event(t, p);
  }
}

// A nested lock the thread already owns: acquired without waiting (ends the wait too).
void on_nest_lock(ompt_scope_endpoint_t endpoint, ompt_wait_id_t, const void*) {
  if (endpoint == ompt_scope_begin) on_mutex_acquired(ompt_mutex_nest_lock, 0, nullptr);
}

// ----------------------------------------------------------------------------- user regions

// TASKLENS_REGION_BEGIN/END (include/tasklens/tasklens.h). Unlike the OMPT callbacks these come
// from the program at any time, so they record only what the callbacks would: nothing before
// or after the recording, in a forked child (on_fork_child cleared the state), or on a thread
// the runtime never reported (no ThreadState: its events would belong to no OpenMP task, and
// creating the state here would cost syscalls on the program's path).
TL_INLINE void region_event(EventKind kind, const char* name) {
  ThreadState* t = tls_state;
  if (__builtin_expect(t == nullptr || t->dead, 0)) {
    if (t && t->no_memory) ++t->lost;
    return;
  }
  if (__builtin_expect(g_state.load(std::memory_order_relaxed) != kRecording, 0)) return;
  uint32_t id;
  if (!region_id(t->regions, name ? name : "(null)", id)) return;
  if (uint8_t* p = begin_event(t, kind)) {
    p = trace::put_varint(p, id);
    end_event(t, p);
  }
}

// ----------------------------------------------------------------------------- file framing

struct ModuleCollector {
  std::vector<uint8_t> payload = std::vector<uint8_t>(4, 0);  // u32 count, then entries
  uint32_t count = 0;
  bool first = true;  // dl_iterate_phdr reports the main program first, with an empty name
};

int collect_module(dl_phdr_info* info, size_t, void* out) {
  auto* c = static_cast<ModuleCollector*>(out);
  bool first = c->first;
  c->first = false;
  std::string path = info->dlpi_name ? info->dlpi_name : "";
  if (path.empty()) {
    if (!first) return 0;
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n > 0) path.assign(buf, static_cast<size_t>(n));
  }
  trace::ModuleEntry e{};
  e.base = info->dlpi_addr;
  e.begin = ~0ull;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    uint64_t lo = info->dlpi_addr + ph.p_vaddr;
    uint64_t hi = lo + ph.p_memsz;
    if (lo < e.begin) e.begin = lo;
    if (hi > e.end) e.end = hi;
  }
  if (e.begin == ~0ull) return 0;
  e.path_size = static_cast<uint32_t>(path.size());
  const auto* ep = reinterpret_cast<const uint8_t*>(&e);
  c->payload.insert(c->payload.end(), ep, ep + sizeof e);
  c->payload.insert(c->payload.end(), path.begin(), path.end());
  ++c->count;
  std::memcpy(c->payload.data(), &c->count, 4);
  return 0;
}

std::vector<uint8_t> module_map_record() {
  ModuleCollector collector;
  dl_iterate_phdr(collect_module, &collector);
  std::vector<uint8_t> rec;
  trace::append_record(rec, trace::RecordType::ModuleMap, collector.payload.data(),
                       collector.payload.size());
  return rec;
}

void finish(trace::FinishReason reason) {
  if (getpid() != g_pid) return;  // a forked child: the trace belongs to the parent
  if (g_state.load() != kRecording) return;
  // Closes this thread's last strand: its work is only known at its next event.
  ThreadState* self = tls_state;
  if (uint8_t* p = begin_event(self, EventKind::Mark)) {
    p = trace::put_varint(p, static_cast<uint64_t>(trace::MarkKind::ProgramEnd));
    end_event(self, p);
  }
  int expected = kRecording;
  if (!g_state.compare_exchange_strong(expected, kFinished)) return;
  trace::Finish f{};
  f.end_tsc = read_tsc();
  f.reason = static_cast<uint32_t>(reason);
  {
    std::lock_guard<std::mutex> lock(g_states_mutex);
    for (ThreadState* t = g_states; t; t = t->next) {
      f.tasks_created += t->tasks;
      f.events += t->events;
      f.events_lost += t->lost;
    }
  }
  if (g_open_parallel.load() > 0) f.flags |= trace::kFinishThreadsStillRunning;
  std::vector<uint8_t> tail = module_map_record();
  trace::append_record(tail, trace::RecordType::Finish, &f, sizeof f);
  // Events are written until the state flip above; the flip stops new ones, so a final drain
  // sees every event that will ever be recorded (except those of threads mid-event right now).
  writer_finish(tail.data(), tail.size());
}

void finish_at_exit() { finish(trace::FinishReason::Exit); }

void on_fork_child() {
  // The child shares the parent's trace file but not its threads: it must never write.
  g_state.store(kOff, std::memory_order_relaxed);
  tls_state = nullptr;
}

int tool_initialize(ompt_function_lookup_t lookup, int, ompt_data_t*) {
  auto set_callback = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  if (!set_callback) return 0;
  g_fd = ::open(g_config.output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (g_fd < 0) return 0;  // the launcher reports the missing trace
  g_pid = getpid();
  g_start_tsc = read_tsc();

  auto reg = [&](ompt_callbacks_t which, auto fn) {
    return set_callback(which, reinterpret_cast<ompt_callback_t>(fn));
  };
  reg(ompt_callback_thread_begin, on_thread_begin);
  reg(ompt_callback_thread_end, on_thread_end);
  reg(ompt_callback_parallel_begin, on_parallel_begin);
  reg(ompt_callback_parallel_end, on_parallel_end);
  reg(ompt_callback_implicit_task, on_implicit_task);
  reg(ompt_callback_task_create, on_task_create);
  reg(ompt_callback_task_schedule, on_task_schedule);
  reg(ompt_callback_sync_region, on_sync_region);
  reg(ompt_callback_sync_region_wait, on_sync_region_wait);
  reg(ompt_callback_work, on_work);
  reg(ompt_callback_dependences, on_dependences);
  reg(ompt_callback_masked, on_masked);
  reg(ompt_callback_mutex_acquire, on_mutex_acquire);
  reg(ompt_callback_mutex_acquired, on_mutex_acquired);
  reg(ompt_callback_nest_lock, on_nest_lock);
  int dispatch = reg(ompt_callback_dispatch, on_dispatch);
  if (dispatch == ompt_set_always || dispatch == ompt_set_sometimes ||
      dispatch == ompt_set_sometimes_paired)
    g_runtime_flags |= trace::kRuntimeHasDispatch;

  timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  trace::FileHeader header = trace::make_file_header(
      static_cast<uint64_t>(g_pid), g_start_tsc,
      static_cast<uint64_t>(rt.tv_sec) * 1000000000ull + static_cast<uint64_t>(rt.tv_nsec),
      g_config.metric);
  std::vector<uint8_t> head(reinterpret_cast<uint8_t*>(&header),
                            reinterpret_cast<uint8_t*>(&header) + sizeof header);
  std::vector<uint8_t> schema = trace::make_schema_payload();
  trace::append_record(head, trace::RecordType::EventSchema, schema.data(), schema.size());
  trace::append_record(head, trace::RecordType::RuntimeInfo, &g_runtime_flags, 4,
                       g_runtime_version.data(), g_runtime_version.size());
  std::vector<uint8_t> modules = module_map_record();  // in case the program gets killed
  head.insert(head.end(), modules.begin(), modules.end());

  WriterConfig wc;
  wc.fd = g_fd;
  wc.flush_period_ms = g_config.flush_ms;
  wc.max_chunks = g_config.max_chunks;
  writer_configure(wc);
  writer_append(head.data(), head.size());  // before the writer thread exists: no race
  g_state.store(kRecording, std::memory_order_release);
  writer_start();
  std::atexit(finish_at_exit);
  pthread_atfork(nullptr, nullptr, on_fork_child);
  return 1;
}

void tool_finalize(ompt_data_t*) { finish(trace::FinishReason::ToolFinalize); }

// Restores an environment variable saved by the launcher, so that programs this one starts are
// not recorded into (and do not overwrite) our trace.
void restore_env(const char* name, const char* saved_name) {
  const char* saved = getenv(saved_name);
  if (saved && *saved)
    setenv(name, saved, 1);
  else
    unsetenv(name);
  unsetenv(saved_name);
}

__attribute__((constructor)) void recorder_constructor() {
  const char* out = getenv("TASKLENS_OUTPUT");
  if (!out || !*out) return;  // loaded without the launcher: stay out of the way
  g_config.enabled = true;
  if (std::strlen(out) >= sizeof g_config.output) return;
  std::strcpy(g_config.output, out);
  if (const char* m = getenv("TASKLENS_METRIC")) {
    std::string s = m;
    if (s == "cycles")
      g_config.metric = trace::Metric::Cycles;
    else if (s == "instructions")
      g_config.metric = trace::Metric::Instructions;
    else if (s == "task-clock")
      g_config.metric = trace::Metric::TaskClock;
  }
  if (const char* f = getenv("TASKLENS_FLUSH_MS")) {
    long v = std::strtol(f, nullptr, 10);
    if (v > 0 && v < 100000) g_config.flush_ms = static_cast<unsigned>(v);
  }
  if (const char* b = getenv("TASKLENS_BUFFER_MB")) {
    long v = std::strtol(b, nullptr, 10);
    if (v >= 1 && v < 65536)
      g_config.max_chunks = static_cast<size_t>(v) * 1024 * 1024 / kChunkBytes;
  }
  unsetenv("TASKLENS_OUTPUT");
  unsetenv("TASKLENS_METRIC");
  unsetenv("TASKLENS_FLUSH_MS");
  if (const char* w = getenv("TASKLENS_PREEMPTIONS")) g_config.watch_preemptions = *w != '0';
  unsetenv("TASKLENS_BUFFER_MB");
  unsetenv("TASKLENS_PREEMPTIONS");
  restore_env("LD_PRELOAD", "TASKLENS_SAVED_LD_PRELOAD");
  restore_env("OMP_TOOL_LIBRARIES", "TASKLENS_SAVED_OMP_TOOL_LIBRARIES");
}

__attribute__((destructor)) void recorder_destructor() { finish(trace::FinishReason::Exit); }

// --------------------------------------------------------------------- starting at main()

bool needs_openmp(const char* name) {
  const char* base = std::strrchr(name, '/');
  base = base ? base + 1 : name;
  return std::strncmp(base, "libomp.so", 9) == 0 || std::strncmp(base, "libgomp.so", 10) == 0 ||
         std::strncmp(base, "libiomp5.so", 11) == 0;
}

// Does any loaded object (the program or one of its libraries) link an OpenMP runtime? Our own
// preloaded runtime does not count: it is there for every program.
int scan_needed(dl_phdr_info* info, size_t, void* found) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
    const auto* dyn =
        reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    uintptr_t strtab = 0;
    for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d)
      if (d->d_tag == DT_STRTAB) strtab = d->d_un.d_ptr;
    if (!strtab) return 0;
    if (strtab < info->dlpi_addr) strtab += info->dlpi_addr;  // not relocated in place
    for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d)
      if (d->d_tag == DT_NEEDED &&
          needs_openmp(reinterpret_cast<const char*>(strtab + d->d_un.d_val)))
        *static_cast<bool*>(found) = true;
  }
  return 0;
}

using MainFn = int (*)(int, char**, char**);
MainFn g_real_main = nullptr;

// Starts the OpenMP runtime before main() so that the program's serial code before its first
// OpenMP construct is measured too (the runtime otherwise starts lazily at that construct), and
// marks where main() begins so that the runtime's own start-up is not counted as program work.
int main_with_recording(int argc, char** argv, char** envp) {
  bool openmp = false;
  if (g_config.enabled) dl_iterate_phdr(scan_needed, &openmp);
  if (openmp) {
    using NumProcsFn = int (*)();
    if (auto num_procs = reinterpret_cast<NumProcsFn>(dlsym(RTLD_DEFAULT, "omp_get_num_procs")))
      num_procs();
    ThreadState* t = g_state.load() == kRecording ? state() : nullptr;
    if (uint8_t* p = begin_event(t, EventKind::Mark)) {
      p = trace::put_varint(p, static_cast<uint64_t>(trace::MarkKind::MainStart));
      end_event(t, p);
    }
  }
  return g_real_main(argc, argv, envp);
}

}  // namespace
}  // namespace tasklens::recorder

using LibcStartMain = int (*)(tasklens::recorder::MainFn, int, char**, void (*)(), void (*)(),
                              void (*)(), void*);

// Interposed (the recorder is preloaded first) to run main() through main_with_recording.
TL_EXPORT int __libc_start_main(tasklens::recorder::MainFn main, int argc, char** argv,
                                void (*init)(), void (*fini)(), void (*rtld_fini)(),
                                void* stack_end) {
  auto real = reinterpret_cast<LibcStartMain>(dlsym(RTLD_NEXT, "__libc_start_main"));
  tasklens::recorder::g_real_main = main;
  return real(tasklens::recorder::g_config.enabled ? tasklens::recorder::main_with_recording : main,
              argc, argv, init, fini, rtld_fini, stack_end);
}

// The definitions of the weak references of include/tasklens/tasklens.h.
TL_EXPORT void tasklens_region_begin(const char* name) noexcept {
  tasklens::recorder::region_event(tasklens::trace::EventKind::RegionBegin, name);
}

TL_EXPORT void tasklens_region_end(const char* name) noexcept {
  tasklens::recorder::region_event(tasklens::trace::EventKind::RegionEnd, name);
}

TL_EXPORT ompt_start_tool_result_t* ompt_start_tool(unsigned int, const char* runtime_version) {
  using namespace tasklens::recorder;
  if (!g_config.enabled) return nullptr;
  static bool started = false;
  if (started) return nullptr;  // a second runtime in the process: keep the first
  started = true;
  g_runtime_version = runtime_version ? runtime_version : "";
  static ompt_start_tool_result_t result = {tool_initialize, tool_finalize, {0}};
  return &result;
}
