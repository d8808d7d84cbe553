// The OMPT tool: loaded into the profiled program (LD_PRELOAD by `tasklens record`), it turns
// OpenMP runtime events into compact per-thread event streams (see src/trace/format.hpp and the
// hot-path rules of recording.hpp).
#include <omp-tools.h>

#include "recorder/recording.hpp"

namespace tasklens::recorder {
namespace {

// LLVM 16 dispatch kinds (newer than the omp-tools.h we may compile against).
constexpr int kDispatchWsLoopChunk = 3;
constexpr int kDispatchTaskloopChunk = 4;
constexpr int kDispatchDistributeChunk = 5;
struct DispatchChunk {
  uint64_t start;
  uint64_t iterations;
};

TL_INLINE uint64_t id_of(ThreadState* t, ompt_data_t* d) {
  if (!d) return 0;
  if (__builtin_expect(d->value == 0, 0)) d->value = new_id(t);
  return d->value;
}

// ----------------------------------------------------------------------------- callbacks

void on_thread_begin(ompt_thread_t type, ompt_data_t*) {
  ThreadState* t = tls_state ? tls_state : thread_init(type);
  if (uint8_t* p = begin_event(t, EventKind::ThreadBegin)) {
    p = put_field(p, static_cast<uint64_t>(type));
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
    p = put_id(p, id_of(t, encountering_task));
    p = put_id(p, parallel ? parallel->value : 0);
    p = put_field(p, requested);
    p = put_field(p, static_cast<uint32_t>(flags));
    p = put_ptr(p, codeptr);
    end_event(t, p);
  }
}

void on_parallel_end(ompt_data_t* parallel, ompt_data_t* encountering_task, int flags,
                     const void* codeptr) {
  ThreadState* t = state();
  g_open_parallel.fetch_sub(1, std::memory_order_relaxed);
  if (uint8_t* p = begin_event(t, EventKind::ParallelEnd)) {
    p = put_id(p, id_of(t, parallel));
    p = put_id(p, id_of(t, encountering_task));
    p = put_field(p, static_cast<uint32_t>(flags));
    p = put_ptr(p, codeptr);
    end_event(t, p);
  }
}

void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t* parallel, ompt_data_t* task,
                      unsigned actual, unsigned index, int flags) {
  ThreadState* t = state();
  if (!t || t->dead) return;
  if (endpoint == ompt_scope_begin) {
    if (task) task->value = new_id(t);
    if ((flags & ompt_task_initial) && task && g_root_task == 0) {
      g_root_task = task->value;  // oneTBB's tasks spawned by main() are its children
      t->tbb_current = task->value;
    }
    enter_or_leave_team(t, true, actual);
    if (uint8_t* p = begin_event(t, EventKind::ImplicitBegin)) {
      p = put_id(p, id_of(t, parallel));
      p = put_id(p, task ? task->value : 0);
      p = put_field(p, actual);
      p = put_field(p, index);
      p = put_field(p, static_cast<uint32_t>(flags));
      end_event(t, p);
    }
  } else {
    enter_or_leave_team(t, false, 0);
    if (uint8_t* p = begin_event(t, EventKind::ImplicitEnd)) {
      p = put_id(p, id_of(t, task));
      p = put_field(p, index);
      p = put_field(p, static_cast<uint32_t>(flags));
      end_event(t, p);
    }
  }
}

// The frequent callbacks (a task's creation, its switches, taskwaits, loop chunks, mutexes)
// record through one body with two paths (recording.hpp's fast_path_ok): kFast when no rare
// case applies, the general path otherwise. The rare cases go out of line (the *_slow functions,
// through record_rare) so that the fast path calls nothing.
template <bool kFast>
TL_INLINE void task_create(ThreadState* t, ompt_data_t* encountering_task, ompt_data_t* new_task,
                           int flags, const void* codeptr) {
  uint64_t child = new_id(t);
  if (new_task) new_task->value = child;
  ++t->tasks;
  if (uint8_t* p = open_event<kFast>(t, EventKind::TaskCreate)) {
    const uint64_t parent = id_of(t, encountering_task);
    p = put_id(p, parent);
    p = put_id(p, child);
    p = put_field(p, static_cast<uint32_t>(flags));
    p = put_ptr(p, codeptr);
    close_event<kFast>(t, p);
    t->created_id = child;
    // (0 without an encountering task, which libomp always gives: a prior whose id is still 0
    // would then be written 0 rather than given one, a task the model does not know either way.)
    t->created_parent = parent;
    t->created_at_event = t->events;
  }
}

__attribute__((noinline)) void task_create_slow(ompt_data_t* encountering_task,
                                                ompt_data_t* new_task, int flags,
                                                const void* codeptr) {
  ThreadState* t = state();
  if (!t || t->dead) return;
  record_rare(t, [&](auto fast) {
    task_create<decltype(fast)::value>(t, encountering_task, new_task, flags, codeptr);
  });
}

void on_task_create(ompt_data_t* encountering_task, const ompt_frame_t*, ompt_data_t* new_task,
                    int flags, int, const void* codeptr) {
  ThreadState* t = tls_fast;
  if (__builtin_expect(!fast_path_ok(t), 0))
    return task_create_slow(encountering_task, new_task, flags, codeptr);
  task_create<true>(t, encountering_task, new_task, flags, codeptr);
}

template <bool kFast>
TL_INLINE void task_schedule(ThreadState* t, ompt_data_t* prior, ompt_task_status_t status,
                             ompt_data_t* next) {
  // A task run the moment it is created (every task of a one-thread team; in any team an
  // undeferred one, if(0) or final, or one the runtime could not queue): the switch follows the
  // creation with only runtime code in between (libomp calls task_create once the program has
  // filled the task in, then starts it), so it takes the creation's time: one clock read less,
  // 10-30 ns. A switch of another status (taskyield's) may follow program code.
  bool immediate = t && next && next->value == t->created_id && t->events == t->created_at_event &&
                   (status == ompt_task_switch || in_one_thread_team(t));
  // Then the writer knows its fields too (raw_events.hpp): the head alone.
  if (kFast && immediate && prior && prior->value == t->created_parent) {
    close_event<kFast>(t, put_raw(pos_of(t), kRawScheduleCreated | kSameTime |
                                                 (static_cast<uint64_t>(status) & 0xff) << 8));
    return;
  }
  if (uint8_t* p = open_event<kFast>(t, EventKind::TaskSchedule, immediate)) {
    p = put_id(p, id_of(t, prior));
    p = put_field(p, static_cast<uint32_t>(status));
    p = put_id(p, id_of(t, next));
    close_event<kFast>(t, p);
  }
}

__attribute__((noinline)) void task_schedule_slow(ompt_data_t* prior, ompt_task_status_t status,
                                                  ompt_data_t* next) {
  ThreadState* t = state();
  record_rare(t, [&](auto fast) { task_schedule<decltype(fast)::value>(t, prior, status, next); });
}

void on_task_schedule(ompt_data_t* prior, ompt_task_status_t status, ompt_data_t* next) {
  ThreadState* t = tls_fast;
  if (__builtin_expect(!fast_path_ok(t), 0)) return task_schedule_slow(prior, status, next);
  task_schedule<true>(t, prior, status, next);
}

template <bool kFast>
TL_INLINE void sync_region(ThreadState* t, ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
                           ompt_data_t* task, const void* codeptr) {
  bool begin = endpoint == ompt_scope_begin;
  // In a one-thread team a taskwait with no event inside had nothing to wait for: it returned
  // at once.
  const bool right_after_begin =
      t && !begin && kind == ompt_sync_region_taskwait && t->events == t->wait_at_event;
  bool empty_wait = right_after_begin && in_one_thread_team(t);
  // A taskwait's end right after its begin has the begin's fields (libomp passes the same task
  // and code address to both): the writer knows them (raw_events.hpp), the head alone is stored.
  if (kFast && right_after_begin) {
    close_event<kFast>(t, put_raw(pos_of(t), empty_wait ? kRawSyncEndAsBegun | kSameTime
                                                        : read_tsc() << 8 | kRawSyncEndAsBegun));
    return;
  }
  if (uint8_t* p =
          open_event<kFast>(t, begin ? EventKind::SyncBegin : EventKind::SyncEnd, empty_wait)) {
    p = put_field(p, static_cast<uint32_t>(kind));
    p = put_id(p, id_of(t, task));
    p = put_ptr(p, codeptr);
    close_event<kFast>(t, p);
    if (begin) t->wait_at_event = t->events;
  }
}

__attribute__((noinline)) void sync_region_slow(ompt_sync_region_t kind,
                                                ompt_scope_endpoint_t endpoint, ompt_data_t* task,
                                                const void* codeptr) {
  ThreadState* t = state();
  record_rare(
      t, [&](auto fast) { sync_region<decltype(fast)::value>(t, kind, endpoint, task, codeptr); });
}

void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t*,
                    ompt_data_t* task, const void* codeptr) {
  ThreadState* t = tls_fast;
  if (__builtin_expect(!fast_path_ok(t), 0)) return sync_region_slow(kind, endpoint, task, codeptr);
  sync_region<true>(t, kind, endpoint, task, codeptr);
}

// Only a taskgroup has work inside its sync region; for every other kind the whole region is a
// wait, so their wait events would add bytes and nothing else.
void on_sync_region_wait(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint, ompt_data_t*,
                         ompt_data_t* task, const void*) {
  if (kind != ompt_sync_region_taskgroup) return;
  ThreadState* t = state();
  EventKind ek = endpoint == ompt_scope_begin ? EventKind::SyncWaitBegin : EventKind::SyncWaitEnd;
  if (uint8_t* p = begin_event(t, ek)) {
    p = put_field(p, static_cast<uint32_t>(kind));
    p = put_id(p, id_of(t, task));
    end_event(t, p);
  }
}

void on_work(ompt_work_t type, ompt_scope_endpoint_t endpoint, ompt_data_t*, ompt_data_t* task,
             uint64_t count, const void* codeptr) {
  ThreadState* t = state();
  if (endpoint == ompt_scope_begin) {
    if (uint8_t* p = begin_event(t, EventKind::WorkBegin)) {
      p = put_field(p, static_cast<uint32_t>(type));
      p = put_id(p, id_of(t, task));
      p = put_field(p, count);
      p = put_ptr(p, codeptr);
      end_event(t, p);
    }
  } else if (uint8_t* p = begin_event(t, EventKind::WorkEnd)) {
    p = put_field(p, static_cast<uint32_t>(type));
    p = put_id(p, id_of(t, task));
    p = put_ptr(p, codeptr);
    end_event(t, p);
  }
}

// A loop's chunk (or a section, an iteration) given to the thread: one per chunk of a dynamic
// or guided loop, so it takes the fast path too.
template <bool kFast>
TL_INLINE void dispatch(ThreadState* t, ompt_data_t* task, ompt_dispatch_t kind,
                        ompt_data_t instance) {
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
  if (uint8_t* p = open_event<kFast>(t, EventKind::Dispatch)) {
    p = put_field(p, static_cast<uint32_t>(k));
    p = put_id(p, id_of(t, task));
    p = put_field(p, a);
    p = put_field(p, b);
    close_event<kFast>(t, p);
  }
}

__attribute__((noinline)) void dispatch_slow(ompt_data_t* task, ompt_dispatch_t kind,
                                             ompt_data_t instance) {
  ThreadState* t = state();
  record_rare(t, [&](auto fast) { dispatch<decltype(fast)::value>(t, task, kind, instance); });
}

void on_dispatch(ompt_data_t*, ompt_data_t* task, ompt_dispatch_t kind, ompt_data_t instance) {
  ThreadState* t = tls_fast;
  if (__builtin_expect(!fast_path_ok(t), 0)) return dispatch_slow(task, kind, instance);
  dispatch<true>(t, task, kind, instance);
}

void on_dependences(ompt_data_t* task, const ompt_dependence_t* deps, int ndeps) {
  ThreadState* t = state();
  if (!t || t->dead || ndeps <= 0) return;
  uint64_t id = id_of(t, task);
  // Written in groups of at most kDependenceChains, so that an event always fits
  // kMaxRawEventBytes and each goes out as one DependencesDelta.
  constexpr int kGroups = trace::kDependenceChains;
  for (int i = 0; i < ndeps; i += kGroups) {
    int n = ndeps - i < kGroups ? ndeps - i : kGroups;
    uint8_t* p = begin_event(t, EventKind::Dependences);
    if (!p) return;
    p = put_id(p, id);
    p = put_field(p, static_cast<uint64_t>(n));
    for (int j = 0; j < n; ++j) {
      p = put_field(p, reinterpret_cast<uint64_t>(deps[i + j].variable.ptr));
      p = put_field(p, static_cast<uint32_t>(deps[i + j].dependence_type));
    }
    end_event(t, p);
  }
}

void on_masked(ompt_scope_endpoint_t endpoint, ompt_data_t*, ompt_data_t* task,
               const void* codeptr) {
  ThreadState* t = state();
  EventKind ek = endpoint == ompt_scope_begin ? EventKind::MaskedBegin : EventKind::MaskedEnd;
  if (uint8_t* p = begin_event(t, ek)) {
    p = put_id(p, id_of(t, task));
    p = put_ptr(p, codeptr);
    end_event(t, p);
  }
}

// A thread spinning for a critical section or a lock is not doing the program's work: the
// model leaves the time between these two events out of the strand.
// (Two events per critical section or lock taken: the fast path too.)
template <bool kFast>
TL_INLINE void mutex_event(ThreadState* t, EventKind event, ompt_mutex_t kind) {
  if (uint8_t* p = open_event<kFast>(t, event)) {
    p = put_field(p, static_cast<uint32_t>(kind));
    close_event<kFast>(t, p);
  }
}

__attribute__((noinline)) void mutex_event_slow(EventKind event, ompt_mutex_t kind) {
  ThreadState* t = state();
  record_rare(t, [&](auto fast) { mutex_event<decltype(fast)::value>(t, event, kind); });
}

TL_INLINE void mutex_event(EventKind event, ompt_mutex_t kind) {
  ThreadState* t = tls_fast;
  if (__builtin_expect(!fast_path_ok(t), 0)) return mutex_event_slow(event, kind);
  mutex_event<true>(t, event, kind);
}

void on_mutex_acquire(ompt_mutex_t kind, unsigned, unsigned, ompt_wait_id_t, const void*) {
  mutex_event(EventKind::MutexWaitBegin, kind);
}

void on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t, const void*) {
  mutex_event(EventKind::MutexWaitEnd, kind);
}

// The end of an ordered region: the model needs it to tell an iteration's ordered part from the
// rest of its body. Other mutexes' releases are not recorded (their waits are all it needs).
void on_mutex_released(ompt_mutex_t kind, ompt_wait_id_t, const void*) {
  if (kind != ompt_mutex_ordered) return;
  ThreadState* t = state();
  if (uint8_t* p = begin_event(t, EventKind::MutexReleased)) {
    p = put_field(p, static_cast<uint32_t>(kind));
    end_event(t, p);
  }
}

// A nested lock the thread already owns: acquired without waiting (ends the wait too).
void on_nest_lock(ompt_scope_endpoint_t endpoint, ompt_wait_id_t, const void*) {
  if (endpoint == ompt_scope_begin) on_mutex_acquired(ompt_mutex_nest_lock, 0, nullptr);
}

int tool_initialize(ompt_function_lookup_t lookup, int, ompt_data_t*) {
  auto set_callback = reinterpret_cast<ompt_set_callback_t>(lookup("ompt_set_callback"));
  if (!set_callback) return 0;
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
  reg(ompt_callback_mutex_released, on_mutex_released);
  reg(ompt_callback_nest_lock, on_nest_lock);
  int dispatch = reg(ompt_callback_dispatch, on_dispatch);
  if (dispatch == ompt_set_always || dispatch == ompt_set_sometimes ||
      dispatch == ompt_set_sometimes_paired)
    g_runtime_flags |= trace::kRuntimeHasDispatch;

  // Callbacks only come once this returns, and the trace's head must know about dispatch.
  return start_trace() ? 1 : 0;
}

void tool_finalize(ompt_data_t*) { finish(trace::FinishReason::ToolFinalize); }

}  // namespace
}  // namespace tasklens::recorder

TL_EXPORT ompt_start_tool_result_t* ompt_start_tool(unsigned int, const char* runtime_version) {
  using namespace tasklens::recorder;
  if (!g_config.enabled) return nullptr;
  static bool started = false;
  if (started) return nullptr;  // a second runtime in the process: keep the first
  started = true;
  std::string version = runtime_version ? runtime_version : "";
  if (!g_runtime_version.empty()) version += "; " + g_runtime_version;  // oneTBB's, if linked
  g_runtime_version = version;
  static ompt_start_tool_result_t result = {tool_initialize, tool_finalize, {0}};
  return &result;
}
