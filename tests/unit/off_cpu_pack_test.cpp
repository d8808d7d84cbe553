// trace/off_cpu_pack: the threads' off-CPU intervals packed after the run and unpacked by the
// readers, exactly, and damaged bytes refused.
#include "trace/off_cpu_pack.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

namespace tasklens::trace {
namespace {

struct Packed {
  OffCpuPackedHeader header{};
  std::vector<uint8_t> bytes;  // the compressed varints
};

Packed pack(const std::vector<uint64_t>& pairs, RecordType type = RecordType::Preemptions) {
  ZSTD_CCtx* cctx = ZSTD_createCCtx();
  std::vector<uint8_t> payload;
  EXPECT_TRUE(pack_off_cpu(type, 3, pairs.data(), static_cast<uint32_t>(pairs.size() / 2), 3, cctx,
                           payload));
  ZSTD_freeCCtx(cctx);
  Packed p;
  EXPECT_GE(payload.size(), sizeof p.header);
  std::memcpy(&p.header, payload.data(), sizeof p.header);
  p.bytes.assign(payload.begin() + sizeof p.header, payload.end());
  return p;
}

// What a reader must get back: every interval with time in it, in the order given.
std::vector<uint64_t> with_time(const std::vector<uint64_t>& pairs) {
  std::vector<uint64_t> kept;
  for (size_t i = 0; i < pairs.size(); i += 2)
    if (pairs[i + 1] > pairs[i]) kept.insert(kept.end(), {pairs[i], pairs[i + 1]});
  return kept;
}

std::vector<uint64_t> unpack(const Packed& p) {
  std::vector<uint64_t> pairs;
  std::string error;
  EXPECT_TRUE(plausible_off_cpu_header(p.header, p.bytes.size()));
  EXPECT_TRUE(unpack_off_cpu(p.header, p.bytes.data(), p.bytes.size(), pairs, error)) << error;
  return pairs;
}

// Intervals as the recorder writes them: in time order, some overlapping or touching the one
// before (a switch reported twice), some empty or reversed, times from 0 to near 2^64.
std::vector<uint64_t> recorded(std::mt19937_64& rng, size_t count, uint64_t start) {
  std::vector<uint64_t> pairs;
  uint64_t at = start;
  for (size_t i = 0; i < count; ++i) {
    const uint64_t begin = at;
    uint64_t end = begin + rng() % 200000;
    switch (rng() % 10) {
      case 0:
        end = begin;
        break;  // empty
      case 1:
        end = begin - std::min(begin, uint64_t{5});
        break;  // reversed
      default:
        break;
    }
    pairs.insert(pairs.end(), {begin, end});
    // The next one begins after this one's end, at it, or (reported twice) inside it.
    const uint64_t step = rng() % 3 == 0 ? 0 : rng() % 5000000;
    at = std::max(begin, end) + step - (rng() % 4 == 0 ? std::min(step, uint64_t{7}) : 0);
  }
  return pairs;
}

TEST(OffCpuPack, IntervalsComeBackExactly) {
  std::mt19937_64 rng(7);
  for (uint64_t start : {uint64_t{0}, uint64_t{1} << 40, ~uint64_t{0} - (uint64_t{1} << 34)}) {
    const std::vector<uint64_t> pairs = recorded(rng, 1000, start);
    const Packed p = pack(pairs, RecordType::Blocked);
    EXPECT_EQ(p.header.type, uint32_t(RecordType::Blocked));
    EXPECT_EQ(p.header.thread, 3u);
    EXPECT_EQ(p.header.in_order, 1);
    const std::vector<uint64_t> kept = with_time(pairs);
    ASSERT_EQ(p.header.count * 2, kept.size());
    EXPECT_EQ(p.header.first_begin, kept[0]);
    EXPECT_EQ(p.header.last_begin, kept[kept.size() - 2]);
    EXPECT_EQ(unpack(p), kept) << start;
    // Far below the 16 bytes an interval the recorder writes.
    EXPECT_LT(p.bytes.size() + sizeof p.header, kept.size() / 2 * 8);
  }
}

TEST(OffCpuPack, OutOfOrderIntervalsComeBackAsTheyWereAndSaySo) {
  const std::vector<uint64_t> pairs = {500, 600, 100, 200, 300, 300, 900, 1000, 50, 60};
  const Packed p = pack(pairs);
  EXPECT_EQ(p.header.in_order, 0);
  EXPECT_EQ(unpack(p), with_time(pairs));
}

TEST(OffCpuPack, NoIntervalWithTimeIsAnEmptyRecord) {
  const Packed p = pack({10, 10, 30, 20});
  EXPECT_EQ(p.header.count, 0u);
  EXPECT_EQ(p.header.raw_size, 0u);
  EXPECT_TRUE(p.bytes.empty());
  EXPECT_TRUE(unpack(p).empty());
}

TEST(OffCpuPack, DamagedRecordsAreRefused) {
  std::mt19937_64 rng(11);
  const Packed good = pack(recorded(rng, 300, 1000));
  std::vector<uint64_t> pairs;
  std::string error;
  auto refused = [&](const OffCpuPackedHeader& h, std::vector<uint8_t> bytes) {
    error.clear();
    if (!plausible_off_cpu_header(h, bytes.size())) return true;
    return !unpack_off_cpu(h, bytes.data(), bytes.size(), pairs, error) && !error.empty();
  };
  EXPECT_FALSE(refused(good.header, good.bytes));
  OffCpuPackedHeader h = good.header;
  h.type = uint32_t(RecordType::EventBlock);  // not an off-CPU record's type
  EXPECT_TRUE(refused(h, good.bytes));
  h = good.header;
  h.count += 1;  // more intervals than the bytes hold
  EXPECT_TRUE(refused(h, good.bytes));
  h = good.header;
  h.count -= 1;  // fewer: bytes left after them
  EXPECT_TRUE(refused(h, good.bytes));
  h = good.header;
  h.raw_size += 1;  // zstd's frame says otherwise
  EXPECT_TRUE(refused(h, good.bytes));
  h = good.header;
  h.raw_size = 1;  // less than two bytes an interval
  EXPECT_TRUE(refused(h, good.bytes));
  h = good.header;
  h.last_begin += 1;
  EXPECT_TRUE(refused(h, good.bytes));
  std::vector<uint8_t> cut(good.bytes.begin(), good.bytes.end() - 3);
  EXPECT_TRUE(refused(good.header, cut));
  std::vector<uint8_t> flipped = good.bytes;
  flipped[flipped.size() / 2] ^= 0x5a;
  EXPECT_TRUE(refused(good.header, flipped));
  // A record that says its intervals are in order when they are not.
  Packed disordered = pack({500, 600, 100, 200});
  disordered.header.in_order = 1;
  EXPECT_TRUE(refused(disordered.header, disordered.bytes));
  EXPECT_NE(error.find("order"), std::string::npos) << error;
}

}  // namespace
}  // namespace tasklens::trace
