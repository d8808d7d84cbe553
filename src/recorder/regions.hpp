// User regions (include/tasklens/tasklens.h): the program names a region with a string, the
// recorder maps the string to a dense name id (0, 1, 2, ...) that its RegionBegin/RegionEnd
// events carry, and writes each id's text into the trace once (a RegionNames record).
//
// The names are normally string literals, so each recording thread keeps a small cache keyed by
// the string's address: a hit costs no lock and no syscall. The address is only a hint (a
// buffer reused for another name keeps its address), so a hit is confirmed by comparing the
// text, which for the short names of regions costs a few nanoseconds. A miss goes to the
// process-wide table, keyed by content, under a mutex.
#pragma once

#include <cstdint>
#include <cstring>

namespace tasklens::recorder {

// One interned name. Never freed: the caches of every thread point to it.
struct RegionName {
  uint32_t id;
  const char* text;  // NUL-terminated copy of the name
};

// A thread's cache (part of its recorder state, so no TLS of its own): direct-mapped by
// address, big enough that the few regions of a program rarely evict one another.
struct RegionCache {
  static constexpr unsigned kSlots = 32;
  struct Slot {
    const char* key = nullptr;
    const RegionName* name = nullptr;
  };
  Slot slots[kSlots];
};

// Names longer than this are cut to it in the trace (they are still told apart in full).
inline constexpr size_t kMaxRegionNameBytes = 4096;

// The slow path of region_id: looks `name` up by content, interning it if it is new, and fills
// `slot`. A new name's RegionNames record is written into the trace file before its id is
// returned, hence before any event carrying the id can reach the file (events go there only
// through the writer's later flush of the thread's chunk): even the trace of a program killed
// with SIGKILL names every id its events use. Returns false (the caller records nothing) when
// the name cannot be interned: out of memory, or trace::kMaxRegionNames names already. Only to
// be called while recording, from the recording process (it writes to the trace).
bool region_intern(RegionCache::Slot& slot, const char* name, uint32_t& id) noexcept;

__attribute__((always_inline)) inline bool region_id(RegionCache& cache, const char* name,
                                                     uint32_t& id) {
  // Literals sit at arbitrary byte addresses, often next to each other: multiplicative hashing
  // spreads them over the slots.
  uint64_t h = reinterpret_cast<uintptr_t>(name) * 0x9e3779b97f4a7c15ull;
  RegionCache::Slot& slot = cache.slots[h >> 59];
  static_assert(RegionCache::kSlots == 32, "the hash takes 5 bits");
  if (__builtin_expect(slot.key == name && std::strcmp(slot.name->text, name) == 0, 1)) {
    id = slot.name->id;
    return true;
  }
  return region_intern(slot, name, id);
}

}  // namespace tasklens::recorder
