// The producing side of the event path: the arena of chunks, registering a thread's buffer,
// handing a full chunk to its writer and taking a fresh one (waiting when none is left), and
// queueing side records. The writer threads are in writer_pool.cpp.
#include "recorder/buffer.hpp"

#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

#include "recorder/metric.hpp"
#include "recorder/pool.hpp"
#include "recorder/switches.hpp"

namespace tasklens::recorder {

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14
#endif

// The futex call is made here, not through libc's syscall(): a thread that waits inside the
// recorder then shows this library as the place it blocked in the kernel's switch records and
// in profiles (perf's call chains do not get past libc's wrapper), which bench/switches.sh uses.
void futex_wait(std::atomic<uint32_t>* word, uint32_t seen, long timeout_ns) {
  timespec ts{timeout_ns / 1000000000, timeout_ns % 1000000000};
  long ret;
  register long r10 asm("r10") = reinterpret_cast<long>(&ts);
  asm volatile("syscall"
               : "=a"(ret)
               : "a"(long(SYS_futex)), "D"(reinterpret_cast<uint32_t*>(word)),
                 "S"(long(FUTEX_WAIT_PRIVATE)), "d"(long(seen)), "r"(r10)
               : "rcx", "r11", "memory");
  (void)ret;  // woken, timed out, or the word had changed: the caller checks again either way
}
void futex_wake_one(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}
void futex_wake_all(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(word), FUTEX_WAKE_PRIVATE, INT32_MAX, nullptr,
          nullptr, 0);
}

Pool& pool() {
  static Pool* p = new Pool();  // never destroyed: threads may still record during exit
  return *p;
}

std::mutex& file_mutex() {
  static std::mutex* m = new std::mutex();
  return *m;
}

std::mutex& solo_mutex() {
  static std::mutex* m = new std::mutex();
  return *m;
}

void wake_writer(Writer& w) {
  w.word.fetch_add(1, std::memory_order_release);
  futex_wake_one(&w.word);
}

unsigned writers_for(unsigned configured, unsigned cpus) {
  unsigned n = configured ? configured : (cpus + 7) / 8;
  return std::clamp(n, 1u, kMaxWriters);
}

unsigned max_writers_for(unsigned configured, unsigned writers, unsigned cpus) {
  const unsigned n = configured ? configured : cpus / 4;
  return std::clamp(std::max(n, writers), 1u, kMaxWriters);
}

uint32_t behind_chunks_for(size_t max_chunks, uint32_t threads) {
  const uint64_t share = max_chunks / (2 * uint64_t{std::max<uint32_t>(threads, 1)});
  return static_cast<uint32_t>(std::clamp<uint64_t>(share, 2, 16));
}

// ------------------------------------------------------------------------------ the arena

namespace {

void arena_reserve(Arena& a, size_t chunks) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  a.stride = (sizeof(Chunk) + page - 1) / page * page;
  void* m = mmap(nullptr, a.stride * chunks, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return;  // capacity 0: chunks then come from the heap one by one
  a.base = static_cast<uint8_t*>(m);
  a.capacity = chunks;
}

// Faults chunk i of the arena in without changing its bytes (a thread may be writing it), a
// piece of kPopulatePiece bytes per call. Why pieces: MADV_POPULATE_WRITE holds the process's
// mmap lock (for reading) for the whole range, and a program thread's mmap (a new thread's stack,
// malloc's arena for it, the runtime's allocations) needs it for writing: traced with perf, a
// program thread slept in mmap's down_write while the writer populated a 256 KiB chunk, at the
// first parallel region. Between two pieces the waiting mmap goes first (a waiting writer of
// the lock holds new readers back), so it waits for one piece at most: 16 pages, a few us.
constexpr size_t kPopulatePiece = 64 * 1024;
void arena_populate(Arena& a, size_t i) {
  uint8_t* const chunk = a.base + i * a.stride;
  for (size_t at = 0; at < a.stride; at += kPopulatePiece)
    madvise(chunk + at, std::min(kPopulatePiece, a.stride - at), MADV_POPULATE_WRITE);
}

// A fresh chunk, or null when all max_chunks are in use. When the writers have not faulted it in
// yet, the caller does, and *faulted_from gets the TSC when it started (the time is then the
// recorder's, not the program's: a stall).
Chunk* arena_take(Pool& p, uint64_t* faulted_from) {
  Arena& a = p.arena;
  if (a.capacity == 0) {
    // No reserved range (mmap refused): the heap, within the same bound.
    if (a.taken.fetch_add(1, std::memory_order_relaxed) >= p.config.max_chunks) {
      a.taken.fetch_sub(1, std::memory_order_relaxed);
      return nullptr;
    }
    return new (std::nothrow) Chunk;  // no (): its data is not zeroed (see Chunk)
  }
  size_t i = a.taken.load(std::memory_order_relaxed);
  do {
    if (i >= a.capacity) return nullptr;
  } while (!a.taken.compare_exchange_weak(i, i + 1, std::memory_order_relaxed));
  if (i >= a.populated.load(std::memory_order_acquire)) {
    *faulted_from = read_tsc();
    arena_populate(a, i);
  }
  return new (a.base + i * a.stride) Chunk;
}

// This many chunks beyond the last one taken are kept faulted in (4 MiB): a busy fine-grained
// thread fills several chunks of raw events between two of writer 0's passes (it polls every
// millisecond, later when the program keeps the CPUs busy), and one it faults in itself is time
// taken from the program.
constexpr size_t kPopulateAhead = 16;

}  // namespace

void populate_ahead(Pool& p) {
  Arena& a = p.arena;
  if (a.capacity == 0) return;
  size_t want = std::min(a.capacity, a.taken.load(std::memory_order_relaxed) + kPopulateAhead);
  for (size_t i = a.populated.load(std::memory_order_relaxed); i < want; ++i) {
    arena_populate(a, i);
    a.populated.store(i + 1, std::memory_order_release);
  }
}

void writer_configure(const WriterConfig& config) {
  Pool& p = pool();
  p.config = config;
  if (p.arena.base == nullptr) arena_reserve(p.arena, config.max_chunks);
  if (p.arena.capacity > config.max_chunks) p.arena.capacity = config.max_chunks;
}

// ------------------------------------------------------------------------------ producers

namespace {

// A chunk for `b`: a spare, a fresh one, else (waiting for its writer) a written one. Waits at
// most `give_up_ns` (0: until one comes). Sets *waited_from to the TSC when it started waiting.
Chunk* take_chunk(Pool& p, ThreadBuffer* b, uint64_t* waited_from, uint64_t give_up_ns,
                  bool* waited) {
  Chunk* c = b->spare.pop();
  if (!c) c = arena_take(p, waited_from);
  if (c || !p.writer_running.load(std::memory_order_acquire)) return c;
  *waited = true;
  // Only this buffer's writer pushes to its spare ring, so it is the one to wait for.
  Writer& w = writer_of(p, b);
  *waited_from = read_tsc();
  timespec start;
  clock_gettime(CLOCK_MONOTONIC, &start);
  w.waiters.fetch_add(1, std::memory_order_acq_rel);
  b->waiting.store(true, std::memory_order_release);
  while (!c) {
    const uint32_t seen = b->spare_word.load(std::memory_order_acquire);
    wake_writer(w);
    c = b->spare.pop();
    if (c || p.finished.load(std::memory_order_acquire) ||
        !p.writer_running.load(std::memory_order_acquire))  // no writer could be started
      break;
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
  w.waiters.fetch_sub(1, std::memory_order_acq_rel);
  return c;
}

// Counts the recorder's time from `waited_from` (0: none) as a stall's: a wait for the writer
// when `waited`, else faulting a fresh chunk in (time, but no wait).
void count_stall(ThreadBuffer* b, uint64_t waited_from, uint64_t* stall_ticks, bool waited) {
  if (!waited_from) return;
  const uint64_t ticks = read_tsc() - waited_from;
  if (waited) b->stalls.fetch_add(1, std::memory_order_relaxed);
  b->stall_ticks.fetch_add(ticks, std::memory_order_relaxed);
  if (stall_ticks) *stall_ticks += ticks;
}

}  // namespace

ThreadBuffer* buffer_register(uint32_t thread, bool watch_switches, bool watch_faults) {
  Pool& p = pool();
  auto* b = new (std::nothrow) ThreadBuffer();
  if (!b) return nullptr;
  b->thread = thread;
  b->stream.time = p.config.start_tsc;
  // Round robin over the writers: consecutive threads (likely equally busy) go to different ones.
  b->slot = p.registered.fetch_add(1, std::memory_order_relaxed);
  if (watch_switches) b->switches = switch_ring_open(watch_faults);
  // Published before it has a chunk: a writer serves only the threads it knows.
  ThreadBuffer* head = p.buffers.load(std::memory_order_relaxed);
  do {
    b->next.store(head, std::memory_order_relaxed);
  } while (!p.buffers.compare_exchange_weak(head, b, std::memory_order_release,
                                            std::memory_order_relaxed));
  // Every chunk may be some other thread's current one: then give up after a while (this
  // thread records nothing, its events are counted as lost) rather than hang the program. The
  // buffer stays registered, without a chunk (the registry only grows).
  uint64_t waited_from = 0;
  bool waited = false;
  Chunk* c = take_chunk(p, b, &waited_from, 2000000000, &waited);
  if (!c) return nullptr;
  count_stall(b, waited_from, nullptr, waited);
  c->thread = thread;
  c->seq = b->next_seq++;
  b->current.store(c, std::memory_order_release);
  return b;
}

Chunk* buffer_rotate(ThreadBuffer* b, uint64_t* stall_ticks) {
  Pool& p = pool();
  Chunk* old = b->current.load(std::memory_order_relaxed);
  if (!old) return nullptr;  // an earlier rotation found no memory: the thread records nothing
  if (p.finished.load(std::memory_order_acquire)) {
    // After the end of the trace (exit in progress) events go nowhere: reuse the same chunk.
    old->empty();
    old->written = 0;
    return old;
  }
  if (!p.writer_running.load(std::memory_order_acquire)) {
    // No writer thread: write our own chunk now, then reuse it. Checked again under the lock:
    // writer_start sets writer_running, then takes this lock once, so that no thread still
    // writes its own chunk when the writers (which flush current chunks) begin.
    std::unique_lock<std::mutex> lock(solo_mutex());
    if (!p.writer_running.load(std::memory_order_acquire)) {
      write_block(p.solo, b, old, old->committed(std::memory_order_relaxed));
      old->empty();
      old->written = 0;
      old->seq = b->next_seq++;
      return old;
    }
  }
  Writer& w = writer_of(p, b);
  uint64_t waited_from = 0;
  // The chunk stops being current before the writer can have it: once written it may be handed
  // to another thread, and a flush of this thread (current still pointing at it, while we wait
  // for a chunk) would then write that thread's events from a second writer at once.
  b->current.store(nullptr, std::memory_order_release);
  while (!b->full.push(old)) {  // a backlog of kSize chunks: the writer is far behind
    if (!waited_from) waited_from = read_tsc();
    wake_writer(w);
    usleep(200);
  }
  // A backlog of a few chunks: the writer polls too slowly for this thread.
  if (b->full.size() >= 4) wake_writer(w);
  uint64_t waited_chunk = 0;
  bool waited = waited_from != 0;
  // Our own chunk comes back once written, so this wait ends (or the trace finishes).
  Chunk* c = take_chunk(p, b, &waited_chunk, 0, &waited);
  if (!waited_from) waited_from = waited_chunk;
  count_stall(b, waited_from, stall_ticks, waited);
  if (!c) return nullptr;
  c->thread = b->thread;
  c->seq = b->next_seq++;
  b->current.store(c, std::memory_order_release);
  return c;
}

void writer_append(const void* data, size_t size) {
  Pool& p = pool();
  if (p.writer_running.load(std::memory_order_acquire) && !p.stop.load(std::memory_order_acquire)) {
    auto* r = static_cast<SideRecord*>(std::malloc(sizeof(SideRecord) + size));
    if (r) {
      r->size = size;
      std::memcpy(r->data, data, size);
      SideRecord* head = p.side.load(std::memory_order_relaxed);
      do {
        r->next = head;
      } while (!p.side.compare_exchange_weak(head, r, std::memory_order_release,
                                             std::memory_order_relaxed));
      // Writer 0 takes it on its next pass (writer_finish drains the queue too).
      return;
    }
  }
  write_locked(data, size);
}

void writer_note_no_memory() {
  Pool& p = pool();
  if (p.no_memory.exchange(true)) return;
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const uint64_t now =
      static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
  p.first_no_memory_ms = static_cast<uint32_t>(
      now > p.config.start_monotonic_ns ? (now - p.config.start_monotonic_ns) / 1000000 : 0);
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
  s.first_write_errno = p.first_write_errno;
  s.first_write_error_ms = p.first_write_error_ms;
  const bool running = p.writer_running.load(std::memory_order_acquire);
  s.helpers = running ? p.helper_count.load(std::memory_order_acquire) : 0;
  s.writers = running ? p.writer_count.load(std::memory_order_relaxed) + s.helpers : 0;
  for (unsigned i = 0; i < s.writers; ++i)
    s.writer_cpu_ns += p.writers[i].cpu_ns.load(std::memory_order_relaxed);
  return s;
}

}  // namespace tasklens::recorder
