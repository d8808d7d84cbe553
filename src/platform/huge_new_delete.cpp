// The tasklens executable's global operator new/delete: blocks of kHugeBlockMin bytes or more
// (the readers' big arrays) come from huge_block_alloc, in transparent huge pages; everything
// else, and every block huge_block_alloc declines, from malloc as before (platform.hpp). Linked
// into the tasklens executable alone (not into the libraries the tests link), and not in
// sanitizer builds, whose runtimes provide these operators to check them.
#include <cstdlib>
#include <new>

#include "platform/platform.hpp"

// Overrides huge_blocks.cpp's weak definition, which says "no" to every other program.
bool tasklens::platform::big_blocks_in_huge_pages() noexcept {
#ifdef TASKLENS_NO_HUGE_BLOCKS
  return false;
#else
  return huge_pages_available();
#endif
}

#ifndef TASKLENS_NO_HUGE_BLOCKS

namespace {

void* allocate(std::size_t n) {
  if (n >= tasklens::platform::kHugeBlockMin)
    if (void* p = tasklens::platform::huge_block_alloc(n)) return p;
  for (;;) {
    if (void* p = std::malloc(n ? n : 1)) return p;
    std::new_handler handler = std::get_new_handler();
    if (!handler) throw std::bad_alloc();
    handler();
  }
}

void release(void* p) noexcept {
  if (!tasklens::platform::huge_block_free(p)) std::free(p);
}

}  // namespace

void* operator new(std::size_t n) { return allocate(n); }
void* operator new[](std::size_t n) { return allocate(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return allocate(n);
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  try {
    return allocate(n);
  } catch (...) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { release(p); }
void operator delete[](void* p) noexcept { release(p); }
void operator delete(void* p, std::size_t) noexcept { release(p); }
void operator delete[](void* p, std::size_t) noexcept { release(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { release(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { release(p); }

#endif  // TASKLENS_NO_HUGE_BLOCKS
