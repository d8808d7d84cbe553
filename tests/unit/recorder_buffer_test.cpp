// The recorder's per-thread buffers and writer threads: several producers write events while the
// writers drain full chunks and flush partial ones; every event must reach the file exactly
// once and in order. Runs under TSan in scripts/test.sh.
//
// The buffer pool is one per process (as in a recorded program), so each case records in a
// child process forked from the single-threaded test process, and the parent checks the file.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "recorder/buffer.hpp"
#include "recorder/raw_events.hpp"
#include "trace/format.hpp"
#include "trace/reader.hpp"

#if defined(__SANITIZE_THREAD__)
// A race seen in a recording child must fail the test: the child ends with _exit, which skips
// the exit code TSan sets at a normal exit, so the first report aborts the child instead.
extern "C" const char* __tsan_default_options() { return "halt_on_error=1"; }
#endif

namespace tasklens {
namespace {

using recorder::Chunk;

struct Scenario {
  int threads = 4;
  unsigned writers = 1;
  unsigned max_writers = 0;  // with helpers (WriterConfig::max_writers); 0: `writers`, no helper
  size_t max_chunks = 6;
  unsigned writer_delay_us = 0;  // slows the writers down: producers must wait
  uint64_t events = 40000;       // per thread, 24 bytes each: several chunks per thread
  bool defer = false;            // deferred compression (WriterConfig::defer_compression)
  uint64_t raw_budget = 0;
  // LZ4 cannot shrink these events (4-byte matches; each event's sequence number differs).
  trace::Compression compression = trace::Compression::Lz4;
};

// What the child reports: whether its own checks held, and the writers' statistics.
struct ChildResult {
  int ok = 0;
  recorder::WriterStats stats;
};

// In the child: records `s` into fd and returns its result.
ChildResult record(const Scenario& s, int fd) {
  ChildResult r;
  recorder::WriterConfig config;
  config.fd = fd;
  config.flush_period_ms = 1;  // many partial flushes racing with the producers
  config.max_chunks = s.max_chunks;
  config.writers = s.writers;
  config.max_writers = s.max_writers ? s.max_writers : s.writers;
  config.test_delay_us = s.writer_delay_us;
  config.defer_compression = s.defer;
  config.raw_budget = s.raw_budget;
  config.compression = s.compression;
  // The buffer logic is under test, not the policy: under SCHED_IDLE the writers of a test on a
  // loaded machine (a parallel build, ctest -j) get almost no CPU.
  config.policy = recorder::WriterPolicy::Normal;
  recorder::writer_configure(config);
  std::vector<uint8_t> head;
  trace::FileHeader h = trace::make_file_header(1, 0, 0, trace::Metric::Tsc);
  head.insert(head.end(), reinterpret_cast<uint8_t*>(&h), reinterpret_cast<uint8_t*>(&h + 1));
  std::vector<uint8_t> schema = trace::make_schema_payload();
  trace::append_record(head, trace::RecordType::EventSchema, schema.data(), schema.size());
  recorder::writer_append(head.data(), head.size());
  if (!recorder::writer_start()) return r;

  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < s.threads; ++t) {
    threads.emplace_back([t, &s, &failures] {
      recorder::ThreadBuffer* b = recorder::buffer_register(static_cast<uint32_t>(t), true);
      if (!b) {
        failures.fetch_add(1);
        return;
      }
      Chunk* c = b->current.load();
      uint8_t* pos = c->data;
      for (uint64_t i = 0; i < s.events; ++i) {
        if (static_cast<size_t>(c->data + recorder::kChunkBytes - pos) <
            recorder::kMaxRawEventBytes) {
          c = recorder::buffer_rotate(b);
          if (!c) {
            failures.fetch_add(1);
            return;
          }
          pos = c->data;
        }
        // Raw events as the recorder's threads write them (raw_events.hpp), one tick apart; the
        // writers encode them. The field is an id: encoded as a delta from the previous event's,
        // like the time, so a block encoded out of the stream's order reads back wrong.
        pos = recorder::put_raw(pos, recorder::raw_head(trace::EventKind::SyncWaitBegin, i + 1));
        pos = recorder::put_raw(pos, 4);  // (ompt_sync_region_taskgroup)
        pos = recorder::put_raw(pos, i);  // the id: a sequence number
        c->end.store(pos, std::memory_order_release);
      }
    });
  }
  for (auto& th : threads) th.join();
  // Taken before the finish: the writers are still running, so their count shows.
  r.stats = recorder::writer_stats();
  std::vector<uint8_t> tail;
  trace::Finish finish{};
  trace::append_record(tail, trace::RecordType::Finish, &finish, sizeof finish);
  recorder::writer_finish(tail.data(), tail.size());
  recorder::WriterStats after = recorder::writer_stats();
  r.stats.stalls = after.stalls;
  r.stats.stall_ticks = after.stall_ticks;
  r.stats.writer_cpu_ns = after.writer_cpu_ns;
  r.ok = failures.load() == 0;
  return r;
}

// Records `s` in a child process and checks that the file holds every thread's events exactly
// once and in order. Returns the child's statistics.
recorder::WriterStats record_and_check(const Scenario& s,
                                       trace::TraceFile::BlockCounts* blocks = nullptr) {
  char path[] = "/tmp/tasklens_buffer_testXXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  int pipe_fds[2];
  EXPECT_EQ(pipe(pipe_fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(pipe_fds[0]);
    ChildResult r = record(s, fd);
    ssize_t n = write(pipe_fds[1], &r, sizeof r);
    _exit(n == sizeof r ? 0 : 1);
  }
  close(pipe_fds[1]);
  close(fd);
  ChildResult r;
  ssize_t got = read(pipe_fds[0], &r, sizeof r);
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  EXPECT_EQ(got, static_cast<ssize_t>(sizeof r));
  EXPECT_TRUE(r.ok) << "a producer got no chunk";

  trace::TraceFile file = trace::TraceFile::open(path);
  if (blocks) *blocks = file.block_counts();
  EXPECT_EQ(file.stream_count(), static_cast<uint32_t>(s.threads));
  for (uint32_t t = 0; t < file.stream_count(); ++t) {
    std::vector<uint8_t> stream = file.stream(t);
    trace::EventDecoder d = file.decoder(stream);
    trace::Event e;
    uint64_t expected = 0;
    while (d.next(e)) {
      if (e.f[1] != expected || e.time != expected + 1) {
        ADD_FAILURE() << "thread " << t << ": event " << e.f[1] << " at " << e.time << " where "
                      << expected << " at " << expected + 1 << " was expected";
        break;
      }
      ++expected;
    }
    EXPECT_EQ(expected, s.events) << "thread " << t;
    EXPECT_FALSE(d.truncated());
  }
  unlink(path);
  return r.stats;
}

TEST(RecorderBuffer, ConcurrentProducersLoseNothingAndKeepOrder) {
  Scenario s;  // one writer, a tiny pool: producers must wait for it
  recorder::WriterStats stats = record_and_check(s);
  EXPECT_EQ(stats.writers, 1u);
}

// Many threads over several writers, each writing its own threads' chunks; a pool of barely
// more chunks than threads, and slow writers, so that every producer waits again and again and
// the writers recycle chunks between threads (their own stashes, other threads' spares).
TEST(RecorderBuffer, SeveralWritersManyThreadsTinyPool) {
  Scenario s;
  s.threads = 16;
  s.writers = 4;
  s.max_chunks = 20;
  s.writer_delay_us = 300;
  s.events = 27000;  // ~ 2.5 chunks per thread: 40 chunks through a pool of 20
  recorder::WriterStats stats = record_and_check(s);
  EXPECT_EQ(stats.writers, 4u);
  EXPECT_GT(stats.stalls, 0u) << "the pool is smaller than what the threads fill";
  EXPECT_GT(stats.stall_ticks, 0u);
  EXPECT_LE(stats.chunks, s.max_chunks);
  EXPECT_GT(stats.writer_cpu_ns, 0u);
}

// One writer for many threads that fall behind it: helpers start, take over the backlogs of
// whichever threads have them (one writer at a time per thread: the order holds), and give the
// written chunks back to the waiting threads.
TEST(RecorderBuffer, HelpersStartWhenTheWritersFallBehind) {
  // A writer far slower than the producers, even under TSan; ~ 6 chunks per thread: 48 chunks
  // through a pool of 12.
  const recorder::WriterStats stats = record_and_check({.threads = 8,
                                                        .writers = 1,
                                                        .max_writers = 3,
                                                        .max_chunks = 12,
                                                        .writer_delay_us = 1000,
                                                        .events = 66000});
  EXPECT_GE(stats.helpers, 1u) << "the threads waited, yet no helper started";
  EXPECT_LE(stats.helpers, 2u) << "more writers than max_writers";
  EXPECT_EQ(stats.writers, 1u + stats.helpers);
  EXPECT_GT(stats.stalls, 0u);
}

// Writers that keep up start no helper, whatever max_writers allows.
TEST(RecorderBuffer, NoHelperWhileTheWritersKeepUp) {
  // A pool of more chunks than the threads ever fill: nobody waits.
  const recorder::WriterStats stats = record_and_check(
      {.threads = 2, .writers = 1, .max_writers = 4, .max_chunks = 64, .events = 17000});
  EXPECT_EQ(stats.stalls, 0u);
  EXPECT_EQ(stats.helpers, 0u);
  EXPECT_EQ(stats.writers, 1u);
}

// More writers than threads: some writers serve nobody; every thread still gets its chunks.
TEST(RecorderBuffer, MoreWritersThanThreads) {
  Scenario s;
  s.threads = 3;
  s.writers = 8;
  s.max_chunks = 5;
  s.events = 27000;
  recorder::WriterStats stats = record_and_check(s);
  EXPECT_EQ(stats.writers, 8u);
}

// A large pool: nothing waits, so no stall may be reported.
TEST(RecorderBuffer, NoStallsWithRoomToSpare) {
  Scenario s;
  s.threads = 8;
  s.writers = 2;
  s.max_chunks = 64;  // more than the threads ever fill
  s.events = 17000;
  recorder::WriterStats stats = record_and_check(s);
  EXPECT_EQ(stats.stalls, 0u);
  EXPECT_EQ(stats.writers, 2u);
}

// Deferred compression: blocks are stored raw while the writers keep up, up to the raw budget,
// and compressed after it; compressed as before without deferral.
TEST(RecorderBuffer, DeferredCompressionStoresRawUpToItsBudget) {
  Scenario s;
  s.threads = 2;
  s.max_chunks = 64;  // room to spare: the writer keeps up
  s.events = 250000;  // ~1.2 MB per thread in the file (6 MB of raw events: 23 chunks)
  s.defer = true;
  s.raw_budget = 1u << 20;
  s.compression = trace::Compression::Zstd;  // shrinks them
  trace::TraceFile::BlockCounts blocks;
  record_and_check(s, &blocks);
  EXPECT_GE(blocks.raw_bytes, s.raw_budget);
  EXPECT_LT(blocks.raw_bytes, s.raw_budget + 2 * recorder::kChunkBytes);  // a block per writer
  EXPECT_GT(blocks.packed_blocks, 0u) << "past the budget the writer compresses";

  s.raw_budget = uint64_t{1} << 40;
  record_and_check(s, &blocks);
  // Under its budget a writer stores raw while it keeps up; these producers do nothing but
  // write events, faster than the writer polls, so it falls behind now and then and compresses.
  EXPECT_GT(blocks.raw_bytes, uint64_t{1} << 20);  // more than the first budget

  s.defer = false;
  record_and_check(s, &blocks);
  EXPECT_GT(blocks.packed_blocks, 0u);
  EXPECT_LT(blocks.raw_bytes, 64u * 1024) << "only flushed tails that would not shrink stay raw";
}

// A thread's backlog counts as "behind" (its writer compresses as it goes) past its share of
// half the buffer memory, between 2 and 16 chunks.
TEST(RecorderBuffer, BehindMeansAShareOfTheBufferMemory) {
  EXPECT_EQ(recorder::behind_chunks_for(1024, 1), 16u);
  EXPECT_EQ(recorder::behind_chunks_for(1024, 2), 16u);
  EXPECT_EQ(recorder::behind_chunks_for(1024, 32), 16u);
  EXPECT_EQ(recorder::behind_chunks_for(1024, 64), 8u);
  EXPECT_EQ(recorder::behind_chunks_for(1024, 128), 4u);
  EXPECT_EQ(recorder::behind_chunks_for(1024, 1000), 2u);
  EXPECT_EQ(recorder::behind_chunks_for(64, 2), 16u);
  EXPECT_EQ(recorder::behind_chunks_for(16, 2), 4u);
  EXPECT_EQ(recorder::behind_chunks_for(4, 0), 2u);  // no thread yet: as for one
}

TEST(RecorderBuffer, WriterCountFollowsCpus) {
  EXPECT_EQ(recorder::max_writers_for(0, 1, 2), 1u);      // a small machine: no helper
  EXPECT_EQ(recorder::max_writers_for(0, 16, 128), 32u);  // one writer per 4 CPUs
  EXPECT_EQ(recorder::max_writers_for(0, 4, 8), 4u);      // never fewer than those started
  EXPECT_EQ(recorder::max_writers_for(6, 2, 128), 6u);    // as configured
  EXPECT_EQ(recorder::max_writers_for(1000, 2, 8), recorder::kMaxWriters);
  EXPECT_EQ(recorder::writers_for(0, 1), 1u);
  EXPECT_EQ(recorder::writers_for(0, 2), 1u);
  EXPECT_EQ(recorder::writers_for(0, 8), 1u);
  EXPECT_EQ(recorder::writers_for(0, 9), 2u);
  EXPECT_EQ(recorder::writers_for(0, 128), 16u);
  EXPECT_EQ(recorder::writers_for(3, 128), 3u);  // configured: as asked
  EXPECT_EQ(recorder::writers_for(100000, 2), recorder::kMaxWriters);
}

}  // namespace
}  // namespace tasklens
