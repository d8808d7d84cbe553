#include "recorder/buffer.hpp"

#include <lz4.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
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

struct Pool {
  std::mutex mutex;
  std::condition_variable writer_cv;  // work for the writer
  std::condition_variable free_cv;    // a chunk came back to the free list
  Chunk* full_head = nullptr;
  Chunk* full_tail = nullptr;
  Chunk* free_list = nullptr;
  size_t allocated = 0;
  ThreadBuffer* buffers = nullptr;
  bool stop = false;
  bool finished = false;
  bool writer_running = false;
  pthread_t writer;
  WriterConfig config;
};

Pool& pool() {
  static Pool* p = new Pool();  // never destroyed: threads may still record during exit
  return *p;
}

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
      return;  // disk full or closed: drop the data, never disturb the host program
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
  std::vector<uint8_t> rec;
  trace::append_record(rec, trace::RecordType::ClockSync, &cs, sizeof cs);
  std::lock_guard<std::mutex> lock(file_mutex());
  write_all(rec.data(), rec.size());
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

// Writes chunk bytes [written, upto) as one EventBlock. Caller serializes (writer thread, or the
// finishing thread once the writer stopped).
void write_block(Chunk* c, uint32_t upto) {
  static std::mutex* block_mutex = new std::mutex();  // scratch and zstd context are shared
  std::lock_guard<std::mutex> block_lock(*block_mutex);
  if (upto <= c->written) return;
  const uint8_t* src = c->data + c->written;
  size_t raw = upto - c->written;
  static std::vector<uint8_t>* scratch = new std::vector<uint8_t>();
  size_t bound = compress_bound(raw);
  scratch->resize(sizeof(trace::RecordHeader) + sizeof(trace::EventBlockHeader) + bound);
  uint8_t* out = scratch->data() + sizeof(trace::RecordHeader) + sizeof(trace::EventBlockHeader);
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
  std::memcpy(scratch->data(), &rh, sizeof rh);
  std::memcpy(scratch->data() + sizeof rh, &bh, sizeof bh);
  {
    std::lock_guard<std::mutex> lock(file_mutex());
    write_all(scratch->data(), rh.size);
  }
  c->written = upto;
}

// One writer pass: full chunks first (then recycled), then the published tail of every thread's
// current chunk. Called with the pool mutex NOT held.
void drain(bool include_partial) {
  Pool& p = pool();
  Chunk* full;
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    full = p.full_head;
    p.full_head = p.full_tail = nullptr;
  }
  while (full) {
    Chunk* next = full->next;
    write_block(full, full->committed.load(std::memory_order_acquire));
    full->written = 0;
    full->committed.store(0, std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(p.mutex);
      full->next = p.free_list;
      p.free_list = full;
    }
    p.free_cv.notify_all();
    full = next;
  }
  if (!include_partial) return;
  std::vector<ThreadBuffer*> buffers;
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    for (ThreadBuffer* b = p.buffers; b; b = b->next) buffers.push_back(b);
  }
  std::vector<uint8_t> preemptions;
  for (ThreadBuffer* b : buffers) {
    // A chunk handed to the writer is only recycled by this same thread, after it was written,
    // so the chunk we look at here stays valid while we use it.
    Chunk* c = b->current.load(std::memory_order_acquire);
    if (c) write_block(c, c->committed.load(std::memory_order_acquire));
    switch_ring_drain(b->switches, b->thread, preemptions);
  }
  if (!preemptions.empty()) writer_append(preemptions.data(), preemptions.size());
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

void* writer_main(void*) {
  pthread_setname_np(pthread_self(), "tasklens-writer");  // 15 characters: the kernel's limit
  move_off_program_cpus();
  Pool& p = pool();
  timespec last_sync;
  clock_gettime(CLOCK_MONOTONIC, &last_sync);
  int syncs = 0;
  for (;;) {
    bool stop;
    {
      std::unique_lock<std::mutex> lock(p.mutex);
      p.writer_cv.wait_for(lock, std::chrono::milliseconds(p.config.flush_period_ms),
                           [&] { return p.stop || p.full_head != nullptr; });
      stop = p.stop;
    }
    if (stop) break;
    drain(true);
    // Clock pairs keep the TSC rate known if the program gets killed: one soon after the
    // start (short runs), then one a second.
    timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t since_ms =
        (now.tv_sec - last_sync.tv_sec) * 1000 + (now.tv_nsec - last_sync.tv_nsec) / 1000000;
    if (since_ms >= (syncs < 2 ? 50 : 1000)) {
      clock_sync_record();
      last_sync = now;
      ++syncs;
    }
  }
  return nullptr;
}

Chunk* new_chunk(Pool& p, std::unique_lock<std::mutex>& lock) {
  for (;;) {
    if (p.free_list) {
      Chunk* c = p.free_list;
      p.free_list = c->next;
      c->next = nullptr;
      return c;
    }
    if (p.allocated < p.config.max_chunks || !p.writer_running || p.finished) {
      Chunk* c = new (std::nothrow) Chunk();
      if (c) ++p.allocated;
      return c;
    }
    p.writer_cv.notify_one();
    p.free_cv.wait(lock);
  }
}

}  // namespace

void writer_configure(const WriterConfig& config) { pool().config = config; }

bool writer_start() {
  Pool& p = pool();
  clock_sync_record();
  // The writer must not receive the program's signals: block them all while creating it.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  int rc = pthread_create(&p.writer, nullptr, writer_main, nullptr);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  p.writer_running = rc == 0;
  return p.writer_running;
}

ThreadBuffer* buffer_register(uint32_t thread, bool watch_preemptions) {
  Pool& p = pool();
  auto* b = new (std::nothrow) ThreadBuffer();
  if (!b) return nullptr;
  b->thread = thread;
  if (watch_preemptions) b->switches = switch_ring_open();
  std::unique_lock<std::mutex> lock(p.mutex);
  Chunk* c = new_chunk(p, lock);
  if (!c) {
    delete b;
    return nullptr;
  }
  c->thread = thread;
  c->seq = b->next_seq++;
  b->current.store(c, std::memory_order_release);
  b->next = p.buffers;
  p.buffers = b;
  return b;
}

Chunk* buffer_rotate(ThreadBuffer* b) {
  Pool& p = pool();
  Chunk* old = b->current.load(std::memory_order_relaxed);
  std::unique_lock<std::mutex> lock(p.mutex);
  if (p.finished) {
    // After the end of the trace (exit in progress) events go nowhere: reuse the same chunk.
    old->committed.store(0, std::memory_order_relaxed);
    old->written = 0;
    return old;
  }
  if (!p.writer_running) {
    // No writer thread: write our own chunk now, then reuse it.
    lock.unlock();
    write_block(old, old->committed.load(std::memory_order_relaxed));
    old->committed.store(0, std::memory_order_relaxed);
    old->written = 0;
    old->seq = b->next_seq++;
    return old;
  }
  old->next = nullptr;
  if (p.full_tail)
    p.full_tail->next = old;
  else
    p.full_head = old;
  p.full_tail = old;
  Chunk* c = new_chunk(p, lock);
  if (!c) return nullptr;  // out of memory: the caller stops recording this thread
  c->thread = b->thread;
  c->seq = b->next_seq++;
  b->current.store(c, std::memory_order_release);
  p.writer_cv.notify_one();
  return c;
}

void writer_append(const void* data, size_t size) {
  std::lock_guard<std::mutex> lock(file_mutex());
  write_all(data, size);
}

void writer_finish(const void* tail, size_t tail_size) {
  Pool& p = pool();
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    if (p.finished) return;
    p.stop = true;
  }
  p.writer_cv.notify_all();
  if (p.writer_running) pthread_join(p.writer, nullptr);
  drain(true);
  clock_sync_record();
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    p.finished = true;
  }
  p.free_cv.notify_all();
  writer_append(tail, tail_size);
}

}  // namespace tasklens::recorder
