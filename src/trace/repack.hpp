// Compressing a recorded trace after the run. The recorder stores event blocks raw while the
// program runs (deferred compression, recorder/buffer.hpp's WriterConfig), so that compressing
// them does not slow the program it measures; `tasklens record` then compresses those blocks
// here, on every CPU, once the program has ended. Every other record, and any block already
// compressed, is copied as it is; so is an unfinished record at the end of a cut trace.
#pragma once

#include <zstd.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "trace/format.hpp"

namespace tasklens::trace {

struct RepackResult {
  bool rewritten = false;        // the file was replaced by its compressed form
  uint64_t blocks = 0;           // raw event blocks compressed
  uint64_t off_cpu_records = 0;  // off-CPU records packed (RecordType::OffCpuPacked)
  uint64_t bytes_in = 0;         // the file's size before
  uint64_t bytes_out = 0;        // and after (== bytes_in when not rewritten)
  std::string error;             // why the file was left as it was (empty: nothing went wrong)
};

// Room compress_events needs for `raw` bytes, whatever the codec.
size_t compress_bound(size_t raw);

// Compresses `raw` event bytes at `src` into `out` (compress_bound(raw) bytes of room) with
// `codec` (Lz4, or Zstd at `zstd_level` with `cctx`, created by the caller); returns the
// compressed size, or 0 when the block is better stored as it is (it would not shrink, or the
// codec is None). The recorder's writers and compress_raw_blocks both use it.
size_t compress_events(Compression codec, int zstd_level, ZSTD_CCtx* cctx, const uint8_t* src,
                       size_t raw, uint8_t* out);

// Compresses the raw event blocks of the trace at `path` with `codec` (Lz4 or Zstd at
// `zstd_level`) on `threads` threads (0: every online CPU), and packs its off-CPU records
// (trace/off_cpu_pack.hpp; zstd at `zstd_level` whatever the codec). The result goes to a temporary
// file beside it, which then replaces it (its mode kept); `path` must name a regular file. On any
// failure (no room, a read error) the trace is left untouched, still readable, and `error` says
// why. A block that does not shrink stays raw.
// zstd's level after the run: 3 rather than 1 buys smaller traces, most of all with `depend`
// clauses (tile addresses repeated from task to task), for more CPU spent after the program has
// ended (measured in docs/benchmarks.md, "Trace bytes"); while the program runs the writers keep
// level 1 (RecorderConfig::zstd_level), whose CPU is the program's.
inline constexpr int kAfterRunZstdLevel = 3;
RepackResult compress_raw_blocks(const std::string& path, Compression codec,
                                 int zstd_level = kAfterRunZstdLevel, unsigned threads = 0);

}  // namespace tasklens::trace
