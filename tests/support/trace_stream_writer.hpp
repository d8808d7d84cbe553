// Hand-made event streams and trace files for the trace reader's tests (trace_test,
// trace_events_test, trace_versions_test): the encoding the recorder uses, written event by event.
#pragma once
#include <gtest/gtest.h>
#include <lz4.h>
#include <unistd.h>
#include <zstd.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "trace/format.hpp"
#include "trace/reader.hpp"
#include "trace_builder.hpp"

namespace tasklens::trace {

// Encodes events the way the recorder does (ids and ptrs as zig-zag deltas).
struct StreamWriter {
  std::vector<uint8_t> bytes;
  uint64_t time = 1000, id = 0, ptr = 0, addr = 0;
  void varint(uint64_t v) {
    uint8_t buf[10];
    uint8_t* e = put_varint(buf, v);
    bytes.insert(bytes.end(), buf, e);
  }
  void begin(EventKind k, uint64_t at) {
    bytes.push_back(static_cast<uint8_t>(k));
    varint(at - time);
    time = at;
  }
  void put_id(uint64_t v) {
    varint(zigzag(static_cast<int64_t>(v - id)));
    id = v;
  }
  void put_ptr(uint64_t v) {
    varint(zigzag(static_cast<int64_t>(v - ptr)));
    ptr = v;
  }
  void put_addr(uint64_t v) {
    varint(zigzag(static_cast<int64_t>(v - addr)));
    addr = v;
  }
};

// What `tasklens record` appends after the program ended (here: killed by SIGKILL).
inline void append_launch_status(std::vector<uint8_t>& out) {
  LaunchStatus ls{0, 9, 1000};
  append_record(out, RecordType::LaunchStatus, &ls, sizeof ls);
}

inline std::string write_temp(const std::vector<uint8_t>& bytes) {
  char path[] = "/tmp/tasklens_trace_testXXXXXX";
  int fd = mkstemp(path);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
  close(fd);
  return path;
}

// A file of `header`, `schema` and one stream of events in one block, as the program ended.
inline std::vector<uint8_t> one_stream_file(const FileHeader& header,
                                            const std::vector<uint8_t>& schema,
                                            const std::vector<uint8_t>& stream) {
  std::vector<uint8_t> out(reinterpret_cast<const uint8_t*>(&header),
                           reinterpret_cast<const uint8_t*>(&header + 1));
  append_record(out, RecordType::EventSchema, schema.data(), schema.size());
  EventBlockHeader bh{};
  bh.raw_size = static_cast<uint32_t>(stream.size());
  append_record(out, RecordType::EventBlock, &bh, sizeof bh, stream.data(), stream.size());
  append_launch_status(out);
  return out;
}

// The events of `stream`, read back from a one-stream file (clock starting at `start`) whose
// schema is the recorder's plus `extra` entries of six bytes each (kind, fixed fields,
// repeated, id, ptr and addr masks): kinds a later writer adds, or a damaged schema. The
// events' `values` and `groups` point into the decoder, gone on return: not for reading.
inline std::vector<Event> read_with_schema_extras(const std::vector<std::vector<uint8_t>>& extra,
                                                  const std::vector<uint8_t>& stream,
                                                  uint64_t start = 1010) {
  std::vector<uint8_t> schema = make_schema_payload();
  uint32_t count;
  std::memcpy(&count, schema.data(), 4);
  count += static_cast<uint32_t>(extra.size());
  std::memcpy(schema.data(), &count, 4);
  for (const std::vector<uint8_t>& entry : extra)
    schema.insert(schema.end(), entry.begin(), entry.end());
  const std::string p =
      write_temp(one_stream_file(make_file_header(1, start, 0, Metric::Tsc), schema, stream));
  std::vector<Event> events;
  {
    TraceFile t = TraceFile::open(p);
    std::vector<uint8_t> bytes = t.stream(0);
    EventDecoder d = t.decoder(bytes);
    for (Event e; d.next(e);) events.push_back(e);
  }
  unlink(p.c_str());
  return events;
}

// A small trace (fixtures::test_trace_head's) of `streams`, each in two blocks written in
// reverse order (the reader must sort them), or (block_bytes > 0) in blocks of that
// many bytes, cut wherever they fall (inside events too).
inline std::vector<uint8_t> file_with(const std::vector<std::vector<uint8_t>>& streams, bool finish,
                                      Compression compress, size_t block_bytes = 0) {
  std::vector<uint8_t> out = fixtures::test_trace_head();
  ClockSync b{3001000, 1000000};
  for (uint32_t t = 0; t < streams.size(); ++t) {
    // Two blocks per stream, written in reverse order: the reader must sort them.
    const auto& s = streams[t];
    size_t half = s.size() / 2;
    std::vector<std::pair<size_t, size_t>> parts{{half, s.size()}, {0, half}};
    if (block_bytes > 0) {
      parts.clear();
      for (size_t lo = 0; lo < s.size(); lo += block_bytes)
        parts.emplace_back(lo, std::min(s.size(), lo + block_bytes));
    }
    for (auto [lo, hi] : parts) {
      EventBlockHeader bh{};
      bh.thread = t;
      bh.chunk_seq = 0;
      bh.offset = static_cast<uint32_t>(lo);
      bh.raw_size = static_cast<uint32_t>(hi - lo);
      std::vector<uint8_t> data(s.begin() + lo, s.begin() + hi);
      if (compress == Compression::Zstd) {
        std::vector<uint8_t> z(ZSTD_compressBound(data.size()));
        z.resize(ZSTD_compress(z.data(), z.size(), data.data(), data.size(), 1));
        data = z;
      } else if (compress == Compression::Lz4) {
        std::vector<uint8_t> z(LZ4_compressBound(static_cast<int>(data.size())));
        z.resize(LZ4_compress_default(reinterpret_cast<const char*>(data.data()),
                                      reinterpret_cast<char*>(z.data()),
                                      static_cast<int>(data.size()), static_cast<int>(z.size())));
        data = z;
      }
      bh.compression = static_cast<uint8_t>(compress);
      append_record(out, RecordType::EventBlock, &bh, sizeof bh, data.data(), data.size());
    }
  }
  uint32_t unknown = 0xdead;  // a record type from the future: skipped
  append_record(out, static_cast<RecordType>(99), &unknown, 4);
  append_record(out, RecordType::ClockSync, &b, sizeof b);
  if (finish) {
    Finish f{};
    f.tasks_created = 1;
    f.end_tsc = 6000001000;  // 2 s after the header's start (TSC 1000) at the syncs' 3 GHz
    append_record(out, RecordType::Finish, &f, sizeof f);
  }
  return out;
}

// Reading `bytes` as a file fails with one line that names the file and holds `fragment`, read
// whole or block by block.
inline void expect_error(const std::vector<uint8_t>& bytes, const std::string& fragment) {
  std::string p = write_temp(bytes);
  for (bool by_block : {false, true}) {
    try {
      TraceFile t = TraceFile::open(p);
      for (uint32_t i = 0; i < t.stream_count(); ++i) {
        std::vector<uint8_t> s = by_block ? std::vector<uint8_t>{} : t.stream(i);
        EventDecoder d = by_block ? t.decoder(i) : t.decoder(s);
        Event e;
        while (d.next(e)) {
        }
      }
      ADD_FAILURE() << "no error for: " << fragment << (by_block ? " (block by block)" : "");
    } catch (const TraceError& e) {
      std::string what = e.what();
      EXPECT_NE(what.find(p), std::string::npos) << what;  // names the file
      EXPECT_NE(what.find(fragment), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;  // one line
    }
  }
  unlink(p.c_str());
}

}  // namespace tasklens::trace
