// The recorder's buffer pool as the producing side (buffer.cpp) and the writer threads
// (writer_pool.cpp) share it. Internal to those two files.
#pragma once

#include <pthread.h>
#include <zstd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "recorder/buffer.hpp"

namespace tasklens::recorder {

void futex_wait(std::atomic<uint32_t>* word, uint32_t seen, long timeout_ns);
void futex_wake_one(std::atomic<uint32_t>* word);
void futex_wake_all(std::atomic<uint32_t>* word);

// A record some thread wants in the file (thread info, region and site names): queued for the
// writer on a lock-free stack while it runs.
struct SideRecord {
  SideRecord* next;
  size_t size;
  uint8_t data[];
};

// Chunks come from one reserved range (MAP_NORESERVE: only what is used takes memory), taken
// by an atomic increment. Writer 0 faults the next few in ahead of the threads, so that a
// thread's first writes to a fresh chunk do not fault (a fault is time the program loses).
struct Arena {
  uint8_t* base = nullptr;
  size_t stride = 0;  // sizeof(Chunk) rounded up to pages
  size_t capacity = 0;
  std::atomic<size_t> taken{0};
  std::atomic<size_t> populated{0};  // chunks [0, populated) were faulted in
};

// One writer thread and what it alone uses: its compression context and scratch (compression
// runs without any lock), the chunks it recycles, the count of its threads waiting for a chunk.
struct alignas(64) Writer {
  // Bumped (and futex-woken) when one of its threads needs it.
  std::atomic<uint32_t> word{0};
  std::atomic<int> waiters{0};      // its threads waiting for a chunk
  std::atomic<uint64_t> cpu_ns{0};  // its thread's CPU time so far (updated after each pass)
  pthread_t thread{};
  ZSTD_CCtx* cctx = nullptr;      // created on first use
  uint8_t* scratch = nullptr;     // one compressed block (sized for a whole chunk)
  uint8_t* encoded = nullptr;     // one block's events encoded (raw_events.hpp), before packing
  std::vector<Chunk*> stash;      // written chunks none of its threads' spare rings took
  std::vector<uint8_t> switches;  // context-switch records of one flush
};

struct Pool {
  WriterConfig config;
  Arena arena;
  std::atomic<ThreadBuffer*> buffers{nullptr};  // every thread's buffer (only grows)
  std::atomic<uint32_t> registered{0};          // buffers ever registered (ThreadBuffer::slot)
  std::atomic<SideRecord*> side{nullptr};
  std::atomic<bool> stop{false};
  std::atomic<bool> finished{false};
  // Writers [0, writer_count) run. The count is set with writer_running and fixed before any
  // writer starts its work, so that a buffer's writer (slot % writer_count) never changes.
  std::atomic<bool> writer_running{false};
  std::atomic<uint32_t> writer_count{0};
  std::atomic<uint32_t> writers_go{0};  // the writers start their work when this becomes 1
  // Helpers (WriterConfig::max_writers) run as writers [writer_count, writer_count +
  // helper_count): they own no thread, and take over the full chunks of any thread with a
  // backlog. Started by writer 0 only; the count only grows.
  std::atomic<uint32_t> helper_count{0};
  unsigned max_helpers = 0;
  Writer writers[kMaxWriters];
  // Written chunks a helper could not give back to their thread (its spare ring full, or its
  // writer serving waiting threads): the writers serve waiting threads from here too. Writers
  // only (a program thread never takes this lock).
  std::mutex shared_stash_mutex;
  std::vector<Chunk*> shared_stash;
  // The compression context of whoever writes without being a writer thread: the finishing
  // thread, and the producing threads themselves when no writer runs. Used under solo_mutex.
  Writer solo;
  std::atomic<uint64_t> switches_lost{0};
  std::atomic<uint64_t> raw_stored{0};  // event bytes stored raw under deferred compression
  std::atomic<uint64_t> write_errors{0};
  // Set by the first failed write (under file_mutex): later writes are dropped, since events
  // after a missing block cannot be decoded; writer_finish still writes the end records.
  std::atomic<bool> write_failed{false};
  uint32_t first_write_errno = 0;
  uint32_t first_write_error_ms = 0;
  std::atomic<bool> no_memory{false};  // a thread lost events for want of buffer memory
  uint32_t first_no_memory_ms = 0;     // when it first did
};

Pool& pool();

// Serializes writes to the file between the writer threads, the finishing thread and, without
// a writer, the producing threads. Held only for a write(): never while compressing. A program
// thread never takes it while the writers run.
std::mutex& file_mutex();

// Serializes the use of Pool::solo (the producing threads without a writer, the finishing
// thread). Taken before file_mutex when both are.
std::mutex& solo_mutex();

// The writer of a buffer. Valid once the writers run (writer_count is then fixed).
inline Writer& writer_of(Pool& p, const ThreadBuffer* b) {
  return p.writers[b->slot % p.writer_count.load(std::memory_order_relaxed)];
}
inline bool owned_by(Pool& p, const ThreadBuffer* b, unsigned w) {
  return b->slot % p.writer_count.load(std::memory_order_relaxed) == w;
}

// The right to write b's chunks and push to its spare ring (ThreadBuffer::claim): never waited
// for; a writer that does not get it leaves b to the one that has it.
inline bool try_claim(ThreadBuffer* b) {
  uint32_t unclaimed = 0;
  return b->claim.compare_exchange_strong(unclaimed, 1, std::memory_order_acquire,
                                          std::memory_order_relaxed);
}
inline void release_claim(ThreadBuffer* b) { b->claim.store(0, std::memory_order_release); }

void wake_writer(Writer& w);

// Writes chunk bytes [written, upto) of b's chunk c as one EventBlock: their raw events encoded
// (raw_events.hpp, with b's stream state), compressed with w's context unless `store_raw`
// (deferred compression, WriterConfig::defer_compression); takes file_mutex for the write only.
// The block's offset is the raw one (blocks sort by it). The caller holds b's claim (or
// solo_mutex with w == solo).
void write_block(Writer& w, ThreadBuffer* b, Chunk* c, uint32_t upto, bool store_raw = false);

// Whether the next block of b may be stored raw (deferred compression): the writers keep up and
// the raw budget is not spent.
bool may_store_raw(Pool& p, const Writer& w, const ThreadBuffer* b);

// Writes framed records under file_mutex.
void write_locked(const void* data, size_t size);

void clock_sync_record();

// Fault in arena chunks ahead of the threads (one thread at a time: writer 0, or writer_start).
void populate_ahead(Pool& p);

}  // namespace tasklens::recorder
