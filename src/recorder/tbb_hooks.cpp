// oneTBB programs, unmodified: the recorder (preloaded) defines oneTBB's exported spawn / wait
// entry points, so the calls that TBB's header code makes from the program land here first;
// each records an event and calls the real function (found with RTLD_NEXT).
//
// Spawns and waits are visible that way, but a task's execution is not: the scheduler calls the
// task's virtual execute() from inside libtbb. So a spawned task's vtable pointer is swapped for
// a "shadow" vtable, a copy whose execute/cancel slots are ours. Our execute restores the task's
// real vtable pointer first (nothing else of the task is touched), records the start, runs the
// real execute, and records the end. Each shadow also carries the task's id: it is a 64-byte
// block from a per-thread free list, so the hot path allocates nothing and takes no lock.
//
// The wrappers of include/tasklens/tbb.h add what return addresses cannot give: the exact call
// site of each construct (tasklens_tbb_site) and each call of an algorithm's body on a subrange
// (tasklens_tbb_chunk_begin/end), so that a parallel_for's parallelism is its logical one.
//
// Flow graph nodes of limited concurrency (tbb_flow_nodes.cpp) and parallel_pipeline's serial
// filters (tbb_pipeline.cpp) are apart; tbb_internal.hpp holds what the three share.
#include "recorder/tbb_hooks.hpp"

#include <dlfcn.h>
#include <sys/mman.h>

#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <typeinfo>
#include <unordered_map>
#include <vector>

#include "recorder/recording.hpp"
#include "recorder/tbb_internal.hpp"
#include "trace/reader.hpp"

namespace tasklens::recorder {

bool g_tbb_on = false;  // (tbb_internal.hpp)

// A task's shadow vtable and identity. The task's vtable pointer points at `slots`, so the two
// words before it are where the ABI expects offset-to-top and the type_info.
struct TaskShadow {
  const void* const* real_vptr;
  union {
    uint64_t id;
    TaskShadow* next;  // while on a free list
  };
  const void* offset_to_top;
  const void* type_info;
  const void* slots[4];  // d1::task's virtual functions: ~task (two), execute, cancel
};
static_assert(sizeof(TaskShadow) == 64);
static_assert(offsetof(TaskShadow, slots) == 32);

namespace {

constexpr int kExecuteSlot = 2, kCancelSlot = 3;
constexpr uint64_t kRootFlag =
    0x80;  // TbbSpawn kind: spawned by execute_and_wait (a new construct)
// TbbSpawn kind: returned by the running task for the scheduler to run next (task bypass), so it
// belongs to that task's group (the model joins it where that group is waited for).
constexpr uint64_t kBypassFlag = 0x40;

using SpawnFn = void (*)(d1::task&, d1::task_group_context&);
using SpawnSlotFn = void (*)(d1::task&, d1::task_group_context&, d1::slot_id);
using ExecuteAndWaitFn = void (*)(d1::task&, d1::task_group_context&, d1::wait_context&,
                                  d1::task_group_context&);
using WaitFn = void (*)(d1::wait_context&, d1::task_group_context&);
using ArenaExecuteFn = void (*)(d1::task_arena_base&, d1::delegate_base&);
using EnqueueFn = void (*)(d1::task&, d1::task_arena_base*);
using EnqueueCtxFn = void (*)(d1::task&, d1::task_group_context&, d1::task_arena_base*);
using SubmitFn = void (*)(d1::task&, d1::task_group_context&, tbb::detail::r1::arena*,
                          std::uintptr_t);
using InitializeFn = void (*)(d1::task_group_context&);
using AllocateFn = void* (*)(d1::small_object_pool*&, std::size_t);
using AllocateMemoryFn = void* (*)(std::size_t);
using ArenaInitializeFn = void (*)(d1::task_arena_base&);

struct RealEntryPoints {
  SpawnFn spawn = nullptr;
  SpawnSlotFn spawn_slot = nullptr;
  ExecuteAndWaitFn execute_and_wait = nullptr;
  WaitFn wait = nullptr;
  ArenaExecuteFn arena_execute = nullptr;
  EnqueueFn enqueue = nullptr;
  EnqueueCtxFn enqueue_ctx = nullptr;
  SubmitFn submit = nullptr;
  PipelineFn parallel_pipeline = nullptr;
  InitializeFn initialize = nullptr;
  AllocateFn allocate = nullptr;
  AllocateMemoryFn allocate_memory = nullptr;
  ArenaInitializeFn arena_initialize = nullptr;
};
RealEntryPoints g_real;
// oneTBB starts its scheduler (thread data, market, arena, worker threads) lazily, inside the
// first call that needs it: which one depends on the program (a context's initialize, the first
// task's allocation, the first spawn). Its memory allocator starts the same way, loading
// libtbbmalloc in the first allocate_memory (a millisecond on some machines: a pipeline's first
// filter, a concurrent container's first element). So the process's first call of each of these
// entry points is bracketed by RuntimeInit marks, ended when the call returns or its first task
// starts.
enum FirstCallOf {
  kFirstInitialize,
  kFirstAllocate,
  kFirstSpawn,
  kFirstAllocateMemory,
  kFirstCallKinds
};
std::atomic<bool> g_first_done[kFirstCallKinds];

template <class Fn>
void resolve(Fn& fn, const char* mangled) {
  if (!fn) fn = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, mangled));
}

void resolve_all() {
  resolve(g_real.spawn, "_ZN3tbb6detail2r15spawnERNS0_2d14taskERNS2_18task_group_contextE");
  resolve(g_real.spawn_slot, "_ZN3tbb6detail2r15spawnERNS0_2d14taskERNS2_18task_group_contextEt");
  resolve(g_real.execute_and_wait,
          "_ZN3tbb6detail2r116execute_and_waitERNS0_2d14taskERNS2_18task_group_contextERNS2_12wait_"
          "contextES6_");
  resolve(g_real.wait, "_ZN3tbb6detail2r14waitERNS0_2d112wait_contextERNS2_18task_group_contextE");
  resolve(g_real.arena_execute,
          "_ZN3tbb6detail2r17executeERNS0_2d115task_arena_baseERNS2_13delegate_baseE");
  resolve(g_real.enqueue, "_ZN3tbb6detail2r17enqueueERNS0_2d14taskEPNS2_15task_arena_baseE");
  resolve(g_real.initialize, "_ZN3tbb6detail2r110initializeERNS0_2d118task_group_contextE");
  resolve(g_real.allocate, "_ZN3tbb6detail2r18allocateERPNS0_2d117small_object_poolEm");
  resolve(g_real.allocate_memory, "_ZN3tbb6detail2r115allocate_memoryEm");
  resolve(g_real.arena_initialize, "_ZN3tbb6detail2r110initializeERNS0_2d115task_arena_baseE");
  resolve(g_real.enqueue_ctx,
          "_ZN3tbb6detail2r17enqueueERNS0_2d14taskERNS2_18task_group_contextEPNS2_15task_arena_"
          "baseE");
  resolve(g_real.submit,
          "_ZN3tbb6detail2r16submitERNS0_2d14taskERNS2_18task_group_contextEPNS1_5arenaEm");
  resolve(g_real.parallel_pipeline,
          "_ZN3tbb6detail2r117parallel_pipelineERNS0_2d118task_group_contextEmRKNS2_11filter_"
          "nodeE");
}

// The real function, resolved now if the program's TBB was not known before main() (it calls
// us, so it is loaded). Null only if the process has no oneTBB at all, which cannot call us.
template <class Fn>
Fn real(Fn& fn) {
  if (__builtin_expect(fn == nullptr, 0)) resolve_all();
  return fn;
}

// ------------------------------------------------------------------------- thread state

TL_INLINE void put_mark(ThreadState* t, trace::MarkKind mark) {
  if (uint8_t* p = begin_event(t, EventKind::Mark)) {
    p = put_field(p, static_cast<uint64_t>(mark));
    end_event(t, p);
  }
}

__attribute__((noinline)) void start_runtime_init(ThreadState* t, FirstCallOf which) {
  if (g_first_done[which].exchange(true) || !recording(t) || t->tbb_in_init) return;
  t->tbb_in_init = true;
  put_mark(t, trace::MarkKind::RuntimeInitBegin);
}

// Before a call into oneTBB: the first call of the process to this entry point may start the
// scheduler.
TL_INLINE void before_first_call(ThreadState* t, FirstCallOf which) {
  if (__builtin_expect(!g_first_done[which].load(std::memory_order_relaxed), 0))
    start_runtime_init(t, which);
}

// After that call returned, or when its first task starts on this thread.
TL_INLINE void end_runtime_init(ThreadState* t) {
  if (__builtin_expect(t->tbb_in_init, 0)) {
    t->tbb_in_init = false;
    put_mark(t, trace::MarkKind::RuntimeInitEnd);
  }
}

// A call into oneTBB that may be the process's first of its kind (`which`): bracketed as the
// runtime's start-up if it is, ended when the call returns (or when its first task starts).
// The first call that hands oneTBB work to run (a spawn, an enqueue, a submit) wakes its worker
// threads, launching them the first time: it is bracketed around the real call, not in
// on_spawn, which also sees tasks no call hands over (an algorithm's root in execute_and_wait, a
// bypassed task): bracketing those left the first real spawn's wake-up in the program's work.
struct FirstCall {
  ThreadState* t;
  FirstCall(ThreadState* state, FirstCallOf which) : t(state) { before_first_call(t, which); }
  ~FirstCall() {
    if (t) end_runtime_init(t);
  }
  FirstCall(const FirstCall&) = delete;
  FirstCall& operator=(const FirstCall&) = delete;
};

// ------------------------------------------------------------------------- shadow blocks

// Shadows freed by one thread may have been allocated by another (a task spawned here, run
// there): each thread keeps what it frees and hands surplus batches to a global pool, which
// threads that run dry take from before mapping new memory. Never unmapped: a task spawned
// during the recording may run after it.
constexpr uint32_t kBatch = 256;
constexpr size_t kBlockShadows = 4096;
std::mutex g_pool_mutex;
std::vector<TaskShadow*>* g_pool = nullptr;  // batches of kBatch linked shadows

__attribute__((noinline)) TaskShadow* refill(ThreadState* t) {
  {
    std::lock_guard<std::mutex> lock(g_pool_mutex);
    if (g_pool && !g_pool->empty()) {
      t->shadow_free = g_pool->back();
      t->shadow_free_count = kBatch;
      g_pool->pop_back();
      return t->shadow_free;
    }
  }
  // Mapping and linking a block touches its 64 pages on the program's thread: the recorder's
  // time, taken out of the program's work (a page fault can take tens of microseconds on a
  // virtual machine: a millisecond in all, in the strand of the program's first spawn).
  const uint64_t from = read_tsc();
  void* block = mmap(nullptr, kBlockShadows * sizeof(TaskShadow), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (block == MAP_FAILED) return nullptr;
  auto* s = static_cast<TaskShadow*>(block);
  for (size_t i = 0; i + 1 < kBlockShadows; ++i) s[i].next = &s[i + 1];
  s[kBlockShadows - 1].next = nullptr;
  t->shadow_free = s;
  t->shadow_free_count = kBlockShadows;
  note_own_time(t, read_tsc() - from);
  return s;
}

TL_INLINE TaskShadow* shadow_alloc(ThreadState* t) {
  TaskShadow* s = t->shadow_free;
  if (__builtin_expect(s == nullptr, 0) && !(s = refill(t))) return nullptr;
  t->shadow_free = s->next;
  --t->shadow_free_count;
  return s;
}

__attribute__((noinline)) void donate(ThreadState* t) {
  TaskShadow* head = t->shadow_free;
  TaskShadow* last = head;
  for (uint32_t i = 1; i < kBatch; ++i) last = last->next;
  t->shadow_free = last->next;
  last->next = nullptr;
  t->shadow_free_count -= kBatch;
  try {
    std::lock_guard<std::mutex> lock(g_pool_mutex);
    if (!g_pool) g_pool = new std::vector<TaskShadow*>();
    g_pool->push_back(head);
  } catch (...) {  // out of memory: keep the batch
    last->next = t->shadow_free;
    t->shadow_free = head;
    t->shadow_free_count += kBatch;
  }
}

TL_INLINE void shadow_free(ThreadState* t, TaskShadow* s) {
  s->next = t->shadow_free;
  t->shadow_free = s;
  if (__builtin_expect(++t->shadow_free_count >= 4 * kBatch, 0)) donate(t);
}

// ------------------------------------------------------------------------- events

// A site announced with tasklens_tbb_site_once (kSiteOnce) names one call.
TL_INLINE void take_site_once(ThreadState* t) {
  if (t->tbb_site_kind & kSiteOnce) {
    t->tbb_site = 0;
    t->tbb_site_kind = 0;
  }
}

// The thread's current task is the one of its innermost recorded run: the trace's reader knows
// it, so events can leave it out.
TL_INLINE bool in_run(const ThreadState* t) {
  return t->tbb_run_top != 0 && t->tbb_current == t->tbb_run_top;
}

TL_INLINE void put_wait_begin(ThreadState* t, const void* group, const void* code) {
  const bool in = in_run(t);
  if (uint8_t* p = begin_event(t, in ? EventKind::TbbWaitBeginIn : EventKind::TbbWaitBegin)) {
    if (!in) p = put_id(p, t->tbb_current);
    p = put_addr(p, group);
    p = put_ptr(p, code);
    end_event(t, p);
  }
}

// (finish() reads it from another thread.)
TL_INLINE void set_run_top(ThreadState* t, uint64_t task) {
  __atomic_store_n(&t->tbb_run_top, task, __ATOMIC_RELAXED);
}

// Running a task on this thread: the thread's current task, and the site a wrapper announced
// (which belongs to the code around the task, not to the task), are set aside meanwhile.
struct Running {
  ThreadState* t;
  uint64_t id, prior, site, run_top;
  uint32_t site_kind;
  uint64_t end_status;
  Running(ThreadState* state, uint64_t task, uint64_t status)
      : t(state),
        id(task),
        prior(state->tbb_current),
        site(state->tbb_site),
        run_top(state->tbb_run_top),
        site_kind(state->tbb_site_kind),
        end_status(status) {
    end_runtime_init(t);
    const bool in = in_run(t);
    uint64_t top = 0;  // a run the trace does not hold cannot be left out of events
    if (uint8_t* p = begin_event(t, in ? EventKind::TbbRunBeginIn : EventKind::TbbRunBegin)) {
      if (!in) p = put_id(p, prior);
      p = put_id(p, id);
      end_event(t, p);
      top = id;
    }
    t->tbb_current = id;
    set_run_top(t, top);
    t->tbb_site = 0;
  }
  // Also when the task throws: the scheduler catches it further up. A task_group's task has
  // released its group (function_task::finalize, inside execute) before this: the group's wait
  // may return, and the program end, before the thread gets here (preempted in between, say).
  // Its end is then never written; finish() notes the run as open (OpenAtEnd).
  ~Running() {
    if (uint8_t* p = begin_event(t, EventKind::TbbRunEnd)) {  // of the innermost run
      p = put_field(p, end_status);
      end_event(t, p);
    }
    t->tbb_current = prior;
    set_run_top(t, run_top);
    t->tbb_site = site;
    t->tbb_site_kind = site_kind;
  }
};

using ExecuteSlot = d1::task* (*)(d1::task*, d1::execution_data&);

TL_INLINE TaskShadow* shadow_of(d1::task* task) {
  auto* vptr = *reinterpret_cast<const void* const**>(task);
  return reinterpret_cast<TaskShadow*>(reinterpret_cast<uintptr_t>(vptr) -
                                       offsetof(TaskShadow, slots));
}

uint64_t on_spawn(d1::task& task, const void* group, const void* ra, uint64_t flags);

template <int Slot>
d1::task* run_shadowed(d1::task* task, d1::execution_data& ed) {
  TaskShadow* s = shadow_of(task);
  const void* const* vptr = s->real_vptr;
  uint64_t id = s->id;
  *reinterpret_cast<const void* const**>(task) = vptr;  // the task is itself again
  auto fn = reinterpret_cast<ExecuteSlot>(const_cast<void*>(vptr[Slot]));
  ThreadState* t = tbb_state();
  if (!t) return fn(task, ed);
  shadow_free(t, s);
  Running running(t, id,
                  Slot == kExecuteSlot ? trace::kTaskStatusComplete : trace::kTaskStatusCancel);
  d1::task* next = fn(task, ed);
  // Task bypass: the scheduler runs the returned task next, without a spawn (task_group's
  // deferred task_handles, flow graphs: a node's body returns its successor's task). Seen as
  // spawned by this task, in this task's group (kBypassFlag): the wait that joins this task's
  // group joins it too.
  if (next) on_spawn(*next, nullptr, nullptr, kBypassFlag);
  return next;
}

d1::task* shadow_execute(d1::task* task, d1::execution_data& ed) {
  return run_shadowed<kExecuteSlot>(task, ed);
}
d1::task* shadow_cancel(d1::task* task, d1::execution_data& ed) {
  return run_shadowed<kCancelSlot>(task, ed);
}

// Records the spawn of `task` into `group` and shadows it; returns its id (0: not recorded).
inline __attribute__((always_inline)) uint64_t on_spawn(d1::task& task, const void* group,
                                                        const void* ra, uint64_t flags) {
  ThreadState* t = tbb_state();
  if (!recording(t)) return 0;
  const uint64_t site = t->tbb_site;
  const auto site_kind = static_cast<trace::TbbKind>(t->tbb_site_kind & kSiteKindMask);
  take_site_once(t);
  auto* vptr = *reinterpret_cast<const void* const**>(&task);
  if (vptr[kExecuteSlot] == reinterpret_cast<const void*>(&shadow_execute)) return 0;
  uint8_t kind = classify(vptr);
  const bool node_body = kind & kNodeBodyClass;
  kind &= ~kNodeBodyClass;
  TaskShadow* s = shadow_alloc(t);
  if (!s) return 0;
  uint64_t id = new_id(t);
  s->real_vptr = vptr;
  s->id = id;
  s->offset_to_top = vptr[-2];
  s->type_info = vptr[-1];
  s->slots[0] = vptr[0];
  s->slots[1] = vptr[1];
  s->slots[kExecuteSlot] = reinterpret_cast<const void*>(&shadow_execute);
  s->slots[kCancelSlot] = reinterpret_cast<const void*>(&shadow_cancel);
  *reinterpret_cast<const void* const**>(&task) = s->slots;
  const void* code = ra;
  if (site) {
    code = reinterpret_cast<const void*>(site);
    if (site_kind != trace::TbbKind::Unknown && site_kind != trace::TbbKind::Wait)
      kind = static_cast<uint8_t>(site_kind);
  }
  ++t->tasks;
  if (__builtin_expect(node_body, 0)) put_node_body(t, task, id);
  const bool in = in_run(t);
  if (uint8_t* p = begin_event(t, in ? EventKind::TbbSpawnIn : EventKind::TbbSpawn)) {
    if (!in) p = put_id(p, t->tbb_current);
    p = put_id(p, id);
    p = put_addr(p, group);
    p = put_field(p, kind | flags);
    p = put_ptr(p, code);
    end_event(t, p);
  }
  return id;
}

// A wait: the waiting task's strand stops at begin and resumes at end, also when the wait
// rethrows a task's exception.
struct Waiting {
  ThreadState* t;
  const void* group;
  const void* code;
  Waiting(ThreadState* state, const void* g, const void* ra)
      : t(recording(state) ? state : nullptr), group(g), code(ra) {
    if (!t) return;
    if (t->tbb_site) {
      code = reinterpret_cast<const void*>(t->tbb_site);
      take_site_once(t);
    }
    put_wait_begin(t, group, code);
  }
  ~Waiting() {  // ends the thread's innermost open wait: this one
    if (!t) return;
    if (uint8_t* p = begin_event(t, EventKind::TbbWaitDone)) end_event(t, p);
  }
};

// task_arena::execute's function, run as a task of its own: it may run on another thread (an
// arena's worker) when this one cannot join the arena.
class TracedDelegate : public d1::delegate_base {
 public:
  TracedDelegate(d1::delegate_base& inner, uint64_t id) : inner_(inner), id_(id) {}
  bool operator()() const override {
    ThreadState* t = tbb_state();
    if (!t) return inner_();
    Running running(t, id_, trace::kTaskStatusComplete);
    return inner_();
  }

 private:
  d1::delegate_base& inner_;
  uint64_t id_;
};

// ------------------------------------------------------------------------- wrapper sites

// Call sites announced by the wrappers, interned into synthetic code addresses (SiteNames
// records). Keys are the pointers of __builtin_FILE()/__builtin_FUNCTION() literals plus the
// line; the table behind the per-thread cache compares contents.
struct SiteKey {
  std::string file, function;
  unsigned line;
  bool operator==(const SiteKey& o) const {
    return line == o.line && file == o.file && function == o.function;
  }
};
struct SiteKeyHash {
  size_t operator()(const SiteKey& k) const {
    return std::hash<std::string>()(k.file) * 31 + std::hash<std::string>()(k.function) + k.line;
  }
};
std::mutex g_sites_mutex;
std::unordered_map<SiteKey, uint64_t, SiteKeyHash>* g_sites = nullptr;

struct SiteCacheSlot {
  const char* file = nullptr;
  const char* function = nullptr;
  unsigned line = 0;
  uint64_t address = 0;
};
constexpr unsigned kSiteSlots = 64;
__thread SiteCacheSlot* tls_sites __attribute__((tls_model("initial-exec"))) = nullptr;

__attribute__((noinline)) uint64_t intern_site(const char* file, unsigned line,
                                               const char* function) {
  try {
    SiteKey key{file ? file : "", function ? function : "", line};
    std::lock_guard<std::mutex> lock(g_sites_mutex);
    if (!g_sites) g_sites = new std::unordered_map<SiteKey, uint64_t, SiteKeyHash>();
    auto it = g_sites->find(key);
    if (it != g_sites->end()) return it->second;
    uint64_t address = trace::kSyntheticSite | (g_sites->size() + 1);
    // The record reaches the file before any event that uses the address (as region names).
    uint32_t head[1] = {1};
    uint32_t sizes[3] = {line, static_cast<uint32_t>(key.file.size()),
                         static_cast<uint32_t>(key.function.size())};
    std::vector<uint8_t> payload(reinterpret_cast<uint8_t*>(head),
                                 reinterpret_cast<uint8_t*>(head) + sizeof head);
    payload.insert(payload.end(), reinterpret_cast<uint8_t*>(&address),
                   reinterpret_cast<uint8_t*>(&address) + 8);
    payload.insert(payload.end(), reinterpret_cast<uint8_t*>(sizes),
                   reinterpret_cast<uint8_t*>(sizes) + sizeof sizes);
    payload.insert(payload.end(), key.file.begin(), key.file.end());
    payload.insert(payload.end(), key.function.begin(), key.function.end());
    std::vector<uint8_t> rec;
    trace::append_record(rec, trace::RecordType::SiteNames, payload.data(), payload.size());
    g_sites->emplace(std::move(key), address);
    writer_append(rec.data(), rec.size());
    return address;
  } catch (...) {
    return 0;  // out of memory: the construct keeps its return address
  }
}

TL_INLINE uint64_t site_address(const char* file, unsigned line, const char* function) {
  SiteCacheSlot* cache = tls_sites;
  if (__builtin_expect(cache == nullptr, 0)) {
    cache = new (std::nothrow) SiteCacheSlot[kSiteSlots];
    if (!cache) return intern_site(file, line, function);
    tls_sites = cache;
  }
  uint64_t h =
      (reinterpret_cast<uintptr_t>(file) + line * 0x9e3779b97f4a7c15ull) * 0x9e3779b97f4a7c15ull;
  SiteCacheSlot& s = cache[h >> 58];
  if (s.file == file && s.line == line && s.function == function && s.address) return s.address;
  uint64_t address = intern_site(file, line, function);
  s = SiteCacheSlot{file, function, line, address};
  return address;
}

// The site the thread's next oneTBB calls report (tasklens_tbb_site and _once).
TL_INLINE void announce_site(const char* file, unsigned line, const char* function, unsigned kind,
                             bool once) {
  ThreadState* t = tbb_state();
  if (!recording(t)) return;
  t->tbb_site = site_address(file, line, function);
  t->tbb_site_kind = t->tbb_site ? (kind & kSiteKindMask) | (once ? kSiteOnce : 0) : 0;
}

}  // namespace

PipelineFn real_parallel_pipeline() { return real(g_real.parallel_pipeline); }

void tbb_prepare(bool old_abi) {
  std::string name;
  uint32_t flags = trace::kRuntimeTbbUnsupported;
  if (old_abi) {
    name = "TBB 2017-2020 (libtbb.so.2)";
  } else {
    using InterfaceFn = int (*)();
    using VersionFn = const char* (*)();
    auto iv = reinterpret_cast<InterfaceFn>(dlsym(RTLD_DEFAULT, "TBB_runtime_interface_version"));
    auto rv = reinterpret_cast<VersionFn>(dlsym(RTLD_DEFAULT, "TBB_runtime_version"));
    int interface = iv ? iv() : 0;
    name = std::string("oneTBB ") + (rv ? rv() : "(unknown version)") + " (interface " +
           std::to_string(interface) + ")";
    resolve_all();
    bool complete = g_real.spawn && g_real.spawn_slot && g_real.execute_and_wait && g_real.wait &&
                    g_real.arena_execute && g_real.enqueue && g_real.enqueue_ctx && g_real.submit &&
                    g_real.parallel_pipeline && g_real.initialize && g_real.allocate;
    if (interface / 1000 == TBB_INTERFACE_VERSION_MAJOR && complete) {
      flags = trace::kRuntimeTbb;
      g_tbb_on = true;
    }
  }
  g_runtime_flags |= flags;
  g_runtime_version = g_runtime_version.empty() ? name : g_runtime_version + "; " + name;
}

}  // namespace tasklens::recorder

// ----------------------------------------------------------------------------- interposed

using tasklens::recorder::end_runtime_init;
using tasklens::recorder::FirstCall;
using tasklens::recorder::g_real;
using tasklens::recorder::kFirstSpawn;
using tasklens::recorder::kRootFlag;
using tasklens::recorder::on_spawn;
using tasklens::recorder::real;
using tasklens::recorder::tbb_state;
using tasklens::recorder::ThreadState;
using tasklens::recorder::tls_state;
using tasklens::recorder::Waiting;

namespace tbb::detail::r1 {

void spawn(d1::task& t, d1::task_group_context& ctx) {
  on_spawn(t, &ctx, __builtin_return_address(0), 0);
  FirstCall first(tls_state, kFirstSpawn);
  real(g_real.spawn)(t, ctx);
}

void spawn(d1::task& t, d1::task_group_context& ctx, d1::slot_id id) {
  on_spawn(t, &ctx, __builtin_return_address(0), 0);
  FirstCall first(tls_state, kFirstSpawn);
  real(g_real.spawn_slot)(t, ctx, id);
}

void execute_and_wait(d1::task& t, d1::task_group_context& t_ctx, d1::wait_context& wait_ctx,
                      d1::task_group_context& w_ctx) {
  const void* ra = __builtin_return_address(0);
  // A site announced for this call (a wrapper's, parallel_pipeline's) names its wait too, which
  // a once-site would no longer be there for after the root's spawn: the code after the wait
  // then starts at the user's line, not at the return address inside libtbb.
  ThreadState* s = tbb_state();
  const void* code = s && s->tbb_site ? reinterpret_cast<const void*>(s->tbb_site) : ra;
  on_spawn(t, &t_ctx, ra, kRootFlag);
  Waiting waiting(s, &w_ctx, code);
  real(g_real.execute_and_wait)(t, t_ctx, wait_ctx, w_ctx);
}

void wait(d1::wait_context& wait_ctx, d1::task_group_context& ctx) {
  Waiting waiting(tbb_state(), &ctx, __builtin_return_address(0));
  real(g_real.wait)(wait_ctx, ctx);
}

void execute(d1::task_arena_base& arena, d1::delegate_base& d) {
  using namespace tasklens::recorder;
  namespace trace = tasklens::trace;
  const void* ra = __builtin_return_address(0);
  ThreadState* t = tbb_state();
  if (!recording(t)) return real(g_real.arena_execute)(arena, d);
  uint64_t id = new_id(t);
  ++t->tasks;
  const void* code = t->tbb_site ? reinterpret_cast<const void*>(t->tbb_site) : ra;
  if (uint8_t* p = begin_event(t, EventKind::TbbSpawn)) {
    p = put_id(p, t->tbb_current);
    p = put_id(p, id);
    p = put_addr(p, &d);
    p = put_field(p, static_cast<uint64_t>(trace::TbbKind::ArenaExecute) | kRootFlag);
    p = put_ptr(p, code);
    end_event(t, p);
  }
  TracedDelegate traced(d, id);
  Waiting waiting(t, &d, ra);
  real(g_real.arena_execute)(arena, traced);
}

// Every algorithm and task_group makes a task_group_context first, and the first one the
// process makes starts oneTBB's scheduler (thread data, market, arena).
void initialize(d1::task_group_context& ctx) {
  using namespace tasklens::recorder;
  if (__builtin_expect(g_first_done[kFirstInitialize].load(std::memory_order_relaxed), 1))
    return real(g_real.initialize)(ctx);
  FirstCall first(tbb_state(), kFirstInitialize);
  real(g_real.initialize)(ctx);
}

// A task_arena's initialize (explicit, or its first execute's): the process's first one may
// start the scheduler, and every one sets an arena up.
void initialize(d1::task_arena_base& arena) {
  using namespace tasklens::recorder;
  // Every arena's start (its slots, and its threads' for the first one) is the runtime's.
  ThreadState* t = tbb_state();
  if (recording(t) && !t->tbb_in_init) {
    t->tbb_in_init = true;
    put_mark(t, tasklens::trace::MarkKind::RuntimeInitBegin);
  }
  real(g_real.arena_initialize)(arena);
  if (t) end_runtime_init(t);
}

// Allocating a task outside any task (task_group::run, an algorithm's first task): the first
// one makes the thread's data and may start the scheduler.
void* allocate(d1::small_object_pool*& pool, std::size_t bytes) {
  using namespace tasklens::recorder;
  if (__builtin_expect(g_first_done[kFirstAllocate].load(std::memory_order_relaxed), 1))
    return real(g_real.allocate)(pool, bytes);
  FirstCall first(tbb_state(), kFirstAllocate);
  void* p = real(g_real.allocate)(pool, bytes);
  return p;
}

// oneTBB's memory allocator (a pipeline's filters and tokens, tbb_allocator, the concurrent
// containers): its first call loads and starts libtbbmalloc.
void* allocate_memory(std::size_t size) {
  using namespace tasklens::recorder;
  if (__builtin_expect(g_first_done[kFirstAllocateMemory].load(std::memory_order_relaxed), 1))
    return real(g_real.allocate_memory)(size);
  FirstCall first(tbb_state(), kFirstAllocateMemory);
  void* p = real(g_real.allocate_memory)(size);
  return p;
}

void enqueue(d1::task& t, d1::task_arena_base* arena) {
  on_spawn(t, nullptr, __builtin_return_address(0), 0);
  FirstCall first(tls_state, kFirstSpawn);
  real(g_real.enqueue)(t, arena);
}

void enqueue(d1::task& t, d1::task_group_context& ctx, d1::task_arena_base* arena) {
  on_spawn(t, &ctx, __builtin_return_address(0), 0);
  FirstCall first(tls_state, kFirstSpawn);
  real(g_real.enqueue_ctx)(t, ctx, arena);
}

// A flow graph's tasks: every node's body runs in a task that spawn_in_graph_arena and
// enqueue_in_graph_arena hand to the graph's arena through submit (without this hook a flow
// graph's work was not recorded at all). A node's task made while another node's task runs (a
// try_put from its body) is that task's spawn, which is the message's edge; the graph's
// wait_for_all is a wait in its context, which joins them.
void submit(d1::task& t, d1::task_group_context& ctx, arena* a, std::uintptr_t as_critical) {
  on_spawn(t, &ctx, __builtin_return_address(0), 0);
  FirstCall first(tls_state, kFirstSpawn);
  real(g_real.submit)(t, ctx, a, as_critical);
}

// (parallel_pipeline: tbb_pipeline.cpp)

}  // namespace tbb::detail::r1

// ----------------------------------------------------------------------------- wrappers

// The definitions of the weak references of include/tasklens/tbb.h.
TL_EXPORT void tasklens_tbb_site(const char* file, unsigned line, const char* function,
                                 unsigned kind) noexcept {
  tasklens::recorder::announce_site(file, line, function, kind, false);
}

// A site for the thread's next oneTBB spawn or wait only, which takes it (take_site_once): the
// wrappers of task_group::run and wait then call tasklens_tbb_site_clear only if oneTBB throws.
TL_EXPORT void tasklens_tbb_site_once(const char* file, unsigned line, const char* function,
                                      unsigned kind) noexcept {
  tasklens::recorder::announce_site(file, line, function, kind, true);
}

TL_EXPORT void tasklens_tbb_site_clear() noexcept {
  using namespace tasklens::recorder;
  if (ThreadState* t = tls_state) {
    t->tbb_site = 0;
    t->tbb_site_kind = 0;
  }
}

TL_EXPORT void tasklens_tbb_chunk_begin() noexcept {
  using namespace tasklens::recorder;
  ThreadState* t = tls_state;
  if (!recording(t)) return;
  if (uint8_t* p = begin_event(t, EventKind::ChunkBegin)) {
    p = put_id(p, t->tbb_current);
    end_event(t, p);
  }
}

TL_EXPORT void tasklens_tbb_chunk_end() noexcept {
  using namespace tasklens::recorder;
  ThreadState* t = tls_state;
  if (!recording(t)) return;
  if (uint8_t* p = begin_event(t, EventKind::ChunkEnd)) {
    p = put_id(p, t->tbb_current);
    end_event(t, p);
  }
}
