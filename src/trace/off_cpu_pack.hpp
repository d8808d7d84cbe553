// The threads' off-CPU intervals packed (RecordType::OffCpuPacked, format.hpp). The recorder
// writes each interval in 16 bytes (two CLOCK_MONOTONIC times) while the program runs, where
// encoding would cost the program's time; on a busy host they are a large part of a trace
// (docs/benchmarks.md). `tasklens record` packs them after the run (repack.cpp) and readers unpack
// a record at a time (TraceFile::read_off_cpu).
#pragma once

#include <zstd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "trace/format.hpp"

namespace tasklens::trace {

// Whether a record type is one of the off-CPU interval records OffCpuPacked packs
// (Preemptions, Blocked, SlowFaults: the same payload, format.hpp).
inline bool is_off_cpu_type(uint32_t type) {
  return type == static_cast<uint32_t>(RecordType::Preemptions) ||
         type == static_cast<uint32_t>(RecordType::Blocked) ||
         type == static_cast<uint32_t>(RecordType::SlowFaults);
}

// The payload of an OffCpuPacked record (its OffCpuPackedHeader, then the compressed varints)
// for the `count` intervals at `pairs` (begin, end, begin, end, ...) of a record of `type` for
// `thread`, zstd at `level` with `cctx`, into `payload`. Empty and reversed intervals are left
// out. False (payload undefined) if zstd failed: the record is then best kept as it was.
bool pack_off_cpu(RecordType type, uint32_t thread, const uint64_t* pairs, uint32_t count,
                  int level, ZSTD_CCtx* cctx, std::vector<uint8_t>& payload);

// Whether a header's sizes are possible (each interval takes 2 to 20 bytes of varints; the
// compressed bytes no more than zstd's bound): what a reader checks before trusting them.
bool plausible_off_cpu_header(const OffCpuPackedHeader& h, uint64_t packed_bytes);

// The intervals of a packed record (`packed` its compressed bytes) into `pairs` (2 x count
// words). False, with `error` saying what is wrong, when the bytes do not decode to the count
// the header gives or, for a record in order, a begin goes back.
bool unpack_off_cpu(const OffCpuPackedHeader& h, const uint8_t* packed, size_t packed_bytes,
                    std::vector<uint64_t>& pairs, std::string& error);

}  // namespace tasklens::trace
