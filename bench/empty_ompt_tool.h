/* empty_ompt_tool.h: an OMPT tool that registers the very callbacks tasklens's recorder
 * registers (src/recorder/ompt_tool.cpp) and does almost nothing in them: it gives the tasks,
 * implicit tasks and parallel regions an id from a per-thread counter, as any tool that tells
 * tasks apart must, and returns. A program run under LLVM 16's libomp with it pays what the
 * runtime's OMPT support costs (the callbacks' dispatch, the runtime's own bookkeeping for them)
 * and nothing of tasklens. For two bench programs: empty_ompt_tool.c (the OMPT limit of
 * bench/overhead.sh) and ompt_dispatch.c (what calling the callbacks costs); each defines its own
 * ompt_start_tool returning empty_tool_initialize / empty_tool_finalize.
 */
#ifndef TASKLENS_OMPT_EMPTY_TOOL_H
#define TASKLENS_OMPT_EMPTY_TOOL_H

#include <omp-tools.h>
#include <stddef.h>
#include <stdint.h>

static __thread uint64_t t_next_id;
static __thread uint64_t t_thread_salt; /* keeps ids of different threads apart */
static uint64_t g_threads;              /* the number of threads seen, for the salt */

static uint64_t new_id(void) { return t_thread_salt | ++t_next_id; }

static void on_thread_begin(ompt_thread_t type, ompt_data_t* thread) {
  (void)type;
  t_thread_salt = __atomic_add_fetch(&g_threads, 1, __ATOMIC_RELAXED) << 40;
  if (thread) thread->value = t_thread_salt;
}
static void on_thread_end(ompt_data_t* thread) { (void)thread; }
static void on_parallel_begin(ompt_data_t* encountering, const ompt_frame_t* frame,
                              ompt_data_t* parallel, unsigned requested, int flags,
                              const void* codeptr) {
  (void)encountering, (void)frame, (void)requested, (void)flags, (void)codeptr;
  if (parallel) parallel->value = new_id();
}
static void on_parallel_end(ompt_data_t* parallel, ompt_data_t* encountering, int flags,
                            const void* codeptr) {
  (void)parallel, (void)encountering, (void)flags, (void)codeptr;
}
static void on_implicit_task(ompt_scope_endpoint_t endpoint, ompt_data_t* parallel,
                             ompt_data_t* task, unsigned actual, unsigned index, int flags) {
  (void)parallel, (void)actual, (void)index, (void)flags;
  if (endpoint == ompt_scope_begin && task) task->value = new_id();
}
static void on_task_create(ompt_data_t* encountering, const ompt_frame_t* frame,
                           ompt_data_t* new_task, int flags, int has_deps, const void* codeptr) {
  (void)encountering, (void)frame, (void)flags, (void)has_deps, (void)codeptr;
  if (new_task) new_task->value = new_id();
}
static void on_task_schedule(ompt_data_t* prior, ompt_task_status_t status, ompt_data_t* next) {
  (void)prior, (void)status, (void)next;
}
static void on_sync_region(ompt_sync_region_t kind, ompt_scope_endpoint_t endpoint,
                           ompt_data_t* parallel, ompt_data_t* task, const void* codeptr) {
  (void)kind, (void)endpoint, (void)parallel, (void)task, (void)codeptr;
}
static void on_work(ompt_work_t type, ompt_scope_endpoint_t endpoint, ompt_data_t* parallel,
                    ompt_data_t* task, uint64_t count, const void* codeptr) {
  (void)type, (void)endpoint, (void)parallel, (void)task, (void)count, (void)codeptr;
}
static void on_dispatch(ompt_data_t* parallel, ompt_data_t* task, ompt_dispatch_t kind,
                        ompt_data_t instance) {
  (void)parallel, (void)task, (void)kind, (void)instance;
}
static void on_dependences(ompt_data_t* task, const ompt_dependence_t* deps, int ndeps) {
  (void)task, (void)deps, (void)ndeps;
}
static void on_masked(ompt_scope_endpoint_t endpoint, ompt_data_t* parallel, ompt_data_t* task,
                      const void* codeptr) {
  (void)endpoint, (void)parallel, (void)task, (void)codeptr;
}
static void on_mutex_acquire(ompt_mutex_t kind, unsigned hint, unsigned impl,
                             ompt_wait_id_t wait_id, const void* codeptr) {
  (void)kind, (void)hint, (void)impl, (void)wait_id, (void)codeptr;
}
static void on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t wait_id, const void* codeptr) {
  (void)kind, (void)wait_id, (void)codeptr;
}
static void on_nest_lock(ompt_scope_endpoint_t endpoint, ompt_wait_id_t wait_id,
                         const void* codeptr) {
  (void)endpoint, (void)wait_id, (void)codeptr;
}

/* libomp's ompt_set_callback, kept so that the callbacks can be switched off and on again
 * (ompt_dispatch.c): libomp accepts it at any time, and a callback set to NULL is not called. */
static ompt_set_callback_t empty_tool_set;

/* Registers every callback (`on`), or sets them all to NULL. */
static void empty_tool_register(int on) {
#define REG(which, fn) empty_tool_set(which, on ? (ompt_callback_t)(fn) : (ompt_callback_t)0)
  REG(ompt_callback_thread_begin, on_thread_begin);
  REG(ompt_callback_thread_end, on_thread_end);
  REG(ompt_callback_parallel_begin, on_parallel_begin);
  REG(ompt_callback_parallel_end, on_parallel_end);
  REG(ompt_callback_implicit_task, on_implicit_task);
  REG(ompt_callback_task_create, on_task_create);
  REG(ompt_callback_task_schedule, on_task_schedule);
  REG(ompt_callback_sync_region, on_sync_region);
  REG(ompt_callback_sync_region_wait, on_sync_region);
  REG(ompt_callback_work, on_work);
  REG(ompt_callback_dependences, on_dependences);
  REG(ompt_callback_masked, on_masked);
  REG(ompt_callback_mutex_acquire, on_mutex_acquire);
  REG(ompt_callback_mutex_acquired, on_mutex_acquired);
  REG(ompt_callback_nest_lock, on_nest_lock);
  REG(ompt_callback_dispatch, on_dispatch);
#undef REG
}

static int empty_tool_initialize(ompt_function_lookup_t lookup, int device, ompt_data_t* data) {
  (void)device, (void)data;
  empty_tool_set = (ompt_set_callback_t)lookup("ompt_set_callback");
  if (!empty_tool_set) return 0;
  empty_tool_register(1);
  return 1;
}

static void empty_tool_finalize(ompt_data_t* data) { (void)data; }

#endif
