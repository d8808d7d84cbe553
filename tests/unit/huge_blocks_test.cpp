// The readers' big blocks in transparent huge pages (src/platform/platform.hpp).
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

#include "platform/platform.hpp"

namespace {

using namespace tasklens::platform;

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

TEST(HugeBlocks, ABlockIsAlignedWritableAndMarkedAndItsPagesGoToTheNextWhenFreed) {
  if (!huge_pages_available()) GTEST_SKIP() << "transparent huge pages are off on this machine";
  huge_blocks_release_spares();
  const size_t live = huge_blocks_live();
  const size_t bytes = (size_t{9} << 20) + 123;  // not a multiple of 2 MiB: 10 MiB of pages
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
  EXPECT_FALSE(huge_block_free(p)) << "freed twice";
  EXPECT_EQ(huge_blocks_spare_bytes(), size_t{10} << 20);

  // A smaller block takes the freed pages, moved (their bytes come along, no fresh page), and
  // they leave the freed block's place.
  auto* q = static_cast<unsigned char*>(huge_block_alloc(size_t{6} << 20));
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(huge_blocks_spare_bytes(), size_t{4} << 20);
  EXPECT_EQ(q[0], 0xab);
  EXPECT_EQ(q[(size_t{6} << 20) - 1], 0xab);
  EXPECT_NE(smaps_entry(q).find(" hg"), std::string::npos) << "moved pages lost MADV_HUGEPAGE";
  EXPECT_FALSE(mapped(p)) << "the moved pages are still at the freed block's place";
  EXPECT_TRUE(mapped(p + (size_t{6} << 20))) << "the pages not moved are gone";

  // A bigger one takes the 4 MiB left (the first block's bytes 6 MiB to 9 MiB + 123 written),
  // then fresh (zeroed) memory.
  auto* r = static_cast<unsigned char*>(huge_block_alloc(size_t{8} << 20));
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(huge_blocks_spare_bytes(), 0u);
  EXPECT_EQ(r[0], 0xab);
  EXPECT_EQ(r[(size_t{3} << 20) + 122], 0xab);
  EXPECT_EQ(r[size_t{4} << 20], 0);
  EXPECT_EQ(r[(size_t{8} << 20) - 1], 0);
  EXPECT_FALSE(mapped(p + (size_t{6} << 20)));
  std::memset(r, 1, size_t{8} << 20);
  EXPECT_TRUE(huge_block_free(q));
  EXPECT_TRUE(huge_block_free(r));
  EXPECT_EQ(huge_blocks_spare_bytes(), size_t{14} << 20);
  huge_blocks_release_spares();
  EXPECT_EQ(huge_blocks_spare_bytes(), 0u);
  EXPECT_FALSE(mapped(r));
  EXPECT_FALSE(mapped(q));
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
  huge_blocks_release_spares();
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
  huge_blocks_release_spares();
}

TEST(HugeBlocks, NothingWhenHugePagesAreOff) {
  if (huge_pages_available()) GTEST_SKIP() << "transparent huge pages are on on this machine";
  EXPECT_EQ(huge_block_alloc(kHugeBlockMin), nullptr);
}

// Between a reading's passes: the spare blocks go, and so do the free pages that another
// thread's malloc arena keeps (a pass's threads free into their own arenas, where the next
// pass's may not look). Pages are checked with mincore, not the process's resident total, which
// other threads of the test runner move.
// (gcc says a sanitizer is on with __SANITIZE_*__, clang 14 only with __has_feature.)
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TASKLENS_SANITIZER_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define TASKLENS_SANITIZER_ALLOCATOR 1
#endif
#endif
TEST(HugeBlocks, FreedMemoryGoesBackToTheSystem) {
#if defined(TASKLENS_SANITIZER_ALLOCATOR)
  GTEST_SKIP() << "the sanitizer's allocator keeps freed memory by design";
#elif !defined(__GLIBC__)
  GTEST_SKIP() << "malloc's free pages are given back with glibc's malloc_trim only";
#else
  if (huge_pages_available()) {
    void* block = huge_block_alloc(kHugeBlockMin);
    ASSERT_NE(block, nullptr);
    std::memset(block, 1, kHugeBlockMin);
    ASSERT_TRUE(huge_block_free(block));
    EXPECT_GE(huge_blocks_spare_bytes(), kHugeBlockMin);
  }
  // 256 chunks of 64 KiB (under malloc's mmap threshold: from its arena), all but the last
  // freed: they merge into one free chunk that the last keeps from the arena's top, so that
  // free() itself cannot shrink the arena.
  constexpr size_t kChunks = 256, kChunk = size_t{64} << 10;
  std::vector<char*> chunks;
  std::thread([&] {
    for (size_t i = 0; i < kChunks; ++i) {
      chunks.push_back(static_cast<char*>(std::malloc(kChunk)));
      std::memset(chunks.back(), 1, kChunk);
    }
    for (size_t i = 0; i + 1 < kChunks; ++i) std::free(chunks[i]);
  }).join();
  auto resident = [](const void* p) {
    unsigned char vec = 0;
    void* page = reinterpret_cast<void*>((reinterpret_cast<std::uintptr_t>(p) + 4095) &
                                         ~std::uintptr_t{4095});
    return mincore(page, 4096, &vec) == 0 && (vec & 1) != 0;
  };
  const char* inside = chunks[kChunks / 2] + kChunk / 2;  // far from every chunk header
  EXPECT_TRUE(resident(inside)) << "a freed page of the arena is still resident before";
  give_back_freed_memory();
  EXPECT_EQ(huge_blocks_spare_bytes(), 0u);
  EXPECT_FALSE(resident(inside)) << "malloc's free pages were not given back";
  std::free(chunks.back());
#endif
}

}  // namespace
