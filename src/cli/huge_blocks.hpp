// Large blocks in transparent huge pages, for the readers' big arrays.
//
// Why: a reader builds a model of millions of strands in vectors of tens to hundreds of
// megabytes, and fresh memory is faulted in by the kernel one 4 KiB page at a time. On this
// project's VMs a 4 KiB fault costs 1-3 us: `tasklens report` of a 1.66 M-task trace spent
// 0.27-0.30 s of its 0.75 s of CPU in the kernel. A 2 MiB transparent huge page is faulted in
// once for 512 such pages (700 MB: 0.21 s in 4 KiB pages, 0.036 s in huge pages, measured).
//
// glibc can be asked for this (GLIBC_TUNABLES=glibc.malloc.hugetlb=1), but only through the
// environment before the process starts; the tasklens executable instead replaces the global
// operator new/delete (huge_new_delete.cpp) and sends blocks of kHugeBlockMin bytes or more here.
// Each is its own 2 MiB-aligned mapping marked MADV_HUGEPAGE. A freed block's pages are kept
// and moved into the next blocks (huge_blocks.cpp says why). Where the
// kernel's THP setting is "never" (or the mapping fails) nothing changes: the blocks come from
// malloc, which keeps freed memory for reuse (main.cpp). Internal to src/cli.
#pragma once

#include <cstddef>

namespace tasklens::cli {

inline constexpr std::size_t kHugeBlockMin = std::size_t{4} << 20;

// A block of at least `bytes` bytes, 2 MiB-aligned, in a mapping of its own marked for huge
// pages; nullptr when huge pages are off, the mapping failed, or too many blocks are live (the
// caller then uses malloc). Thread-safe.
void* huge_block_alloc(std::size_t bytes) noexcept;

// Frees p if it came from huge_block_alloc and returns true; false (and nothing done) for any
// other pointer, nullptr included. Thread-safe.
bool huge_block_free(void* p) noexcept;

// Live blocks from huge_block_alloc (for tests).
std::size_t huge_blocks_live() noexcept;

// Bytes of freed blocks kept for the next ones, and giving them back to the system (for tests).
std::size_t huge_blocks_spare_bytes() noexcept;
void huge_blocks_release_spares() noexcept;

// Whether the kernel gives huge pages to memory marked MADV_HUGEPAGE (THP "always" or
// "madvise") and TASKLENS_HUGE_PAGES is not 0, read once. On a VM whose host takes back the
// memory its guests free (free page reporting), freed huge pages are the first to go back, and
// a fresh one can then take the host's faults too: 700 MB cost 0.035 s or 0.3-0.7 s in huge
// pages on this project's VMs, depending on how long the memory had been free, against a
// steady 0.22 s in small pages. TASKLENS_HUGE_PAGES=0 is for such machines.
bool huge_pages_available() noexcept;

// Whether this executable's big blocks are in huge pages: huge pages are available and its
// operator new sends big blocks here (not in sanitizer builds). Defined in huge_new_delete.cpp.
bool big_blocks_in_huge_pages() noexcept;

}  // namespace tasklens::cli
