// The kinds of oneTBB's task classes, by their type names: which algorithm a spawned task
// belongs to (parallel_for, parallel_reduce, ...), and whether it is a flow graph node's body.
// The hot path (classify, tbb_internal.hpp) reads a table of vtable pointers without a lock;
// a class met for the first time is named here, once.
#include <cstring>
#include <mutex>
#include <typeinfo>

#include "recorder/recording.hpp"
#include "recorder/tbb_internal.hpp"

namespace tasklens::recorder {

ClassSlot g_classes[kClassSlots];

namespace {
std::mutex g_classes_mutex;
}  // namespace

trace::TbbKind kind_of_type_name(const char* name) {
  using trace::TbbKind;
  if (!name) return TbbKind::Task;
  if (std::strstr(name, "quick_sort")) return TbbKind::ParallelSort;
  if (std::strstr(name, "start_for")) return TbbKind::ParallelFor;
  if (std::strstr(name, "start_reduce") || std::strstr(name, "start_deterministic_reduce"))
    return TbbKind::ParallelReduce;
  if (std::strstr(name, "function_invoker") || std::strstr(name, "invoke_subroot_task") ||
      std::strstr(name, "invoke_root_task"))
    return TbbKind::ParallelInvoke;
  if (std::strstr(name, "function_task") || std::strstr(name, "function_stack_task"))
    return TbbKind::Task;
  if (std::strncmp(name, "N3tbb6detail", 12) == 0) return TbbKind::Other;
  return TbbKind::Task;  // the program's own d1::task subclass
}

__attribute__((noinline)) uint8_t classify_slow(const void* const* vptr, size_t h) {
  const auto* info = static_cast<const std::type_info*>(vptr[-1]);
  const char* name = info ? info->name() : nullptr;
  uint8_t kind = static_cast<uint8_t>(kind_of_type_name(name)) |
                 (is_node_body(name) ? kNodeBodyClass : uint8_t{0});
  std::lock_guard<std::mutex> lock(g_classes_mutex);
  for (size_t i = 0; i < kClassSlots; ++i) {
    ClassSlot& s = g_classes[(h + i) % kClassSlots];
    const void* v = s.vptr.load(std::memory_order_relaxed);
    if (v == vptr) return s.kind.load(std::memory_order_relaxed);
    if (v == nullptr) {
      s.kind.store(kind, std::memory_order_relaxed);
      s.vptr.store(vptr, std::memory_order_release);
      break;
    }
  }
  return kind;
}

}  // namespace tasklens::recorder
