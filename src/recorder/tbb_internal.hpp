// What the recorder's oneTBB sources share: tbb_hooks.cpp (the interposed entry points, task
// shadows and wrapper sites), tbb_flow_nodes.cpp (flow graph nodes of limited concurrency) and
// tbb_pipeline.cpp (parallel_pipeline's serial filters). Internal to src/recorder.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

// The entry points the recorder defines must be exported although it hides everything else:
// they get the visibility of their declarations in these headers.
#pragma GCC visibility push(default)
#include <oneapi/tbb/parallel_pipeline.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#include <oneapi/tbb/tbb_allocator.h>
#include <oneapi/tbb/version.h>
#pragma GCC visibility pop

#include "recorder/recording.hpp"

namespace d1 = tbb::detail::d1;

namespace tasklens::recorder {

extern bool g_tbb_on;  // the linked oneTBB is one we know: trace its tasks (tbb_prepare)

// A site announced with tasklens_tbb_site_once names one call (task_group::run's spawn, or
// wait's wait): the first one that reads it takes it, so the wrapper has nothing to clear.
constexpr uint32_t kSiteOnce = 0x100, kSiteKindMask = 0xff;  // bits of ThreadState::tbb_site_kind

TL_INLINE ThreadState* tbb_state() {
  ThreadState* t = tls_state;
  if (__builtin_expect(t == nullptr, 0)) {
    t = thread_init(kThreadWorker);
    if (uint8_t* p = begin_event(t, EventKind::ThreadBegin)) {
      p = put_field(p, static_cast<uint64_t>(kThreadWorker));
      end_event(t, p);
    }
  }
  return t;
}

TL_INLINE bool recording(const ThreadState* t) {
  return t && !t->dead && g_tbb_on && g_state.load(std::memory_order_relaxed) == kRecording;
}

// ---- task classes (tbb_classes.cpp)

// TbbKind of a task class, from its mangled type name (oneTBB's algorithms name their task
// classes start_for, start_reduce, ...), and kNodeBodyClass for a node's body (is_node_body).
// Few classes exist: a small table filled under a mutex, read without one.
constexpr size_t kClassSlots = 1024;
constexpr uint8_t kNodeBodyClass = 0x20;  // with a TbbKind (all below it) in the table
struct ClassSlot {
  std::atomic<const void*> vptr{nullptr};
  std::atomic<uint8_t> kind{0};
};
extern ClassSlot g_classes[kClassSlots];

trace::TbbKind kind_of_type_name(const char* name);
// The kind of a class not in the table's first probes: computed and entered under the mutex.
uint8_t classify_slow(const void* const* vptr, size_t h);

// The kind of the class whose vtable is `vptr` (with kNodeBodyClass for a node's body).
TL_INLINE uint8_t classify(const void* const* vptr) {
  size_t h = (reinterpret_cast<uintptr_t>(vptr) * 0x9e3779b97f4a7c15ull) >> 54;
  for (size_t i = 0; i < 4; ++i) {
    ClassSlot& s = g_classes[(h + i) % kClassSlots];
    const void* v = s.vptr.load(std::memory_order_acquire);
    if (v == vptr) return s.kind.load(std::memory_order_relaxed);
    if (v == nullptr) break;
  }
  return classify_slow(vptr, h);
}

// ---- flow graph nodes (tbb_flow_nodes.cpp)

// Whether a task class (its mangled name) is the body of a function_node or multifunction_node.
bool is_node_body(const char* type_name);
// Before the spawn of such a body `task` (recorded as `id`): its node and limit (TbbNodeBody),
// if the node's concurrency is limited.
void put_node_body(ThreadState* t, const d1::task& task, uint64_t id);

// ---- parallel_pipeline (tbb_pipeline.cpp)

using PipelineFn = void (*)(d1::task_group_context&, std::size_t, const d1::filter_node&);
PipelineFn real_parallel_pipeline();  // libtbb's (tbb_hooks.cpp)

}  // namespace tasklens::recorder
