// The recorder's core (see recording.hpp): thread states, the trace file's head and tail,
// starting at main(), and the entry points the program calls (user regions).
#include "recorder/recording.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <optional>
#include <vector>

#include "recorder/host_steal.hpp"
#include "recorder/tbb_hooks.hpp"
#include "recorder/warmup.hpp"
#include "trace/reader.hpp"

namespace tasklens::recorder {

constinit Config g_config;
std::atomic<int> g_state{kOff};
std::atomic<bool> g_fast_events{false};
pid_t g_pid = 0;
uint32_t g_runtime_flags = 0;
std::string g_runtime_version;
std::atomic<int> g_open_parallel{0};
uint64_t g_root_task = 0;
__thread ThreadState* tls_state __attribute__((tls_model("initial-exec"))) = nullptr;
namespace {
// tls_fast's state for a thread without one: no room, ever (pos and fast_end null). Never
// destroyed: callbacks may come after the library's destructors.
union NoState {
  ThreadState state;
  NoState() : state() {}
  ~NoState() {}
} g_no_state;
}  // namespace
__thread ThreadState* tls_fast __attribute__((tls_model("initial-exec"))) = &g_no_state.state;

namespace {

int g_fd = -1;
uint64_t g_start_tsc = 0;
std::atomic<uint32_t> g_thread_count{0};
std::mutex g_states_mutex;
ThreadState* g_states = nullptr;

}  // namespace

ThreadState* thread_init(int type) {
  auto* t = new (std::nothrow) ThreadState();
  if (!t) return nullptr;
  if (g_state.load() != kRecording || getpid() != g_pid) {
    // After the end of the trace, or in a forked child (which shares the parent's trace file):
    // record nothing, write nothing.
    t->dead = true;
    tls_state = tls_fast = t;
    return t;
  }
  t->index = g_thread_count.fetch_add(1, std::memory_order_relaxed);
  t->next_id = (static_cast<uint64_t>(t->index) + 1) << 40;
  // A thread whose counters cannot be opened records deltas of 0 (the launcher probed them).
  if (g_config.counter_count > 0) t->counters.open(g_config.counters, g_config.counter_count);
  // Preemptions only matter for the TSC: perf counters stop while the thread is off the CPU.
  t->buffer = buffer_register(t->index, g_config.has_tsc && g_config.watch_preemptions,
                              g_config.watch_faults);
  if (!t->buffer) {
    t->dead = t->no_memory = true;
    writer_note_no_memory();
  } else {
    t->chunk = t->buffer->current.load(std::memory_order_relaxed);
    t->pos.store(t->chunk->data, std::memory_order_release);
    t->buffer->producer_pos.store(&t->pos, std::memory_order_release);
    set_limit(t, t->chunk->data + kChunkBytes);
  }
  {
    std::lock_guard<std::mutex> lock(g_states_mutex);
    t->next = g_states;
    g_states = t;
  }
  trace::ThreadInfo info{t->index, static_cast<uint32_t>(type),
                         static_cast<uint64_t>(syscall(SYS_gettid))};
  std::vector<uint8_t> rec;
  trace::append_record(rec, trace::RecordType::ThreadInfo, &info, sizeof info);
  writer_append(rec.data(), rec.size());
  tls_state = tls_fast = t;
  return t;
}

// Out of line: only metrics other than the TSC need it, and each read costs far more than a call.
__attribute__((noinline)) uint8_t* put_counter_deltas(ThreadState* t, uint8_t* p) {
  uint64_t v[trace::kMaxMetrics] = {};
  t->counters.read(v);
  for (int i = 0; i < g_config.counter_count; ++i) {
    uint64_t m = v[i] < t->last_counter[i] ? t->last_counter[i] : v[i];  // never negative
    p = put_raw(p, m - t->last_counter[i]);
    t->last_counter[i] = m;
  }
  return p;
}

__attribute__((noinline)) bool make_room(ThreadState* t) {
  if (t->dead) {  // it has no room, ever (begin_event)
    if (t->no_memory) ++t->lost;
    return false;
  }
  uint64_t stall = 0;
  // The chunk's events, published by pos until now, are handed over with its end.
  t->chunk->end.store(pos_of(t), std::memory_order_release);
  Chunk* c = buffer_rotate(t->buffer, &stall);
  if (!c) {
    t->dead = t->no_memory = true;
    t->pos.store(nullptr, std::memory_order_release);
    set_limit(t, nullptr);
    writer_note_no_memory();
    ++t->lost;
    return false;
  }
  t->chunk = c;
  t->pos.store(c->end.load(std::memory_order_relaxed), std::memory_order_release);
  set_limit(t, c->data + kChunkBytes);
  // The time this thread spent getting the chunk: the model takes it out of the strand it falls
  // in (it ends now, at this event's time). The fresh chunk has room: no recursion.
  if (stall) {
    if (uint8_t* p = begin_event(t, EventKind::RecorderStall)) {
      p = put_field(p, stall);
      end_event(t, p);
    }
  }
  return true;
}

void note_own_time(ThreadState* t, uint64_t ticks) {
  if (!t || t->dead || ticks == 0) return;
  if (t->buffer) t->buffer->stall_ticks.fetch_add(ticks, std::memory_order_relaxed);
  if (uint8_t* p = begin_event(t, EventKind::RecorderStall)) {
    p = put_field(p, ticks);
    end_event(t, p);
  }
}

namespace {

// ----------------------------------------------------------------------------- user regions

// TASKLENS_REGION_BEGIN/END (include/tasklens/tasklens.h). Unlike the OMPT callbacks these come
// from the program at any time, so they record only what the callbacks would: nothing before
// or after the recording, in a forked child (on_fork_child cleared the state), or on a thread
// the runtime never reported (no ThreadState: its events would belong to no OpenMP task, and
// creating the state here would cost syscalls on the program's path).
TL_INLINE void region_event(EventKind kind, const char* name) {
  ThreadState* t = tls_state;
  if (__builtin_expect(t == nullptr || t->dead, 0)) {
    if (t && t->no_memory) ++t->lost;
    return;
  }
  if (__builtin_expect(g_state.load(std::memory_order_relaxed) != kRecording, 0)) return;
  uint32_t id;
  if (!region_id(t->regions, name ? name : "(null)", id)) return;
  if (uint8_t* p = begin_event(t, kind)) {
    p = put_field(p, id);
    end_event(t, p);
  }
}

// ----------------------------------------------------------------------------- file framing

struct ModuleCollector {
  std::vector<uint8_t> payload = std::vector<uint8_t>(4, 0);  // u32 count, then entries
  uint32_t count = 0;
  bool first = true;  // dl_iterate_phdr reports the main program first, with an empty name
};

int collect_module(dl_phdr_info* info, size_t, void* out) {
  auto* c = static_cast<ModuleCollector*>(out);
  bool first = c->first;
  c->first = false;
  std::string path = info->dlpi_name ? info->dlpi_name : "";
  if (path.empty()) {
    if (!first) return 0;
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n > 0) path.assign(buf, static_cast<size_t>(n));
  }
  trace::ModuleEntry e{};
  e.base = info->dlpi_addr;
  e.begin = ~0ull;
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const auto& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
    uint64_t lo = info->dlpi_addr + ph.p_vaddr;
    uint64_t hi = lo + ph.p_memsz;
    if (lo < e.begin) e.begin = lo;
    if (hi > e.end) e.end = hi;
  }
  if (e.begin == ~0ull) return 0;
  e.path_size = static_cast<uint32_t>(path.size());
  const auto* ep = reinterpret_cast<const uint8_t*>(&e);
  c->payload.insert(c->payload.end(), ep, ep + sizeof e);
  c->payload.insert(c->payload.end(), path.begin(), path.end());
  ++c->count;
  std::memcpy(c->payload.data(), &c->count, 4);
  return 0;
}

std::vector<uint8_t> module_map_record() {
  ModuleCollector collector;
  dl_iterate_phdr(collect_module, &collector);
  std::vector<uint8_t> rec;
  trace::append_record(rec, trace::RecordType::ModuleMap, collector.payload.data(),
                       collector.payload.size());
  return rec;
}

// TSC ticks that two back-to-back reads of the TSC see between them (the fastest of many): a
// timed event's measurement holds about one such read beyond the event's own cost.
uint64_t g_tsc_read_ticks = 0;
// TSC ticks (x 1000) of each event's cost that the run's timing of a sampled event cannot see
// (calibrate_probe): the call into the callback and back.
uint64_t g_probe_outside_milli = 0;

uint64_t measure_tsc_read() {
  uint64_t best = ~0ull;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t a = read_tsc();
    const uint64_t b = read_tsc();
    best = std::min(best, b - a);
  }
  return best;
}

// The recorder's cost per event as the run's sampled events measured it (see begin_event), or
// nothing when too few events were timed to say. The start-up calibration times a tight loop
// with everything in the caches; in the run the runtime's and the program's code come in
// between, and an event costs about twice as much.
std::optional<trace::ProbeCost> measured_probe_cost() {
  ProbeHistogram all;
  {
    std::lock_guard<std::mutex> lock(g_states_mutex);
    for (ThreadState* t = g_states; t; t = t->next) all.merge(t->probe);
  }
  int64_t milli = probe_cost_milli_ticks(all, g_tsc_read_ticks);
  if (milli < 0) return std::nullopt;
  milli += static_cast<int64_t>(g_probe_outside_milli);
  trace::ProbeCost cost{};
  cost.metric_count = g_config.metric_count;
  cost.source = static_cast<uint32_t>(trace::ProbeSource::Run);
  for (int m = 0; m < g_config.metric_count; ++m)
    if (g_config.metrics[m] == trace::Metric::Tsc)
      cost.milli_per_event[m] = static_cast<uint64_t>(milli);
  return cost;
}

}  // namespace

void finish(trace::FinishReason reason) {
  if (getpid() != g_pid) return;  // a forked child: the trace belongs to the parent
  if (g_state.load() != kRecording) return;
  // Closes this thread's last strand: its work is only known at its next event.
  ThreadState* self = tls_state;
  if (uint8_t* p = begin_event(self, EventKind::Mark)) {
    p = put_field(p, static_cast<uint64_t>(trace::MarkKind::ProgramEnd));
    end_event(self, p);
  }
  int expected = kRecording;
  // No thread takes the fast path from here (set_limit's other half).
  g_fast_events.store(false, std::memory_order_seq_cst);
  {
    std::lock_guard<std::mutex> lock(g_states_mutex);
    for (ThreadState* t = g_states; t; t = t->next)
      t->fast_end.store(nullptr, std::memory_order_seq_cst);
  }
  if (!g_state.compare_exchange_strong(expected, kFinished)) return;
  trace::Finish f{};
  f.end_tsc = read_tsc();
  f.reason = static_cast<uint32_t>(reason);
  // The oneTBB task each thread is inside now: its end, if still to come, will not be recorded
  // (see tbb_hooks.cpp's Running). Read while the threads run on: a thread that ends its run
  // meanwhile may be listed or not, and the reader ignores a listed run whose end it has.
  std::vector<trace::OpenRun> open_runs;
  {
    std::lock_guard<std::mutex> lock(g_states_mutex);
    for (ThreadState* t = g_states; t; t = t->next) {
      f.tasks_created += t->tasks;
      f.events += t->events;
      f.events_lost += t->lost;
      const uint64_t run = __atomic_load_n(&t->tbb_run_top, __ATOMIC_RELAXED);
      if (run && !t->dead) {
        try {
          open_runs.push_back(trace::OpenRun{t->index, 0, run});
        } catch (...) {  // out of memory: the reader closes such a task without the note
        }
      }
    }
  }
  if (g_open_parallel.load() > 0) f.flags |= trace::kFinishThreadsStillRunning;
  std::vector<uint8_t> tail = module_map_record();
  if (!open_runs.empty()) {
    const uint32_t count = static_cast<uint32_t>(open_runs.size());
    trace::append_record(tail, trace::RecordType::OpenAtEnd, &count, sizeof count, open_runs.data(),
                         open_runs.size() * sizeof(trace::OpenRun));
  }
  if (auto probe = measured_probe_cost()) {
    trace::ProbeCost cost = *probe;
    trace::append_record(tail, trace::RecordType::ProbeCost, &cost, sizeof cost);
  }
  trace::append_record(tail, trace::RecordType::Finish, &f, sizeof f);
  // Events are written until the state flip above; the flip stops new ones, so a final drain
  // sees every event that will ever be recorded (except those of threads mid-event right now).
  writer_finish(tail.data(), tail.size());
}

namespace {

void finish_at_exit() { finish(trace::FinishReason::Exit); }

void on_fork_child() {
  // The child shares the parent's trace file but not its threads: it must never write.
  g_state.store(kOff, std::memory_order_relaxed);
  g_fast_events.store(false, std::memory_order_relaxed);
  tls_state = nullptr;
  tls_fast = &g_no_state.state;
}

// One event as a callback records it (a TaskSchedule: the most frequent kind), called through a
// pointer like the runtime calls the callbacks, with their two paths (recording.hpp's
// fast_path_ok): the fast one, and out of line the timed event, through the same fast body.
template <bool kFast>
TL_INLINE void calibration_body(ThreadState* t, uint64_t* prior, uint64_t* next) {
  if (uint8_t* p = open_event<kFast>(t, EventKind::TaskSchedule)) {
    p = put_id(p, *prior);
    p = put_field(p, 7);
    p = put_id(p, *next);
    close_event<kFast>(t, p);
  }
}
__attribute__((noinline)) void calibration_slow(ThreadState* t, uint64_t* prior, uint64_t* next) {
  record_rare(t, [&](auto fast) { calibration_body<decltype(fast)::value>(t, prior, next); });
}
__attribute__((noinline)) void calibration_event(ThreadState* t, uint64_t* prior, uint64_t* next) {
  if (__builtin_expect(!fast_path_ok(t), 0)) return calibration_slow(t, prior, next);
  calibration_body<true>(t, prior, next);
}
void (*volatile g_calibration_event)(ThreadState*, uint64_t*, uint64_t*) = calibration_event;

// What recording one event costs the recording thread, in TSC ticks: the fastest of several
// batches into a scratch chunk (the slower ones were disturbed). Every strand's measured time
// holds about one such cost per event (the part of the previous callback after its clock read
// and the part of the next one before it): the model takes it out (the probe effect).
trace::ProbeCost calibrate_probe() {
  trace::ProbeCost cost{};
  cost.metric_count = g_config.metric_count;
  auto* chunk = new (std::nothrow) Chunk;
  if (!chunk) return cost;
  ThreadState t;
  t.chunk = chunk;
  set_limit(&t, chunk->data + kChunkBytes);
  constexpr int kBatch = 2000, kBatches = 9;
  uint64_t best = ~0ull;
  for (int b = 0; b < kBatches; ++b) {
    t.pos.store(chunk->data, std::memory_order_relaxed);
    uint64_t prior = 1ull << 40, next = (1ull << 40) + 7;
    const uint64_t start = read_tsc();
    for (int i = 0; i < kBatch; ++i) {
      g_calibration_event(&t, &prior, &next);
      std::swap(prior, next);
    }
    best = std::min(best, read_tsc() - start);
  }
  // The same events, each one timed as the run times one in kProbeSampleEvery: what the
  // timing sees of an event's cost. The rest of the loop's time per event (the call, the
  // callback's prologue and epilogue, the return) is outside what the run can time; it is added
  // to the run's figure (measured_probe_cost), at most half the loop's time per event.
  ThreadState timed;
  timed.chunk = chunk;
  set_limit(&timed, chunk->data + kChunkBytes);
  for (int b = 0; b < kBatches; ++b) {
    timed.pos.store(chunk->data, std::memory_order_relaxed);
    uint64_t prior = 1ull << 40, next = (1ull << 40) + 7;
    for (int i = 0; i < kBatch; ++i) {
      timed.events = 0;  // timed
      g_calibration_event(&timed, &prior, &next);
      std::swap(prior, next);
    }
  }
  const int64_t seen_milli = probe_cost_milli_ticks(timed.probe, g_tsc_read_ticks);
  const uint64_t loop_milli = best * 1000 / kBatch;
  if (seen_milli >= 0 && loop_milli > uint64_t(seen_milli))
    g_probe_outside_milli = std::min<uint64_t>(loop_milli - uint64_t(seen_milli), loop_milli / 2);
  delete chunk;
  // The counters (other metrics) are not calibrated: their per-event cost stays in the work.
  for (int m = 0; m < g_config.metric_count; ++m)
    if (g_config.metrics[m] == trace::Metric::Tsc) cost.milli_per_event[m] = best * 1000 / kBatch;
  return cost;
}

}  // namespace

namespace {

// A file beside the trace holding kReserveBytes, unlinked at once: on a full disk, emptying it
// makes room for the trace's end records (what was lost and when). -1 if it cannot be made.
constexpr off_t kReserveBytes = 64 * 1024;
int make_reserve() {
  std::string path = std::string(g_config.output) + ".reserve-XXXXXX";
  const int fd = mkostemp(path.data(), O_CLOEXEC);
  if (fd < 0) return -1;
  ::unlink(path.c_str());
  if (posix_fallocate(fd, 0, kReserveBytes) == 0) return fd;
  static const char zeros[4096] = {};  // file systems without fallocate
  for (off_t done = 0; done < kReserveBytes; done += sizeof zeros)
    if (::write(fd, zeros, sizeof zeros) != static_cast<ssize_t>(sizeof zeros)) {
      ::close(fd);
      return -1;
    }
  return fd;
}

}  // namespace

bool start_trace() {
  g_fd = ::open(g_config.output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (g_fd < 0) return false;  // the launcher reports the missing trace
  timespec start_mono;
  clock_gettime(CLOCK_MONOTONIC, &start_mono);
  g_pid = getpid();
  host_steal_start();
  g_start_tsc = read_tsc();
  timespec rt;
  clock_gettime(CLOCK_REALTIME, &rt);
  trace::FileHeader header = trace::make_file_header(
      static_cast<uint64_t>(g_pid), g_start_tsc,
      static_cast<uint64_t>(rt.tv_sec) * 1000000000ull + static_cast<uint64_t>(rt.tv_nsec),
      std::vector<trace::Metric>(g_config.metrics, g_config.metrics + g_config.metric_count));
  std::vector<uint8_t> head(reinterpret_cast<uint8_t*>(&header),
                            reinterpret_cast<uint8_t*>(&header) + sizeof header);
  std::vector<uint8_t> schema = trace::make_schema_payload();
  trace::append_record(head, trace::RecordType::EventSchema, schema.data(), schema.size());
  trace::append_record(head, trace::RecordType::RuntimeInfo, &g_runtime_flags, 4,
                       g_runtime_version.data(), g_runtime_version.size());
  std::vector<uint8_t> modules = module_map_record();  // in case the program gets killed
  head.insert(head.end(), modules.begin(), modules.end());

  WriterConfig wc;
  wc.fd = g_fd;
  wc.flush_period_ms = g_config.flush_ms;
  wc.max_chunks = g_config.max_chunks;
  wc.compression = g_config.compression;
  wc.defer_compression =
      g_config.defer_compression && g_config.compression != trace::Compression::None;
  wc.raw_budget = g_config.raw_budget;
  wc.policy = g_config.writer_policy;
  wc.writers = g_config.writers;
  wc.max_writers = g_config.max_writers;
  wc.test_delay_us = g_config.writer_test_delay_us;
  wc.start_tsc = g_start_tsc;
  wc.counters = g_config.counter_count;
  wc.reserve_fd = make_reserve();
  wc.start_monotonic_ns = static_cast<uint64_t>(start_mono.tv_sec) * 1000000000ull +
                          static_cast<uint64_t>(start_mono.tv_nsec);
  writer_configure(wc);
  writer_append(head.data(), head.size());  // before the writer thread exists: no race
  g_state.store(kRecording, std::memory_order_release);
  g_fast_events.store(g_config.counter_count == 0, std::memory_order_relaxed);
  // Events need the recording state; the calibration's go into a scratch chunk of its own.
  g_tsc_read_ticks = measure_tsc_read();
  trace::ProbeCost probe = calibrate_probe();
  std::vector<uint8_t> probe_record;
  trace::append_record(probe_record, trace::RecordType::ProbeCost, &probe, sizeof probe);
  writer_append(probe_record.data(), probe_record.size());
  writer_start();
  std::atexit(finish_at_exit);
  pthread_atfork(nullptr, nullptr, on_fork_child);
  return true;
}

namespace {

// TASKLENS_METRIC: the launcher's checked, comma-separated list of perf names. Anything else
// (a hand-made environment) leaves the TSC alone.
void parse_metrics(const char* list) {
  trace::Metric metrics[trace::kMaxMetrics];
  int n = 0;
  for (const char* p = list;;) {
    const char* end = std::strchr(p, ',');
    size_t size = end ? size_t(end - p) : std::strlen(p);
    trace::Metric m;
    if (n == trace::kMaxMetrics || !trace::metric_from_name(p, size, m)) return;
    for (int i = 0; i < n; ++i)
      if (metrics[i] == m) return;
    metrics[n++] = m;
    if (!end) break;
    p = end + 1;
  }
  g_config.metric_count = static_cast<uint8_t>(n);
  g_config.counter_count = 0;
  g_config.has_tsc = false;
  for (int i = 0; i < n; ++i) {
    g_config.metrics[i] = metrics[i];
    if (metrics[i] == trace::Metric::Tsc)
      g_config.has_tsc = true;
    else
      g_config.counters[g_config.counter_count++] = metrics[i];
  }
}

// Restores an environment variable saved by the launcher, so that programs this one starts are
// not recorded into (and do not overwrite) our trace.
void restore_env(const char* name, const char* saved_name) {
  const char* saved = getenv(saved_name);
  if (saved && *saved)
    setenv(name, saved, 1);
  else
    unsetenv(name);
  unsetenv(saved_name);
}

__attribute__((constructor)) void recorder_constructor() {
  const char* out = getenv("TASKLENS_OUTPUT");
  if (!out || !*out) return;  // loaded without the launcher: stay out of the way
  g_config.enabled = true;
  if (std::strlen(out) >= sizeof g_config.output) return;
  std::strcpy(g_config.output, out);
  if (const char* m = getenv("TASKLENS_METRIC")) parse_metrics(m);
  if (const char* f = getenv("TASKLENS_FLUSH_MS")) {
    long v = std::strtol(f, nullptr, 10);
    if (v > 0 && v < 100000) g_config.flush_ms = static_cast<unsigned>(v);
  }
  if (const char* b = getenv("TASKLENS_BUFFER_MB")) {
    long v = std::strtol(b, nullptr, 10);
    if (v >= 1 && v < 65536)
      g_config.max_chunks = static_cast<size_t>(v) * 1024 * 1024 / kChunkBytes;
  }
  // TASKLENS_WRITERS: how many writer threads compress the events (default: one per 8 CPUs).
  if (const char* w = getenv("TASKLENS_WRITERS")) {
    long v = std::strtol(w, nullptr, 10);
    if (v >= 1 && v <= 1024) g_config.writers = static_cast<unsigned>(v);
  }
  // TASKLENS_MAX_WRITERS: how many writers there may be with the helpers started when they fall
  // behind (default: one per 4 CPUs, and at least TASKLENS_WRITERS).
  if (const char* w = getenv("TASKLENS_MAX_WRITERS")) {
    long v = std::strtol(w, nullptr, 10);
    if (v >= 1 && v <= 1024) g_config.max_writers = static_cast<unsigned>(v);
  }
  unsetenv("TASKLENS_OUTPUT");
  unsetenv("TASKLENS_METRIC");
  unsetenv("TASKLENS_FLUSH_MS");
  if (const char* w = getenv("TASKLENS_PREEMPTIONS")) g_config.watch_preemptions = *w != '0';
  if (const char* f = getenv("TASKLENS_FAULTS")) g_config.watch_faults = *f != '0';
  if (const char* w = getenv("TASKLENS_WARMUP_MS")) {
    unsigned long v = strtoul(w, nullptr, 10);
    g_config.warmup_ms = v > 1000 ? 1000 : unsigned(v);
  }
  // TASKLENS_COMPRESSION: the launcher's checked `--compression`; anything else keeps LZ4.
  if (const char* c = getenv("TASKLENS_COMPRESSION")) {
    if (std::strcmp(c, "zstd") == 0) g_config.compression = trace::Compression::Zstd;
    if (std::strcmp(c, "none") == 0) g_config.compression = trace::Compression::None;
  }
  // TASKLENS_DEFER_COMPRESSION=1 (the launcher, which compresses the trace after the run):
  // blocks are stored raw while the writers keep up, up to TASKLENS_RAW_BUDGET_MB (1 GiB when
  // not given) of them.
  if (const char* d = getenv("TASKLENS_DEFER_COMPRESSION")) g_config.defer_compression = *d == '1';
  g_config.raw_budget = uint64_t{1024} << 20;
  if (const char* r = getenv("TASKLENS_RAW_BUDGET_MB")) {
    unsigned long long v = strtoull(r, nullptr, 10);
    if (v < (1ull << 40)) g_config.raw_budget = uint64_t(v) << 20;
  }
  unsetenv("TASKLENS_DEFER_COMPRESSION");
  unsetenv("TASKLENS_RAW_BUDGET_MB");
  // TASKLENS_WRITER_POLICY=idle|batch|normal: how the writers are scheduled (WriterPolicy).
  if (const char* w = getenv("TASKLENS_WRITER_POLICY")) {
    if (std::strcmp(w, "idle") == 0) g_config.writer_policy = WriterPolicy::Idle;
    if (std::strcmp(w, "normal") == 0) g_config.writer_policy = WriterPolicy::Normal;
  }
  // Tests only: slows the writer down so that the program's threads must wait for buffers.
  if (const char* d = getenv("TASKLENS_TEST_WRITER_DELAY_US")) {
    long v = std::strtol(d, nullptr, 10);
    if (v > 0 && v < 1000000) g_config.writer_test_delay_us = static_cast<unsigned>(v);
  }
  unsetenv("TASKLENS_WRITER_POLICY");
  unsetenv("TASKLENS_TEST_WRITER_DELAY_US");
  unsetenv("TASKLENS_BUFFER_MB");
  unsetenv("TASKLENS_WRITERS");
  unsetenv("TASKLENS_MAX_WRITERS");
  unsetenv("TASKLENS_PREEMPTIONS");
  unsetenv("TASKLENS_FAULTS");
  unsetenv("TASKLENS_WARMUP_MS");
  unsetenv("TASKLENS_COMPRESSION");
  restore_env("LD_PRELOAD", "TASKLENS_SAVED_LD_PRELOAD");
  restore_env("OMP_TOOL_LIBRARIES", "TASKLENS_SAVED_OMP_TOOL_LIBRARIES");
}

__attribute__((destructor)) void recorder_destructor() { finish(trace::FinishReason::Exit); }

// --------------------------------------------------------------------- starting at main()

// What the loaded objects (the program and its libraries) link. Our own preloaded OpenMP
// runtime does not count: it is there for every program.
struct Needed {
  bool openmp = false;
  bool tbb = false;      // oneTBB (libtbb.so.12, interface 12)
  bool tbb_old = false;  // TBB 2017-2020 (libtbb.so.2): another ABI
};

void classify_needed(const char* name, Needed& need) {
  const char* base = std::strrchr(name, '/');
  base = base ? base + 1 : name;
  if (std::strncmp(base, "libomp.so", 9) == 0 || std::strncmp(base, "libgomp.so", 10) == 0 ||
      std::strncmp(base, "libiomp5.so", 11) == 0)
    need.openmp = true;
  if (std::strncmp(base, "libtbb.so", 9) == 0 || std::strncmp(base, "libtbb_debug.so", 15) == 0) {
    const char* version = std::strstr(base, ".so.");
    if (version && std::strcmp(version, ".so.2") == 0)
      need.tbb_old = true;
    else
      need.tbb = true;
  }
}

int scan_needed(dl_phdr_info* info, size_t, void* out) {
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
    const auto* dyn =
        reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    uintptr_t strtab = 0;
    for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d)
      if (d->d_tag == DT_STRTAB) strtab = d->d_un.d_ptr;
    if (!strtab) return 0;
    if (strtab < info->dlpi_addr) strtab += info->dlpi_addr;  // not relocated in place
    for (const ElfW(Dyn)* d = dyn; d->d_tag != DT_NULL; ++d)
      if (d->d_tag == DT_NEEDED)
        classify_needed(reinterpret_cast<const char*>(strtab + d->d_un.d_val),
                        *static_cast<Needed*>(out));
  }
  return 0;
}

using MainFn = int (*)(int, char**, char**);
MainFn g_real_main = nullptr;

// Starts the OpenMP runtime before main() so that the program's serial code before its first
// OpenMP construct is measured too (the runtime otherwise starts lazily at that construct), and
// marks where main() begins so that the runtime's own start-up is not counted as program work.
int main_with_recording(int argc, char** argv, char** envp) {
  Needed need;
  if (g_config.enabled) dl_iterate_phdr(scan_needed, &need);
  if (g_config.enabled) threads_prepare();
  // Before the runtime starts and the trace's first event: the recording's time holds none of it.
  if (g_config.enabled && (need.openmp || need.tbb || need.tbb_old))
    warm_up_cpus(g_config.warmup_ms);
  // oneTBB first: its runtime info goes into the trace's head, which OMPT may write.
  if (need.tbb || need.tbb_old) tbb_prepare(need.tbb_old && !need.tbb);
  if (need.openmp) {
    using NumProcsFn = int (*)();
    if (auto num_procs = reinterpret_cast<NumProcsFn>(dlsym(RTLD_DEFAULT, "omp_get_num_procs")))
      num_procs();
  }
  if ((need.tbb || need.tbb_old) && g_state.load() == kOff && start_trace()) {
    // No OpenMP runtime started the trace: main() runs in a root task of our own.
    ThreadState* t = thread_init(kThreadInitial);
    if (uint8_t* p = begin_event(t, EventKind::ThreadBegin)) {
      p = put_field(p, static_cast<uint64_t>(kThreadInitial));
      end_event(t, p);
    }
    if (t && !t->dead) {
      g_root_task = new_id(t);
      t->tbb_current = g_root_task;
      if (uint8_t* p = begin_event(t, EventKind::ImplicitBegin)) {
        p = put_id(p, 0);            // no parallel region
        p = put_id(p, g_root_task);  // the initial task
        p = put_field(p, 1);         // team size
        p = put_field(p, 0);         // index
        p = put_field(p, 1);         // ompt_task_initial
        end_event(t, p);
      }
    }
  }
  if (need.openmp || need.tbb || need.tbb_old) {
    ThreadState* t = g_state.load() == kRecording ? state() : nullptr;
    if (uint8_t* p = begin_event(t, EventKind::Mark)) {
      p = put_field(p, static_cast<uint64_t>(trace::MarkKind::MainStart));
      end_event(t, p);
    }
  }
  int status = g_real_main(argc, argv, envp);
  if (need.openmp || need.tbb || need.tbb_old) {
    ThreadState* t = g_state.load() == kRecording ? state() : nullptr;
    if (uint8_t* p = begin_event(t, EventKind::Mark)) {
      p = put_field(p, static_cast<uint64_t>(trace::MarkKind::MainReturn));
      end_event(t, p);
    }
  }
  return status;
}

}  // namespace
}  // namespace tasklens::recorder

using LibcStartMain = int (*)(tasklens::recorder::MainFn, int, char**, void (*)(), void (*)(),
                              void (*)(), void*);

// Interposed (the recorder is preloaded first) to run main() through main_with_recording.
TL_EXPORT int __libc_start_main(tasklens::recorder::MainFn main, int argc, char** argv,
                                void (*init)(), void (*fini)(), void (*rtld_fini)(),
                                void* stack_end) {
  auto real = reinterpret_cast<LibcStartMain>(dlsym(RTLD_NEXT, "__libc_start_main"));
  tasklens::recorder::g_real_main = main;
  return real(tasklens::recorder::g_config.enabled ? tasklens::recorder::main_with_recording : main,
              argc, argv, init, fini, rtld_fini, stack_end);
}

// The definitions of the weak references of include/tasklens/tasklens.h.
TL_EXPORT void tasklens_region_begin(const char* name) noexcept {
  tasklens::recorder::region_event(tasklens::trace::EventKind::RegionBegin, name);
}

TL_EXPORT void tasklens_region_end(const char* name) noexcept {
  tasklens::recorder::region_event(tasklens::trace::EventKind::RegionEnd, name);
}
