// The event path's capacity (no single serial stage): N producer threads write a
// fine-grained program's event bytes as fast as they can into the recorder's real buffers
// (buffer_register / committed stores / buffer_rotate) for a fixed time, and the writer threads
// compress and write them to a real file. Prints one line of `key=value` (bench/event_path.sh
// runs it for N = 1..128 and draws the conclusion):
//   raw_mb_s         raw event bytes per second the path absorbed (producers included: on a
//                    2-core machine they and the writers share the CPUs)
//   writer_cpu_s     CPU time of the writer threads (plus the final drain on the main thread)
//   per_core_mb_s    raw bytes per writer CPU second: what one writer core sustains
//   stalls, stall_ms how often the producers waited for a chunk, and how long (summed over
//                    the threads; WriterStats)
//
// Usage: event_path THREADS. Environment: EVENT_PATH_SECONDS (3), EVENT_PATH_WRITERS (0: the
// recorder's default for this machine), EVENT_PATH_MAX_WRITERS (0: the recorder's default, one
// per 4 CPUs: helpers started while the writers fall behind; `helpers=` counts them),
// EVENT_PATH_OUT (/dev/shm/tasklens_event_path.tlens), EVENT_PATH_BUFFER_MB (256),
// EVENT_PATH_COMPRESSION (lz4, zstd, none), EVENT_PATH_POLICY (batch, idle or normal; batch as in
// the recorder), EVENT_PATH_SAMPLE (a .tlens: its longest event stream is replayed instead of the
// synthesized events).
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "recorder/buffer.hpp"
#include "recorder/metric.hpp"
#include "trace/format.hpp"
#include "trace/reader.hpp"

namespace {

using namespace tasklens;

double now_s(clockid_t clock = CLOCK_MONOTONIC) {
  timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

long env_long(const char* name, long fallback) {
  const char* v = getenv(name);
  return v && *v ? std::strtol(v, nullptr, 10) : fallback;
}

// A byte pattern of events and where each piece that may be committed on its own ends.
struct Pattern {
  std::vector<uint8_t> bytes;
  std::vector<uint32_t> ends;
};

// The events of a fib-like run as the recorder encodes them (recording.hpp: kind, TSC delta,
// fields; ids and code pointers as zigzag deltas from the thread's previous one): per task a
// TaskCreate, the TaskSchedule pair that runs it, and the taskwait's SyncBegin/End, with the
// small time deltas of a task of a few hundred cycles. Each piece is one task's events.
Pattern synthesize(uint32_t seed) {
  Pattern p;
  std::mt19937 rng(seed);
  uint64_t last_id = 1000, last_ptr = 0x401000, id = 1000;
  uint8_t buf[256];
  auto put_id = [&](uint8_t* q, uint64_t v) {
    q = trace::put_varint(q, trace::zigzag(static_cast<int64_t>(v - last_id)));
    last_id = v;
    return q;
  };
  auto put_ptr = [&](uint8_t* q, uint64_t v) {
    q = trace::put_varint(q, trace::zigzag(static_cast<int64_t>(v - last_ptr)));
    last_ptr = v;
    return q;
  };
  auto dt = [&](uint8_t* q) { return trace::put_varint(q, 40 + rng() % 400); };
  const uint64_t create_site = 0x401a3c, wait_site = 0x401b10;
  while (p.bytes.size() < (4u << 20)) {
    const uint64_t parent = id - rng() % 8;
    const uint64_t child = (id += 1 + rng() % 4);  // other threads take ids in between
    uint8_t* q = buf;
    *q++ = static_cast<uint8_t>(trace::EventKind::TaskCreate);
    q = dt(q);
    q = put_id(q, parent);
    q = put_id(q, child);
    q = trace::put_varint(q, 4);  // ompt_task_explicit
    q = put_ptr(q, create_site);
    *q++ = static_cast<uint8_t>(trace::EventKind::TaskSchedule);
    q = dt(q);
    q = put_id(q, parent);
    q = trace::put_varint(q, 4);  // ompt_task_switch
    q = put_id(q, child);
    *q++ = static_cast<uint8_t>(trace::EventKind::SyncBegin);
    q = dt(q);
    q = trace::put_varint(q, 3);  // taskwait
    q = put_id(q, child);
    q = put_ptr(q, wait_site);
    *q++ = static_cast<uint8_t>(trace::EventKind::SyncEnd);
    q = dt(q);
    q = trace::put_varint(q, 3);
    q = put_id(q, child);
    q = put_ptr(q, wait_site);
    *q++ = static_cast<uint8_t>(trace::EventKind::TaskSchedule);
    q = dt(q);
    q = put_id(q, child);
    q = trace::put_varint(q, 1);  // ompt_task_complete
    q = put_id(q, parent);
    p.bytes.insert(p.bytes.end(), buf, q);
    p.ends.push_back(static_cast<uint32_t>(p.bytes.size()));
  }
  return p;
}

// The longest event stream of a real trace, in pieces of 32 bytes (the file the bench writes
// is not decoded again: only its bytes matter, and they are those of the real stream).
Pattern from_trace(const char* path) {
  trace::TraceFile file = trace::TraceFile::open(path);
  Pattern p;
  for (uint32_t t = 0; t < file.stream_count(); ++t) {
    std::vector<uint8_t> s = file.stream(t);
    if (s.size() > p.bytes.size()) p.bytes = std::move(s);
  }
  for (size_t end = 32; end <= p.bytes.size(); end += 32) p.ends.push_back(uint32_t(end));
  p.bytes.resize(p.ends.empty() ? 0 : p.ends.back());
  return p;
}

struct Producer {
  uint64_t bytes = 0;
  bool failed = false;
};

void produce(uint32_t index, const Pattern& pattern, const std::atomic<bool>& stop, Producer& out) {
  recorder::ThreadBuffer* b = recorder::buffer_register(index, false);
  if (!b) {
    out.failed = true;
    return;
  }
  recorder::Chunk* c = b->current.load();
  uint8_t* pos = c->data;
  // Each thread starts at another place of the pattern.
  size_t piece = (static_cast<size_t>(index) * 7919) % pattern.ends.size();
  uint64_t bytes = 0;
  for (uint32_t n = 0;; ++n) {
    if ((n & 255) == 0 && stop.load(std::memory_order_relaxed)) break;
    const uint32_t from = piece ? pattern.ends[piece - 1] : 0, to = pattern.ends[piece];
    const size_t size = to - from;
    if (static_cast<size_t>(c->data + recorder::kChunkBytes - pos) < size) {
      c = recorder::buffer_rotate(b);
      if (!c) {
        out.failed = true;
        break;
      }
      pos = c->data;
    }
    std::memcpy(pos, pattern.bytes.data() + from, size);
    pos += size;
    bytes += size;
    c->committed.store(static_cast<uint32_t>(pos - c->data), std::memory_order_release);
    if (++piece == pattern.ends.size()) piece = 0;
  }
  out.bytes = bytes;
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? std::atoi(argv[1]) : 1;
  if (threads < 1 || threads > 4096) {
    std::fprintf(stderr, "usage: event_path THREADS (1..4096)\n");
    return 2;
  }
  const double seconds = static_cast<double>(env_long("EVENT_PATH_SECONDS", 3));
  const char* out_env = getenv("EVENT_PATH_OUT");
  const std::string out = out_env && *out_env ? out_env : "/dev/shm/tasklens_event_path.tlens";
  const char* sample = getenv("EVENT_PATH_SAMPLE");
  Pattern pattern = sample && *sample ? from_trace(sample) : synthesize(42);
  if (pattern.ends.empty()) {
    std::fprintf(stderr, "event_path: no events in %s\n", sample);
    return 1;
  }

  int fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) {
    std::perror(out.c_str());
    return 1;
  }
  recorder::WriterConfig config;
  config.fd = fd;
  config.writers = static_cast<unsigned>(std::max(0L, env_long("EVENT_PATH_WRITERS", 0)));
  config.max_writers = static_cast<unsigned>(std::max(0L, env_long("EVENT_PATH_MAX_WRITERS", 0)));
  config.max_chunks = static_cast<size_t>(env_long("EVENT_PATH_BUFFER_MB", 256)) * 1024 * 1024 /
                      recorder::kChunkBytes;
  // The recorder's own default (SCHED_BATCH) unless EVENT_PATH_POLICY says idle or normal.
  const char* policy = std::getenv("EVENT_PATH_POLICY");
  config.policy = policy && std::string(policy) == "idle"     ? recorder::WriterPolicy::Idle
                  : policy && std::string(policy) == "normal" ? recorder::WriterPolicy::Normal
                                                              : recorder::WriterPolicy::Batch;
  if (const char* c = getenv("EVENT_PATH_COMPRESSION")) {
    if (std::strcmp(c, "zstd") == 0) config.compression = trace::Compression::Zstd;
    if (std::strcmp(c, "none") == 0) config.compression = trace::Compression::None;
  }
  recorder::writer_configure(config);
  std::vector<uint8_t> head;
  trace::FileHeader h = trace::make_file_header(static_cast<uint64_t>(getpid()),
                                                recorder::read_tsc(), 0, trace::Metric::Tsc);
  head.insert(head.end(), reinterpret_cast<uint8_t*>(&h), reinterpret_cast<uint8_t*>(&h + 1));
  std::vector<uint8_t> schema = trace::make_schema_payload();
  trace::append_record(head, trace::RecordType::EventSchema, schema.data(), schema.size());
  recorder::writer_append(head.data(), head.size());
  if (!recorder::writer_start()) {
    std::fprintf(stderr, "event_path: no writer thread\n");
    return 1;
  }

  const uint64_t tsc0 = recorder::read_tsc();
  const double t0 = now_s();
  std::atomic<bool> stop{false};
  std::vector<Producer> producers(static_cast<size_t>(threads));
  std::vector<std::thread> pool;
  for (int i = 0; i < threads; ++i)
    pool.emplace_back(produce, static_cast<uint32_t>(i), std::cref(pattern), std::cref(stop),
                      std::ref(producers[static_cast<size_t>(i)]));
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop.store(true);
  for (auto& t : pool) t.join();
  const double produced_s = now_s() - t0;
  const recorder::WriterStats during = recorder::writer_stats();

  // The rest (what the writers had not taken yet, partial chunks) is drained by this thread:
  // its CPU time counts as writer time too.
  const double cpu0 = now_s(CLOCK_THREAD_CPUTIME_ID);
  std::vector<uint8_t> tail;
  trace::Finish finish{};
  trace::append_record(tail, trace::RecordType::Finish, &finish, sizeof finish);
  recorder::writer_finish(tail.data(), tail.size());
  const double finish_cpu = now_s(CLOCK_THREAD_CPUTIME_ID) - cpu0;
  const double tsc_hz = static_cast<double>(recorder::read_tsc() - tsc0) / (now_s() - t0);
  const recorder::WriterStats s = recorder::writer_stats();
  const off_t file_bytes = lseek(fd, 0, SEEK_END);
  close(fd);
  if (getenv("EVENT_PATH_KEEP") == nullptr) unlink(out.c_str());

  uint64_t raw = 0;
  bool failed = false;
  for (const Producer& p : producers) {
    raw += p.bytes;
    failed |= p.failed;
  }
  const double writer_cpu = static_cast<double>(s.writer_cpu_ns) * 1e-9 + finish_cpu;
  const double per_core = writer_cpu > 0 ? static_cast<double>(raw) / writer_cpu : 0;
  std::printf(
      "threads=%d writers=%u helpers=%u seconds=%.2f raw_mb=%.1f raw_mb_s=%.1f file_mb=%.1f "
      "ratio=%.2f writer_cpu_s=%.3f per_core_mb_s=%.1f stalls=%llu stall_ms=%.1f chunks=%llu%s\n",
      threads, during.writers, during.helpers, produced_s, static_cast<double>(raw) / 1e6,
      static_cast<double>(raw) / 1e6 / produced_s, static_cast<double>(file_bytes) / 1e6,
      file_bytes > 0 ? static_cast<double>(raw) / static_cast<double>(file_bytes) : 0.0, writer_cpu,
      per_core / 1e6, static_cast<unsigned long long>(s.stalls),
      static_cast<double>(s.stall_ticks) / tsc_hz * 1e3, static_cast<unsigned long long>(s.chunks),
      failed ? " FAILED(no chunk)" : "");
  return failed || s.write_errors ? 1 : 0;
}
