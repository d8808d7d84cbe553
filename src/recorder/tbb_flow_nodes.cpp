// oneTBB flow graph nodes of limited concurrency (TbbNodeBody): the spawn hook of tbb_hooks.cpp
// notes each body of such a node, which the model chains with the node's other bodies.
#include <cstring>
#include <string>

#pragma GCC visibility push(default)
#include <oneapi/tbb/flow_graph.h>
#pragma GCC visibility pop

#include "recorder/tbb_internal.hpp"

namespace tasklens::recorder {

namespace {

// A function_node's or multifunction_node's body runs in a task of class
// apply_body_task_bypass<function_input_base<...>, Input>, whose first member after its
// graph_task base is a reference to the node's function_input_base; that holds the node's
// concurrency limit (tbb::flow::unlimited = 0, serial = 1) after its graph reference. oneTBB
// enforces the limit with that counter and a queue, not with spawns: the body that frees the
// node spawns the next one only if a message waits, otherwise whichever task puts the next
// message starts it, and nothing recorded orders it after the body before (TbbNodeBody).
// The two offsets come from oneTBB's own headers (the ABI that tbb_prepare checks):
// BodyTaskLayout mirrors the task (the Itanium ABI puts the reference in graph_task's tail
// padding: at 96 of its 128 bytes, not after them), InputLayout reaches the protected limit.
// (offsetof of these non-standard-layout classes: conditionally supported, GCC and clang agree.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
struct BodyTaskLayout : d1::graph_task {
  void* node;  // apply_body_task_bypass::my_node (a reference: laid out as a pointer)
};
template <class Input>
struct InputLayout
    : d1::function_input_base<
          Input, d1::queueing, d1::cache_aligned_allocator<Input>,
          d1::function_input<Input, Input, d1::queueing, d1::cache_aligned_allocator<Input>>> {
  static constexpr size_t limit_offset() { return offsetof(InputLayout, my_max_concurrency); }
};
constexpr size_t kBodyNodeOffset = offsetof(BodyTaskLayout, node);
constexpr size_t kNodeLimitOffset = InputLayout<int>::limit_offset();
// receiver<Input>, the base before it, has no data: the offset is the same for every message.
static_assert(InputLayout<std::string>::limit_offset() == kNodeLimitOffset);
#pragma GCC diagnostic pop

}  // namespace

// The class of a limited node's body (and not of continue_node's, which has no limit and runs
// in apply_body_task_bypass<continue_input<...>, continue_msg>).
bool is_node_body(const char* name) {
  const char* p = name ? std::strstr(name, "22apply_body_task_bypassI") : nullptr;
  if (!p) return false;
  const char* q = std::strstr(p, "19function_input_baseI");  // its first template argument
  return q && q - p < 40;
}

// Before the spawn of a node's body (the model places the body by it): its node and limit.
__attribute__((noinline)) void put_node_body(ThreadState* t, const d1::task& task, uint64_t id) {
  const char* node =
      *reinterpret_cast<const char* const*>(reinterpret_cast<const char*>(&task) + kBodyNodeOffset);
  const size_t limit = *reinterpret_cast<const size_t*>(node + kNodeLimitOffset);
  if (limit == 0) return;  // unlimited: its bodies are as independent as their spawns say
  if (uint8_t* p = begin_event(t, EventKind::TbbNodeBody)) {
    p = put_id(p, id);
    p = put_addr(p, node);
    p = put_field(p, limit);
    end_event(t, p);
  }
}

}  // namespace tasklens::recorder
