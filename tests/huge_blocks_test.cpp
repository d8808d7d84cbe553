// The readers' big blocks in transparent huge pages (src/cli/huge_blocks.hpp).
#include "cli/huge_blocks.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace tasklens::cli;

constexpr std::uintptr_t kTwoMiB = std::uintptr_t{2} << 20;

bool mapped(const void* p) {
  unsigned char resident = 0;
  void* page = reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(p) & ~std::uintptr_t{4095});
  return mincore(page, 4096, &resident) == 0 || errno != ENOMEM;
}

// The smaps entry of the mapping that starts at p ("" if none does). A mapping's header line
// starts with its address in lower-case hex; its attribute lines with a capitalized key.
std::string smaps_entry(const void* p) {
  std::ifstream in("/proc/self/smaps");
  std::ostringstream key;
  key << std::hex << reinterpret_cast<std::uintptr_t>(p) << '-';
  std::string line, entry;
  bool inside = false;
  while (std::getline(in, line)) {
    const bool header = !line.empty() && (std::isdigit(static_cast<unsigned char>(line[0])) ||
                                          (line[0] >= 'a' && line[0] <= 'f'));
    if (header) {
      if (inside) break;
      inside = line.rfind(key.str(), 0) == 0;
    }
    if (inside) entry += line + "\n";
  }
  return entry;
}

TEST(HugeBlocks, ABlockIsAlignedWritableMarkedAndUnmappedWhenFreed) {
  if (!huge_pages_available()) GTEST_SKIP() << "transparent huge pages are off on this machine";
  const size_t live = huge_blocks_live();
  const size_t bytes = (size_t{9} << 20) + 123;  // not a multiple of 2 MiB
  auto* p = static_cast<unsigned char*>(huge_block_alloc(bytes));
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % kTwoMiB, 0u);
  EXPECT_EQ(huge_blocks_live(), live + 1);
  std::memset(p, 0xab, bytes);
  EXPECT_EQ(p[0], 0xab);
  EXPECT_EQ(p[bytes - 1], 0xab);
  const std::string entry = smaps_entry(p);
  ASSERT_FALSE(entry.empty()) << "no mapping starts at the block";
  EXPECT_NE(entry.find(" hg"), std::string::npos) << "not marked MADV_HUGEPAGE:\n" << entry;
  EXPECT_TRUE(huge_block_free(p));
  EXPECT_EQ(huge_blocks_live(), live);
  EXPECT_FALSE(mapped(p));
  EXPECT_FALSE(huge_block_free(p)) << "freed twice";
}

TEST(HugeBlocks, OtherPointersAreNotTaken) {
  EXPECT_FALSE(huge_block_free(nullptr));
  void* small = std::malloc(64);
  EXPECT_FALSE(huge_block_free(small));
  std::free(small);
  // 2 MiB-aligned, like the blocks, but not one of them.
  void* aligned = std::aligned_alloc(kTwoMiB, kTwoMiB);
  ASSERT_NE(aligned, nullptr);
  EXPECT_FALSE(huge_block_free(aligned));
  std::memset(aligned, 1, kTwoMiB);  // still the caller's
  std::free(aligned);
}

TEST(HugeBlocks, AFullTableDeclinesAndRecovers) {
  if (!huge_pages_available()) GTEST_SKIP() << "transparent huge pages are off on this machine";
  // Address space only: the blocks are never touched.
  std::vector<void*> blocks;
  for (;;) {
    void* p = huge_block_alloc(kHugeBlockMin);
    if (!p) break;
    blocks.push_back(p);
    ASSERT_LT(blocks.size(), 100000u) << "the table never filled";
  }
  EXPECT_GE(blocks.size(), 256u);
  EXPECT_EQ(huge_block_alloc(kHugeBlockMin), nullptr);
  ASSERT_TRUE(huge_block_free(blocks.back()));
  blocks.pop_back();
  void* again = huge_block_alloc(kHugeBlockMin);
  EXPECT_NE(again, nullptr);
  if (again) blocks.push_back(again);
  for (void* p : blocks) EXPECT_TRUE(huge_block_free(p));
  EXPECT_EQ(huge_blocks_live(), 0u);
}

TEST(HugeBlocks, ThreadsAllocateAndFreeTogether) {
  if (!huge_pages_available()) GTEST_SKIP() << "transparent huge pages are off on this machine";
  auto churn = [] {
    for (int i = 0; i < 200; ++i) {
      auto* p = static_cast<unsigned char*>(huge_block_alloc(kHugeBlockMin + i));
      ASSERT_NE(p, nullptr);
      p[0] = static_cast<unsigned char>(i);
      p[kHugeBlockMin + i - 1] = 1;
      ASSERT_TRUE(huge_block_free(p));
    }
  };
  std::thread a(churn), b(churn);
  a.join();
  b.join();
  EXPECT_EQ(huge_blocks_live(), 0u);
}

TEST(HugeBlocks, NothingWhenHugePagesAreOff) {
  if (huge_pages_available()) GTEST_SKIP() << "transparent huge pages are on on this machine";
  EXPECT_EQ(huge_block_alloc(kHugeBlockMin), nullptr);
}

}  // namespace
