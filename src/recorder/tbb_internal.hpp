// What the recorder's oneTBB sources share: tbb_hooks.cpp (the interposed entry points, task
// shadows and wrapper sites), tbb_flow_nodes.cpp (flow graph nodes of limited concurrency) and
// tbb_pipeline.cpp (parallel_pipeline's serial filters). Internal to src/recorder.
#pragma once

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
      p = trace::put_varint(p, static_cast<uint64_t>(kThreadWorker));
      end_event(t, p);
    }
  }
  return t;
}

TL_INLINE bool recording(const ThreadState* t) {
  return t && !t->dead && g_tbb_on && g_state.load(std::memory_order_relaxed) == kRecording;
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
