// The trace format's names (event kinds, perf's metric names) and what writers of a trace need
// beyond the records' layout (format.hpp): framing a record, the file header, the event schema.
// Shared by the recorder (the writer), the readers and the tests' hand-made traces.
#include "trace/format.hpp"

#include <cstring>

#include "trace/reader.hpp"

namespace tasklens::trace {
namespace {

// perf's names (perf list), then its aliases.
struct MetricName {
  const char* name;
  Metric metric;
};
constexpr MetricName kMetricNames[] = {
    {"tsc", Metric::Tsc},
    {"cycles", Metric::Cycles},
    {"instructions", Metric::Instructions},
    {"task-clock", Metric::TaskClock},
    {"cache-references", Metric::CacheReferences},
    {"cache-misses", Metric::CacheMisses},
    {"branches", Metric::Branches},
    {"branch-misses", Metric::BranchMisses},
    {"ref-cycles", Metric::RefCycles},
    {"stalled-cycles-frontend", Metric::StalledCyclesFrontend},
    {"stalled-cycles-backend", Metric::StalledCyclesBackend},
    {"page-faults", Metric::PageFaults},
    {"minor-faults", Metric::MinorFaults},
    {"major-faults", Metric::MajorFaults},
    {"context-switches", Metric::ContextSwitches},
    {"cpu-migrations", Metric::CpuMigrations},
    {"cpu-cycles", Metric::Cycles},
    {"branch-instructions", Metric::Branches},
    {"faults", Metric::PageFaults},
    {"cs", Metric::ContextSwitches},
    {"migrations", Metric::CpuMigrations},
};
static_assert(sizeof kMetricNames / sizeof kMetricNames[0] >= kMetricCount);

}  // namespace

const char* to_string(EventKind kind) {
  switch (kind) {
    case EventKind::ThreadBegin:
      return "thread_begin";
    case EventKind::ThreadEnd:
      return "thread_end";
    case EventKind::ParallelBegin:
      return "parallel_begin";
    case EventKind::ParallelEnd:
      return "parallel_end";
    case EventKind::ImplicitBegin:
      return "implicit_task_begin";
    case EventKind::ImplicitEnd:
      return "implicit_task_end";
    case EventKind::TaskCreate:
      return "task_create";
    case EventKind::TaskSchedule:
      return "task_schedule";
    case EventKind::SyncBegin:
      return "sync_region_begin";
    case EventKind::SyncEnd:
      return "sync_region_end";
    case EventKind::WorkBegin:
      return "work_begin";
    case EventKind::WorkEnd:
      return "work_end";
    case EventKind::Dispatch:
      return "dispatch";
    case EventKind::Dependences:
      return "dependences";
    case EventKind::DependencesDelta:
      return "dependences_delta";
    case EventKind::MaskedBegin:
      return "masked_begin";
    case EventKind::MaskedEnd:
      return "masked_end";
    case EventKind::SyncWaitBegin:
      return "sync_wait_begin";
    case EventKind::SyncWaitEnd:
      return "sync_wait_end";
    case EventKind::Mark:
      return "mark";
    case EventKind::MutexWaitBegin:
      return "mutex_wait_begin";
    case EventKind::MutexWaitEnd:
      return "mutex_wait_end";
    case EventKind::RegionBegin:
      return "region-begin";
    case EventKind::RegionEnd:
      return "region-end";
    case EventKind::TbbSpawn:
      return "tbb-spawn";
    case EventKind::TbbWaitBegin:
      return "tbb-wait-begin";
    case EventKind::TbbWaitEnd:
      return "tbb-wait-end";
    case EventKind::ChunkBegin:
      return "chunk-begin";
    case EventKind::ChunkEnd:
      return "chunk-end";
    case EventKind::TbbWaitDone:
      return "tbb-wait-done";
    case EventKind::TbbRunBegin:
      return "tbb-run-begin";
    case EventKind::TbbRunEnd:
      return "tbb-run-end";
    case EventKind::TbbSpawnIn:
      return "tbb-spawn-in";
    case EventKind::TbbWaitBeginIn:
      return "tbb-wait-begin-in";
    case EventKind::TbbRunBeginIn:
      return "tbb-run-begin-in";
    case EventKind::UserThreadCreate:
      return "user-thread-create";
    case EventKind::UserThreadStart:
      return "user-thread-start";
    case EventKind::UserThreadEnd:
      return "user-thread-end";
    case EventKind::UserThreadJoinBegin:
      return "user-thread-join-begin";
    case EventKind::UserThreadJoinEnd:
      return "user-thread-join-end";
    case EventKind::RecorderStall:
      return "recorder-stall";
    case EventKind::MutexReleased:
      return "mutex-released";
    case EventKind::TbbNodeBody:
      return "tbb-node-body";
    case EventKind::TbbPipeline:
      return "tbb-pipeline";
    case EventKind::TbbFilterBegin:
      return "tbb-filter-begin";
    case EventKind::TbbFilterEnd:
      return "tbb-filter-end";
  }
  return "unknown";
}

const char* to_string(Metric metric) {
  for (int i = 0; i < kMetricCount; ++i)
    if (kMetricNames[i].metric == metric) return kMetricNames[i].name;
  return "unknown";
}

bool metric_from_name(const char* name, size_t size, Metric& out) {
  for (const MetricName& m : kMetricNames)
    if (std::strlen(m.name) == size && std::memcmp(m.name, name, size) == 0) {
      out = m.metric;
      return true;
    }
  return false;
}

void append_record(std::vector<uint8_t>& out, RecordType type, const void* payload, size_t size,
                   const void* extra, size_t extra_size) {
  RecordHeader h{static_cast<uint32_t>(type),
                 static_cast<uint32_t>(sizeof(RecordHeader) + size + extra_size)};
  const auto* hp = reinterpret_cast<const uint8_t*>(&h);
  out.insert(out.end(), hp, hp + sizeof h);
  if (size)
    out.insert(out.end(), static_cast<const uint8_t*>(payload),
               static_cast<const uint8_t*>(payload) + size);
  if (extra_size)
    out.insert(out.end(), static_cast<const uint8_t*>(extra),
               static_cast<const uint8_t*>(extra) + extra_size);
}

FileHeader make_file_header(uint64_t pid, uint64_t start_tsc, uint64_t realtime_ns, Metric metric) {
  FileHeader h{};
  std::memcpy(h.magic, kMagic, sizeof h.magic);
  h.version_major = kVersionMajor;
  h.version_minor = kVersionMinor;
  h.header_size = sizeof(FileHeader);
  h.pid = pid;
  h.start_tsc = start_tsc;
  h.start_realtime_ns = realtime_ns;
  h.metric = static_cast<uint8_t>(metric);
  h.metric_count = 1;
  h.metrics[0] = h.metric;
  return h;
}

FileHeader make_file_header(uint64_t pid, uint64_t start_tsc, uint64_t realtime_ns,
                            const std::vector<Metric>& metrics) {
  FileHeader h = make_file_header(pid, start_tsc, realtime_ns,
                                  metrics.empty() ? Metric::Tsc : metrics.front());
  h.metric_count = static_cast<uint8_t>(std::min<size_t>(metrics.size(), kMaxMetrics));
  for (int i = 0; i < h.metric_count; ++i) h.metrics[i] = static_cast<uint8_t>(metrics[i]);
  return h;
}

std::vector<uint8_t> make_schema_payload() {
  std::vector<uint8_t> p(4);
  uint32_t count = kEventKindCount - 1;
  std::memcpy(p.data(), &count, 4);
  for (int k = 1; k < kEventKindCount; ++k) {
    p.push_back(static_cast<uint8_t>(k));
    p.push_back(kEventShapes[k].fixed);
    p.push_back(kEventShapes[k].repeated);
    p.push_back(kEventShapes[k].id_mask);
    p.push_back(kEventShapes[k].ptr_mask);
    p.push_back(kEventShapes[k].addr_mask);
  }
  return p;
}

}  // namespace tasklens::trace
