// The recorder's core, shared by its event sources (the OMPT tool in ompt_tool.cpp, the oneTBB
// hooks in tbb_hooks.cpp, the user regions): per-thread state, the inline hot path that stores
// one event into the thread's chunk, and the start and end of the trace file (recording.cpp).
//
// Hot-path rules: no locks, no allocation, no syscalls per event; one TSC read, a few plain
// 8-byte stores into the thread's current chunk (raw events, raw_events.hpp: the writer encodes
// them), one release store. Anything else (encoding, compression, file I/O, symbols) happens on
// the writer thread or at report time. The recorder never throws into or
// aborts the host: every failure turns recording off for the affected thread or process.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <type_traits>

#include "recorder/buffer.hpp"
#include "recorder/metric.hpp"
#include "recorder/probe.hpp"
#include "recorder/raw_events.hpp"
#include "recorder/regions.hpp"
#include "trace/format.hpp"

#define TL_INLINE __attribute__((always_inline)) inline
#define TL_EXPORT extern "C" __attribute__((visibility("default")))

namespace tasklens::recorder {

using trace::EventKind;

struct TaskShadow;  // tbb_hooks.cpp

struct ThreadState {
  ThreadBuffer* buffer = nullptr;
  Chunk* chunk = nullptr;
  // The end of the thread's last complete event in its chunk. Storing it publishes the event:
  // the writer reads it (ThreadBuffer::producer_pos) to write the current chunk's tail, so an
  // event costs one store of where it ends. Written by the thread only (release), read by it
  // with plain loads.
  std::atomic<uint8_t*> pos{nullptr};
  uint8_t* limit = nullptr;
  // The fast path's end (fast_event_room): kMaxRawEventBytes before `limit` while the recording
  // allows the fast path (g_fast_events), null otherwise, so that one comparison of `pos` says
  // both. Written by the thread (set_limit) and nulled by finish() from another: atomic, read
  // and written with plain moves.
  std::atomic<uint8_t*> fast_end{nullptr};
  uint64_t last_counter[trace::kMaxMetrics] = {};  // per perf counter (Config::counters)
  uint64_t next_id = 0;
  uint64_t tasks = 0;
  uint64_t events = 0;
  uint32_t index = 0;
  bool dead = false;       // this thread records nothing (see thread_init, make_room)
  bool no_memory = false;  // ... because it could not get buffer memory: its events are lost
  uint64_t lost = 0;
  // The recorder's own cost measured in the run (see begin_event): one event in
  // kProbeSampleEvery has its whole recording timed (TSC ticks, in `probe`, at the end).
  uint64_t sample_start = 0;
  // One-thread teams (libomp runs them serialized): sizes of the teams this thread is in, and
  // what lets two events share one TSC read there (see begin_event's reuse_time).
  uint8_t team_depth = 0;
  bool one_thread_team = false;  // the innermost team has one thread (enter_or_leave_team)
  uint32_t team_one[16] = {};
  // The last task this thread created, its parent, and this thread's event count after its
  // creation and after its last taskwait's begin: a switch to that task, or the taskwait's end,
  // with no event since then is written compact (raw_events.hpp's raw-only kinds).
  uint64_t created_id = 0, created_parent = 0, created_at_event = ~0ull, wait_at_event = ~0ull;
  PerfCounters counters;
  RegionCache regions;  // user region names seen by this thread (see regions.hpp)
  // oneTBB (tbb_hooks.cpp): the task this thread runs (0: none; the main thread starts in the
  // root task), the call site a wrapper of include/tasklens/tbb.h announced (0: none) with its
  // kind, and the thread's spare task shadows.
  uint64_t tbb_current = 0;
  // The task of the thread's innermost recorded run (0: none): while it is tbb_current, events
  // may leave it out (the compact kinds of format.hpp). finish() reads it from the thread that
  // ends the recording (the OpenAtEnd record): written with relaxed atomic stores (plain moves).
  uint64_t tbb_run_top = 0;
  uint64_t tbb_site = 0;
  uint32_t tbb_site_kind = 0;
  bool tbb_in_init = false;  // inside the process's first call into oneTBB (its start-up)
  uint32_t shadow_free_count = 0;
  TaskShadow* shadow_free = nullptr;
  ThreadState* next = nullptr;
  // Last: 4 KiB touched once in 64 events, kept out of the way of the fields every event uses.
  ProbeHistogram probe;
};

// Configuration, read once in the library constructor (before main, single-threaded). It must

// Configuration, read once in the library constructor (before main, single-threaded). It must
// need no dynamic initialization: C++ initializers may run after the constructor.
struct Config {
  bool enabled = false;
  char output[4096] = {};
  // The recorded metrics (`record --metric a,b`), the primary one first: the file header's list.
  uint8_t metric_count = 1;
  trace::Metric metrics[trace::kMaxMetrics] = {trace::Metric::Tsc};
  // Those read from perf counters (all but the TSC), in the same order: each event carries a
  // delta of each. 0 (the default, TSC alone) keeps the hot path at one branch.
  uint8_t counter_count = 0;
  trace::Metric counters[trace::kMaxMetrics] = {};
  bool has_tsc = true;  // the TSC is one of the metrics: preemptions are watched for it
  unsigned flush_ms = 100;
  size_t max_chunks = 1024;
  bool watch_preemptions = true;
  bool watch_faults = true;  // TASKLENS_FAULTS=0: slow page faults are not watched (switches.cpp)
  unsigned warmup_ms = 3;    // TASKLENS_WARMUP_MS: every CPU kept busy before main() (warmup.hpp)
  trace::Compression compression = trace::Compression::Lz4;  // of event blocks
  bool defer_compression = false;                    // TASKLENS_DEFER_COMPRESSION (WriterConfig)
  uint64_t raw_budget = 0;                           // TASKLENS_RAW_BUDGET_MB (WriterConfig)
  WriterPolicy writer_policy = WriterPolicy::Batch;  // TASKLENS_WRITER_POLICY (WriterConfig)
  unsigned writers = 0;               // writer threads; 0: automatic (WriterConfig::writers)
  unsigned max_writers = 0;           // with helpers; 0: automatic (WriterConfig::max_writers)
  unsigned writer_test_delay_us = 0;  // tests only (WriterConfig::test_delay_us)
};
extern Config g_config;

enum State : int { kOff = 0, kRecording = 1, kFinished = 2 };
extern std::atomic<int> g_state;
// Recording, with the TSC as the only metric: the frequent callbacks may take their fast path.
// Each thread's fast_end says so too (set_limit), which is what the fast path reads; this flag
// is what set_limit and the slow path go by. Cleared before the state leaves kRecording.
extern std::atomic<bool> g_fast_events __attribute__((visibility("hidden")));
extern pid_t g_pid;
extern uint32_t g_runtime_flags;       // trace::RuntimeFlags, written into the trace's head
extern std::string g_runtime_version;  // likewise
extern std::atomic<int> g_open_parallel;
extern uint64_t g_root_task;  // id of the initial task (the main thread's task before any other)

// The thread's state, created on its first event. __thread, not thread_local: an extern
// thread_local would go through a TLS wrapper call on every access.
extern __thread ThreadState* tls_state __attribute__((tls_model("initial-exec")));
// What the frequent callbacks' fast path reads instead (fast_path_ok): the thread's state once it
// has one, before that (and in a forked child) a state without room, never null, so that the
// fast path tests no pointer: its one comparison sends such a thread to the slow path, which
// reads tls_state.
extern __thread ThreadState* tls_fast __attribute__((tls_model("initial-exec")));

// ThreadInfo types (ompt_thread_t values).
inline constexpr int kThreadInitial = 1, kThreadWorker = 2, kThreadOther = 3;

ThreadState* thread_init(int type);
bool make_room(ThreadState* t);
// Time the recorder spent on the program's thread on its own bookkeeping outside an event
// (mapping and first touching its memory): counted with the stalls (RecorderStats) and written
// as a RecorderStall event, so that the model takes it out of the strand it falls in.
void note_own_time(ThreadState* t, uint64_t ticks);
// Writes the delta of every perf counter since the thread's previous event (Config::counters).
uint8_t* put_counter_deltas(ThreadState* t, uint8_t* p);
// Opens the trace file and writes its head (header, schema, runtime info with g_runtime_flags
// and g_runtime_version, module map), then starts the writer. Returns false if the file cannot
// be opened (the launcher reports the missing trace). Called once, by the first runtime to
// start (OMPT's initialize, or main_with_recording for a oneTBB program).
bool start_trace();
// Loads what the pthread_create hook needs (threads.cpp) before main(), so that the program's
// first thread creation does not pay for it.
void threads_prepare();
// Ends the trace (idempotent).
void finish(trace::FinishReason reason);

TL_INLINE ThreadState* state() {
  ThreadState* t = tls_state;
  if (__builtin_expect(t == nullptr, 0)) t = thread_init(kThreadOther);
  return t;
}

// One event in this many has its recording timed (a power of two): two more TSC reads every 64
// events cost under a tick per event, and a run of 1 M events still gives
// 15,000 samples.
inline constexpr uint64_t kProbeSampleEvery = 64;

TL_INLINE uint64_t new_id(ThreadState* t) { return ++t->next_id; }

// The frequent callbacks start timing their sampled event here, at their top, so that what they
// do before begin_event (ids, the checks that let two events share a clock read) is in the
// measured cost too: where a clock read costs tens of ns, begin_event to end_event holds only
// about half of a callback's time, and the rest would stay in the work.
TL_INLINE void probe_from_here(ThreadState* t) {
  if (__builtin_expect((t->events & (kProbeSampleEvery - 1)) == 0, 0)) t->sample_start = read_tsc();
}

TL_INLINE bool in_one_thread_team(const ThreadState* t) { return t->one_thread_team; }

// Enters (begin) or leaves a team of `team_size` threads: read at every task switch and
// taskwait, so what the innermost team is is kept ready in one flag.
inline void enter_or_leave_team(ThreadState* t, bool begin, unsigned team_size) {
  if (begin) {
    if (t->team_depth < 16) t->team_one[t->team_depth] = team_size == 1;
    ++t->team_depth;
  } else if (t->team_depth > 0) {
    --t->team_depth;
  }
  t->one_thread_team =
      t->team_depth > 0 && t->team_depth <= 16 && t->team_one[t->team_depth - 1] != 0;
}

// Where the thread's next event goes (ThreadState::pos; only the thread itself writes it).
TL_INLINE uint8_t* pos_of(const ThreadState* t) { return t->pos.load(std::memory_order_relaxed); }

// Starts an event: returns where its fields go, or null if this thread cannot record. With
// `reuse_time` the event takes the previous event's timestamp instead of reading the TSC (up to
// a quarter of a fine-grained task): only for events that follow the previous one with
// nothing of the program in between. The event is raw (raw_events.hpp): its writer encodes it.
// A thread that records nothing (dead) has no room (pos == limit): make_room says no.
TL_INLINE uint8_t* begin_event(ThreadState* t, EventKind kind, bool reuse_time = false) {
  if (__builtin_expect(t == nullptr, 0)) return nullptr;
  if (__builtin_expect(g_state.load(std::memory_order_relaxed) != kRecording, 0)) return nullptr;
  if (__builtin_expect(static_cast<size_t>(t->limit - pos_of(t)) < kMaxRawEventBytes, 0) &&
      !make_room(t))
    return nullptr;
  // The probe effect measured where it happens (cold caches, the runtime's code in between),
  // not only in the start-up calibration's tight loop: end_event adds the time since here (or
  // since the top of the callback, probe_from_here).
  if (__builtin_expect((t->events & (kProbeSampleEvery - 1)) == 0, 0) && t->sample_start == 0)
    t->sample_start = read_tsc();
  uint8_t* p = put_raw(
      pos_of(t), reuse_time ? static_cast<uint64_t>(kind) | kSameTime : raw_head(kind, read_tsc()));
  // The default, TSC alone, pays this one predictable branch on a global for the counters.
  if (__builtin_expect(g_config.counter_count != 0, 0)) p = put_counter_deltas(t, p);
  return p;
}

// A field of an event (raw_events.hpp): a plain value, an id, a code address or a data address
// (the schema says which; the writer takes the deltas of the last three).
TL_INLINE uint8_t* put_field(uint8_t* p, uint64_t v) { return put_raw(p, v); }
TL_INLINE uint8_t* put_id(uint8_t* p, uint64_t id) { return put_raw(p, id); }
TL_INLINE uint8_t* put_ptr(uint8_t* p, const void* ptr) {
  return put_raw(p, reinterpret_cast<uint64_t>(ptr));
}
TL_INLINE uint8_t* put_addr(uint8_t* p, const void* addr) {
  return put_raw(p, reinterpret_cast<uint64_t>(addr));
}

// The fast path of the frequent callbacks (ompt_tool.cpp's task, schedule and sync callbacks).
// Most events need none of begin_event's rare cases: a thread without state, the end of the
// recording, a full chunk, perf counters, the one event in kProbeSampleEvery that is timed.
// When one check here says none applies, the callback records with begin_fast/end_fast and calls
// nothing, and the compiler then keeps it to caller-saved registers (no pushes, no pops); any
// rare case goes to the callback's slow path, a tail call (docs/benchmarks.md gives the
// instructions per event this saves).
//
// The timed event takes the slow path but records through the same fast body when it can
// (fast_event_room, then end_sample): the probe effect the run measures is then the fast path's,
// which nearly every event takes.
TL_INLINE bool fast_event_room(const ThreadState* t) {
  return t != nullptr && pos_of(t) < t->fast_end.load(std::memory_order_relaxed);
}

// Sets the thread's chunk end and its fast path's end (by the thread itself). Against finish(),
// which clears g_fast_events and then every fast_end: either this sees the flag cleared, or
// finish's null comes after this store.
inline void set_limit(ThreadState* t, uint8_t* limit) {
  t->limit = limit;
  t->fast_end.store(limit ? limit - kMaxRawEventBytes + 1 : nullptr, std::memory_order_seq_cst);
  if (!g_fast_events.load(std::memory_order_seq_cst))
    t->fast_end.store(nullptr, std::memory_order_relaxed);
}
// Whether a frequent callback takes its fast path: room, the recording allowing it, and not the
// event in kProbeSampleEvery that is timed. `t` is tls_fast (never null).
TL_INLINE bool fast_path_ok(const ThreadState* t) {
  return pos_of(t) < t->fast_end.load(std::memory_order_relaxed) &&
         (t->events & (kProbeSampleEvery - 1)) != 0;
}

TL_INLINE uint8_t* begin_fast(ThreadState* t, EventKind kind, bool reuse_time = false) {
  return put_raw(pos_of(t),
                 reuse_time ? static_cast<uint64_t>(kind) | kSameTime : raw_head(kind, read_tsc()));
}

TL_INLINE void end_fast(ThreadState* t, uint8_t* p) {
  t->pos.store(p, std::memory_order_release);  // published (ThreadState::pos)
  ++t->events;
}

// Ends the timing of a sampled event (probe_from_here or begin_event started it).
TL_INLINE void end_sample(ThreadState* t) {
  if (__builtin_expect(t->sample_start != 0, 0)) {
    t->probe.add(read_tsc() - t->sample_start);
    t->sample_start = 0;
  }
}

// A frequent callback's body records through one of the two paths: kFast (begin_fast/end_fast),
// or the general one (begin_event/end_event).
template <bool kFast>
TL_INLINE uint8_t* open_event(ThreadState* t, EventKind kind, bool reuse_time = false);
template <bool kFast>
TL_INLINE void close_event(ThreadState* t, uint8_t* p);

// The rare cases' path of a frequent callback, which calls it from an out-of-line function (a
// tail call from the fast path): starts timing the sampled event, then records through the fast
// body when the recording and the chunk allow it, so that the timed cost is the fast path's, and
// through the general one otherwise. `body(std::bool_constant<kFast>)` records the event.
template <class Body>
TL_INLINE void record_rare(ThreadState* t, Body&& body) {
  if (t && !t->dead) {
    probe_from_here(t);
    // A thread that began before the recording allowed the fast path takes it from here.
    if (__builtin_expect(t->fast_end.load(std::memory_order_relaxed) == nullptr, 0) &&
        g_fast_events.load(std::memory_order_relaxed))
      set_limit(t, t->limit);
  }
  if (fast_event_room(t)) {
    body(std::true_type{});
    end_sample(t);
  } else {
    body(std::false_type{});
  }
}

TL_INLINE void end_event(ThreadState* t, uint8_t* p) {
  end_fast(t, p);
  end_sample(t);
}

template <bool kFast>
TL_INLINE uint8_t* open_event(ThreadState* t, EventKind kind, bool reuse_time) {
  return kFast ? begin_fast(t, kind, reuse_time) : begin_event(t, kind, reuse_time);
}
template <bool kFast>
TL_INLINE void close_event(ThreadState* t, uint8_t* p) {
  if (kFast)
    end_fast(t, p);
  else
    end_event(t, p);
}

}  // namespace tasklens::recorder
