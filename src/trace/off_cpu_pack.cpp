// Packing and unpacking the off-CPU intervals (off_cpu_pack.hpp).
#include "trace/off_cpu_pack.hpp"

#include <cstring>

namespace tasklens::trace {

namespace {

void put_varint(uint64_t v, std::vector<uint8_t>& out) {
  uint8_t bytes[10];
  out.insert(out.end(), bytes, trace::put_varint(bytes, v));
}

bool get_varint(const uint8_t*& p, const uint8_t* end, uint64_t& v) {
  v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (p == end) return false;
    const uint8_t b = *p++;
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) return true;
  }
  return false;
}

// Differences between times are taken modulo 2^64 and coded as signed: exact for any times.
int64_t minus(uint64_t a, uint64_t b) { return static_cast<int64_t>(a - b); }

}  // namespace

bool pack_off_cpu(RecordType type, uint32_t thread, const uint64_t* pairs, uint32_t count,
                  int level, ZSTD_CCtx* cctx, std::vector<uint8_t>& payload) {
  OffCpuPackedHeader h{};
  h.thread = thread;
  h.type = static_cast<uint32_t>(type);
  h.in_order = 1;
  thread_local std::vector<uint8_t> varints;
  varints.clear();
  uint64_t previous_end = 0, previous_begin = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const uint64_t begin = pairs[2 * i], end = pairs[2 * i + 1];
    if (end <= begin) continue;  // no time: every reader skips it
    if (h.count == 0) {
      h.first_begin = begin;
      previous_end = begin;
    } else if (begin < previous_begin) {
      h.in_order = 0;
    }
    put_varint(zigzag(minus(begin, previous_end)), varints);
    put_varint(zigzag(minus(end, begin)), varints);
    previous_begin = h.last_begin = begin;
    previous_end = end;
    ++h.count;
  }
  h.raw_size = static_cast<uint32_t>(varints.size());
  payload.resize(sizeof h + ZSTD_compressBound(varints.size()));
  size_t packed = 0;
  if (!varints.empty()) {
    // With the frame's checksum: a damaged record is refused, not read as other intervals.
    ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);
    packed = ZSTD_compress2(cctx, payload.data() + sizeof h, payload.size() - sizeof h,
                            varints.data(), varints.size());
    if (ZSTD_isError(packed)) return false;  // (not with the bound's room)
  }
  std::memcpy(payload.data(), &h, sizeof h);
  payload.resize(sizeof h + packed);
  return true;
}

bool plausible_off_cpu_header(const OffCpuPackedHeader& h, uint64_t packed_bytes) {
  if (!is_off_cpu_type(h.type)) return false;
  if (h.count == 0) return h.raw_size == 0 && packed_bytes == 0;
  return uint64_t{h.raw_size} >= 2ull * h.count && uint64_t{h.raw_size} <= 20ull * h.count &&
         packed_bytes > 0 && packed_bytes <= ZSTD_compressBound(h.raw_size);
}

bool unpack_off_cpu(const OffCpuPackedHeader& h, const uint8_t* packed, size_t packed_bytes,
                    std::vector<uint64_t>& pairs, std::string& error) {
  pairs.clear();
  if (h.count == 0) return true;
  thread_local std::vector<uint8_t> varints;
  varints.resize(h.raw_size);
  const size_t got = ZSTD_decompress(varints.data(), varints.size(), packed, packed_bytes);
  if (ZSTD_isError(got) || got != h.raw_size) {
    error = std::string("zstd: ") + (ZSTD_isError(got) ? ZSTD_getErrorName(got) : "size mismatch");
    return false;
  }
  pairs.resize(size_t{h.count} * 2);
  const uint8_t* p = varints.data();
  const uint8_t* const end = p + varints.size();
  uint64_t previous_end = h.first_begin, previous_begin = h.first_begin;
  for (uint32_t i = 0; i < h.count; ++i) {
    uint64_t gap, length;
    if (!get_varint(p, end, gap) || !get_varint(p, end, length)) {
      error = "its intervals end early";
      return false;
    }
    const uint64_t begin = previous_end + static_cast<uint64_t>(unzigzag(gap));
    if (h.in_order && begin < previous_begin) {
      error = "an interval out of the order its header gives";
      return false;
    }
    pairs[2 * i] = previous_begin = begin;
    pairs[2 * i + 1] = previous_end = begin + static_cast<uint64_t>(unzigzag(length));
  }
  if (p != end) {
    error = "bytes after its intervals";
    return false;
  }
  if (previous_begin != h.last_begin) {
    error = "its last interval is not the one its header gives";
    return false;
  }
  return true;
}

}  // namespace tasklens::trace
