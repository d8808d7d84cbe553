// The event path's capacity (no single serial stage): N producer threads write a
// fine-grained program's raw events as fast as they can into the recorder's real buffers
// (buffer_register / stores of the chunk's end / buffer_rotate) for a fixed time, and the writer
// threads encode, compress and write them to a real file. Prints one line of `key=value`
// (bench/event_path.sh runs it for N = 1..128 and draws the conclusion):
//   raw_mb           raw event bytes written by the producers (8 bytes a field)
//   encoded_mb_s     the same events' bytes once encoded (the trace's form before compression),
//                    per second the path absorbed them (producers included: on a 2-core machine
//                    they and the writers share the CPUs)
//   writer_cpu_s     CPU time of the writer threads (plus the final drain on the main thread)
//   per_core_mb_s    encoded bytes per writer CPU second: what one writer core sustains
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
#include "recorder/raw_events.hpp"
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

// A pattern of raw events (recorder/raw_events.hpp: what the program's threads write), where
// each piece that may be committed on its own ends, and what the pattern takes encoded (what the
// writers turn it into before compressing).
struct Pattern {
  std::vector<uint8_t> bytes;
  std::vector<uint32_t> ends;  // each piece is one event: its head is its first word
  uint64_t encoded_bytes = 0;
  uint64_t span = 0;  // TSC ticks from the first event to the last, plus one gap
};

void finish_pattern(Pattern& p, uint64_t start_tsc, uint64_t end_tsc) {
  p.span = end_tsc - start_tsc + 100;
  recorder::RawStreamState state;
  state.time = start_tsc;
  std::vector<uint8_t> out(recorder::encoded_bound(p.bytes.size()));
  p.encoded_bytes =
      recorder::encode_raw_events(state, p.bytes.data(), p.bytes.size(), out.data(), 0);
}

// The events of a fib-like run as the recorder writes them (recording.hpp: a head with the
// kind and the TSC, then the fields as they are): per task a TaskCreate, the TaskSchedule pair
// that runs it, and the taskwait's SyncBegin/End, a few hundred cycles apart. Each piece is one
// task's events.
Pattern synthesize(uint32_t seed) {
  Pattern p;
  std::mt19937 rng(seed);
  uint64_t id = 1000, tsc = 1000;
  uint8_t buf[512];
  const uint64_t create_site = 0x401a3c, wait_site = 0x401b10;
  uint8_t* q = buf;
  // The event written since the last head ends here: a piece.
  auto end_piece = [&] {
    p.bytes.insert(p.bytes.end(), buf, q);
    p.ends.push_back(static_cast<uint32_t>(p.bytes.size()));
    q = buf;
  };
  auto head = [&](uint8_t* at, trace::EventKind kind) {
    if (at != buf) {
      q = at;
      end_piece();
      at = buf;
    }
    tsc += 40 + rng() % 400;
    return recorder::put_raw(at, recorder::raw_head(kind, tsc));
  };
  while (p.bytes.size() < (16u << 20)) {
    const uint64_t parent = id - rng() % 8;
    const uint64_t child = (id += 1 + rng() % 4);  // other threads take ids in between
    using recorder::put_raw;
    q = head(q, trace::EventKind::TaskCreate);
    q = put_raw(put_raw(put_raw(put_raw(q, parent), child), 4), create_site);  // explicit
    q = head(q, trace::EventKind::TaskSchedule);
    q = put_raw(put_raw(put_raw(q, parent), 4), child);  // ompt_task_switch
    q = head(q, trace::EventKind::SyncBegin);
    q = put_raw(put_raw(put_raw(q, 3), child), wait_site);  // taskwait
    q = head(q, trace::EventKind::SyncEnd);
    q = put_raw(put_raw(put_raw(q, 3), child), wait_site);
    q = head(q, trace::EventKind::TaskSchedule);
    q = put_raw(put_raw(put_raw(q, child), 1), parent);  // ompt_task_complete
    end_piece();
  }
  finish_pattern(p, 1000, tsc);
  return p;
}

// The longest event stream of a real trace, turned back into raw events, each a piece (the file
// the bench writes is not decoded again: only its bytes matter, and they are those of the real
// stream once encoded).
Pattern from_trace(const char* path) {
  trace::TraceFile file = trace::TraceFile::open(path);
  std::vector<uint8_t> longest;
  for (uint32_t t = 0; t < file.stream_count(); ++t) {
    std::vector<uint8_t> s = file.stream(t);
    if (s.size() > longest.size()) longest = std::move(s);
  }
  Pattern p;
  trace::EventDecoder d = file.decoder(longest);
  trace::Event e;
  uint64_t first = 0, last = 0;
  uint8_t buf[recorder::kMaxRawEventBytes];
  while (d.next(e) && p.bytes.size() < (64u << 20)) {
    const trace::EventShape& shape = trace::kEventShapes[static_cast<int>(e.kind)];
    if (shape.fixed > 5 || (e.groups && e.groups->size() > 6)) continue;
    if (p.ends.empty()) first = e.time;
    last = e.time;
    uint8_t* q = recorder::put_raw(buf, recorder::raw_head(e.kind, e.time));
    for (int i = 0; i < shape.fixed; ++i) q = recorder::put_raw(q, e.f[i]);
    if (shape.repeated && e.groups)
      for (uint64_t v : *e.groups) q = recorder::put_raw(q, v);
    p.bytes.insert(p.bytes.end(), buf, q);
    p.ends.push_back(static_cast<uint32_t>(p.bytes.size()));
  }
  finish_pattern(p, first, last);
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
  uint64_t time_offset = 0;
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
    // Each time round the pattern, later: the clock goes on (a replay at the same times would
    // encode as deltas of 0).
    if (time_offset) {
      uint64_t head;
      std::memcpy(&head, pos, sizeof head);
      if (!(head & recorder::kSameTime)) head += time_offset << 8;
      std::memcpy(pos, &head, sizeof head);
    }
    pos += size;
    bytes += size;
    c->end.store(pos, std::memory_order_release);
    if (++piece == pattern.ends.size()) {
      piece = 0;
      time_offset += pattern.span;
    }
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
  // In encoded bytes (what the events take in the trace before compression), the unit of a
  // busy thread's rate in event_path.sh; the raw ones are about 4 times as many.
  const double encoded = static_cast<double>(raw) * static_cast<double>(pattern.encoded_bytes) /
                         static_cast<double>(pattern.bytes.size());
  const double per_core = writer_cpu > 0 ? encoded / writer_cpu : 0;
  std::printf(
      "threads=%d writers=%u helpers=%u seconds=%.2f raw_mb=%.1f encoded_mb=%.1f "
      "encoded_mb_s=%.1f file_mb=%.1f ratio=%.2f writer_cpu_s=%.3f per_core_mb_s=%.1f "
      "stalls=%llu stall_ms=%.1f chunks=%llu%s\n",
      threads, during.writers, during.helpers, produced_s, static_cast<double>(raw) / 1e6,
      encoded / 1e6, encoded / 1e6 / produced_s, static_cast<double>(file_bytes) / 1e6,
      file_bytes > 0 ? encoded / static_cast<double>(file_bytes) : 0.0, writer_cpu, per_core / 1e6,
      static_cast<unsigned long long>(s.stalls), static_cast<double>(s.stall_ticks) / tsc_hz * 1e3,
      static_cast<unsigned long long>(s.chunks), failed ? " FAILED(no chunk)" : "");
  return failed || s.write_errors ? 1 : 0;
}
