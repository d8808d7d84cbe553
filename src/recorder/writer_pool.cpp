// The writer threads: each compresses the full chunks of its own threads (buffer slot % number
// of writers) without any lock, writes them under file_mutex, recycles them, and every flush
// period writes the published part of its threads' current chunks and their context switches.
// Writer 0 also writes the side records and the clock pairs, faults the arena in ahead and
// starts helpers while the writers fall behind: a helper owns no thread and writes the full
// chunks of whichever thread has some. Each thread's claim keeps its chunks to one writer at a
// time, in order.
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "recorder/buffer.hpp"
#include "recorder/host_steal.hpp"
#include "recorder/metric.hpp"
#include "recorder/pool.hpp"
#include "recorder/switches.hpp"
#include "trace/format.hpp"
#include "trace/reader.hpp"
#include "trace/repack.hpp"

namespace tasklens::recorder {
namespace {

// Called under file_mutex (or before the writers run). `force`: the end records, written even
// after a failure.
void write_all(const void* data, size_t size, bool force = false) {
  Pool& pool_ = pool();
  if (pool_.write_failed.load(std::memory_order_relaxed) && !force) {
    pool_.write_errors.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  int fd = pool_.config.fd;
  const char* p = static_cast<const char*>(data);
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::write(fd, p + done, size - done);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    // Disk full or another error: drop the data, never disturb the host program. A record
    // written in part is cut off so that the file stays whole records (readable up to here).
    const int err = n < 0 ? errno : ENOSPC;  // a write of 0 bytes: no room
    if (done > 0) {
      const off_t end = ::lseek(fd, 0, SEEK_CUR);
      if (end >= static_cast<off_t>(done) && ::ftruncate(fd, end - static_cast<off_t>(done)) == 0)
        ::lseek(fd, end - static_cast<off_t>(done), SEEK_SET);
    }
    pool_.write_errors.fetch_add(1, std::memory_order_relaxed);
    if (!pool_.write_failed.load(std::memory_order_relaxed)) {
      timespec ts;
      clock_gettime(CLOCK_MONOTONIC, &ts);
      const uint64_t now =
          static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
      pool_.first_write_errno = static_cast<uint32_t>(err);
      pool_.first_write_error_ms = static_cast<uint32_t>(
          now > pool_.config.start_monotonic_ns ? (now - pool_.config.start_monotonic_ns) / 1000000
                                                : 0);
      pool_.write_failed.store(true, std::memory_order_relaxed);
    }
    return;
  }
}

// Compresses `raw` bytes at `src` into `out` (room for trace::compress_bound(raw)) with the
// configured codec; returns the compressed size, or 0 when the block is better stored as it is.
size_t compress_block(Writer& w, const uint8_t* src, size_t raw, uint8_t* out) {
  const WriterConfig& config = pool().config;
  if (config.compression == trace::Compression::Zstd && !w.cctx) w.cctx = ZSTD_createCCtx();
  return trace::compress_events(config.compression, config.zstd_level, w.cctx, src, raw, out);
}

}  // namespace

void write_locked(const void* data, size_t size) {
  std::lock_guard<std::mutex> lock(file_mutex());
  write_all(data, size);
}

// A TSC reading and CLOCK_MONOTONIC taken together: the readers convert the kernel's switch
// times into TSC ticks by these pairs, so a pair whose two readings an interrupt, a preemption or
// the virtual machine's host split apart would move every switch it converts by that much, into
// the wrong strand. The pair is read a few times between two TSC readings, and the tightest kept.
static trace::ClockSync clock_pair() {
  trace::ClockSync best{0, 0};
  uint64_t best_width = ~uint64_t(0);
  for (int attempt = 0; attempt < 8; ++attempt) {
    timespec ts;
    const uint64_t before = read_tsc();
    clock_gettime(CLOCK_MONOTONIC, &ts);
    const uint64_t after = read_tsc();
    if (after - before < best_width) {
      best_width = after - before;
      best = {before + (after - before) / 2,
              static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec)};
    }
  }
  return best;
}

void clock_sync_record() {
  const trace::ClockSync cs = clock_pair();
  uint8_t rec[sizeof(trace::RecordHeader) + sizeof cs];
  trace::RecordHeader rh{static_cast<uint32_t>(trace::RecordType::ClockSync), sizeof rec};
  std::memcpy(rec, &rh, sizeof rh);
  std::memcpy(rec + sizeof rh, &cs, sizeof cs);
  write_locked(rec, sizeof rec);
}

// Deferred compression: a thread's blocks are stored raw while its backlog of full chunks is
// under behind_chunks_for() (buffer.hpp), no thread waits for a chunk, and the raw budget lasts.
bool may_store_raw(Pool& p, const Writer& w, const ThreadBuffer* b) {
  return p.config.defer_compression &&
         b->full.size() <
             behind_chunks_for(p.config.max_chunks, p.registered.load(std::memory_order_relaxed)) &&
         w.waiters.load(std::memory_order_relaxed) == 0 &&
         p.raw_stored.load(std::memory_order_relaxed) < p.config.raw_budget;
}

void write_block(Writer& w, ThreadBuffer* b, Chunk* c, uint32_t upto, bool store_raw) {
  if (upto <= c->written) return;
  const uint8_t* src = c->data + c->written;
  const size_t raw = upto - c->written;
  // Sized once for a whole chunk: no allocation per block.
  constexpr size_t kHead = sizeof(trace::RecordHeader) + sizeof(trace::EventBlockHeader);
  constexpr size_t kEncodedMax = encoded_bound(kChunkBytes);
  if (!w.scratch)
    w.scratch = static_cast<uint8_t*>(std::malloc(kHead + trace::compress_bound(kEncodedMax)));
  if (!w.encoded) w.encoded = static_cast<uint8_t*>(std::malloc(kEncodedMax));
  if (!w.scratch || !w.encoded) return;
  uint8_t* out = w.scratch + kHead;
  // Stored as they are: encoded straight into the block.
  const size_t events =
      encode_raw_events(b->stream, src, raw, store_raw ? out : w.encoded, pool().config.counters);
  if (events == 0) {  // nothing whole to write (encode_raw_events dropped what it cannot read)
    c->written = upto;
    return;
  }
  size_t packed = store_raw ? 0 : compress_block(w, w.encoded, events, out);
  if (store_raw) pool().raw_stored.fetch_add(events, std::memory_order_relaxed);
  trace::EventBlockHeader bh{};
  bh.thread = c->thread;
  bh.chunk_seq = c->seq;
  bh.offset = c->written;
  bh.raw_size = static_cast<uint32_t>(events);
  if (packed == 0) {
    bh.compression = static_cast<uint8_t>(trace::Compression::None);
    if (!store_raw) std::memcpy(out, w.encoded, events);
    packed = events;
  } else {
    bh.compression = static_cast<uint8_t>(pool().config.compression);
  }
  trace::RecordHeader rh{static_cast<uint32_t>(trace::RecordType::EventBlock),
                         static_cast<uint32_t>(kHead + packed)};
  std::memcpy(w.scratch, &rh, sizeof rh);
  std::memcpy(w.scratch + sizeof rh, &bh, sizeof bh);
  write_locked(w.scratch, rh.size);
  c->written = upto;
}

namespace {

// ------------------------------------------------------------------------------ side records

void write_side_records(Pool& p) {
  SideRecord* list = p.side.exchange(nullptr, std::memory_order_acquire);
  SideRecord* ordered = nullptr;  // the stack is newest first: reverse it
  while (list) {
    SideRecord* next = list->next;
    list->next = ordered;
    ordered = list;
    list = next;
  }
  if (!ordered) return;
  std::lock_guard<std::mutex> lock(file_mutex());
  while (ordered) {
    SideRecord* next = ordered->next;
    write_all(ordered->data, ordered->size);
    // Not freed: a record comes from a program thread's malloc arena, and free() here would
    // take that arena's lock, which the program's thread may want at the same moment. They are
    // few (one per thread, region name and call site).
    ordered = next;
  }
}

// ------------------------------------------------------------------------------ recycling

// A written chunk goes back to its thread when that thread has few spares, else to the stash
// of the thread's writer, which serves its threads waiting for one.
constexpr uint32_t kSpareKeep = 4;

// The writer whose stash and spare rings a buffer's chunks go back through: its own writer, or
// the solo context when no writer ever ran.
Writer& home(Pool& p, const ThreadBuffer* b) {
  return p.writer_count.load(std::memory_order_relaxed) ? writer_of(p, b) : p.solo;
}

// Called with b's claim held (so that this is the one producer of b's spare ring), by b's own
// writer or by a helper (`helper`), or by the finishing thread once every writer has stopped.
// The chunk goes back to its thread when that thread waits for one (woken here) or has room for
// a spare while its writer serves no waiting thread; else to the stash of b's writer, which
// serves its waiting threads, or, from a helper (a stash is its writer's alone), to the shared
// stash the writers serve waiting threads from.
void give_back(Pool& p, ThreadBuffer* b, Chunk* c, bool helper) {
  Writer& w = home(p, b);
  c->written = 0;
  c->empty();
  const bool waiting = b->waiting.load(std::memory_order_acquire);
  if ((waiting || w.waiters.load(std::memory_order_acquire) == 0) && b->spare.size() < kSpareKeep &&
      b->spare.push(c)) {
    if (waiting) {
      b->spare_word.fetch_add(1, std::memory_order_release);
      futex_wake_one(&b->spare_word);
    }
    return;
  }
  if (!helper) {
    w.stash.push_back(c);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(p.shared_stash_mutex);
    p.shared_stash.push_back(c);
  }
  if (w.waiters.load(std::memory_order_acquire) != 0) wake_writer(w);
}

// Moves writer w's stashed chunks to b's spare ring while it has room, unless another writer
// holds b's claim (then that one fills it).
void refill_spares(Writer& w, ThreadBuffer* b) {
  if (!try_claim(b)) return;
  while (!w.stash.empty() && b->spare.size() < kSpareKeep && b->spare.push(w.stash.back()))
    w.stash.pop_back();
  release_claim(b);
}

// Moves chunks from the shared stash (what helpers could not give back) to writer w's stash.
void take_shared_stash(Pool& p, Writer& w) {
  std::lock_guard<std::mutex> lock(p.shared_stash_mutex);
  while (!p.shared_stash.empty() && w.stash.size() < kSpareKeep) {
    w.stash.push_back(p.shared_stash.back());
    p.shared_stash.pop_back();
  }
}

// Serves writer `me`'s threads that wait for a chunk: from its stash, else from the shared
// stash, else from any other thread's spares (a thread that stopped making events would
// otherwise keep them; taking from a spare ring is safe for any number of takers), and wakes
// them. A spare ring has one producer: whoever holds its thread's claim pushes to it.
void serve_waiters(Pool& p, unsigned me) {
  Writer& w = p.writers[me];
  if (w.waiters.load(std::memory_order_acquire) == 0) {
    // Nobody of ours waits: what the stash holds goes back to our threads' spare rings, where
    // the other writers find it for their waiting threads (a stash only its writer sees).
    for (ThreadBuffer* b = p.buffers.load(std::memory_order_acquire); b && !w.stash.empty();
         b = b->next.load(std::memory_order_relaxed))
      if (owned_by(p, b, me)) refill_spares(w, b);
    return;
  }
  for (ThreadBuffer* b = p.buffers.load(std::memory_order_acquire); b;
       b = b->next.load(std::memory_order_relaxed)) {
    if (!owned_by(p, b, me) || !b->waiting.load(std::memory_order_acquire)) continue;
    if (w.stash.empty()) take_shared_stash(p, w);
    if (w.stash.empty()) {
      for (ThreadBuffer* o = p.buffers.load(std::memory_order_acquire); o && w.stash.empty();
           o = o->next.load(std::memory_order_relaxed))
        if (o != b && !o->waiting.load(std::memory_order_relaxed))
          if (Chunk* c = o->spare.pop()) w.stash.push_back(c);
    }
    // Without the claim, a helper is writing b's chunks: it gives one back to b (which waits)
    // as soon as it is written.
    refill_spares(w, b);
    b->spare_word.fetch_add(1, std::memory_order_release);
    futex_wake_one(&b->spare_word);
  }
}

// ------------------------------------------------------------------------------ passes

// Writes b's full chunks in order with `ctx`'s compression context, and recycles them, unless
// another writer holds b's claim (it is writing them). Returns whether it wrote any. Only those
// there when it starts: a thread that fills chunks as fast as they are written would otherwise
// keep its writer here, and the writer's other threads, its flushes and (writer 0) the helpers'
// start would wait.
// Under b's claim: writes up to `n` of b's full chunks, in order, and recycles them.
bool write_claimed_full_chunks(Pool& p, Writer& ctx, ThreadBuffer* b, uint32_t n, bool helper) {
  bool wrote = false;
  while (n-- > 0) {
    Chunk* c = b->full.pop();
    if (!c) break;
    if (p.config.test_delay_us) usleep(p.config.test_delay_us);
    write_block(ctx, b, c, c->committed(), may_store_raw(p, ctx, b));
    give_back(p, b, c, helper);
    wrote = true;
  }
  return wrote;
}

bool write_full_chunks(Pool& p, Writer& ctx, ThreadBuffer* b, bool helper = false) {
  uint32_t n = b->full.size();
  if (n == 0 || !try_claim(b)) return false;
  const bool wrote = write_claimed_full_chunks(p, ctx, b, n, helper);
  release_claim(b);
  return wrote;
}

// Writes the published tail of b's current chunk (unless a helper holds b's claim: the next
// flush does), and moves its context switches to ctx.switches. A chunk handed to the writers is
// only recycled by the holder of b's claim, after it was written, so the chunk we look at here
// stays valid while we hold it.
//
// A thread's events are encoded in their order (the delta state goes from each event to the
// next, raw_events.hpp), so the current chunk's tail only once every chunk the thread handed
// over before it is written. The current chunk is read first, then the ring of full chunks seen
// empty: a chunk becomes current only after the one before it was pushed to that ring, and only
// the claim's holder takes from it. A thread that keeps filling chunks meanwhile leaves its tail
// to the next flush.
void flush_thread(Writer& ctx, ThreadBuffer* b, uint64_t& lost, bool at_end = false) {
  if (try_claim(b)) {
    Pool& p = pool();
    for (int attempt = 0; attempt < 4; ++attempt) {
      write_claimed_full_chunks(p, ctx, b, b->full.size(), false);
      Chunk* c = b->current.load(std::memory_order_acquire);
      if (b->full.size() != 0) continue;
      if (c)
        write_block(ctx, b, c, c->committed_by(b->producer_pos.load(std::memory_order_acquire)),
                    may_store_raw(p, ctx, b));
      break;
    }
    release_claim(b);
  }
  switch_ring_drain(b->switches, b->thread, ctx.switches, lost, at_end);
}

void write_switches(Pool& p, Writer& ctx, uint64_t lost) {
  if (lost) p.switches_lost.fetch_add(lost, std::memory_order_relaxed);
  if (!ctx.switches.empty()) write_locked(ctx.switches.data(), ctx.switches.size());
  ctx.switches.clear();
}

// ------------------------------------------------------------------------------ helpers

void* writer_main(void* arg);
int64_t ms_between(const timespec& a, const timespec& b);

// Writer 0 watches whether the writers are behind: a thread with a backlog of full chunks past
// behind_chunks_for, or a thread waiting for a chunk. Once they have been at every look for
// kBehindMs, it starts one more helper (at most one per kHelperEveryMs, up to
// Pool::max_helpers), and wakes the running ones while they are behind. It looks before each of
// its passes and after each thread it writes in one: a pass over threads with long backlogs
// takes a long time (a chunk is a millisecond of compression), and a judgement made only
// between passes came so late that a 2 s run of 8 busy threads started no helper.
constexpr int64_t kBehindMs = 5;
constexpr int64_t kHelperEveryMs = 10;

struct HelperWatch {
  bool behind = false;
  timespec behind_since{};
  timespec last_helper{};
};

void consider_helpers(Pool& p, HelperWatch& watch) {
  const uint32_t limit =
      behind_chunks_for(p.config.max_chunks, p.registered.load(std::memory_order_relaxed));
  const unsigned homes = p.writer_count.load(std::memory_order_relaxed);
  bool behind = false;
  for (unsigned i = 0; i < homes && !behind; ++i)
    behind = p.writers[i].waiters.load(std::memory_order_relaxed) > 0;
  for (ThreadBuffer* b = p.buffers.load(std::memory_order_acquire); b && !behind;
       b = b->next.load(std::memory_order_relaxed))
    behind = b->full.size() >= limit;
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  if (!behind || !watch.behind) watch.behind_since = now;
  watch.behind = behind;
  if (!behind) return;
  const unsigned helpers = p.helper_count.load(std::memory_order_relaxed);
  for (unsigned i = 0; i < helpers; ++i) wake_writer(p.writers[homes + i]);
  if (ms_between(watch.behind_since, now) < kBehindMs || helpers >= p.max_helpers ||
      ms_between(watch.last_helper, now) < kHelperEveryMs || p.stop.load(std::memory_order_acquire))
    return;
  // This thread blocks every signal (writer_start created it so): the helper inherits that.
  const unsigned me = homes + helpers;
  if (pthread_create(&p.writers[me].thread, nullptr, writer_main,
                     reinterpret_cast<void*>(static_cast<uintptr_t>(me))) != 0) {
    p.max_helpers = helpers;  // the system's thread limit: no more tries
    return;
  }
  p.helper_count.store(helpers + 1, std::memory_order_release);
  watch.last_helper = now;
  watch.behind_since = now;  // the new helper's effect is judged afresh
}

// One pass of writer `me`: its threads' full chunks first (then recycled), then, on a flush,
// the published tail of their current chunks and their context switches.
void writer_pass(Pool& p, unsigned me, bool flush, HelperWatch* watch) {
  Writer& w = p.writers[me];
  if (me == 0) write_side_records(p);
  // A thread switching tens of thousands of times a second fills its switch ring within one
  // flush period: drained between chunks, before the kernel must drop records.
  auto drain_full_rings = [&] {
    uint64_t lost = 0;
    for (ThreadBuffer* b = p.buffers.load(std::memory_order_acquire); b;
         b = b->next.load(std::memory_order_relaxed))
      if (owned_by(p, b, me) && switch_ring_half_full(b->switches))
        switch_ring_drain(b->switches, b->thread, w.switches, lost);
    write_switches(p, w, lost);
  };
  drain_full_rings();
  for (ThreadBuffer* b = p.buffers.load(std::memory_order_acquire); b;
       b = b->next.load(std::memory_order_relaxed))
    if (owned_by(p, b, me)) {
      if (write_full_chunks(p, w, b) && watch) consider_helpers(p, *watch);
      drain_full_rings();
    }
  serve_waiters(p, me);
  if (!flush) return;
  uint64_t lost = 0;
  for (ThreadBuffer* b = p.buffers.load(std::memory_order_acquire); b;
       b = b->next.load(std::memory_order_relaxed))
    if (owned_by(p, b, me)) flush_thread(w, b, lost);
  write_switches(p, w, lost);
  if (me == 0) write_side_records(p);
}

// Compressing the events is the recorder's largest cost after the events themselves (about 50 ns
// of CPU per fine-grained task). A program kept to some CPUs (taskset, OMP_PLACES aside: this is
// the process's mask when the recorder starts) leaves the others idle: the writers run there, so
// that recording takes none of the program's CPU time for it. With no CPU outside the mask, or if
// the kernel refuses (a cpuset), they stay where they were. The mask is the one writer_start
// took on the program's thread: a helper is started by writer 0, whose own mask is already the
// other CPUs'.
cpu_set_t g_program_cpus;
bool g_program_cpus_known = false;

void move_off_program_cpus() {
  if (!g_program_cpus_known) return;
  const cpu_set_t& program = g_program_cpus;
  cpu_set_t others;
  CPU_ZERO(&others);
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  for (long c = 0; c < cpus && c < CPU_SETSIZE; ++c)
    if (!CPU_ISSET(c, &program)) CPU_SET(c, &others);
  if (CPU_COUNT(&others) > 0) pthread_setaffinity_np(pthread_self(), sizeof others, &others);
}

int64_t ms_between(const timespec& a, const timespec& b) {
  return (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
}

void note_cpu(Writer& w) {
  timespec ts;
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) == 0)
    w.cpu_ns.store(
        static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec),
        std::memory_order_relaxed);
}

// A helper's life: the full chunks of any thread that has some, whoever's they are (claimed
// one thread at a time, so that each thread's chunks are still written by one writer at a time
// and in order), until the recording stops. It sleeps while there are none.
void helper_loop(Pool& p, unsigned me) {
  Writer& w = p.writers[me];
  long poll_ns = 1000000;
  while (!p.stop.load(std::memory_order_acquire)) {
    const uint32_t seen = w.word.load(std::memory_order_acquire);
    bool wrote = false;
    for (ThreadBuffer* b = p.buffers.load(std::memory_order_acquire); b;
         b = b->next.load(std::memory_order_relaxed))
      wrote |= write_full_chunks(p, w, b, true);
    note_cpu(w);
    if (wrote) {
      poll_ns = 1000000;
      continue;
    }
    futex_wait(&w.word, seen, poll_ns);
    poll_ns = std::min<long>(poll_ns * 2, 20000000);
  }
  note_cpu(w);
}

void* writer_main(void* arg) {
  const auto me = static_cast<unsigned>(reinterpret_cast<uintptr_t>(arg));
  pthread_setname_np(pthread_self(), "tasklens-writer");  // 15 characters: the kernel's limit
  move_off_program_cpus();
  Pool& p = pool();
  Writer& w = p.writers[me];
  if (p.config.policy != WriterPolicy::Normal) {
    sched_param none{};
    // If refused: the normal policy.
    pthread_setschedparam(pthread_self(),
                          p.config.policy == WriterPolicy::Idle ? SCHED_IDLE : SCHED_BATCH, &none);
  }
  // Until every writer exists the writer count, and so which threads are whose, is not known.
  while (p.writers_go.load(std::memory_order_acquire) == 0) futex_wait(&p.writers_go, 0, 1000000);
  if (me >= p.writer_count.load(std::memory_order_relaxed)) {
    helper_loop(p, me);
    return nullptr;
  }
  HelperWatch watch;  // writer 0's
  timespec last_sync, last_flush;
  clock_gettime(CLOCK_MONOTONIC, &last_sync);
  last_flush = last_sync;
  int syncs = 0;
  // Polls often while chunks fill (a fine-grained thread fills one in a few ms), rarely while
  // the program makes no events; a thread whose backlog grows wakes it at once.
  long poll_ns = 1000000;
  while (!p.stop.load(std::memory_order_acquire)) {
    const uint32_t seen = w.word.load(std::memory_order_acquire);
    bool work = me == 0 && p.side.load(std::memory_order_relaxed) != nullptr;
    for (ThreadBuffer* b = p.buffers.load(std::memory_order_acquire); b && !work;
         b = b->next.load(std::memory_order_relaxed))
      work =
          owned_by(p, b, me) && (b->full.size() > 0 || b->waiting.load(std::memory_order_relaxed));
    if (!work) {
      futex_wait(&w.word, seen, poll_ns);
      poll_ns = std::min<long>(poll_ns * 2, 20000000);
    } else {
      poll_ns = 1000000;
    }
    if (p.stop.load(std::memory_order_acquire)) break;
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    const bool flush = ms_between(last_flush, now) >= p.config.flush_period_ms;
    // Judged before the pass drains the backlogs it would see, and during it.
    if (me == 0) consider_helpers(p, watch);
    writer_pass(p, me, flush, me == 0 ? &watch : nullptr);
    if (flush) last_flush = now;
    if (me == 0) {
      populate_ahead(p);
      // Clock pairs keep the TSC rate known if the program gets killed: one soon after the
      // start (short runs), then one a second.
      if (ms_between(last_sync, now) >= (syncs < 2 ? 50 : 1000)) {
        clock_sync_record();
        last_sync = now;
        ++syncs;
      }
    }
    note_cpu(w);
  }
  note_cpu(w);
  return nullptr;
}

}  // namespace

bool writer_start() {
  Pool& p = pool();
  clock_sync_record();
  populate_ahead(p);
  const unsigned cpus = static_cast<unsigned>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  const unsigned want = writers_for(p.config.writers, cpus);
  g_program_cpus_known = sched_getaffinity(0, sizeof g_program_cpus, &g_program_cpus) == 0;
  // Which writer serves a thread depends on the count: fixed before any writer looks at a
  // buffer (they wait for writers_go).
  p.writer_count.store(want, std::memory_order_relaxed);
  p.writer_running.store(true, std::memory_order_release);
  { std::lock_guard<std::mutex> barrier(solo_mutex()); }  // see buffer_rotate
  // The writers must not receive the program's signals: block them all while creating them.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  unsigned started = 0;
  while (started < want &&
         pthread_create(&p.writers[started].thread, nullptr, writer_main,
                        reinterpret_cast<void*>(static_cast<uintptr_t>(started))) == 0)
    ++started;
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  // Fewer writers than asked for (thread limits): those that started serve every thread. With
  // none, the threads write their chunks themselves again (writer_finish writes any chunk
  // they handed over meanwhile).
  if (started > 0) p.writer_count.store(started, std::memory_order_relaxed);
  p.max_helpers = started == 0
                      ? 0
                      : std::min(max_writers_for(p.config.max_writers, want, cpus), kMaxWriters) -
                            std::min(started, kMaxWriters);
  if (started == 0) p.writer_running.store(false, std::memory_order_release);
  p.writers_go.store(1, std::memory_order_release);
  futex_wake_all(&p.writers_go);
  return started > 0;
}

void writer_finish(const void* tail, size_t tail_size) {
  Pool& p = pool();
  if (p.stop.exchange(true)) return;
  const unsigned writers =
      p.writer_running.load(std::memory_order_acquire) ? p.writer_count.load() : 0;
  for (unsigned i = 0; i < writers; ++i) wake_writer(p.writers[i]);
  for (unsigned i = 0; i < writers; ++i) pthread_join(p.writers[i].thread, nullptr);
  // Writer 0, which starts the helpers, has ended: their count is final.
  const unsigned helpers = writers ? p.helper_count.load(std::memory_order_acquire) : 0;
  for (unsigned i = 0; i < helpers; ++i) wake_writer(p.writers[writers + i]);
  for (unsigned i = 0; i < helpers; ++i) pthread_join(p.writers[writers + i].thread, nullptr);
  {
    // Every writer has stopped: this thread drains all buffers (with the solo context, which
    // threads without a writer may be using too).
    std::lock_guard<std::mutex> lock(solo_mutex());
    write_side_records(p);
    for (ThreadBuffer* b = p.buffers.load(std::memory_order_acquire); b;
         b = b->next.load(std::memory_order_relaxed))
      while (write_full_chunks(p, p.solo, b)) {
      }
    for (unsigned i = 0; i < writers; ++i) serve_waiters(p, i);
    uint64_t lost = 0;
    for (ThreadBuffer* b = p.buffers.load(std::memory_order_acquire); b;
         b = b->next.load(std::memory_order_relaxed))
      flush_thread(p.solo, b, lost, true);
    write_switches(p, p.solo, lost);
    write_side_records(p);
  }
  clock_sync_record();
  p.finished.store(true, std::memory_order_release);
  // Threads waiting for a chunk (none should be: the drain gave every chunk back) give up.
  for (ThreadBuffer* b = p.buffers.load(std::memory_order_acquire); b;
       b = b->next.load(std::memory_order_relaxed)) {
    b->spare_word.fetch_add(1, std::memory_order_release);
    futex_wake_one(&b->spare_word);
  }
  WriterStats s = writer_stats();
  trace::RecorderStats rs{};
  rs.stalls = s.stalls;
  rs.stall_ticks = s.stall_ticks;
  rs.switches_lost = s.switches_lost;
  rs.chunks = s.chunks;
  rs.chunk_bytes = kChunkBytes;
  rs.write_errors = s.write_errors;
  rs.first_write_errno = s.first_write_errno;
  rs.first_write_error_ms = s.first_write_error_ms;
  rs.first_no_memory_ms = p.first_no_memory_ms;
  std::vector<uint8_t> stats;
  trace::append_record(stats, trace::RecordType::RecorderStats, &rs, sizeof rs);
  trace::HostSteal steal;
  if (host_steal_end(steal))
    trace::append_record(stats, trace::RecordType::HostSteal, &steal, sizeof steal);
  std::lock_guard<std::mutex> lock(file_mutex());
  const bool failed = p.write_failed.load(std::memory_order_relaxed);
  if (failed && p.config.reserve_fd >= 0) {
    // The reserve's space makes room for the end records (on a disk that others keep full, it
    // may be taken first: then the launcher's summary still says what happened).
    if (::ftruncate(p.config.reserve_fd, 0) != 0) {
    }
  }
  if (p.config.reserve_fd >= 0) ::close(p.config.reserve_fd);
  p.config.reserve_fd = -1;
  if (failed) {
    // The clock pair the drain above dropped: the TSC rate up to the end.
    const trace::ClockSync cs = clock_pair();
    trace::append_record(stats, trace::RecordType::ClockSync, &cs, sizeof cs);
  }
  write_all(stats.data(), stats.size(), true);
  write_all(tail, tail_size, true);
}

}  // namespace tasklens::recorder
