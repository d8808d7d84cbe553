// Threads the program starts itself (pthread_create, and so std::thread and std::async): the
// recorder interposes pthread_create and pthread_join so that such a thread becomes a child of
// the task that created it, and its join a join of the task that waited for it (the time spent
// blocked in pthread_join is then not work). Without this a thread that runs OpenMP constructs
// looked like work running beside the whole program, and the joiner's wait like work.
//
// The runtimes' own threads (libomp's and oneTBB's workers, the recorder's writer) are created
// from inside those libraries and pass straight through: the caller is told apart by the module
// of the return address. Everything here is off the hot path (a thread's creation costs tens of
// microseconds anyway); it never fails the program's call: without memory or a trace, the real
// function runs alone.
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_map>

#include "recorder/recording.hpp"

namespace tasklens::recorder {
namespace {

using CreateFn = int (*)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
using JoinFn = int (*)(pthread_t, void**);

CreateFn real_create() {
  static CreateFn fn = reinterpret_cast<CreateFn>(dlsym(RTLD_NEXT, "pthread_create"));
  return fn;
}
JoinFn real_join() {
  static JoinFn fn = reinterpret_cast<JoinFn>(dlsym(RTLD_NEXT, "pthread_join"));
  return fn;
}

// The file name of the module holding `address` ("" if none).
const char* module_of(const void* address) {
  Dl_info info;
  if (!dladdr(address, &info) || !info.dli_fname) return "";
  const char* base = std::strrchr(info.dli_fname, '/');
  return base ? base + 1 : info.dli_fname;
}

bool starts_with(const char* s, const char* prefix) {
  return std::strncmp(s, prefix, std::strlen(prefix)) == 0;
}

// Runtimes and the recorder start threads of their own: those are not the program's.
bool runtime_module(const char* base) {
  return starts_with(base, "libomp") || starts_with(base, "libgomp") ||
         starts_with(base, "libiomp") || starts_with(base, "libtbb") ||
         starts_with(base, "libtasklens");
}
// Between the program and pthread_create: the C++ library (std::thread, std::async) and libc.
bool library_module(const char* base) {
  return starts_with(base, "libstdc++") || starts_with(base, "libc.so") ||
         starts_with(base, "libc++") || starts_with(base, "libpthread");
}

// The program's call site of a thread creation: the first return address outside this library,
// the C++ library and libc (std::thread's constructor calls pthread_create from libstdc++).
// backtrace() unwinds through the tables of each module, never through frame pointers.
const void* program_call_site(const void* direct) {
  void* frames[8];
  const int n = backtrace(frames, 8);
  for (int i = 0; i < n; ++i) {
    const char* base = module_of(frames[i]);
    if (starts_with(base, "libtasklens") || library_module(base)) continue;
    return frames[i];
  }
  return direct;
}

struct Start {
  void* (*routine)(void*);
  void* arg;
  uint64_t id;
};

// pthread_t -> the thread's id in the trace, for the join. Threads are few.
std::mutex g_threads_mutex;
std::unordered_map<pthread_t, uint64_t>* g_threads = nullptr;

void remember(pthread_t thread, uint64_t id) {
  std::lock_guard<std::mutex> lock(g_threads_mutex);
  try {
    if (!g_threads) g_threads = new std::unordered_map<pthread_t, uint64_t>();
    (*g_threads)[thread] = id;
  } catch (...) {  // out of memory: this thread's join is simply not seen
  }
}
uint64_t forget(pthread_t thread) {
  std::lock_guard<std::mutex> lock(g_threads_mutex);
  if (!g_threads) return 0;
  auto it = g_threads->find(thread);
  if (it == g_threads->end()) return 0;
  const uint64_t id = it->second;
  g_threads->erase(it);
  return id;
}

void thread_event(EventKind kind, uint64_t id) {
  ThreadState* t = state();
  if (uint8_t* p = begin_event(t, kind)) {
    p = put_id(p, id);
    end_event(t, p);
  }
}

void* start_routine(void* raw) {
  Start start = *static_cast<Start*>(raw);
  delete static_cast<Start*>(raw);
  ThreadState* t = state();
  // oneTBB work this thread starts runs inside its task.
  if (t) t->tbb_current = start.id;
  thread_event(EventKind::UserThreadStart, start.id);
  void* result = start.routine(start.arg);
  thread_event(EventKind::UserThreadEnd, start.id);
  return result;
}

}  // namespace

void threads_prepare() {
  real_create();
  real_join();
  // backtrace() loads libgcc_s's unwinder on its first call (a dlopen, about a millisecond).
  void* frame[2];
  backtrace(frame, 2);
}

}  // namespace tasklens::recorder

TL_EXPORT int pthread_create(pthread_t* thread, const pthread_attr_t* attr, void* (*routine)(void*),
                             void* arg) {
  using namespace tasklens::recorder;
  CreateFn real = real_create();
  if (!real) return EAGAIN;  // no libc function to call: nothing else can be done
  const void* caller = __builtin_return_address(0);
  if (g_state.load(std::memory_order_relaxed) != kRecording || runtime_module(module_of(caller)))
    return real(thread, attr, routine, arg);
  ThreadState* t = state();
  if (!t || t->dead) return real(thread, attr, routine, arg);
  auto* start = new (std::nothrow) Start{routine, arg, new_id(t)};
  if (!start) return real(thread, attr, routine, arg);
  const uint64_t id = start->id;
  if (uint8_t* p = begin_event(t, EventKind::UserThreadCreate)) {
    p = put_id(p, id);
    p = put_ptr(p, program_call_site(caller));
    end_event(t, p);
  }
  const int rc = real(thread, attr, start_routine, start);
  if (rc != 0) {
    delete start;  // the thread never ran: the model sees a thread that never started
    return rc;
  }
  remember(*thread, id);
  return rc;
}

TL_EXPORT int pthread_join(pthread_t thread, void** result) {
  using namespace tasklens::recorder;
  JoinFn real = real_join();
  if (!real) return EINVAL;
  // Not recording (a forked child among others, where another thread may have held the map's
  // lock at the fork): the real join alone.
  if (g_state.load(std::memory_order_relaxed) != kRecording) return real(thread, result);
  const uint64_t id = forget(thread);
  if (id == 0) return real(thread, result);
  thread_event(EventKind::UserThreadJoinBegin, id);
  const int rc = real(thread, result);
  thread_event(EventKind::UserThreadJoinEnd, id);
  return rc;
}
