#include "recorder/buffer.hpp"

#include <linux/futex.h>
#include <lz4.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#include "recorder/metric.hpp"
#include "recorder/switches.hpp"
#include "trace/format.hpp"
#include "trace/reader.hpp"

namespace tasklens::recorder {
namespace {

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14
#endif

void futex_wait(std::atomic<uint32_t>* word, uint32_t seen, long timeout_ns) {
  timespec ts{timeout_ns / 1000000000, timeout_ns % 1000000000};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAIT_PRIVATE, seen, &ts, nullptr, 0);
}
void futex_wake(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr,
          0);
}

// A record some thread wants in the file (thread info, region and site names): queued for the
// writer on a lock-free stack while it runs.
struct SideRecord {
  SideRecord* next;
  size_t size;
  uint8_t data[];
};

// Chunks come from one reserved range (MAP_NORESERVE: only what is used takes memory), taken
// by an atomic increment. The writer faults the next few in ahead of the threads, so that a
// thread's first writes to a fresh chunk do not fault (a fault is time the program loses).
struct Arena {
  uint8_t* base = nullptr;
  size_t stride = 0;  // sizeof(Chunk) rounded up to pages
  size_t capacity = 0;
  std::atomic<size_t> taken{0};
  std::atomic<size_t> populated{0};  // chunks [0, populated) were faulted in
};

struct Pool {
  WriterConfig config;
  Arena arena;
  std::atomic<ThreadBuffer*> buffers{nullptr};
  std::atomic<SideRecord*> side{nullptr};
  std::atomic<uint32_t> writer_word{0};  // bumped (and futex-woken) when the writer is needed
  std::atomic<bool> stop{false};
  std::atomic<bool> finished{false};
  bool writer_running = false;
  pthread_t writer;
  std::vector<Chunk*> stash;  // written chunks no thread's spare ring took (writer only)
  std::atomic<int> waiters{0};  // threads waiting for a chunk
  std::atomic<uint64_t> switches_lost{0};
  std::atomic<uint64_t> write_errors{0};
};

Pool& pool() {
  static Pool* p = new Pool();  // never destroyed: threads may still record during exit
  return *p;
}

// Serializes file writes and the compression scratch: the writer thread against the finishing
// thread and, without a writer, the producing threads. A program thread never takes it while
// the writer runs.
std::mutex& file_mutex() {
  static std::mutex* m = new std::mutex();
  return *m;
}

ZSTD_CCtx* writer_cctx() {
  static ZSTD_CCtx* ctx = ZSTD_createCCtx();
  return ctx;
}

void write_all(const void* data, size_t size) {
  int fd = pool().config.fd;
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = ::write(fd, p, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      // Disk full or closed: drop the data, never disturb the host program; counted.
      pool().write_errors.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    p += n;
    size -= static_cast<size_t>(n);
  }
}

void clock_sync_record() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  trace::ClockSync cs{read_tsc(), static_cast<uint64_t>(ts.tv_sec) * 1000000000ull +
                                      static_cast<uint64_t>(ts.tv_nsec)};
  uint8_t rec[sizeof(trace::RecordHeader) + sizeof cs];
  trace::RecordHeader rh{static_cast<uint32_t>(trace::RecordType::ClockSync), sizeof rec};
  std::memcpy(rec, &rh, sizeof rh);
  std::memcpy(rec + sizeof rh, &cs, sizeof cs);
  std::lock_guard<std::mutex> lock(file_mutex());
  write_all(rec, sizeof rec);
}

// Compresses `raw` bytes at `src` into `out` (room for compress_bound(raw)) with the configured
// codec; returns the compressed size, or 0 when the block is better stored as it is.
size_t compress_block(const uint8_t* src, size_t raw, uint8_t* out, size_t bound) {
  const WriterConfig& config = pool().config;
  size_t packed = 0;
  if (config.compression == trace::Compression::Lz4) {
    packed = static_cast<size_t>(
        LZ4_compress_default(reinterpret_cast<const char*>(src), reinterpret_cast<char*>(out),
                             static_cast<int>(raw), static_cast<int>(bound)));
  } else if (config.compression == trace::Compression::Zstd) {
    packed = ZSTD_compressCCtx(writer_cctx(), out, bound, src, raw, config.zstd_level);
    if (ZSTD_isError(packed)) packed = 0;
  }
  return packed < raw ? packed : 0;
}

size_t compress_bound(size_t raw) {
  return std::max<size_t>(ZSTD_compressBound(raw),
                          static_cast<size_t>(LZ4_compressBound(static_cast<int>(raw))));
}

// Writes chunk bytes [written, upto) as one EventBlock. Caller holds file_mutex.
void write_block(Chunk* c, uint32_t upto) {
  if (upto <= c->written) return;
  const uint8_t* src = c->data + c->written;
  size_t raw = upto - c->written;
  // Sized once for a whole chunk: no allocation while recording.
  static uint8_t* scratch = static_cast<uint8_t*>(std::malloc(
      sizeof(trace::RecordHeader) + sizeof(trace::EventBlockHeader) + compress_bound(kChunkBytes)));
  if (!scratch) return;
  size_t bound = compress_bound(raw);
  uint8_t* out = scratch + sizeof(trace::RecordHeader) + sizeof(trace::EventBlockHeader);
  size_t packed = compress_block(src, raw, out, bound);
  trace::EventBlockHeader bh{};
  bh.thread = c->thread;
  bh.chunk_seq = c->seq;
  bh.offset = c->written;
  bh.raw_size = static_cast<uint32_t>(raw);
  if (packed == 0) {
    bh.compression = static_cast<uint8_t>(trace::Compression::None);
    std::memcpy(out, src, raw);
    packed = raw;
  } else {
    bh.compression = static_cast<uint8_t>(pool().config.compression);
  }
  trace::RecordHeader rh{static_cast<uint32_t>(trace::RecordType::EventBlock),
                         static_cast<uint32_t>(sizeof rh + sizeof bh + packed)};
  std::memcpy(scratch, &rh, sizeof rh);
  std::memcpy(scratch + sizeof rh, &bh, sizeof bh);
  write_all(scratch, rh.size);
  c->written = upto;
}

// ------------------------------------------------------------------------------ the arena

void arena_reserve(Arena& a, size_t chunks) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  a.stride = (sizeof(Chunk) + page - 1) / page * page;
  void* m = mmap(nullptr, a.stride * chunks, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return;  // capacity 0: chunks then come from the heap one by one
  a.base = static_cast<uint8_t*>(m);
  a.capacity = chunks;
}

// Faults chunk i of the arena in without changing its bytes (a thread may be writing it).
void arena_populate(Arena& a, size_t i) {
  madvise(a.base + i * a.stride, a.stride, MADV_POPULATE_WRITE);
}

// A fresh chunk, or null when all max_chunks are in use.
Chunk* arena_take(Pool& p) {
  Arena& a = p.arena;
  if (a.capacity == 0) {
    // No reserved range (mmap refused): the heap, within the same bound.
    if (a.taken.fetch_add(1, std::memory_order_relaxed) >= p.config.max_chunks) {
      a.taken.fetch_sub(1, std::memory_order_relaxed);
      return nullptr;
    }
    return new (std::nothrow) Chunk();
  }
  size_t i = a.taken.load(std::memory_order_relaxed);
  do {
    if (i >= a.capacity) return nullptr;
  } while (!a.taken.compare_exchange_weak(i, i + 1, std::memory_order_relaxed));
  if (i >= a.populated.load(std::memory_order_acquire)) arena_populate(a, i);
  return new (a.base + i * a.stride) Chunk();
}

// The writer keeps this many chunks beyond the last one taken faulted in.
constexpr size_t kPopulateAhead = 4;

void populate_ahead(Pool& p) {
  Arena& a = p.arena;
  if (a.capacity == 0) return;
  size_t want = std::min(a.capacity, a.taken.load(std::memory_order_relaxed) + kPopulateAhead);
  for (size_t i = a.populated.load(std::memory_order_relaxed); i < want; ++i) {
    arena_populate(a, i);
    a.populated.store(i + 1, std::memory_order_release);
  }
}

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
  while (ordered) {
    SideRecord* next = ordered->next;
    write_all(ordered->data, ordered->size);
    std::free(ordered);
    ordered = next;
  }
}

// ------------------------------------------------------------------------------ the writer

// A written chunk goes back to its thread when that thread has few spares, else to the stash
// that serves threads waiting for one.
constexpr uint32_t kSpareKeep = 4;

void give_back(Pool& p, ThreadBuffer* b, Chunk* c) {
  c->written = 0;
  c->committed.store(0, std::memory_order_relaxed);
  if (p.waiters.load(std::memory_order_acquire) == 0 && b->spare.size() < kSpareKeep &&
      b->spare.push(c))
    return;
  p.stash.push_back(c);
}

// Serves threads that wait for a chunk: from the stash, else from other threads' spares (a
// thread that stopped making events would otherwise keep them), and wakes them.
void serve_waiters(Pool& p) {
  if (p.waiters.load(std::memory_order_acquire) == 0) return;
  for (ThreadBuffer* b = p.buffers.load(std::memory_order_acquire); b;
       b = b->next.load(std::memory_order_relaxed)) {
    if (!b->waiting.load(std::memory_order_acquire)) continue;
    if (p.stash.empty()) {
      for (ThreadBuffer* o = p.buffers.load(std::memory_order_acquire); o && p.stash.empty();
           o = o->next.load(std::memory_order_relaxed))
        if (o != b && !o->waiting.load(std::memory_order_relaxed))
          if (Chunk* c = o->spare.pop()) p.stash.push_back(c);
    }
    while (!p.stash.empty() && b->spare.size() < kSpareKeep && b->spare.push(p.stash.back()))
      p.stash.pop_back();
    b->spare_word.fetch_add(1, std::memory_order_release);
    futex_wake(&b->spare_word);
  }
}

// One writer pass: full chunks first (then recycled), then, on a flush, the published tail of
// every thread's current chunk and its context switches. Caller holds file_mutex.
void drain(Pool& p, bool flush) {
  write_side_records(p);
  for (ThreadBuffer* b = p.buffers.load(std::memory_order_acquire); b;
       b = b->next.load(std::memory_order_relaxed)) {
    while (Chunk* c = b->full.pop()) {
      if (p.config.test_delay_us) usleep(p.config.test_delay_us);
      write_block(c, c->committed.load(std::memory_order_acquire));
      give_back(p, b, c);
    }
  }
  serve_waiters(p);
  if (!flush) return;
  static std::vector<uint8_t>* switches = new std::vector<uint8_t>();
  switches->clear();
  uint64_t lost = 0;
  for (ThreadBuffer* b = p.buffers.load(std::memory_order_acquire); b;
       b = b->next.load(std::memory_order_relaxed)) {
    // A chunk handed to the writer is only recycled by this same thread, after it was written,
    // so the chunk we look at here stays valid while we use it.
    Chunk* c = b->current.load(std::memory_order_acquire);
    if (c) write_block(c, c->committed.load(std::memory_order_acquire));
    switch_ring_drain(b->switches, b->thread, *switches, lost);
  }
  if (lost) p.switches_lost.fetch_add(lost, std::memory_order_relaxed);
  if (!switches->empty()) write_all(switches->data(), switches->size());
  write_side_records(p);
}

// Compressing the events is the recorder's largest cost after the events themselves (about 50 ns
// of CPU per fine-grained task). A program kept to some CPUs (taskset, OMP_PLACES aside: this is
// the process's mask when the recorder starts) leaves the others idle: the writer runs there, so
// that recording takes none of the program's CPU time for it. With no CPU outside the mask, or if
// the kernel refuses (a cpuset), it stays where it was.
void move_off_program_cpus() {
  cpu_set_t program, others;
  if (sched_getaffinity(0, sizeof program, &program) != 0) return;
  CPU_ZERO(&others);
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  for (long c = 0; c < cpus && c < CPU_SETSIZE; ++c)
    if (!CPU_ISSET(c, &program)) CPU_SET(c, &others);
  if (CPU_COUNT(&others) > 0) pthread_setaffinity_np(pthread_self(), sizeof others, &others);
}

int64_t ms_between(const timespec& a, const timespec& b) {
  return (b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000;
}

void* writer_main(void*) {
  pthread_setname_np(pthread_self(), "tasklens-writer");  // 15 characters: the kernel's limit
  move_off_program_cpus();
  Pool& p = pool();
  if (p.config.idle_priority) {
    sched_param none{};
    pthread_setschedparam(pthread_self(), SCHED_IDLE, &none);  // if refused: the normal policy
  }
  timespec last_sync, last_flush;
  clock_gettime(CLOCK_MONOTONIC, &last_sync);
  last_flush = last_sync;
  int syncs = 0;
  // Polls often while chunks fill (a fine-grained thread fills one in a few ms), rarely while
  // the program makes no events; a thread whose backlog grows wakes it at once.
  long poll_ns = 1000000;
  while (!p.stop.load(std::memory_order_acquire)) {
    const uint32_t seen = p.writer_word.load(std::memory_order_acquire);
    bool work = false;
    for (ThreadBuffer* b = p.buffers.load(std::memory_order_acquire); b && !work;
         b = b->next.load(std::memory_order_relaxed))
      work = b->full.size() > 0 || b->waiting.load(std::memory_order_relaxed);
    if (!work && p.side.load(std::memory_order_relaxed) == nullptr) {
      futex_wait(&p.writer_word, seen, poll_ns);
      poll_ns = std::min<long>(poll_ns * 2, 20000000);
    } else {
      poll_ns = 1000000;
    }
    if (p.stop.load(std::memory_order_acquire)) break;
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    const bool flush = ms_between(last_flush, now) >= p.config.flush_period_ms;
    {
      std::lock_guard<std::mutex> lock(file_mutex());
      drain(p, flush);
    }
    populate_ahead(p);
    if (flush) last_flush = now;
    // Clock pairs keep the TSC rate known if the program gets killed: one soon after the
    // start (short runs), then one a second.
    if (ms_between(last_sync, now) >= (syncs < 2 ? 50 : 1000)) {
      clock_sync_record();
      last_sync = now;
      ++syncs;
    }
  }
  return nullptr;
}

void wake_writer(Pool& p) {
  p.writer_word.fetch_add(1, std::memory_order_release);
  futex_wake(&p.writer_word);
}

}  // namespace

void writer_configure(const WriterConfig& config) {
  Pool& p = pool();
  p.config = config;
  if (p.arena.base == nullptr) arena_reserve(p.arena, config.max_chunks);
  if (p.arena.capacity > config.max_chunks) p.arena.capacity = config.max_chunks;
}

bool writer_start() {
  Pool& p = pool();
  clock_sync_record();
  {
    std::lock_guard<std::mutex> lock(file_mutex());
    populate_ahead(p);
  }
  // The writer must not receive the program's signals: block them all while creating it.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(&p.writer, nullptr, writer_main, nullptr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  p.writer_running = rc == 0;
  return p.writer_running;
}

namespace {

// A chunk for `b`: a spare, a fresh one, else (waiting for the writer) a written one. Waits at
// most `give_up_ns` (0: until one comes). Sets *waited_from to the TSC when it started waiting.
Chunk* take_chunk(Pool& p, ThreadBuffer* b, uint64_t* waited_from, uint64_t give_up_ns) {
  Chunk* c = b->spare.pop();
  if (!c) c = arena_take(p);
  if (c || !p.writer_running) return c;
  *waited_from = read_tsc();
  timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  p.waiters.fetch_add(1, std::memory_order_acq_rel);
  b->waiting.store(true, std::memory_order_release);
  while (!c) {
    const uint32_t seen = b->spare_word.load(std::memory_order_acquire);
    wake_writer(p);
    c = b->spare.pop();
    if (c || p.finished.load(std::memory_order_acquire)) break;
    futex_wait(&b->spare_word, seen, 1000000);
    c = b->spare.pop();
    if (!c && give_up_ns) {
      timespec now;
      clock_gettime(CLOCK_MONOTONIC, &now);
      if (uint64_t((now.tv_sec - start.tv_sec) * 1000000000 + (now.tv_nsec - start.tv_nsec)) >
          give_up_ns)
        break;
    }
  }
  b->waiting.store(false, std::memory_order_relaxed);
  p.waiters.fetch_sub(1, std::memory_order_acq_rel);
  return c;
}

void count_stall(ThreadBuffer* b, uint64_t waited_from, uint64_t* stall_ticks) {
  if (!waited_from) return;
  const uint64_t ticks = read_tsc() - waited_from;
  b->stalls.fetch_add(1, std::memory_order_relaxed);
  b->stall_ticks.fetch_add(ticks, std::memory_order_relaxed);
  if (stall_ticks) *stall_ticks += ticks;
}

}  // namespace

ThreadBuffer* buffer_register(uint32_t thread, bool watch_switches) {
  Pool& p = pool();
  auto* b = new (std::nothrow) ThreadBuffer();
  if (!b) return nullptr;
  b->thread = thread;
  if (watch_switches) b->switches = switch_ring_open();
  // Published before it has a chunk: the writer serves only the threads it knows.
  ThreadBuffer* head = p.buffers.load(std::memory_order_relaxed);
  do {
    b->next.store(head, std::memory_order_relaxed);
  } while (!p.buffers.compare_exchange_weak(head, b, std::memory_order_release,
                                            std::memory_order_relaxed));
  // Every chunk may be some other thread's current one: then give up after a while (this
  // thread records nothing, its events are counted as lost) rather than hang the program. The
  // buffer stays registered, without a chunk (the registry only grows).
  uint64_t waited_from = 0;
  Chunk* c = take_chunk(p, b, &waited_from, 2000000000);
  if (!c) return nullptr;
  count_stall(b, waited_from, nullptr);
  c->thread = thread;
  c->seq = b->next_seq++;
  b->current.store(c, std::memory_order_release);
  return b;
}

Chunk* buffer_rotate(ThreadBuffer* b, uint64_t* stall_ticks) {
  Pool& p = pool();
  Chunk* old = b->current.load(std::memory_order_relaxed);
  if (p.finished.load(std::memory_order_acquire)) {
    // After the end of the trace (exit in progress) events go nowhere: reuse the same chunk.
    old->committed.store(0, std::memory_order_relaxed);
    old->written = 0;
    return old;
  }
  if (!p.writer_running) {
    // No writer thread: write our own chunk now, then reuse it.
    std::lock_guard<std::mutex> lock(file_mutex());
    write_block(old, old->committed.load(std::memory_order_relaxed));
    old->committed.store(0, std::memory_order_relaxed);
    old->written = 0;
    old->seq = b->next_seq++;
    return old;
  }
  uint64_t waited_from = 0;
  while (!b->full.push(old)) {  // a backlog of kSize chunks: the writer is far behind
    if (!waited_from) waited_from = read_tsc();
    wake_writer(p);
    usleep(200);
  }
  // A backlog of a few chunks: the writer polls too slowly for this thread.
  if (b->full.size() >= 4) wake_writer(p);
  uint64_t waited_chunk = 0;
  // Our own chunk comes back once written, so this wait ends (or the trace finishes).
  Chunk* c = take_chunk(p, b, &waited_chunk, 0);
  if (!waited_from) waited_from = waited_chunk;
  count_stall(b, waited_from, stall_ticks);
  if (!c) return nullptr;
  c->thread = b->thread;
  c->seq = b->next_seq++;
  b->current.store(c, std::memory_order_release);
  return c;
}

void writer_append(const void* data, size_t size) {
  Pool& p = pool();
  if (p.writer_running && !p.stop.load(std::memory_order_acquire)) {
    auto* r = static_cast<SideRecord*>(std::malloc(sizeof(SideRecord) + size));
    if (r) {
      r->size = size;
      std::memcpy(r->data, data, size);
      SideRecord* head = p.side.load(std::memory_order_relaxed);
      do {
        r->next = head;
      } while (!p.side.compare_exchange_weak(head, r, std::memory_order_release,
                                             std::memory_order_relaxed));
      // The writer takes it on its next pass (writer_finish drains the queue too).
      return;
    }
  }
  std::lock_guard<std::mutex> lock(file_mutex());
  write_all(data, size);
}

WriterStats writer_stats() {
  Pool& p = pool();
  WriterStats s;
  for (ThreadBuffer* b = p.buffers.load(std::memory_order_acquire); b;
       b = b->next.load(std::memory_order_relaxed)) {
    s.stalls += b->stalls.load(std::memory_order_relaxed);
    s.stall_ticks += b->stall_ticks.load(std::memory_order_relaxed);
  }
  s.switches_lost = p.switches_lost.load(std::memory_order_relaxed);
  s.chunks = std::min(p.arena.taken.load(std::memory_order_relaxed), p.config.max_chunks);
  s.write_errors = p.write_errors.load(std::memory_order_relaxed);
  return s;
}

void writer_finish(const void* tail, size_t tail_size) {
  Pool& p = pool();
  if (p.stop.exchange(true)) return;
  wake_writer(p);
  if (p.writer_running) pthread_join(p.writer, nullptr);
  {
    std::lock_guard<std::mutex> lock(file_mutex());
    drain(p, true);
  }
  clock_sync_record();
  p.finished.store(true, std::memory_order_release);
  // Threads waiting for a chunk (none should be: the drain gave every chunk back) give up.
  for (ThreadBuffer* b = p.buffers.load(std::memory_order_acquire); b;
       b = b->next.load(std::memory_order_relaxed)) {
    b->spare_word.fetch_add(1, std::memory_order_release);
    futex_wake(&b->spare_word);
  }
  WriterStats s = writer_stats();
  trace::RecorderStats rs{};
  rs.stalls = s.stalls;
  rs.stall_ticks = s.stall_ticks;
  rs.switches_lost = s.switches_lost;
  rs.chunks = s.chunks;
  rs.chunk_bytes = kChunkBytes;
  rs.write_errors = s.write_errors;
  std::vector<uint8_t> stats;
  trace::append_record(stats, trace::RecordType::RecorderStats, &rs, sizeof rs);
  std::lock_guard<std::mutex> lock(file_mutex());
  write_all(stats.data(), stats.size());
  write_all(tail, tail_size);
}

}  // namespace tasklens::recorder
