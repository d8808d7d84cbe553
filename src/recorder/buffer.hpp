// Per-thread event buffers and the writer threads that drain them into the trace file.
//
// Each recording thread appends raw events (raw_events.hpp) to its current Chunk with plain
// stores and publishes the end of the last complete event with a release store (a plain mov on
// x86). The writer threads own everything else: they encode and compress full chunks, and every
// flush period they also write the published-but-unwritten part of every thread's current
// chunk, so a program killed with SIGKILL leaves a trace that is valid up to the last flush. A
// thread's chunks are encoded in order (the encoding carries deltas from event to event).
//
// There are several writers on a large machine (WriterConfig::writers): one LZ4 stream
// compresses ~0.5-0.7 GB/s per core and one busy fine-grained thread makes ~50 MB/s of events,
// so a single writer would saturate at 10-14 busy threads. Each thread's buffer belongs to one
// writer (assigned when it registers), which writes that thread's chunks in order; when the
// writers fall behind, helpers take over backlogs (WriterConfig::max_writers), one writer at a
// time per thread (ThreadBuffer::claim). Writers compress without any lock and take the file's
// lock only for the write() of a finished block.
//
// Nothing on a program thread's path waits for a lock the writer can hold: a full chunk goes to
// the writer through the thread's own single-producer ring, and comes back through another one;
// fresh chunks come from a preallocated arena by an atomic increment, already faulted in by the
// writer. Memory stays bounded (WriterConfig::max_chunks): when every chunk is in use, the thread
// waits for the writer, and that wait is measured (a recorder stall) so that the model can take
// it out of the strand it falls in.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "recorder/raw_events.hpp"
#include "trace/format.hpp"

namespace tasklens::recorder {

inline constexpr size_t kChunkBytes = 256 * 1024;

// Made with `new Chunk` (default-initialized), never `new Chunk()`: value-initialization would
// zero its 256 KiB of data first, on the program's thread at each fresh chunk (time no stall
// counted). Only the bytes below `end` are ever read.
struct Chunk {
  // The end of the last complete event, set by the producer when it hands the chunk over
  // (make_room); while the chunk is its current one, its events are published by its
  // ThreadState::pos instead (one store per event, ThreadBuffer::producer_pos). A pointer, not
  // an offset: the producer stores where its event ends.
  std::atomic<uint8_t*> end{data};
  uint32_t written = 0;  // bytes already in the file (writer thread only)
  uint32_t seq = 0;      // per-thread sequence number
  uint32_t thread = 0;
  alignas(64) uint8_t data[kChunkBytes];

  // Bytes of complete events.
  uint32_t committed(std::memory_order order = std::memory_order_acquire) const {
    return static_cast<uint32_t>(end.load(order) - data);
  }
  // Bytes of complete events, `producer_pos` being where its owner's last event ends when the
  // chunk is the owner's current one (ThreadBuffer::producer_pos): that when it lies in this
  // chunk, else `end` (the owner moved on to another chunk after setting it).
  uint32_t committed_by(const std::atomic<uint8_t*>* producer_pos) const {
    const uint8_t* p = producer_pos ? producer_pos->load(std::memory_order_acquire) : nullptr;
    if (p >= data && p <= data + kChunkBytes) return static_cast<uint32_t>(p - data);
    return committed();
  }
  void empty() { end.store(data, std::memory_order_relaxed); }
};

// A ring of chunks with one producer. Its owner consumes it; from a spare ring any writer may
// also take chunks back (for a thread that waits), so taking is a compare-and-swap.
struct ChunkRing {
  static constexpr uint32_t kSize = 256;      // a power of two: 64 MiB of chunks per direction
  alignas(64) std::atomic<uint32_t> head{0};  // next slot the producer fills
  alignas(64) std::atomic<uint32_t> tail{0};  // next slot the consumer takes
  std::atomic<Chunk*> slots[kSize] = {};

  bool push(Chunk* c) {
    const uint32_t h = head.load(std::memory_order_relaxed);
    if (h - tail.load(std::memory_order_acquire) >= kSize) return false;
    slots[h % kSize].store(c, std::memory_order_relaxed);
    head.store(h + 1, std::memory_order_release);
    return true;
  }
  Chunk* pop() {
    uint32_t t = tail.load(std::memory_order_acquire);
    for (;;) {
      if (t == head.load(std::memory_order_acquire)) return nullptr;
      // If another consumer took slot t first, the producer may refill it: the CAS fails then.
      Chunk* c = slots[t % kSize].load(std::memory_order_relaxed);
      if (tail.compare_exchange_weak(t, t + 1, std::memory_order_acq_rel)) return c;
    }
  }
  uint32_t size() const {
    return head.load(std::memory_order_acquire) - tail.load(std::memory_order_acquire);
  }
};

struct SwitchRing;

struct ThreadBuffer {
  std::atomic<Chunk*> current{nullptr};  // read by the writer thread for periodic flushes
  // The end of the owner's last complete event in `current` (its ThreadState::pos, which the
  // owner's events publish with one store; null until the owner set it): how much of the current
  // chunk a flush may write. A chunk's own `end` is set when the owner hands it over (make_room).
  std::atomic<const std::atomic<uint8_t*>*> producer_pos{nullptr};
  ChunkRing full;   // owner -> writer: chunks to write
  ChunkRing spare;  // writer -> owner: written chunks to reuse
  // The owner sleeps on this word (a futex) while it waits for a spare chunk.
  std::atomic<uint32_t> spare_word{0};
  std::atomic<bool> waiting{false};
  SwitchRing* switches = nullptr;  // the thread's context switches (drained by the writer)
  uint32_t thread = 0;
  uint32_t slot = 0;  // registration order: the buffer's writer is slot % (number of writers)
  uint32_t next_seq = 0;
  // Held by the one writer that writes this buffer's chunks at a time: its own writer, or a
  // helper that takes over a backlog (WriterConfig::max_writers). Whoever holds it is the only
  // producer of `spare` and the only one to write `written` of this thread's chunks. Writers
  // only: the owner thread never touches it.
  std::atomic<uint32_t> claim{0};
  // The encoding's state of the thread's event stream (raw_events.hpp): used by the holder of
  // `claim` (or of solo_mutex when no writer runs), as the chunks are written in order.
  RawStreamState stream;
  // What the owner lost waiting for the writer: how often, and TSC ticks.
  std::atomic<uint64_t> stalls{0};
  std::atomic<uint64_t> stall_ticks{0};
  std::atomic<ThreadBuffer*> next{nullptr};  // registry link (written once, before publishing)
};

// Batch (the default): SCHED_BATCH, a fair share of the CPUs but no preemption when woken (a
// normal writer woken for a full chunk preempts a program thread at once), so it keeps up with a
// program that fills every CPU and drains the context-switch rings in time. Idle: SCHED_IDLE,
// CPU time only when a CPU has nothing else to run; on a machine the program (or anything else)
// keeps busy the writers fall behind: the program's threads wait for buffers (measured, taken
// out) and switch rings overflow (their lost records counted: the time they held stays work).
// Normal: the default policy of the system.
enum class WriterPolicy : uint8_t { Idle, Batch, Normal };

struct WriterConfig {
  int fd = -1;
  unsigned flush_period_ms = 100;
  size_t max_chunks = 1024;  // 256 MiB of buffers at most
  // How event blocks are compressed (`record --compression`). LZ4 by default: on this data it
  // costs about half of zstd's CPU, which the
  // program pays whenever the writer shares its CPUs; zstd makes files about half as big.
  trace::Compression compression = trace::Compression::Lz4;
  int zstd_level = 1;
  // Deferred compression (`tasklens record` sets it; TASKLENS_DEFER_COMPRESSION): the writers
  // store event blocks as they are while they keep up, and the launcher compresses the trace
  // once the program has ended (trace/repack.hpp). Compressing while the program runs costs it
  // far more than the writer's own CPU time: on virtual CPUs that share the host's execution
  // resources, a 1-thread fib's region took about 1.5x as long with LZ4 in the writer beside it
  // as with the blocks stored raw, although the writer had the other core to itself. A
  // writer compresses anyway when it falls behind (a thread's backlog of full chunks, a thread
  // waiting for one: raw writes no longer keep up, as with a hundred busy threads into one file)
  // and once it has stored raw_budget bytes raw (the file system's room for the trace).
  bool defer_compression = false;
  uint64_t raw_budget = 0;
  // Writer threads (`TASKLENS_WRITERS`); 0: one per 8 online CPUs (at least one), so that on a
  // 128-CPU node 16 writers absorb the events of 128 busy threads. Each runs under the policy
  // below, so a writer only ever takes a CPU the program leaves idle.
  unsigned writers = 0;
  // The most writer threads there may be (`TASKLENS_MAX_WRITERS`); 0: one per 4 online CPUs,
  // and never fewer than `writers`. Beyond `writers`, helpers are started one at a time while
  // the writers stay behind (a backlog of full chunks, a thread waiting for one): each takes
  // the full chunks of whichever threads have a backlog. A busy node whose cores compress
  // slowly (or whose busy threads all landed on one writer) then gets more compressing cores
  // instead of program threads waiting for buffers; a node whose writers keep up never starts
  // one.
  unsigned max_writers = 0;
  // How the writers are scheduled (WriterPolicy).
  WriterPolicy policy = WriterPolicy::Batch;
  // Tests only: the writer sleeps this long before each chunk it writes (forces stalls).
  unsigned test_delay_us = 0;
  // A file on the trace's file system holding a little space (or -1): when a write fails, it
  // is emptied so that the trace's end records still fit on a full disk.
  int reserve_fd = -1;
  uint64_t start_monotonic_ns = 0;  // CLOCK_MONOTONIC at the start (when a write first failed)
  uint64_t start_tsc = 0;           // the trace header's start: each thread's first time delta
  unsigned counters = 0;            // perf counter deltas per event (Config::counter_count)
};

// What the recorder lost or waited for, for the trace's RecorderStats record.
struct WriterStats {
  uint64_t stalls = 0;
  uint64_t stall_ticks = 0;
  uint64_t switches_lost = 0;  // context-switch records the kernel dropped (ring overflow)
  uint64_t chunks = 0;         // chunks of the arena ever used (peak buffer memory)
  uint64_t write_errors = 0;   // writes to the file that failed or were dropped after one
  uint32_t first_write_errno = 0;
  uint32_t first_write_error_ms = 0;  // ms into the recording
  unsigned writers = 0;               // writer threads running (0: the threads write themselves)
  unsigned helpers = 0;               // of which helpers started because the others fell behind
  uint64_t writer_cpu_ns = 0;         // CPU time of the writer threads so far (benchmarks)
};

// Enough for a 1024-CPU node at one writer per 8 CPUs; an unused writer costs ~100 bytes.
inline constexpr unsigned kMaxWriters = 128;

// The writer count a configuration asks for on a machine with `cpus` online CPUs.
unsigned writers_for(unsigned configured, unsigned cpus);

// The most writers (those started with the recording and helpers) for WriterConfig::max_writers
// `configured` (0: automatic), `writers` started with the recording, and `cpus` online CPUs.
unsigned max_writers_for(unsigned configured, unsigned writers, unsigned cpus);

// Under deferred compression, how many full chunks a thread may have waiting for its writer
// before the writer compresses them as it goes (fewer bytes to write) until it catches up.
//
// A backlog of a few chunks is not "behind": a writer polls every millisecond or so and a
// fine-grained thread fills a chunk every 2 ms, so any delay in the writer's scheduling (it runs
// at a low priority on CPUs the program fills) leaves 2-4 chunks waiting. With a limit of 2, a
// 2-thread fib compressed about half of its blocks while it ran: the writer took two to three
// times its share of the run's CPU samples, on CPUs the program needed,
// and compressing makes a CPU-starved writer slower still (LZ4 costs several times a raw write). So
// the limit is each thread's share of half the buffer memory (`max_chunks`), at most 16 chunks (4
// MiB, about 30 ms of a fine-grained thread's events) and at least 2: with 128 busy threads and
// 1024 chunks it is 4, and the writers compress well before the memory runs out and threads must
// wait.
uint32_t behind_chunks_for(size_t max_chunks, uint32_t threads);

// Sets the output file and limits; must come before anything is written.
void writer_configure(const WriterConfig& config);

// Starts the writer threads. Returns false if none can be started; events are then written by
// the producing threads themselves when their chunk is full (slower, still correct).
bool writer_start();

// Registers a new thread's buffer (with its first chunk). Never returns null unless out of
// memory, in which case the thread records nothing. `watch_faults`: see switch_ring_open.
ThreadBuffer* buffer_register(uint32_t thread, bool watch_switches, bool watch_faults = false);

// Called by the owner when `current` lacks room: hands the chunk to the writer and returns a
// fresh one. When every chunk is in use it waits for the writer, and adds the TSC ticks it
// waited to *stall_ticks (if given) so that the caller can record them.
Chunk* buffer_rotate(ThreadBuffer* buffer, uint64_t* stall_ticks = nullptr);

// Writes every published event of every thread, stops the writer threads, and appends `tail`
// (already framed records) to the file. Idempotent; safe to call from an atexit handler.
void writer_finish(const void* tail, size_t tail_size);

// Appends framed records to the file from any thread. While the writer runs the records are
// queued for it (no lock a program thread could wait on); otherwise they are written at once.
void writer_append(const void* data, size_t size);

// A thread could not get buffer memory and loses its events: notes when it first happened.
void writer_note_no_memory();

// The stall and loss counts so far (exact once writer_finish has drained everything).
WriterStats writer_stats();

}  // namespace tasklens::recorder
