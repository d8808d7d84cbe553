// Large blocks in transparent huge pages (see huge_blocks.hpp for why).
#include "cli/huge_blocks.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>

namespace tasklens::cli {
namespace {

constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;

// The live blocks. A fixed table, not a container: operator delete looks pointers up here, and
// a container that allocates would call back into operator new/delete while the lock is held.
// A reader has a few dozen big arrays alive at once; when the table is full, blocks come from
// malloc instead. Freed blocks are unmapped, not kept for reuse like the heap's (main.cpp):
// reuse was measured twice (a cache of freed blocks; one reserved arena, first fit) and was
// slower, with a higher peak: blocks split for small arrays no longer fit big ones
// (docs/benchmarks.md).
struct Block {
  std::uintptr_t begin = 0;
  std::size_t bytes = 0;
};
constexpr std::size_t kMaxBlocks = 1024;
Block g_live[kMaxBlocks];
std::size_t g_live_count = 0;
std::mutex g_lock;

// "always [madvise] never": huge pages for MADV_HUGEPAGE memory unless "[never]" is selected.
bool read_thp_setting() noexcept {
  int fd = ::open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;  // no THP in this kernel
  char text[128] = {};
  ssize_t n = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  return n > 0 && std::strstr(text, "[never]") == nullptr;
}

}  // namespace

bool huge_pages_available() noexcept {
  // TASKLENS_HUGE_PAGES=0 turns them off (see huge_blocks.hpp for when that helps).
  static const bool available = [] {
    const char* setting = std::getenv("TASKLENS_HUGE_PAGES");
    if (setting && std::strcmp(setting, "0") == 0) return false;
    return read_thp_setting();
  }();
  return available;
}

void* huge_block_alloc(std::size_t bytes) noexcept {
  if (bytes == 0 || bytes > (std::size_t{1} << 46) || !huge_pages_available()) return nullptr;
  const std::size_t size = (bytes + kHuge - 1) & ~(kHuge - 1);
  {
    std::lock_guard<std::mutex> hold(g_lock);
    if (g_live_count == kMaxBlocks) return nullptr;
  }
  // Map one huge page more than needed and trim both ends, so the block is 2 MiB-aligned and
  // every one of its pages can be a huge page.
  void* raw =
      ::mmap(nullptr, size + kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t begin = (start + kHuge - 1) & ~(kHuge - 1);
  if (begin > start) ::munmap(raw, begin - start);
  const std::uintptr_t tail = begin + size, raw_end = start + size + kHuge;
  if (raw_end > tail) ::munmap(reinterpret_cast<void*>(tail), raw_end - tail);
  // Advice only: where it is refused the block still works, in small pages.
  ::madvise(reinterpret_cast<void*>(begin), size, MADV_HUGEPAGE);
  std::lock_guard<std::mutex> hold(g_lock);
  if (g_live_count == kMaxBlocks) {  // filled by other threads meanwhile
    ::munmap(reinterpret_cast<void*>(begin), size);
    return nullptr;
  }
  g_live[g_live_count++] = {begin, size};
  return reinterpret_cast<void*>(begin);
}

bool huge_block_free(void* p) noexcept {
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  // Every block is 2 MiB-aligned; malloc's pointers (16 bytes past a chunk header) almost never
  // are, so nearly every free is told apart without the lock.
  if (at == 0 || (at & (kHuge - 1)) != 0) return false;
  std::size_t bytes = 0;
  {
    std::lock_guard<std::mutex> hold(g_lock);
    std::size_t i = 0;
    while (i < g_live_count && g_live[i].begin != at) ++i;
    if (i == g_live_count) return false;
    bytes = g_live[i].bytes;
    g_live[i] = g_live[--g_live_count];
  }
  ::munmap(p, bytes);
  return true;
}

std::size_t huge_blocks_live() noexcept {
  std::lock_guard<std::mutex> hold(g_lock);
  return g_live_count;
}

}  // namespace tasklens::cli
