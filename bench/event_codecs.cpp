// What each compressor would cost the writers on real events: every event stream of a trace, cut
// into 256 KiB chunks as the recorder's buffers cut them, compressed chunk by chunk (each chunk
// on its own, as write_block does) with LZ4 (acceleration 1, the recorder's default, to 8) and
// zstd (negative levels and level 1). Prints, per codec, the raw bytes compressed per CPU
// second of one core and the compressed bytes per task (tasks: the trace's TaskCreate events).
//
// Usage: event_codecs TRACE.tlens (bench/event_path.sh runs it with EVENT_PATH_CODECS=1).
#include <lz4.h>
#include <zstd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "recorder/buffer.hpp"
#include "seconds.hpp"
#include "trace/reader.hpp"

namespace {

using namespace tasklens;

struct Codec {
  std::string name;
  bool lz4;
  int level;  // LZ4: acceleration; zstd: level
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: event_codecs TRACE.tlens\n");
    return 2;
  }
  trace::TraceFile file = trace::TraceFile::open(argv[1]);
  std::vector<std::vector<uint8_t>> chunks;
  uint64_t raw = 0, tasks = 0;
  for (uint32_t t = 0; t < file.stream_count(); ++t) {
    std::vector<uint8_t> s = file.stream(t);
    for (size_t at = 0; at < s.size(); at += recorder::kChunkBytes) {
      const size_t n = std::min(recorder::kChunkBytes, s.size() - at);
      chunks.emplace_back(s.begin() + static_cast<long>(at), s.begin() + static_cast<long>(at + n));
    }
    raw += s.size();
    trace::EventDecoder d = file.decoder(s);
    trace::Event e;
    while (d.next(e)) tasks += e.kind == trace::EventKind::TaskCreate;
  }
  if (raw == 0 || tasks == 0) {
    std::fprintf(stderr, "event_codecs: no tasks in %s\n", argv[1]);
    return 1;
  }
  std::printf("%s: %.1f MB of events in %zu chunks, %llu tasks, %.1f raw bytes per task\n", argv[1],
              static_cast<double>(raw) / 1e6, chunks.size(), static_cast<unsigned long long>(tasks),
              static_cast<double>(raw) / static_cast<double>(tasks));
  const Codec codecs[] = {{"lz4", true, 1},        {"lz4 fast 2", true, 2}, {"lz4 fast 4", true, 4},
                          {"lz4 fast 8", true, 8}, {"zstd -5", false, -5},  {"zstd -3", false, -3},
                          {"zstd -1", false, -1},  {"zstd 1", false, 1}};
  std::vector<uint8_t> out(ZSTD_compressBound(recorder::kChunkBytes) + 1024);
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  std::printf("%-12s %14s %12s %8s\n", "codec", "MB/s per core", "bytes/task", "ratio");
  for (const Codec& c : codecs) {
    uint64_t packed = 0, done = 0;
    const double t0 = bench::seconds(CLOCK_THREAD_CPUTIME_ID);
    double elapsed = 0;
    // At least a second of CPU per codec, and whole passes over the data.
    for (int pass = 0; pass == 0 || elapsed < 1.0; ++pass) {
      uint64_t bytes = 0;
      for (const auto& chunk : chunks) {
        size_t n;
        if (c.lz4) {
          n = static_cast<size_t>(LZ4_compress_fast(
              reinterpret_cast<const char*>(chunk.data()), reinterpret_cast<char*>(out.data()),
              static_cast<int>(chunk.size()), static_cast<int>(out.size()), c.level));
        } else {
          n = ZSTD_compressCCtx(cctx, out.data(), out.size(), chunk.data(), chunk.size(), c.level);
          if (ZSTD_isError(n)) n = chunk.size();
        }
        bytes += n < chunk.size() && n > 0 ? n : chunk.size();  // stored when it does not shrink
        done += chunk.size();
      }
      packed = bytes;
      elapsed = bench::seconds(CLOCK_THREAD_CPUTIME_ID) - t0;
    }
    std::printf("%-12s %14.0f %12.2f %8.2f\n", c.name.c_str(),
                static_cast<double>(done) / elapsed / 1e6,
                static_cast<double>(packed) / static_cast<double>(tasks),
                static_cast<double>(raw) / static_cast<double>(packed));
  }
  ZSTD_freeCCtx(cctx);
  return 0;
}
