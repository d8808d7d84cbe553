// Large blocks in transparent huge pages (platform.hpp says why).
#include <fcntl.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "platform/platform.hpp"

namespace tasklens::platform {
namespace {

constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;

// The live blocks, and the spare memory of freed ones. Fixed tables, not containers: operator
// delete looks pointers up here, and a container that allocates would call back into operator
// new/delete while the lock is held. A reader has a few dozen big arrays alive at once; when the
// live table is full, blocks come from malloc instead.
//
// Freed blocks are not unmapped: their pages are moved (mremap: page tables only, no copy, no
// fault) into the next blocks allocated, as many as those need, and only what the spares cannot
// cover is fresh memory. Fresh memory is what costs: the kernel zeroes every page, and on a VM
// whose host took the memory back it faults on the host too. A reader's arrays come and go in
// phases (the builder's, the model's, the analyses'), so a process now takes fresh pages for its
// peak, not for the sum of its arrays: on fib(29), about 550 MB instead of 1.16 GB. Reuse used
// to be measured slower (a cache of whole freed blocks; one reserved arena, first fit): blocks
// split for small arrays no longer fit big ones, so the peak rose. Moving pages assembles any
// size from any pieces.
struct Block {
  std::uintptr_t begin = 0;
  std::size_t bytes = 0;
};
constexpr std::size_t kMaxBlocks = 1024;
Block g_live[kMaxBlocks];
std::size_t g_live_count = 0;
Block g_spare[kMaxBlocks];  // 2 MiB-aligned, multiples of 2 MiB; the last freed last
std::size_t g_spare_count = 0;
std::mutex g_lock;

// Moves spare pages into [begin, begin + size), the most recently freed first (the likeliest to
// be in the caches); what they do not cover stays fresh. Called with g_lock held.
void take_spares(std::uintptr_t begin, std::size_t size) noexcept {
  while (size > 0 && g_spare_count > 0) {
    Block& spare = g_spare[g_spare_count - 1];
    const std::size_t piece = size < spare.bytes ? size : spare.bytes;
    void* moved = ::mremap(reinterpret_cast<void*>(spare.begin), piece, piece,
                           MREMAP_MAYMOVE | MREMAP_FIXED, reinterpret_cast<void*>(begin));
    if (moved == MAP_FAILED) return;  // (the block keeps its fresh memory)
    spare.begin += piece;
    spare.bytes -= piece;
    if (spare.bytes == 0) --g_spare_count;
    begin += piece;
    size -= piece;
  }
}

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
  // TASKLENS_HUGE_PAGES=0 turns them off (platform.hpp says when that helps).
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
  take_spares(begin, size);
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
    if (g_spare_count < kMaxBlocks) {
      g_spare[g_spare_count++] = {at, bytes};
      return true;
    }
  }
  ::munmap(p, bytes);
  return true;
}

std::size_t huge_blocks_live() noexcept {
  std::lock_guard<std::mutex> hold(g_lock);
  return g_live_count;
}

std::size_t huge_blocks_spare_bytes() noexcept {
  std::lock_guard<std::mutex> hold(g_lock);
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < g_spare_count; ++i) bytes += g_spare[i].bytes;
  return bytes;
}

void huge_blocks_release_spares() noexcept {
  std::lock_guard<std::mutex> hold(g_lock);
  for (std::size_t i = 0; i < g_spare_count; ++i)
    ::munmap(reinterpret_cast<void*>(g_spare[i].begin), g_spare[i].bytes);
  g_spare_count = 0;
}

// A program whose operator new does not send big blocks here (the tests, the benches): no.
// huge_new_delete.cpp's definition, linked into the tasklens executable, overrides this one.
__attribute__((weak)) bool big_blocks_in_huge_pages() noexcept { return false; }

void give_back_freed_memory() noexcept {
  huge_blocks_release_spares();
#if defined(__GLIBC__)
  ::malloc_trim(0);
#endif
}

}  // namespace tasklens::platform
