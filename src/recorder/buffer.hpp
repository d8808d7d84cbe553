// Per-thread event buffers and the writer thread that drains them into the trace file.
//
// Each recording thread appends encoded events to its current Chunk with plain stores and
// publishes the end of the last complete event with a release store (a plain mov on x86). The
// writer thread owns everything else: it compresses full chunks, and every flush period it also
// writes the published-but-unwritten part of every thread's current chunk, so a program killed
// with SIGKILL leaves a trace that is valid up to the last flush. Memory stays bounded: when the
// chunk pool is exhausted a producer waits for the writer instead of allocating.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "trace/format.hpp"

namespace tasklens::recorder {

inline constexpr size_t kChunkBytes = 256 * 1024;

struct Chunk {
  std::atomic<uint32_t> committed{0};  // bytes of complete events (written by the producer)
  uint32_t written = 0;                // bytes already in the file (writer thread only)
  uint32_t seq = 0;                    // per-thread sequence number
  uint32_t thread = 0;
  Chunk* next = nullptr;  // queue / free-list link (under the pool mutex)
  alignas(64) uint8_t data[kChunkBytes];
};

struct SwitchRing;

struct ThreadBuffer {
  std::atomic<Chunk*> current{nullptr};  // read by the writer thread for periodic flushes
  SwitchRing* switches = nullptr;        // the thread's preemptions (drained by the writer)
  uint32_t thread = 0;
  uint32_t next_seq = 0;
  ThreadBuffer* next = nullptr;  // registry link (under the pool mutex)
};

struct WriterConfig {
  int fd = -1;
  unsigned flush_period_ms = 100;
  size_t max_chunks = 1024;  // 256 MiB of buffers at most
  // How event blocks are compressed (`record --compression`). LZ4 by default: on this data it
  // costs about half of zstd's CPU (oneTBB fib: 37 instead of 70-89 ns per task), which the
  // program pays whenever the writer shares its CPUs; zstd makes files about half as big.
  trace::Compression compression = trace::Compression::Lz4;
  int zstd_level = 1;
};

// Sets the output file and limits; must come before anything is written.
void writer_configure(const WriterConfig& config);

// Starts the writer thread. Returns false if it cannot be started; events are then written by
// the producing threads themselves when their chunk is full (slower, still correct).
bool writer_start();

// Registers a new thread's buffer (with its first chunk). Never returns null unless out of
// memory, in which case the thread records nothing.
ThreadBuffer* buffer_register(uint32_t thread, bool watch_preemptions);

// Called by the owner when `current` lacks room: hands the chunk to the writer and returns a
// fresh one (waiting for the writer if the pool is exhausted).
Chunk* buffer_rotate(ThreadBuffer* buffer);

// Writes every published event of every thread, stops the writer thread, and appends `tail`
// (already framed records) to the file. Idempotent; safe to call from an atexit handler.
void writer_finish(const void* tail, size_t tail_size);

// Appends framed records to the file from any thread (serialized with the writer).
void writer_append(const void* data, size_t size);

}  // namespace tasklens::recorder
