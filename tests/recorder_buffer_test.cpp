// The recorder's per-thread buffers and writer thread: several producers write events while the
// writer drains full chunks and flushes partial ones; every event must reach the file exactly
// once and in order. Runs under TSan in scripts/test.sh.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "recorder/buffer.hpp"
#include "trace/format.hpp"
#include "trace/reader.hpp"

namespace tasklens {
namespace {

using recorder::Chunk;

TEST(RecorderBuffer, ConcurrentProducersLoseNothingAndKeepOrder) {
  char path[] = "/tmp/tasklens_buffer_testXXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  recorder::WriterConfig config;
  config.fd = fd;
  config.flush_period_ms = 1;  // many partial flushes racing with the producers
  config.max_chunks = 6;       // a tiny pool: producers must wait for the writer
  recorder::writer_configure(config);
  std::vector<uint8_t> head;
  trace::FileHeader h = trace::make_file_header(1, 0, 0, trace::Metric::Tsc);
  head.insert(head.end(), reinterpret_cast<uint8_t*>(&h), reinterpret_cast<uint8_t*>(&h + 1));
  std::vector<uint8_t> schema = trace::make_schema_payload();
  trace::append_record(head, trace::RecordType::EventSchema, schema.data(), schema.size());
  recorder::writer_append(head.data(), head.size());
  ASSERT_TRUE(recorder::writer_start());

  constexpr int kThreads = 4;
  constexpr uint64_t kEvents = 200000;  // ~ 4 bytes each: several chunks per thread
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      recorder::ThreadBuffer* b = recorder::buffer_register(static_cast<uint32_t>(t), true);
      ASSERT_NE(b, nullptr);
      Chunk* c = b->current.load();
      uint8_t* pos = c->data;
      for (uint64_t i = 0; i < kEvents; ++i) {
        if (static_cast<size_t>(c->data + recorder::kChunkBytes - pos) < trace::kMaxEventBytes) {
          c = recorder::buffer_rotate(b);
          ASSERT_NE(c, nullptr);
          pos = c->data;
        }
        *pos++ = static_cast<uint8_t>(trace::EventKind::ThreadBegin);
        pos = trace::put_varint(pos, 1);  // dt
        pos = trace::put_varint(pos, i);  // the field: a sequence number
        c->committed.store(static_cast<uint32_t>(pos - c->data), std::memory_order_release);
      }
    });
  }
  for (auto& th : threads) th.join();
  std::vector<uint8_t> tail;
  trace::Finish finish{};
  trace::append_record(tail, trace::RecordType::Finish, &finish, sizeof finish);
  recorder::writer_finish(tail.data(), tail.size());
  close(fd);

  trace::TraceFile file = trace::TraceFile::open(path);
  ASSERT_EQ(file.stream_count(), static_cast<uint32_t>(kThreads));
  for (uint32_t t = 0; t < kThreads; ++t) {
    std::vector<uint8_t> s = file.stream(t);
    trace::EventDecoder d = file.decoder(s);
    trace::Event e;
    uint64_t expected = 0;
    while (d.next(e)) {
      ASSERT_EQ(e.f[0], expected) << "thread " << t;
      ++expected;
    }
    EXPECT_EQ(expected, kEvents) << "thread " << t;
    EXPECT_FALSE(d.truncated());
  }
  unlink(path);
}

}  // namespace
}  // namespace tasklens
